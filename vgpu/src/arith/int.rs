//! Integer arithmetic, PTX ISA §9.7.1 ("Integer Arithmetic Instructions"): `add`, `sub`
//! (wrapping; `.sat` for `.s32`), `mul`/`mad` `.lo/.hi/.wide`, `mad.hi.sat.s32`,
//! `mul24`/`mad24`, `sad`, `div`, `rem`, `abs`, `neg`, `min`, `max` (with `.relu`),
//! `dp4a`, `dp2a`; and §9.7.2 ("Extended-Precision Integer Arithmetic"): `add.cc`, `addc`,
//! `sub.cc`, `subc`, `mad.cc`, `madc`.
//!
//! `.lo` of `mul`/`mad` is the same bit pattern for signed and unsigned operands, so only
//! one function per width exists; `.hi` and `.wide` differ and exist per signedness.
//!
//! Unspecified results and what we return (NVIDIA hardware behaviour where known):
//! - `div` by zero: the ISA says "unspecified machine-specific value". We return what the
//!   hardware's division sequence yields: unsigned `x / 0` is all ones; signed `x / 0` is
//!   −1 for x ≥ 0 and 1 for x < 0 (|x| / 0 = all ones, then the quotient sign fix-up).
//! - `rem` by zero returns the dividend.
//! - `INT_MIN / −1` wraps to `INT_MIN`, `INT_MIN % −1` is 0 (two's complement).
//! - `abs(INT_MIN)` and `neg(INT_MIN)` are `INT_MIN`.

use super::CarryFlag;

// ---------------------------------------------------------------------------------------
// add / sub .sat

/// `add.sat.s32`: clamps to [`i32::MIN`, `i32::MAX`].
#[inline]
pub fn add_sat_s32(a: i32, b: i32) -> i32 {
    a.saturating_add(b)
}

/// `sub.sat.s32`
#[inline]
pub fn sub_sat_s32(a: i32, b: i32) -> i32 {
    a.saturating_sub(b)
}

// ---------------------------------------------------------------------------------------
// mul / mad

macro_rules! mul_lo {
    ($($t:ty => $mul_lo:ident, $mad_lo:ident;)*) => {$(
        #[doc = concat!("`mul.lo` for 16/32/64-bit operands (", stringify!($t), "; same bits for signed)")]
        #[inline]
        pub fn $mul_lo(a: $t, b: $t) -> $t {
            a.wrapping_mul(b)
        }
        #[doc = concat!("`mad.lo` on ", stringify!($t), ": low half of `a*b`, plus `c`, wrapping")]
        #[inline]
        pub fn $mad_lo(a: $t, b: $t, c: $t) -> $t {
            a.wrapping_mul(b).wrapping_add(c)
        }
    )*};
}

mul_lo! {
    u16 => mul_lo_16, mad_lo_16;
    u32 => mul_lo_32, mad_lo_32;
    u64 => mul_lo_64, mad_lo_64;
}

macro_rules! mul_hi {
    ($($t:ty, $w:ty, $n:expr => $mul_hi:ident, $mad_hi:ident;)*) => {$(
        #[doc = concat!("`mul.hi.", stringify!($t), "`: upper half of the full product")]
        #[inline]
        pub fn $mul_hi(a: $t, b: $t) -> $t {
            ((a as $w * b as $w) >> $n) as $t
        }
        #[doc = concat!("`mad.hi.", stringify!($t), "`: upper half of `a*b`, plus `c`, wrapping")]
        #[inline]
        pub fn $mad_hi(a: $t, b: $t, c: $t) -> $t {
            $mul_hi(a, b).wrapping_add(c)
        }
    )*};
}

mul_hi! {
    u16, u32, 16 => mul_hi_u16, mad_hi_u16;
    i16, i32, 16 => mul_hi_s16, mad_hi_s16;
    u32, u64, 32 => mul_hi_u32, mad_hi_u32;
    i32, i64, 32 => mul_hi_s32, mad_hi_s32;
    u64, u128, 64 => mul_hi_u64, mad_hi_u64;
    i64, i128, 64 => mul_hi_s64, mad_hi_s64;
}

