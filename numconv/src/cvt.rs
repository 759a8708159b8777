//! `cvt`, PTX ISA §9.7.9.21, between every pair of `s8 s16 s32 s64 u8 u16 u32 u64 f16
//! bf16 f32 f64`, plus `cvt.{rn,rz}{.relu}{.satfinite}.f16x2.f32` and `.bf16x2.f32`,
//! `cvt.rna.tf32.f32`, the 8-bit float pairs (`cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2`
//! from two `.f32` or an `.f16x2`, and `cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2`), and
//! `cvt.pack.sat` (§9.7.9.22).
//!
//! Rules (ISA §9.7.9.21 and §6.5 "Rounding Modifiers" / "Saturation"):
//! - integer → integer: plain `cvt` truncates to the destination width or sign/zero-
//!   extends; `.sat` clamps to the destination range instead.
//! - integer → float: rounded with `.rn/.rz/.rm/.rp` (default `.rn`).
//! - float → integer: rounded to an integral value with `.rni/.rzi/.rmi/.rpi` (default
//!   `.rzi`, the C semantics ptxas requires a modifier for), then *always* saturated to the
//!   destination range; NaN → 0.
//! - float → float: widening is exact; narrowing rounds with `.rn/.rz/.rm/.rp` (default
//!   `.rn`); with an integer rounding modifier the value is rounded to an integral value
//!   (`cvt.rni.f32.f32` and friends). NaN becomes the destination's canonical NaN (our
//!   choice also for widening, where the ISA does not say whether payloads survive).
//! - `.ftz` flushes `.f32` subnormal sources and results to signed zero; `.sat` on a
//!   float destination clamps to [0, 1] with NaN → 0; `.relu` (f16/bf16 destinations)
//!   turns negative results into +0 and keeps NaN canonical; `.satfinite` keeps NaN and
//!   turns a result beyond the format's largest finite value into that value, signed.
//!
//! 8-bit floats (OCP FP8, PTX ISA §5.2.5 "Alternate floating-point data formats"):
//! `.e5m2` is IEEE-like (bias 15, infinities, NaN); `.e4m3` has bias 7, no infinities,
//! and `S.1111.111` as its only NaN, so its largest finite value is 448. Conversions to
//! them round to nearest even and require `.satfinite` (ptxas refuses them without):
//! NaN gives `0x7f`, a magnitude above the largest finite value gives it, signed.
//! Conversions from them are exact; an `.e4m3` NaN becomes the canonical `.f16` NaN
//! `0x7fff`, an `.e5m2` value is the upper byte of the `.f16` with the same value (NaN
//! payloads included).
//!
//! Integer results come back sign-extended (signed destination) or zero-extended
//! (unsigned) to 64 bits; float results as their bit pattern, zero-extended.

use ::half::{bf16, f16};

use crate::round::{round_exact, round_f64, Dir, Format};
use crate::{ftz_f32, IntRounding, Rounding, ScalarKind};

/// The rounding modifier of one `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CvtRounding {
    /// No modifier.
    #[default]
    None,
    Float(Rounding),
    Int(IntRounding),
}

/// The modifiers of one `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CvtMods {
    pub rnd: CvtRounding,
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    /// `.satfinite` (f16/bf16 destinations): ±∞ results become ±MAX, NaN stays NaN.
    pub satfinite: bool,
}

/// A source value, exact.
#[derive(Clone, Copy, Debug)]
enum Value {
    Int(i128),
    Float(f64),
}

#[inline]
fn decode(bits: u64, from: ScalarKind, ftz: bool) -> Value {
    match from {
        ScalarKind::S8 => Value::Int(bits as i8 as i128),
        ScalarKind::S16 => Value::Int(bits as i16 as i128),
        ScalarKind::S32 => Value::Int(bits as i32 as i128),
        ScalarKind::S64 => Value::Int(bits as i64 as i128),
        ScalarKind::U8 => Value::Int(bits as u8 as i128),
        ScalarKind::U16 => Value::Int(bits as u16 as i128),
        ScalarKind::U32 => Value::Int(bits as u32 as i128),
        ScalarKind::U64 => Value::Int(bits as i128),
        ScalarKind::F16 => Value::Float(f16::from_bits(bits as u16).to_f64()),
        ScalarKind::Bf16 => Value::Float(bf16::from_bits(bits as u16).to_f64()),
        ScalarKind::F32 => {
            let x = f32::from_bits(bits as u32);
            Value::Float(if ftz { ftz_f32(x) } else { x } as f64)
        }
        ScalarKind::F64 => Value::Float(f64::from_bits(bits)),
    }
}

