//! The correctly-rounding soft-float core.
//!
//! Every directed-rounding result we cannot get from the host FPU (which only rounds to
//! nearest) ends here: a value given exactly as `±mag · 2^exp` plus a *sticky* flag (the
//! true value is strictly above `mag · 2^exp` but below `(mag + 1) · 2^exp`) is rounded to
//! a binary interchange format (IEEE 754-2008 §4.3, which the PTX ISA's
//! rounding modifiers refer to) with gradual underflow and overflow to ±∞ or ±MAX per direction.
//!
//! Two ways of producing such inputs are used by the callers:
//! - exact integer arithmetic on significands (`f64` `mul`/`fma`/`div`, integer → float);
//! - *round to odd* in `f64` ([`to_odd`]): for any target with at most 51 significand
//!   bits, rounding `f64` round-to-odd once and then rounding that `f64` to the target in
//!   any mode equals rounding the exact value directly (Boldo & Melquiond, "Emulation of
//!   FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC
//!   2008). `f32`/`f16`/`bf16` arithmetic uses this.
//!
//! The callers are [`crate::cvt`] and the vgpu's arithmetic (`fencehound_vgpu::arith`:
//! `float`, `half`, and the matrix unit), which is why the core is public.
//!
//! Functions the vgpu calls per lane are `#[inline]`, so they can be inlined into its
//! executor across the crate boundary (the same holds for [`crate::cvt`]).

use crate::Rounding;

/// A binary floating-point format: fraction bits and exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    frac: u32,
    exp: u32,
}

impl Format {
    pub const F64: Format = Format { frac: 52, exp: 11 };
    pub const F32: Format = Format { frac: 23, exp: 8 };
    pub const F16: Format = Format { frac: 10, exp: 5 };
    pub const BF16: Format = Format { frac: 7, exp: 8 };
    /// NVIDIA's TensorFloat-32, stored in the upper 19 bits of an `f32`.
    pub const TF32: Format = Format { frac: 10, exp: 8 };
    /// OCP FP8 E5M2 (PTX `.e5m2`): IEEE-style, with infinities and NaNs.
    pub const E5M2: Format = Format { frac: 2, exp: 5 };
    /// Three fraction bits over E5M2's exponent range: `.e4m3` values scaled by 2^-8
    /// round on exactly this grid (see `cvt::to_fp8`).
    pub const E5M3: Format = Format { frac: 3, exp: 5 };

    #[inline]
    const fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }
    #[inline]
    const fn emin(self) -> i32 {
        1 - self.bias()
    }
    #[inline]
    const fn prec(self) -> i32 {
        self.frac as i32 + 1
    }
    #[inline]
    pub const fn sign_bit(self) -> u64 {
        1 << (self.frac + self.exp)
    }
    #[inline]
    pub const fn inf(self) -> u64 {
        ((1 << self.exp) - 1) << self.frac
    }
    /// True for a subnormal bit pattern of this format.
    #[inline]
    pub const fn is_subnormal(self, bits: u64) -> bool {
        let exp_mask = ((1u64 << self.exp) - 1) << self.frac;
        bits & exp_mask == 0 && bits & ((1u64 << self.frac) - 1) != 0
    }
    /// All-ones payload, positive sign: the canonical NaN of every format we use.
    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        self.sign_bit() - 1
    }
}

/// Rounding direction of the core. `Rna` (ties away) exists only for `cvt.rna.tf32.f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Rn,
    Rna,
    Rz,
    Rm,
    Rp,
}

impl From<Rounding> for Dir {
    #[inline]
    fn from(r: Rounding) -> Dir {
        match r {
            Rounding::Rn => Dir::Rn,
            Rounding::Rz => Dir::Rz,
            Rounding::Rm => Dir::Rm,
            Rounding::Rp => Dir::Rp,
        }
    }
}

/// The result of an overflow: ±∞ or ±MAX depending on the direction (IEEE 754 §7.4).
#[inline]
fn overflow(fmt: Format, neg: bool, dir: Dir) -> u64 {
    let to_inf = match dir {
        Dir::Rn | Dir::Rna => true,
        Dir::Rz => false,
        Dir::Rp => !neg,
        Dir::Rm => neg,
    };
    let sign = if neg { fmt.sign_bit() } else { 0 };
    sign | if to_inf { fmt.inf() } else { fmt.inf() - 1 }
}

