//! Spin parking under the models (the vgpu's `exec::livelock`): readers spinning on a flag
//! whose store waits in a buffer are parked until a drain; every execution must be the one
//! it is without parking, and the outcomes that need a parked reader to re-read after a
//! drain must still occur.

mod common;

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

/// One launch under `hooks`: the result and the 256-byte buffer.
fn run<H: Hooks>(hooks: &mut H, seed: u64) -> (LaunchResult, Vec<u8>) {
    let module = fencehound_ptx::parse("mp", &format!("{HEADER}{MP}")).expect("parse");
    let mut dev = Device::new();
    let m = dev.load_module(&module).expect("load");
    let buf = dev.alloc(256).expect("alloc");
    let r = dev
        .launch_with(
            m,
            "mp",
            Dim3::x(4),
            Dim3::x(32),
            0,
            &[Arg::Ptr(buf)],
            LaunchOptions::default(),
            hooks,
            &mut RandomScheduler::new(seed),
        )
        .expect("launch");
    let mut out = vec![0u8; 256];
    dev.copy_from(buf, &mut out).expect("copy");
    (r, out)
}

/// Runs `model` at `p` for `seeds` seeds with and without parking, checks that each
/// pair is the same execution (result, memory, the model's statistics and trace), and
/// returns the data values the readers saw and the parked steps in all.
fn both(model: Model, p: f64, seeds: u64) -> (BTreeSet<u32>, u64) {
    let mut seen = BTreeSet::new();
    let mut parked = 0;
    for seed in 0..seeds {
        let cfg = || {
            let mut c = BufferConfig::new(model, p, seed);
            c.trace = false;
            c
        };
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
