//! `Hooks::plain_loads`: a warp whose lanes' buffers are empty reads memory directly. That
//! must never change an execution: the same kernel, seed and model with the answer
//! forced to "no" (every load through `load`) gives the same result, memory, statistics
//! and trace — while the direct path is really taken.

use crate::common;

use common::forward::Forward;
use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::*;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Two CTAs of 64 threads. Each thread stores to a shared tile and to `buf[64 + g]`
/// (global), loads its neighbours' tile slots and `buf[g]` before the barrier (its own
/// stores still buffered: not plain; a lane reading its own slot is forwarded), then after
/// `bar.sync` (bugaroo: everything drained; scoped: CTA level, so CTA 0's global stores
/// wait in its overlay, while CTA 1 fences with `membar.gl` first and has none) sums the whole tile and `buf[0..64]`, stores again and reads back — plain
/// loads in between non-plain ones. Results go to `buf[192 + g]`.
const TILE: &str = r#"
.visible .entry tile(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mov.u32 %r5, s;
    shl.b32 %r6, %r1, 2;
    add.u32 %r7, %r5, %r6;
    add.u32 %r8, %r4, 7;
    st.shared.u32 [%r7], %r8;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+256], %r8;
    add.u32 %r9, %r1, 1;
    and.b32 %r9, %r9, 63;
    shl.b32 %r9, %r9, 2;
    add.u32 %r9, %r5, %r9;
    ld.shared.u32 %r10, [%r9];
    ld.shared.u32 %r11, [%r7];
    ld.global.u32 %r12, [%rd4];
    add.u32 %r20, %r10, %r11;
    add.u32 %r20, %r20, %r12;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra BAR;
    membar.gl;
BAR:
    bar.sync 0;
    mov.u32 %r13, 0;
LOOP:
    shl.b32 %r14, %r13, 2;
    add.u32 %r15, %r5, %r14;
    ld.shared.u32 %r16, [%r15];
    add.u32 %r20, %r20, %r16;
    cvt.u64.u32 %rd5, %r14;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.u32 %r17, [%rd6+256];
    add.u32 %r20, %r20, %r17;
    add.u32 %r13, %r13, 1;
    setp.lt.u32 %p1, %r13, 64;
    @%p1 bra LOOP;
    st.shared.u32 [%r7], %r20;
    ld.shared.u32 %r18, [%r9];
    add.u32 %r20, %r20, %r18;
    st.global.u32 [%rd4+768], %r20;
    ret;
}
"#;

fn run<H: Hooks>(hooks: &mut H, seed: u64) -> (LaunchResult, Vec<u8>) {
    let module = fencehound_ptx::parse("tile", &format!("{HEADER}{TILE}")).expect("parse");
    let mut dev = Device::new();
    let m = dev.load_module(&module).expect("load");
    let buf = dev.alloc(1280).expect("alloc");
    let init: Vec<u8> = (0..1280u32).map(|i| (i * 37 % 251) as u8).collect();
    dev.copy_to(buf, &init).expect("copy in");
    let r = dev
        .launch_with(
            m,
            "tile",
            Dim3::x(2),
            Dim3::x(64),
            0,
            &[Arg::Ptr(buf)],
            LaunchOptions::default(),
            hooks,
            &mut RandomScheduler::new(seed),
        )
        .expect("launch");
    let mut out = vec![0u8; 1280];
    dev.copy_from(buf, &mut out).expect("copy out");
    (r, out)
}

#[test]
fn plain_loads_change_no_execution() {
    for model in [Model::Bugaroo, Model::Scoped] {
        for p in [0.25, 0.5, 1.0] {
            let mut direct = 0;
            for seed in 0..12 {
                for trace in [false, true] {
                    let cfg = || {
                        let mut c = BufferConfig::new(model, p, seed);
                        c.trace = trace;
                        c
                    };
                    // `plain_loads` answered (and counted), and refused.
                    let mut a = Forward::new(WriteBuffers::new(cfg()), true, true);
                    let mut b = Forward::new(WriteBuffers::new(cfg()), true, false);
                    let (ra, ma) = run(&mut a, seed);
                    let (rb, mb) = run(&mut b, seed);
                    let what = format!("{} p={p} seed {seed} trace {trace}", model.name());
                    assert!(ra.outcome.is_completed(), "{what}: {:?}", ra.outcome);
                    assert_eq!(ra, rb, "{what}");
                    assert_eq!(ma, mb, "{what}");
                    assert_eq!(
                        format!("{:?}", a.inner.stats()),
                        format!("{:?}", b.inner.stats()),
                        "{what}"
                    );
                    assert_eq!(
                        format!("{:?}", a.inner.trace()),
                        format!("{:?}", b.inner.trace()),
                        "{what}"
                    );
                    if trace {
                        // A traced launch never reads directly (stale-load events).
                        assert_eq!(a.plain_yes.get(), 0, "{what}");
                    }
                    direct += a.plain_yes.get();
                }
            }
            assert!(
                direct > 0,
                "{} p={p}: the direct path was never taken",
                model.name()
            );
        }
    }
}

/// `weak`'s warp loads and stores first read every lane's block list (`WeakMemory::warm`,
/// so that their cache misses overlap). That must never change an execution: the same
/// kernel, seed and `p` with every access made alone (`Forward` does not pass
/// `load_warp`/`store_warp` on, so the defaults, one `load`/`store` per lane, run) gives
/// the same result, memory, statistics and trace — while the warm pass is really taken.
#[test]
fn weak_warp_loads_change_no_execution() {
    let mut warmed = 0;
    for p in [0.25, 0.5, 1.0] {
        for seed in 0..12 {
            for trace in [false, true] {
                let cfg = || {
                    let mut c = BufferConfig::new(Model::Weak, p, seed);
                    c.trace = trace;
                    c
                };
                let mut a = WriteBuffers::new(cfg());
                let mut b = Forward::new(WriteBuffers::new(cfg()), true, true);
                let (ra, ma) = run(&mut a, seed);
                let (rb, mb) = run(&mut b, seed);
                let what = format!("weak p={p} seed {seed} trace {trace}");
                assert!(ra.outcome.is_completed(), "{what}: {:?}", ra.outcome);
                assert_eq!(ra, rb, "{what}");
                assert_eq!(ma, mb, "{what}");
                assert_eq!(
                    format!("{:?}", a.stats()),
                    format!("{:?}", b.inner.stats()),
                    "{what}"
                );
                assert_eq!(
                    format!("{:?}", a.trace()),
                    format!("{:?}", b.inner.trace()),
                    "{what}"
                );
                let fencehound_handlers::ModelHooks::Weak(h) = &a else {
                    panic!("{what}: not the weak family");
                };
                warmed += h.warmed();
            }
        }
    }
    assert!(warmed > 0, "the warm pass was never taken");
}
