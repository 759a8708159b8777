//! Conformance of instruction families beyond the scalar ALU (issue 17): warp shuffles
//! with out-of-range operands, asynchronous copies, `ldmatrix`, `mma`, vector registers,
//! packing and 8-bit float conversions, `.func` register parameters, legacy `vote` and
//! the scalar video instructions.
//!
//! Each test is a hand-written PTX kernel with values computed by hand from the PTX ISA's
//! definition of the instruction (fragment layouts for `ldmatrix`/`mma` included). Every
//! kernel also goes through the front end's round trip: `print(parse(x))` must be accepted
//! by ptxas for the test's architecture (the real ptxas: the test fails, never skips,
//! when it is missing; `scripts/setup-cuda.sh` installs it).

use crate::common;

use fencehound_vgpu::arith::cvt::{cvt_f64_to_bf16, cvt_f64_to_f16};
use fencehound_vgpu::arith::Rounding;
use fencehound_vgpu::{Arg, Device, Dim3};

/// Registers every kernel declares, and the prologue that leaves in them: `%tx` (thread
/// index), `%out`, `%in0`, `%in1` (global base addresses of the buffers) and `%o4`, `%i4`,
/// `%j4` (those plus `4 * tid`).
const PROLOGUE: &str = "
 .reg .b32 %tx;
 .reg .b64 %out, %in0, %in1, %o4, %i4, %j4, %t64;
 .reg .pred %p<8>;
 .reg .b16 %h<16>;
 .reg .b32 %r<64>;
 .reg .b64 %rd<16>;
 .reg .f32 %f<64>;
 mov.u32 %tx, %tid.x;
 ld.param.u64 %out, [out];
 cvta.to.global.u64 %out, %out;
 ld.param.u64 %in0, [in0];
 cvta.to.global.u64 %in0, %in0;
 ld.param.u64 %in1, [in1];
 cvta.to.global.u64 %in1, %in1;
 mul.wide.u32 %t64, %tx, 4;
 add.s64 %o4, %out, %t64;
 add.s64 %i4, %in0, %t64;
 add.s64 %j4, %in1, %t64;
";

/// A module with one kernel `k(out, in0, in1)` whose body is `body` after [`PROLOGUE`];
/// `extra` goes before the kernel (device functions, module variables).
pub(crate) fn module(target: &str, extra: &str, body: &str) -> String {
    let version = match target {
        "sm_100a" | "sm_100" => "8.8",
        _ => "8.0",
    };
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n\n{extra}\n\
         .visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1)\n{{\n{PROLOGUE}\n{body}\n ret;\n}}\n"
    )
}

