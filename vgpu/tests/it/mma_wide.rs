//! `mma` with one element per register — `.tf32` (m16n8k4, m16n8k8; sm_80) and `.f64`
//! (m8n8k4, sm_80; m16n8k4, k8, k16, sm_90) — and with 8-bit floats (`.e4m3`/`.e5m2`,
//! m16n8k32, sm_89). Fragments are packed on the host from the layouts as the PTX ISA
//! writes them (§9.7.14.5, "Matrix Fragments for mma.m8n8k4 with .f64", "…mma.m16n8k4",
//! "…mma.m16n8k8", "…mma.m16n8k16 with floating point type"), spelled out here per shape
//! and not shared with the executor, and D is compared with a host GEMM. Inputs are small
//! integers (exact in every format and every partial sum), plus `.f64` values whose
//! result depends on fused, in-order accumulation.

use crate::conformance::{module, ptxas_accepts, run};

/// (row, column) of A element `i` of `lane` (M×K), per the ISA's text for each shape.
fn a_at(m: usize, k: usize, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (m, k) {
        (8, 4) => (lane >> 2, lane % 4),
        (16, 4) => (if i == 0 { g } else { g + 8 }, t),
        (16, 8) => (
            if i == 0 || i == 2 { g } else { g + 8 },
            if i < 2 { t } else { t + 4 },
        ),
        // m16n8k16 .f64: row g for even i, g+8 otherwise; col 2i+t for even i, 2i-2+t
        // otherwise.
        _ => (
            if i.is_multiple_of(2) { g } else { g + 8 },
            if i.is_multiple_of(2) {
                i * 2 + t
            } else {
                i * 2 - 2 + t
            },
        ),
    }
}

/// (row, column) of B element `i` (K×8).
fn b_at(m: usize, k: usize, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (m, k) {
        (8, 4) => (lane % 4, lane >> 2),
        (16, 4) => (t, g),
        (16, 8) => (if i == 0 { t } else { t + 4 }, g),
        _ => (t + i * 4, g),
    }
}

/// (row, column) of C/D element `i` (M×8).
fn c_at(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
}

