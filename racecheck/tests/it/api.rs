//! Kernel boundaries, composition with write buffers, 65,536 threads, dedup across
//! executions, lock-problem kinds and the JSON form of reports.

use crate::common;

use common::{compile, run, Memory};
use fencehound_argspec as argspec;
use fencehound_racecheck::{Conflict, LockProblem, RaceCheck, RaceClass, RaceReport};
use fencehound_vgpu::{
    Device, Dim3, Hooks, LaunchOptions, LaunchResult, NoHooks, RoundRobin, Scheduler,
};

const SRC: &str = r#"
extern "C" __global__ void produce(unsigned *data) { data[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }
extern "C" __global__ void consume(unsigned *data, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    out[g] = data[(g + 37) % n];
}
extern "C" __global__ void racy(unsigned *data, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    data[g] = g;
    out[g] = data[(g + blockDim.x) % n];
}
extern "C" __global__ void wide_reduce(unsigned *out)
{
    __shared__ unsigned s[256];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    for (unsigned st = 128; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + t] = s[0] + s[t];
}
"#;

/// One 1-D launch of kernel `k` under `hooks` and `sched`, default options.
#[allow(clippy::too_many_arguments)]
fn launch_on<H: Hooks>(
    dev: &mut Device,
    id: fencehound_vgpu::ModuleId,
    k: &str,
    grid: u32,
    block: u32,
    args: &[fencehound_vgpu::Arg],
    hooks: &mut H,
    sched: &mut impl Scheduler,
) -> LaunchResult {
    dev.launch_with(
        id,
        k,
        Dim3::x(grid),
        Dim3::x(block),
        0,
        args,
        LaunchOptions::default(),
        hooks,
        sched,
    )
    .unwrap()
}

fn launch(
    dev: &mut Device,
    id: fencehound_vgpu::ModuleId,
    rc: &mut RaceCheck<NoHooks>,
    k: &str,
    grid: u32,
    block: u32,
    args: &[fencehound_vgpu::Arg],
) {
    let r = launch_on(dev, id, k, grid, block, args, rc, &mut RoundRobin::new(1));
    assert!(r.outcome.is_completed(), "{k}: {:?}", r.outcome);
}

#[test]
fn kernel_boundaries_order_launches_and_races_dedup_across_executions() {
    let m = compile("api.cu", SRC, &[]);
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap();
    let specs = argspec::parse_args("data:u32[256], out:u32[256]").unwrap();
    let b = argspec::bind(&mut dev, &specs).unwrap();
    let mut rc = RaceCheck::for_module(NoHooks, &dev, id);
    launch(&mut dev, id, &mut rc, "produce", 4, 64, &b.args[..1]);
    launch(&mut dev, id, &mut rc, "consume", 4, 64, &b.args);
    assert!(rc.races().is_empty(), "{:?}", rc.races().reports(&dev, id));
    for _ in 0..3 {
        launch(&mut dev, id, &mut rc, "racy", 4, 64, &b.args);
    }
    let reports = rc.races().reports(&dev, id);
    assert_eq!(rc.races().executions, 5);
    assert!(!reports.is_empty());
    for r in &reports {
        assert_eq!(r.class, RaceClass::InterBlock);
        assert_eq!(r.executions, 3, "{r}");
        assert!(r.occurrences >= 3);
        assert_eq!(r.allocation.as_deref(), Some("data"));
        assert_eq!(r.kernel, "racy");
    }
    // JSON round trip.
    let json = serde_json::to_string(&reports).unwrap();
    let back: Vec<RaceReport> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, reports);
    assert!(json.contains("\"class\":\"inter-block\""), "{json}");
}

