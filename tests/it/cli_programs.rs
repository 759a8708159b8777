//! Real-world CUDA, unmodified (issue 22): whole programs of our own in tests/programs/
//! that use cooperative groups, CUB's warp, block and device layers, Thrust, libcu++
//! synchronization, cooperative launches, streams, events, printf and the profiler API.
//! Each checks its own results and exits non-zero on a mismatch. Built with
//! `fencehound nvcc` and run with `fencehound exec` under `sc` (no perturbation: any
//! failure is fencehound's) and under the default model (`weak`) with several seeds:
//! every one must pass with no fault. Two programs also come with a synchronization
//! removed (`-DRELAXED_FLAG`, `-DNO_FENCE`): the default `exec` must fail them within
//! 10 seeds.
//!
//! These need nvcc with cicc, the crt and runtime headers, the CCCL headers
//! (scripts/setup-cuda.sh installs them) and the host's g++; they fail, never skip, when
//! those are missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use crate::common;
use common::text;

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

fn build_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// The text of tests/programs/NAME.cu.
fn source_of(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.cu"));
    std::fs::read_to_string(p).expect("program source")
}

/// Builds tests/programs/NAME.cu with `fencehound nvcc` and `defines`, once per test
/// binary (different programs build in parallel).
fn build(name: &str, defines: &[&str]) -> PathBuf {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let exe = build_dir().join(format!(
        "{name}{}",
        defines.join("").replace(['=', '-'], "")
    ));
    let lock = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(exe.display().to_string())
        .or_default()
        .clone();
    let _g = lock.lock().unwrap_or_else(|p| p.into_inner());
    if exe.is_file() {
        return exe;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.cu"));
    let out = Command::new(BIN)
        .arg("nvcc")
        .arg("-o")
        .arg(&exe)
        .args(defines)
        .arg(&src)
        .output()
        .expect("run fencehound nvcc");
    assert!(
        out.status.success() && exe.is_file(),
        "fencehound nvcc failed for {name}:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    exe
}

fn exec(args: &[&str], prog: &Path) -> Output {
    let out = Command::new(BIN)
        .arg("exec")
        .args(args)
        .arg("--")
        .arg(prog)
        .stdin(Stdio::null())
        .output()
        .expect("run fencehound exec");
    assert!(
        !text(&out.stderr).contains("panicked"),
        "panic:\n{}",
        text(&out.stderr)
    );
    out
}

/// The program passes under `sc` and under the default model with seeds 0..seeds, with
/// no fault, trap or hang, and prints its own OK line.
fn passes(name: &str, seeds: u64) {
    passes_with(name, &[], seeds);
}

/// [`passes`] for the program built with `flags` (e.g. `-arch=sm_80`).
fn passes_with(name: &str, flags: &[&str], seeds: u64) {
    let prog = build(name, flags);
    let mut runs: Vec<Vec<String>> = vec![vec!["--model".into(), "sc".into()]];
    runs.extend((0..seeds).map(|s| vec!["--seed".into(), s.to_string()]));
    for args in runs {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = exec(&a, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} {a:?} failed:\n{out}\n{err}"
        );
        assert!(out.contains("OK:"), "{name} {a:?}:\n{out}");
        assert!(err.contains("verdict: pass"), "{name} {a:?}:\n{err}");
        for bad in ["FAULT", "TRAP", "DEADLOCK", "TIMEOUT", "problem:"] {
            assert!(!err.contains(bad), "{name} {a:?} reports {bad}:\n{err}");
        }
    }
}

/// `exec --race --model sc` of the program built with `flags` passes and reports no race.
fn race_check_silent(name: &str, flags: &[&str]) {
    let o = exec(
        &["--race", "--model", "sc", "--seed", "3"],
        &build(name, flags),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{name}:\n{err}");
    assert!(err.contains("race check: no races"), "{name}:\n{err}");
}

/// The twin of program `name` built with `twin` flags is racy: `exec --race --model sc`
/// reports every race in `races` (exit 1), and the default model fails the program's own
/// check (a MISMATCH line, exit 1) on at least one of seeds `0..seeds`.
fn racy_twin_reported(name: &str, twin: &[&str], races: &[&str], seeds: u64) {
    let prog = build(name, twin);
    let o = exec(&["--race", "--model", "sc", "--seed", "3"], &prog);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{name} {twin:?}:\n{err}");
    for r in races {
        assert!(err.contains(r), "{name} {twin:?}: no `{r}` in\n{err}");
    }
    let failing = (0..seeds).any(|s| {
        let o = exec(&["--seed", &s.to_string()], &prog);
        o.status.code() == Some(1) && text(&o.stdout).contains("MISMATCH")
    });
    assert!(failing, "{name} {twin:?} passed seeds 0..{seeds}");
}

/// With a synchronization removed, the default `exec` fails the program with a wrong
/// result (never a fault) within 10 seeds; under `sc` it still passes.
fn fails_without(name: &str, define: &str) {
    let prog = build(name, &[define]);
    let o = exec(&["--model", "sc"], &prog);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{name} {define} under sc:\n{}",
        text(&o.stdout)
    );
    let failing = (0..10u64).find(|s| {
        let o = exec(&["--seed", &s.to_string()], &prog);
        let err = text(&o.stderr);
        assert!(!err.contains("FAULT"), "{name} {define}: {err}");
        o.status.code() == Some(1) && text(&o.stdout).contains("MISMATCH")
    });
    assert!(
        failing.is_some(),
        "{name} built with {define} passed 10 seeds under the default model"
    );
}

/// Floating point against an independent reference (the host's IEEE arithmetic and libm):
/// 24 single and 10 double precision libdevice functions within the Programming Guide's
/// documented ulp bounds, six fast intrinsics within theirs, and 22 directed-rounding
/// operations, 8 conversions and 3 half operations bit for bit (tests/programs/mathcheck.cu,
/// 4,096 inputs including the Payne-Hanek range). The corpus' math kernels only compare the
/// vgpu with its own golden runs. Computing `fma.rn.f32` as a multiply and an add fails it.
#[test]
fn floating_point_matches_the_hosts_ieee_arithmetic() {
    passes("mathcheck", 0);
}

/// Integer, bit and SIMD-in-a-word intrinsics against host implementations of their
/// documented meaning: 61 operations (`__byte_perm`, funnel shifts, `__mul64hi`, `__sad`,
/// `__dp4a`/`__dp2a`, 23 `__v*` SIMD functions, the CUDA 12 DPX functions, 32- and 64-bit
/// division) on 4,096 inputs with edge values (tests/programs/intcheck.cu). The corpus'
/// int_* kernels only compare the vgpu with its own golden runs. `dp2a` reading its bytes
/// unsigned fails it.
#[test]
fn integer_intrinsics_match_their_documented_meaning() {
    passes("intcheck", 0);
}

/// Atomics of every width and type against their documented results
/// (tests/programs/atomcheck.cu): passes under every model; the program's one scope bug —
/// `atomicAdd_block` on a global counter from eight blocks — loses increments under
/// `scoped` (a .cta RMW is atomic only within its CTA), never under `sc`, and the race
/// check names it: one insufficient-scope WAW on that counter.
#[test]
fn atomics_of_every_width_and_a_block_scoped_counter_across_blocks() {
    let prog = build("atomcheck", &[]);
    for model in ["sc", "bugaroo", "scoped", "weak"] {
        let o = exec(&["--model", model, "--seed", "1"], &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{model}:\n{out}\n{err}");
        assert!(out.contains("OK: atomics"), "{model}:\n{out}");
        assert_eq!(
            out.contains("NOTE atomicAdd_block"),
            model == "scoped" || model == "weak",
            "{model}:\n{out}"
        );
    }
    let o = exec(&["--race", "--model", "sc"], &prog);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("race check: 1 race(s)"), "{err}");
    assert!(
        err.contains("insufficient-scope race (WAW) in `k`"),
        "{err}"
    );
}

/// Device `printf` formats as the host's C library does (CUDA formats it on the host):
/// tests/programs/printf_check.cu prints each of 16 lines from a kernel ("D") and from
/// the host ("H") with the same format and arguments, and the two must agree line for
/// line. Before 2026-12-06 ten of the sixteen differed — `%a`/`%A` printed decimal,
/// `%.0d` of 0 a digit, `hh`/`h` did not narrow, `0` did not pad floats with a precision,
/// `#` kept no point for `%.0f`/`%.0e`, `%g` chose its form before rounding (999999.5
/// printed 1000000), null `%p`/`%s` printed `0x0` and nothing — and a negative `*`
/// precision (`%.*d` with -3, which C reads as no precision) hung the run, padding
/// towards 2^64 digits.
#[test]
fn device_printf_formats_as_the_hosts_printf() {
    let o = exec(&["--model", "sc"], &build("printf_check", &[]));
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let lines = |tag: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.strip_prefix(tag).map(str::to_string))
            .collect()
    };
    let (dev, host) = (lines("D "), lines("H "));
    assert_eq!(dev.len(), 16, "{out}");
    assert_eq!(dev, host);
}

