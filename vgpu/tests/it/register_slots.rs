//! Register slots shared by liveness (`regalloc`): values a lane reads are the ones the
//! PTX gives it, in each case where sharing a slot wrongly would change one — a guarded
//! write that keeps the old value in its false lanes, a register read before anything
//! writes it, values carried around a loop and across a call, and a `shfl` that reads
//! a lane that has exited (whose slot must still hold what that lane left there).

use fencehound_vgpu::*;

const HEAD: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Runs kernel `name` with 32 threads and an output buffer of `words` u32s; returns the
/// buffer and the kernel's (declared, compacted) register slot counts. The kernel is
/// `before` (other functions), then an entry whose prologue leaves the thread index in
/// `%r1` and `out + %r1 * stride` in `%rd4`, then `body`.
fn run(before: &str, name: &str, stride: u32, body: &str, words: usize) -> (Vec<u32>, u32, u32) {
    let src = format!(
        "{HEAD}{before}
.visible .entry {name}(.param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, {stride};
    add.s64 %rd4, %rd2, %rd3;
{body}
}}
"
    );
    let m = fencehound_ptx::parse("slots.ptx", &src).expect("parse");
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap_or_else(|e| panic!("{e}"));
    let f = dev
        .program(id)
        .and_then(|p| p.funcs.iter().find(|f| f.name == name))
        .map(|f| (f.declared_regs, f.nregs))
        .expect("kernel");
    let out = dev.alloc(4 * words as u64).unwrap();
    let r = dev
        .launch(id, name, Dim3::x(1), Dim3::x(32), 0, &[Arg::Ptr(out)])
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut b = vec![0u8; 4 * words];
    dev.copy_from(out, &mut b).unwrap();
    let v = b
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (v, f.0, f.1)
}

/// `@p mov %r2, 222` leaves lanes whose `p` is false with the 111 written before; a
/// temporary live between the two writes must not take `%r2`'s slot (it would if the
/// guarded write counted as ending `%r2`'s first value).
#[test]
fn guarded_write_keeps_the_old_value_in_false_lanes() {
    let body = r#"
    setp.lt.u32 %p1, %r1, 16;
    mov.u32 %r2, 111;
    add.u32 %r3, %r1, 1000;
    add.u32 %r4, %r3, %r3;
    @%p1 mov.u32 %r2, 222;
    add.u32 %r5, %r4, %r1;
    st.global.u32 [%rd4], %r2;
    st.global.u32 [%rd4+4], %r5;
    ret;
"#;
    let (out, declared, slots) = run("", "guarded", 8, body, 64);
    for l in 0..32u32 {
        let want = if l < 16 { 222 } else { 111 };
        assert_eq!(out[2 * l as usize], want, "lane {l}: %r2");
        assert_eq!(out[2 * l as usize + 1], 2 * (l + 1000) + l, "lane {l}: %r5");
    }
    assert!(slots < declared, "{slots} slots of {declared}");
}

/// `%r19` is never written; `%r7`, written after its only read, may share its slot.
const UNWRITTEN: &str = r#"
    add.u32 %r2, %r1, 7;
    mul.lo.u32 %r3, %r2, 3;
    xor.b32 %r4, %r3, 255;
    add.u32 %r5, %r4, %r2;
    sub.u32 %r6, %r5, 1;
    st.global.u32 [%rd4], %r6;
    add.u32 %r7, %r19, 5;
    st.global.u32 [%rd4+4], %r7;
    ret;
"#;

/// A register nothing writes reads 0 in a kernel, however many registers came and went
/// before the read.
#[test]
fn unwritten_register_reads_zero_after_others_died() {
    let body = UNWRITTEN;
    let (out, _, _) = run("", "unwritten", 8, body, 64);
    for l in 0..32u32 {
        let r2 = l + 7;
        let want = ((r2 * 3) ^ 255) + r2 - 1;
        assert_eq!(out[2 * l as usize], want, "lane {l}");
        assert_eq!(out[2 * l as usize + 1], 5, "lane {l}: unwritten %r19 + 5");
    }
}

/// A sum carried around a loop, with temporaries inside the body and a value defined
/// before the loop and read only after it.
#[test]
fn loop_carried_values() {
    let body = r#"
    mul.lo.u32 %r9, %r1, 100;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
$L_loop:
    add.u32 %r4, %r3, %r1;
    mul.lo.u32 %r5, %r4, 2;
    add.u32 %r2, %r2, %r5;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, 10;
    @%p1 bra $L_loop;
    add.u32 %r6, %r2, %r9;
    st.global.u32 [%rd4], %r6;
    ret;
"#;
    let (out, _, _) = run("", "looped", 4, body, 32);
    for l in 0..32u32 {
        let sum: u32 = (0..10).map(|i| 2 * (i + l)).sum();
        assert_eq!(out[l as usize], sum + 100 * l, "lane {l}");
    }
}

