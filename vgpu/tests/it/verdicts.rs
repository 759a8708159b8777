//! Faults, deadlocks and timeouts are reported with the thread, the CUDA line and (for
//! faults) the address and nearest allocation; host-API misuse is a `DeviceError`, never a
//! panic. The kernels are small CUDA programs compiled by NVRTC; `// MARK` comments find the
//! expected lines.

use crate::common;
use common::*;
use fencehound_argspec as argspec;
use fencehound_vgpu::*;

struct Setup {
    dev: Device,
    module: ModuleId,
    source: &'static str,
}

fn setup(name: &str, source: &'static str) -> Setup {
    let mut dev = Device::new();
    let module = cuda_module(&mut dev, &format!("{name}.cu"), source);
    Setup {
        dev,
        module,
        source,
    }
}

impl Setup {
    fn launch(
        &mut self,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        args: &str,
        fuel: u64,
    ) -> (LaunchResult, argspec::BoundArgs) {
        let specs = argspec::parse_args(args).unwrap();
        let bound = argspec::bind(&mut self.dev, &specs).unwrap();
        let r = self
            .dev
            .launch_with(
                self.module,
                kernel,
                grid,
                block,
                0,
                &bound.args,
                LaunchOptions {
                    fuel,
                    ..Default::default()
                },
                &mut NoHooks,
                &mut RoundRobin::new(1),
            )
            .unwrap();
        (r, bound)
    }
}

const OOB: &str = r#"
extern "C" __global__ void oob(unsigned *out, unsigned shift)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i + shift] = i;                          // MARK store
}

extern "C" __global__ void oob_shared(unsigned *out, unsigned k)
{
    __shared__ unsigned s[32];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x * k];       // MARK shared load
}

extern "C" __global__ void misaligned(const unsigned char *buf, unsigned *out)
{
    const unsigned *p = (const unsigned *)(buf + 1 + 4 * threadIdx.x);
    out[threadIdx.x] = *p;                       // MARK misaligned
}
"#;

#[test]
fn out_of_bounds_store_names_thread_line_address_and_allocation() {
    let mut s = setup("oob", OOB);
    let (r, bound) = s.launch(
        "oob",
        Dim3::x(2),
        Dim3::x(32),
        "out:u32[64] zero, shift:u32=60",
        1 << 20,
    );
    let LaunchOutcome::Fault(f) = &r.outcome else {
        panic!("expected a fault, got {:?}", r.outcome);
    };
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    // Round-robin runs block 0 first; its lane 4 is the first to store past the end.
    assert_eq!((f.block_idx, f.thread_idx), ([0, 0, 0], [4, 0, 0]));
    assert_eq!(cuda_line(&f.site), Some(line_of(s.source, "MARK store")));
    let out = bound.buffer("out").unwrap();
    let addr = out.ptr + 64 * 4;
    assert!(f.message.contains(&format!("{addr:#x}")), "{}", f.message);
    assert!(
        f.message.contains("0 bytes past the end of `out`"),
        "{}",
        f.message
    );
    let text = f.to_string();
    assert!(text.contains("oob.cu:"), "{text}");
}

#[test]
fn out_of_bounds_shared_load() {
    let mut s = setup("oob", OOB);
    let (r, _) = s.launch(
        "oob_shared",
        Dim3::x(1),
        Dim3::x(32),
        "out:u32[32] zero, k:u32=2",
        1 << 20,
    );
    let LaunchOutcome::Fault(f) = &r.outcome else {
        panic!("expected a fault, got {:?}", r.outcome);
    };
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert_eq!(f.thread_idx, [16, 0, 0]);
    assert_eq!(
        cuda_line(&f.site),
        Some(line_of(s.source, "MARK shared load"))
    );
    assert!(f.message.contains("shared"), "{}", f.message);
    // k = 1 stays in bounds.
    let (r, bound) = s.launch(
        "oob_shared",
        Dim3::x(1),
        Dim3::x(32),
        "out:u32[32] zero, k:u32=1",
        1 << 20,
    );
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let out = bound.buffer("out").unwrap().read(&s.dev).unwrap();
    assert_eq!(out.values::<u32>().unwrap(), (0..32).collect::<Vec<u32>>());
}

