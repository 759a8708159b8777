//! Half-precision instructions, PTX ISA §9.7.4 ("Half Precision Floating-Point
//! Instructions"): `add`, `sub`, `mul`, `fma` (`.rn` only, `.ftz`/`.sat` for `.f16`,
//! `.relu` for `fma`), `min`/`max` (`.NaN`), `neg`, `abs`, and `setp` for `.f16`, `.bf16`
//! and the packed `.f16x2`/`.bf16x2` forms; plus `ex2.approx` and `tanh.approx` (§9.7.3).
//!
//! Packed values: lane 0 is the low 16 bits, lane 1 the high 16 bits.
//!
//! Results are the correctly rounded (`.rn`) value of the exact operation: operands widen
//! exactly to `f64`, the operation is done exactly or round-to-odd there, then rounded
//! once ([`super::round`]). NaN results are the canonical `0x7fff`. `.ftz` flushes `.f16`
//! subnormal operands and results to zero of the same sign; `.sat` clamps to [0, 1] with
//! NaN → +0; `.relu` turns negative results (and −0.0) into +0.0 and keeps NaN canonical.
//! `neg`/`abs` are sign-bit operations, also on NaN.

use ::half::{bf16, f16};

use super::cmp::setp_f64;
use super::round::{round_f64, to_odd, two_sum, Dir, Format};
use super::CmpOp;

#[inline]
fn widen(bits: u16, fmt: Format) -> f64 {
    if fmt == Format::F16 {
        f16::from_bits(bits).to_f64()
    } else {
        bf16::from_bits(bits).to_f64()
    }
}

#[inline]
fn narrow(x: f64, fmt: Format) -> u16 {
    round_f64(fmt, x, Dir::Rn) as u16
}

#[inline]
fn flush(bits: u16, fmt: Format, ftz: bool) -> u16 {
    if ftz && fmt.is_subnormal(bits as u64) {
        bits & 0x8000
    } else {
        bits
    }
}

/// The modifiers of one half-precision instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalfMods {
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
}

#[inline]
fn post(bits: u16, fmt: Format, m: HalfMods) -> u16 {
    let bits = flush(bits, fmt, m.ftz);
    let x = widen(bits, fmt);
    if m.sat {
        if x > 0.0 {
            if x >= 1.0 {
                narrow(1.0, fmt)
            } else {
                bits
            }
        } else {
            0
        }
    } else if m.relu && x <= 0.0 {
        0
    } else {
        bits
    }
}

#[inline]
fn add_bits(a: u16, b: u16, fmt: Format, m: HalfMods) -> u16 {
    let (x, y) = (
        widen(flush(a, fmt, m.ftz), fmt),
        widen(flush(b, fmt, m.ftz), fmt),
    );
    let (s, e) = two_sum(x, y);
    post(narrow(to_odd(s, e), fmt), fmt, m)
}

#[inline]
fn mul_bits(a: u16, b: u16, fmt: Format, m: HalfMods) -> u16 {
    let (x, y) = (
        widen(flush(a, fmt, m.ftz), fmt),
        widen(flush(b, fmt, m.ftz), fmt),
    );
    // ≤ 11×11-bit significands: exact in f64.
    post(narrow(x * y, fmt), fmt, m)
}

#[inline]
fn fma_bits(a: u16, b: u16, c: u16, fmt: Format, m: HalfMods) -> u16 {
    let f = |v| widen(flush(v, fmt, m.ftz), fmt);
    let (s, e) = two_sum(f(a) * f(b), f(c));
    post(narrow(to_odd(s, e), fmt), fmt, m)
}

#[inline]
fn minmax_bits(a: u16, b: u16, fmt: Format, ftz: bool, nan: bool, max: bool) -> u16 {
    let (a, b) = (flush(a, fmt, ftz), flush(b, fmt, ftz));
    let (x, y) = (widen(a, fmt), widen(b, fmt));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => return fmt.canonical_nan() as u16,
        (true, false) | (false, true) if nan => return fmt.canonical_nan() as u16,
        (true, false) => return b,
        (false, true) => return a,
        _ => {}
    }
    let a_first = if max {
        x > y || (x == y && a & 0x8000 == 0)
    } else {
        x < y || (x == y && a & 0x8000 != 0)
    };
    if a_first {
        a
    } else {
        b
    }
}

#[inline]
fn map2(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    f(a as u16, b as u16) as u32 | (f((a >> 16) as u16, (b >> 16) as u16) as u32) << 16
}