/// Checks that ptxas accepts the printed form of `ptx` for `arch`.
pub(crate) fn ptxas_accepts(ptx: &str, arch: &str) {
    let m = fencehound_ptx::parse("conformance.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let printed = fencehound_ptx::print(&m);
    let again = fencehound_ptx::parse("printed.ptx", &printed)
        .unwrap_or_else(|e| panic!("printed PTX does not parse: {e}\n{printed}"));
    assert_eq!(again, m, "parse(print(m)) != m");
    if let Err(e) = fencehound_toolchain::assemble(&printed, arch) {
        panic!("ptxas {arch} rejects the printed PTX: {e}\n{printed}");
    }
}

/// Runs kernel `k` of `ptx` and returns how the launch ended.
fn outcome(ptx: &str, threads: u32) -> fencehound_vgpu::LaunchOutcome {
    let mut dev = Device::new();
    let id = common::load(&mut dev, "conformance.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let bufs: Vec<Arg> = (0..3).map(|_| Arg::Ptr(dev.alloc(4096).unwrap())).collect();
    dev.launch(id, "k", Dim3::x(1), Dim3::x(threads), 0, &bufs)
        .unwrap()
        .outcome
}

/// The launch faults with a message containing `what`.
pub(crate) fn faults(ptx: &str, threads: u32, what: &str) {
    match outcome(ptx, threads) {
        fencehound_vgpu::LaunchOutcome::Fault(f) => {
            assert!(
                f.message.contains(what),
                "fault does not mention `{what}`: {f}"
            )
        }
        o => panic!("expected a fault mentioning `{what}`, got {o:?}"),
    }
}

/// Runs kernel `k` of `ptx` with `threads` threads in one CTA; `in0`, `in1` are the input
/// words; returns `out_words` output words (initialised to `0xdeadbeef`).
pub(crate) fn run(ptx: &str, threads: u32, in0: &[u32], in1: &[u32], out_words: usize) -> Vec<u32> {
    let mut dev = Device::new();
    let id = common::load(&mut dev, "conformance.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let words = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let buf = |dev: &mut Device, v: &[u32]| {
        let p = dev.alloc((4 * v.len().max(1)) as u64).unwrap();
        dev.copy_to(p, &words(v)).unwrap();
        p
    };
    let a = buf(&mut dev, in0);
    let b = buf(&mut dev, in1);
    let o = buf(&mut dev, &vec![0xdead_beef; out_words]);
    let r = dev
        .launch(
            id,
            "k",
            Dim3::x(1),
            Dim3::x(threads),
            0,
            &[Arg::Ptr(o), Arg::Ptr(a), Arg::Ptr(b)],
        )
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut bytes = vec![0u8; 4 * out_words];
    dev.copy_from(o, &mut bytes).unwrap();
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Loading `ptx` fails with an "unsupported" error that mentions `what`.
pub(crate) fn rejects(ptx: &str, what: &str) {
    let mut dev = Device::new();
    match common::load(&mut dev, "conformance.ptx", ptx) {
        Ok(_) => panic!("expected an unsupported error mentioning `{what}`"),
        Err(e) => assert!(
            e.contains("unsupported") && e.contains(what),
            "error does not mention `{what}`: {e}"
        ),
    }
}

// =======================================================================================
// shfl.sync: the lane/delta operand uses only its low 5 bits

/// PTX ISA `shfl.sync`: `bval[4:0] = b[4:0]`. On GPUs a delta of 32 acts as 0 (and the
/// predicate is true), 33 as 1, 63 as 31 (issue 17). Each thread takes its delta from
/// `in1`; the value shuffled is `100 + lane`.
#[test]
fn shfl_sync_uses_the_low_five_bits_of_lane_and_delta() {
    let body = "
 ld.global.u32 %r1, [%j4];
 add.u32 %r2, %tx, 100;
 shfl.sync.up.b32 %r3|%p1, %r2, %r1, 0, -1;
 shfl.sync.down.b32 %r4|%p2, %r2, %r1, 31, -1;
 shfl.sync.bfly.b32 %r5|%p3, %r2, %r1, 31, -1;
 shfl.sync.idx.b32 %r6|%p4, %r2, %r1, 31, -1;
 selp.u32 %r7, 1, 0, %p1;
 selp.u32 %r8, 1, 0, %p2;
 selp.u32 %r9, 1, 0, %p3;
 selp.u32 %r10, 1, 0, %p4;
 mul.wide.u32 %t64, %tx, 32;
 add.s64 %rd1, %out, %t64;
 st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
 st.global.v4.u32 [%rd1+16], {%r7, %r8, %r9, %r10};
";
    let ptx = module("sm_80", "", body);
    ptxas_accepts(&ptx, "sm_80");
    let deltas: Vec<u32> = (0..32u32)
        .map(|l| [32, 33, 63, 64 + 5, 0xffff_ffe1, 1][l as usize % 6])
        .collect();
    let out = run(&ptx, 32, &[], &deltas, 32 * 8);
    for l in 0..32u32 {
        let b = deltas[l as usize] & 31;
        let row = &out[l as usize * 8..l as usize * 8 + 8];
        // up: source lane l - b if >= 0
        let (up, pu) = if l >= b {
            (100 + l - b, 1)
        } else {
            (100 + l, 0)
        };
        let (down, pd) = if l + b <= 31 {
            (100 + l + b, 1)
        } else {
            (100 + l, 0)
        };
        let bfly = 100 + (l ^ b);
        let idx = 100 + b;
        assert_eq!(
            row,
            &[up, down, bfly, idx, pu, pd, 1, 1],
            "lane {l}, delta {:#x}",
            deltas[l as usize]
        );
    }
}

// =======================================================================================
// Vector registers, WARP_SZ, local variables by name, `.reg` parameters, legacy vote

/// `.reg .v4 .u32 %v` (PTX ISA §5.4.2): members `.x .y .z .w` (and `.r .g .b .a`) are
/// registers; `mov.v4` moves element-wise with every source read first; vector
/// registers are whole operands of `ld.v4`/`st.v4`. `WARP_SZ` is 32.
#[test]
fn vector_registers_and_warp_sz() {
    let body = "
 .reg .v4 .u32 %v;
 .reg .v2 .u32 %w<2>;
 ld.global.v4.u32 %v, [%i4];
 add.u32 %v.y, %v.y, WARP_SZ;
 mov.v2.u32 %w1, {%v.a, %v.r};
 mov.v2.u32 %w1, {%w1.y, %w1.x};
 mov.v4.u32 %v, {%v.w, %v.z, %w1.x, %w1.y};
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd1, %out, %t64;
 st.global.v4.u32 [%rd1], %v;
";
    // Each thread reads its own 16-byte slice of in0 (thread 0 of 1: one slice).
    let ptx = module("sm_80", "", &body.replace("[%i4]", "[%in0]"));
    ptxas_accepts(&ptx, "sm_80");
    let out = run(&ptx, 1, &[10, 20, 30, 40], &[], 4);
    // v = {10, 52, 30, 40}; w1 = {40, 10} then swapped to {10, 40};
    // v = {40, 30, 10, 40}.
    assert_eq!(out, vec![40, 30, 10, 40]);
}

/// A `.local` variable named in a generic access is the thread's own local memory
/// (PTX ISA §6.4.1: a variable's name in a generic access is its generic address).
#[test]
fn generic_access_to_a_local_variable_by_name() {
    let body = "
 .local .align 8 .b8 buf[16];
 ld.global.u32 %r1, [%i4];
 st.u32 [buf], %r1;
 add.u32 %r2, %r1, 5;
 st.u32 [buf+4], %r2;
 ld.u32 %r3, [buf];
 ld.u32 %r4, [buf+4];
 mov.u64 %rd1, buf;
 cvta.local.u64 %rd2, %rd1;
 ld.u32 %r5, [%rd2+4];
 add.u32 %r6, %r3, %r4;
 add.u32 %r6, %r6, %r5;
 st.global.u32 [%o4], %r6;
";
    let ptx = module("sm_80", "", body);
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..32).map(|i| i * 100).collect();
    let out = run(&ptx, 32, &input, &[], 32);
    for t in 0..32u32 {
        let x = t * 100;
        assert_eq!(out[t as usize], x + 2 * (x + 5), "thread {t}");
    }
}

/// Device functions with `.reg` parameters and return values (PTX ISA §5.1.6.4), and a
/// body with several `ret`s.
#[test]
fn func_with_register_parameters_and_several_returns() {
    let extra = "
.func (.reg .u32 res, .reg .u32 flag) clamp_add(.reg .u32 a, .reg .u32 b)
{
 .reg .pred %q;
 add.u32 res, a, b;
 setp.gt.u32 %q, res, 100;
 @%q bra BIG;
 mov.u32 flag, 0;
 ret;
BIG:
 mov.u32 res, 100;
 mov.u32 flag, 1;
 ret;
}
";
    let body = "
 ld.global.u32 %r1, [%i4];
 call (%r2, %r3), clamp_add, (%r1, 7);
 shl.b32 %r3, %r3, 16;
 or.b32 %r4, %r2, %r3;
 st.global.u32 [%o4], %r4;
";
    let ptx = module("sm_80", extra, body);
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..32).map(|i| i * 5).collect();
    let out = run(&ptx, 32, &input, &[], 32);
    for t in 0..32u32 {
        let s = t * 5 + 7;
        let want = if s > 100 { 100 | 1 << 16 } else { s };
        assert_eq!(out[t as usize], want, "thread {t}");
    }
}

/// Vector-typed `.reg` parameters and return values of a device function (PTX ISA
/// §5.1.6.4 with the vector registers of §5.4.2; ptxas takes only a vector register of the
/// same width as the argument). Scalar and vector parameters mix, the second call passes
/// the first call's results back in, and the members keep their order.
#[test]
fn func_with_vector_register_parameters() {
    let extra = "
.func (.reg .v4 .u32 r, .reg .u32 s) shuffle(.reg .v2 .u64 w, .reg .v4 .u32 x, .reg .u32 k)
{
 .reg .b32 %lo;
 add.u32 r.x, x.w, k;
 mov.u32 r.y, x.z;
 mov.u32 r.z, x.y;
 sub.u32 r.w, x.x, k;
 cvt.u32.u64 %lo, w.y;
 add.u32 s, %lo, x.x;
 ret;
}
";
    let body = "
 .reg .v4 .u32 %v<2>;
 .reg .v2 .u64 %w;
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 %v0, [%rd1];
 cvt.u64.u32 %rd2, %tx;
 mov.v2.u64 %w, {%rd2, %t64};
 call (%v1, %r1), shuffle, (%w, %v0, 3);
 call (%v0, %r2), shuffle, (%w, %v1, %r1);
 mul.wide.u32 %t64, %tx, 64;
 add.s64 %rd3, %out, %t64;
 st.global.v4.u32 [%rd3], %v1;
 st.global.v4.u32 [%rd3+16], %v0;
 st.global.v2.u32 [%rd3+32], {%r1, %r2};
";
    let ptx = module("sm_80", extra, body);
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let out = run(&ptx, 32, &input, &[], 32 * 16);
    for t in 0..32usize {
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| input[4 * t + i]);
        let w1 = 16 * t as u32;
        // First call: x = (a, b, c, d), k = 3.
        let s1 = w1.wrapping_add(a);
        let r1 = [d.wrapping_add(3), c, b, a.wrapping_sub(3)];
        // Second call: x = r1, k = s1.
        let s2 = w1.wrapping_add(r1[0]);
        let r2 = [r1[3].wrapping_add(s1), r1[2], r1[1], r1[0].wrapping_sub(s1)];
        let want: Vec<u32> = r1.into_iter().chain(r2).chain([s1, s2]).collect();
        assert_eq!(&out[16 * t..16 * t + 10], &want[..], "thread {t}");
    }
}

