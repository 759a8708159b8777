//! Spin parking under the models (the vgpu's `exec::livelock`): readers spinning on a flag
//! whose store waits in a buffer are parked until a drain; every execution must be the one
//! it is without parking, and the outcomes that need a parked reader to re-read after a
//! drain must still occur.

use crate::common;

use common::forward::Forward;
use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::*;
use std::collections::BTreeSet;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Message passing without a fence: thread 0 of CTA 0 stores 1 to `buf[2]` (data), then 1
/// to `buf[0]` (flag) and exits; thread 0 of every other CTA spins on the flag, then copies
/// the data to `buf[16 + ctaid]`.
const MP: &str = r#"
.visible .entry mp(.param .u64 buf)
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
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    st.global.u32 [%rd2+8], 1;
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

/// One launch of kernel `name` (PTX `body`), `ctas` CTAs of `threads` threads, with a
/// buffer of `bytes` bytes, under `hooks`: the result and the buffer.
fn launch<H: Hooks>(
    hooks: &mut H,
    seed: u64,
    kernel: (&str, &str),
    shape: (u32, u32, usize),
) -> (LaunchResult, Vec<u8>) {
    launch_with(hooks, seed, kernel, shape, LaunchOptions::default())
}

/// [`launch`] with options.
fn launch_with<H: Hooks>(
    hooks: &mut H,
    seed: u64,
    (name, body): (&str, &str),
    (ctas, threads, bytes): (u32, u32, usize),
    opts: LaunchOptions,
) -> (LaunchResult, Vec<u8>) {
    let module = fencehound_ptx::parse(name, &format!("{HEADER}{body}")).expect("parse");
    let mut dev = Device::new();
    let m = dev.load_module(&module).expect("load");
    let buf = dev.alloc(bytes as u64).expect("alloc");
    let r = dev
        .launch_with(
            m,
            name,
            Dim3::x(ctas),
            Dim3::x(threads),
            0,
            &[Arg::Ptr(buf)],
            opts,
            hooks,
            &mut RandomScheduler::new(seed),
        )
        .expect("launch");
    let mut out = vec![0u8; bytes];
    dev.copy_from(buf, &mut out).expect("copy");
    (r, out)
}

/// `model` at `p` with `seed`, without a trace (runs compared for equality).
fn untraced(model: Model, p: f64, seed: u64) -> BufferConfig {
    let mut c = BufferConfig::new(model, p, seed);
    c.trace = false;
    c
}

/// One launch of `MP` (4 CTAs of 32 threads) under `hooks`: the result and the 256-byte
/// buffer.
fn run<H: Hooks>(hooks: &mut H, seed: u64) -> (LaunchResult, Vec<u8>) {
    launch(hooks, seed, ("mp", MP), (4, 32, 256))
}

/// Runs `model` at `p` for `seeds` seeds with and without parking, checks that each
/// pair is the same execution (result, memory, the model's statistics and trace), and
/// returns the data values the readers saw and the parked steps in all.
fn both(model: Model, p: f64, seeds: u64) -> (BTreeSet<u32>, u64) {
    let mut seen = BTreeSet::new();
    let mut parked = 0;
    for seed in 0..seeds {
        let cfg = || untraced(model, p, seed);
        let mut a = WriteBuffers::new(cfg());
        // Parking refused, the rest (plain loads included) as in `a`.
        let mut b = Forward::new(WriteBuffers::new(cfg()), false, true);
        let (ra, ma) = run(&mut a, seed);
        let (rb, mb) = run(&mut b, seed);
        assert_eq!(rb.stats.parked_steps, 0);
        let mut ra2 = ra.clone();
        ra2.stats.parked_steps = 0;
        assert_eq!(ra2, rb, "{} seed {seed}", model.name());
        assert_eq!(ma, mb, "{} seed {seed}", model.name());
        assert_eq!(
            format!("{:?}", a.stats()),
            format!("{:?}", b.inner.stats()),
            "{} seed {seed}",
            model.name()
        );
        assert!(ra.outcome.is_completed(), "{:?}", ra.outcome);
        assert_eq!(u32::from_le_bytes(ma[0..4].try_into().unwrap()), 1);
        for c in 1..4 {
            let i = 4 * (16 + c);
            seen.insert(u32::from_le_bytes(ma[i..i + 4].try_into().unwrap()));
        }
        parked += ra.stats.parked_steps;
    }
    (seen, parked)
}

