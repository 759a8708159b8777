//! The instruction forms of issue 17 through the front end: each module parses, prints
//! to text that parses back to the same module, and that text is accepted by the real
//! ptxas (the test fails, never skips, when ptxas is missing: `scripts/setup-cuda.sh`
//! installs it). One module per target keeps it to a few ptxas runs.

use fencehound_toolchain::assemble;

const DECLS: &str = "
 .reg .pred %p<4>;
 .reg .b16 %h<8>;
 .reg .b32 %r<24>;
 .reg .b64 %rd<8>;
 .reg .f32 %f<16>;
 .reg .v4 .u32 %v;
 .reg .v2 .b64 %w<2>;
 .local .align 8 .b8 buf[16];
 .shared .align 16 .b8 sm[1024];
";

fn module(version: &str, target: &str, extra: &str, body: &str) -> String {
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n{extra}\n\
         .visible .entry k(.param .u64 p)\n{{\n{DECLS}\n{body}\n ret;\n}}\n"
    )
}

fn round_trip(name: &str, text: &str, arch: &str) {
    let m = fencehound_ptx::parse(name, text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let printed = fencehound_ptx::print(&m);
    let again = fencehound_ptx::parse(name, &printed)
        .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
    assert_eq!(again, m, "parse(print(m)) != m\n{printed}");
    assert_eq!(
        fencehound_ptx::print(&again),
        printed,
        "print is not a fixed point"
    );
    if let Err(e) = assemble(&printed, arch) {
        panic!("ptxas {arch} rejects the printed {name}: {e}\n{printed}");
    }
}

#[test]
fn sm80_forms_round_trip_through_ptxas() {
    let extra = "
.func (.reg .u32 r, .reg .u32 s) two(.reg .u32 a)
{
 .reg .pred %pz;
 add.u32 r, a, 1;
 setp.eq.u32 %pz, a, 0;
 @%pz bra Z;
 mov.u32 s, 2;
 ret;
Z:
 mov.u32 s, 3;
 ret;
}
";
    let body = "
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, sm;
 cp.async.ca.shared.global [%r1], [%rd1], 4;
 cp.async.cg.shared.global [%r1+16], [%rd1+16], 16, %r2;
 cp.async.ca.shared::cta.global [%r1+32], [%rd1], 8, %p1;
 cp.async.commit_group;
 cp.async.wait_group 1;
 cp.async.wait_all;
 ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r2, %r3, %r4, %r5}, [%r1];
 ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r6, %r7}, [%r1];
 ldmatrix.sync.aligned.m8n8.x1.b16 {%r8}, [%rd1];
 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f4, %f5, %f6, %f7};
 mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f4, %f5, %f6, %f7};
 mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%r10, %r11}, {%r2, %r3}, {%r6}, {%r12, %r13};
 mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r14, %r15, %r16, %r17};
 mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3}, {%r6}, {%r14, %r15, %r16, %r17};
 mov.v4.u32 %v, {%r1, %r2, %r3, %r4};
 add.u32 %v.y, %v.x, WARP_SZ;
 mov.u32 %r9, %v.a;
 mov.v4.u32 {%r1, %r2, %r3, %r4}, %v;
 mov.v2.b64 %w1, {%rd1, %rd2};
 st.global.v4.u32 [%rd1], %v;
 st.u32 [buf], %r1;
 ld.u32 %r2, [buf+4];
 call (%r3, %r4), two, (%r2);
 cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;
 cvt.pack.sat.u16.s32 %r1, %r2, %r3;
 cvt.pack.sat.u4.s32.b32 %r1, %r2, %r3, %r4;
 cvt.rz.satfinite.f16x2.f32 %r1, %f1, %f2;
 vshr.u32.u32.u32.clamp %r1, %r2, %r3;
 vshl.s32.s32.u32.wrap.add %r1, %r2.b1, %r3.h0, %r4;
 vadd.u32.u32.u32.sat %r1.b2, %r2, %r3, %r4;
 vabsdiff.s32.s32.s32.min %r1, %r2.h1, %r3, %r4;
 vset.s32.u32.lt.max %r1, %r2, %r3.b3, %r4;
 vmin.u32.u32.u32 %r1, %r2, %r3;