#[test]
fn sixty_five_thousand_threads() {
    let m = compile("api.cu", SRC, &[]);
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap();
    let specs = argspec::parse_args("out:u32[65536]").unwrap();
    let b = argspec::bind(&mut dev, &specs).unwrap();
    let mut rc = RaceCheck::new(NoHooks);
    launch(&mut dev, id, &mut rc, "wide_reduce", 256, 256, &b.args);
    assert!(rc.races().is_empty());
    let s = rc.stats();
    assert!(s.accesses > 65536 * 4, "{s:?}");
    // Word accesses only: one 32-byte cell per 4-byte word (and a page header), no byte
    // cells (shadow.rs).
    assert!(
        s.shadow_bytes >= s.tracked_bytes * 8 && s.shadow_bytes < s.tracked_bytes * 9,
        "{s:?}"
    );
}

#[test]
fn lock_problems_are_named() {
    let path = format!("{}/tests/kernels/locks.cu", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    let m = compile("locks.cu", &src, &[]);
    let args = "locks:u32[4], counter:u32[1]";
    for (k, want) in [
        ("lk_per_block_locks", LockProblem::DifferentLocks),
        ("lk_no_fences", LockProblem::Unordered),
        ("lk_unprotected", LockProblem::Unprotected),
        ("lk_plain_release", LockProblem::PlainRelease),
    ] {
        let out = run(&m, k, 4, 32, args, 0..3, Memory::Sc, "");
        assert!(
            out.reports.iter().any(|r| r.lock == Some(want)),
            "{k}: {:?}",
            out.reports.iter().map(|r| r.lock).collect::<Vec<_>>()
        );
    }
}

#[test]
fn write_buffers_run_underneath() {
    // The checker sees program order whatever the buffers do: same verdicts at p_w = 1.
    let m = compile("api.cu", SRC, &[]);
    let out = run(
        &m,
        "racy",
        4,
        64,
        "data:u32[256], out:u32[256]",
        0..2,
        Memory::Buffers(1.0),
        "",
    );
    assert!(out.races.classes().contains(&RaceClass::InterBlock));
    let out = run(
        &m,
        "wide_reduce",
        2,
        256,
        "out:u32[512]",
        0..2,
        Memory::Buffers(1.0),
        "",
    );
    assert!(out.races.is_empty());
}

/// Issue 23: a read that races with two writes the second of which overwrote the first
/// without being ordered after it (two RMWs, atomic with respect to each other) is
/// reported against both. Shadow memory used to keep only the last write, so the first
/// writer's race vanished whenever the RMWs came in this order (the misses of
/// `fencehound litmus --generate N --race`). Delays make the order the same in every
/// schedule: thread 0's RMW, then thread 32's, then thread 64's plain read.
#[test]
fn a_read_races_with_a_write_that_a_later_rmw_hid() {
    const HID: &str = r#"
extern "C" __global__ void hidden_rmw(unsigned *out)
{
    __shared__ unsigned x;
    unsigned t = threadIdx.x;
    if (t == 0) x = 0;
    __syncthreads();
    if (t == 0) atomicAdd(&x, 1u);
    if (t == 32) {
        for (int i = 0; i < 32; i++) __nanosleep(100);
        atomicAdd(&x, 2u);
    }
    if (t == 64) {
        for (int i = 0; i < 256; i++) __nanosleep(100);
        out[0] = x;
    }
}

// Thread 32's RMW observed thread 0's; its own later read is ordered after thread 0's RMW
// in PTX causality order (observation, then program order): no race.
extern "C" __global__ void observed_rmw(unsigned *out)
{
    __shared__ unsigned x;
    unsigned t = threadIdx.x;
    if (t == 0) x = 0;
    __syncthreads();
    if (t == 0) atomicAdd(&x, 1u);
    if (t == 32) {
        for (int i = 0; i < 32; i++) __nanosleep(100);
        atomicAdd(&x, 2u);
        out[0] = *(volatile unsigned *)&x + x;
    }
}
"#;
    let m = compile("hidden.cu", HID, &[]);
    let out = run(&m, "hidden_rmw", 1, 96, "out:u32[1]", 0..4, Memory::Sc, "");
    let firsts: Vec<String> = out
        .reports
        .iter()
        .filter(|r| r.class == RaceClass::IntraBlock && r.conflict == Conflict::Raw)
        .map(|r| r.first.instruction.clone())
        .collect();
    for want in [", 1;", ", 2;"] {
        assert!(
            firsts
                .iter()
                .any(|i| i.contains("atom") && i.contains(want)),
            "no race of the read with the RMW adding {want}: {firsts:?}\n{:#?}",
            out.reports
        );
    }
    let observed = run(
        &m,
        "observed_rmw",
        1,
        64,
        "out:u32[1]",
        0..4,
        Memory::Sc,
        "",
    );
    assert!(observed.reports.is_empty(), "{:#?}", observed.reports);
}

/// A warp store that faults at one lane: the lanes before it are stored and checked, the
/// ones after it neither (the warp path, `RaceCheck::store_warp`, keeps the per-lane
/// contract of `Hooks::store_warp`), with the fast paths and without.
#[test]
fn a_warp_access_that_faults_checks_the_lanes_before_it() {
    const OOB: &str = r#"
extern "C" __global__ void oob(unsigned *out)
{
    unsigned t = threadIdx.x;
    out[t == 5 ? 100000000u : t] = t + 1;
}
"#;
    let module = compile("oob.cu", OOB, &[]);
    for fast in [true, false] {
        let mut dev = Device::new();
        let id = dev.load_module(&module).unwrap();
        let bound = argspec::bind(&mut dev, &argspec::parse_args("out:u32[32]").unwrap()).unwrap();
        let mut rc = RaceCheck::new(NoHooks);
        if !fast {
            rc = rc.without_fast_paths();
        }
        let r = launch_on(
            &mut dev,
            id,
            "oob",
            1,
            32,
            &bound.args,
            &mut rc,
            &mut RoundRobin::new(1),
        );
        assert!(!r.outcome.is_completed(), "the out-of-bounds lane faults");
        assert_eq!(
            rc.stats().accesses,
            5,
            "fast paths {fast}: lanes 0-4 checked"
        );
        let host = bound.buffer("out").unwrap().read(&dev).unwrap();
        let out: Vec<u32> = host
            .bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(&out[..7], &[1, 2, 3, 4, 5, 0, 0], "fast paths {fast}");
    }
}

/// Spin parking under the race check (`RaceCheck::park_spins`, on by default): a warp that
/// spins on a flag whose store sits in a buffer (`scoped`, `p_w = 1`) is parked and its
/// repeated turns are applied without calling the hooks. The execution is the one the
/// unparked run makes — same schedule, lane instructions and memory (the launch options
/// leave parking invisible to the scheduler) — and the races reported are the same, with
/// and without a fence inside the spin loop (a fence that drains nothing can be inside a
/// parked cycle), for the racy message passing and for its fenced twin.
#[test]
fn parked_spins_change_neither_the_execution_nor_the_reports() {
    const MP: &str = r#"
extern "C" __global__ void mp_spin(unsigned *data, volatile unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
#ifdef FENCED
        __threadfence();
#endif
        *flag = 1;
    } else {
        while (*flag == 0) {
#ifdef LOOP_FENCE
            __threadfence_block();
#endif
        }
#ifdef FENCED
        __threadfence();
#endif
        out[0] = data[0];
    }
}
"#;
    use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
    use fencehound_vgpu::RandomScheduler;
    for defines in [
        &[][..],
        &["LOOP_FENCE"][..],
        &["FENCED"][..],
        &["FENCED", "LOOP_FENCE"][..],
    ] {
        let m = compile("mp_spin.cu", MP, defines);
        let racy = !defines.contains(&"FENCED");
        let mut parked_somewhere = false;
        for seed in 0..4u64 {
            let mut seen = Vec::new();
            for park in [false, true] {
                let mut dev = Device::new();
                let id = dev.load_module(&m).unwrap();
                let specs = argspec::parse_args("data:u32[1], flag:u32[1], out:u32[1]").unwrap();
                let bound = argspec::bind(&mut dev, &specs).unwrap();
                let wb = WriteBuffers::new(BufferConfig::new(Model::Scoped, 1.0, seed));
                let mut rc = RaceCheck::for_module(wb, &dev, id).park_spins(park);
                let r = launch_on(
                    &mut dev,
                    id,
                    "mp_spin",
                    2,
                    32,
                    &bound.args,
                    &mut rc,
                    &mut RandomScheduler::new(seed),
                );
                assert!(
                    r.outcome.is_completed(),
                    "{defines:?} {seed}: {:?}",
                    r.outcome
                );
                if !park {
                    assert_eq!(r.stats.parked_steps, 0, "{defines:?} seed {seed}");
                }
                parked_somewhere |= r.stats.parked_steps > 0;
                let memory = format!("{:?}", bound.read_all(&dev).unwrap());
                let reports: Vec<String> = rc
                    .races()
                    .reports(&dev, id)
                    .iter()
                    .map(|r| format!("{r:?}"))
                    .collect();
                assert_eq!(
                    reports.is_empty(),
                    !racy,
                    "{defines:?} seed {seed}: {reports:?}"
                );
                seen.push((r.stats.lane_instructions, r.stats.steps, memory, reports));
            }
            assert_eq!(
                seen[0], seen[1],
                "{defines:?} seed {seed}: unparked vs parked"
            );
        }
        assert!(parked_somewhere, "{defines:?}: no spin was parked");
    }
}

