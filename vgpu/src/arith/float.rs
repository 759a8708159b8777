//! `.f32` and `.f64` floating-point instructions, PTX ISA §9.7.3 ("Floating-Point
//! Instructions"): `add`, `sub`, `mul`, `fma`, `mad`, `div`, `rcp`, `sqrt`, `rsqrt`, `sin`,
//! `cos`, `lg2`, `ex2`, `tanh`, `min`, `max`, `abs`, `neg`, `copysign`, `testp`.
//!
//! Rounding. `.rn/.rz/.rm/.rp` are IEEE 754 correct rounding. `.rn` uses the host FPU
//! directly. Directed `.f32` results are computed exactly or round-to-odd in `f64` and
//! then rounded once ([`super::round`]); directed `.f64` `add` uses the TwoSum error term
//! to step the nearest result by one ulp, `sqrt` the FMA residual, and `mul`/`fma`/`div`
//! exact integer arithmetic on the significands.
//!
//! Modifiers. `.ftz` flushes subnormal `.f32` inputs and results to zero of the same sign
//! (results are flushed *after* rounding). `.sat` clamps the result to [+0.0, 1.0] and
//! maps NaN (and −0.0) to +0.0. A NaN result is the canonical NaN (`0x7fffffff`, and our
//! `.f64` choice `0x7fffffffffffffff`, see [`super`]).
//!
//! Exact zeros: `x + (−x)` is +0.0 except under `.rm`, where it is −0.0 (IEEE 754 §6.3).
//!
//! Approximate instructions. PTX bounds their error (e.g. `sin/cos.approx.f32` 2^-20.5
//! absolute in [−100π, 100π], `ex2.approx.f32` 2 ulp, `lg2.approx.f32` 2^-22.6 absolute in
//! (0.5, 2), `rsqrt/rcp/sqrt.approx.f32` ~1 ulp, `tanh.approx.f32` 2^-10.987 relative,
//! `div.approx.f32` 2 ulp, `div.full.f32` 2 ulp) but not the exact value. Our model is
//! deterministic and *better* than those bounds: we return the host libm's `f64` value of
//! the exact function rounded to nearest `f32` (`div/rcp/sqrt` are correctly rounded).
//! Real hardware may differ in the last bits; a kernel whose behaviour depends on them is
//! out of scope. Documented special cases we do reproduce: `div.approx.f32` returns ±0 for
//! |b| in [2^126, 2^128]; `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64` use only the
//! upper 32 bits of the operand and return a result whose lower 32 bits are zero (a
//! "gross approximation", ~2^-20 relative error, as the ISA describes).

use super::round::{
    adjust_f64, decompose_f64, f64_to_f32, overflow_f64, round_exact, to_odd, two_sum, Format,
};
use super::{Rounding, CANONICAL_NAN_F32, CANONICAL_NAN_F64};

// ---------------------------------------------------------------------------------------
// Modifiers shared by every `.f32` instruction.

/// `.ftz` on one operand or result: subnormal → zero of the same sign (shared with `cvt`).
pub use fencehound_numconv::ftz_f32;

/// `.sat`: clamp to [+0.0, 1.0]; NaN and −0.0 become +0.0.
#[inline]
pub fn sat_f32(x: f32) -> f32 {
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// `.sat` for `.f64` results (used by `cvt`).
#[inline]
pub fn sat_f64(x: f64) -> f64 {
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// Replaces any NaN by the canonical `.f32` NaN.
#[inline]
pub fn canonical_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN_F32)
    } else {
        x
    }
}

/// Replaces any NaN by the canonical `.f64` NaN.
#[inline]
pub fn canonical_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(CANONICAL_NAN_F64)
    } else {
        x
    }
}

#[inline]
fn pre(x: f32, ftz: bool) -> f32 {
    if ftz {
        ftz_f32(x)
    } else {
        x
    }
}