/// The address of a `.local` variable plus an offset (`mov`, `cvta.local` with
/// `sym+off`, PTX ISA §6.4.1) in a device function, whose frame lies after the
/// kernel's: each store lands on its byte of the callee's variable, and the kernel's own
/// local variable is untouched.
#[test]
fn local_symbol_plus_offset() {
    let extra = "
.func (.reg .v4 .u32 r) locals(.reg .u32 x)
{
 .local .align 16 .b8 dep[32];
 .reg .b32 %a<6>;
 .reg .b64 %d<3>;
 st.local.u32 [dep], x;
 mov.u64 %d1, dep+8;
 add.u32 %a1, x, 1;
 st.local.u32 [%d1], %a1;
 cvta.local.u64 %d2, dep+12;
 add.u32 %a2, x, 2;
 st.u32 [%d2], %a2;
 mov.u32 %a3, dep+4;
 add.u32 %a4, x, 3;
 st.local.u32 [%a3], %a4;
 ld.local.u32 %a5, [dep+12];
 st.local.u32 [dep+16], %a5;
 ld.local.v4.u32 r, [dep];
 ld.local.u32 r.x, [dep+16];
 ret;
}
";
    let body = "
 .local .align 16 .b8 mine[16];
 .reg .v4 .u32 %v;
 ld.global.u32 %r1, [%i4];
 not.b32 %r2, %r1;
 st.local.v4.u32 [mine], {%r2, %r2, %r2, %r2};
 call (%v), locals, (%r1);
 mov.u64 %rd1, mine+4;
 ld.local.u32 %r3, [%rd1];
 mul.wide.u32 %t64, %tx, 32;
 add.s64 %rd2, %out, %t64;
 st.global.v4.u32 [%rd2], %v;
 st.global.u32 [%rd2+16], %r3;
";
    let ptx = module("sm_80", extra, body);
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..32).map(|i| 1000 * i + 7).collect();
    let out = run(&ptx, 32, &input, &[], 32 * 8);
    for t in 0..32usize {
        let x = input[t];
        // dep = [x, x+3, x+1, x+2, x+2, ...]; r = (dep[4], dep[1], dep[2], dep[3]).
        assert_eq!(
            &out[8 * t..8 * t + 5],
            &[x + 2, x + 3, x + 1, x + 2, !x],
            "thread {t}"
        );
    }
}

/// `vote` without `.sync` (PTX ISA < 6.4) votes over the whole warp.
#[test]
fn legacy_vote_runs_with_the_full_warp() {
    let body = "
 ld.global.u32 %r1, [%i4];
 setp.ne.u32 %p1, %r1, 0;
 vote.ballot.b32 %r2, %p1;
 vote.all.pred %p2, %p1;
 vote.any.pred %p3, !%p1;
 vote.uni.pred %p4, %p1;
 selp.u32 %r3, 1, 0, %p2;
 selp.u32 %r4, 2, 0, %p3;
 selp.u32 %r5, 4, 0, %p4;
 or.b32 %r3, %r3, %r4;
 or.b32 %r3, %r3, %r5;
 mul.wide.u32 %t64, %tx, 8;
 add.s64 %rd1, %out, %t64;
 st.global.v2.u32 [%rd1], {%r2, %r3};
";
    // PTX 6.3 is the last version with non-`.sync` vote on sm_70+ (ptxas warns).
    let ptx = module("sm_75", "", body).replace(".version 8.0", ".version 6.3");
    ptxas_accepts(&ptx, "sm_75");
    let input: Vec<u32> = (0..32).map(|i| (i % 3 == 0) as u32).collect();
    let ballot = (0..32).filter(|i| i % 3 == 0).fold(0u32, |m, i| m | 1 << i);
    let out = run(&ptx, 32, &input, &[], 64);
    for t in 0..32 {
        // not all set, some clear (any of !p), not uniform.
        assert_eq!(&out[2 * t..2 * t + 2], &[ballot, 2], "thread {t}");
    }
}

// =======================================================================================
// cp.async

/// `cp.async` with cp-size 16 and 8, `src-size` (zero fill) and `ignore-src`, grouped by
/// `commit_group` and completed by `wait_group 1` and `wait_all` (PTX ISA §9.7.9.25.3).
/// Reading a destination before its group completed is undefined; the vgpu performs
/// copies when they are waited for, so such a read sees the old contents (pinned here
/// because it is what exposes a missing wait).
#[test]
fn cp_async_groups_complete_in_order() {
    let extra = ".shared .align 16 .b8 sm[1024];";
    let body = "
 mov.u32 %r1, sm;
 shl.b32 %r2, %tx, 4;
 add.u32 %r3, %r1, %r2;
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd1, %in0, %t64;
 shl.b32 %r5, %tx, 3;
 add.u32 %r4, %r1, 512;
 add.u32 %r4, %r4, %r5;
 shl.b32 %r5, %tx, 2;
 add.u32 %r6, %r1, 768;
 add.u32 %r6, %r6, %r5;
 st.shared.u32 [%r6], 0x5a5a;
 setp.eq.u32 %p1, %tx, %tx;
 cp.async.cg.shared.global [%r3], [%rd1], 16;
 cp.async.ca.shared.global [%r4], [%rd1], 8, 6;
 cp.async.commit_group;
 cp.async.ca.shared.global [%r6], [%rd1], 4, %p1;
 cp.async.commit_group;
 ld.shared.u32 %r10, [%r3];
 cp.async.wait_group 1;
 ld.shared.u32 %r11, [%r3];
 ld.shared.u32 %r12, [%r6];
 cp.async.wait_all;
 ld.shared.u32 %r13, [%r6];
 bar.sync 0;
 add.u32 %r7, %tx, 1;
 and.b32 %r7, %r7, 31;
 shl.b32 %r7, %r7, 4;
 add.u32 %r7, %r1, %r7;
 ld.shared.u32 %r14, [%r7+12];
 ld.shared.v2.u32 {%r15, %r16}, [%r4];
 mul.wide.u32 %t64, %tx, 32;
 add.s64 %rd2, %out, %t64;
 st.global.v4.u32 [%rd2], {%r10, %r11, %r12, %r13};
 st.global.v4.u32 [%rd2+16], {%r14, %r15, %r16, %r14};
";
    let ptx = module("sm_80", extra, body);
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..128)
        .map(|i| 0x0101_0101u32.wrapping_mul(i + 1))
        .collect();
    let out = run(&ptx, 32, &input, &[], 32 * 8);
    for t in 0..32usize {
        let row = &out[8 * t..8 * t + 8];
        let next = (t + 1) % 32;
        let w1 = input[4 * t + 1] & 0xffff; // bytes 4..5 copied, 6..7 zero-filled
        assert_eq!(
            row,
            &[
                0,
                input[4 * t],
                0x5a5a,
                0,
                input[4 * next + 3],
                input[4 * t],
                w1,
                input[4 * next + 3]
            ],
            "thread {t}"
        );
    }
}

