//! CTA-local scheduling (`LaunchOptions::cta_local`, `vgpu/src/exec/ctalocal.rs`): while
//! every runnable warp of the CTA that ran last is about to touch only its CTA, the next
//! pick is among that CTA's warps. These tests check that it happens, where it must not,
//! and that the outcomes of shared-memory races inside a CTA and of global hand-offs
//! between CTAs are the same sets with it as without.

use fencehound_vgpu::*;
use std::collections::BTreeSet;

use crate::common::{ptx_device, read_words, words_in};

/// Each CTA of 128 threads: every thread adds 1 to the shared word `s` with a plain load
/// and store (a lane-wide lost update inside each warp, and one between warps as they
/// interleave: 1 to 4 survive); after a barrier thread 0 stores `s` to `cnt[ctaid]`,
/// loads the global word `g` (a hand-off from another CTA, or 0) and stores what it
/// loaded to `seen[ctaid]`, then `ctaid + 1` to `g`.
const KERNEL: &str = r#"
.visible .entry k(.param .u64 g, .param .u64 cnt, .param .u64 seen)
{
    .shared .align 4 .b8 s[4];
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [g];
    ld.param.u64 %rd2, [cnt];
    ld.param.u64 %rd3, [seen];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    ld.volatile.shared.u32 %r4, [s];
    add.u32 %r4, %r4, 1;
    st.volatile.shared.u32 [s], %r4;
    bar.sync 0;
    @%p1 bra DONE;
    ld.volatile.shared.u32 %r5, [s];
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd2, %rd4;
    st.global.u32 [%rd5], %r5;
    ld.volatile.global.u32 %r3, [%rd1];
    add.s64 %rd6, %rd3, %rd4;
    st.global.u32 [%rd6], %r3;
    add.u32 %r6, %r2, 1;
    st.volatile.global.u32 [%rd1], %r6;
DONE:
    ret;
}
"#;

const CTAS: usize = 3;

/// One launch of `KERNEL` (three CTAs of 128 threads): the counts, the hand-offs seen,
/// and the launch's statistics.
fn launch<H: Hooks, S: Scheduler>(
    cta_local: bool,
    hooks: &mut H,
    sched: &mut S,
) -> (Vec<u32>, Vec<u32>, ExecStats) {
    let (mut dev, m) = ptx_device(KERNEL);
    let (g, cnt, seen) = (
        words_in(&mut dev, 1, &[]),
        words_in(&mut dev, CTAS, &[]),
        words_in(&mut dev, CTAS, &[]),
    );
    let r = dev
        .launch_with(
            m,
            "k",
            Dim3::x(CTAS as u32),
            Dim3::x(128),
            0,
            &[Arg::Ptr(g), Arg::Ptr(cnt), Arg::Ptr(seen)],
            LaunchOptions {
                cta_local,
                ..Default::default()
            },
            hooks,
            sched,
        )
        .expect("launch");
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    (
        read_words(&dev, cnt, CTAS),
        read_words(&dev, seen, CTAS),
        r.stats,
    )
}

/// Over `seeds` random schedules: every count any CTA ended with, every value a CTA's
/// thread 0 took from `g` (with the CTA: which CTAs can have run before it), and the
/// decisions made among one CTA's warps.
fn outcomes(cta_local: bool, seeds: u64) -> (BTreeSet<u32>, BTreeSet<(usize, u32)>, u64) {
    let (mut counts, mut handoffs, mut local) = (BTreeSet::new(), BTreeSet::new(), 0);
    for seed in 0..seeds {
        let (cnt, seen, stats) = launch(cta_local, &mut NoHooks, &mut RandomScheduler::new(seed));
        counts.extend(cnt);
        handoffs.extend(seen.into_iter().enumerate());
        local += stats.cta_local_picks;
    }
    (counts, handoffs, local)
}

