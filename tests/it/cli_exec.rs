//! Whole CUDA programs (tests/programs/*.cu), built with `fencehound nvcc` and run
//! unmodified under fencehound's libcudart.so.13: `fencehound exec`, and program campaigns
//! through `fuzz` and `minimize`.
//!
//! These need nvcc with cicc, the crt and runtime headers (scripts/setup-cuda.sh installs
//! them) and the host's g++; they fail, never skip, when those are missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::common;
use common::{assert_exit, text};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// A directory shared by this test binary's builds (kept for the process's lifetime).
fn build_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// Builds tests/programs/NAME.cu with `fencehound nvcc` (once per test binary).
fn build(name: &str, defines: &[&str]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let exe = build_dir().join(format!(
        "{name}{}",
        defines.join("_").replace(['=', '-'], "")
    ));
    if exe.is_file() {
        return exe;
    }
    let out = Command::new(BIN)
        .arg("nvcc")
        .arg("-o")
        .arg(&exe)
        .args(defines)
        .arg(programs().join(format!("{name}.cu")))
        .output()
        .expect("run fencehound nvcc");
    assert!(
        out.status.success() && exe.is_file(),
        "fencehound nvcc failed for {name}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.stdin(Stdio::null()).output().expect("run fencehound");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic in {cmd:?}:\n{stderr}");
    out
}

fn exec(args: &[&str], exe: &Path) -> Output {
    run(Command::new(BIN).arg("exec").args(args).arg("--").arg(exe))
}

