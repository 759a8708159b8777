//! `wmma` (PTX ISA §9.7.14.4) in hand-written PTX: every form the ISA lists goes through
//! the front end's round trip and the real ptxas and runs; the properties that hold
//! whatever the (unspecified) fragment layout is are checked on values — a fragment stored
//! with the other memory layout is the transpose, `mma` with an identity matrix returns
//! the other operand (also for the `.f16` fragments that hold a matrix several times over)
//! — and the undefined uses fault. The arithmetic of every form against a host reference
//! is `tests/programs/wmma.cu` (CUDA's `nvcuda::wmma`, run by the root crate's tests).

use crate::conformance::{faults, module, ptxas_accepts, rejects, run};

/// Registers `n` registers `%{p}{first}…` as a brace list.
fn regs(p: &str, first: usize, n: usize) -> String {
    let v: Vec<String> = (first..first + n).map(|i| format!("%{p}{i}")).collect();
    format!("{{{}}}", v.join(", "))
}

/// (shape, M, N, K) of every `wmma` shape.
const SHAPES: [(&str, usize, usize, usize); 7] = [
    ("m16n16k16", 16, 16, 16),
    ("m32n8k16", 32, 8, 16),
    ("m8n32k16", 8, 32, 16),
    ("m16n16k8", 16, 16, 8),
    ("m8n8k4", 8, 8, 4),
    ("m8n8k32", 8, 8, 32),
    ("m8n8k128", 8, 8, 128),
];

/// Registers of a fragment: `elems` elements over 32 threads, `bits` wide, packed in
/// 32-bit registers (one `.f64` per register); `.f16` A and B always 8 (PTX ISA
/// §9.7.14.4.1).
fn nregs(ty: &str, frag: char, elems: usize) -> usize {
    let bits = match ty {
        "f64" => return elems / 32,
        "f32" | "s32" | "tf32" => 32,
        "f16" | "bf16" => 16,
        "s8" | "u8" => 8,
        "s4" | "u4" => 4,
        _ => 1,
    };
    if ty == "f16" && frag != 'c' {
        return 8;
    }
    elems / 32 / (32 / bits)
}

/// The register file of a fragment type: `%fd` for `.f64`, `%f` for `.f32` C/D, else `%r`.
fn file(ty: &str, frag: char) -> &'static str {
    match (ty, frag) {
        ("f64", _) => "fd",
        ("f32", 'c') => "f",
        _ => "r",
    }
}

/// Every `wmma.load`, `wmma.mma` and `wmma.store` form of the ISA's syntax tables
/// (layouts, state spaces, strides and rounding varied across them), as kernel lines on a
/// shared-memory matrix.
fn every_form() -> Vec<String> {
    let mut out = Vec::new();
    for (shape, m, n, k) in SHAPES {
        let (ab, cs): (&[&str], &[&str]) = match shape {
            "m16n16k8" => (&["tf32"], &["f32"]),
            "m8n8k4" => (&["f64"], &["f64"]),
            "m8n8k32" => (&["s4", "u4"], &["s32"]),
            "m8n8k128" => (&["b1"], &["s32"]),
            _ => (&["f16", "bf16", "s8", "u8"], &["f16", "f32", "s32"]),
        };
        let sub = matches!(shape, "m8n8k32" | "m8n8k128");
        for (x, t) in ab.iter().enumerate() {
            for (frag, elems) in [('a', m * k), ('b', k * n)] {
                for (y, layout) in ["row", "col"].into_iter().enumerate() {
                    if sub && (frag == 'a') != (layout == "row") {
                        continue;
                    }
                    let space = ["", ".shared", ".shared::cta"][(x + y) % 3];
                    // A generic address (`%rd10`) where no state space is named.
                    let addr = if space.is_empty() { "%rd10" } else { "%r60" };
                    let stride = if y == 0 { "" } else { ", %r61" };
                    out.push(format!(
                        "wmma.load.{frag}.sync.aligned.{layout}.{shape}{space}.{t} {}, [{addr}]{stride};",
                        regs(file(t, frag), 0, nregs(t, frag, elems))
                    ));
                }
            }
        }
        for (y, c) in cs.iter().enumerate() {
            let nc = nregs(c, 'c', m * n);
            let layout = ["row", "col"][y % 2];
            out.push(format!(
                "wmma.load.c.sync.aligned.{layout}.{shape}.shared.{c} {}, [%r60], %r61;",
                regs(file(c, 'c'), 0, nc)
            ));
            out.push(format!(
                "wmma.store.d.sync.aligned.{}.{shape}.shared.{c} [%r60], {}{};",
                ["col", "row"][y % 2],
                regs(file(c, 'c'), 0, nc),
                if y == 0 { "" } else { ", %r61" }
            ));
        }
        // The multiply-accumulates.
        let mut mmas: Vec<(String, &str, &str, &str, &str)> = Vec::new();
        match shape {
            "m16n16k8" => mmas.push((".f32.tf32.tf32.f32".into(), "tf32", "tf32", "f32", "f32")),
            "m8n8k4" => {
                for r in ["", ".rn", ".rz", ".rm", ".rp"] {
                    mmas.push((format!(".f64.f64.f64.f64{r}"), "f64", "f64", "f64", "f64"));
                }
            }
            "m8n8k32" => {
                for (t, s) in [("s4", ""), ("u4", ".satfinite")] {
                    mmas.push((format!(".s32.{t}.{t}.s32{s}"), t, t, "s32", "s32"));
                }
            }
            "m8n8k128" => mmas.push((".s32.b1.b1.s32".into(), "b1", "b1", "s32", "s32")),
            _ => {
                for d in ["f16", "f32"] {
                    for c in ["f16", "f32"] {
                        mmas.push((format!(".{d}.{c}"), "f16", "f16", c, d));
                    }
                }
                mmas.push((".f32.bf16.bf16.f32".into(), "bf16", "bf16", "f32", "f32"));
                for (t, s) in [("s8", ""), ("u8", ".satfinite")] {
                    mmas.push((format!(".s32.{t}.{t}.s32{s}"), t, t, "s32", "s32"));
                }
            }
        }
        for (z, (types, a, b, c, d)) in mmas.into_iter().enumerate() {
            let layouts = if sub {
                "row.col"
            } else {
                ["row.col", "col.row", "row.row", "col.col"][z % 4]
            };
            let ops: Vec<&str> = if shape == "m8n8k128" {
                vec![".xor.popc", ".and.popc"]
            } else {
                vec![""]
            };
            for op in ops {
                // D in registers after A's, B's and C's, each from a register of its own.
                let (na, nb) = (nregs(a, 'a', m * k), nregs(b, 'b', k * n));
                let (nc, nd) = (nregs(c, 'c', m * n), nregs(d, 'c', m * n));
                let f = |t: &str, fr: char| file(t, fr);
                let mut at = std::collections::HashMap::new();
                let mut next = |file: &'static str, count: usize| {
                    let e = at.entry(file).or_insert(0usize);
                    let first = *e;
                    *e += count;
                    regs(file, first, count)
                };
                let (ra, rb) = (next(f(a, 'a'), na), next(f(b, 'b'), nb));
                let (rc, rd) = (next(f(c, 'c'), nc), next(f(d, 'c'), nd));
                out.push(format!(
                    "wmma.mma{op}.sync.aligned.{layouts}.{shape}{types} {rd}, {ra}, {rb}, {rc};"
                ));
            }
        }
    }
    out
}