#[test]
fn misaligned_load() {
    let mut s = setup("oob", OOB);
    let (r, _) = s.launch(
        "misaligned",
        Dim3::x(1),
        Dim3::x(8),
        "buf:u8[64] iota, out:u32[8] zero",
        1 << 20,
    );
    let LaunchOutcome::Fault(f) = &r.outcome else {
        panic!("expected a fault, got {:?}", r.outcome);
    };
    assert_eq!(f.kind, FaultKind::Misaligned);
    assert_eq!(f.thread_idx, [0, 0, 0]);
    assert_eq!(
        cuda_line(&f.site),
        Some(line_of(s.source, "MARK misaligned"))
    );
    assert!(
        f.message.contains("not aligned to 4 bytes"),
        "{}",
        f.message
    );
}

const HANGS: &str = r#"
extern "C" __global__ void divergent_syncthreads(unsigned *out)
{
    if (threadIdx.x < 16) {
        __syncthreads();                         // MARK cta barrier
    }
    __syncwarp();                                // MARK warp barrier
    out[threadIdx.x] = 1;
}

extern "C" __global__ void named_barrier_short(unsigned *out)
{
    if (threadIdx.x < 32) {
        asm volatile("bar.sync 1, 96;");         // MARK named
    } else {
        __syncthreads();                         // MARK other
    }
    out[threadIdx.x] = 1;
}

extern "C" __global__ void spin_forever(volatile unsigned *flag, unsigned *out)
{
    while (flag[0] == 0) {                       // MARK spin
    }
    out[threadIdx.x] = 1;
}

extern "C" __global__ void lock_never_released(unsigned *lock, unsigned *out)
{
    while (atomicCAS(lock, 0u, 1u) != 0u) {      // MARK cas
    }
    out[threadIdx.x] = 1;
    atomicExch(lock, 0u);
}

// Warp 1's thread works for `n` iterations without a store, then releases the others.
extern "C" __global__ void slow_release(volatile unsigned *flag, unsigned *out, unsigned n)
{
    if (threadIdx.x == 32) {
        unsigned h = 1;
        for (unsigned i = 0; i < n; i++) h = h * 1664525u + 1013904223u;
        out[32] = h;
        flag[0] = 1;
    } else if (threadIdx.x < 32) {
        while (flag[0] == 0) {
        }
        out[threadIdx.x] = 1;
    }
}

// Only the middle lanes' registers change while the warp spins (a cycle of two states),
// the first and last lanes' stay as they are.
extern "C" __global__ void spin_middle_toggles(volatile unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x & 31, x = 0;
    while (flag[0] == 0) {                       // MARK toggles
        if (t != 0 && t != 31) x ^= 1;
    }
    out[threadIdx.x] = x;
}

// Lane 15 counts to `n` while the other lanes spin, then sets the flag: only a middle lane
// makes progress.
extern "C" __global__ void middle_lane_works(volatile unsigned *flag, unsigned *out, unsigned n)
{
    unsigned t = threadIdx.x & 31, i = 0;
    while (flag[0] == 0) {
        if (t == 15 && ++i == n) flag[0] = 1;
    }
    out[threadIdx.x] = i;
}

// A delay loop on the clock: its state never repeats, so it is not a hang.
extern "C" __global__ void clock_delay(unsigned *out)
{
    long long t0 = clock64();
    while (clock64() - t0 < 3000000) {
    }
    out[threadIdx.x] = 1;
}
"#;