/// libcu++'s `cuda::memcpy_async` with a thread-scope pipeline compiles (NVRTC) to
/// `cp.async.cg.shared.global ..., 16, 16` + `commit_group` + `wait_group 0`.
#[test]
fn cp_async_from_libcudacxx_pipeline() {
    let src = r#"
#include <cuda_fp16.h>
#include <cuda/pipeline>
extern "C" __global__ void k(unsigned *out, const unsigned *in, const unsigned *unused) {
    __shared__ alignas(16) unsigned s[128];
    auto pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&s[threadIdx.x * 4], &in[threadIdx.x * 4], cuda::aligned_size_t<16>(16), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x * 5 + 3) % 128];
    pipe.consumer_release();
}
"#;
    let flags = fencehound_toolchain::expand_nvrtc_flags(
        "--use-bundled-headers=$NVRTC_BUNDLED_HEADERS -std=c++17",
    )
    .unwrap();
    let ptx = common::nvrtc(src, "pipeline.cu", &[], &flags);
    assert!(
        ptx.contains("cp.async"),
        "NVRTC did not emit cp.async:\n{ptx}"
    );
    assert!(ptx.contains("cp.async.wait_group"), "{ptx}");
    ptxas_accepts(&ptx, "sm_80");
    let input: Vec<u32> = (0..128).map(|i| i * 7 + 1).collect();
    let out = run(&ptx, 32, &input, &[], 32);
    for t in 0..32 {
        assert_eq!(out[t], input[(t * 5 + 3) % 128], "thread {t}");
    }
}

// =======================================================================================
// ldmatrix

/// Four 8x8 matrices of `.b16` in shared memory, element (r, c) of matrix m = `m*64 +
/// r*8 + c`, rows 16 bytes apart; thread `8m + r` supplies the address of row r of
/// matrix m. PTX ISA §9.7.14.5.15: thread l receives row l/4, columns 2(l%4) and
/// 2(l%4)+1 (low half first); with `.trans` the matrix is read column-major, so it
/// receives rows 2(l%4) and 2(l%4)+1 of column l/4.
#[test]
fn ldmatrix_x1_x2_x4_and_trans() {
    let extra = ".shared .align 16 .b8 sm[512];";
    let body = "
 mov.u32 %r1, sm;
 shl.b32 %r2, %tx, 4;
 add.u32 %r3, %r1, %r2;
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1];
 st.shared.v4.u32 [%r3], {%r4, %r5, %r6, %r7};
 bar.sync 0;
 ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r3];
 ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r14, %r15}, [%r3];
 ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%r16}, [%r3];
 cvt.u64.u32 %rd3, %r3;
 cvta.shared.u64 %rd3, %rd3;
 ldmatrix.sync.aligned.m8n8.x1.trans.b16 {%r17}, [%rd3];
 mul.wide.u32 %t64, %tx, 32;
 add.s64 %rd4, %out, %t64;
 st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};
 st.global.v4.u32 [%rd4+16], {%r14, %r15, %r16, %r17};
";
    let ptx = module("sm_80", extra, body);
    ptxas_accepts(&ptx, "sm_80");
    // 256 u16 elements, two per input word, in row order of the four matrices.
    let elems: Vec<u16> = (0..256u16).collect();
    let input: Vec<u32> = elems
        .chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect();
    let out = run(&ptx, 32, &input, &[], 32 * 8);
    let m = |mat: usize, r: usize, c: usize| (mat * 64 + r * 8 + c) as u32;
    let pair = |lo: u32, hi: u32| lo | hi << 16;
    for l in 0..32usize {
        let row = &out[8 * l..8 * l + 8];
        let plain = |mat: usize| pair(m(mat, l / 4, 2 * (l % 4)), m(mat, l / 4, 2 * (l % 4) + 1));
        let trans = |mat: usize| pair(m(mat, 2 * (l % 4), l / 4), m(mat, 2 * (l % 4) + 1, l / 4));
        let want = [
            plain(0),
            plain(1),
            plain(2),
            plain(3),
            trans(0),
            trans(1),
            plain(0),
            trans(0),
        ];
        assert_eq!(row, &want, "thread {l}");
    }
    // Spot checks written out from the ISA's figure: thread 0 holds (0,0),(0,1); thread 5
    // holds row 1, columns 2 and 3; transposed, thread 5 holds (2,1),(3,1).
    assert_eq!(out[0], pair(0, 1));
    assert_eq!(out[8 * 5], pair(10, 11));
    assert_eq!(out[8 * 5 + 4], pair(17, 25));
}

// =======================================================================================
// mma

/// Matrix element types of the `mma` tests.
#[derive(Clone, Copy, PartialEq)]
enum El {
    F16,
    Bf16,
    S8,
    U8,
    S4,
    U4,
    F32,
    S32,
}

impl El {
    fn bits(self) -> usize {
        match self {
            El::F16 | El::Bf16 => 16,
            El::S8 | El::U8 => 8,
            El::S4 | El::U4 => 4,
            El::F32 | El::S32 => 32,
        }
    }
    fn name(self) -> &'static str {
        match self {
            El::F16 => "f16",
            El::Bf16 => "bf16",
            El::S8 => "s8",
            El::U8 => "u8",
            El::S4 => "s4",
            El::U4 => "u4",
            El::F32 => "f32",
            El::S32 => "s32",
        }
    }
    /// The bit pattern of an (exactly representable) value.
    fn encode(self, v: f64) -> u32 {
        match self {
            El::F16 => cvt_f64_to_f16(v, Rounding::Rn).to_bits() as u32,
            El::Bf16 => cvt_f64_to_bf16(v, Rounding::Rn).to_bits() as u32,
            El::S8 => (v as i8) as u8 as u32,
            El::U8 => v as u8 as u32,
            El::S4 | El::U4 => v as i64 as u32 & 0xf,
            El::F32 => (v as f32).to_bits(),
            El::S32 => v as i64 as i32 as u32,
        }
    }
}

/// (row, col) of element i of thread `lane`'s fragment, from the tables of PTX ISA
/// §9.7.14.5.7–10 (A: 16×k, B: k×8, C/D: 16×8).
fn frag_a(k: usize, int: bool, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match (int, k) {
        (false, 8) => (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1)),
        (false, _) => (
            if i < 2 || (4..6).contains(&i) {
                g
            } else {
                g + 8
            },
            t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 },
        ),
        (true, 16) => (if i < 4 { g } else { g + 8 }, t * 4 + (i & 3)),
        (true, _) => (
            if i < 4 || (8..12).contains(&i) {
                g
            } else {
                g + 8
            },
            t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 },
        ),
    }
}

fn frag_b(k: usize, int: bool, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    let row = match (int, k) {
        (false, 8) => t * 2 + i,
        (false, _) => t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 },
        (true, 16) => t * 4 + i,
        (true, _) => t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 },
    };
    (row, g)
}

fn frag_c(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
}

/// Packs thread `lane`'s fragment of `m` (row-major, `cols` wide) into registers.
fn pack(
    m: &[f64],
    cols: usize,
    el: El,
    n: usize,
    lane: usize,
    at: impl Fn(usize, usize) -> (usize, usize),
) -> Vec<u32> {
    let per = 32 / el.bits();
    let mut regs = vec![0u32; n / per];
    for i in 0..n {
        let (r, c) = at(lane, i);
        regs[i / per] |= el.encode(m[r * cols + c]) << (el.bits() * (i % per));
    }
    regs
}