macro_rules! mul_wide {
    ($($t:ty, $w:ty => $mul_wide:ident, $mad_wide:ident;)*) => {$(
        #[doc = concat!("`mul.wide.", stringify!($t), "`: the full double-width product")]
        #[inline]
        pub fn $mul_wide(a: $t, b: $t) -> $w {
            a as $w * b as $w
        }
        #[doc = concat!("`mad.wide.", stringify!($t), "`: full product plus a double-width `c`, wrapping")]
        #[inline]
        pub fn $mad_wide(a: $t, b: $t, c: $w) -> $w {
            (a as $w * b as $w).wrapping_add(c)
        }
    )*};
}

mul_wide! {
    u16, u32 => mul_wide_u16, mad_wide_u16;
    i16, i32 => mul_wide_s16, mad_wide_s16;
    u32, u64 => mul_wide_u32, mad_wide_u32;
    i32, i64 => mul_wide_s32, mad_wide_s32;
}

/// `mad.hi.sat.s32`: `sat(hi(a*b) + c)` (PTX: `.sat` applies only to `.s32` in `.hi` mode).
#[inline]
pub fn mad_hi_sat_s32(a: i32, b: i32, c: i32) -> i32 {
    mul_hi_s32(a, b).saturating_add(c)
}

// ---------------------------------------------------------------------------------------
// mul24 / mad24: operands use their low 24 bits; the product is 48 bits wide.

#[inline]
fn s24(x: i32) -> i64 {
    ((x << 8) >> 8) as i64
}

#[inline]
fn u24(x: u32) -> u64 {
    (x & 0x00ff_ffff) as u64
}

/// `mul24.lo.s32`: low 32 bits of the 48-bit product of the sign-extended low 24 bits.
#[inline]
pub fn mul24_lo_s32(a: i32, b: i32) -> i32 {
    (s24(a) * s24(b)) as i32
}

/// `mul24.hi.s32`: bits 47..16 of the 48-bit product.
#[inline]
pub fn mul24_hi_s32(a: i32, b: i32) -> i32 {
    ((s24(a) * s24(b)) >> 16) as i32
}

/// `mul24.lo.u32`
#[inline]
pub fn mul24_lo_u32(a: u32, b: u32) -> u32 {
    (u24(a) * u24(b)) as u32
}

/// `mul24.hi.u32`
#[inline]
pub fn mul24_hi_u32(a: u32, b: u32) -> u32 {
    ((u24(a) * u24(b)) >> 16) as u32
}

/// `mad24.lo.s32`
#[inline]
pub fn mad24_lo_s32(a: i32, b: i32, c: i32) -> i32 {
    mul24_lo_s32(a, b).wrapping_add(c)
}

/// `mad24.hi.s32`
#[inline]
pub fn mad24_hi_s32(a: i32, b: i32, c: i32) -> i32 {
    mul24_hi_s32(a, b).wrapping_add(c)
}

/// `mad24.hi.sat.s32`
#[inline]
pub fn mad24_hi_sat_s32(a: i32, b: i32, c: i32) -> i32 {
    mul24_hi_s32(a, b).saturating_add(c)
}

/// `mad24.lo.u32`
#[inline]
pub fn mad24_lo_u32(a: u32, b: u32, c: u32) -> u32 {
    mul24_lo_u32(a, b).wrapping_add(c)
}

/// `mad24.hi.u32`
#[inline]
pub fn mad24_hi_u32(a: u32, b: u32, c: u32) -> u32 {
    mul24_hi_u32(a, b).wrapping_add(c)
}

// ---------------------------------------------------------------------------------------
// sad / div / rem / abs / neg / min / max