#[inline]
fn post(r: f32, ftz: bool, sat: bool) -> f32 {
    let r = canonical_f32(r);
    let r = if ftz { ftz_f32(r) } else { r };
    if sat {
        sat_f32(r)
    } else {
        r
    }
}

/// Sign of an exactly-zero sum of two addends with the given signs (IEEE 754 §6.3).
#[inline]
fn zero_sum_negative(x_neg: bool, y_neg: bool, rnd: Rounding) -> bool {
    if x_neg == y_neg {
        x_neg
    } else {
        rnd == Rounding::Rm
    }
}

// ---------------------------------------------------------------------------------------
// IEEE cores without modifiers (also used by `half`).

/// `a + b` rounded to `f32` in `rnd`, IEEE semantics (NaN payload not canonicalised).
#[inline]
pub(crate) fn add_f32_ieee(a: f32, b: f32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return a + b;
    }
    let (s, e) = two_sum(a as f64, b as f64);
    if s == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(a.is_sign_negative(), b.is_sign_negative(), rnd);
        return if neg { -0.0 } else { 0.0 };
    }
    f64_to_f32(to_odd(s, e), rnd)
}

#[inline]
pub(crate) fn mul_f32_ieee(a: f32, b: f32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return a * b;
    }
    // 24×24-bit significands and the f32 exponent range fit an f64 exactly.
    f64_to_f32(a as f64 * b as f64, rnd)
}

#[inline]
pub(crate) fn fma_f32_ieee(a: f32, b: f32, c: f32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return a.mul_add(b, c);
    }
    let p = a as f64 * b as f64;
    let (s, e) = two_sum(p, c as f64);
    if s == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(p.is_sign_negative(), c.is_sign_negative(), rnd);
        return if neg { -0.0 } else { 0.0 };
    }
    f64_to_f32(to_odd(s, e), rnd)
}

#[inline]
pub(crate) fn div_f32_ieee(a: f32, b: f32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return a / b;
    }
    let (x, y) = (a as f64, b as f64);
    let q = x / y;
    if !q.is_finite() || q == 0.0 {
        return f64_to_f32(q, rnd);
    }
    // The remainder of a nearest-rounded quotient is exact (no underflow for f32 inputs).
    let r = (-q).mul_add(y, x);
    let err = if y > 0.0 { r } else { -r };
    f64_to_f32(to_odd(q, err), rnd)
}

#[inline]
pub(crate) fn sqrt_f32_ieee(a: f32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return a.sqrt();
    }
    let x = a as f64;
    let s = x.sqrt();
    if !s.is_finite() || s == 0.0 {
        return f64_to_f32(s, rnd);
    }
    let r = (-s).mul_add(s, x);
    f64_to_f32(to_odd(s, r), rnd)
}

// ---------------------------------------------------------------------------------------
// add / sub / mul / fma / mad (.f32)

/// `add{.rnd}{.ftz}{.sat}.f32`
#[inline]
pub fn add_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    post(add_f32_ieee(pre(a, ftz), pre(b, ftz), rnd), ftz, sat)
}

/// `sub{.rnd}{.ftz}{.sat}.f32`
#[inline]
pub fn sub_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    post(add_f32_ieee(pre(a, ftz), -pre(b, ftz), rnd), ftz, sat)
}

/// `mul{.rnd}{.ftz}{.sat}.f32`
#[inline]
pub fn mul_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    post(mul_f32_ieee(pre(a, ftz), pre(b, ftz), rnd), ftz, sat)
}

/// `fma.rnd{.ftz}{.sat}.f32`, and `mad.rnd{.ftz}{.sat}.f32` (on sm_20+ `mad` with a
/// rounding modifier *is* fused).
#[inline]
pub fn fma_f32(a: f32, b: f32, c: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    post(
        fma_f32_ieee(pre(a, ftz), pre(b, ftz), pre(c, ftz), rnd),
        ftz,
        sat,
    )
}

// ---------------------------------------------------------------------------------------
// add / sub / mul / fma (.f64)