#[test]
fn programs_run_unmodified() {
    // (program, what its launches are called in the report)
    let cases = [
        ("template_kernel", "block_sum<int, 128>"),
        ("device_var", "accumulate"),
        ("struct_args", "apply"),
        ("streams", "scale"),
    ];
    for (name, kernel) in cases {
        let exe = build(name, &[]);
        let o = exec(&["--model", "bugaroo", "--p", "0.5", "--seed", "3"], &exe);
        assert_exit(&o, 0);
        assert!(
            text(&o.stdout).contains("PASS"),
            "{name}: {}",
            text(&o.stdout)
        );
        let err = text(&o.stderr);
        assert!(err.contains(kernel), "{name}: {err}");
        assert!(err.contains("verdict: pass"), "{name}: {err}");
    }
    // The template is launched twice, with two instantiations.
    let o = exec(&[], &build("template_kernel", &[]));
    assert!(text(&o.stderr).contains("block_sum<double, 64>"));
    // Four launches over two streams and the default stream.
    let o = exec(&[], &build("streams", &[]));
    assert_eq!(
        text(&o.stderr).matches("completed").count(),
        4,
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn an_out_of_bounds_write_is_reported_with_its_line_and_the_program_sees_the_error() {
    let o = exec(&["--model", "sc"], &build("oob", &[]));
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("launch: cudaErrorIllegalAddress, synchronize: cudaErrorIllegalAddress"),
        "{out}"
    );
    let err = text(&o.stderr);
    assert!(err.contains("out-of-bounds access"), "{err}");
    assert!(
        err.contains("oob.cu:8"),
        "the fault names the CUDA line: {err}"
    );
    assert!(err.contains("FAULT in `init`"), "{err}");
    // The write that faults never lands: it is no escape from the write bound.
    no_escape_noted("oob");
}

/// `exec --model sc --race` of tests/programs/NAME.cu notes no write across allocations.
fn no_escape_noted(name: &str) -> Output {
    let o = exec(&["--model", "sc", "--race"], &build(name, &[]));
    let err = text(&o.stderr);
    assert!(!err.contains("landed outside"), "{name}: {err}");
    o
}

/// A write from one allocation into another is undefined in CUDA C++ but lands on the
/// vgpu: the launch line notes that loads before it were not seen by the model or the
/// race check (they read memory directly as loads of bytes the kernel does not write).
#[test]
fn a_write_across_allocations_is_noted() {
    for model in ["sc", "bugaroo", "weak"] {
        let o = exec(&["--model", model, "--race"], &build("escape", &[]));
        assert_exit(&o, 0);
        assert!(
            text(&o.stdout).contains("out[0]=7 out[1]=0"),
            "{}",
            text(&o.stdout)
        );
        let err = text(&o.stderr);
        assert!(
            err.contains("1 write(s) landed outside every allocation")
                && err.contains("or the race check"),
            "{model}: {err}"
        );
    }
    // `grid.sync()` writes the grid workspace, which the kernel finds through `%envreg`
    // registers, not a parameter: part of the bound, no escape.
    assert_exit(&no_escape_noted("grid_sync"), 0);
}

#[test]
fn a_call_the_runtime_lacks_is_named() {
    let o = exec(&[], &build("unimplemented", &[]));
    assert_exit(&o, 1);
    assert!(text(&o.stdout).contains("cudaIpcGetMemHandle: cudaErrorNotSupported"));
    let err = text(&o.stderr);
    assert!(
        err.contains("the program called cudaIpcGetMemHandle, which fencehound's CUDA runtime does not implement"),
        "{err}"
    );
    assert!(err.contains("exited with status 4"), "{err}");
}

/// A program that calls the CUDA driver API (it links libcuda.so.1): `exec` says before
/// running it that fencehound replaces only the runtime API, and where no driver is
/// installed (this machine, CI) the dynamic loader cannot start it: verdict "could not
/// start", exit 2 (an input problem, not a finding). Linked here against a stub
/// libcuda.so.1 built with the host's cc, which is not on the loader's path at run time.
#[test]
fn a_driver_api_program_is_named_and_a_missing_driver_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stub = dir.path().join("stub.c");
    std::fs::write(
        &stub,
        "int cuInit(unsigned f) { return 100; }\nint cuDeviceGet(int *d, int o) { return 100; }\n",
    )
    .unwrap();
    let cc = run(Command::new("cc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(dir.path().join("libcuda.so"))
        .arg(&stub));
    assert_exit(&cc, 0);
    let exe = dir.path().join("driver_api");
    let nvcc = run(Command::new(BIN)
        .arg("nvcc")
        .arg("-o")
        .arg(&exe)
        .arg(programs().join("driver_api.cu"))
        .arg(format!("-L{}", dir.path().display()))
        .arg("-lcuda"));
    assert_exit(&nvcc, 0);
    let o = exec(&["--model", "sc"], &exe);
    let err = text(&o.stderr);
    assert!(
        err.contains("the program uses the CUDA driver API (it names libcuda.so.1)"),
        "{err}"
    );
    // Without a driver on the machine the loader fails (status 127) before any CUDA call.
    let direct = run(&mut Command::new(&exe));
    if direct.status.code() == Some(127) {
        assert_exit(&o, 2);
        assert!(err.contains("verdict: could not start (exit status 127: the dynamic loader failed; it needs libcuda.so.1"), "{err}");
    }
    // A runtime-only program gets no such note.
    let plain = exec(&["--model", "sc"], &build("struct_args", &[]));
    assert!(
        !text(&plain.stderr).contains("driver API"),
        "{}",
        text(&plain.stderr)
    );
}

#[test]
fn a_hung_kernel_ends_the_program_with_the_timeout_status() {
    let o = exec(&["--model", "sc", "--fuel", "200000"], &build("spin", &[]));
    assert_exit(&o, 1);
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "hangs: timeout: its fuel (200000 lane instructions, set by `--fuel`) ran out"
        ),
        "{err}"
    );
    assert!(err.contains("ending the program with status 124"), "{err}");
    assert!(
        err.contains("spin.cu:"),
        "the hang dump names CUDA lines: {err}"
    );
    assert!(err.contains("verdict: TIMEOUT"), "{err}");
    // The program never got past its synchronisation.
    assert!(!text(&o.stdout).contains("returned"));
}

