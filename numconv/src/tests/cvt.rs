//! cvt conformance tables over every source/destination pair.

use ::half::{bf16, f16};
use proptest::prelude::*;

use crate::cvt::*;
use crate::reference::{self, RefFloat};
use crate::IntRounding::{self, *};
use crate::Rounding::{self, *};
use crate::ScalarKind::{self, *};

const INTS: [ScalarKind; 8] = [S8, S16, S32, S64, U8, U16, U32, U64];
const FLOATS: [ScalarKind; 4] = [F16, Bf16, F32, F64];

fn m(rnd: CvtRounding) -> CvtMods {
    CvtMods {
        rnd,
        ..CvtMods::default()
    }
}
fn fr(r: Rounding) -> CvtMods {
    m(CvtRounding::Float(r))
}
fn ir(r: IntRounding) -> CvtMods {
    m(CvtRounding::Int(r))
}
fn sat() -> CvtMods {
    CvtMods {
        sat: true,
        ..CvtMods::default()
    }
}
fn f32b(x: f32) -> u64 {
    x.to_bits() as u64
}

#[test]
fn int_to_int_truncates_or_saturates() {
    assert_eq!(cvt(300, S32, U8, m(CvtRounding::None)), 44);
    assert_eq!(cvt(300, S32, U8, sat()), 255);
    assert_eq!(cvt(-5i64 as u64, S32, U8, sat()), 0);
    assert_eq!(cvt(-5i64 as u64, S32, U8, m(CvtRounding::None)), 251);
    assert_eq!(cvt(0x80, U8, S8, m(CvtRounding::None)) as i64, -128);
    assert_eq!(cvt(0x80, U8, S8, sat()), 127);
    assert_eq!(cvt(0xff, S8, S32, m(CvtRounding::None)) as i64, -1); // sign extension
    assert_eq!(cvt(0xff, U8, S32, m(CvtRounding::None)), 255);
    assert_eq!(cvt(0xffff_ffff, U32, S32, m(CvtRounding::None)) as i64, -1);
    assert_eq!(cvt(0xffff_ffff, U32, S32, sat()), i32::MAX as u64);
    assert_eq!(cvt(u64::MAX, U64, S64, sat()), i64::MAX as u64);
    assert_eq!(cvt(i64::MIN as u64, S64, U64, sat()), 0);
    assert_eq!(
        cvt(i64::MIN as u64, S64, S16, sat()) as i64,
        i16::MIN as i64
    );
    assert_eq!(
        cvt(0x1_2345_6789, S64, U32, m(CvtRounding::None)),
        0x2345_6789
    );
    assert_eq!(cvt(-1i64 as u64, S16, U64, m(CvtRounding::None)), u64::MAX);
    // Every pair round-trips small positive values.
    for from in INTS {
        for to in INTS {
            assert_eq!(
                cvt(100, from, to, m(CvtRounding::None)),
                100,
                "{from:?}->{to:?}"
            );
        }
    }
}