/// Runs one `mma` of shape m×8×k on `.f64` (`wide`) or `.tf32` operands and returns D.
#[allow(clippy::too_many_arguments)]
fn run_wide(
    arch: &str,
    m: usize,
    k: usize,
    wide: bool,
    rnd: &str,
    a: &[f64],
    b: &[f64],
    c: &[f64],
) -> Vec<f64> {
    let (na, nb, nc) = (m * k / 32, k * 8 / 32, m * 8 / 32);
    let (file, ld, st, size) = if wide {
        ("fd", "f64", "f64", 8)
    } else {
        ("f", "f32", "f32", 4)
    };
    let list = |pre: &str, n: usize, off: usize| {
        (0..n)
            .map(|i| format!("%{pre}{}", off + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A and B of `.tf32` are `.b32` registers, loaded as such.
    let (abfile, abld) = if wide { ("fd", "f64") } else { ("r", "b32") };
    let mut body = String::from(
        " .reg .f64 %fd<64>;\n mul.wide.u32 %t64, %tx, 256;\n add.s64 %rd1, %in0, %t64;\n",
    );
    for (j, (f, l)) in (0..na)
        .map(|_| (abfile, abld))
        .chain((0..nb).map(|_| (abfile, abld)))
        .enumerate()
    {
        body += &format!(" ld.global.{l} %{f}{j}, [%rd1+{}];\n", j * 8);
    }
    for j in 0..nc {
        body += &format!(
            " ld.global.{ld} %{file}{}, [%rd1+{}];\n",
            40 + j,
            (16 + j) * 8
        );
    }
    let (ty, cty) = if wide {
        ("f64", "f64")
    } else {
        ("tf32", "f32")
    };
    body += &format!(
        " mma.sync.aligned.m{m}n8k{k}.row.col{rnd}.{cty}.{ty}.{ty}.{cty} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n",
        list(file, nc, 50),
        list(abfile, na, 0),
        list(abfile, nb, na),
        list(file, nc, 40)
    );
    body += " mul.wide.u32 %t64, %tx, 32;\n add.s64 %rd2, %out, %t64;\n";
    for j in 0..nc {
        body += &format!(" st.global.{st} [%rd2+{}], %{file}{};\n", j * size, 50 + j);
    }
    let ptx = module(arch, "", &body);
    ptxas_accepts(&ptx, arch);
    // Per lane 32 slots of 8 bytes: A, then B, then C at slot 16.
    let enc = |v: f64| -> u64 {
        if wide {
            v.to_bits()
        } else {
            (v as f32).to_bits() as u64
        }
    };
    let mut input = vec![0u32; 32 * 64];
    for lane in 0..32 {
        let mut put = |slot: usize, v: u64| {
            input[lane * 64 + 2 * slot] = v as u32;
            input[lane * 64 + 2 * slot + 1] = (v >> 32) as u32;
        };
        for i in 0..na {
            let (r, col) = a_at(m, k, lane, i);
            put(i, enc(a[r * k + col]));
        }
        for i in 0..nb {
            let (r, col) = b_at(m, k, lane, i);
            put(na + i, enc(b[r * 8 + col]));
        }
        for i in 0..nc {
            let (r, col) = if m == 8 {
                (lane >> 2, (lane % 4) * 2 + i)
            } else {
                c_at(lane, i)
            };
            put(16 + i, enc(c[r * 8 + col]));
        }
    }
    let out = run(&ptx, 32, &input, &[], 32 * 8);
    let mut d = vec![f64::NAN; m * 8];
    for lane in 0..32 {
        for i in 0..nc {
            let (r, col) = if m == 8 {
                (lane >> 2, (lane % 4) * 2 + i)
            } else {
                c_at(lane, i)
            };
            d[r * 8 + col] = if wide {
                let lo = out[lane * 8 + 2 * i] as u64;
                let hi = out[lane * 8 + 2 * i + 1] as u64;
                f64::from_bits(lo | hi << 32)
            } else {
                f32::from_bits(out[lane * 8 + i]) as f64
            };
        }
    }
    d
}

fn gemm(m: usize, k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    (0..m * 8)
        .map(|e| {
            c[e] + (0..k)
                .map(|x| a[(e / 8) * k + x] * b[x * 8 + e % 8])
                .sum::<f64>()
        })
        .collect()
}

fn inputs(m: usize, k: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let a = (0..m * k)
        .map(|e| ((e / k * 5 + e % k * 3) % 11) as f64 - 5.0)
        .collect();
    let b = (0..k * 8)
        .map(|e| ((e / 8 * 7 + e % 8) % 9) as f64 - 4.0)
        .collect();
    let c = (0..m * 8).map(|e| (e % 13) as f64 - 6.0).collect();
    (a, b, c)
}

#[test]
fn mma_tf32_and_f64_every_shape() {
    for (arch, m, k, wide) in [
        ("sm_80", 16, 4, false),
        ("sm_80", 16, 8, false),
        ("sm_80", 8, 4, true),
        ("sm_90", 16, 4, true),
        ("sm_90", 16, 8, true),
        ("sm_90", 16, 16, true),
    ] {
        let (a, b, c) = inputs(m, k);
        let got = run_wide(arch, m, k, wide, "", &a, &b, &c);
        assert_eq!(got, gemm(m, k, &a, &b, &c), "m{m}n8k{k} wide={wide}");
    }
}

/// `.f64` accumulates with fused multiply-adds in order of k: with a = (1, 2^-60, ...),
/// b = (1, 1, ...) and c = -1, a rounding after each product would still be exact here,
/// but the order is visible: (c + 1) + 2^-60 = 2^-60, while c + (1 + 2^-60) = 0. And the
/// rounding mode applies to each step: 1 + 2^-60 rounds up to 1 + 2^-52 under `.rp`.
#[test]
fn mma_f64_accumulates_in_order_with_the_rounding_mode() {
    let (m, k) = (8, 4);
    let mut a = vec![0.0; m * k];
    let mut b = vec![0.0; k * 8];
    let mut c = vec![0.0; m * 8];
    (a[0], a[1], b[0], b[8], c[0]) = (1.0, 2f64.powi(-60), 1.0, 1.0, -1.0);
    // Row 1: c = 1, a = (2^-60, 0, ..): 1 + 2^-60 rounds to 1 (rn) or 1 + 2^-52 (rp).
    (a[k], c[8]) = (2f64.powi(-60), 1.0);
    let got = run_wide("sm_80", m, k, true, "", &a, &b, &c);
    assert_eq!((got[0], got[8]), (2f64.powi(-60), 1.0));
    let got = run_wide("sm_80", m, k, true, ".rp", &a, &b, &c);
    assert_eq!((got[0], got[8]), (2f64.powi(-60), 1.0 + 2f64.powi(-52)));
    let got = run_wide("sm_80", m, k, true, ".rm", &a, &b, &c);
    assert_eq!(got[8], 1.0);
}

/// `.e4m3`/`.e5m2` m16n8k32 (sm_89), the 8-bit layout (A: rows g, g+8 in groups of four
/// elements, columns 4t.. and 16+4t..; B: rows 4t.. and 16+4t..), f32 accumulators; and
/// mixed formats.
#[test]
fn mma_fp8_m16n8k32() {
    use fencehound_vgpu::arith::cvt::{to_fp8, Fp8};
    let e4m3 = |v: f64| -> u32 { to_fp8(v, Fp8::E4m3, false) as u32 };
    let e5m2 = |v: f64| -> u32 { to_fp8(v, Fp8::E5m2, false) as u32 };
    for (at, bt) in [("e4m3", "e4m3"), ("e5m2", "e4m3"), ("e5m2", "e5m2")] {
        let (m, k) = (16, 32);
        let a: Vec<f64> = (0..m * k)
            .map(|e| ((e / k + e % k * 3) % 7) as f64 - 3.0)
            .collect();
        let b: Vec<f64> = (0..k * 8)
            .map(|e| ((e / 8 * 5 + e % 8) % 7) as f64 - 3.0)
            .collect();
        let c: Vec<f64> = (0..m * 8).map(|e| (e % 9) as f64 - 4.0).collect();
        let enc = |t: &str, v: f64| if t == "e4m3" { e4m3(v) } else { e5m2(v) };
        let body = format!(
            "
 mul.wide.u32 %t64, %tx, 64;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 {{%r0, %r1, %r2, %r3}}, [%rd1];
 ld.global.v2.u32 {{%r4, %r5}}, [%rd1+16];
 ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [%rd1+32];
 mma.sync.aligned.m16n8k32.row.col.f32.{at}.{bt}.f32 {{%f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, {{%f0, %f1, %f2, %f3}};
 mul.wide.u32 %t64, %tx, 16;
 add.s64 %rd2, %out, %t64;
 st.global.v4.f32 [%rd2], {{%f4, %f5, %f6, %f7}};
"
        );
        // 8-bit floating-point `mma` needs PTX ISA 8.4.
        let ptx = module("sm_89", "", &body).replace(".version 8.0", ".version 8.4");
        ptxas_accepts(&ptx, "sm_89");
        let mut input = vec![0u32; 32 * 16];
        for lane in 0..32 {
            let (g, t) = (lane >> 2, lane % 4);
            for i in 0..16 {
                // ISA (8-bit m16n8k32): row g for i < 4 or 8 <= i < 12, else g+8; col
                // 4t + (i & 3) for i < 8, else 16 + 4t + (i & 3).
                let row = if i < 4 || (8..12).contains(&i) {
                    g
                } else {
                    g + 8
                };
                let col = t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 };
                input[lane * 16 + i / 4] |= enc(at, a[row * k + col]) << (8 * (i % 4));
            }
            for i in 0..8 {
                let row = t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 };
                input[lane * 16 + 4 + i / 4] |= enc(bt, b[row * 8 + g]) << (8 * (i % 4));
            }
            for i in 0..4 {
                let (r, col) = c_at(lane, i);
                input[lane * 16 + 8 + i] = (c[r * 8 + col] as f32).to_bits();
            }
        }
        let out = run(&ptx, 32, &input, &[], 32 * 4);
        let want = gemm(m, k, &a, &b, &c);
        for lane in 0..32 {
            for i in 0..4 {
                let (r, col) = c_at(lane, i);
                assert_eq!(
                    f32::from_bits(out[lane * 4 + i]) as f64,
                    want[r * 8 + col],
                    "{at}.{bt} ({r}, {col})"
                );
            }
        }
    }
}

/// `.e4m3` m16n8k32 with `.f16` accumulators (PTX ISA 8.7): C and D are two `.f16x2`
/// registers in the C/D layout.
#[test]
fn mma_fp8_with_f16_accumulators() {
    use fencehound_vgpu::arith::cvt::{to_fp8, Fp8};
    let (m, k) = (16, 32);
    let a: Vec<f64> = (0..m * k)
        .map(|e| ((e / k * 2 + e % k) % 5) as f64 - 2.0)
        .collect();
    let b: Vec<f64> = (0..k * 8)
        .map(|e| ((e / 8 + e % 8 * 3) % 5) as f64 - 2.0)
        .collect();
    let c: Vec<f64> = (0..m * 8).map(|e| (e % 7) as f64 - 3.0).collect();
    let body = "
 mul.wide.u32 %t64, %tx, 64;
 add.s64 %rd1, %in0, %t64;
 ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd1];
 ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+16];
 mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r8, %r9}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6, %r7};
 mul.wide.u32 %t64, %tx, 8;
 add.s64 %rd2, %out, %t64;
 st.global.v2.u32 [%rd2], {%r8, %r9};