/// Runs one `mma` on fragments packed on the host from A (16×k), B (k×8), C (16×8) and
/// returns D (16×8) unpacked with the C/D layout, as raw element bits.
fn run_mma(k: usize, ab: (El, El), cd: El, sat: bool, a: &[f64], b: &[f64], c: &[f64]) -> Vec<u32> {
    let int = matches!(ab.0, El::S8 | El::U8);
    let (na, nb) = (16 * k / 32, k * 8 / 32);
    let per = |e: El| 32 / e.bits();
    let (ra, rb, rc) = (na / per(ab.0), nb / per(ab.1), 4 / per(cd));
    let regs = |pre: &str, n: usize, off: usize| -> String {
        (0..n)
            .map(|i| format!("%{pre}{}", off + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cty = if cd == El::F16 { "f16" } else { cd.name() };
    let body = format!(
        "
 mul.wide.u32 %t64, %tx, 64;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 {{%r0, %r1, %r2, %r3}}, [%rd1];
 ld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd1+16];
 ld.global.v4.u32 {{%r8, %r9, %r10, %r11}}, [%rd1+32];
 mma.sync.aligned.m16n8k{k}.row.col{sat}.{cty}.{at}.{bt}.{cty} {{{d}}}, {{{a}}}, {{{b}}}, {{{c}}};
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd2, %out, %t64;
 st.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};
",
        sat = if sat { ".satfinite" } else { "" },
        at = ab.0.name(),
        bt = ab.1.name(),
        a = regs("r", ra, 0),
        b = regs("r", rb, 4),
        c = regs("r", rc, 8),
        d = regs("r", rc, 20),
    );
    let ptx = module("sm_80", "", &body);
    ptxas_accepts(&ptx, "sm_80");
    let mut input = vec![0u32; 32 * 16];
    for lane in 0..32 {
        let pa = pack(a, k, ab.0, na, lane, |l, i| frag_a(k, int, l, i));
        let pb = pack(b, 8, ab.1, nb, lane, |l, i| frag_b(k, int, l, i));
        let pc = pack(c, 8, cd, 4, lane, frag_c);
        input[16 * lane..16 * lane + pa.len()].copy_from_slice(&pa);
        input[16 * lane + 4..16 * lane + 4 + pb.len()].copy_from_slice(&pb);
        input[16 * lane + 8..16 * lane + 8 + pc.len()].copy_from_slice(&pc);
    }
    let out = run(&ptx, 32, &input, &[], 32 * 4);
    let mut d = vec![0u32; 128];
    let per_d = per(cd);
    for lane in 0..32 {
        for i in 0..4 {
            let (r, col) = frag_c(lane, i);
            let reg = out[4 * lane + i / per_d];
            let bits = cd.bits();
            d[r * 8 + col] = if bits == 32 {
                reg
            } else {
                (reg >> (bits * (i % per_d))) & ((1 << bits) - 1)
            };
        }
    }
    d
}

/// Host reference: D = A·B + C, exactly.
fn gemm(k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    (0..128)
        .map(|e| {
            let (r, n) = (e / 8, e % 8);
            c[e] + (0..k).map(|x| a[r * k + x] * b[x * 8 + n]).sum::<f64>()
        })
        .collect()
}

/// Small integers make every product and partial sum exact in `.f16`/`.bf16`/`.f32`,
/// so the result does not depend on the accumulation order the ISA leaves open.
#[test]
fn mma_f16_and_bf16_with_f32_and_f16_accumulators() {
    for (k, ab, cd) in [
        (16, El::F16, El::F32),
        (16, El::Bf16, El::F32),
        (8, El::F16, El::F32),
        (8, El::Bf16, El::F32),
        (16, El::F16, El::F16),
        (8, El::F16, El::F16),
    ] {
        let a: Vec<f64> = (0..16 * k)
            .map(|e| ((e / k * 3 + e % k) % 7) as f64 - 3.0)
            .collect();
        let b: Vec<f64> = (0..k * 8)
            .map(|e| ((e / 8 + 2 * (e % 8)) % 5) as f64 - 2.0)
            .collect();
        let c: Vec<f64> = (0..128)
            .map(|e| (e / 8) as f64 - (e % 8) as f64 * 0.5)
            .collect();
        let got = run_mma(k, (ab, ab), cd, false, &a, &b, &c);
        let want: Vec<u32> = gemm(k, &a, &b, &c).iter().map(|v| cd.encode(*v)).collect();
        assert_eq!(got, want, "m16n8k{k} {} -> {}", ab.name(), cd.name());
    }
}

/// The f16 accumulator is rounded once from the exact sum: 7684·0.0585632 + 7684 =
/// 8133.99988 lies just below the tie between 8132 and 8136, so D is 8132 (0x6ff1).
/// Rounding through f32 first gives 8134.0 and then, to even, 8136.
#[test]
fn mma_f16_accumulator_rounds_once() {
    let (x, y) = (
        half::f16::from_bits(0x6f81).to_f64(),
        half::f16::from_bits(0x2b7f).to_f64(),
    );
    let (mut a, mut b, mut c) = (vec![0.0; 16 * 16], vec![0.0; 16 * 8], vec![0.0; 128]);
    (a[0], b[0], c[0]) = (x, y, x);
    let got = run_mma(16, (El::F16, El::F16), El::F16, false, &a, &b, &c);
    assert_eq!(got[0], 0x6ff1);
}

#[test]
fn mma_s8_u8_with_and_without_satfinite() {
    for (k, ab) in [
        (32, (El::S8, El::S8)),
        (16, (El::S8, El::S8)),
        (32, (El::U8, El::S8)),
        (16, (El::S8, El::U8)),
    ] {
        let val = |e: El, x: usize| match e {
            El::S8 => ((x * 37) % 256) as f64 - 128.0,
            _ => ((x * 53) % 256) as f64,
        };
        let a: Vec<f64> = (0..16 * k).map(|x| val(ab.0, x)).collect();
        let b: Vec<f64> = (0..k * 8).map(|x| val(ab.1, x + 11)).collect();
        // Accumulators near the ends of the .s32 range, so some sums overflow.
        let c: Vec<f64> = (0..128)
            .map(|e| match e % 3 {
                0 => i32::MAX as f64 - 1000.0,
                1 => i32::MIN as f64 + 1000.0,
                _ => e as f64,
            })
            .collect();
        let exact = gemm(k, &a, &b, &c);
        for sat in [false, true] {
            let got = run_mma(k, ab, El::S32, sat, &a, &b, &c);
            let want: Vec<u32> = exact
                .iter()
                .map(|v| {
                    let v = *v as i64;
                    if sat {
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                    } else {
                        v as i32 as u32
                    }
                })
                .collect();
            assert_eq!(
                got,
                want,
                "m16n8k{k} {}.{} sat={sat}",
                ab.0.name(),
                ab.1.name()
            );
        }
        assert!(
            exact
                .iter()
                .any(|v| *v > i32::MAX as f64 || *v < i32::MIN as f64),
            "the test data should overflow somewhere"
        );
    }
}

/// The 8×8 integer shapes, `.m8n8k16` (`.s8`/`.u8`) and `.m8n8k32` (`.s4`/`.u4`), in
/// every signedness mix, with and without `.satfinite`. Fragments as PTX ISA
/// §9.7.14.5.4 and §9.7.14.5.5 give them, with g = lane / 4 and t = lane % 4 and `e`
/// elements per `.b32` register (4 of 8 bits, 8 of 4 bits), element i in bits
/// `i * bits` up: A (8×k) element i is (g, t·e + i), B (k×8) element i is (t·e + i, g), C/D
/// (8×8, two `.s32` registers) element i is (g, 2t + i).
#[test]
fn mma_m8n8_integer_shapes() {
    let mixes = [
        (16, El::S8, El::S8),
        (16, El::U8, El::S8),
        (16, El::S8, El::U8),
        (16, El::U8, El::U8),
        (32, El::S4, El::S4),
        (32, El::U4, El::S4),
        (32, El::S4, El::U4),
        (32, El::U4, El::U4),
    ];
    for (k, at, bt) in mixes {
        let bits = at.bits();
        let e = 32 / bits;
        // Element values spread over the whole range of each type.
        let range = |t: El, x: usize| -> i64 {
            let n = 1i64 << t.bits();
            let v = (x as i64 * 37 + 11) % n;
            match t {
                El::S8 | El::S4 => v - n / 2,
                _ => v,
            }
        };
        let a: Vec<i64> = (0..8 * k).map(|x| range(at, x)).collect();
        let b: Vec<i64> = (0..k * 8).map(|x| range(bt, 3 * x + 1)).collect();
        let c: Vec<i64> = (0..64)
            .map(|x| match x % 4 {
                0 => i32::MAX as i64 - 50,
                1 => i32::MIN as i64 + 50,
                _ => x as i64 * 1000 - 31_000,
            })
            .collect();
        let field = |v: i64| (v as u32) & ((1u32 << bits) - 1);
        let mut input = vec![0u32; 32 * 4];
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for i in 0..e {
                input[4 * lane] |= field(a[g * k + t * e + i]) << (bits * i);
                input[4 * lane + 1] |= field(b[(t * e + i) * 8 + g]) << (bits * i);
            }
            for i in 0..2 {
                input[4 * lane + 2 + i] = c[g * 8 + 2 * t + i] as i32 as u32;
            }
        }
        for sat in [false, true] {
            let body = format!(
                "
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 {{%r0, %r1, %r2, %r3}}, [%rd1];
 mma.sync.aligned.m8n8k{k}.row.col{sat}.s32.{at}.{bt}.s32 {{%r20, %r21}}, {{%r0}}, {{%r1}}, {{%r2, %r3}};
 mul.wide.u32 %t64, %tx, 8;
 add.s64 %rd2, %out, %t64;
 st.global.v2.u32 [%rd2], {{%r20, %r21}};
",
                sat = if sat { ".satfinite" } else { "" },
                at = at.name(),
                bt = bt.name(),
            );
            let ptx = module("sm_80", "", &body);
            ptxas_accepts(&ptx, "sm_80");
            let out = run(&ptx, 32, &input, &[], 64);
            let mut overflowed = false;
            for lane in 0..32 {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..2 {
                    let (r, n) = (g, 2 * t + i);
                    let exact =
                        c[r * 8 + n] + (0..k).map(|x| a[r * k + x] * b[x * 8 + n]).sum::<i64>();
                    overflowed |= exact != exact as i32 as i64;
                    let want = if sat {
                        exact.clamp(i32::MIN as i64, i32::MAX as i64) as i32
                    } else {
                        exact as i32
                    };
                    assert_eq!(
                        out[2 * lane + i] as i32,
                        want,
                        "m8n8k{k} {}.{} sat={sat} lane {lane} d{i}",
                        at.name(),
                        bt.name()
                    );
                }
            }
            assert!(overflowed, "the data should overflow .s32 somewhere");
        }
    }
}