/// `add{.rnd}.f64`
#[inline]
pub fn add_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    let r = a + b;
    if rnd == Rounding::Rn {
        return canonical_f64(r);
    }
    if !r.is_finite() {
        if a.is_finite() && b.is_finite() {
            return overflow_f64(r < 0.0, rnd);
        }
        return canonical_f64(r);
    }
    let (_, e) = two_sum(a, b);
    if r == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(a.is_sign_negative(), b.is_sign_negative(), rnd);
        return if neg { -0.0 } else { 0.0 };
    }
    adjust_f64(r, e, rnd)
}

/// `sub{.rnd}.f64`
#[inline]
pub fn sub_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    add_f64(a, -b, rnd)
}

/// `mul{.rnd}.f64`
#[inline]
pub fn mul_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn || !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return canonical_f64(a * b);
    }
    let (na, ma, ea) = decompose_f64(a);
    let (nb, mb, eb) = decompose_f64(b);
    let mag = ma as u128 * mb as u128;
    f64::from_bits(round_exact(
        Format::F64,
        na ^ nb,
        mag,
        ea + eb,
        false,
        rnd.into(),
    ))
}

/// Exact sum of two signed `m·2^e` values with `m < 2^107`, returned round-to-odd at 126
/// bits as `(negative, magnitude, exponent)`; magnitude 0 means an exact zero.
fn add_exact(n1: bool, m1: u128, e1: i32, n2: bool, m2: u128, e2: i32) -> (bool, u128, i32) {
    // Put both top bits at bit 125; the low 19+ bits of each are then zero.
    let norm = |m: u128, e: i32| {
        let s = m.leading_zeros() as i32 - 2;
        (m << s, e - s)
    };
    let (m1, e1) = norm(m1, e1);
    let (m2, e2) = norm(m2, e2);
    let ((nb, mb, eb), (ns, ms, es)) = if e1 >= e2 {
        ((n1, m1, e1), (n2, m2, e2))
    } else {
        ((n2, m2, e2), (n1, m1, e1))
    };
    let d = (eb - es) as u32;
    let ms = if d == 0 {
        ms
    } else if d >= 127 {
        1 // all of it is below the last bit: a jammed sticky bit
    } else {
        (ms >> d) | ((ms & ((1u128 << d) - 1) != 0) as u128)
    };
    if nb == ns {
        (nb, mb + ms, eb)
    } else if mb >= ms {
        (nb, mb - ms, eb)
    } else {
        (ns, ms - mb, eb)
    }
}

/// `fma.rnd.f64` (and `mad.rnd.f64`).
#[inline]
pub fn fma_f64(a: f64, b: f64, c: f64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn || !a.is_finite() || !b.is_finite() || !c.is_finite() {
        return canonical_f64(a.mul_add(b, c));
    }
    let (na, ma, ea) = decompose_f64(a);
    let (nb, mb, eb) = decompose_f64(b);
    let (nc, mc, ec) = decompose_f64(c);
    let np = na ^ nb;
    let mp = ma as u128 * mb as u128;
    let (neg, mag, exp) = match (mp == 0, mc == 0) {
        (true, true) => {
            let neg = zero_sum_negative(np, nc, rnd);
            return if neg { -0.0 } else { 0.0 };
        }
        (true, false) => return c,
        (false, true) => (np, mp, ea + eb),
        (false, false) => add_exact(np, mp, ea + eb, nc, mc as u128, ec),
    };
    if mag == 0 {
        return if rnd == Rounding::Rm { -0.0 } else { 0.0 };
    }
    f64::from_bits(round_exact(Format::F64, neg, mag, exp, false, rnd.into()))
}

// ---------------------------------------------------------------------------------------
// div / rcp / sqrt / rsqrt

/// `div.rnd{.ftz}.f32` (IEEE-compliant division).
#[inline]
pub fn div_f32(a: f32, b: f32, rnd: Rounding, ftz: bool) -> f32 {
    post(div_f32_ieee(pre(a, ftz), pre(b, ftz), rnd), ftz, false)
}

