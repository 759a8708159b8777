//! Spin parking (`exec::livelock`): a warp that repeats a step while nothing changes is
//! parked and its steps are applied without interpreting them, until an event. Parking
//! must not change any execution: every launch here runs twice per seed, with hooks that
//! allow parking and with the same hooks refusing it, and the two must agree on the
//! outcome, the output, every statistic but `parked_steps`, and memory.

use fencehound_vgpu::hooks::{Barrier, Fence, LaunchInfo, RmwFn};
use fencehound_vgpu::*;
use std::collections::VecDeque;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Thread 0 of CTA 0 computes for `n` iterations (no memory access), then stores the
/// result at `buf[2]` and 1 at the flag `buf[0]`. Thread 0 of every other CTA spins on
/// the flag, then copies `buf[2]` to `buf[16 + ctaid]`. The other threads exit.
const SPIN: &str = r#"
.visible .entry spin(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r9, [n];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    mov.u32 %r4, 1;
    mov.u32 %r5, 0;
WORK:
    mad.lo.u32 %r4, %r4, 1664525, 1013904223;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r9;
    @%p2 bra WORK;
    st.global.u32 [%rd2+8], %r4;
    st.volatile.global.u32 [%rd2], 1;
    bra.uni DONE;
READER:
    ld.volatile.global.u32 %r6, [%rd2];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra READER;
    ld.global.u32 %r7, [%rd2+8];
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+64], %r7;
DONE:
    ret;
}
"#;

/// A decoupled look-back in miniature: thread 0 of CTA 0 computes for `n` iterations and
/// publishes as in `SPIN`. In every other CTA thread 0 spins on the flag *while the rest
/// of its warp and the CTA's second warp wait at `bar.sync`*, then passes the result
/// through shared memory; thread 33 writes it to `buf[16 + ctaid]` after the barrier.
const LOOKBACK: &str = r#"
.visible .entry lookback(.param .u64 buf, .param .u32 n)
{
    .shared .align 4 .u32 sh;
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r9, [n];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    mov.u32 %r4, 1;
    mov.u32 %r5, 0;
WORK:
    mad.lo.u32 %r4, %r4, 1664525, 1013904223;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r9;
    @%p2 bra WORK;
    st.global.u32 [%rd2+8], %r4;
    st.volatile.global.u32 [%rd2], 1;
    bra.uni DONE;
READER:
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra WAIT;
SPIN:
    ld.volatile.global.u32 %r6, [%rd2];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra SPIN;
    ld.global.u32 %r7, [%rd2+8];
    st.shared.u32 [sh], %r7;
WAIT:
    bar.sync 0;
    setp.ne.u32 %p1, %r2, 33;
    @%p1 bra DONE;
    ld.shared.u32 %r7, [sh];
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+64], %r7;
DONE:
    ret;
}
"#;

/// CUB's look-back poll in miniature: thread 0 of CTA 0 computes for `n` iterations and
/// publishes as in `SPIN`. In every other CTA the whole first warp polls — each lane
/// loads the flag, `vote.any` asks whether some lane still sees 0 and, in `poll_fenced`,
/// a `membar.cta` (`__threadfence_block()`) precedes the next load — while the CTA's
/// second warp waits at `bar.sync`; then lane 0 passes the result on through shared
/// memory and thread 33 writes it to `buf[16 + ctaid]`. One poll is two scheduling steps
/// (the load; the vote), three with the fence: a cycle of several steps. `poll_storing`
/// stores the same value in every poll instead of fencing: its state repeats too, but a
/// step that stores is never parked (the store changes its thread's buffer).
const POLL_TEMPLATE: &str = r#"
.visible .entry NAME(.param .u64 buf, .param .u32 n)
{
    .shared .align 4 .u32 sh;
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r9, [n];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    mov.u32 %r4, 1;
    mov.u32 %r5, 0;
WORK:
    mad.lo.u32 %r4, %r4, 1664525, 1013904223;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r9;
    @%p2 bra WORK;
    st.global.u32 [%rd2+8], %r4;
    st.volatile.global.u32 [%rd2], 1;
    bra.uni DONE;
READER:
    setp.ge.u32 %p1, %r2, 32;
    @%p1 bra WAIT;
    mov.u32 %r10, 0;
SPIN:
    ld.volatile.global.u32 %r6, [%rd2];
    add.u32 %r10, %r6, 5;
    setp.eq.u32 %p2, %r6, 0;
    vote.sync.any.pred %p3, %p2, 0xffffffff;
EXTRA    @%p3 bra SPIN;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra WAIT;
    ld.global.u32 %r7, [%rd2+8];
    st.shared.u32 [sh], %r7;
WAIT:
    bar.sync 0;
    setp.ne.u32 %p1, %r2, 33;
    @%p1 bra DONE;
    ld.shared.u32 %r7, [sh];
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+64], %r7;
DONE:
    ret;
}
"#;