/// `mma.m16n8k32` with `.s8` inputs and `ldmatrix` `.x4.trans` as CUDA code does them
/// (inline assembly, compiled with NVRTC). A8 (16×32 `.s8`, row-major) comes in with
/// `ldmatrix.x4` and B8 (32×8, stored column-major: row n of B8ᵀ is column n) with
/// `.x2`: a 16-byte row of 8 `.b16` is 16 bytes of the `.s8` matrix, so thread l's word
/// is bytes 4(l%4)..4(l%4)+3 of row l/4 of each 8×16-byte block, which is the `.s8`
/// fragment of PTX ISA §9.7.14.5.9 (A: blocks (rows 0-7, k 0-15), (8-15, 0-15), (0-7,
/// 16-31), (8-15, 16-31); B: k 0-15, k 16-31). Bh (16×16 `.f16`, row-major k×n) comes in
/// with `.x4.trans` for two `m16n8k16`s: transposed, thread l holds rows 2(l%4),
/// 2(l%4)+1 of column l/4 of each 8×8 block (§9.7.14.5.15), which is the B fragment of
/// §9.7.14.5.8 for blocks (k 0-7, n 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
#[test]
fn mma_s8_m16n8k32_and_ldmatrix_x4_trans_from_cuda() {
    let src = r#"
extern "C" __global__ void k(unsigned *out, const unsigned *a, const unsigned *b) {
    __shared__ alignas(16) unsigned sa8[128];
    __shared__ alignas(16) unsigned sbt8[64];
    __shared__ alignas(16) unsigned short sah[256];
    __shared__ alignas(16) unsigned short sbh[256];
    unsigned l = threadIdx.x;
    for (unsigned i = l; i < 128; i += 32) {
        sa8[i] = a[i];
        ((unsigned *)sah)[i] = a[128 + i];
        ((unsigned *)sbh)[i] = b[64 + i];
    }
    for (unsigned i = l; i < 64; i += 32) sbt8[i] = b[i];
    __syncthreads();
    unsigned row = l % 8 + 8 * ((l / 8) % 2);
    unsigned ra[4], rb[2], rah[4], rbh[4];
    unsigned pa = (unsigned)__cvta_generic_to_shared((char *)sa8 + row * 32 + 16 * (l / 16));
    unsigned pb = (unsigned)__cvta_generic_to_shared((char *)sbt8 + (l % 8) * 32 + 16 * ((l / 8) % 2));
    unsigned pah = (unsigned)__cvta_generic_to_shared(&sah[row * 16 + 8 * (l / 16)]);
    unsigned pbh = (unsigned)__cvta_generic_to_shared(&sbh[row * 16 + 8 * (l / 16)]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(rb[0]), "=r"(rb[1]) : "r"(pb));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(rah[0]), "=r"(rah[1]), "=r"(rah[2]), "=r"(rah[3]) : "r"(pah));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(rbh[0]), "=r"(rbh[1]), "=r"(rbh[2]), "=r"(rbh[3]) : "r"(pbh));
    int d[4] = {0, 0, 0, 0};
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    unsigned g = l / 4, t = l % 4;
    for (int i = 0; i < 4; i++) out[(g + 8 * (i / 2)) * 8 + 2 * t + (i & 1)] = d[i];
    for (int j = 0; j < 2; j++) {
        float c[4] = {0.f, 0.f, 0.f, 0.f};
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(rah[0]), "r"(rah[1]), "r"(rah[2]), "r"(rah[3]),
                       "r"(rbh[2 * j]), "r"(rbh[2 * j + 1]));
        for (int i = 0; i < 4; i++)
            out[128 + (g + 8 * (i / 2)) * 16 + 8 * j + 2 * t + (i & 1)] = __float_as_uint(c[i]);
    }
}
"#;
    let ptx = common::nvrtc(src, "mma_s8.cu", &[], &[]);
    assert!(
        ptx.contains("m16n8k32.row.col.s32.s8.s8.s32") && ptx.contains("x4.trans"),
        "{ptx}"
    );
    ptxas_accepts(&ptx, "sm_80");
    // A8 16×32 and B8 32×8 (.s8), Ah and Bh 16×16 (small integers, exact in .f16).
    let a8: Vec<i64> = (0..16 * 32).map(|x| (x * 29 % 256) as i64 - 128).collect();
    let b8: Vec<i64> = (0..32 * 8).map(|x| (x * 71 % 256) as i64 - 128).collect();
    let ah: Vec<f64> = (0..256).map(|x| ((x * 5) % 9) as f64 - 4.0).collect();
    let bh: Vec<f64> = (0..256).map(|x| ((x * 7) % 11) as f64 - 5.0).collect();
    let bytes = |v: &[i64]| -> Vec<u32> {
        v.chunks(4)
            .map(|q| q.iter().rev().fold(0u32, |w, &x| w << 8 | (x as u8) as u32))
            .collect()
    };
    let halves = |v: &[f64]| -> Vec<u32> {
        v.chunks(2)
            .map(|p| El::F16.encode(p[0]) | El::F16.encode(p[1]) << 16)
            .collect()
    };
    let bt8: Vec<i64> = (0..8 * 32).map(|x| b8[(x % 32) * 8 + x / 32]).collect();
    let in0: Vec<u32> = bytes(&a8).into_iter().chain(halves(&ah)).collect();
    let in1: Vec<u32> = bytes(&bt8).into_iter().chain(halves(&bh)).collect();
    let out = run(&ptx, 32, &in0, &in1, 128 + 256);
    for r in 0..16 {
        for n in 0..8 {
            let want: i64 = (0..32).map(|x| a8[r * 32 + x] * b8[x * 8 + n]).sum();
            assert_eq!(out[r * 8 + n] as i32 as i64, want, "s8 D({r},{n})");
        }
        for n in 0..16 {
            let want: f64 = (0..16).map(|x| ah[r * 16 + x] * bh[x * 16 + n]).sum();
            assert_eq!(
                f32::from_bits(out[128 + r * 16 + n]) as f64,
                want,
                "f16 D({r},{n})"
            );
        }
    }
}