/// An atomic maximum of floats as commonly written: a plain first read, a loop that
/// leaves without a CAS when the value is already large enough. The plain read races
/// with the other threads' CAS (PTX: a weak read against a write, not morally strong),
/// and the fix is to make that read atomic — which the report says first, before the
/// ordering advice of its class (that alone, `__syncthreads()` or `__threadfence()`,
/// does not fix the loop). With the read `volatile` the checker is silent; so it is with
/// the Programming Guide's form, whose plain read always feeds the CAS.
#[test]
fn a_plain_read_of_a_cas_loops_word_is_told_to_be_atomic() {
    let src = r#"
#ifdef VOLATILE
#define FIRST_READ(p) (*(volatile int *)(p))
#else
#define FIRST_READ(p) (*(p))
#endif
__device__ void atomic_max_float(float *addr, float v)
{
    int *a = (int *)addr;
    int old = FIRST_READ(a), assumed;
    do {
        assumed = old;
#ifndef GUIDE
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
#else
        old = atomicCAS(a, assumed, __float_as_int(fmaxf(__int_as_float(assumed), v)));
#endif
    } while (old != assumed);
}
extern "C" __global__ void fmax_all(const unsigned *in, float *m)
{
    atomic_max_float(m, (float)in[blockIdx.x * blockDim.x + threadIdx.x]);
}
"#;
    let args = "in:u32[512] random(9,0,1000), m:f32[1]";
    let plain = run(
        &compile("fmax.cu", src, &[]),
        "fmax_all",
        8,
        64,
        args,
        0..2,
        Memory::Sc,
        "",
    );
    assert!(!plain.reports.is_empty(), "the plain first read races");
    for r in &plain.reports {
        assert!(
            r.missing.starts_with("the plain load at ")
                && r.missing.contains("fmax.cu:10 meets the `atomicCAS` at ")
                && r.missing.contains("fmax.cu:15, which other threads use"),
            "{}",
            r.missing
        );
        assert!(
            r.missing.contains("make it atomic too (a `volatile` read"),
            "{}",
            r.missing
        );
        assert!(r
            .missing
            .contains("; if it must see or be seen by a particular update, also: "));
    }
    for defines in [&["VOLATILE"][..], &["GUIDE"][..]] {
        let out = run(
            &compile("fmax.cu", src, defines),
            "fmax_all",
            8,
            64,
            args,
            0..2,
            Memory::Sc,
            "",
        );
        assert!(out.reports.is_empty(), "{defines:?}: {:?}", out.reports);
    }
}
