//! `.f32`/`.f64` arithmetic: edge-case tables and property tests against the exact
//! rational reference for every rounding mode.

use proptest::prelude::*;

use crate::arith::float::*;
use crate::arith::Rounding::{self, *};
use crate::arith::{CANONICAL_NAN_F32, CANONICAL_NAN_F64};
use fencehound_numconv::reference;

const MODES: [Rounding; 4] = [Rn, Rz, Rm, Rp];
const MIN_SUB32: f32 = f32::from_bits(1);
const MIN_NORM32: f32 = f32::MIN_POSITIVE;

fn b32(x: f32) -> u32 {
    x.to_bits()
}
fn b64(x: f64) -> u64 {
    x.to_bits()
}
fn up32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}

#[test]
fn add_f32_rounding_modes_small_addend() {
    // 1 + 2^-30 is not representable: rz/rm give 1, rp gives 1 + ulp, rn gives 1.
    let t = 2f32.powi(-30);
    let cases = [(Rn, 1.0f32), (Rz, 1.0), (Rm, 1.0), (Rp, up32(1.0))];
    for (rnd, want) in cases {
        assert_eq!(
            b32(add_f32(1.0, t, rnd, false, false)),
            b32(want),
            "{rnd:?}"
        );
    }
    // Negative: -1 - 2^-30.
    let cases = [(Rn, -1.0f32), (Rz, -1.0), (Rm, -up32(1.0)), (Rp, -1.0)];
    for (rnd, want) in cases {
        assert_eq!(
            b32(add_f32(-1.0, -t, rnd, false, false)),
            b32(want),
            "{rnd:?}"
        );
    }
}

#[test]
fn add_f32_ties_to_even() {
    // 1 + 2^-24 is exactly half an ulp: ties to even (1.0); 1+ulp + 2^-24 ties up.
    let h = 2f32.powi(-24);
    assert_eq!(add_f32(1.0, h, Rn, false, false), 1.0);
    assert_eq!(add_f32(up32(1.0), h, Rn, false, false), up32(up32(1.0)));
    assert_eq!(add_f32(1.0, h, Rp, false, false), up32(1.0));
    assert_eq!(add_f32(1.0, h, Rz, false, false), 1.0);
}

#[test]
fn add_f32_exact_zero_sign() {
    for rnd in MODES {
        let z = add_f32(1.5, -1.5, rnd, false, false);
        assert_eq!(z.is_sign_negative(), rnd == Rm, "{rnd:?}");
        let z = add_f32(-0.0, -0.0, rnd, false, false);
        assert_eq!(b32(z), b32(-0.0));
        let z = add_f32(0.0, -0.0, rnd, false, false);
        assert_eq!(z.is_sign_negative(), rnd == Rm);
        let z = sub_f32(2.0, 2.0, rnd, false, false);
        assert_eq!(z.is_sign_negative(), rnd == Rm);
    }
}

#[test]
fn add_f32_overflow_per_mode() {
    let m = f32::MAX;
    let cases = [
        (Rn, f32::INFINITY),
        (Rz, f32::MAX),
        (Rm, f32::MAX),
        (Rp, f32::INFINITY),
    ];
    for (rnd, want) in cases {
        assert_eq!(add_f32(m, m, rnd, false, false), want, "{rnd:?}");
        assert_eq!(add_f32(-m, -m, rnd, false, false), -neg_mode(rnd, want));
    }
    fn neg_mode(rnd: Rounding, want: f32) -> f32 {
        // Mirror: for negative overflow rm→-inf, rp→-max.
        match rnd {
            Rm => f32::INFINITY,
            Rp => f32::MAX,
            _ => want,
        }
    }
}