#[test]
fn cooperative_groups_tiles_and_partitions() {
    passes("cg_groups", 3);
}

#[test]
fn cub_warp_and_block_layers() {
    passes("cub_block", 2);
}

#[test]
fn cub_device_layer() {
    passes("cub_device", 2);
}

/// The race check on CUB's and Thrust's device layer (decoupled look-back scans, radix
/// sort, select) and on libcu++'s barrier, `atomic_ref` and release/acquire flag: correct
/// code, no race. CUB's tile descriptors are relaxed status words that carry their own
/// payload, polled without fences, and its 8-byte values travel in a 16-byte vector store;
/// both were reported before 2026-12-03 (racecheck/RESULTS.md). The twin: with the flag
/// relaxed, the payload's read is a race — reported once, on the payload, exit 1.
#[test]
fn real_world_race_check_is_silent_on_correct_code() {
    for name in ["cub_device", "thrust_algos", "libcu_sync"] {
        race_check_silent(name, &[]);
    }
    // Under the default model too (`weak`: a barrier lane's poll may read the phase flip
    // several stores back; seeds 0 and 1 reported intra-warp races when the race check
    // remembered fewer writes per location than a weak load can reach).
    for seed in ["0", "1"] {
        let o = exec(&["--race", "--seed", seed], &build("libcu_sync", &[]));
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "weak, seed {seed}:\n{err}");
        assert!(
            err.contains("race check: no races"),
            "weak, seed {seed}:\n{err}"
        );
    }
    let o = exec(
        &["--race", "--model", "sc", "--seed", "3"],
        &build("libcu_sync", &["-DRELAXED_FLAG"]),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("race check: 1 race(s)"), "{err}");
    assert!(err.contains("inter-block race (RAW) in `message`"), "{err}");
}