#[inline]
fn int_range(to: ScalarKind) -> (i128, i128) {
    let w = to.bits();
    if to.is_signed_int() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

/// The destination bits of an integer value already in range (or to be truncated).
#[inline]
fn int_bits(v: i128, to: ScalarKind) -> u64 {
    let w = to.bits();
    let t = v as u64;
    if w == 64 {
        return t;
    }
    let t = t & ((1u64 << w) - 1);
    if to.is_signed_int() && t >> (w - 1) != 0 {
        t | !((1u64 << w) - 1)
    } else {
        t
    }
}

/// Rounds to an integral value in `f64` (exact for every source format).
#[inline]
pub fn round_integral(x: f64, r: IntRounding) -> f64 {
    match r {
        IntRounding::Rni => x.round_ties_even(),
        IntRounding::Rzi => x.trunc(),
        IntRounding::Rmi => x.floor(),
        IntRounding::Rpi => x.ceil(),
    }
}

#[inline]
fn float_format(k: ScalarKind) -> Format {
    match k {
        ScalarKind::F16 => Format::F16,
        ScalarKind::Bf16 => Format::BF16,
        ScalarKind::F32 => Format::F32,
        _ => Format::F64,
    }
}

#[inline]
fn int_rounding(r: CvtRounding) -> IntRounding {
    match r {
        CvtRounding::Int(r) => r,
        CvtRounding::Float(Rounding::Rn) => IntRounding::Rni,
        CvtRounding::Float(Rounding::Rm) => IntRounding::Rmi,
        CvtRounding::Float(Rounding::Rp) => IntRounding::Rpi,
        CvtRounding::Float(Rounding::Rz) | CvtRounding::None => IntRounding::Rzi,
    }
}

#[inline]
fn float_rounding(r: CvtRounding) -> Rounding {
    match r {
        CvtRounding::Float(r) => r,
        _ => Rounding::Rn,
    }
}

/// Post-processing of a float destination given as bits: `.ftz` (f32), `.sat`, `.relu`.
#[inline]
fn float_post(bits: u64, to: ScalarKind, m: CvtMods) -> u64 {
    let fmt = float_format(to);
    let bits = if m.ftz && to == ScalarKind::F32 && fmt.is_subnormal(bits) {
        bits & fmt.sign_bit()
    } else {
        bits
    };
    if !(m.sat || m.relu) {
        return bits;
    }
    let x = match to {
        ScalarKind::F16 => f16::from_bits(bits as u16).to_f64(),
        ScalarKind::Bf16 => bf16::from_bits(bits as u16).to_f64(),
        ScalarKind::F32 => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits),
    };
    if m.sat {
        if x > 0.0 {
            if x >= 1.0 {
                round_f64(fmt, 1.0, Dir::Rn)
            } else {
                bits
            }
        } else {
            0
        }
    } else if x <= 0.0 {
        0
    } else {
        bits
    }
}

/// `cvt{.rnd}{.ftz}{.sat}{.relu}.to.from d, a` on raw register bits.
#[inline]
pub fn cvt(bits: u64, from: ScalarKind, to: ScalarKind, m: CvtMods) -> u64 {
    let v = decode(bits, from, m.ftz);
    if !to.is_float() {
        let (lo, hi) = int_range(to);
        let i = match v {
            Value::Int(i) if m.sat => i.clamp(lo, hi),
            Value::Int(i) => i,
            // `as` saturates and maps NaN to 0, which is the PTX rule.
            Value::Float(x) => (round_integral(x, int_rounding(m.rnd)) as i128).clamp(lo, hi),
        };
        return int_bits(i, to);
    }
    let fmt = float_format(to);
    let out = match v {
        Value::Int(i) => {
            let dir: Dir = float_rounding(m.rnd).into();
            round_exact(fmt, i < 0, i.unsigned_abs(), 0, false, dir)
        }
        Value::Float(x) => {
            let (x, dir) = match m.rnd {
                CvtRounding::Int(r) => (round_integral(x, r), Dir::Rn),
                r => (x, float_rounding(r).into()),
            };
            round_f64(fmt, x, dir)
        }
    };
    let out = if m.satfinite && out & !fmt.sign_bit() == fmt.inf() {
        out - 1
    } else {
        out
    };
    float_post(out, to, m)
}