#[test]
fn f32_nan_results_are_canonical() {
    let payload = f32::from_bits(0x7fc0_1234);
    for rnd in MODES {
        assert_eq!(
            b32(add_f32(payload, 1.0, rnd, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            b32(add_f32(f32::INFINITY, f32::NEG_INFINITY, rnd, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            b32(mul_f32(0.0, f32::INFINITY, rnd, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            b32(fma_f32(0.0, f32::INFINITY, 1.0, rnd, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(b32(div_f32(0.0, 0.0, rnd, false)), CANONICAL_NAN_F32);
        assert_eq!(b32(sqrt_f32(-1.0, rnd, false)), CANONICAL_NAN_F32);
    }
    assert_eq!(b64(add_f64(f64::NAN, 1.0, Rn)), CANONICAL_NAN_F64);
    assert_eq!(b64(fma_f64(f64::INFINITY, 0.0, 1.0, Rz)), CANONICAL_NAN_F64);
    // Bit operations keep payloads.
    assert_eq!(b32(neg_f32(payload, false)), 0xffc0_1234);
    assert_eq!(
        b32(abs_f32(f32::from_bits(0xffc0_1234), false)),
        0x7fc0_1234
    );
}

#[test]
fn ftz_flushes_inputs_and_outputs() {
    let s = MIN_SUB32 * 4.0;
    assert_eq!(add_f32(s, 0.0, Rn, false, false), s);
    assert_eq!(b32(add_f32(s, 0.0, Rn, true, false)), 0);
    assert_eq!(b32(add_f32(-s, -0.0, Rn, true, false)), b32(-0.0));
    // Result subnormal although inputs are normal.
    let r = mul_f32(MIN_NORM32, 0.5, Rn, false, false);
    assert!(r.is_subnormal());
    assert_eq!(b32(mul_f32(MIN_NORM32, 0.5, Rn, true, false)), 0);
    assert_eq!(b32(mul_f32(-MIN_NORM32, 0.5, Rn, true, false)), b32(-0.0));
    // Flushing the input changes the result: 1 * subnormal.
    assert_eq!(mul_f32(1.0, s, Rz, true, false), 0.0);
    assert_eq!(fma_f32(s, 1.0, 1.0, Rp, false, false), up32(1.0));
    assert_eq!(fma_f32(s, 1.0, 1.0, Rp, true, false), 1.0);
}

#[test]
fn sat_clamps_and_zeroes_nan() {
    assert_eq!(add_f32(0.75, 0.5, Rn, false, true), 1.0);
    assert_eq!(b32(add_f32(-0.75, 0.5, Rn, false, true)), 0);
    assert_eq!(b32(add_f32(f32::NAN, 0.5, Rn, false, true)), 0);
    assert_eq!(b32(mul_f32(-0.0, 1.0, Rn, false, true)), 0);
    assert_eq!(mul_f32(0.25, 2.0, Rn, false, true), 0.5);
    assert_eq!(fma_f32(1.0, 1.0, f32::INFINITY, Rn, false, true), 1.0);
}

#[test]
fn f64_rounding_modes_and_ties() {
    let t = 2f64.powi(-60);
    let u = f64::from_bits(1.0f64.to_bits() + 1);
    assert_eq!(add_f64(1.0, t, Rn), 1.0);
    assert_eq!(add_f64(1.0, t, Rz), 1.0);
    assert_eq!(add_f64(1.0, t, Rm), 1.0);
    assert_eq!(add_f64(1.0, t, Rp), u);
    assert_eq!(add_f64(-1.0, -t, Rm), -u);
    // Tie: 1 + 2^-53 → 1 (even); u + 2^-53 → u + ulp.
    let h = 2f64.powi(-53);
    assert_eq!(add_f64(1.0, h, Rn), 1.0);
    assert_eq!(add_f64(u, h, Rn), f64::from_bits(u.to_bits() + 1));
    // Overflow.
    assert_eq!(add_f64(f64::MAX, f64::MAX, Rz), f64::MAX);
    assert_eq!(add_f64(f64::MAX, f64::MAX, Rp), f64::INFINITY);
    assert_eq!(add_f64(-f64::MAX, -f64::MAX, Rp), -f64::MAX);
    assert_eq!(mul_f64(f64::MAX, 2.0, Rm), f64::MAX);
    assert_eq!(mul_f64(f64::MAX, -2.0, Rm), f64::NEG_INFINITY);
    // Exact zero.
    assert_eq!(b64(sub_f64(3.0, 3.0, Rm)), b64(-0.0));
    assert_eq!(b64(sub_f64(3.0, 3.0, Rz)), 0);
    assert_eq!(b64(fma_f64(2.0, 3.0, -6.0, Rm)), b64(-0.0));
    assert_eq!(b64(fma_f64(2.0, 3.0, -6.0, Rp)), 0);
    // Underflow to the smallest subnormal / zero.
    let tiny = f64::from_bits(1);
    assert_eq!(mul_f64(tiny, 0.5, Rp), tiny);
    assert_eq!(b64(mul_f64(tiny, 0.5, Rz)), 0);
    assert_eq!(b64(mul_f64(-tiny, 0.5, Rm)), b64(-tiny));
    assert_eq!(mul_f64(tiny, 0.5, Rn), 0.0); // tie to even (zero)
    assert_eq!(mul_f64(tiny, 0.75, Rn), tiny);
}

#[test]
fn div_rcp_sqrt_modes() {
    // 1/3 in f32: rn = 0x3eaaaaab, rz/rm = 0x3eaaaaaa.
    assert_eq!(b32(div_f32(1.0, 3.0, Rn, false)), 0x3eaa_aaab);
    assert_eq!(b32(div_f32(1.0, 3.0, Rz, false)), 0x3eaa_aaaa);
    assert_eq!(b32(div_f32(1.0, 3.0, Rm, false)), 0x3eaa_aaaa);
    assert_eq!(b32(div_f32(1.0, 3.0, Rp, false)), 0x3eaa_aaab);
    assert_eq!(b32(div_f32(-1.0, 3.0, Rm, false)), 0xbeaa_aaab);
    assert_eq!(b32(rcp_f32(3.0, Rz, false)), 0x3eaa_aaaa);
    assert_eq!(div_f32(1.0, 0.0, Rz, false), f32::INFINITY);
    assert_eq!(div_f32(-1.0, 0.0, Rn, false), f32::NEG_INFINITY);
    assert_eq!(div_f32(1.0, -0.0, Rn, true), f32::NEG_INFINITY);
    // ftz: dividing by a subnormal becomes division by zero.
    assert_eq!(div_f32(1.0, MIN_SUB32, Rn, true), f32::INFINITY);
    // f64 1/3.
    assert_eq!(b64(div_f64(1.0, 3.0, Rn)), 0x3fd5_5555_5555_5555);
    assert_eq!(b64(div_f64(1.0, 3.0, Rp)), 0x3fd5_5555_5555_5556);
    assert_eq!(b64(rcp_f64(-3.0, Rz)), 0xbfd5_5555_5555_5555);
    // sqrt(2).
    assert_eq!(b32(sqrt_f32(2.0, Rn, false)), 0x3fb5_04f3);
    assert_eq!(b32(sqrt_f32(2.0, Rz, false)), 0x3fb5_04f3);
    assert_eq!(b32(sqrt_f32(2.0, Rp, false)), 0x3fb5_04f4);
    assert_eq!(b64(sqrt_f64(2.0, Rn)), 0x3ff6_a09e_667f_3bcd);
    assert_eq!(b64(sqrt_f64(2.0, Rz)), 0x3ff6_a09e_667f_3bcc);
    assert_eq!(b64(sqrt_f64(2.0, Rp)), 0x3ff6_a09e_667f_3bcd);
    assert_eq!(sqrt_f64(4.0, Rm), 2.0);
    assert_eq!(b64(sqrt_f64(-0.0, Rp)), b64(-0.0));
    assert!(sqrt_f64(-1.0, Rp).is_nan());
}

#[test]
fn approx_instructions() {
    assert_eq!(div_approx_f32(1.0, 2f32.powi(126), false), 0.0);
    assert_eq!(b32(div_approx_f32(-1.0, 2f32.powi(127), false)), b32(-0.0));
    assert_eq!(div_approx_f32(6.0, 3.0, false), 2.0);
    assert_eq!(div_full_f32(1.0, 3.0, false), 1.0 / 3.0);
    assert_eq!(rcp_approx_f32(4.0, false), 0.25);
    assert_eq!(sqrt_approx_f32(9.0, false), 3.0);
    assert_eq!(rsqrt_approx_f32(4.0, false), 0.5);
    assert_eq!(rsqrt_approx_f32(0.0, false), f32::INFINITY);
    assert_eq!(ex2_approx_f32(3.0, false), 8.0);
    assert_eq!(ex2_approx_f32(f32::NEG_INFINITY, false), 0.0);
    assert_eq!(lg2_approx_f32(8.0, false), 3.0);
    assert_eq!(lg2_approx_f32(0.0, false), f32::NEG_INFINITY);
    assert_eq!(b32(lg2_approx_f32(-1.0, false)), CANONICAL_NAN_F32);
    assert_eq!(lg2_approx_f32(MIN_SUB32, false), -149.0);
    assert_eq!(lg2_approx_f32(MIN_SUB32, true), f32::NEG_INFINITY);
    assert_eq!(b32(sin_approx_f32(-0.0, false)), b32(-0.0));
    assert_eq!(b32(sin_approx_f32(f32::INFINITY, false)), CANONICAL_NAN_F32);
    assert_eq!(cos_approx_f32(0.0, false), 1.0);
    assert!((sin_approx_f32(1.0, false) - 0.841_470_96).abs() < 1e-6);
    assert_eq!(tanh_approx_f32(f32::INFINITY), 1.0);
    assert_eq!(tanh_approx_f32(0.0), 0.0);
    // rcp.approx.ftz.f64 uses the upper 32 bits only.
    assert_eq!(rcp_approx_ftz_f64(2.0), 0.5);
    let x = f64::from_bits(0x3ff0_0000_ffff_ffff); // upper word reads as 1.0
    assert_eq!(rcp_approx_ftz_f64(x), 1.0);
    assert_eq!(rcp_approx_ftz_f64(3.0).to_bits() & 0xffff_ffff, 0);
    assert_eq!(rcp_approx_ftz_f64(0.0), f64::INFINITY);
    assert_eq!(rsqrt_approx_ftz_f64(4.0), 0.5);
    assert_eq!(rsqrt_approx_f64(16.0), 0.25);
}

#[test]
fn min_max_nan_and_signed_zero() {
    let nan = f32::from_bits(0x7fc0_0001);
    assert_eq!(min_f32(nan, 2.0, false, false), 2.0);
    assert_eq!(max_f32(3.0, nan, false, false), 3.0);
    assert_eq!(b32(min_f32(nan, nan, false, false)), CANONICAL_NAN_F32);
    assert_eq!(b32(min_f32(nan, 2.0, false, true)), CANONICAL_NAN_F32);
    assert_eq!(b32(max_f32(2.0, nan, false, true)), CANONICAL_NAN_F32);
    assert_eq!(b32(min_f32(0.0, -0.0, false, false)), b32(-0.0));
    assert_eq!(b32(min_f32(-0.0, 0.0, false, false)), b32(-0.0));
    assert_eq!(b32(max_f32(-0.0, 0.0, false, false)), 0);
    assert_eq!(b32(max_f32(0.0, -0.0, false, false)), 0);
    assert_eq!(min_f32(-1.0, 1.0, false, false), -1.0);
    assert_eq!(max_f32(f32::NEG_INFINITY, -1.0, false, false), -1.0);
    // ftz: a subnormal compares as zero.
    let s = MIN_SUB32;
    assert_eq!(max_f32(s, 0.0, false, false), s);
    assert_eq!(b32(max_f32(s, -s, true, false)), 0);
    assert_eq!(b32(min_xorsign_abs_f32(-3.0, 2.0, false, false)), b32(-2.0));
    assert_eq!(b32(max_xorsign_abs_f32(-3.0, -2.0, false, false)), b32(3.0));
    assert_eq!(min_f64(f64::NAN, 1.0, false), 1.0);
    assert_eq!(b64(max_f64(f64::NAN, 1.0, true)), CANONICAL_NAN_F64);
    assert_eq!(b64(min_f64(0.0, -0.0, false)), b64(-0.0));
    assert_eq!(b64(max_f64(-0.0, 0.0, false)), 0);
}

#[test]
fn abs_neg_copysign_testp() {
    assert_eq!(b32(abs_f32(-0.0, false)), 0);
    assert_eq!(b32(neg_f32(0.0, false)), b32(-0.0));
    assert_eq!(b32(neg_f32(MIN_SUB32, true)), b32(-0.0));
    assert_eq!(b32(abs_f32(-MIN_SUB32, false)), 1);
    assert_eq!(
        b64(neg_f64(f64::from_bits(0x7ff8_0000_0000_0001))),
        0xfff8_0000_0000_0001
    );
    assert_eq!(abs_f64(-2.5), 2.5);
    // copysign d, a, b: b with a's sign.
    assert_eq!(copysign_f32(-1.0, 2.0), -2.0);
    assert_eq!(copysign_f32(1.0, -2.0), 2.0);
    assert_eq!(b32(copysign_f32(-0.0, f32::NAN)), 0xffc0_0000);
    assert_eq!(copysign_f64(-0.0, 3.0), -3.0);
    use TestpOp::*;
    let table: [(f32, [bool; 6]); 7] = [
        // finite infinite number notanumber normal subnormal
        (1.0, [true, false, true, false, true, false]),
        (0.0, [true, false, true, false, true, false]),
        (-0.0, [true, false, true, false, true, false]),
        (MIN_SUB32, [true, false, true, false, false, true]),
        (f32::INFINITY, [false, true, true, false, false, false]),
        (f32::NEG_INFINITY, [false, true, true, false, false, false]),
        (f32::NAN, [false, false, false, true, false, false]),
    ];
    for (x, want) in table {
        for (op, w) in [Finite, Infinite, Number, NotANumber, Normal, Subnormal]
            .iter()
            .zip(want)
        {
            assert_eq!(testp_f32(*op, x), w, "{op:?} {x:?}");
            let wide = if x.is_subnormal() {
                f64::from_bits(1)
            } else {
                x as f64
            };
            assert_eq!(testp_f64(*op, wide), w, "{op:?} {x:?} f64");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Property tests against the exact reference.

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        // Moderate exponents so that operands interact (carries, cancellation).
        (any::<bool>(), 100u32..155, any::<u32>())
            .prop_map(|(s, e, m)| f32::from_bits((s as u32) << 31 | e << 23 | (m & 0x7f_ffff))),
        // Subnormals and tiny normals.
        (any::<bool>(), 0u32..3, any::<u32>())
            .prop_map(|(s, e, m)| f32::from_bits((s as u32) << 31 | e << 23 | (m & 0x7f_ffff))),
        // Few significant bits: exact results and ties.
        (-30i32..30, -64i32..64).prop_map(|(e, m)| m as f32 * 2f32.powi(e)),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (any::<bool>(), 990u64..1060, any::<u64>()).prop_map(|(s, e, m)| f64::from_bits(
            (s as u64) << 63 | e << 52 | (m & ((1 << 52) - 1))
        )),
        (any::<bool>(), 0u64..3, any::<u64>()).prop_map(|(s, e, m)| f64::from_bits(
            (s as u64) << 63 | e << 52 | (m & ((1 << 52) - 1))
        )),
        (-30i32..30, -64i64..64).prop_map(|(e, m)| m as f64 * 2f64.powi(e)),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn mode() -> impl Strategy<Value = Rounding> {
    prop_oneof![Just(Rn), Just(Rz), Just(Rm), Just(Rp)]
}

fn same32(got: f32, want: f32) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "got {:e} want {:e}",
        got,
        want
    );
    Ok(())
}

fn same64(got: f64, want: f64) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "got {:e} want {:e}",
        got,
        want
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn prop_add_f32(a in finite_f32(), b in finite_f32(), rnd in mode()) {
        let want: f32 = reference::add(a, b, rnd, a.is_sign_negative(), b.is_sign_negative());
        same32(add_f32(a, b, rnd, false, false), want)?;
    }

    #[test]
    fn prop_mul_f32(a in finite_f32(), b in finite_f32(), rnd in mode()) {
        let s = [a.is_sign_negative(), b.is_sign_negative(), false];
        let want: f32 = reference::fma(a, b, None, rnd, s);
        same32(mul_f32(a, b, rnd, false, false), want)?;
    }

    #[test]
    fn prop_fma_f32(a in finite_f32(), b in finite_f32(), c in finite_f32(), rnd in mode()) {
        let s = [a.is_sign_negative(), b.is_sign_negative(), c.is_sign_negative()];
        let want: f32 = reference::fma(a, b, Some(c), rnd, s);
        same32(fma_f32(a, b, c, rnd, false, false), want)?;
    }

    #[test]
    fn prop_div_f32(a in finite_f32(), b in finite_f32(), rnd in mode()) {
        prop_assume!(a != 0.0 && b != 0.0);
        let want: f32 = reference::div(a, b, rnd);
        same32(div_f32(a, b, rnd, false), want)?;
    }

    #[test]
    fn prop_sqrt_f32(a in finite_f32(), rnd in mode()) {
        let a = a.abs();
        prop_assume!(a > 0.0);
        let want: f32 = reference::sqrt(a, a.sqrt(), rnd);
        same32(sqrt_f32(a, rnd, false), want)?;
    }

    #[test]
    fn prop_add_f64(a in finite_f64(), b in finite_f64(), rnd in mode()) {
        let want: f64 = reference::add(a, b, rnd, a.is_sign_negative(), b.is_sign_negative());
        same64(add_f64(a, b, rnd), want)?;
    }

    #[test]
    fn prop_mul_f64(a in finite_f64(), b in finite_f64(), rnd in mode()) {
        let s = [a.is_sign_negative(), b.is_sign_negative(), false];
        let want: f64 = reference::fma(a, b, None, rnd, s);
        same64(mul_f64(a, b, rnd), want)?;
    }

    #[test]
    fn prop_fma_f64(a in finite_f64(), b in finite_f64(), c in finite_f64(), rnd in mode()) {
        let s = [a.is_sign_negative(), b.is_sign_negative(), c.is_sign_negative()];
        let want: f64 = reference::fma(a, b, Some(c), rnd, s);
        same64(fma_f64(a, b, c, rnd), want)?;
    }

    #[test]
    fn prop_div_f64(a in finite_f64(), b in finite_f64(), rnd in mode()) {
        prop_assume!(a != 0.0 && b != 0.0);
        let want: f64 = reference::div(a, b, rnd);
        same64(div_f64(a, b, rnd), want)?;
    }

    #[test]
    fn prop_sqrt_f64(a in finite_f64(), rnd in mode()) {
        let a = a.abs();
        prop_assume!(a > 0.0);
        let want: f64 = reference::sqrt(a, a.sqrt(), rnd);
        same64(sqrt_f64(a, rnd), want)?;
    }

    /// Directed results bracket the nearest one and differ from it by at most one ulp.
    #[test]
    fn prop_directed_bracket_f32(a in finite_f32(), b in finite_f32()) {
        let rm = add_f32(a, b, Rm, false, false);
        let rp = add_f32(a, b, Rp, false, false);
        let rn = add_f32(a, b, Rn, false, false);
        prop_assert!(rm <= rn && rn <= rp);
    }
}