/// The (lanes, CUDA line) groups of a hang dump, for the warp of block 0 with index `warp`.
fn dump_groups(d: &HangDump, warp: u32) -> Vec<(u32, Option<u32>, String)> {
    let w = d
        .warps
        .iter()
        .find(|w| w.cta == 0 && w.warp == warp)
        .unwrap_or_else(|| panic!("warp {warp} not in dump:\n{d}"));
    let mut g: Vec<(u32, Option<u32>, String)> = w
        .groups
        .iter()
        .map(|(m, what, site)| (*m, cuda_line(site), what.clone()))
        .collect();
    g.sort();
    g
}

#[test]
fn syncthreads_in_a_divergent_branch_deadlocks_with_a_dump() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "divergent_syncthreads",
        Dim3::x(1),
        Dim3::x(32),
        "out:u32[32] zero",
        1 << 20,
    );
    let LaunchOutcome::Deadlock(d) = &r.outcome else {
        panic!("expected a deadlock, got {:?}", r.outcome);
    };
    let g = dump_groups(d, 0);
    assert_eq!(g.len(), 2, "{d}");
    assert_eq!(g[0].0, 0x0000_ffff);
    assert_eq!(g[0].1, Some(line_of(s.source, "MARK cta barrier")));
    assert!(g[0].2.contains("barrier 0"), "{d}");
    assert_eq!(g[1].0, 0xffff_0000);
    assert_eq!(g[1].1, Some(line_of(s.source, "MARK warp barrier")));
    // Deadlock is found at once, not after burning the fuel.
    assert!(r.stats.lane_instructions < 10_000, "{:?}", r.stats);
    let text = d.to_string();
    assert!(text.contains("hangs.cu:"), "{text}");
}

#[test]
fn named_barrier_that_cannot_fill_deadlocks() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "named_barrier_short",
        Dim3::x(1),
        Dim3::x(64),
        "out:u32[64] zero",
        1 << 20,
    );
    let LaunchOutcome::Deadlock(d) = &r.outcome else {
        panic!("expected a deadlock, got {:?}", r.outcome);
    };
    let w0 = dump_groups(d, 0);
    let w1 = dump_groups(d, 1);
    assert_eq!(
        w0,
        vec![(
            u32::MAX,
            Some(line_of(s.source, "MARK named")),
            "waiting at barrier 1".into()
        )]
    );
    assert_eq!(
        w1,
        vec![(
            u32::MAX,
            Some(line_of(s.source, "MARK other")),
            "waiting at barrier 0".into()
        )]
    );
}

#[test]
fn infinite_spin_times_out_with_a_dump() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "spin_forever",
        Dim3::x(2),
        Dim3::x(64),
        "flag:u32[1] zero, out:u32[128] zero",
        50_000,
    );
    let LaunchOutcome::Timeout(d) = &r.outcome else {
        panic!("expected a timeout, got {:?}", r.outcome);
    };
    assert!(r.stats.lane_instructions >= 50_000);
    assert!(r.stats.lane_instructions < 60_000, "{:?}", r.stats);
    assert_eq!(d.warps.len(), 4, "{d}");
    let spin = line_of(s.source, "MARK spin");
    for w in &d.warps {
        for (_, what, site) in &w.groups {
            assert_eq!(what, "running");
            let line = cuda_line(site).unwrap();
            assert!(line == spin || line == spin + 1, "{d}");
        }
    }
    // With the flag set the same kernel completes.
    let (r, _) = s.launch(
        "spin_forever",
        Dim3::x(2),
        Dim3::x(64),
        "flag:u32[1] fill(1), out:u32[128] zero",
        50_000,
    );
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
}

/// Without a fuel limit, a spin on a flag nobody sets is found by lack of progress: every
/// warp repeats its state, nothing is pending. It is a deadlock (livelock), found long
/// before any instruction budget a GPU-sized launch would need.
#[test]
fn a_spin_nobody_can_end_is_a_livelock() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "spin_forever",
        Dim3::x(2),
        Dim3::x(64),
        "flag:u32[1] zero, out:u32[128] zero",
        u64::MAX,
    );
    let LaunchOutcome::Deadlock(d) = &r.outcome else {
        panic!("expected a livelock, got {:?}", r.outcome);
    };
    assert_eq!(d.cause, HangCause::Livelock, "{d}");
    assert!(d.to_string().contains("repeats a state"), "{d}");
    assert_eq!(d.warps.len(), 4, "{d}");
    assert!(r.stats.lane_instructions < 4 << 20, "{:?}", r.stats);
}