macro_rules! per_signed {
    ($($t:ty => $sad:ident, $div:ident, $rem:ident, $abs:ident, $neg:ident;)*) => {$(
        #[doc = concat!("`sad.", stringify!($t), "`: `c + |a - b|` (the difference is exact, the sum wraps)")]
        #[inline]
        pub fn $sad(a: $t, b: $t, c: $t) -> $t {
            c.wrapping_add(a.abs_diff(b) as $t)
        }
        #[doc = concat!("`div.", stringify!($t), "`: truncating; by zero −1 (x ≥ 0) or 1 (x < 0); MIN/−1 = MIN")]
        #[inline]
        pub fn $div(a: $t, b: $t) -> $t {
            if b == 0 {
                if a < 0 { 1 } else { -1 }
            } else {
                a.wrapping_div(b)
            }
        }
        #[doc = concat!("`rem.", stringify!($t), "`: sign of the dividend; by zero returns `a`; MIN%−1 = 0")]
        #[inline]
        pub fn $rem(a: $t, b: $t) -> $t {
            if b == 0 { a } else { a.wrapping_rem(b) }
        }
        #[doc = concat!("`abs.", stringify!($t), "`: abs(MIN) = MIN")]
        #[inline]
        pub fn $abs(a: $t) -> $t {
            a.wrapping_abs()
        }
        #[doc = concat!("`neg.", stringify!($t), "`: neg(MIN) = MIN")]
        #[inline]
        pub fn $neg(a: $t) -> $t {
            a.wrapping_neg()
        }
    )*};
}

per_signed! {
    i16 => sad_s16, div_s16, rem_s16, abs_s16, neg_s16;
    i32 => sad_s32, div_s32, rem_s32, abs_s32, neg_s32;
    i64 => sad_s64, div_s64, rem_s64, abs_s64, neg_s64;
}

macro_rules! per_unsigned {
    ($($t:ty => $sad:ident, $div:ident, $rem:ident;)*) => {$(
        #[doc = concat!("`sad.", stringify!($t), "`: `c + |a - b|`, wrapping")]
        #[inline]
        pub fn $sad(a: $t, b: $t, c: $t) -> $t {
            c.wrapping_add(a.abs_diff(b))
        }
        #[doc = concat!("`div.", stringify!($t), "`: by zero all ones")]
        #[inline]
        pub fn $div(a: $t, b: $t) -> $t {
            if b == 0 { <$t>::MAX } else { a / b }
        }
        #[doc = concat!("`rem.", stringify!($t), "`: by zero returns `a`")]
        #[inline]
        pub fn $rem(a: $t, b: $t) -> $t {
            if b == 0 { a } else { a % b }
        }
    )*};
}

per_unsigned! {
    u16 => sad_u16, div_u16, rem_u16;
    u32 => sad_u32, div_u32, rem_u32;
    u64 => sad_u64, div_u64, rem_u64;
}

/// `min.relu.s32`: `max(min(a, b), 0)` (PTX ISA 8.0).
#[inline]
pub fn min_relu_s32(a: i32, b: i32) -> i32 {
    a.min(b).max(0)
}

/// `max.relu.s32`: `max(max(a, b), 0)` (PTX ISA 8.0).
#[inline]
pub fn max_relu_s32(a: i32, b: i32) -> i32 {
    a.max(b).max(0)
}

#[inline]
fn lanes16(x: u32) -> [u16; 2] {
    [x as u16, (x >> 16) as u16]
}

#[inline]
fn pack16(lo: u16, hi: u16) -> u32 {
    lo as u32 | (hi as u32) << 16
}

#[inline]
fn map2_s16(a: u32, b: u32, f: impl Fn(i16, i16) -> i16) -> u32 {
    let (a, b) = (lanes16(a), lanes16(b));
    pack16(
        f(a[0] as i16, b[0] as i16) as u16,
        f(a[1] as i16, b[1] as i16) as u16,
    )
}