/// A device function with `.reg` parameters and returns (the callee's first slots, named
/// by number by the call), and caller values live across the call.
#[test]
fn values_across_a_call_with_register_parameters() {
    let before = r#"
.func (.reg .b32 %ret) add_mul(.reg .b32 %a, .reg .b32 %b)
{
    .reg .b32 %t<5>;
    add.u32 %t1, %a, %b;
    mul.lo.u32 %t2, %t1, 3;
    add.u32 %t3, %t2, 1;
    mov.u32 %ret, %t3;
    ret;
}
"#;
    let body = r#"
    add.u32 %r2, %r1, 5;
    mul.lo.u32 %r3, %r1, 7;
    call (%r4), add_mul, (%r2, %r1);
    add.u32 %r5, %r4, %r3;
    st.global.u32 [%rd4], %r5;
    st.global.u32 [%rd4+4], %r2;
    ret;
"#;
    let (out, _, _) = run(before, "caller", 8, body, 64);
    for l in 0..32u32 {
        let r4 = ((l + 5) + l) * 3 + 1;
        assert_eq!(out[2 * l as usize], r4 + 7 * l, "lane {l}");
        assert_eq!(
            out[2 * l as usize + 1],
            l + 5,
            "lane {l}: %r2 across the call"
        );
    }
}

/// Lanes 16–31 write `%r5`, then a value computed from it (after which `%r5` is dead on
/// their path), and exit; lanes 0–15 then `shfl` `%r5` from lane + 16. The interpreter
/// reads the exited lane's `%r5` slot (PTX leaves it undefined): that slot must still
/// hold that lane's `%r5`, not the later value, as it did with a slot per register.
#[test]
fn shfl_from_an_exited_lane_reads_its_register() {
    let body = r#"
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra $L_low;
    add.u32 %r5, %r1, 1000;
    st.global.u32 [%rd4], %r5;
    mul.lo.u32 %r6, %r5, 3;
    st.global.u32 [%rd4+4], %r6;
    exit;
$L_low:
    mov.u32 %r5, %r1;
    add.u32 %r7, %r1, 16;
    shfl.sync.idx.b32 %r8, %r5, %r7, 31, 65535;
    st.global.u32 [%rd4], %r8;
    ret;
"#;
    let (out, _, _) = run("", "shfl_exited", 8, body, 64);
    for l in 0..16u32 {
        assert_eq!(out[2 * l as usize], 1000 + l + 16, "lane {l}");
    }
    for l in 16..32u32 {
        assert_eq!(out[2 * l as usize + 1], 3 * (1000 + l), "lane {l}");
    }
}

/// A launch's register files go back to a per-thread pool for the next launch, which
/// must find them zeroed: a first kernel leaves sixteen nonzero values live at once in
/// its slots, and the next launch's unwritten `%r19` still reads 0.
#[test]
fn a_later_launch_starts_from_zeroed_registers() {
    let fill = r#"
    add.u32 %r2, %r1, 2000;
    add.u32 %r3, %r1, 3000;
    add.u32 %r4, %r1, 4000;
    add.u32 %r5, %r1, 5000;
    add.u32 %r6, %r1, 6000;
    add.u32 %r7, %r1, 7000;
    add.u32 %r8, %r1, 8000;
    add.u32 %r9, %r1, 9000;
    add.u32 %r10, %r1, 10000;
    add.u32 %r11, %r1, 11000;
    add.u32 %r12, %r1, 12000;
    add.u32 %r13, %r1, 13000;
    add.u32 %r14, %r1, 14000;
    add.u32 %r15, %r1, 15000;
    add.u32 %r16, %r1, 16000;
    add.u32 %r17, %r1, 17000;
    mov.u32 %r18, %r2;
    add.u32 %r18, %r18, %r3;
    add.u32 %r18, %r18, %r4;
    add.u32 %r18, %r18, %r5;
    add.u32 %r18, %r18, %r6;
    add.u32 %r18, %r18, %r7;
    add.u32 %r18, %r18, %r8;
    add.u32 %r18, %r18, %r9;
    add.u32 %r18, %r18, %r10;
    add.u32 %r18, %r18, %r11;
    add.u32 %r18, %r18, %r12;
    add.u32 %r18, %r18, %r13;
    add.u32 %r18, %r18, %r14;
    add.u32 %r18, %r18, %r15;
    add.u32 %r18, %r18, %r16;
    add.u32 %r18, %r18, %r17;
    st.global.u32 [%rd4], %r18;
    ret;
"#;
    for launch in 0..3 {
        let (out, _, _) = run("", "fill", 4, fill, 32);
        let want = |l: u32| (2..18).map(|i| l + i * 1000).sum::<u32>();
        assert_eq!(out[5], want(5), "launch {launch}: fill");
        let (out, _, _) = run("", "unwritten", 8, UNWRITTEN, 64);
        for l in 0..32usize {
            assert_eq!(
                out[2 * l + 1],
                5,
                "launch {launch}, lane {l}: unwritten %r19 + 5"
            );
        }
    }
}