/// Declarations and a shared matrix the forms address: `%r60` its address (`%rd10` its
/// generic address), `%r61` a stride (in elements) valid for every element type.
const SETUP: &str = "
 .reg .f64 %fd<8>;
 .shared .align 32 .b8 sm[8192];
 mov.u32 %r60, sm;
 mov.u32 %r61, 64;
 cvta.shared.u64 %rd10, sm;
";

#[test]
fn every_wmma_form_round_trips_assembles_and_runs() {
    let forms = every_form();
    // Per m16n16k16/m32n8k16/m8n32k16: A and B loads 4 types × 2 layouts × 2 (16), C
    // loads and D stores of 3 types (6), 7 mma type forms: 29 each. m16n16k8: 4 + 2 + 1;
    // m8n8k4: 4 + 2 + 5 roundings; m8n8k32: 2 types × 2 (one layout each) + 2 + 2;
    // m8n8k128: 2 + 2 + xor/and.
    assert_eq!(forms.len(), 3 * 29 + 7 + 11 + 8 + 6, "{}", forms.join("\n"));
    for arch in ["sm_80", "sm_90"] {
        let ptx = module(arch, "", &format!("{SETUP}\n {}", forms.join("\n ")));
        ptxas_accepts(&ptx, arch);
        // Zeroed shared memory in, zeros out: every form decodes and executes.
        run(&ptx, 32, &[], &[], 1);
    }
}

/// A C fragment loaded row-major and stored column-major (and back) is the transpose,
/// with padded strides: the layout of a fragment's registers is the vgpu's own, the
/// mapping between memory and matrix elements is the ISA's.
#[test]
fn a_fragment_stored_with_the_other_layout_is_the_transpose() {
    let body = "
 wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%in0], 24;
 wmma.store.d.sync.aligned.col.m16n16k16.global.f32 [%out], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, 16;
 wmma.load.c.sync.aligned.col.m32n8k16.global.f16 {%r0, %r1, %r2, %r3}, [%in1], 40;
 wmma.store.d.sync.aligned.row.m32n8k16.global.f16 [%out+1024], {%r0, %r1, %r2, %r3};
