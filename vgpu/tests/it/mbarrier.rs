//! `mbarrier`, bulk copies, `elect.sync` and vector atomics (sm_80/sm_90 forms) in
//! hand-written PTX, one form per step, against the PTX ISA's semantics: each step's
//! result is stored, so a wrong phase, count or token shows as the word it got wrong.

use fencehound_vgpu::*;

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `kernel` of `body` on one CTA of `threads` with one `.u64` argument: a zeroed
/// output buffer of `words` words (`init` written first), returned after the launch.
fn run(
    body: &str,
    kernel: &str,
    threads: u32,
    words: usize,
    init: &[u32],
) -> (Vec<u32>, LaunchOutcome) {
    let src = format!("{HEAD}{body}");
    let m = fencehound_ptx::parse("mbarrier.ptx", &src).expect("parse");
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap_or_else(|e| panic!("{e}"));
    let out = dev.alloc(4 * words as u64).unwrap();
    let mut bytes = vec![0u8; 4 * words];
    for (i, v) in init.iter().enumerate() {
        bytes[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    dev.copy_to(out, &bytes).unwrap();
    let r = dev
        .launch(
            id,
            kernel,
            Dim3::x(1),
            Dim3::x(threads),
            0,
            &[Arg::Ptr(out)],
        )
        .unwrap();
    dev.copy_from(out, &mut bytes).unwrap();
    let words = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (words, r.outcome)
}

#[test]
fn every_mbarrier_form_steps_the_phase_as_the_isa_says() {
    let body = r#"
.visible .entry steps(.param .u64 out)
{
    .reg .pred %p<9>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 buf[16];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mbarrier.init.shared.b64 [bar], 3;
    mbarrier.arrive.shared.b64 %rd2, [bar];
    mbarrier.pending_count.b64 %r1, %rd2;
    st.global.u32 [%rd1], %r1;
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;
    selp.u32 %r2, 1, 0, %p1;
    st.global.u32 [%rd1+4], %r2;
    mbarrier.arrive.noComplete.shared.b64 %rd3, [bar], 1;
    mbarrier.arrive_drop.shared::cta.b64 %rd4, [bar];
    mbarrier.test_wait.acquire.cta.shared.b64 %p2, [bar], %rd2;
    selp.u32 %r2, 1, 0, %p2;
    st.global.u32 [%rd1+8], %r2;
    mbarrier.test_wait.parity.shared.b64 %p3, [bar], 0;
    selp.u32 %r2, 1, 0, %p3;
    st.global.u32 [%rd1+12], %r2;
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 1, 1000;
    selp.u32 %r2, 1, 0, %p4;
    st.global.u32 [%rd1+16], %r2;
    // Phase 1 expects 2 arrivals (one was dropped) and 16 transaction bytes.
    mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 16;
    mbarrier.arrive.shared.b64 %rd5, [bar], 2;
    mbarrier.test_wait.shared.b64 %p5, [bar], %rd5;
    selp.u32 %r2, 1, 0, %p5;
    st.global.u32 [%rd1+20], %r2;
    mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 16;
    mbarrier.try_wait.shared::cta.b64 %p6, [bar], %rd5;
    selp.u32 %r2, 1, 0, %p6;
    st.global.u32 [%rd1+24], %r2;
    // Phase 2: a cp.async arrives for the thread once its copy is done (.noinc), then
    // the thread itself.
    cp.async.ca.shared.global [buf], [%rd1+60], 4;
    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];
    mbarrier.arrive.release.cta.shared.b64 %rd6, [bar];
    mbarrier.test_wait.shared.b64 %p7, [bar], %rd6;
    selp.u32 %r2, 1, 0, %p7;
    st.global.u32 [%rd1+28], %r2;
    ld.shared.u32 %r3, [buf];
    st.global.u32 [%rd1+32], %r3;
    // Parity 1 names the current phase (3: phases 0, 1, 2 are complete): not complete.
    mbarrier.test_wait.parity.shared.b64 %p8, [bar], 1;
    selp.u32 %r2, 1, 0, %p8;
    st.global.u32 [%rd1+36], %r2;
    mbarrier.inval.shared.b64 [bar];
    ret;
}
"#;
    let mut init = [0u32; 16];
    init[15] = 77;
    let (w, outcome) = run(body, "steps", 1, 16, &init);
    assert!(outcome.is_completed(), "{outcome:?}");
    // Pending after the first arrival (2); phase 0 not complete, then complete after the
    // dropped arrival; parity 0 complete, parity 1 (phase 1) not; arrivals done but bytes
    // outstanding: not complete; bytes in: complete; the cp.async arrival and the
    // thread's: complete, with the copied word (77) in place; parity 1 is phase 3 now.
    assert_eq!(&w[..10], &[2, 0, 1, 1, 0, 0, 1, 1, 77, 0], "{w:?}");
}

#[test]
fn bulk_copy_waits_for_the_barrier_and_lands_before_its_phase_completes() {
    let body = r#"
.visible .entry bulk(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 tile[64];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared.b64 [bar], 32;
SYNC:
    bar.sync 0;
    // One elected lane copies 64 bytes (words 16..31 of out) into the tile.
    elect.sync %r2|%p2, 0xffffffff;
    @!%p2 bra ARRIVE;
    add.u64 %rd2, %rd1, 64;
    mov.u32 %r3, 64;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd2], %r3, [bar];
    mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], %r3;
ARRIVE:
    mbarrier.arrive.shared::cta.b64 %rd3, [bar];
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p1, [bar], %rd3;
    @!%p1 bra WAIT;
    // Thread t stores the tile's word 15 - t (t < 16) and the elected lane's id.
    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra DONE;
    sub.u32 %r4, 15, %r1;
    shl.b32 %r4, %r4, 2;
    mov.u32 %r5, tile;
    add.u32 %r5, %r5, %r4;
    ld.shared.u32 %r6, [%r5];
    mul.wide.u32 %rd4, %r1, 4;
    add.u64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r6;
DONE:
    st.global.u32 [%rd1+128], %r2;
    ret;
}
"#;
    let init: Vec<u32> = (0..16).map(|_| 0).chain((0..16).map(|i| 100 + i)).collect();
    let (w, outcome) = run(body, "bulk", 32, 33, &init);
    assert!(outcome.is_completed(), "{outcome:?}");
    let want: Vec<u32> = (0..16).map(|t| 100 + 15 - t).collect();
    assert_eq!(&w[..16], &want[..], "{w:?}");
    assert_eq!(w[32], 0, "the elected lane is the mask's lowest");
}