/// `div.full{.ftz}.f32`: modelled as the correctly rounded quotient (PTX: ≤ 2 ulp).
#[inline]
pub fn div_full_f32(a: f32, b: f32, ftz: bool) -> f32 {
    div_f32(a, b, Rounding::Rn, ftz)
}

/// `div.approx{.ftz}.f32`: `a * (1/b)`; ±0 (or NaN for infinite/NaN `a`) when
/// |b| ∈ [2^126, 2^128] as the ISA states, otherwise the correctly rounded quotient.
#[inline]
pub fn div_approx_f32(a: f32, b: f32, ftz: bool) -> f32 {
    let (a, b) = (pre(a, ftz), pre(b, ftz));
    let big = b.is_finite() && b.abs() >= f32::from_bits(0x7e80_0000); // 2^126
    let r = if big { a * (0.0f32).copysign(b) } else { a / b };
    post(r, ftz, false)
}

/// `div.rnd.f64`
#[inline]
pub fn div_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn || !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return canonical_f64(a / b);
    }
    let (na, ma, ea) = decompose_f64(a);
    let (nb, mb, eb) = decompose_f64(b);
    // Numerator with its top bit at 125, divisor at 63: the quotient has ≥ 62 bits.
    let sa = (ma as u128).leading_zeros() - 2;
    let sb = mb.leading_zeros();
    let num = (ma as u128) << sa;
    let den = ((mb as u128) << sb) as u64 as u128;
    let (q, r) = (num / den, num % den);
    let exp = (ea - sa as i32) - (eb - sb as i32);
    f64::from_bits(round_exact(
        Format::F64,
        na ^ nb,
        q,
        exp,
        r != 0,
        rnd.into(),
    ))
}

/// `rcp.rnd{.ftz}.f32`
#[inline]
pub fn rcp_f32(x: f32, rnd: Rounding, ftz: bool) -> f32 {
    div_f32(1.0, x, rnd, ftz)
}

/// `rcp.approx{.ftz}.f32`: modelled as the correctly rounded reciprocal.
#[inline]
pub fn rcp_approx_f32(x: f32, ftz: bool) -> f32 {
    div_f32(1.0, x, Rounding::Rn, ftz)
}

/// `rcp.rnd.f64`
#[inline]
pub fn rcp_f64(x: f64, rnd: Rounding) -> f64 {
    div_f64(1.0, x, rnd)
}

const HIGH_WORD: u64 = 0xffff_ffff_0000_0000;

#[inline]
fn ftz_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        f64::from_bits(x.to_bits() & (1 << 63))
    } else {
        x
    }
}

/// `rcp.approx.ftz.f64`: the reciprocal of the operand's upper 32 bits, truncated to its
/// upper 32 bits; subnormals flushed.
#[inline]
pub fn rcp_approx_ftz_f64(x: f64) -> f64 {
    let x = ftz_f64(f64::from_bits(x.to_bits() & HIGH_WORD));
    let r = ftz_f64(canonical_f64(1.0 / x));
    if r.is_nan() {
        return r;
    }
    f64::from_bits(r.to_bits() & HIGH_WORD)
}

/// `sqrt.rnd{.ftz}.f32`
#[inline]
pub fn sqrt_f32(x: f32, rnd: Rounding, ftz: bool) -> f32 {
    post(sqrt_f32_ieee(pre(x, ftz), rnd), ftz, false)
}

/// `sqrt.approx{.ftz}.f32`: modelled as the correctly rounded square root.
#[inline]
pub fn sqrt_approx_f32(x: f32, ftz: bool) -> f32 {
    sqrt_f32(x, Rounding::Rn, ftz)
}