#[inline]
fn map2_u16(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    let (a, b) = (lanes16(a), lanes16(b));
    pack16(f(a[0], b[0]), f(a[1], b[1]))
}

/// `min{.relu}.s16x2` (lane 0 in the low half).
#[inline]
pub fn min_s16x2(a: u32, b: u32, relu: bool) -> u32 {
    map2_s16(a, b, |x, y| if relu { x.min(y).max(0) } else { x.min(y) })
}

/// `max{.relu}.s16x2`
#[inline]
pub fn max_s16x2(a: u32, b: u32, relu: bool) -> u32 {
    map2_s16(a, b, |x, y| if relu { x.max(y).max(0) } else { x.max(y) })
}

/// `min.u16x2`
#[inline]
pub fn min_u16x2(a: u32, b: u32) -> u32 {
    map2_u16(a, b, u16::min)
}

/// `max.u16x2`
#[inline]
pub fn max_u16x2(a: u32, b: u32) -> u32 {
    map2_u16(a, b, u16::max)
}

/// `add.u16x2`/`add.s16x2` (lane-wise, wrapping; same bits for both).
#[inline]
pub fn add_16x2(a: u32, b: u32) -> u32 {
    map2_u16(a, b, u16::wrapping_add)
}

/// `sub.u16x2`/`sub.s16x2`
#[inline]
pub fn sub_16x2(a: u32, b: u32) -> u32 {
    map2_u16(a, b, u16::wrapping_sub)
}

// ---------------------------------------------------------------------------------------
// Extended precision: add.cc / addc / sub.cc / subc / mad.cc / madc (§9.7.2)

macro_rules! carry_ops {
    ($($t:ty, $s:ty => $add_cc:ident, $addc:ident, $sub_cc:ident, $subc:ident,
        $mad_lo_cc:ident, $madc_lo:ident, $mad_hi_cc:ident, $madc_hi:ident,
        $mad_hi_cc_s:ident, $madc_hi_s:ident, $hi_u:ident, $hi_s:ident;)*) => {$(
        #[doc = concat!("`add.cc` on ", stringify!($t), " (same bits for signed): sum and carry-out")]
        #[inline]
        pub fn $add_cc(a: $t, b: $t) -> ($t, CarryFlag) {
            let (s, c) = a.overflowing_add(b);
            (s, CarryFlag(c))
        }
        #[doc = concat!("`addc{.cc}` on ", stringify!($t), ": `a + b + CC.CF`")]
        #[inline]
        pub fn $addc(a: $t, b: $t, cin: CarryFlag) -> ($t, CarryFlag) {
            let (s1, c1) = a.overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(cin.0 as $t);
            (s2, CarryFlag(c1 | c2))
        }
        #[doc = concat!("`sub.cc` on ", stringify!($t), ": difference and the carry-out of `a + !b + 1` (1 when no borrow)")]
        #[inline]
        pub fn $sub_cc(a: $t, b: $t) -> ($t, CarryFlag) {
            (a.wrapping_sub(b), CarryFlag(a >= b))
        }
        #[doc = concat!("`subc{.cc}` on ", stringify!($t), ": `a + !b + CC.CF` (= `a - b - !CC.CF`) and its carry-out")]
        #[inline]
        pub fn $subc(a: $t, b: $t, cin: CarryFlag) -> ($t, CarryFlag) {
            $addc(a, !b, cin)
        }
        #[doc = concat!("`mad.lo.cc` on ", stringify!($t), ": `lo(a*b) + c` and carry-out")]
        #[inline]
        pub fn $mad_lo_cc(a: $t, b: $t, c: $t) -> ($t, CarryFlag) {
            $add_cc(a.wrapping_mul(b), c)
        }
        #[doc = concat!("`madc.lo{.cc}` on ", stringify!($t), ": `lo(a*b) + c + CC.CF`")]
        #[inline]
        pub fn $madc_lo(a: $t, b: $t, c: $t, cin: CarryFlag) -> ($t, CarryFlag) {
            $addc(a.wrapping_mul(b), c, cin)
        }
        #[doc = concat!("`mad.hi.cc` unsigned ", stringify!($t))]
        #[inline]
        pub fn $mad_hi_cc(a: $t, b: $t, c: $t) -> ($t, CarryFlag) {
            $add_cc($hi_u(a, b), c)
        }
        #[doc = concat!("`madc.hi{.cc}` unsigned ", stringify!($t))]
        #[inline]
        pub fn $madc_hi(a: $t, b: $t, c: $t, cin: CarryFlag) -> ($t, CarryFlag) {
            $addc($hi_u(a, b), c, cin)
        }
        #[doc = concat!("`mad.hi.cc` signed ", stringify!($s), "; operands and result as raw bits")]
        #[inline]
        pub fn $mad_hi_cc_s(a: $t, b: $t, c: $t) -> ($t, CarryFlag) {
            $add_cc($hi_s(a as $s, b as $s) as $t, c)
        }
        #[doc = concat!("`madc.hi{.cc}` signed ", stringify!($s), "; operands and result as raw bits")]
        #[inline]
        pub fn $madc_hi_s(a: $t, b: $t, c: $t, cin: CarryFlag) -> ($t, CarryFlag) {
            $addc($hi_s(a as $s, b as $s) as $t, c, cin)
        }
    )*};
}