/// Under the buffering models at `p_w = 1` both stores wait until the liveness rule drains
/// one at random while the readers spin, parked. When the flag drains first, a reader
/// must re-read it after that drain — woken by it — to reach the outcome that shows the
/// missing fence (flag 1, data 0); when the data drains first, it must stay parked
/// through a drain that does not concern it and wake for the next. Both outcomes occur,
/// and every execution is the one it is without parking.
#[test]
fn buffering_models_park_and_keep_both_outcomes() {
    for model in [Model::Bugaroo, Model::Scoped] {
        let (seen, parked) = both(model, 1.0, 60);
        assert_eq!(seen, BTreeSet::from([0, 1]), "{}", model.name());
        assert!(parked > 1000, "{}: {parked}", model.name());
    }
}

/// `sc` parks too (plain memory), and its only outcome stays the only one.
#[test]
fn sc_parks_with_its_single_outcome() {
    let (seen, parked) = both(Model::Sc, 1.0, 20);
    assert_eq!(seen, BTreeSet::from([1]));
    assert!(parked > 0);
}

/// `weak` is never parked (a load counts itself and may draw a seeded choice): its
/// readers pick among the flag's values until the liveness rule makes them read the
/// newest, and the stale data outcome still occurs.
#[test]
fn weak_is_not_parked_and_keeps_its_outcomes() {
    let (seen, parked) = both(Model::Weak, 0.5, 60);
    assert_eq!(parked, 0);
    assert!(seen.contains(&1), "{seen:?}");
}

/// A chain of CTAs: thread 0 of CTA `c` spins on CTA `c - 1`'s flag, then stores its data,
/// `membar.cta`, a CTA-local flag, `membar.cta`, and its own flag; thread 32 of the CTA (the
/// second warp's lane 0) spins on the local flag and copies the data. The other threads
/// store to slots of their own (one 8-byte block each), and those of odd CTAs then
/// `membar.cta` (under `scoped` their entries move to the CTA's overlay). Memory: flags at
/// `8c`, local flags at `128 + 8c`, data at `256 + 8c`, copies at `512 + 8c`, slots from
/// 1024.
const CHAIN: &str = r#"
.visible .entry chain(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mul.wide.u32 %rd3, %r3, 8;
    add.s64 %rd4, %rd2, %rd3;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra LEAD;
    setp.eq.u32 %p1, %r2, 32;
    @%p1 bra LOCAL;
    mad.lo.u32 %r4, %r3, 64, %r2;
    mul.wide.u32 %rd5, %r4, 8;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6+1024], %r2;
    st.global.u32 [%rd6+1028], %r3;
    and.b32 %r5, %r3, 1;
    setp.eq.u32 %p2, %r5, 0;
    @%p2 bra DONE;
    membar.cta;
    bra.uni DONE;
LEAD:
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra PUBLISH;
WAIT:
    ld.volatile.global.u32 %r6, [%rd4+-8];
    setp.eq.u32 %p3, %r6, 0;
    @%p3 bra WAIT;
PUBLISH:
    st.global.u32 [%rd4+256], %r3;
    membar.cta;
    st.volatile.global.u32 [%rd4+128], 1;
    membar.cta;
    st.volatile.global.u32 [%rd4], 1;
    bra.uni DONE;
LOCAL:
    ld.volatile.global.u32 %r7, [%rd4+128];
    setp.eq.u32 %p3, %r7, 0;
    @%p3 bra LOCAL;
    ld.global.u32 %r8, [%rd4+256];
    st.global.u32 [%rd4+512], %r8;
DONE:
    ret;
}
"#;

/// One launch of `CHAIN` (8 CTAs of 64 threads) under `hooks`: the result and memory.
fn run_chain<H: Hooks>(hooks: &mut H, seed: u64) -> (LaunchResult, Vec<u8>) {
    launch(hooks, seed, ("chain", CHAIN), (8, 64, 5120))
}