";
    let ptx = module("sm_89", "", body).replace(".version 8.0", ".version 8.7");
    ptxas_accepts(&ptx, "sm_89");
    let h = |v: f64| half::f16::from_f64(v).to_bits() as u32;
    let mut input = vec![0u32; 32 * 16];
    for lane in 0..32 {
        let (g, t) = (lane >> 2, lane % 4);
        for i in 0..16 {
            let row = if i < 4 || (8..12).contains(&i) {
                g
            } else {
                g + 8
            };
            let col = t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 };
            input[lane * 16 + i / 4] |=
                (to_fp8(a[row * k + col], Fp8::E4m3, false) as u32) << (8 * (i % 4));
        }
        for i in 0..8 {
            let row = t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 };
            input[lane * 16 + 4 + i / 4] |=
                (to_fp8(b[row * 8 + g], Fp8::E4m3, false) as u32) << (8 * (i % 4));
        }
        for i in 0..4 {
            let (r, col) = c_at(lane, i);
            input[lane * 16 + 6 + i / 2] |= h(c[r * 8 + col]) << (16 * (i % 2));
        }
    }
    let out = run(&ptx, 32, &input, &[], 32 * 2);
    let want = gemm(m, k, &a, &b, &c);
    for lane in 0..32 {
        for i in 0..4 {
            let (r, col) = c_at(lane, i);
            let got = half::f16::from_bits((out[lane * 2 + i / 2] >> (16 * (i % 2))) as u16);
            assert_eq!(got.to_f64(), want[r * 8 + col], "({r}, {col})");
        }
    }
}