/// Rounds `±(mag + sticky·ε) · 2^exp` to `fmt` and returns the bit pattern.
/// `sticky` must be false when `mag == 0`.
#[inline]
pub fn round_exact(fmt: Format, neg: bool, mag: u128, exp: i32, sticky: bool, dir: Dir) -> u64 {
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if mag == 0 {
        return sign;
    }
    let msb = 127 - mag.leading_zeros() as i32;
    let e = exp + msb;
    if e > fmt.bias() {
        return overflow(fmt, neg, dir);
    }
    let p = fmt.prec();
    let lsb_exp = (e - (p - 1)).max(fmt.emin() - (p - 1));
    let shift = lsb_exp - exp;
    let (mut m, round_bit, rest) = if shift <= 0 {
        (mag << (-shift) as u32, false, false)
    } else if shift > 128 {
        (0, false, true)
    } else if shift == 128 {
        (0, mag >> 127 != 0, mag << 1 != 0)
    } else {
        let s = shift as u32;
        (
            mag >> s,
            (mag >> (s - 1)) & 1 != 0,
            mag & ((1u128 << (s - 1)) - 1) != 0,
        )
    };
    let sticky = rest || sticky;
    let inexact = round_bit || sticky;
    let inc = match dir {
        Dir::Rn => round_bit && (sticky || m & 1 == 1),
        Dir::Rna => round_bit,
        Dir::Rz => false,
        Dir::Rp => !neg && inexact,
        Dir::Rm => neg && inexact,
    };
    m += inc as u128;
    // Normal: biased exponent (E + bias) and the hidden bit adds one more exponent step, so
    // the base is E + bias - 1; subnormal: E = emin makes the base 0. A carry out of the
    // significand then bumps the exponent by itself.
    let base = (lsb_exp + (p - 1) + fmt.bias() - 1) as u64;
    let bits = (base << fmt.frac) + m as u64;
    if bits >= fmt.inf() {
        return overflow(fmt, neg, dir);
    }
    sign | bits
}

/// Splits a finite `f64` into sign, integer significand and exponent of its last bit.
#[inline]
pub fn decompose_f64(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7ff) as i32;
    let f = b & ((1 << 52) - 1);
    if e == 0 {
        (neg, f, -1074)
    } else {
        (neg, f | (1 << 52), e - 1075)
    }
}

/// Rounds an `f64` to `fmt`. NaN becomes `fmt`'s canonical NaN.
#[inline]
pub fn round_f64(fmt: Format, x: f64, dir: Dir) -> u64 {
    if x.is_nan() {
        return fmt.canonical_nan();
    }
    let neg = x.is_sign_negative();
    if x.is_infinite() {
        return fmt.inf() | if neg { fmt.sign_bit() } else { 0 };
    }
    let (neg, m, e) = decompose_f64(x);
    round_exact(fmt, neg, m as u128, e, false, dir)
}

/// Rounds an `f64` to `f32` in `dir`; NaN becomes the canonical `f32` NaN.
#[inline]
pub fn f64_to_f32(x: f64, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn && !x.is_nan() {
        return x as f32;
    }
    f32::from_bits(round_f64(Format::F32, x, rnd.into()) as u32)
}

/// Makes a round-to-nearest `f64` result `s` of an exact value `s + err` (where `err` is
/// the exact error, or any value with its sign) into the round-to-odd result.
#[inline]
pub fn to_odd(s: f64, err: f64) -> f64 {
    let b = s.to_bits();
    if err == 0.0 || b & 1 == 1 || !s.is_finite() {
        return s;
    }
    // Same sign: the exact value is farther from zero than s.
    if (err > 0.0) == (s > 0.0) {
        f64::from_bits(b + 1)
    } else {
        f64::from_bits(b - 1)
    }
}

/// The exact error of `a + b` rounded to nearest (Knuth's TwoSum); exact unless overflow.
#[inline]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// Adjusts the round-to-nearest `f64` result `r` of an exact value whose difference from
/// `r` has the sign of `err` into the result of `rnd`. `r` must be finite.
#[inline]
pub fn adjust_f64(r: f64, err: f64, rnd: Rounding) -> f64 {
    if err == 0.0 || err.is_nan() {
        return r;
    }
    let up = err > 0.0;
    let step_up = match rnd {
        Rounding::Rn => return r,
        Rounding::Rp => up,
        Rounding::Rm => false,
        Rounding::Rz => up && r < 0.0,
    };
    let step_down = match rnd {
        Rounding::Rm => !up,
        Rounding::Rz => !up && r > 0.0,
        _ => false,
    };
    if step_up {
        next_up_f64(r)
    } else if step_down {
        next_down_f64(r)
    } else {
        r
    }
}

#[inline]
pub fn next_up_f64(x: f64) -> f64 {
    let b = x.to_bits();
    if x.is_nan() || x == f64::INFINITY {
        x
    } else if x == 0.0 {
        f64::from_bits(1)
    } else if b >> 63 == 0 {
        f64::from_bits(b + 1)
    } else {
        f64::from_bits(b - 1)
    }
}

#[inline]
pub fn next_down_f64(x: f64) -> f64 {
    -next_up_f64(-x)
}

/// Overflow result in `f64` for an exact value beyond the finite range.
#[inline]
pub fn overflow_f64(neg: bool, rnd: Rounding) -> f64 {
    f64::from_bits(overflow(Format::F64, neg, rnd.into()))
}