/// Wakes by address: with hooks that name the blocks of their changes, a drain wakes only
/// the parked warps that read one of its blocks. Every execution of `CHAIN` — spinners
/// on other CTAs' flags (published through memory) and on a CTA-local flag (published
/// through the CTA's overlay under `scoped`), while the liveness rule drains other
/// threads' slots one at a time — is the one it is without parking, and the one it is
/// when every change wakes every parked warp; and the spinners stay parked through drains
/// of blocks they do not read (a quarter of the steps interpreted with wakes for all, or
/// fewer).
#[test]
fn changes_by_address_wake_only_their_readers() {
    for model in [Model::Bugaroo, Model::Scoped] {
        let (mut by_address, mut for_all) = (0, 0);
        for seed in 0..12 {
            let cfg = || untraced(model, 1.0, seed);
            let mut a = WriteBuffers::new(cfg());
            let mut b = Forward::new(WriteBuffers::new(cfg()), true, true);
            b.shared = true;
            let mut c = Forward::new(WriteBuffers::new(cfg()), false, true);
            let (ra, ma) = run_chain(&mut a, seed);
            let (rb, mb) = run_chain(&mut b, seed);
            let (rc, mc) = run_chain(&mut c, seed);
            let what = format!("{} seed {seed}", model.name());
            assert!(ra.outcome.is_completed(), "{what}: {:?}", ra.outcome);
            for k in 0..8 {
                let flag = u32::from_le_bytes(ma[8 * k..8 * k + 4].try_into().unwrap());
                assert_eq!(flag, 1, "{what}: flag {k}");
            }
            assert_eq!(rc.stats.parked_steps, 0);
            // (Steps interpreted: those of the spinners are the wakes.)
            by_address += ra.stats.steps - ra.stats.parked_steps;
            for_all += rb.stats.steps - rb.stats.parked_steps;
            for (r, m, h) in [(ra, ma, a.stats()), (rb, mb, b.inner.stats())] {
                let mut r = r;
                r.stats.parked_steps = 0;
                assert_eq!(r, rc, "{what}");
                assert_eq!(m, mc, "{what}");
                assert_eq!(format!("{h:?}"), format!("{:?}", c.inner.stats()), "{what}");
            }
        }
        eprintln!(
            "{}: steps interpreted with wakes by address {by_address}, for all {for_all}",
            model.name()
        );
        assert!(
            by_address * 4 < for_all,
            "{}: steps interpreted with wakes by address {by_address}, for all {for_all}",
            model.name()
        );
    }
}

/// Thread 0 of CTA 0 stores a flag (buffered at `p_w = 1` until it exits after a long
/// loop); thread 0 of every other CTA spins on it; threads 32 and up of every CTA loop
/// for a time that grows with their thread and CTA numbers, then exit, storing nothing.
const EXITS: &str = r#"
.visible .entry exits(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ge.u32 %p1, %r2, 32;
    @%p1 bra WORK;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    st.volatile.global.u32 [%rd2], 1;
    mov.u32 %r5, 0;
WLOOP:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, 3000;
    @%p2 bra WLOOP;
    bra.uni DONE;
READER:
    ld.volatile.global.u32 %r6, [%rd2];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra READER;
    bra.uni DONE;
WORK:
    mad.lo.u32 %r7, %r2, 4, %r3;
    mov.u32 %r5, 0;
LOOP:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r7;
    @%p2 bra LOOP;
DONE:
    ret;
}
"#;

/// Exits that drain nothing wake no parked warp, under hooks that name their changes:
/// the spinners of `EXITS` (15 CTAs) stay parked while the other CTAs' 48 worker warps
/// exit one after another, and each execution is the one it is without parking. (Every
/// exit woke every parked warp before: on CUB's single-pass scan under `bugaroo`,
/// re-parking the look-back warps after each tile's exit was most of the launch.)
#[test]
fn exits_that_drain_nothing_wake_no_parked_warp() {
    for model in [Model::Bugaroo, Model::Scoped] {
        for seed in 0..6 {
            let cfg = || untraced(model, 1.0, seed);
            let mut a = Forward::new(WriteBuffers::new(cfg()), true, false);
            a.shared = true;
            a.named = true;
            let mut c = Forward::new(WriteBuffers::new(cfg()), false, false);
            let (ra, ma) = launch(&mut a, seed, ("exits", EXITS), (16, 128, 64));
            let (rc, mc) = launch(&mut c, seed, ("exits", EXITS), (16, 128, 64));
            let what = format!("{} seed {seed}", model.name());
            assert!(ra.outcome.is_completed(), "{what}: {:?}", ra.outcome);
            assert!(ra.stats.parked_steps > 0, "{what}");
            let mut r = ra.clone();
            r.stats.parked_steps = 0;
            assert_eq!(r, rc, "{what}");
            assert_eq!(ma, mc, "{what}");
            // Interpreted spin turns: the probes and the turn after the flag's drain, a
            // few per spinner; one re-probe per spinner and exit would be over 700.
            let (parked, unparked) = (a.loads.get(), c.loads.get());
            assert!(
                parked <= 15 * 12,
                "{what}: {parked} spin loads interpreted with parking, {unparked} without"
            );
        }
    }
}