/// `sqrt.rnd.f64`
#[inline]
pub fn sqrt_f64(x: f64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn || x.is_nan() || x <= 0.0 || x.is_infinite() {
        return canonical_f64(x.sqrt());
    }
    // Scale tiny inputs by an even power of two so the FMA residual cannot underflow; the
    // square root of an f64 is never subnormal, so scaling back is exact.
    let tiny = x < f64::from_bits(0x07b0_0000_0000_0000); // 2^-900
    let xs = if tiny { x * 2f64.powi(1000) } else { x };
    let s = xs.sqrt();
    let r = (-s).mul_add(s, xs);
    let s = adjust_f64(s, r, rnd);
    if tiny {
        s * 2f64.powi(-500)
    } else {
        s
    }
}

/// `rsqrt.approx{.ftz}.f32`: `1/sqrt(x)` evaluated in `f64` and rounded to nearest.
#[inline]
pub fn rsqrt_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    post((1.0 / (x as f64).sqrt()) as f32, ftz, false)
}

/// `rsqrt.approx.f64`: `1/sqrt(x)` (two roundings).
#[inline]
pub fn rsqrt_approx_f64(x: f64) -> f64 {
    canonical_f64(1.0 / x.sqrt())
}

/// `rsqrt.approx.ftz.f64`: like [`rcp_approx_ftz_f64`], on the upper 32 bits only.
#[inline]
pub fn rsqrt_approx_ftz_f64(x: f64) -> f64 {
    let x = ftz_f64(f64::from_bits(x.to_bits() & HIGH_WORD));
    let r = ftz_f64(canonical_f64(1.0 / x.sqrt()));
    if r.is_nan() {
        return r;
    }
    f64::from_bits(r.to_bits() & HIGH_WORD)
}

// ---------------------------------------------------------------------------------------
// sin / cos / lg2 / ex2 / tanh (.approx)

#[inline]
fn approx_f32(x: f32, ftz: bool, f: impl Fn(f64) -> f64) -> f32 {
    post(f(pre(x, ftz) as f64) as f32, ftz, false)
}

/// `sin.approx{.ftz}.f32`
#[inline]
pub fn sin_approx_f32(x: f32, ftz: bool) -> f32 {
    approx_f32(x, ftz, f64::sin)
}

/// `cos.approx{.ftz}.f32`
#[inline]
pub fn cos_approx_f32(x: f32, ftz: bool) -> f32 {
    approx_f32(x, ftz, f64::cos)
}

/// `lg2.approx{.ftz}.f32`: lg2(±0) = −∞, lg2(x<0) = NaN.
#[inline]
pub fn lg2_approx_f32(x: f32, ftz: bool) -> f32 {
    approx_f32(x, ftz, f64::log2)
}

/// `ex2.approx{.ftz}.f32`
#[inline]
pub fn ex2_approx_f32(x: f32, ftz: bool) -> f32 {
    approx_f32(x, ftz, f64::exp2)
}

/// `tanh.approx.f32`
#[inline]
pub fn tanh_approx_f32(x: f32) -> f32 {
    approx_f32(x, false, f64::tanh)
}

// ---------------------------------------------------------------------------------------
// min / max / abs / neg / copysign / testp

/// `min{.ftz}{.NaN}.f32`: a NaN operand yields the other operand (canonical NaN if both are
/// NaN, or if either is and `.NaN` is given); −0.0 < +0.0.
#[inline]
pub fn min_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    let (a, b) = (pre(a, ftz), pre(b, ftz));
    if a.is_nan() || b.is_nan() {
        return nan_pick_f32(a, b, nan);
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// `max{.ftz}{.NaN}.f32`, see [`min_f32`].
#[inline]
pub fn max_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    let (a, b) = (pre(a, ftz), pre(b, ftz));
    if a.is_nan() || b.is_nan() {
        return nan_pick_f32(a, b, nan);
    }
    if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

#[inline]
fn nan_pick_f32(a: f32, b: f32, nan: bool) -> f32 {
    if nan || (a.is_nan() && b.is_nan()) {
        f32::from_bits(CANONICAL_NAN_F32)
    } else if a.is_nan() {
        b
    } else {
        a
    }
}

/// `min.xorsign.abs{.ftz}{.NaN}.f32`: min(|a|, |b|) with sign(a) XOR sign(b).
#[inline]
pub fn min_xorsign_abs_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    xorsign_f32(
        min_f32(abs_f32(a, false), abs_f32(b, false), ftz, nan),
        a,
        b,
    )
}

