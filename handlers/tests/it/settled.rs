//! `Hooks::settled` of the write buffers: once a barrier has drained a CTA's buffers and
//! no thread of it can write shared memory before its next barrier, its shared loads run
//! without a scheduling decision (`fencehound_vgpu`'s `unwritten` module) — and not while
//! a store of the CTA still waits in a buffer. `weak` takes part too: a shared load's
//! possible values stop depending on the schedule once the CTA can no longer write
//! shared memory before its barrier.

use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::*;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// One CTA of 64 threads: each stores `tid` to `s[tid]` (and, with `GLOBAL`, to
/// `out[64 + tid]`), `bar.sync 0`, then sums `s[0]`, `s[1]`, `s[2]`, `s[63 - tid]` into
/// `out[tid]`.
const TILE: &str = r#"
.visible .entry tile(.param .u64 out)
{
    .shared .align 4 .b8 s[256];
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.u32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    GLOBAL
    bar.sync 0;
    ld.shared.u32 %r5, [s];
    ld.shared.u32 %r6, [s+4];
    ld.shared.u32 %r7, [s+8];
    sub.u32 %r9, 252, %r2;
    add.u32 %r10, %r3, %r9;
    ld.shared.u32 %r11, [%r10];
    add.u32 %r12, %r5, %r6;
    add.u32 %r12, %r12, %r7;
    add.u32 %r12, %r12, %r11;
    st.global.u32 [%rd3], %r12;
    ret;
}
"#;

fn run(global_store: bool, model: Model, seed: u64) -> (LaunchResult, Vec<u32>) {
    let (r, out, _) = run_hooks(global_store, model, seed);
    (r, out)
}

fn run_hooks(
    global_store: bool,
    model: Model,
    seed: u64,
) -> (LaunchResult, Vec<u32>, WriteBuffers) {
    let src = TILE.replace(
        "GLOBAL",
        if global_store {
            "st.global.u32 [%rd3+256], %r1;"
        } else {
            ""
        },
    );
    let module = fencehound_ptx::parse("tile", &format!("{HEADER}{src}")).unwrap();
    let mut dev = Device::new();
    let m = dev.load_module(&module).unwrap();
    let o = dev.alloc(512).unwrap();
    let mut hooks = WriteBuffers::new(BufferConfig::new(model, 1.0, seed));
    let r = dev
        .launch_with(
            m,
            "tile",
            Dim3::x(1),
            Dim3::x(64),
            0,
            &[Arg::Ptr(o)],
            LaunchOptions {
                reduce_unwritten: true,
                ..Default::default()
            },
            &mut hooks,
            &mut RandomScheduler::new(seed),
        )
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut bytes = vec![0u8; 256];
    dev.copy_from(o, &mut bytes).unwrap();
    let out = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (r, out, hooks)
}

#[test]
fn shared_loads_after_a_draining_barrier_take_no_decision() {
    for model in [Model::Bugaroo, Model::Scoped] {
        for seed in 0..4 {
            let (r, out) = run(false, model, seed);
            for (t, v) in out.iter().enumerate() {
                assert_eq!(*v, 3 + (63 - t as u32), "{} out[{t}]", model.name());
            }
            // Every store buffered (p_w = 1), the barrier drained them all: settled.
            assert!(
                r.stats.unwritten_loads >= 4,
                "{} {:?}",
                model.name(),
                r.stats
            );
        }
    }
    // Under `scoped` a CTA barrier leaves the CTA's global stores in its overlay: they can
    // still drain later, so the CTA is not settled and every shared load keeps its
    // decision. (Under `bugaroo` the barrier drains them too.)
    for seed in 0..4 {
        let (r, _) = run(true, Model::Scoped, seed);
        assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
        let (r, _) = run(true, Model::Bugaroo, seed);
        assert!(r.stats.unwritten_loads >= 4, "{:?}", r.stats);
    }
}

/// `weak`: once no thread of the CTA can write shared memory before its next barrier, the
/// values a shared load may read are fixed (its choice depends on its own thread only), so
/// the loads skip their decisions; in this kernel's interval, with no shared write since
/// the barrier, they also skip the model (only the newest value is allowed) — and are
/// still counted as loads.
#[test]
fn weak_shared_loads_after_the_last_write_take_no_decision() {
    for global_store in [false, true] {
        for seed in 0..4 {
            let (r, out, hooks) = run_hooks(global_store, Model::Weak, seed);
            for (t, v) in out.iter().enumerate().take(64) {
                assert_eq!(*v, 3 + (63 - t as u32), "out[{t}]");
            }
            assert!(r.stats.unwritten_loads >= 4, "{:?}", r.stats);
            let weak = hooks.stats().weak.clone().expect("weak statistics");
            assert_eq!(weak.loads, 4 * 64, "{weak:?}");
            assert_eq!(weak.stale_reads, 0, "{weak:?}");
        }
    }
}