carry_ops! {
    u32, i32 => add_cc_32, addc_32, sub_cc_32, subc_32, mad_lo_cc_32, madc_lo_32,
        mad_hi_cc_u32, madc_hi_u32, mad_hi_cc_s32, madc_hi_s32, mul_hi_u32, mul_hi_s32;
    u64, i64 => add_cc_64, addc_64, sub_cc_64, subc_64, mad_lo_cc_64, madc_lo_64,
        mad_hi_cc_u64, madc_hi_u64, mad_hi_cc_s64, madc_hi_s64, mul_hi_u64, mul_hi_s64;
}

// ---------------------------------------------------------------------------------------
// dp4a / dp2a (§9.7.1.23, §9.7.1.24)

#[inline]
fn byte_ext(x: u32, i: u32, signed: bool) -> i32 {
    let b = (x >> (8 * i)) as u8;
    if signed {
        b as i8 as i32
    } else {
        b as i32
    }
}

#[inline]
fn half_ext(x: u32, i: u32, signed: bool) -> i32 {
    let h = (x >> (16 * i)) as u16;
    if signed {
        h as i16 as i32
    } else {
        h as i32
    }
}

/// `dp4a.atype.btype d, a, b, c`: `c + Σ a.byte[i] · b.byte[i]`, bytes sign- or
/// zero-extended per operand type; 32-bit wrapping (the bits are the same whether `c`/`d`
/// are `.s32` or `.u32`).
#[inline]
pub fn dp4a(a: u32, b: u32, c: u32, a_signed: bool, b_signed: bool) -> u32 {
    let mut acc = c;
    for i in 0..4 {
        let p = byte_ext(a, i, a_signed) * byte_ext(b, i, b_signed);
        acc = acc.wrapping_add(p as u32);
    }
    acc
}

/// `dp2a.mode.atype.btype d, a, b, c`: `c + a.h0 · b.byte[k] + a.h1 · b.byte[k+1]` with
/// k = 0 for `.lo` and 2 for `.hi`.
#[inline]
pub fn dp2a(a: u32, b: u32, c: u32, a_signed: bool, b_signed: bool, hi: bool) -> u32 {
    let k = if hi { 2 } else { 0 };
    let p0 = half_ext(a, 0, a_signed) * byte_ext(b, k, b_signed);
    let p1 = half_ext(a, 1, a_signed) * byte_ext(b, k + 1, b_signed);
    c.wrapping_add(p0 as u32).wrapping_add(p1 as u32)
}