/// `LaunchOptions::quick_stalls`: once every runnable warp is parked the liveness rule
/// drains at once, and again while a drain wakes no parked warp. On `CHAIN` (spinners on
/// flags that wait behind about a thousand buffered slot stores at `p_w = 1`) every
/// execution still completes with every flag and copy right, each replays from its seed,
/// and the steps taken fall to a fraction; on `MP` both outcomes are still reached — the
/// flag drained before the data (a reader woken by that drain reads stale data) and
/// after it (the data's drain woke no one, the flag's came at once).
#[test]
fn quick_stalls_skip_parked_waits_and_keep_the_outcomes() {
    let quick = LaunchOptions {
        quick_stalls: true,
        ..LaunchOptions::default()
    };
    for model in [Model::Bugaroo, Model::Scoped] {
        let cfg = |seed| {
            let mut c = BufferConfig::new(model, 1.0, seed);
            c.trace = false;
            c
        };
        let (mut steps_quick, mut steps_plain, mut repeats, mut quick_stalls) = (0, 0, 0, 0);
        for seed in 0..12 {
            let what = format!("{} seed {seed}", model.name());
            let shape = (8, 64, 5120);
            let (rq, mq) = launch_with(
                &mut WriteBuffers::new(cfg(seed)),
                seed,
                ("chain", CHAIN),
                shape,
                quick,
            );
            let (rq2, mq2) = launch_with(
                &mut WriteBuffers::new(cfg(seed)),
                seed,
                ("chain", CHAIN),
                shape,
                quick,
            );
            assert_eq!((&rq, &mq), (&rq2, &mq2), "{what}: replay");
            let (rp, mp) = run_chain(&mut WriteBuffers::new(cfg(seed)), seed);
            assert_eq!(rp.stats.stall_repeats + rp.stats.quick_stalls, 0, "{what}");
            for (r, m) in [(&rq, &mq), (&rp, &mp)] {
                assert!(r.outcome.is_completed(), "{what}: {:?}", r.outcome);
                for k in 0..8 {
                    let at = |o: usize| u32::from_le_bytes(m[o..o + 4].try_into().unwrap());
                    assert_eq!(at(8 * k), 1, "{what}: flag {k}");
                    assert_eq!(at(512 + 8 * k), k as u32, "{what}: copy {k}");
                }
            }
            steps_quick += rq.stats.steps;
            steps_plain += rp.stats.steps;
            repeats += rq.stats.stall_repeats;
            quick_stalls += rq.stats.quick_stalls;
        }
        eprintln!(
            "{}: steps with quick stalls {steps_quick}, without {steps_plain}, \
             repeats {repeats}, stalls declared at once {quick_stalls}",
            model.name()
        );
        assert!(repeats > 0 && quick_stalls > 0, "{}", model.name());
        assert!(
            steps_quick * 3 < steps_plain,
            "{}: steps with quick stalls {steps_quick}, without {steps_plain}",
            model.name()
        );
        let mut seen = BTreeSet::new();
        for seed in 0..60 {
            let (r, m) = launch_with(
                &mut WriteBuffers::new(cfg(seed)),
                seed,
                ("mp", MP),
                (4, 32, 256),
                quick,
            );
            assert!(r.outcome.is_completed(), "{:?}", r.outcome);
            for c in 1..4 {
                let i = 4 * (16 + c);
                seen.insert(u32::from_le_bytes(m[i..i + 4].try_into().unwrap()));
            }
        }
        assert_eq!(seen, BTreeSet::from([0, 1]), "{}", model.name());
    }
}

/// Launches `kernel` (4 CTAs of 32 threads) under `bugaroo` and `scoped` at `p_w = 1` for
/// six seeds, with and without quick stalls; each must end in the livelock verdict, not
/// a timeout. Calls `check` with each result and whether the option was on.
fn assert_hang_verdict(kernel: (&str, &str), check: impl Fn(&LaunchResult, bool, &str)) {
    for model in [Model::Bugaroo, Model::Scoped] {
        for seed in 0..6 {
            for quick_stalls in [false, true] {
                let opts = LaunchOptions {
                    quick_stalls,
                    ..LaunchOptions::default()
                };
                let mut h = WriteBuffers::new(BufferConfig::new(model, 1.0, seed));
                let (r, _) = launch_with(&mut h, seed, kernel, (4, 32, 256), opts);
                let what = format!("{} seed {seed} quick {quick_stalls}", model.name());
                assert!(
                    matches!(r.outcome, LaunchOutcome::Deadlock(_)),
                    "{what}: {:?}",
                    r.outcome
                );
                check(&r, quick_stalls, &what);
            }
        }
    }
}