";
    let ptx = module("sm_80", "", body);
    ptxas_accepts(&ptx, "sm_80");
    // in0: 16 rows of 24 f32 (value 100r + c); in1: 8 columns of 40 f16 (bits 0x100c + r).
    let in0: Vec<u32> = (0..16 * 24)
        .map(|i| ((i / 24) * 100 + i % 24) as f32)
        .map(f32::to_bits)
        .collect();
    let halves: Vec<u16> = (0..8 * 40)
        .map(|i| (0x1000 + (i / 40) * 64 + i % 40) as u16)
        .collect();
    let in1: Vec<u32> = halves
        .chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect();
    let out = run(&ptx, 32, &in0, &in1, 256 + 128);
    for r in 0..16 {
        for c in 0..16 {
            assert_eq!(
                f32::from_bits(out[c * 16 + r]),
                (100 * r + c) as f32,
                "({r}, {c})"
            );
        }
    }
    // Row-major 32x8 with the default stride 8: element (r, c) is column c's element r.
    let got: Vec<u16> = out[256..]
        .iter()
        .flat_map(|w| [*w as u16, (*w >> 16) as u16])
        .collect();
    for r in 0..32 {
        for c in 0..8 {
            assert_eq!(got[r * 8 + c], (0x1000 + c * 64 + r) as u16, "({r}, {c})");
        }
    }
}

/// `mma` with B = identity returns A: for `.f16` in every shape — the fragments that hold
/// their matrix twice (m16n16k16) or four times (m8n32k16's A, m32n8k16's B) over the warp
/// included — and for `.s8`, with A from global memory and a padded stride.
#[test]
fn mma_with_an_identity_returns_the_other_operand() {
    for (shape, m, n, k) in [
        ("m16n16k16", 16, 16, 16),
        ("m32n8k16", 32, 8, 16),
        ("m8n32k16", 8, 32, 16),
    ] {
        // A (m×k, row-major, stride 24 f16) from in0; B (k×n identity where defined) from
        // in1 row-major; C zero (the register %f31 = 0); D f32 row-major to out.
        let c0 = "%f31, ".repeat(8);
        let body = format!(
            "
 mov.f32 %f31, 0f00000000;
 wmma.load.a.sync.aligned.row.{shape}.global.f16 {{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}}, [%in0], 24;
 wmma.load.b.sync.aligned.row.{shape}.global.f16 {{%r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15}}, [%in1];
 wmma.mma.sync.aligned.row.row.{shape}.f32.f32 {{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}}, {{%r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15}}, {{{}}};
 wmma.store.d.sync.aligned.row.{shape}.global.f32 [%out], {{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}};
",
            c0.trim_end_matches(", ")
        );
        let ptx = module("sm_80", "", &body);
        ptxas_accepts(&ptx, "sm_80");
        let f16 = |v: f32| half::f16::from_f32(v).to_bits();
        let a: Vec<u16> = (0..m * 24)
            .map(|i| f16(((i / 24) * 3 + (i % 24)) as f32 % 61.0 - 30.0))
            .collect();
        let b: Vec<u16> = (0..k * n)
            .map(|i| f16(if i / n == i % n { 1.0 } else { 0.0 }))
            .collect();
        let pack = |v: &[u16]| -> Vec<u32> {
            v.chunks(2)
                .map(|p| p[0] as u32 | (p[1] as u32) << 16)
                .collect()
        };
        let out = run(&ptx, 32, &pack(&a), &pack(&b), m * n);
        for r in 0..m {
            for c in 0..n {
                let want = if c < k {
                    ((r * 3 + c) as f32 % 61.0) - 30.0
                } else {
                    0.0
                };
                assert_eq!(f32::from_bits(out[r * n + c]), want, "{shape} ({r}, {c})");
            }
        }
    }
}

#[test]
fn undefined_wmma_uses_fault() {
    let load = |addr: &str, stride: &str| {
        format!(
            "wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}}, [{addr}]{stride};"
        )
    };
    // A partial warp.
    faults(
        &module("sm_80", "", &load("%out", "")),
        16,
        "all 32 threads",
    );
    // A base not 32-byte aligned (the fragment is 32 bytes), and rows 12 bytes apart.
    faults(
        &module("sm_80", "", &load("%out+16", "")),
        32,
        "aligned to 32",
    );
    faults(
        &module("sm_80", "", &load("%out", ", 3")),
        32,
        "wmma stride 3",
    );
    // Local memory.
    let local = ".local .align 32 .b8 lb[1024];\n mov.u64 %rd1, lb;\n cvta.local.u64 %rd1, %rd1;\n";
    let generic = load("%rd1", "").replace(".global", "");
    faults(
        &module("sm_80", "", &format!("{local} {generic}")),
        32,
        "global or shared",
    );
}

#[test]
fn malformed_wmma_forms_are_load_errors() {
    for (body, what) in [
        (
            "wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r0, %r1, %r2, %r3}, [%out];",
            "has 8 registers, not 4",
        ),
        (
            "wmma.mma.sync.aligned.row.col.m16n16k16.f16.bf16.bf16.f32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9, %r10, %r11}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};",
            "combination",
        ),
        (
            "wmma.load.a.sync.aligned.col.m8n8k32.s4 {%r0}, [%out];",
            "sub-byte A must be `.row`",
        ),
        (
            "wmma.load.a.sync.aligned.row.m16n16k8.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%out];",
            "combination",
        ),
        (
            "wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r2}, {%r3}, {%r4, %r5};",
            "`.xor.popc` or `.and.popc`",
        ),
    ] {
        rejects(&module("sm_80", "", body), what);
    }
}