/// The canonical use (CUTLASS-style inline assembly, compiled with NVRTC): A (16×16,
/// row-major) and B (16×8, row-major) are loaded from shared memory with `ldmatrix`
/// (B transposed), multiplied with `mma.m16n8k16`, and D is written back with the C/D
/// fragment layout.
#[test]
fn ldmatrix_and_mma_from_cuda_inline_asm() {
    let src = r#"
extern "C" __global__ void k(float *d, const unsigned short *a, const unsigned short *b) {
    __shared__ alignas(16) unsigned short sa[16 * 16];
    __shared__ alignas(16) unsigned short sb[16 * 8];
    unsigned l = threadIdx.x;
    for (unsigned i = l; i < 256; i += 32) sa[i] = a[i];
    for (unsigned i = l; i < 128; i += 32) sb[i] = b[i];
    __syncthreads();
    unsigned ra[4], rb[2];
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(l % 16) * 16 + (l / 16) * 8]);
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(l % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(rb[0]), "=r"(rb[1]) : "r"(pb));
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    unsigned g = l / 4, t = l % 4;
    d[g * 8 + t * 2] = c[0];
    d[g * 8 + t * 2 + 1] = c[1];
    d[(g + 8) * 8 + t * 2] = c[2];
    d[(g + 8) * 8 + t * 2 + 1] = c[3];
}
"#;
    let ptx = common::nvrtc(src, "mma.cu", &[], &[]);
    assert!(
        ptx.contains("ldmatrix") && ptx.contains("mma.sync"),
        "{ptx}"
    );
    ptxas_accepts(&ptx, "sm_80");
    let a: Vec<f64> = (0..256).map(|e| ((e * 5) % 9) as f64 - 4.0).collect();
    let b: Vec<f64> = (0..128).map(|e| ((e * 3) % 7) as f64 - 3.0).collect();
    let h = |v: &[f64]| -> Vec<u32> {
        v.chunks(2)
            .map(|p| El::F16.encode(p[0]) | El::F16.encode(p[1]) << 16)
            .collect()
    };
    let out = run(&ptx, 32, &h(&a), &h(&b), 128);
    let want: Vec<u32> = gemm(16, &a, &b, &[0.0; 128])
        .iter()
        .map(|v| (*v as f32).to_bits())
        .collect();
    assert_eq!(out, want);
}

// =======================================================================================
// Undefined behaviour is a fault, unsupported forms are load errors

#[test]
fn undefined_uses_of_the_new_instructions_fault() {
    let mma = "
 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};
";
    // A partial warp: the `.aligned` warp-wide instructions need all 32 threads.
    faults(&module("sm_80", "", mma), 16, "all 32 threads");
    let ld = "
 ldmatrix.sync.aligned.m8n8.x1.b16 {%r1}, [%out];
";
    faults(&module("sm_80", "", ld), 32, "not in shared memory");
    let cp = "
 .shared .align 16 .b8 s[512];
 mov.u32 %r1, s;
 cp.async.ca.shared.global [%r1], [%in0], 8, 12;
";
    faults(&module("sm_80", "", cp), 1, "larger than cp-size");
    let misaligned = "
 .shared .align 16 .b8 s[512];
 mov.u32 %r1, s;
 cp.async.cg.shared.global [%r1+8], [%in0], 16;
";
    faults(&module("sm_80", "", misaligned), 1, "aligned");
}

#[test]
fn forms_that_stay_unsupported_are_load_errors() {
    for (body, what) in [
        ("vmad.s32.s32.s32 %r1, %r2, %r3, %r4;", "vmad"),
        (
            "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, {%r0, %r1}, {%r2, %r3}, {%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15};",
            "shape",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "shape and type combination",
        ),
        (
            "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%r3];",
            "m8n8",
        ),
        ("cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;", "source operands"),
        (".reg .v4 .u32 %q[2];", "array"),
        ("mov.u32 %r1, %tx.x;", "not a vector register"),
        (
            "mma.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r14, %r15, %r16, %r17};",
            "shape",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.s32.s8.s4.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3}, {%r6}, {%r14, %r15, %r16, %r17};",
            "shape and type combination",
        ),
        (
            ".local .align 8 .b8 lb[8];\n mov.u64 %rd1, lb+-8;",
            "offset outside the local frame",
        ),
        // Thread block clusters (sm_90): valid PTX (it used to be a parse error, "`barrier`
        // takes 1 to 4 operands"), named as what the vgpu does not run.
        ("barrier.cluster.arrive;", "`barrier.cluster`: thread block clusters"),
        ("barrier.cluster.wait.aligned;", "`barrier.cluster`: thread block clusters"),
        ("mapa.u32 %r1, %r2, %r3;", "`mapa`: distributed shared memory"),
        (
            "mov.u32 %r1, %cluster_ctarank;",
            "`%cluster_ctarank`: thread block clusters",
        ),
    ] {
        rejects(&module("sm_90", "", body), what);
    }
    // A vector `.reg` parameter of a kernel, and a scalar passed to a vector one.
    let kernel_vec =
        module("sm_80", "", "").replace(".param .u64 in1)", ".param .u64 in1, .reg .v2 .u32 vv)");
    rejects(&kernel_vec, "`.reg` parameter `vv` of this shape");
    let extra = ".func (.reg .u32 r) f(.reg .v2 .u32 x)\n{\n mov.u32 r, x.y;\n ret;\n}\n";
    rejects(
        &module("sm_80", extra, "call (%r1), f, (%r2);"),
        "pass a `.v2` vector register",
    );
}

