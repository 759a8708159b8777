//! An exact reference for correctly rounded floating point, independent of
//! [`crate::round`]: values are big rationals, and the result is found by walking the
//! representable neighbours of an approximation until they bracket the exact value.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::Rounding;

pub fn pow2(e: i32) -> BigRational {
    let one = BigInt::one();
    if e >= 0 {
        BigRational::from_integer(one << e as usize)
    } else {
        BigRational::new(one.clone(), one << (-e) as usize)
    }
}

/// A float type the reference can round to.
pub trait RefFloat: Copy + PartialEq + std::fmt::Debug {
    const MAX: Self;
    /// 2^(emax+1): the "next value" after MAX used for the overflow tie rule.
    fn beyond_max() -> BigRational;
    fn exact(self) -> BigRational;
    fn from_approx(q: &BigRational) -> Self;
    fn next_up(self) -> Self;
    fn next_down(self) -> Self;
    fn is_even(self) -> bool;
    fn neg(self) -> Self;
    fn zero(neg: bool) -> Self;
    fn inf(neg: bool) -> Self;
    fn is_finite(self) -> bool;
    /// The encoding, zero-extended (tells −0 from +0, unlike `==`).
    fn bits(self) -> u64;
    /// The sign bit (set for −0 too).
    fn is_neg(self) -> bool {
        self.neg().bits() < self.bits()
    }
}