/// The three poll kernels of [`POLL_TEMPLATE`], in one module.
fn poll_src() -> String {
    [
        ("poll", ""),
        ("poll_fenced", "    membar.cta;\n"),
        ("poll_storing", "    st.global.u32 [%rd2+128], %r10;\n"),
    ]
    .iter()
    .map(|(name, extra)| POLL_TEMPLATE.replace("NAME", name).replace("EXTRA", extra))
    .collect()
}

/// `forever`: thread 0 of every CTA spins on a flag nobody sets. `clock_timeout`: the
/// same spin gives up when `%clock` passes a limit; its registers repeat every iteration
/// (the clock value is overwritten after the comparison), so only the rule that a step
/// reading the clock is never parked lets it see the limit pass.
const NOBODY: &str = r#"
.visible .entry forever(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
SPIN:
    ld.volatile.global.u32 %r6, [%rd2];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra SPIN;
DONE:
    ret;
}

.visible .entry clock_timeout(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
SPIN:
    ld.volatile.global.u32 %r6, [%rd2];
    mov.u32 %r8, %clock;
    setp.ge.u32 %p3, %r8, 200000;
    mov.u32 %r8, 0;
    @%p3 bra OUT;
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra SPIN;
OUT:
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+64], 7;
DONE:
    ret;
}
"#;

/// Plain memory, except that every store waits in one FIFO until the interpreter reports
/// a stall (then the oldest is written) or the launch ends: a spinning reader is released
/// only by the liveness rule. `park` decides whether it allows parking.
struct Held {
    pending: VecDeque<(Location, Vec<u8>)>,
    park: bool,
    /// Whether it counts the drains, the only changes another thread's load can see
    /// (`Hooks::shared_effects`), and how many there were.
    shared: bool,
    drains: u64,
}

impl Held {
    fn new(park: bool) -> Held {
        Held {
            pending: VecDeque::new(),
            park,
            shared: false,
            drains: 0,
        }
    }

    /// Counting what others can see: its stores and fences are then no events.
    fn counting(park: bool) -> Held {
        Held {
            shared: true,
            ..Held::new(park)
        }
    }
}

impl Hooks for Held {
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        let mut probe = vec![0u8; data.len()];
        mem.read(a.loc, &mut probe)?;
        self.pending.push_back((a.loc, data.to_vec()));
        Ok(())
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        match self.pending.pop_front() {
            Some((loc, d)) => {
                self.drains += 1;
                mem.write(loc, &d).is_ok()
            }
            None => false,
        }
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        while self.stalled(mem) {}
    }
    fn load_effects(&self) -> Option<u64> {
        self.park.then_some(0)
    }
    fn shared_effects(&self) -> Option<u64> {
        self.shared.then_some(self.drains)
    }
}

/// `inner`, refusing parking.
struct NoPark<H>(H);

impl<H: Hooks> Hooks for NoPark<H> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.0.launch_begin(info)
    }
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.0.load(mem, a, buf)
    }
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.0.store(mem, a, data)
    }
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        self.0.atomic(mem, a, rmw)
    }
    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.0.fence(mem, f)
    }
    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.0.barrier_arrive(mem, b)
    }
    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, t: &[ThreadRef]) {
        self.0.barrier_release(mem, b, t)
    }
    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.0.thread_exit(mem, t)
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.0.stalled(mem)
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        self.0.launch_end(mem)
    }
    fn transparent(&self) -> bool {
        self.0.transparent()
    }
}