#[test]
fn undefined_mbarrier_uses_fault() {
    for (what, op) in [
        (
            "arrive before init",
            "mbarrier.arrive.shared.b64 %rd2, [bar];",
        ),
        (
            "wait before init",
            "mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;",
        ),
        (
            "over-arrival",
            "mbarrier.init.shared.b64 [bar], 1;\n    mbarrier.arrive.shared.b64 %rd2, [bar], 2;",
        ),
        ("init count 0", "mbarrier.init.shared.b64 [bar], 0;"),
    ] {
        let body = format!(
            ".visible .entry bad(.param .u64 out)\n{{\n    .reg .pred %p<2>;\n    .reg .b64 %rd<3>;\n    \
             .shared .align 8 .b64 bar;\n    mov.u64 %rd2, 0;\n    {op}\n    ret;\n}}\n"
        );
        let (_, outcome) = run(&body, "bad", 1, 1, &[]);
        match outcome {
            LaunchOutcome::Fault(f) => {
                assert!(format!("{f:?}").contains("mbarrier"), "{what}: {f:?}")
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn vector_atomics_are_one_atomic_per_element() {
    let body = r#"
.visible .entry vec(.param .u64 out)
{
    .reg .f32 %f<9>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f40000000;
    mov.f32 %f3, 0f40400000;
    mov.f32 %f4, 0f40800000;
    red.global.add.v2.f32 [%rd1], {%f1, %f2};
    atom.global.add.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1+16], {%f1, %f2, %f3, %f4};
    ret;
}
"#;
    let (w, outcome) = run(body, "vec", 32, 8, &[]);
    assert!(outcome.is_completed(), "{outcome:?}");
    let f: Vec<f32> = w.iter().map(|&x| f32::from_bits(x)).collect();
    assert_eq!(&f[..2], &[32.0, 64.0]);
    assert_eq!(&f[4..8], &[32.0, 64.0, 96.0, 128.0]);
}