/// Without `--fuel`, `exec` decides a hang by lack of progress: the spinning warp repeats
/// its state and nothing can change the flag, under every model (under `weak` once loads
/// read the newest values), long before any instruction budget.
#[test]
fn a_hung_kernel_is_found_by_lack_of_progress() {
    let prog = build("spin", &[]);
    for model in ["sc", "weak", "bugaroo"] {
        let o = exec(&["--model", model], &prog);
        assert_exit(&o, 1);
        let err = text(&o.stderr);
        assert!(
            err.contains("no thread can make progress: every running warp repeats a state"),
            "{model}: {err}"
        );
        assert!(err.contains("ending the program with status 124"), "{err}");
        assert!(err.contains("spin.cu:"), "{err}");
    }
}

#[test]
fn exec_is_seeded_per_launch_and_finds_the_missing_fence() {
    let buggy = build("dot_lock", &["-DUNLOCK_FENCE="]);
    let fixed = build("dot_lock", &[]);
    let a = exec(&["--p", "0.5", "--seed", "7"], &buggy);
    let b = exec(&["--p", "0.5", "--seed", "7"], &buggy);
    assert_eq!(a.stdout, b.stdout, "same seed, same run");
    // With every store buffered the lost update always happens; the fence prevents it.
    let o = exec(&["--p", "1"], &buggy);
    assert_exit(&o, 1);
    assert!(text(&o.stdout).starts_with("FAIL"), "{}", text(&o.stdout));
    for model in ["bugaroo", "scoped", "weak"] {
        let o = exec(&["--model", model, "--p", "1"], &fixed);
        assert_exit(&o, 0);
    }
    // The weak model finds the bug too, from the reader's side (it counts stale reads).
    let o = exec(&["--model", "weak", "--p", "1"], &buggy);
    assert_exit(&o, 1);
    assert!(
        text(&o.stderr).contains("stale reads"),
        "{}",
        text(&o.stderr)
    );
    // Without --p every model that uses p_w runs at 0.75, where one access may be
    // delayed and the next not; each finds the bug and says which p_w.
    for model in ["weak", "scoped", "bugaroo"] {
        let o = exec(&["--model", model], &buggy);
        assert_exit(&o, 1);
        assert!(
            text(&o.stderr).contains(&format!("under {model} (p_w=0.75, seed 0)")),
            "{}",
            text(&o.stderr)
        );
    }
}

/// A copy of the dot-product campaign and its source in a fresh directory (minimize
/// writes nothing there, but reports and caches go beside it).
fn campaign_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("temp dir");
    for f in ["dot_lock.cu", "dot_lock.toml"] {
        std::fs::copy(programs().join(f), d.path().join(f)).expect("copy");
    }
    d
}

fn fencehound_in(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir)
        .env("FENCEHOUND_CACHE_DIR", dir.join("cache"));
    c
}

#[test]
fn fuzz_finds_the_underfenced_program_and_the_fixed_one_is_clean_over_1000_seeds() {
    let d = campaign_dir();
    let o = run(fencehound_in(d.path()).args([
        "fuzz",
        "dot_lock.toml",
        "--variant",
        "no_fence",
        "--runs",
        "20",
        "-j",
        "2",
        "--report",
        "buggy.json",
    ]));
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("UNDERFENCED"), "{out}");
    assert!(out.contains("exit status 1, expected 0"), "{out}");
    let o = run(fencehound_in(d.path()).args([
        "fuzz",
        "dot_lock.toml",
        "--variant",
        "fenced",
        "--runs",
        "500",
        "--p",
        "0.5,1",
        "-j",
        "2",
        "--report",
        "fixed.json",
    ]));
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("no failure in 1000"), "{out}");
}