";
    round_trip("sm80.ptx", &module("8.1", "sm_80", extra, body), "sm_80");
}

/// Issue 22 item 7: vector `.reg` parameters and return values, the local address of a
/// variable plus an offset, `ldmatrix .x4.trans`, and the integer `mma` shapes.
#[test]
fn vector_register_parameters_local_offsets_and_integer_mma_round_trip() {
    let extra = "
.func (.reg .v4 .u32 r, .reg .u32 s) vf(.reg .v2 .b64 w, .reg .v4 .u32 x)
{
 mov.v4.u32 r, {x.w, x.z, x.y, x.x};
 cvt.u32.u64 s, w.y;
 ret;
}
";
    let body = "
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, sm;
 call (%v, %r2), vf, (%w0, %v);
 mov.u64 %rd2, buf+8;
 cvta.local.u64 %rd3, buf+4;
 mov.u32 %r3, buf+12;
 st.local.u32 [%rd2], %r2;
 ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r2, %r3, %r4, %r5}, [%r1];
 mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r10, %r11, %r12, %r13}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r14, %r15, %r16, %r17};
 mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%r10, %r11}, {%r2}, {%r6}, {%r14, %r15};
 mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32 {%r10, %r11}, {%r2}, {%r6}, {%r14, %r15};
";
    round_trip("issue22.ptx", &module("8.0", "sm_80", extra, body), "sm_80");
}

#[test]
fn fp8_conversions_round_trip_through_ptxas() {
    let body = "
 cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
 cvt.rn.satfinite.relu.e5m2x2.f32 %h2, %f1, %f2;
 cvt.rn.satfinite.e4m3x2.f16x2 %h3, %r1;
 cvt.rn.f16x2.e4m3x2 %r2, %h1;
 cvt.rn.relu.f16x2.e5m2x2 %r3, %h2;
 cvt.rn.satfinite.f16.f32 %h4, %f3;
 cvt.rn.satfinite.bf16x2.f32 %r4, %f1, %f2;
";
    round_trip("sm89.ptx", &module("8.1", "sm_89", "", body), "sm_89");
}

#[test]
fn legacy_vote_round_trips_through_ptxas() {
    // PTX 6.3 is the last version that allows `vote` without `.sync` on sm_70+.
    let body = "
 setp.ne.u32 %p1, %r1, 0;
 vote.all.pred %p2, %p1;
 vote.any.pred %p2, !%p1;
 vote.uni.pred %p3, %p1;
 vote.ballot.b32 %r2, %p1;
";
    let text = module("6.3", "sm_75", "", body).replace(" .reg .v2 .b64 %w<2>;\n", "");
    round_trip("vote.ptx", &text, "sm_75");
}

/// `__managed__` variables: `.attribute(.managed)` on module `.global`s (NVCC emits it for
/// every `__managed__` variable; it failed to parse before, losing the whole module), kept
/// through printing; `.attribute(.unified(…))` parses.
#[test]
fn managed_variable_attribute() {
    let extra = ".global .attribute(.managed) .align 4 .u32 counter = 5;\n\
                 .global .attribute(.managed) .align 4 .b8 vals[16];\n\
                 .global .align 4 .u32 plain;";
    let text = module("8.0", "sm_80", extra, " ld.global.u32 %r1, [counter];");
    round_trip("managed.ptx", &text, "sm_80");
    let m = fencehound_ptx::parse("managed.ptx", &text).unwrap();
    let managed: Vec<(String, bool)> = m.variables().map(|v| (v.name.clone(), v.managed)).collect();
    assert_eq!(
        managed,
        vec![
            ("counter".to_string(), true),
            ("vals".to_string(), true),
            ("plain".to_string(), false)
        ]
    );
    let unified = module(
        "8.0",
        "sm_80",
        ".global .attribute(.unified(19, 95)) .align 4 .u32 u;",
        "",
    );
    let m = fencehound_ptx::parse("unified.ptx", &unified).unwrap();
    assert!(m.variables().any(|v| v.name == "u" && !v.managed));
}