/// The detector follows a sample of each warp's state (its first and last ready lanes'
/// registers) until a sample repeats, then whole states. A cycle that changes only the
/// middle lanes' registers is still a livelock; a warp whose progress is only in a middle
/// lane is not (its sample repeats at every turn, its whole state never does).
#[test]
fn livelock_detection_sees_every_lane() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "spin_middle_toggles",
        Dim3::x(1),
        Dim3::x(32),
        "flag:u32[1] zero, out:u32[32] zero",
        u64::MAX,
    );
    let LaunchOutcome::Deadlock(d) = &r.outcome else {
        panic!("expected a livelock, got {:?}", r.outcome);
    };
    assert_eq!(d.cause, HangCause::Livelock, "{d}");
    let (r, _) = s.launch(
        "middle_lane_works",
        Dim3::x(1),
        Dim3::x(32),
        "flag:u32[1] zero, out:u32[32] zero, n:u32=200000",
        u64::MAX,
    );
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    assert!(r.stats.lane_instructions > 4 << 20, "{:?}", r.stats);
}

/// A spin lock that is never released: the failing `atomicCAS` changes nothing, so its
/// loop is a livelock too.
#[test]
fn a_lock_never_released_is_a_livelock() {
    let mut s = setup("hangs", HANGS);
    let (r, _) = s.launch(
        "lock_never_released",
        Dim3::x(1),
        Dim3::x(32),
        "lock:u32[1] fill(1), out:u32[32] zero",
        u64::MAX,
    );
    let LaunchOutcome::Deadlock(d) = &r.outcome else {
        panic!("expected a livelock, got {:?}", r.outcome);
    };
    assert_eq!(d.cause, HangCause::Livelock, "{d}");
}

/// Spinning warps are not a hang while another warp still works (its loop counter makes
/// every state new), nor is a delay loop on the clock.
#[test]
fn work_and_clock_delays_are_not_hangs() {
    let mut s = setup("hangs", HANGS);
    let (r, b) = s.launch(
        "slow_release",
        Dim3::x(1),
        Dim3::x(64),
        "flag:u32[1] zero, out:u32[64] zero, n:u32=3000000",
        u64::MAX,
    );
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    assert!(r.stats.lane_instructions > 2 << 20, "{:?}", r.stats);
    let out: Vec<u32> = b
        .buffer("out")
        .unwrap()
        .read(&s.dev)
        .unwrap()
        .values()
        .unwrap();
    assert!(out[..32].iter().all(|&x| x == 1));
    let (r, _) = s.launch(
        "clock_delay",
        Dim3::x(1),
        Dim3::x(32),
        "out:u32[32] zero",
        u64::MAX,
    );
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
}

const SIMPLE: &str = r#"
extern "C" __global__ void simple(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}
"#;