// ---------------------------------------------------------------------------------------
// Concrete hot-path conversions.

/// `cvt.irnd{.ftz}.s32.f32`: NaN → 0, saturating.
#[inline]
pub fn cvt_f32_to_s32(x: f32, rnd: IntRounding, ftz: bool) -> i32 {
    let x = if ftz { ftz_f32(x) } else { x };
    round_integral(x as f64, rnd) as i32
}

/// `cvt.irnd{.ftz}.u32.f32`: NaN → 0, saturating (negative → 0).
#[inline]
pub fn cvt_f32_to_u32(x: f32, rnd: IntRounding, ftz: bool) -> u32 {
    let x = if ftz { ftz_f32(x) } else { x };
    round_integral(x as f64, rnd) as u32
}

/// `cvt.irnd.s64.f64`
#[inline]
pub fn cvt_f64_to_s64(x: f64, rnd: IntRounding) -> i64 {
    round_integral(x, rnd) as i64
}

/// `cvt.irnd.u64.f64`
#[inline]
pub fn cvt_f64_to_u64(x: f64, rnd: IntRounding) -> u64 {
    round_integral(x, rnd) as u64
}

/// `cvt.irnd.s32.f64`
#[inline]
pub fn cvt_f64_to_s32(x: f64, rnd: IntRounding) -> i32 {
    round_integral(x, rnd) as i32
}

/// `cvt.rnd.f32.s32`
#[inline]
pub fn cvt_s32_to_f32(x: i32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return x as f32;
    }
    f32::from_bits(round_exact(
        Format::F32,
        x < 0,
        x.unsigned_abs() as u128,
        0,
        false,
        rnd.into(),
    ) as u32)
}

/// `cvt.rnd.f32.u32`
#[inline]
pub fn cvt_u32_to_f32(x: u32, rnd: Rounding) -> f32 {
    if rnd == Rounding::Rn {
        return x as f32;
    }
    f32::from_bits(round_exact(Format::F32, false, x as u128, 0, false, rnd.into()) as u32)
}

/// `cvt.rnd.f64.s64`
#[inline]
pub fn cvt_s64_to_f64(x: i64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn {
        return x as f64;
    }
    f64::from_bits(round_exact(
        Format::F64,
        x < 0,
        x.unsigned_abs() as u128,
        0,
        false,
        rnd.into(),
    ))
}

/// `cvt.rnd.f64.u64`
#[inline]
pub fn cvt_u64_to_f64(x: u64, rnd: Rounding) -> f64 {
    if rnd == Rounding::Rn {
        return x as f64;
    }
    f64::from_bits(round_exact(
        Format::F64,
        false,
        x as u128,
        0,
        false,
        rnd.into(),
    ))
}

/// `cvt{.ftz}.f64.f32` (exact; NaN canonical).
#[inline]
pub fn cvt_f32_to_f64(x: f32, ftz: bool) -> f64 {
    f64::from_bits(cvt(
        x.to_bits() as u64,
        ScalarKind::F32,
        ScalarKind::F64,
        CvtMods {
            ftz,
            ..CvtMods::default()
        },
    ))
}

/// `cvt.rnd{.ftz}{.sat}.f32.f64`
#[inline]
pub fn cvt_f64_to_f32(x: f64, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    let m = CvtMods {
        rnd: CvtRounding::Float(rnd),
        ftz,
        sat,
        ..CvtMods::default()
    };
    f32::from_bits(cvt(x.to_bits(), ScalarKind::F64, ScalarKind::F32, m) as u32)
}

/// `cvt.rnd{.relu}.<to>.<from>` into a 16-bit float type: its bits.
#[inline]
fn cvt_to_16(bits: u64, from: ScalarKind, to: ScalarKind, rnd: Rounding, relu: bool) -> u16 {
    let m = CvtMods {
        rnd: CvtRounding::Float(rnd),
        relu,
        ..CvtMods::default()
    };
    cvt(bits, from, to, m) as u16
}