/// With quick stalls parked warps are not picked, and a hang is still called one: `MP`
/// without its flag store — the readers spin forever once the data has drained — ends
/// in the livelock verdict, with and without the option, not in a timeout.
#[test]
fn quick_stalls_keep_the_hang_verdict() {
    let hang = MP.replace("    st.volatile.global.u32 [%rd2], 1;\n", "");
    assert_ne!(hang, MP);
    assert_hang_verdict(("mp", &hang), |_, _, _| {});
}

/// A hang where some warps cannot be parked: in CTA 0 lanes 0 and 1 spin on two flags in
/// two loops (two groups of one warp: never parked), in the other CTAs lanes 0 and 1
/// store, then spin together on a third flag (parked). No flag is ever set: the verdict
/// is still the livelock one (the unparked warp cycles, the parked ones are not picked).
const HANG2: &str = r#"
.visible .entry hang2(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.gt.u32 %p1, %r2, 1;
    @%p1 bra DONE;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra OTHER;
    setp.eq.u32 %p1, %r2, 1;
    @%p1 bra B;
A:
    ld.volatile.global.u32 %r6, [%rd2];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra A;
    bra.uni DONE;
B:
    ld.volatile.global.u32 %r7, [%rd2+8];
    setp.eq.u32 %p2, %r7, 0;
    @%p2 bra B;
    bra.uni DONE;
OTHER:
    mad.lo.u32 %r4, %r3, 2, %r2;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+64], %r3;
C:
    ld.volatile.global.u32 %r8, [%rd2+16];
    setp.eq.u32 %p2, %r8, 0;
    @%p2 bra C;
DONE:
    ret;
}
"#;

#[test]
fn quick_stalls_keep_the_hang_verdict_with_unparked_spinners() {
    // (Three of the four spinning warps are parked: without the option they take most
    // steps, applied; with it they are not picked.)
    assert_hang_verdict(("hang2", HANG2), |r, quick_stalls, what| {
        assert_eq!(
            r.stats.parked_steps * 2 < r.stats.steps,
            quick_stalls,
            "{what}: {:?}",
            r.stats
        );
    });
}

/// A lock that is never released: thread 0 of every CTA spins on `atom.cas` until it
/// takes `buf[0]`; the first taker exits holding it. The spinners' failed CASes change
/// nothing, so they are no progress: under every model the launch ends in the livelock
/// verdict. (Every atomic counted as progress before: under `weak` the stall rule never
/// fired and the launch ran until its fuel or wall clock ran out — here a Timeout.)
const NO_UNLOCK: &str = r#"
.visible .entry no_unlock(.param .u64 buf)
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
    atom.global.cas.b32 %r6, [%rd2], 0, 1;
    setp.ne.u32 %p2, %r6, 0;
    @%p2 bra SPIN;
    fence.sc.gpu;
    ld.global.u32 %r7, [%rd2+8];
    add.u32 %r7, %r7, 1;
    st.global.u32 [%rd2+8], %r7;
DONE:
    ret;
}
"#;

#[test]
fn failed_cas_spins_are_no_progress_under_every_model() {
    let opts = LaunchOptions {
        fuel: 20_000_000,
        ..LaunchOptions::default()
    };
    let kernel = ("no_unlock", NO_UNLOCK);
    for seed in 0..4 {
        let (r, _) = launch_with(&mut NoHooks, seed, kernel, (4, 32, 256), opts);
        assert!(
            matches!(r.outcome, LaunchOutcome::Deadlock(_)),
            "sc seed {seed}: {:?}",
            r.outcome
        );
        let mut weak =
            fencehound_handlers::WeakHooks::new(BufferConfig::new(Model::Weak, 1.0, seed));
        let (r, _) = launch_with(&mut weak, seed, kernel, (4, 32, 256), opts);
        assert!(
            matches!(r.outcome, LaunchOutcome::Deadlock(_)),
            "weak seed {seed}: {:?}",
            r.outcome
        );
        for model in [Model::Bugaroo, Model::Scoped] {
            let mut h = WriteBuffers::new(BufferConfig::new(model, 1.0, seed));
            let (r, _) = launch_with(&mut h, seed, kernel, (4, 32, 256), opts);
            assert!(
                matches!(r.outcome, LaunchOutcome::Deadlock(_)),
                "{} seed {seed}: {:?}",
                model.name(),
                r.outcome
            );
        }
    }
}