/// libcu++'s `cuda::barrier`, `cuda::pipeline` and `cuda::memcpy_async` built for sm_80
/// and sm_90 compile to `mbarrier` objects (`test_wait` on sm_80, `try_wait` on sm_90,
/// `cp.async.mbarrier.arrive` under the pipeline's copies, bulk copies with transaction
/// counts and `elect.sync` on sm_90); the whole module failed to parse before (2026-12-03).
/// Each build passes under every model, and the race check is silent on it under `sc` and
/// `weak`; the twin that reads its neighbour's value after arriving, without waiting, is
/// a race the check reports (the waits are what orders the reads), and so is reading a
/// bulk-copied tile after `__syncthreads()` instead of the barrier's wait.
#[test]
fn libcudacxx_barrier_and_pipeline_on_mbarrier_objects() {
    for arch in ["-arch=sm_80", "-arch=sm_90"] {
        let prog = build("mbarrier", &[arch]);
        for model in ["sc", "bugaroo", "scoped", "weak"] {
            for race in [false, true] {
                let mut a = vec!["--model", model, "--seed", "1"];
                if race {
                    a.push("--race");
                }
                let o = exec(&a, &prog);
                let (out, err) = (text(&o.stdout), text(&o.stderr));
                assert_eq!(o.status.code(), Some(0), "{arch} {a:?}:\n{out}\n{err}");
                assert!(out.contains("OK:"), "{arch} {a:?}:\n{out}");
                assert!(
                    !race || err.contains("race check: no races"),
                    "{arch} {a:?}:\n{err}"
                );
            }
        }
    }
    let prog = build("mbarrier", &["-arch=sm_90", "-DNO_WAIT"]);
    for model in ["sc", "weak"] {
        let o = exec(&["--race", "--model", model, "--seed", "3"], &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "{model}:\n{err}");
        assert!(err.contains("race (RAW) in `exchange`"), "{model}:\n{err}");
        // The bulk copy is performed at the latest point the ISA allows (here: the
        // thread's exit), after the tile was read: stale reads, and the copy's stores
        // race with them.
        assert!(out.contains("MISMATCH bulk_tile"), "{model}:\n{out}");
        assert!(err.contains("race (WAR) in `bulk_tile`"), "{model}:\n{err}");
        assert!(!err.contains("FAULT"), "{model}:\n{err}");
    }
}

