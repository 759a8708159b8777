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

mod common;

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
fn module(target: &str, extra: &str, body: &str) -> String {
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
fn ptxas_accepts(ptx: &str, arch: &str) {
    let m = fencehound_ptx::parse("conformance.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let printed = fencehound_ptx::print(&m);
    let again = fencehound_ptx::parse("printed.ptx", &printed)
        .unwrap_or_else(|e| panic!("printed PTX does not parse: {e}\n{printed}"));
    assert_eq!(again, m, "parse(print(m)) != m");
    if let Err(e) = fencehound_toolchain::assemble(&printed, arch) {
        panic!("ptxas {arch} rejects the printed PTX: {e}\n{printed}");
    }
}

/// Runs kernel `k` of `ptx` with `threads` threads in one CTA; `in0`, `in1` are the input
/// words; returns `out_words` output words (initialised to `0xdeadbeef`).
fn run(ptx: &str, threads: u32, in0: &[u32], in1: &[u32], out_words: usize) -> Vec<u32> {
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
#[allow(dead_code)] // used by the unsupported-form tests below
fn rejects(ptx: &str, what: &str) {
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