#[inline]
fn map3(a: u32, b: u32, c: u32, f: impl Fn(u16, u16, u16) -> u16) -> u32 {
    f(a as u16, b as u16, c as u16) as u32
        | (f((a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16) as u32) << 16
}

#[inline]
fn map1(a: u32, f: impl Fn(u16) -> u16) -> u32 {
    f(a as u16) as u32 | (f((a >> 16) as u16) as u32) << 16
}

macro_rules! half_family {
    ($t:ident, $fmt:expr, $name:literal,
     $add:ident, $sub:ident, $mul:ident, $fma:ident, $min:ident, $max:ident,
     $neg:ident, $abs:ident, $setp:ident,
     $add2:ident, $sub2:ident, $mul2:ident, $fma2:ident, $min2:ident, $max2:ident,
     $neg2:ident, $abs2:ident, $setp2:ident) => {
        #[doc = concat!("`add.rn{.ftz}{.sat}.", $name, "`")]
        #[inline]
        pub fn $add(a: $t, b: $t, m: HalfMods) -> $t {
            $t::from_bits(add_bits(a.to_bits(), b.to_bits(), $fmt, m))
        }
        #[doc = concat!("`sub.rn{.ftz}{.sat}.", $name, "`")]
        #[inline]
        pub fn $sub(a: $t, b: $t, m: HalfMods) -> $t {
            $t::from_bits(add_bits(a.to_bits(), b.to_bits() ^ 0x8000, $fmt, m))
        }
        #[doc = concat!("`mul.rn{.ftz}{.sat}.", $name, "`")]
        #[inline]
        pub fn $mul(a: $t, b: $t, m: HalfMods) -> $t {
            $t::from_bits(mul_bits(a.to_bits(), b.to_bits(), $fmt, m))
        }
        #[doc = concat!("`fma.rn{.ftz}{.sat|.relu}.", $name, "`")]
        #[inline]
        pub fn $fma(a: $t, b: $t, c: $t, m: HalfMods) -> $t {
            $t::from_bits(fma_bits(a.to_bits(), b.to_bits(), c.to_bits(), $fmt, m))
        }
        #[doc = concat!("`min{.ftz}{.NaN}.", $name, "`: a NaN operand yields the other; −0 < +0")]
        #[inline]
        pub fn $min(a: $t, b: $t, ftz: bool, nan: bool) -> $t {
            $t::from_bits(minmax_bits(a.to_bits(), b.to_bits(), $fmt, ftz, nan, false))
        }
        #[doc = concat!("`max{.ftz}{.NaN}.", $name, "`")]
        #[inline]
        pub fn $max(a: $t, b: $t, ftz: bool, nan: bool) -> $t {
            $t::from_bits(minmax_bits(a.to_bits(), b.to_bits(), $fmt, ftz, nan, true))
        }
        #[doc = concat!("`neg{.ftz}.", $name, "` (sign flip, also of NaN)")]
        #[inline]
        pub fn $neg(a: $t, ftz: bool) -> $t {
            $t::from_bits(flush(a.to_bits(), $fmt, ftz) ^ 0x8000)
        }
        #[doc = concat!("`abs{.ftz}.", $name, "` (sign clear, also of NaN)")]
        #[inline]
        pub fn $abs(a: $t, ftz: bool) -> $t {
            $t::from_bits(flush(a.to_bits(), $fmt, ftz) & 0x7fff)
        }
        #[doc = concat!("`setp.op{.ftz}.", $name, "`")]
        #[inline]
        pub fn $setp(a: $t, b: $t, op: CmpOp, ftz: bool) -> bool {
            setp_f64(
                widen(flush(a.to_bits(), $fmt, ftz), $fmt),
                widen(flush(b.to_bits(), $fmt, ftz), $fmt),
                op,
            )
        }
        #[doc = concat!("`add.rn{.ftz}{.sat}.", $name, "x2`")]
        #[inline]
        pub fn $add2(a: u32, b: u32, m: HalfMods) -> u32 {
            map2(a, b, |x, y| add_bits(x, y, $fmt, m))
        }
        #[doc = concat!("`sub.rn{.ftz}{.sat}.", $name, "x2`")]
        #[inline]
        pub fn $sub2(a: u32, b: u32, m: HalfMods) -> u32 {
            map2(a, b, |x, y| add_bits(x, y ^ 0x8000, $fmt, m))
        }
        #[doc = concat!("`mul.rn{.ftz}{.sat}.", $name, "x2`")]
        #[inline]
        pub fn $mul2(a: u32, b: u32, m: HalfMods) -> u32 {
            map2(a, b, |x, y| mul_bits(x, y, $fmt, m))
        }
        #[doc = concat!("`fma.rn{.ftz}{.sat|.relu}.", $name, "x2`")]
        #[inline]
        pub fn $fma2(a: u32, b: u32, c: u32, m: HalfMods) -> u32 {
            map3(a, b, c, |x, y, z| fma_bits(x, y, z, $fmt, m))
        }
        #[doc = concat!("`min{.ftz}{.NaN}.", $name, "x2`")]
        #[inline]
        pub fn $min2(a: u32, b: u32, ftz: bool, nan: bool) -> u32 {
            map2(a, b, |x, y| minmax_bits(x, y, $fmt, ftz, nan, false))
        }
        #[doc = concat!("`max{.ftz}{.NaN}.", $name, "x2`")]
        #[inline]
        pub fn $max2(a: u32, b: u32, ftz: bool, nan: bool) -> u32 {
            map2(a, b, |x, y| minmax_bits(x, y, $fmt, ftz, nan, true))
        }
        #[doc = concat!("`neg{.ftz}.", $name, "x2`")]
        #[inline]
        pub fn $neg2(a: u32, ftz: bool) -> u32 {
            map1(a, |x| flush(x, $fmt, ftz) ^ 0x8000)
        }
        #[doc = concat!("`abs{.ftz}.", $name, "x2`")]
        #[inline]
        pub fn $abs2(a: u32, ftz: bool) -> u32 {
            map1(a, |x| flush(x, $fmt, ftz) & 0x7fff)
        }
        #[doc = concat!("`setp.op{.ftz}.", $name, "x2 p|q`: (lane 0, lane 1)")]
        #[inline]
        pub fn $setp2(a: u32, b: u32, op: CmpOp, ftz: bool) -> (bool, bool) {
            let lane =
                |x: u32, y: u32| $setp($t::from_bits(x as u16), $t::from_bits(y as u16), op, ftz);
            (lane(a, b), lane(a >> 16, b >> 16))
        }
    };
}

half_family!(
    f16,
    Format::F16,
    "f16",
    add_f16,
    sub_f16,
    mul_f16,
    fma_f16,
    min_f16,
    max_f16,
    neg_f16,
    abs_f16,
    setp_f16,
    add_f16x2,
    sub_f16x2,
    mul_f16x2,
    fma_f16x2,
    min_f16x2,
    max_f16x2,
    neg_f16x2,
    abs_f16x2,
    setp_f16x2
);

half_family!(
    bf16,
    Format::BF16,
    "bf16",
    add_bf16,
    sub_bf16,
    mul_bf16,
    fma_bf16,
    min_bf16,
    max_bf16,
    neg_bf16,
    abs_bf16,
    setp_bf16,
    add_bf16x2,
    sub_bf16x2,
    mul_bf16x2,
    fma_bf16x2,
    min_bf16x2,
    max_bf16x2,
    neg_bf16x2,
    abs_bf16x2,
    setp_bf16x2
);

#[inline]
fn approx_bits(x: u16, fmt: Format, ftz: bool, f: fn(f64) -> f64) -> u16 {
    let x = widen(flush(x, fmt, ftz), fmt);
    flush(narrow(f(x), fmt), fmt, ftz)
}

/// `ex2.approx.f16`: modelled as the correctly rounded 2^x (PTX: max relative error
/// 2^-9.9).
#[inline]
pub fn ex2_approx_f16(x: f16) -> f16 {
    f16::from_bits(approx_bits(x.to_bits(), Format::F16, false, f64::exp2))
}

/// `ex2.approx.f16x2`
#[inline]
pub fn ex2_approx_f16x2(x: u32) -> u32 {
    map1(x, |h| approx_bits(h, Format::F16, false, f64::exp2))
}

/// `ex2.approx.ftz.bf16`
#[inline]
pub fn ex2_approx_ftz_bf16(x: bf16) -> bf16 {
    bf16::from_bits(approx_bits(x.to_bits(), Format::BF16, true, f64::exp2))
}

/// `ex2.approx.ftz.bf16x2`
#[inline]
pub fn ex2_approx_ftz_bf16x2(x: u32) -> u32 {
    map1(x, |h| approx_bits(h, Format::BF16, true, f64::exp2))
}

/// `tanh.approx.f16`
#[inline]
pub fn tanh_approx_f16(x: f16) -> f16 {
    f16::from_bits(approx_bits(x.to_bits(), Format::F16, false, f64::tanh))
}

/// `tanh.approx.bf16`
#[inline]
pub fn tanh_approx_bf16(x: bf16) -> bf16 {
    bf16::from_bits(approx_bits(x.to_bits(), Format::BF16, false, f64::tanh))
}