/// `cub::DeviceTransform` on sm_90 (bulk copies completing on mbarriers, 256 CTAs whose
/// threads spin on `mbarrier.try_wait`): under the default model each wait read stale
/// barrier states until a liveness round, one round per CTA — over 20 M lane instructions
/// (2 G in all, a minute) for 4 M of work. An mbarrier test now reads the barrier's newest
/// state (`Access::newest`); the fuel bounds the run deterministically.
#[test]
fn mbarrier_waits_of_many_ctas_need_no_liveness_rounds() {
    let prog = build("cub_transform", &["-arch=sm_90"]);
    for args in [
        vec!["--seed", "2", "--fuel", "20000000"],
        vec!["--model", "sc", "--race", "--seed", "1"],
    ] {
        let o = exec(&args, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{args:?}:\n{out}\n{err}");
        assert!(
            out.contains("OK: 65536 elements squared"),
            "{args:?}: {out}"
        );
    }
}

/// Tensor cores through `nvcuda::wmma`: every `wmma` shape and type (f16, bf16, tf32,
/// f64, s8/u8 with `.satfinite`, s4, b1 xor/and popc), row- and column-major with padded
/// strides, and a 128×128 GEMM whose warps load their fragments from shared memory, each
/// result checked on the host. "unknown instruction `wmma`" lost the whole module before
/// (2026-12-03). Built for sm_80 and sm_90, it passes under every model with the race check
/// silent; without the `__syncthreads()` between staging a tile and loading fragments from
/// it, the GEMM is wrong and the race check reports the staging stores against the
/// fragment loads.
#[test]
fn tensor_cores_through_wmma() {
    for arch in ["-arch=sm_80", "-arch=sm_90"] {
        let prog = build("wmma", &[arch]);
        for model in ["sc", "bugaroo", "scoped", "weak"] {
            let a = ["--race", "--model", model, "--seed", "2"];
            let o = exec(&a, &prog);
            let (out, err) = (text(&o.stdout), text(&o.stderr));
            assert_eq!(o.status.code(), Some(0), "{arch} {a:?}:\n{out}\n{err}");
            assert!(
                out.contains("OK: 0 of 17 checks wrong"),
                "{arch} {a:?}:\n{out}"
            );
            assert!(err.contains("race check: no races"), "{arch} {a:?}:\n{err}");
        }
    }
    let prog = build("wmma", &["-arch=sm_80", "-DNO_SYNC"]);
    for model in ["sc", "weak"] {
        let o = exec(&["--race", "--model", model, "--seed", "1"], &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "{model}:\n{out}\n{err}");
        assert!(
            out.contains("gemm 128x128 via shared memory: MISMATCH"),
            "{model}:\n{out}"
        );
        assert!(
            err.contains("intra-block race (RAW) in `gemm`"),
            "{model}:\n{err}"
        );
        assert!(
            err.contains("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16"),
            "{err}"
        );
        // The fragment load is `mma.h`'s code inlined into the kernel: the report names
        // the kernel's line that called it too.
        let line = 1 + source_of("wmma")
            .lines()
            .position(|l| l.contains("wmma::load_matrix_sync(fa, sa + warp"))
            .unwrap();
        assert!(
            err.contains("(called from ")
                && err.contains(&format!("wmma.cu:{line}): `wmma.load.a")),
            "{err}"
        );
        assert!(!err.contains("FAULT"), "{model}:\n{err}");
    }
}

/// Managed memory: `cudaMallocManaged` arrays written and read by the host in place
/// between launches, hints, copies to and from device memory, a struct holding a managed
/// pointer passed by value, `cudaPointerGetAttributes`, `__managed__` variables (initial
/// value, host writes, kernel atomics), zero-copy memory (`cudaHostAlloc` with
/// `cudaHostAllocMapped`, `cudaHostGetDevicePointer`). Managed memory was refused before
/// (2026-12-03: "managed memory … needs one address space for host and device"), and the
/// program then crashed on its first host write; a `__managed__` variable's
/// `.attribute(.managed)` did not parse; zero-copy memory returned `cudaErrorNotSupported`
/// before 2026-12-06. Under every model it passes with the race check silent; the twin
/// without the reduction's `__syncthreads()` is a race the check reports.
#[test]
fn managed_memory_one_address_for_host_and_device() {
    let prog = build("managed", &[]);
    for model in ["sc", "bugaroo", "scoped", "weak"] {
        let a = ["--race", "--model", model, "--seed", "1"];
        let o = exec(&a, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{a:?}:\n{out}\n{err}");
        assert!(
            out.contains("OK: total 45032 want 45032, 0 wrong"),
            "{a:?}:\n{out}"
        );
        assert!(err.contains("race check: no races"), "{a:?}:\n{err}");
        assert!(!err.contains("not implemented"), "{a:?}:\n{err}");
    }
    let prog = build("managed", &["-DNO_SYNC"]);
    let o = exec(&["--race", "--model", "sc", "--seed", "3"], &prog);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("race (RAW) in `block_sum`"), "{err}");
}

/// CUDA graphs: stream capture (sets, launches, copies to the host, a host function)
/// replayed three times; a capture forked onto a second stream and joined through events;
/// a graph built node by node with a dependency added afterwards and a kernel argument
/// changed in the executable graph; arguments copied at capture. Every graph call
/// returned `cudaErrorNotSupported` before (2026-12-03). Passes under every model with
/// the race check silent; the twin whose captured block reduction lacks a
/// `__syncthreads()` is reported from inside the graph launch.
#[test]
fn cuda_graphs_captured_and_built() {
    let prog = build("graphs", &[]);
    for model in ["sc", "bugaroo", "scoped", "weak"] {
        let a = ["--race", "--model", model, "--seed", "1"];
        let o = exec(&a, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{a:?}:\n{out}\n{err}");
        assert!(out.contains("OK: 0 wrong, 5 host calls"), "{a:?}:\n{out}");
        assert!(err.contains("race check: no races"), "{a:?}:\n{err}");
        // 3 kernels × 3 replays, 3 in the forked capture, 2 × 2 in the built graph.
        assert!(err.contains("16 launch(es)"), "{a:?}:\n{err}");
        assert!(!err.contains("not implemented"), "{a:?}:\n{err}");
    }
    let prog = build("graphs", &["-DNO_SYNC"]);
    let o = exec(&["--race", "--model", "sc", "--seed", "3"], &prog);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("race (RAW) in `block_sum`"), "{err}");
}

/// Pitched 3-D memory (`cudaMalloc3D`, `cudaMemset3D`, `cudaMemcpy3D`/`Async` with
/// positions), memory pools (default pool attributes, `cudaMemPoolCreate`,
/// `cudaMallocFromPoolAsync`) and 100 KiB of dynamic shared memory: the 3-D and pool calls
/// returned `cudaErrorNotSupported` before (2026-12-03).
#[test]
fn pitched_3d_memory_and_memory_pools() {
    let prog = build("memory3d", &[]);
    for model in ["sc", "weak"] {
        let a = ["--race", "--model", model, "--seed", "1"];
        let o = exec(&a, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{a:?}:\n{out}\n{err}");
        assert!(
            out.contains("OK: 0 wrong, shared sum 12667200"),
            "{a:?}:\n{out}"
        );
        assert!(err.contains("race check: no races"), "{a:?}:\n{err}");
        assert!(!err.contains("not implemented"), "{a:?}:\n{err}");
    }
}

#[test]
fn thrust_on_device_vectors() {
    passes("thrust_algos", 2);
}

/// sm_90's vector atomics (`atomicAdd` on `float2`, `float4`, `__half2`) and
/// `cooperative_groups::memcpy_async` built for sm_90: "vector atomics" were refused
/// before (2026-12-03).
#[test]
fn sm_90_vector_atomics_and_cg_memcpy_async() {
    let prog = build("sm90_atomics", &["-arch=sm_90"]);
    for args in [
        &["--model", "sc", "--race"][..],
        &["--seed", "1", "--race"],
        &["--model", "scoped"],
    ] {
        let o = exec(args, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{args:?}:\n{out}\n{err}");
        assert!(
            out.contains("OK: sum 1533/1533 v2 512,1024 v4 512,2048 h2 512,256 max 1255"),
            "{args:?}:\n{out}"
        );
    }
}

/// Thrust and CUB built for sm_90 launch with programmatic dependent launch: the
/// `cudaLaunchAttributeProgrammaticStreamSerialization` launch attribute, and
/// `griddepcontrol.wait` / `.launch_dependents` in the kernels. Both failed before
/// (2026-12-03: "launch attribute 6 is not supported", then "unknown instruction
/// griddepcontrol"), so every Thrust call of an sm_90 build failed under `exec`.
#[test]
fn thrust_built_for_sm_90() {
    let prog = build("thrust_algos", &["-arch=sm_90"]);
    for args in [
        &["--model", "sc"][..],
        &["--seed", "1"],
        &["--model", "bugaroo"],
    ] {
        let o = exec(args, &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{args:?}:\n{out}\n{err}");
        assert!(out.contains("OK:"), "{args:?}:\n{out}");
        assert!(err.contains("verdict: pass"), "{args:?}:\n{err}");
    }
}

/// CUB's block layer beyond `cub_block` — BlockLoad/BlockStore with WARP_TRANSPOSE,
/// BlockMergeSort, BlockHistogram (shared atomics), BlockDiscontinuity — `redux.sync` and
/// `match.all.sync` on each half of a warp, `match.any.sync`, and Thrust's sort_by_key,
/// reduce_by_key, unique and copy_if (sm_80): it passes under `sc` and the default model,
/// and the race check is silent on it. (Written 2026-12-05 as an outsider would, against
/// APIs the other programs do not use.)
#[test]
fn cub_block_layer_more_and_thrust_by_key() {
    let flags = ["-arch=sm_80"];
    passes_with("cub_block_more", &flags, 1);
    race_check_silent("cub_block_more", &flags);
}

/// libcu++'s `cuda::latch` and `cuda::counting_semaphore` at block scope, `atomic_ref`
/// wait/notify with release/acquire, and a chained scan whose blocks pass their prefix
/// through a relaxed flag between `cuda::atomic_thread_fence` release and acquire: it
/// passes under `sc` and the default model, and the race check is silent on it. Without
/// the two fences (`-DNO_FENCE`) a block may read its predecessor's prefix stale: `sc`
/// still passes, the race check reports the pair once (on `prefix`, in `chained`), and
/// the default (`weak`, `p` 1), `weak` at `p` 0.5 and `scoped` fail the output check. (The
/// default passed seeds 0–9 before 2026-12-05: after the flag's spin stalled, the
/// liveness rule made every load read the newest store, the prefix read included.)
#[test]
fn libcudacxx_latch_semaphore_wait_notify_and_chained_scan() {
    let flags = ["-arch=sm_80"];
    passes_with("libcu_more", &flags, 2);
    race_check_silent("libcu_more", &flags);
    let nf = build("libcu_more", &["-arch=sm_80", "-DNO_FENCE"]);
    let o = exec(&["--model", "sc"], &nf);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = exec(&["--race", "--model", "sc", "--seed", "3"], &nf);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("race check: 1 race(s)"), "{err}");
    assert!(err.contains("inter-block race (RAW) in `chained`"), "{err}");
    for args in [
        &["--seed", "0"][..],
        &["--seed", "1"],
        &["--model", "scoped", "--seed", "0"],
        &["--p", "0.5", "--seed", "0"],
    ] {
        let o = exec(args, &nf);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "{args:?}:\n{out}\n{err}");
        assert!(out.contains("MISMATCH chained scan"), "{args:?}:\n{out}");
        assert!(!err.contains("FAULT"), "{args:?}:\n{err}");
    }
}

/// `__syncwarp(mask)` with partial masks — halves, even/odd lanes, groups of 8 and 4,
/// uneven groups, three interleaved groups, the whole warp — and cooperative-groups tiles
/// of 4, 8 and 16 (`tile.sync()`): each orders shared memory among its own lanes. The
/// default model (`weak`) read stale values and the race check reported the pairs when
/// every group of a warp synced at one instruction (hb keyed a warp's barriers by the warp,
/// not by the mask). With -DCROSS each lane reads another group's word: a race, reported.
#[test]
fn partial_syncwarp_masks_order_their_lanes_and_only_them() {
    let flags = ["-arch=sm_80"];
    passes_with("warpsync_masks", &flags, 3);
    race_check_silent("warpsync_masks", &flags);
    let o = exec(
        &["--race", "--model", "weak", "--seed", "1"],
        &build("warpsync_masks", &flags),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("race check: no races"), "{err}");
    let races: Vec<String> = [
        "sync_masks",
        "tile_sync<4>",
        "tile_sync<8>",
        "tile_sync<16>",
    ]
    .iter()
    .map(|k| format!("intra-warp race (RAW) in `{k}`"))
    .collect();
    let races: Vec<&str> = races.iter().map(String::as_str).collect();
    racy_twin_reported("warpsync_masks", &["-arch=sm_80", "-DCROSS"], &races, 1);
}

/// Two message passings between two CTAs whose flags share one 8-byte block: the
/// default model (`weak`) read stale data after an acquire on seeds 4-7 when the other
/// flag's spinning RMWs pushed the release store out of the block's history. With
/// -DRELAXED (no release/acquire on the second flag) the race is reported and the default
/// model exposes the stale read.
#[test]
fn a_release_survives_rmws_on_its_blocks_other_word() {
    let flags = ["-arch=sm_80"];
    passes_with("mp_same_block", &flags, 8);
    race_check_silent("mp_same_block", &flags);
    racy_twin_reported(
        "mp_same_block",
        &["-arch=sm_80", "-DRELAXED"],
        &["inter-block race (RAW) in `two_way`"],
        8,
    );
}

/// Eight release/acquire byte flags in one 8-byte block (more locations than the `weak`
/// model's block history holds): the default model read stale data after the acquires on
/// every seed until an evicted location's newest store was kept aside. -DRELAXED: races
/// reported, stale data shown.
#[test]
fn byte_flags_in_one_block_keep_their_releases() {
    let flags = ["-arch=sm_80"];
    passes_with("byte_flags", &flags, 6);
    race_check_silent("byte_flags", &flags);
    racy_twin_reported(
        "byte_flags",
        &["-arch=sm_80", "-DRELAXED"],
        &["inter-block race (RAW) in `byte_flags`"],
        1,
    );
}

/// Builds the two relocatable units of tests/programs/rdc with `nvcc -rdc=true` and
/// `defines`.
fn build_rdc(defines: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/rdc");
    let exe = build_dir().join(format!("rdc{}", defines.join("").replace(['=', '-'], "")));
    let out = Command::new(BIN)
        .args(["nvcc", "-rdc=true", "-o"])
        .arg(&exe)
        .args(defines)
        .arg(dir.join("main.cu"))
        .arg(dir.join("lib.cu"))
        .output()
        .expect("run fencehound nvcc");
    assert!(
        out.status.success() && exe.is_file(),
        "fencehound nvcc -rdc=true failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    exe
}

/// Relocatable device code (`-rdc=true`, separable compilation): the units' PTX is
/// linked into one module — `extern` functions and variables resolved, the units' own
/// `static` function and printf strings of one name kept apart, each unit's lines kept.
/// Before, every such program failed: "fat binary #0 holds only machine code".
#[test]
fn relocatable_device_code_links_its_units() {
    let prog = build_rdc(&[]);
    for model in ["sc", "weak", "bugaroo", "scoped"] {
        let o = exec(&["--race", "--model", model, "--seed", "1"], &prog);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{model}:\n{out}\n{err}");
        assert!(
            out.contains("OK: two relocatable units linked"),
            "{model}: {out}"
        );
        assert!(
            out.contains("unit main: 1") && out.contains("unit lib: 0"),
            "{out}"
        );
        assert!(err.contains("race check: no races"), "{model}: {err}");
    }
    let o = exec(
        &["--race", "--model", "sc", "--seed", "3"],
        &build_rdc(&["-DRACE"]),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("race (WAW) in `fill` on global `total`") && err.contains("lib.cu:13:"),
        "{err}"
    );
}

/// Virtual calls (vtables: globals initialised with function addresses), a table of
/// device function pointers, recursion, and the device heap (`malloc`/`free`,
/// `new`/`delete`, `cudaLimitMallocHeapSize`): the module did not load before. A race on
/// a heap object is named as one; a read after `free` faults naming the freed object.
#[test]
fn virtual_calls_function_pointers_and_the_device_heap() {
    passes("device_heap", 3);
    race_check_silent("device_heap", &[]);
    racy_twin_reported(
        "device_heap",
        &["-DSHARED_RACE"],
        &["race (WAW) in `shared_object` on global `device malloc`"],
        1,
    );
    let o = exec(
        &["--model", "sc"],
        &build("device_heap", &["-DUSE_AFTER_FREE"]),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("verdict: FAULT in `objects`")
            && err.contains("bytes into `freed device malloc`"),
        "{err}"
    );
}

/// Release/acquire through sub-word and mixed-size accesses (libcu++
/// `cuda::atomic_ref<unsigned char>` and `<bool>`: a 32-bit `atom.cas.release` read by a
/// 16-bit `ld.acquire`; narrower acquires of wider releases; a same-size pair over an
/// older bytewise history). The default model read stale data after forms 0-4 on every
/// seed and `--race` reported the data: PTX's "morally strong" asks for complete overlap,
/// libcu++ relies on containment, and so do the models now. -DRELAXED: one race per form,
/// stale data.
#[test]
fn subword_release_acquire_synchronizes() {
    let flags = ["-arch=sm_80"];
    passes_with("subword_sync", &flags, 6);
    race_check_silent("subword_sync", &flags);
    racy_twin_reported(
        "subword_sync",
        &["-arch=sm_80", "-DRELAXED"],
        &["inter-block race (RAW) in `subword_sync` on global `data`"],
        1,
    );
}

/// The C++ memory orders through libcu++ (store buffering with seq_cst atomics and with
/// seq_cst fences, IRIW, a release sequence continued by other blocks' relaxed RMWs, an
/// `atomic_flag` lock, an acq_rel ticket) and Peterson's lock with `__threadfence()`:
/// correct code, it passes under `sc` and the default model, and the race check is
/// silent under both. Before the store-buffering handshake rule (racecheck's
/// `RaceCheck::handshake`) the race check reported sb_fence's words (RAW) and Peterson's
/// `turn` (WAW) as `unordered`, telling the user to add the `__threadfence()` the code
/// has. The twin with every order relaxed and no fences fails and is reported.
#[test]
fn memory_orders_and_store_buffering_handshakes() {
    let arch = ["-arch=sm_80"];
    passes_with("memorder", &arch, 3);
    race_check_silent("memorder", &arch);
    let o = exec(&["--race", "--seed", "1"], &build("memorder", &arch));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "weak:\n{err}");
    assert!(err.contains("race check: no races"), "weak:\n{err}");
    racy_twin_reported(
        "memorder",
        &["-arch=sm_80", "-DRELAXED"],
        &[
            "unordered race (RAW) in `sb_fence`",
            "unordered race (WAW) in `peterson`",
            "inter-block race (RAW) in `release_seq`",
            "race (WAW) in `flag_lock`",
        ],
        1,
    );
}

/// Synchronization written by hand, as CUDA programmers do without a library: a
/// sense-reversing grid barrier under a two-step stencil, a decoupled look-back with
/// 64-bit status words, warp-aggregated atomics (`__match_any_sync`), block-scope
/// release/acquire flags between warps in shared memory, a 64-bit `atomicCAS` maximum.
/// Passes under `sc` and the default model, the race check is silent; `-DBROKEN` fails
/// and is reported.
#[test]
fn hand_written_grid_barrier_lookback_and_flags() {
    let arch = ["-arch=sm_80"];
    passes_with("handmade", &arch, 2);
    race_check_silent("handmade", &arch);
    racy_twin_reported(
        "handmade",
        &["-arch=sm_80", "-DBROKEN"],
        &[
            "in `stencil` on global",
            "intra-block race (RAW) in `shared_flags` on shared",
        ],
        1,
    );
}

/// Texture objects (`tex1Dfetch` over linear memory, `tex2D` over a CUDA array with
/// point sampling, clamp and border addressing and linear filtering, normalized
/// coordinates with wrap, `uchar4` read as normalized floats, a pitched 2-D texture under
/// a box blur) and surface objects (`surf2Dread`/`surf2Dwrite`, `uchar4` surfaces with
/// the zero and clamp boundary modes), every value checked by the program. Before
/// 2026-12-06 the module did not load ("texture and surface instructions are not
/// supported") and `cudaCreateTextureObject` returned `cudaErrorNotSupported`. Passes under `sc` and the
/// default model; the race check is silent (a fetch reads memory as the previous
/// operations left it: the texture path is not the load path).
#[test]
fn texture_objects_fetch_filter_and_address() {
    passes("textures", 2);
    race_check_silent("textures", &[]);
}

#[test]
fn libcudacxx_barrier_and_atomic_ref() {
    passes("libcu_sync", 3);
}

#[test]
fn libcudacxx_message_with_relaxed_flag_fails() {
    fails_without("libcu_sync", "-DRELAXED_FLAG");
}

#[test]
fn cooperative_launch_at_gpu_size_and_last_block_reduction() {
    passes("grid_sync", 3);
}

#[test]
fn last_block_reduction_without_its_fence_fails() {
    fails_without("grid_sync", "-DNO_FENCE");
}

#[test]
fn streams_events_printf_and_profiler_api() {
    passes("runtime_features", 2);
    let o = exec(&[], &build("runtime_features", &[]));
    assert!(text(&o.stdout).contains("scale by 3 on 4096 elements"));
}