#[test]
fn float_to_int_rounding_saturation_nan() {
    let cases: [(f32, IntRounding, i32); 12] = [
        (2.5, Rni, 2),
        (3.5, Rni, 4),
        (-2.5, Rni, -2),
        (2.7, Rzi, 2),
        (-2.7, Rzi, -2),
        (-2.2, Rmi, -3),
        (2.2, Rpi, 3),
        (-0.5, Rpi, 0),
        (3e9, Rzi, i32::MAX),
        (-3e9, Rzi, i32::MIN),
        (f32::INFINITY, Rni, i32::MAX),
        (f32::NAN, Rni, 0),
    ];
    for (x, r, want) in cases {
        assert_eq!(cvt_f32_to_s32(x, r, false), want, "{x} {r:?}");
        assert_eq!(
            cvt(f32b(x), F32, S32, ir(r)) as i64,
            want as i64,
            "{x} {r:?} generic"
        );
    }
    assert_eq!(cvt_f32_to_u32(-1.0, Rzi, false), 0);
    assert_eq!(cvt_f32_to_u32(5e9, Rzi, false), u32::MAX);
    assert_eq!(cvt_f32_to_u32(f32::NAN, Rzi, false), 0);
    assert_eq!(cvt_f64_to_s64(1e300, Rni), i64::MAX);
    assert_eq!(cvt_f64_to_s64(-1e300, Rni), i64::MIN);
    assert_eq!(cvt_f64_to_u64(2f64.powi(64), Rni), u64::MAX);
    assert_eq!(cvt_f64_to_u64(2f64.powi(63), Rni), 1 << 63);
    assert_eq!(cvt_f64_to_s32(-2147483648.9, Rzi), i32::MIN);
    assert_eq!(cvt(f32b(300.0), F32, U8, ir(Rni)), 255);
    assert_eq!(cvt(f32b(-300.0), F32, S8, ir(Rni)) as i64, -128);
    assert_eq!(cvt(f32b(-1.0), F32, U16, ir(Rni)), 0);
    assert_eq!(
        cvt(f16::from_f32(65504.0).to_bits() as u64, F16, S16, ir(Rni)),
        i16::MAX as u64
    );
    assert_eq!(cvt(f16::NAN.to_bits() as u64, F16, U32, ir(Rni)), 0);
    assert_eq!(
        cvt(bf16::from_f32(-7.5).to_bits() as u64, Bf16, S64, ir(Rmi)) as i64,
        -8
    );
    // ftz: a subnormal rounds up to 1 under .rpi unless flushed.
    let s = f32::from_bits(1);
    assert_eq!(cvt_f32_to_s32(s, Rpi, false), 1);
    assert_eq!(cvt_f32_to_s32(s, Rpi, true), 0);
    // Missing modifier defaults to truncation.
    assert_eq!(cvt(f32b(-2.7), F32, S32, m(CvtRounding::None)) as i64, -2);
}

#[test]
fn int_to_float_rounding() {
    // 2^24 + 1 is not representable in f32.
    let x = (1 << 24) + 1;
    assert_eq!(cvt_s32_to_f32(x, Rn), 16777216.0);
    assert_eq!(cvt_s32_to_f32(x, Rz), 16777216.0);
    assert_eq!(cvt_s32_to_f32(x, Rp), 16777218.0);
    assert_eq!(cvt_s32_to_f32(-x, Rm), -16777218.0);
    assert_eq!(cvt_s32_to_f32(-x, Rz), -16777216.0);
    assert_eq!(cvt_s32_to_f32(i32::MIN, Rz), -2147483648.0);
    assert_eq!(cvt_u32_to_f32(u32::MAX, Rz), 4294967040.0);
    assert_eq!(cvt_u32_to_f32(u32::MAX, Rn), 4294967296.0);
    assert_eq!(cvt_u64_to_f64(u64::MAX, Rz), 18446744073709549568.0);
    assert_eq!(cvt_u64_to_f64(u64::MAX, Rn), 18446744073709551616.0);
    assert_eq!(cvt_s64_to_f64(i64::MIN, Rp), -9223372036854775808.0);
    assert_eq!(cvt_s64_to_f64((1 << 53) + 1, Rp), 9007199254740994.0);
    // To f16: 65520 is the overflow threshold under rn; 70000 overflows.
    let g = |v: u64, from, r| cvt(v, from, F16, fr(r));
    assert_eq!(g(65519, U32, Rn), 0x7bff);
    assert_eq!(g(65520, U32, Rn), 0x7c00);
    assert_eq!(g(70000, U32, Rz), 0x7bff);
    assert_eq!(g(70000, U32, Rp), 0x7c00);
    assert_eq!(g(-70000i64 as u64, S32, Rp), 0xfbff);
    assert_eq!(g(2049, U16, Rn), 0x6800); // 2048 (tie to even)
    assert_eq!(g(2051, U16, Rn), 0x6802); // 2052
    assert_eq!(g(0, S32, Rm), 0);
    assert_eq!(
        cvt(257, U32, Bf16, fr(Rp)),
        bf16::from_f32(258.0).to_bits() as u64
    );
    assert_eq!(
        cvt(257, U32, Bf16, fr(Rn)),
        bf16::from_f32(256.0).to_bits() as u64
    );
    // .sat on a float destination.
    let s = CvtMods {
        sat: true,
        ..fr(Rn)
    };
    assert_eq!(cvt(5, S32, F32, s), f32b(1.0));
    assert_eq!(cvt(-5i64 as u64, S32, F32, s), 0);
}