/// `cvt.rnd.f16.f64`: one correct rounding. Host code that turns an `f64` into an `f16`
/// (argument values, expected outputs) uses this rather than `half`'s `f16::from_f64`,
/// which on x86 with F16C rounds through `f32` (twice) and so can land one unit off on
/// just-above-tie values — depending on the host's CPU.
#[inline]
pub fn cvt_f64_to_f16(x: f64, rnd: Rounding) -> f16 {
    f16::from_bits(cvt_to_16(
        x.to_bits(),
        ScalarKind::F64,
        ScalarKind::F16,
        rnd,
        false,
    ))
}

/// `cvt.rnd.bf16.f64`: one correct rounding (`half`'s `bf16::from_f64` drops the low 32
/// bits of the `f64` first, losing the sticky bit).
#[inline]
pub fn cvt_f64_to_bf16(x: f64, rnd: Rounding) -> bf16 {
    bf16::from_bits(cvt_to_16(
        x.to_bits(),
        ScalarKind::F64,
        ScalarKind::Bf16,
        rnd,
        false,
    ))
}

/// `cvt.rnd{.relu}.f16.f32`
#[inline]
pub fn cvt_f32_to_f16(x: f32, rnd: Rounding, relu: bool) -> f16 {
    let bits = x.to_bits() as u64;
    f16::from_bits(cvt_to_16(bits, ScalarKind::F32, ScalarKind::F16, rnd, relu))
}

/// `cvt.rnd{.relu}.bf16.f32`
#[inline]
pub fn cvt_f32_to_bf16(x: f32, rnd: Rounding, relu: bool) -> bf16 {
    let bits = x.to_bits() as u64;
    bf16::from_bits(cvt_to_16(
        bits,
        ScalarKind::F32,
        ScalarKind::Bf16,
        rnd,
        relu,
    ))
}

/// `cvt{.ftz}.f32.f16` (exact).
#[inline]
pub fn cvt_f16_to_f32(x: f16) -> f32 {
    if x.is_nan() {
        return f32::from_bits(crate::CANONICAL_NAN_F32);
    }
    x.to_f32()
}

/// `cvt.f32.bf16` (exact).
#[inline]
pub fn cvt_bf16_to_f32(x: bf16) -> f32 {
    if x.is_nan() {
        return f32::from_bits(crate::CANONICAL_NAN_F32);
    }
    x.to_f32()
}

/// `cvt.rn{.relu}.f16x2.f32 d, a, b`: `a` goes to the upper half, `b` to the lower.
#[inline]
pub fn cvt_rn_f16x2_f32(a: f32, b: f32, relu: bool) -> u32 {
    let h = |x| cvt_f32_to_f16(x, Rounding::Rn, relu).to_bits() as u32;
    h(a) << 16 | h(b)
}

/// `cvt.rn{.relu}.bf16x2.f32 d, a, b`: `a` goes to the upper half, `b` to the lower.
#[inline]
pub fn cvt_rn_bf16x2_f32(a: f32, b: f32, relu: bool) -> u32 {
    let h = |x| cvt_f32_to_bf16(x, Rounding::Rn, relu).to_bits() as u32;
    h(a) << 16 | h(b)
}

/// `cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b` (`a` upper, `b` lower).
#[inline]
pub fn cvt_x2_f32(a: f32, b: f32, bf: bool, rnd: Rounding, relu: bool, satfinite: bool) -> u32 {
    let m = CvtMods {
        rnd: CvtRounding::Float(rnd),
        relu,
        satfinite,
        ..CvtMods::default()
    };
    let to = if bf {
        ScalarKind::Bf16
    } else {
        ScalarKind::F16
    };
    let h = |x: f32| cvt(x.to_bits() as u64, ScalarKind::F32, to, m) as u32;
    h(a) << 16 | h(b)
}

/// The 8-bit float formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8 {
    E4m3,
    E5m2,
}

/// `.e4m3`'s largest finite value, `S.1111.110` = 1.75 · 2^8.
const E4M3_MAX: f64 = 448.0;
/// `.e5m2`'s largest finite value, `S.11110.11` = 1.75 · 2^15.
const E5M2_MAX: f64 = 57344.0;