#[test]
fn cta_local_picks_keep_the_outcome_sets() {
    let (counts_off, handoffs_off, local_off) = outcomes(false, 400);
    let (counts_on, handoffs_on, local_on) = outcomes(true, 400);
    assert_eq!(local_off, 0);
    assert!(local_on > 0, "no decision was made among one CTA's warps");
    // Four warps' lost updates: any of 1..=4 survives, with the reduction as without.
    let all: BTreeSet<u32> = (1..=4).collect();
    assert_eq!(counts_off, all);
    assert_eq!(counts_on, counts_off);
    // The hand-off through `g`: each CTA saw 0 or any other CTA's number, both ways.
    let want: BTreeSet<(usize, u32)> = (0..CTAS)
        .flat_map(|c| {
            std::iter::once((c, 0)).chain(
                (0..CTAS)
                    .filter(move |&d| d != c)
                    .map(move |d| (c, d as u32 + 1)),
            )
        })
        .collect();
    assert_eq!(handoffs_off, want);
    assert_eq!(handoffs_on, handoffs_off);
}

#[test]
fn cta_local_picks_only_where_allowed() {
    // Hooks that are not transparent (they may act at a barrier for global memory):
    // every decision is among all warps.
    struct Watching(u64);
    impl Hooks for Watching {
        fn barrier_arrive(&mut self, _mem: &mut Memory, _b: &Barrier) {
            self.0 += 1;
        }
    }
    let mut w = Watching(0);
    let (_, _, stats) = launch(true, &mut w, &mut RandomScheduler::new(1));
    assert!(w.0 > 0);
    assert_eq!(stats.cta_local_picks, 0);
    // Round-robin and PCT define their picks over all runnable warps.
    let (_, _, stats) = launch(true, &mut NoHooks, &mut RoundRobin::new(1));
    assert_eq!(stats.cta_local_picks, 0);
    let (_, _, stats) = launch(true, &mut NoHooks, &mut Pct::new(1, 3));
    assert_eq!(stats.cta_local_picks, 0);
    // The random scheduler under plain memory: most decisions after the hand-off's load
    // are the CTA's own.
    let (_, _, stats) = launch(true, &mut NoHooks, &mut RandomScheduler::new(1));
    assert!(stats.cta_local_picks > 0, "{stats:?}");
}

/// Two CTAs of 64 threads: in CTA 0 the second warp spins on a shared flag that nobody
/// sets (a bug); every other thread adds 1 to `out[ctaid]`.
const SPIN: &str = r#"
.visible .entry spin(.param .u64 out)
{
    .shared .align 4 .b8 flag[4];
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.eq.u32 %p1, %r2, 0;
    setp.ge.u32 %p2, %r1, 32;
    and.pred %p1, %p1, %p2;
    @!%p1 bra STORE;
WAIT:
    ld.volatile.shared.u32 %r3, [flag];
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra WAIT;
STORE:
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    atom.global.add.u32 %r4, [%rd3], 1;
    ret;
}
"#;

#[test]
fn a_cta_spinning_on_its_own_shared_memory_still_hangs_the_same_way() {
    for seed in 0..3 {
        let mut kinds = Vec::new();
        for cta_local in [false, true] {
            let (mut dev, m) = ptx_device(SPIN);
            let out = words_in(&mut dev, 2, &[]);
            let r = dev
                .launch_with(
                    m,
                    "spin",
                    Dim3::x(2),
                    Dim3::x(64),
                    0,
                    &[Arg::Ptr(out)],
                    LaunchOptions {
                        fuel: 20_000_000,
                        cta_local,
                        ..Default::default()
                    },
                    &mut NoHooks,
                    &mut RandomScheduler::new(seed),
                )
                .expect("launch");
            // CTA 1 finished its stores either way: the spin did not starve it.
            assert_eq!(
                read_words(&dev, out, 2),
                [32, 64],
                "seed {seed}, cta_local {cta_local}"
            );
            kinds.push(std::mem::discriminant(&r.outcome));
            assert!(!r.outcome.is_completed());
        }
        assert_eq!(kinds[0], kinds[1], "seed {seed}");
    }
}