/// `mma.m16n8k32` with `.s4` inputs (sm_80) is a valid form whose fragment layout the
/// executor does not implement: loading names the instruction and its PTX line.
#[test]
fn unsupported_mma_names_instruction_and_line() {
    let inst = "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s4.s4.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3}, {%r6}, {%r14, %r15, %r16, %r17};";
    let ptx = module("sm_80", "", inst);
    ptxas_accepts(&ptx, "sm_80");
    let line = 1 + ptx.lines().position(|l| l.trim() == inst).unwrap();
    let mut dev = Device::new();
    let err = common::load(&mut dev, "conformance.ptx", &ptx).unwrap_err();
    assert!(
        err.contains("unsupported")
            && err.contains("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s4.s4.s32")
            && err.contains("shape and type combination")
            && err.contains(&format!("PTX line {line} in `k`")),
        "{err}"
    );
}

// =======================================================================================
// The same families as NVRTC emits them from CUDA

/// Compiles CUDA for `arch` (e.g. `compute_90`) with NVRTC's bundled headers.
fn nvrtc_for(src: &str, name: &str, arch: &str) -> String {
    let mut req = fencehound_toolchain::CompileRequest::new(src, name);
    req.arch = arch.to_string();
    req.extra_options =
        fencehound_toolchain::expand_nvrtc_flags("--use-bundled-headers=$NVRTC_BUNDLED_HEADERS")
            .unwrap();
    match fencehound_toolchain::compile(&req) {
        Ok(c) => c.ptx,
        Err(e) => panic!("NVRTC failed for {name}: {e}"),
    }
}

/// `warpSize` compiles to `WARP_SZ`; `__shfl_up_sync`/`__shfl_down_sync` with a delta
/// from memory pass it to `shfl.sync` in a register, where only its low 5 bits count.
/// The subtraction's carry as inline assembly reproduces the GPU-recorded case of issue
/// 17 (`sub.cc.s32` of 0x627adf75 − 0x864ccef5, then `addc.u32 c, 0, 0` gives 0).
#[test]
fn warp_size_shuffles_and_carries_from_cuda() {
    let src = r#"
extern "C" __global__ void k(unsigned *out, const unsigned *delta, const unsigned *ab) {
    unsigned l = threadIdx.x;
    unsigned v = 1000 + l;
    out[4 * l] = warpSize;
    out[4 * l + 1] = __shfl_up_sync(0xffffffffu, v, delta[l]);
    out[4 * l + 2] = __shfl_down_sync(0xffffffffu, v, delta[l]);
    unsigned d, c;
    asm("sub.cc.s32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(d), "=r"(c) : "r"(ab[0]), "r"(ab[1]));
    out[4 * l + 3] = c;
}
"#;
    let ptx = common::nvrtc(src, "warp.cu", &[], &[]);
    assert!(
        ptx.contains("WARP_SZ"),
        "NVRTC no longer emits WARP_SZ:\n{ptx}"
    );
    ptxas_accepts(&ptx, "sm_80");
    let deltas: Vec<u32> = (0..32).map(|l| [32, 33, 63, 2][l % 4]).collect();
    let out = run(&ptx, 32, &deltas, &[0x627a_df75, 0x864c_cef5], 128);
    for l in 0..32u32 {
        let b = deltas[l as usize] & 31;
        let up = if l >= b { 1000 + l - b } else { 1000 + l };
        let down = if l + b < 32 { 1000 + l + b } else { 1000 + l };
        assert_eq!(
            &out[4 * l as usize..4 * l as usize + 4],
            &[32, up, down, 0],
            "lane {l}"
        );
    }
}

/// `cuda_fp8.h` conversions (compute_90): `__nv_cvt_float2_to_fp8x2` emits
/// `cvt.rn.satfinite.e4m3x2.f32` / `.e5m2x2.f32`, `__nv_cvt_fp8x2_to_halfraw2` emits
/// `cvt.rn.f16x2.e4m3x2`.
#[test]
fn fp8_conversions_from_cuda() {
    let src = r#"
#include <cuda_fp8.h>
extern "C" __global__ void k(unsigned *out, const float *in, const unsigned *unused) {
    unsigned l = threadIdx.x;
    float2 v = make_float2(in[2 * l], in[2 * l + 1]);
    __nv_fp8x2_storage_t e4 = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3);
    __nv_fp8x2_storage_t e5 = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E5M2);
    __half2_raw back = __nv_cvt_fp8x2_to_halfraw2(e4, __NV_E4M3);
    out[3 * l] = e4;
    out[3 * l + 1] = e5;
    out[3 * l + 2] = (unsigned)back.x | ((unsigned)back.y << 16);
}
"#;
    let ptx = nvrtc_for(src, "fp8.cu", "compute_90");
    assert!(ptx.contains("e4m3x2") && ptx.contains("e5m2x2"), "{ptx}");
    ptxas_accepts(&ptx, "sm_90");
    // (x, y) per thread; float2 (x, y): x goes to the low byte (CUDA packs .x first).
    let pairs: [(f32, f32); 4] = [(1.0, -2.0), (448.0, 1e6), (f32::NAN, 0.0), (1.0625, 1.1875)];
    let input: Vec<u32> = (0..32)
        .flat_map(|l| {
            let (x, y) = pairs[l % 4];
            [x.to_bits(), y.to_bits()]
        })
        .collect();
    let out = run(&ptx, 32, &input, &[], 96);
    // Bytes (low = x, high = y) worked out by hand; see cvt_fp8_pairs in alu_conformance.
    let e4 = [0xc038, 0x7e7e, 0x007f, 0x3a38];
    let e5 = [0xc03c, 0x7b5f, 0x007f, 0x3d3c];
    let h2 = [0xc000_3c00, 0x5f00_5f00, 0x0000_7fff, 0x3d00_3c00];
    for l in 0..32 {
        assert_eq!(
            &out[3 * l..3 * l + 3],
            &[e4[l % 4], e5[l % 4], h2[l % 4]],
            "thread {l}"
        );
    }
}

/// `ld` into a register wider than its type extends by the type (PTX ISA "Operand Size
/// Exceeding Instruction-Type Size": signed types sign-extend, others zero-extend), the
/// same rule as `cvt`; and 256-bit `ld/st.v8.b32` (sm_100).
#[test]
fn loads_into_wider_registers_and_v8_vectors() {
    let body = "
 ld.global.s8 %r1, [%in0];
 ld.global.u8 %r2, [%in0];
 ld.global.s16 %rd1, [%in0];
 ld.global.v8.b32 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17}, [%in1];
 st.global.v2.u32 [%out], {%r1, %r2};
 st.global.u64 [%out+8], %rd1;
 st.global.v8.b32 [%out+32], {%r17, %r16, %r15, %r14, %r13, %r12, %r11, %r10};
";
    let ptx = module("sm_100", "", body);
    ptxas_accepts(&ptx, "sm_100");
    let v8: Vec<u32> = (1..=8).collect();
    let out = run(&ptx, 1, &[0x0000_80c2], &v8, 16);
    assert_eq!(&out[..4], &[0xffff_ffc2, 0xc2, 0xffff_80c2, 0xffff_ffff]);
    assert_eq!(&out[8..], &[8, 7, 6, 5, 4, 3, 2, 1]);
}