#[test]
fn minimize_patches_the_programs_own_source() {
    let d = campaign_dir();
    let o = run(fencehound_in(d.path()).args([
        "minimize",
        "dot_lock.toml",
        "--variant",
        "no_fence",
        "-j",
        "2",
    ]));
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("insert `__threadfence();` after dot_lock.cu:56 `*c += cache[0];`"),
        "{out}"
    );
    assert!(out.contains("+        __threadfence();"), "{out}");
    // The patch is verified on the program as its build command builds it (NVRTC cannot
    // compile a program's host code, so it was "NOT verified" before).
    assert!(
        out.contains(
            "patch verified: 0 failures in 100 runs of the patched program (built with the campaign's build command)"
        ),
        "{out}"
    );
    assert!(!out.contains("NOT verified"), "{out}");
    assert!(
        out.contains("confirmed: no failure on a fresh batch"),
        "{out}"
    );
}

#[test]
fn audit_observes_a_program_and_verifies_the_removal_on_the_rebuilt_program() {
    // The program's own runtime logs its accesses, fences and barriers for the audit's
    // observer, so the fence before the barrier is seen to run (it was "not exercised"
    // before: a program's executions were not observed at all) and judged redundant, and
    // the removal patch is built and fuzzed as a program.
    let d = campaign_dir();
    let o = run(fencehound_in(d.path()).args([
        "audit",
        "dot_lock.toml",
        "--variant",
        "extra_fence",
        "--model",
        "weak",
        "-j",
        "2",
    ]));
    let out = text(&o.stdout);
    assert!(
        out.contains("dot_lock.cu:46 `__threadfence();` `membar.gl;`: likely redundant"),
        "{out}"
    );
    assert!(
        out.contains("dot_lock.cu:31 `LOCK_FENCE;` `membar.gl;`: NECESSARY"),
        "{out}"
    );
    assert!(
        out.contains("dot_lock.cu:34 `UNLOCK_FENCE;` `membar.gl;`: NECESSARY"),
        "{out}"
    );
    assert!(out.contains("-    __threadfence();"), "{out}");
    assert!(
        out.contains(
            "patch verified: 0 failures in 100 runs of the patched program (built with the campaign's build command) (weak)"
        ),
        "{out}"
    );
    assert!(!out.contains("not exercised"), "{out}");
}

#[test]
fn kernel_campaigns_take_templates_structs_device_variables_and_bundled_headers() {
    // apply<2> as written, a by-value struct, `total` (a __device__ variable) checked by an
    // oracle, a relative -I and <cooperative_groups.h> through $NVRTC_BUNDLED_HEADERS.
    let src = programs().join("kernel_campaign");
    let d = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(d.path().join("include")).expect("mkdir");
    for f in ["kernel.cu", "campaign.toml", "include/affine.h"] {
        std::fs::copy(src.join(f), d.path().join(f)).expect("copy");
    }
    let passes = || {
        let o =
            run(fencehound_in(d.path()).args(["run", "campaign.toml", "--p", "1", "--seed", "2"]));
        assert_exit(&o, 0);
        assert!(
            text(&o.stdout).contains("verdict: pass"),
            "{}",
            text(&o.stdout)
        );
    };
    passes();
    // Without the option NVRTC alone cannot find <cooperative_groups.h>; the toolchain
    // retries with NVRTC's bundled headers, so the campaign runs the same.
    let toml = std::fs::read_to_string(d.path().join("campaign.toml")).expect("read");
    let without = toml.replace("\"--use-bundled-headers=$NVRTC_BUNDLED_HEADERS\", ", "");
    assert_ne!(toml, without);
    std::fs::write(d.path().join("campaign.toml"), &without).expect("write");
    passes();
    // A header NVRTC does not bundle is still an error that names it.
    let kernel = std::fs::read_to_string(d.path().join("kernel.cu")).expect("read");
    std::fs::write(
        d.path().join("kernel.cu"),
        format!("#include <no_such_cuda_header.h>\n{kernel}"),
    )
    .expect("write");
    let o = run(fencehound_in(d.path()).args(["run", "campaign.toml"]));
    assert_exit(&o, 2);
    let err = text(&o.stderr);
    assert!(err.contains("no_such_cuda_header.h"), "{err}");
}