/// One launch of `kernel` over a zeroed 256-byte buffer: the result and the buffer.
fn run<H: Hooks>(
    src: &str,
    kernel: &str,
    ctas: u32,
    extra: Option<u32>,
    fuel: u64,
    hooks: &mut H,
    seed: u64,
) -> (LaunchResult, Vec<u8>) {
    let module = fencehound_ptx::parse(kernel, &format!("{HEADER}{src}")).expect("parse");
    let mut dev = Device::new();
    let m = dev.load_module(&module).expect("load");
    let buf = dev.alloc(256).expect("alloc");
    let mut args = vec![Arg::Ptr(buf)];
    if let Some(x) = extra {
        args.push(Arg::U32(x));
    }
    let r = dev
        .launch_with(
            m,
            kernel,
            Dim3::x(ctas),
            Dim3::x(64),
            0,
            &args,
            LaunchOptions {
                fuel,
                ..Default::default()
            },
            hooks,
            &mut RandomScheduler::new(seed),
        )
        .expect("launch");
    let mut out = vec![0u8; 256];
    dev.copy_from(buf, &mut out).expect("copy");
    (r, out)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

/// The writer's result after `n` iterations.
fn lcg(n: u32) -> u32 {
    (0..n).fold(1u32, |h, _| {
        h.wrapping_mul(1664525).wrapping_add(1013904223)
    })
}

/// Runs with and without parking must be the same execution; returns the parked run.
fn same_with_and_without<H: Hooks>(
    src: &str,
    kernel: &str,
    ctas: u32,
    extra: Option<u32>,
    fuel: u64,
    seed: u64,
    mk: impl Fn(bool) -> H,
) -> (LaunchResult, Vec<u8>) {
    let (parked, mem_p) = run(src, kernel, ctas, extra, fuel, &mut mk(true), seed);
    let (plain, mem_n) = run(src, kernel, ctas, extra, fuel, &mut NoPark(mk(false)), seed);
    assert_eq!(plain.stats.parked_steps, 0);
    let mut p = parked.clone();
    p.stats.parked_steps = 0;
    assert_eq!(p, plain, "seed {seed}: parking changed the execution");
    assert_eq!(mem_p, mem_n, "seed {seed}: parking changed memory");
    (parked, mem_p)
}

/// Readers spin while the writer computes (plain memory): they are parked until its
/// stores, then woken, and read its result — the same execution as without parking.
#[test]
fn spinning_readers_are_parked_and_woken_with_the_same_results() {
    for seed in 0..40 {
        let (r, mem) = same_with_and_without(SPIN, "spin", 4, Some(20_000), 1 << 24, seed, |p| {
            Allow(NoHooks, p)
        });
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        for c in 1..4 {
            assert_eq!(u32_at(&mem, 16 + c), lcg(20_000), "seed {seed}: reader {c}");
        }
        // The readers get most turns while the writer computes; nearly all are parked.
        assert!(
            r.stats.parked_steps * 2 > r.stats.steps,
            "seed {seed}: {:?}",
            r.stats
        );
    }
}

/// The writer's stores wait in a buffer until the liveness rule drains them: the readers
/// spin with nothing else running, are parked, woken by each drain (a `stalled` that
/// changed memory), and see the drained values — as without parking, seed for seed.
#[test]
fn readers_waiting_for_a_liveness_drain_are_woken_by_it() {
    let mut parked_steps = 0;
    for seed in 0..40 {
        let (r, mem) = same_with_and_without(SPIN, "spin", 4, Some(3), 1 << 24, seed, Held::new);
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        assert_eq!(u32_at(&mem, 0), 1);
        for c in 1..4 {
            assert_eq!(u32_at(&mem, 16 + c), lcg(3), "seed {seed}: reader {c}");
        }
        parked_steps += r.stats.parked_steps;
        // Most of the readers' steps are parked ones: each drain waits for the liveness
        // period, which they fill.
        assert!(
            r.stats.parked_steps * 2 > r.stats.steps,
            "seed {seed}: {:?}",
            r.stats
        );
    }
    assert!(parked_steps > 0);
}

/// One lane spins while the other lanes of its warp wait at a CTA barrier (CUB's
/// look-back): the warp is parked too — its hash binds to the epoch, since the barrier's
/// release is the only thing that changes the waiting lanes — under plain memory and
/// under buffered stores drained by the liveness rule, and every run is the one without
/// parking.
#[test]
fn a_lane_spinning_while_its_warp_waits_at_a_barrier_is_parked() {
    for seed in 0..24 {
        let (r, mem) =
            same_with_and_without(LOOKBACK, "lookback", 4, Some(20_000), 1 << 24, seed, |p| {
                Allow(NoHooks, p)
            });
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        for c in 1..4 {
            assert_eq!(u32_at(&mem, 16 + c), lcg(20_000), "seed {seed}: reader {c}");
        }
        assert!(
            r.stats.parked_steps * 2 > r.stats.steps,
            "seed {seed}: {:?}",
            r.stats
        );
        // `Held` buffers the shared-memory store too and no barrier drains it, so what
        // thread 33 reads is not checked here: only that it is what it is without parking.
        let (r, mem) =
            same_with_and_without(LOOKBACK, "lookback", 4, Some(3), 1 << 24, seed, Held::new);
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        assert_eq!(u32_at(&mem, 0), 1);
        assert!(r.stats.parked_steps > 0, "seed {seed}: {:?}", r.stats);
    }
}

/// A spin nobody ends is still a livelock (parked warps keep taking their steps, so the
/// detector sees them cycle), and running out of fuel is still a timeout, at the same
/// point as without parking.
#[test]
fn hangs_keep_their_verdicts() {
    for seed in 0..4 {
        // The writer computes for longer than the fuel lasts; the readers are parked.
        let (r, _) = same_with_and_without(SPIN, "spin", 3, Some(u32::MAX), 200_000, seed, |p| {
            Allow(NoHooks, p)
        });
        assert!(
            matches!(r.outcome, LaunchOutcome::Timeout(_)),
            "{:?}",
            r.outcome
        );
        assert!(r.stats.parked_steps > 0);
    }
    for seed in 0..4 {
        let (r, _) = same_with_and_without(NOBODY, "forever", 3, None, u64::MAX, seed, |p| {
            Allow(NoHooks, p)
        });
        let LaunchOutcome::Deadlock(d) = &r.outcome else {
            panic!("expected a livelock, got {:?}", r.outcome);
        };
        assert_eq!(d.cause, HangCause::Livelock, "{d}");
        assert!(r.stats.parked_steps * 2 > r.stats.steps, "{:?}", r.stats);
    }
}

/// The whole warp polls (CUB's look-back): a cycle of two steps (load; vote) under plain
/// memory, of three (load; vote; `membar.cta`) under buffered stores whose hooks count
/// what other threads can see (a fence with nothing to drain is then no event). The warp
/// is parked on the cycle, each applied step writing back what the step changes (the
/// pcs, the registers), woken by the writer's stores or the liveness drains, checked
/// again step by step and parked again — and every run is the one without parking.
#[test]
fn a_warp_polling_in_a_cycle_of_several_steps_is_parked() {
    let poll = poll_src();
    let mut fenced_parked = 0;
    for seed in 0..24 {
        let (r, mem) = same_with_and_without(&poll, "poll", 4, Some(20_000), 1 << 25, seed, |p| {
            Allow(NoHooks, p)
        });
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        for c in 1..4 {
            assert_eq!(u32_at(&mem, 16 + c), lcg(20_000), "seed {seed}: reader {c}");
        }
        assert!(
            r.stats.parked_steps * 2 > r.stats.steps,
            "seed {seed}: {:?}",
            r.stats
        );
        for kernel in ["poll", "poll_fenced"] {
            let (r, mem) =
                same_with_and_without(&poll, kernel, 4, Some(3), 1 << 25, seed, Held::counting);
            assert!(r.outcome.is_completed(), "{:?}", r.outcome);
            assert_eq!(u32_at(&mem, 0), 1);
            assert!(
                r.stats.parked_steps > 0,
                "seed {seed} {kernel}: {:?}",
                r.stats
            );
            if kernel == "poll_fenced" {
                fenced_parked += r.stats.parked_steps;
            }
        }
        // A poll that stores is never parked, whatever its state does (its stores queue
        // up behind the flag faster than the liveness rule drains them: it runs out of
        // fuel, at the same point with and without parking).
        if seed < 6 {
            let (r, _) = same_with_and_without(
                &poll,
                "poll_storing",
                4,
                Some(3),
                1 << 18,
                seed,
                Held::counting,
            );
            assert_eq!(r.stats.parked_steps, 0, "seed {seed}");
        }
        // Without the count a fence is an event: the fenced poll is never parked.
        let (r, _) =
            same_with_and_without(&poll, "poll_fenced", 4, Some(3), 1 << 25, seed, Held::new);
        assert_eq!(r.stats.parked_steps, 0, "seed {seed}");
    }
    assert!(fenced_parked > 0);
}

/// A loop that reads the clock is never parked (its registers repeat, but its next clock
/// value differs): it sees the limit pass and ends, as without parking.
#[test]
fn a_step_that_reads_the_clock_is_not_parked() {
    for seed in 0..4 {
        let (r, mem) =
            same_with_and_without(NOBODY, "clock_timeout", 3, None, u64::MAX, seed, |p| {
                Allow(NoHooks, p)
            });
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        assert_eq!(r.stats.parked_steps, 0, "seed {seed}");
        for c in 0..3 {
            assert_eq!(u32_at(&mem, 16 + c), 7);
        }
    }
}

/// `inner`, allowing parking only when `1` is true (hooks whose loads only read).
struct Allow<H>(H, bool);

impl<H: Hooks> Hooks for Allow<H> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.0.launch_begin(info)
    }
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.0.load(mem, a, buf)
    }
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.0.store(mem, a, data)
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.0.stalled(mem)
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        self.0.launch_end(mem)
    }
    fn transparent(&self) -> bool {
        self.0.transparent()
    }
    fn load_effects(&self) -> Option<u64> {
        if self.1 {
            self.0.load_effects()
        } else {
            None
        }
    }
}