/// Converts `x` to an 8-bit float: round to nearest even, `.satfinite` (mandatory in
/// PTX), optional `.relu`. See the module docs for NaN and overflow.
#[inline]
pub fn to_fp8(x: f64, fmt: Fp8, relu: bool) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    if relu && x <= 0.0 {
        return 0;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let max = match fmt {
        Fp8::E4m3 => E4M3_MAX,
        Fp8::E5m2 => E5M2_MAX,
    };
    if x.abs() > max {
        // `.satfinite`: beyond the largest finite value (∞ included) gives it, signed.
        return sign | if fmt == Fp8::E4m3 { 0x7e } else { 0x7b };
    }
    match fmt {
        Fp8::E5m2 => round_f64(Format::E5M2, x, Dir::Rn) as u8,
        Fp8::E4m3 => {
            // `.e4m3` with bias 7 has the rounding grid of a 3-fraction-bit format with
            // bias 15 scaled by 2^8 (normal from 2^-6, subnormal step 2^-9), so round
            // x·2^-8 there: the bit patterns coincide (exponent field e ↔ e, same
            // fraction). |x| ≤ 448 cannot round past 448.
            let bits = round_f64(Format::E5M3, x.abs() * 2f64.powi(-8), Dir::Rn);
            sign | bits as u8
        }
    }
}

/// Converts an 8-bit float to `.f16` bits, exactly; `.relu` turns negatives into +0 and
/// NaN into the canonical NaN.
#[inline]
pub fn fp8_to_f16(b: u8, fmt: Fp8, relu: bool) -> u16 {
    let (nan, neg) = match fmt {
        Fp8::E4m3 => (b & 0x7f == 0x7f, b & 0x80 != 0),
        Fp8::E5m2 => (b & 0x7c == 0x7c && b & 3 != 0, b & 0x80 != 0),
    };
    if relu && nan {
        return 0x7fff;
    }
    if relu && neg {
        return 0;
    }
    match fmt {
        Fp8::E5m2 => (b as u16) << 8,
        Fp8::E4m3 if nan => 0x7fff,
        Fp8::E4m3 => {
            let e = (b >> 3) & 0xf;
            let m = (b & 7) as u16;
            let s = ((b & 0x80) as u16) << 8;
            if e == 0 {
                // Subnormal m·2^-9: an f16 normal (or zero) with the same value.
                f16::from_f64(m as f64 * 2f64.powi(-9)).to_bits() | s
            } else {
                // Rebias 7 → 15 and widen the fraction 3 → 10 bits.
                s | ((e as u16 + 8) << 10) | m << 7
            }
        }
    }
}

/// `cvt.pack.sat.{t}.s32{.b32} d, a, b{, c}` (PTX ISA §9.7.9.22): `a` and `b` clamped to
/// the `bits`-wide type, `b` in the low bits, `a` above it, and with `c` the rest of `d`
/// from the low bits of `c`.
#[inline]
pub fn cvt_pack_sat(a: i32, b: i32, bits: u32, signed: bool, c: Option<u32>) -> u32 {
    let (lo, hi) = if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let m = (1u64 << bits) - 1;
    let t = |v: i32| (v as i64).clamp(lo, hi) as u64 & m;
    let td = t(b) | t(a) << bits;
    match c {
        Some(c) if 2 * bits < 32 => (td | (c as u64) << (2 * bits)) as u32,
        _ => td as u32,
    }
}

/// `cvt.rna.tf32.f32`: round to 10 fraction bits with ties away from zero, returned as an
/// `f32` bit pattern whose low 13 bits are zero. NaN → canonical NaN (`0x7fffffff`, whose
/// low bits we keep: the ISA leaves the NaN pattern of `.tf32` unspecified).
#[inline]
pub fn cvt_rna_tf32_f32(x: f32) -> u32 {
    if x.is_nan() {
        return crate::CANONICAL_NAN_F32;
    }
    let t = round_f64(Format::TF32, x as f64, Dir::Rna);
    // TF32 has f32's sign and exponent layout with 13 fewer fraction bits.
    (t as u32) << 13
}