/// Implements [`RefFloat`] from the encoding alone (sign bit, `$frac` fraction bits,
/// bias `$emax`), so the same code serves `f32`, `f64` and the half types; `$approx`
/// turns an `f64` into a nearby value (any rounding: `round_ref` walks to the answer).
macro_rules! ref_float {
    ($t:ty, $bits:ty, $frac:expr, $emax:expr, $approx:expr) => {
        impl RefFloat for $t {
            const MAX: Self = <$t>::MAX;
            fn beyond_max() -> BigRational {
                pow2($emax + 1)
            }
            fn exact(self) -> BigRational {
                let b = self.to_bits();
                let w = <$bits>::BITS;
                let neg = b >> (w - 1) != 0;
                let e = ((b >> $frac) & ((1 << (w - 1 - $frac)) - 1)) as i32;
                let f = b & ((1 << $frac) - 1);
                let bias = $emax;
                let (m, ex) = if e == 0 {
                    (f, 1 - bias - $frac)
                } else {
                    (f | (1 << $frac), e - bias - $frac)
                };
                let v = BigRational::from_integer(BigInt::from(m)) * pow2(ex);
                if neg {
                    -v
                } else {
                    v
                }
            }
            fn from_approx(q: &BigRational) -> Self {
                let approx: fn(f64) -> $t = $approx;
                approx(q.to_f64().unwrap_or(0.0))
            }
            fn next_up(self) -> Self {
                let b = self.to_bits();
                if b << 1 == 0 {
                    <$t>::from_bits(1)
                } else if b >> (<$bits>::BITS - 1) == 0 {
                    <$t>::from_bits(b + 1)
                } else {
                    <$t>::from_bits(b - 1)
                }
            }
            fn next_down(self) -> Self {
                self.neg().next_up().neg()
            }
            fn is_even(self) -> bool {
                self.to_bits() & 1 == 0
            }
            fn neg(self) -> Self {
                <$t>::from_bits(self.to_bits() ^ (1 << (<$bits>::BITS - 1)))
            }
            fn zero(neg: bool) -> Self {
                <$t>::from_bits(if neg { 1 << (<$bits>::BITS - 1) } else { 0 })
            }
            fn inf(neg: bool) -> Self {
                let inf = <$t>::from_bits((<$bits>::MAX >> 1) & !((1 << $frac) - 1));
                if neg {
                    inf.neg()
                } else {
                    inf
                }
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}

ref_float!(f32, u32, 23, 127, |x| x as f32);
ref_float!(f64, u64, 52, 1023, |x| x);
// The `half` crate's `from_f64` is only an approximation here: on x86 with F16C it
// rounds through `f32` (double rounding), and `bf16::from_f64` drops the low 32 bits
// first. `round_ref` corrects either by walking the neighbours.
ref_float!(::half::f16, u16, 10, 15, ::half::f16::from_f64);
ref_float!(::half::bf16, u16, 7, 127, ::half::bf16::from_f64);

/// Rounds a nonzero exact value `q` to `T` in `rnd`.
pub fn round_ref<T: RefFloat>(q: &BigRational, rnd: Rounding) -> T {
    assert!(!q.is_zero());
    let neg = q.is_negative();
    let a = q.abs();
    // Work on the magnitude, then mirror the direction for negative values.
    let rnd_mag = match (rnd, neg) {
        (Rounding::Rm, true) => Rounding::Rp,
        (Rounding::Rp, true) => Rounding::Rm,
        (r, _) => r,
    };
    let r = if a > T::MAX.exact() {
        // Between MAX and "2^(emax+1)".
        match rnd_mag {
            Rounding::Rz | Rounding::Rm => T::MAX,
            Rounding::Rp => T::inf(false),
            Rounding::Rn => {
                let mid = (T::MAX.exact() + T::beyond_max()) / BigRational::from_integer(2.into());
                if a >= mid {
                    T::inf(false)
                } else {
                    T::MAX
                }
            }
        }
    } else {
        let mut lo = T::from_approx(&a);
        if !lo.is_finite() {
            lo = T::MAX;
        }
        if lo.exact().is_negative() {
            lo = T::zero(false);
        }
        while lo.exact() > a {
            lo = lo.next_down();
        }
        while lo != T::MAX && lo.next_up().exact() <= a {
            lo = lo.next_up();
        }
        if lo.exact() == a {
            lo
        } else {
            let hi = lo.next_up();
            match rnd_mag {
                Rounding::Rz | Rounding::Rm => lo,
                Rounding::Rp => hi,
                Rounding::Rn => {
                    let mid = (lo.exact() + hi.exact()) / BigRational::from_integer(2.into());
                    if a < mid || (a == mid && lo.is_even()) {
                        lo
                    } else {
                        hi
                    }
                }
            }
        }
    };
    if neg {
        r.neg()
    } else {
        r
    }
}

/// The IEEE sign of an exactly-zero sum of addends with these signs.
pub fn zero_sum<T: RefFloat>(x_neg: bool, y_neg: bool, rnd: Rounding) -> T {
    if x_neg == y_neg {
        T::zero(x_neg)
    } else {
        T::zero(rnd == Rounding::Rm)
    }
}

/// Reference `a + b` for finite operands.
pub fn add<T: RefFloat>(a: T, b: T, rnd: Rounding, a_neg: bool, b_neg: bool) -> T {
    let q = a.exact() + b.exact();
    if q.is_zero() {
        return zero_sum(a_neg, b_neg, rnd);
    }
    round_ref(&q, rnd)
}

/// Reference `a * b + c` for finite operands (`c = None` for a plain product).
pub fn fma<T: RefFloat>(a: T, b: T, c: Option<T>, rnd: Rounding, signs: [bool; 3]) -> T {
    let p = a.exact() * b.exact();
    let p_neg = signs[0] ^ signs[1];
    let q = match c {
        Some(c) => p + c.exact(),
        None => p,
    };
    if q.is_zero() {
        return match c {
            Some(_) => zero_sum(p_neg, signs[2], rnd),
            None => T::zero(p_neg),
        };
    }
    round_ref(&q, rnd)
}

/// Reference `a / b` for finite, nonzero operands.
pub fn div<T: RefFloat>(a: T, b: T, rnd: Rounding) -> T {
    round_ref(&(a.exact() / b.exact()), rnd)
}

/// Reference `sqrt(x)` for finite x > 0.
pub fn sqrt<T: RefFloat>(x: T, approx: T, rnd: Rounding) -> T {
    let a = x.exact();
    let sq = |v: T| {
        let e = v.exact();
        &e * &e
    };
    let mut lo = approx;
    while sq(lo) > a {
        lo = lo.next_down();
    }
    while sq(lo.next_up()) <= a {
        lo = lo.next_up();
    }
    if sq(lo) == a {
        return lo;
    }
    let hi = lo.next_up();
    match rnd {
        Rounding::Rz | Rounding::Rm => lo,
        Rounding::Rp => hi,
        Rounding::Rn => {
            let mid = (lo.exact() + hi.exact()) / BigRational::from_integer(2.into());
            if &mid * &mid > a {
                lo
            } else {
                hi
            }
        }
    }
}