#[test]
fn host_api_misuse_is_an_error_not_a_panic() {
    let mut s = setup("simple", SIMPLE);
    let out = s.dev.alloc(256).unwrap();
    let ok = [Arg::Ptr(out), Arg::U32(64)];
    let m = s.module;
    let launch =
        |dev: &mut Device, kernel: &str, grid: Dim3, block: Dim3, dyn_shared: u32, args: &[Arg]| {
            dev.launch(m, kernel, grid, block, dyn_shared, args)
        };
    let dev = &mut s.dev;
    let cfg = |r: Result<LaunchResult, DeviceError>| match r {
        Err(e @ (DeviceError::LaunchConfig(_) | DeviceError::ThreadLimit { .. })) => e.to_string(),
        other => panic!("expected a launch-config error, got {other:?}"),
    };
    // More threads than the vgpu runs: its own limit, told apart from a configuration
    // CUDA refuses (a runtime reports it as out of resources).
    assert!(matches!(
        launch(dev, "simple", Dim3::x(1 << 20), Dim3::x(1024), 0, &ok),
        Err(DeviceError::ThreadLimit {
            limit: MAX_THREADS,
            ..
        })
    ));
    cfg(launch(
        dev,
        "simple",
        Dim3::x(1 << 20),
        Dim3::x(1024),
        0,
        &ok,
    ));
    cfg(launch(
        dev,
        "simple",
        Dim3::new(u32::MAX, u32::MAX, u32::MAX),
        Dim3::x(1),
        0,
        &ok,
    ));
    cfg(launch(dev, "simple", Dim3::x(0), Dim3::x(32), 0, &ok));
    cfg(launch(dev, "simple", Dim3::x(1), Dim3::x(2048), 0, &ok));
    cfg(launch(
        dev,
        "simple",
        Dim3::x(1),
        Dim3::new(1, 1, 65),
        0,
        &ok,
    ));
    cfg(launch(
        dev,
        "simple",
        Dim3::x(1),
        Dim3::x(32),
        u32::MAX,
        &ok,
    ));
    assert!(matches!(
        launch(dev, "simple", Dim3::x(1), Dim3::x(32), 0, &ok[..1]),
        Err(DeviceError::ArgCount {
            expected: 2,
            given: 1,
            ..
        })
    ));
    assert!(matches!(
        launch(
            dev,
            "simple",
            Dim3::x(1),
            Dim3::x(32),
            0,
            &[Arg::Ptr(out), Arg::U32(1), Arg::U32(2)]
        ),
        Err(DeviceError::ArgCount {
            expected: 2,
            given: 3,
            ..
        })
    ));
    assert!(matches!(
        launch(
            dev,
            "simple",
            Dim3::x(1),
            Dim3::x(32),
            0,
            &[Arg::Ptr(out), Arg::U64(64)]
        ),
        Err(DeviceError::ArgSize {
            index: 1,
            expected: 4,
            given: 8,
            ..
        })
    ));
    assert!(matches!(
        launch(
            dev,
            "simple",
            Dim3::x(1),
            Dim3::x(32),
            0,
            &[Arg::U32(1), Arg::U32(64)]
        ),
        Err(DeviceError::ArgSize {
            index: 0,
            expected: 8,
            given: 4,
            ..
        })
    ));
    match launch(dev, "nope", Dim3::x(1), Dim3::x(32), 0, &ok) {
        Err(DeviceError::NoSuchKernel(name, list)) => {
            assert_eq!(name, "nope");
            assert_eq!(list, "simple");
        }
        other => panic!("{other:?}"),
    }
    // Memory misuse.
    assert!(matches!(
        dev.alloc(u64::MAX),
        Err(DeviceError::OutOfMemory(_))
    ));
    assert!(matches!(
        dev.copy_to(out + 250, &[0u8; 16]),
        Err(DeviceError::BadAddress { .. })
    ));
    assert!(matches!(
        dev.copy_to(0, &[1]),
        Err(DeviceError::BadAddress { .. })
    ));
    let mut buf = [0u8; 8];
    assert!(matches!(
        dev.copy_from(u64::MAX - 3, &mut buf),
        Err(DeviceError::BadAddress { .. })
    ));
    assert!(matches!(
        dev.global_by_name(m, "nope"),
        Err(DeviceError::NoSuchGlobal(_))
    ));
    // After all that, a good launch still works.
    let r = launch(dev, "simple", Dim3::x(2), Dim3::x(32), 0, &ok).unwrap();
    assert!(r.outcome.is_completed());
    let mut got = [0u8; 256];
    dev.copy_from(out, &mut got).unwrap();
    assert_eq!(u32::from_le_bytes(got[252..256].try_into().unwrap()), 63);
}