/// `max.xorsign.abs{.ftz}{.NaN}.f32`: max(|a|, |b|) with sign(a) XOR sign(b).
#[inline]
pub fn max_xorsign_abs_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    xorsign_f32(
        max_f32(abs_f32(a, false), abs_f32(b, false), ftz, nan),
        a,
        b,
    )
}

#[inline]
fn xorsign_f32(r: f32, a: f32, b: f32) -> f32 {
    if r.is_nan() {
        return r;
    }
    let sign = (a.to_bits() ^ b.to_bits()) & 0x8000_0000;
    f32::from_bits(r.to_bits() | sign)
}

/// `min{.NaN}.f64`
#[inline]
pub fn min_f64(a: f64, b: f64, nan: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return nan_pick_f64(a, b, nan);
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// `max{.NaN}.f64`
#[inline]
pub fn max_f64(a: f64, b: f64, nan: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return nan_pick_f64(a, b, nan);
    }
    if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

#[inline]
fn nan_pick_f64(a: f64, b: f64, nan: bool) -> f64 {
    if nan || (a.is_nan() && b.is_nan()) {
        f64::from_bits(CANONICAL_NAN_F64)
    } else if a.is_nan() {
        b
    } else {
        a
    }
}

/// `abs{.ftz}.f32`: clears the sign bit (also of NaN).
#[inline]
pub fn abs_f32(x: f32, ftz: bool) -> f32 {
    f32::from_bits(pre(x, ftz).to_bits() & 0x7fff_ffff)
}

/// `neg{.ftz}.f32`: flips the sign bit (also of NaN).
#[inline]
pub fn neg_f32(x: f32, ftz: bool) -> f32 {
    f32::from_bits(pre(x, ftz).to_bits() ^ 0x8000_0000)
}

/// `abs.f64`
#[inline]
pub fn abs_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & !(1 << 63))
}

/// `neg.f64`
#[inline]
pub fn neg_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() ^ (1 << 63))
}

/// `copysign.f32 d, a, b`: `b` with the sign of `a` (note the operand order).
#[inline]
pub fn copysign_f32(a: f32, b: f32) -> f32 {
    f32::from_bits((b.to_bits() & 0x7fff_ffff) | (a.to_bits() & 0x8000_0000))
}

/// `copysign.f64 d, a, b`: `b` with the sign of `a`.
#[inline]
pub fn copysign_f64(a: f64, b: f64) -> f64 {
    const S: u64 = 1 << 63;
    f64::from_bits((b.to_bits() & !S) | (a.to_bits() & S))
}

/// The property `testp` tests (PTX ISA `testp`). Zero counts as *normal*.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// `testp.op.f32`
#[inline]
pub fn testp_f32(op: TestpOp, x: f32) -> bool {
    match op {
        TestpOp::Finite => x.is_finite(),
        TestpOp::Infinite => x.is_infinite(),
        TestpOp::Number => !x.is_nan(),
        TestpOp::NotANumber => x.is_nan(),
        TestpOp::Normal => x.is_normal() || x == 0.0,
        TestpOp::Subnormal => x.is_subnormal(),
    }
}

/// `testp.op.f64`
#[inline]
pub fn testp_f64(op: TestpOp, x: f64) -> bool {
    match op {
        TestpOp::Finite => x.is_finite(),
        TestpOp::Infinite => x.is_infinite(),
        TestpOp::Number => !x.is_nan(),
        TestpOp::NotANumber => x.is_nan(),
        TestpOp::Normal => x.is_normal() || x == 0.0,
        TestpOp::Subnormal => x.is_subnormal(),
    }
}