#[test]
fn float_to_float() {
    // Narrowing f64 → f32 with each mode.
    let x = 1.0 + 2f64.powi(-30);
    let up = f32::from_bits(0x3f80_0001);
    assert_eq!(cvt_f64_to_f32(x, Rn, false, false), 1.0);
    assert_eq!(cvt_f64_to_f32(x, Rz, false, false), 1.0);
    assert_eq!(cvt_f64_to_f32(x, Rp, false, false), up);
    assert_eq!(cvt_f64_to_f32(-x, Rm, false, false), -up);
    assert_eq!(cvt_f64_to_f32(1e300, Rz, false, false), f32::MAX);
    assert_eq!(cvt_f64_to_f32(1e300, Rn, false, false), f32::INFINITY);
    assert_eq!(cvt_f64_to_f32(-1e300, Rp, false, false), -f32::MAX);
    assert_eq!(cvt_f64_to_f32(1e-300, Rp, false, false), f32::from_bits(1));
    assert_eq!(cvt_f64_to_f32(1e-300, Rp, true, false), 0.0);
    assert_eq!(
        cvt_f64_to_f32(-1e-300, Rm, false, false),
        -f32::from_bits(1)
    );
    assert_eq!(
        cvt_f64_to_f32(-1e-300, Rz, false, false).to_bits(),
        0x8000_0000
    );
    assert_eq!(cvt_f64_to_f32(1.5, Rn, false, true), 1.0);
    assert_eq!(cvt_f64_to_f32(f64::NAN, Rn, false, true), 0.0);
    assert_eq!(
        cvt_f64_to_f32(f64::NAN, Rz, false, false).to_bits(),
        0x7fff_ffff
    );
    assert_eq!(
        cvt_f64_to_f32(f64::NEG_INFINITY, Rz, false, false),
        f32::NEG_INFINITY
    );
    // Widening is exact; NaN canonical; ftz on an f32 source.
    let s = f32::from_bits(1);
    assert_eq!(cvt_f32_to_f64(s, false), 2f64.powi(-149));
    assert_eq!(cvt_f32_to_f64(-s, true).to_bits(), (-0.0f64).to_bits());
    assert_eq!(
        cvt_f32_to_f64(f32::NAN, false).to_bits(),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(cvt_f16_to_f32(f16::from_bits(0x0001)), 2f32.powi(-24));
    assert_eq!(cvt_f16_to_f32(f16::NAN).to_bits(), 0x7fff_ffff);
    assert_eq!(
        cvt_bf16_to_f32(bf16::from_bits(0x3f81)),
        1.0 + 2f32.powi(-7)
    );
    // f32 → f16 / bf16 with modes and relu.
    assert_eq!(
        cvt_f32_to_f16(1.0 + 2f32.powi(-11), Rn, false).to_bits(),
        0x3c00
    );
    assert_eq!(
        cvt_f32_to_f16(1.0 + 2f32.powi(-11), Rp, false).to_bits(),
        0x3c01
    );
    assert_eq!(cvt_f32_to_f16(1e6, Rz, false).to_bits(), 0x7bff);
    assert_eq!(cvt_f32_to_f16(1e-10, Rn, false).to_bits(), 0);
    assert_eq!(cvt_f32_to_f16(1e-10, Rp, false).to_bits(), 1);
    assert_eq!(cvt_f32_to_f16(-3.0, Rn, true).to_bits(), 0);
    assert_eq!(cvt_f32_to_f16(f32::NAN, Rn, true).to_bits(), 0x7fff);
    assert_eq!(
        cvt_f32_to_bf16(1.0 + 2f32.powi(-8), Rn, false).to_bits(),
        0x3f80
    );
    assert_eq!(
        cvt_f32_to_bf16(1.0 + 2f32.powi(-8) + 2f32.powi(-20), Rn, false).to_bits(),
        0x3f81
    );
    assert_eq!(cvt_f32_to_bf16(f32::MAX, Rn, false), bf16::INFINITY);
    assert_eq!(cvt_f32_to_bf16(f32::MAX, Rz, false), bf16::MAX);
    assert_eq!(cvt_f32_to_bf16(-1.0, Rn, true).to_bits(), 0);
    // Packed: a in the upper half.
    assert_eq!(cvt_rn_f16x2_f32(1.0, 2.0, false), 0x3c00_4000);
    assert_eq!(cvt_rn_f16x2_f32(-1.0, 2.0, true), 0x0000_4000);
    assert_eq!(cvt_rn_bf16x2_f32(1.0, -2.0, false), 0x3f80_c000);
    // tf32: 10 fraction bits, ties away from zero.
    assert_eq!(cvt_rna_tf32_f32(f32::from_bits(0x3f80_1000)), 0x3f80_2000);
    assert_eq!(cvt_rna_tf32_f32(f32::from_bits(0x3f80_0fff)), 0x3f80_0000);
    assert_eq!(cvt_rna_tf32_f32(f32::from_bits(0xbf80_1000)), 0xbf80_2000);
    assert_eq!(cvt_rna_tf32_f32(f32::NAN), 0x7fff_ffff);
}

#[test]
fn float_to_same_float_round_integral() {
    let g = |x: f32, r| f32::from_bits(cvt(f32b(x), F32, F32, ir(r)) as u32);
    assert_eq!(g(2.5, Rni), 2.0);
    assert_eq!(g(-2.5, Rni), -2.0);
    assert_eq!(g(2.5, Rpi), 3.0);
    assert_eq!(g(-2.5, Rmi), -3.0);
    assert_eq!(g(-2.5, Rzi), -2.0);
    assert_eq!(g(-0.3, Rzi).to_bits(), 0x8000_0000);
    assert_eq!(g(1e30, Rni), 1e30);
    assert_eq!(g(f32::INFINITY, Rni), f32::INFINITY);
    assert_eq!(g(f32::NAN, Rni).to_bits(), 0x7fff_ffff);
    let d = cvt(2.5f64.to_bits(), F64, F64, ir(Rni));
    assert_eq!(f64::from_bits(d), 2.0);
    let h = cvt(f16::from_f32(2.5).to_bits() as u64, F16, F16, ir(Rpi));
    assert_eq!(h, f16::from_f32(3.0).to_bits() as u64);
    // Plain same-type cvt with .ftz / .sat.
    let ftz = CvtMods {
        ftz: true,
        ..CvtMods::default()
    };
    assert_eq!(cvt(1, F32, F32, ftz), 0);
    assert_eq!(cvt(f32b(7.0), F32, F32, sat()), f32b(1.0));
    assert_eq!(cvt(f32b(-0.0), F32, F32, sat()), 0);
}

#[test]
fn every_pair_converts_small_values() {
    let all: Vec<ScalarKind> = INTS.iter().chain(FLOATS.iter()).copied().collect();
    let encode = |k: ScalarKind, v: i64| -> u64 {
        match k {
            F16 => f16::from_f64(v as f64).to_bits() as u64,
            Bf16 => bf16::from_f64(v as f64).to_bits() as u64,
            F32 => f32b(v as f32),
            F64 => (v as f64).to_bits(),
            _ => v as u64,
        }
    };
    for from in &all {
        for to in &all {
            for v in [0i64, 1, 7, 100] {
                let got = cvt(encode(*from, v), *from, *to, CvtMods::default());
                let want = encode(*to, v)
                    & if to.bits() == 64 {
                        u64::MAX
                    } else {
                        (1 << to.bits()) - 1
                    };
                let got = got
                    & if to.bits() == 64 {
                        u64::MAX
                    } else {
                        (1 << to.bits()) - 1
                    };
                assert_eq!(got, want, "{from:?} -> {to:?} of {v}");
            }
            if from.is_signed_int() && to.is_signed_int() || from.is_float() && to.is_float() {
                let got = cvt(encode(*from, -3), *from, *to, CvtMods::default());
                let mask = if to.bits() == 64 {
                    u64::MAX
                } else {
                    (1 << to.bits()) - 1
                };
                assert_eq!(
                    got & mask,
                    encode(*to, -3) & mask,
                    "{from:?} -> {to:?} of -3"
                );
            }
        }
    }
}

/// Every pair of adjacent finite f16 and bf16 values (and MAX with the overflow
/// threshold): f64 → half conversion of the midpoint and of its two f64 neighbours, in
/// every mode and both signs. Rounding through f32 first (the F16C path of `half`'s
/// `from_f64`) or dropping sticky bits turns "just above the tie" into the tie itself,
/// which this catches.
#[test]
fn near_ties_round_to_the_right_neighbour() {
    for (to, max_bits, beyond_max, value) in [
        (
            F16,
            0x7bffu16,
            65536.0,
            (|b| f16::from_bits(b).to_f64()) as fn(u16) -> f64,
        ),
        (Bf16, 0x7f7f, 2f64.powi(128), |b| {
            bf16::from_bits(b).to_f64()
        }),
    ] {
        for lo in 0..=max_bits {
            let hi = lo + 1;
            // Past MAX the "next value" is 2^(emax+1), and it rounds to infinity (`hi`).
            let hi_value = if lo == max_bits {
                beyond_max
            } else {
                value(hi)
            };
            let mid = (value(lo) + hi_value) / 2.0; // exact: one bit more than the format
            for (x, rn) in [
                (mid.next_down(), lo),
                (mid, if lo % 2 == 0 { lo } else { hi }),
                (mid.next_up(), hi),
            ] {
                for (rnd, want) in [(Rn, rn), (Rz, lo), (Rm, lo), (Rp, hi)] {
                    let got = cvt(x.to_bits(), F64, to, fr(rnd)) as u16;
                    assert_eq!(got, want, "{x:e} -> {to:?} {rnd:?}");
                    let mirrored = match rnd {
                        Rm => Rp,
                        Rp => Rm,
                        r => r,
                    };
                    let got = cvt((-x).to_bits(), F64, to, fr(mirrored)) as u16;
                    assert_eq!(got, want | 0x8000, "{:e} -> {to:?} {mirrored:?}", -x);
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn prop_s64_to_f32_modes_bracket(x in any::<i64>()) {
        // Directed results bracket the value and are adjacent or equal.
        let lo = f32::from_bits(cvt(x as u64, S64, F32, fr(Rm)) as u32);
        let hi = f32::from_bits(cvt(x as u64, S64, F32, fr(Rp)) as u32);
        let exact = x as i128;
        prop_assert!((lo as f64) as i128 <= exact && exact <= (hi as f64) as i128);
        prop_assert!(lo == hi || lo.next_up() == hi);
        let rn = f32::from_bits(cvt(x as u64, S64, F32, fr(Rn)) as u32);
        prop_assert_eq!(rn, x as f32);
    }

    /// f64 → f16 and f64 → bf16 in every rounding mode against the exact reference, with
    /// exponents spanning each type's subnormals, normals and overflow. (`half`'s own
    /// `from_f64` is no oracle: on x86 with F16C it rounds through f32.)
    #[test]
    fn prop_f64_to_half_types_vs_exact(
        frac in any::<u64>(),
        neg in any::<bool>(),
        e16 in -28i32..18,
        eb16 in -137i32..130,
        rnd in prop::sample::select(vec![Rn, Rz, Rm, Rp]),
    ) {
        let x = |e: i32| {
            let v = f64::from_bits(((1023 + e) as u64) << 52 | frac >> 12);
            if neg { -v } else { v }
        };
        let (a, b) = (x(e16), x(eb16));
        let want16: f16 = reference::round_ref(&a.exact(), rnd);
        let wantb: bf16 = reference::round_ref(&b.exact(), rnd);
        prop_assert_eq!(cvt(a.to_bits(), F64, F16, fr(rnd)) as u16, want16.to_bits());
        prop_assert_eq!(cvt(b.to_bits(), F64, Bf16, fr(rnd)) as u16, wantb.to_bits());
    }

    #[test]
    fn prop_f32_to_int_matches_rust_saturating(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assert_eq!(cvt(bits as u64, F32, S32, ir(Rzi)) as i32, x as i32);
        prop_assert_eq!(cvt(bits as u64, F32, U16, ir(Rmi)) as u16, x.floor() as u16);
        prop_assert_eq!(cvt(bits as u64, F32, S8, ir(Rpi)) as i8, x.ceil() as i8);
    }
}
