//! Determinism fingerprint of the write buffers: runs small kernels under every model,
//! several `p_w` and seeds, with and without traces, and prints one hash of the final
//! memory, statistics and trace of every execution. Used to check that a performance
//! change to `buffers.rs` keeps the semantics identical: build and run it before and after
//! the change and compare the output (`cargo run --release -p fencehound-handlers
//! --example equivalence > before.txt`).

use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::{Arg, Device, Dim3, LaunchOptions, RandomScheduler};
use std::hash::{DefaultHasher, Hash, Hasher};

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Sub-word stores: each thread writes two bytes of its own 8-byte block and one byte of
/// a block shared with 7 other threads, then reads words back (partial overlaps), then
/// writes and re-reads a u64, with a block-scope fence in the middle.
const BYTES: &str = r#"
.visible .entry bytes(.param .u64 buf)
{
    .reg .pred %p<2>;
    .reg .b16 %h<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mul.wide.u32 %rd3, %r5, 8;
    add.s64 %rd4, %rd2, %rd3;
    cvt.u16.u32 %h1, %r5;
    st.global.u8 [%rd4], %h1;
    st.global.u8 [%rd4+3], %h1;
    cvt.u64.u32 %rd5, %r5;
    add.s64 %rd6, %rd2, 65536;
    add.s64 %rd6, %rd6, %rd5;
    st.global.u8 [%rd6], %h1;
    ld.global.u32 %r6, [%rd4];
    and.b64 %rd7, %rd6, -4;
    ld.global.u32 %r7, [%rd7];
    membar.cta;
    add.u32 %r8, %r6, %r7;
    st.global.u32 [%rd4+4], %r8;
    st.global.u8 [%rd4+1], %h1;
    ld.global.u64 %rd8, [%rd4];
    add.s64 %rd8, %rd8, 1;
    st.global.u64 [%rd4], %rd8;
    and.b32 %r9, %r2, 1;
    setp.eq.u32 %p1, %r9, 0;
    @%p1 bra SKIP;
    st.global.u8 [%rd6], %h1;
    ld.global.u8 %h2, [%rd6];
SKIP:
    ret;
}
"#;

/// Message passing across CTAs with flag polling (liveness drains), optional fence.
const MP: &str = r#"
.visible .entry mp(.param .u64 buf, .param .u32 fence)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r10, [fence];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    add.s64 %rd5, %rd4, 1024;
    add.s64 %rd6, %rd4, 2048;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra READER;
    add.u32 %r4, %r2, 100;
    st.global.u32 [%rd4], %r4;
    st.global.u32 [%rd4+512], %r4;
    setp.eq.u32 %p2, %r10, 0;
    @%p2 bra NOFENCE;
    setp.eq.u32 %p3, %r10, 1;
    @%p3 bra GL;
    membar.cta;
    bra.uni NOFENCE;
GL:
    membar.gl;
NOFENCE:
    st.volatile.global.u32 [%rd5], 1;
    ret;
READER:
    ld.volatile.global.u32 %r5, [%rd5];
    setp.eq.u32 %p2, %r5, 0;
    @%p2 bra READER;
    ld.global.u32 %r6, [%rd4];
    ld.global.u32 %r7, [%rd4+512];
    add.u32 %r6, %r6, %r7;
    st.global.u32 [%rd6], %r6;
    atom.global.add.u32 %r8, [%rd2+4000], %r6;
    ret;
}
"#;

/// A shared-memory tree reduction with barriers, then a global atomic per block.
const REDUCE: &str = r#"
.visible .entry reduce(.param .u64 buf)
{
    .reg .pred %p<3>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 sdata[256];
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r13, sdata;
    shl.b32 %r14, %r2, 2;
    add.u32 %r15, %r13, %r14;
    add.u32 %r11, %r2, %r3;
    st.shared.u32 [%r15], %r11;
    bar.sync 0;
    shr.u32 %r8, %r4, 1;
LEVEL:
    setp.ge.u32 %p2, %r2, %r8;
    @%p2 bra SKIP;
    shl.b32 %r16, %r8, 2;
    add.u32 %r17, %r15, %r16;
    ld.shared.u32 %r9, [%r17];
    ld.shared.u32 %r18, [%r15];
    add.u32 %r18, %r18, %r9;
    st.shared.u32 [%r15], %r18;
SKIP:
    bar.sync 0;
    shr.u32 %r8, %r8, 1;
    setp.ne.u32 %p2, %r8, 0;
    @%p2 bra LEVEL;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra DONE;
    ld.shared.u32 %r9, [%r13];
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd2, %rd4;
    st.global.u32 [%rd5], %r9;
    atom.global.add.u32 %r10, [%rd2+1000], %r9;
DONE:
    ret;
}
"#;

fn main() {
    let cases: [(&str, &str, u32, u32, Option<u32>); 6] = [
        ("bytes", BYTES, 4, 64, None),
        ("mp", MP, 2, 64, Some(0)),
        ("mp", MP, 2, 64, Some(1)),
        ("mp", MP, 2, 64, Some(2)),
        ("reduce", REDUCE, 4, 64, None),
        ("reduce", REDUCE, 1, 64, None),
    ];
    let mut all = DefaultHasher::new();
    for (kernel, src, blocks, threads, extra) in cases {
        let module = fencehound_ptx::parse(kernel, &format!("{HEADER}{src}")).expect("parse");
        for model in [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak] {
            for p in [0.3, 0.7, 1.0] {
                for trace in [false, true] {
                    let mut h = DefaultHasher::new();
                    for seed in 0..40u64 {
                        let mut dev = Device::new();
                        let m = dev.load_module(&module).expect("load");
                        let buf = dev.alloc(1 << 17).expect("alloc");
                        let mut args = vec![Arg::Ptr(buf)];
                        if let Some(x) = extra {
                            args.push(Arg::U32(x));
                        }
                        let mut cfg = BufferConfig::new(model, p, seed);
                        cfg.trace = trace;
                        cfg.capacity = 4;
                        let mut wb = WriteBuffers::new(cfg);
                        let r = dev
                            .launch_with(
                                m,
                                kernel,
                                Dim3::x(blocks),
                                Dim3::x(threads),
                                0,
                                &args,
                                LaunchOptions::default(),
                                &mut wb,
                                &mut RandomScheduler::new(seed),
                            )
                            .expect("launch");
                        format!("{:?}", r.outcome).hash(&mut h);
                        let mut out = vec![0u8; 1 << 17];
                        dev.copy_from(buf, &mut out).expect("copy");
                        out.hash(&mut h);
                        // Heap statistics depend on data-structure layout, not on
                        // semantics: left out, so layout changes can be checked too.
                        let mut st = wb.stats().clone();
                        if let Some(w) = st.weak.as_mut() {
                            w.peak_heap = 0;
                        }
                        format!("{st:?}").hash(&mut h);
                        format!("{:?}", wb.trace()).hash(&mut h);
                    }
                    let v = h.finish();
                    v.hash(&mut all);
                    println!(
                        "{kernel} {extra:?} {} p={p} trace={trace}: {v:016x}",
                        model.name()
                    );
                }
            }
        }
    }
    println!("all: {:016x}", all.finish());
}
