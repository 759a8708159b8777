//! Exact number conversions: the rounding modes, the one correctly-rounding soft-float
//! core, and PTX `cvt` between every pair of integer and float types.
//!
//! It sits below every crate that turns a number into a narrower one: the vgpu executes
//! `cvt` (and rounds its arithmetic) with it, and the host side, which never executes PTX,
//! rounds with the same code — the oracle its expected `f16` values, the argument specs the
//! `f16`/`bf16` elements they write into buffers. So a value the host computes and the same
//! value a kernel converts are bit for bit the same, on every host CPU.
//!
//! - [`round`]: the correctly-rounding core every directed-rounding path and every narrowing
//!   conversion ends in (binary formats from `f64` down to FP8, gradual underflow, overflow
//!   to ±∞ or ±MAX per direction, round-to-odd helpers).
//! - [`cvt`]: PTX ISA §9.7.9.21 `cvt` on raw register bits, and the concrete conversions
//!   callers use directly, among them [`cvt::cvt_f64_to_f16`] and [`cvt::cvt_f64_to_bf16`]
//!   (one rounding from `f64`, unlike `half`'s `from_f64`).
//! - `reference` (feature `reference`, and this crate's tests): an exact big-rational
//!   reference for correctly rounded results, independent of [`round`], that the tests of
//!   this crate and of the vgpu's arithmetic check against.
//!
//! Like the vgpu's `arith`, nothing here allocates (outside `reference`), panics on any
//! input, or keeps state. Values are raw bits where PTX registers are involved: narrower
//! types live in the low bits of a `u64`.

pub mod cvt;
#[cfg(any(test, feature = "reference"))]
pub mod reference;
pub mod round;

#[cfg(test)]
mod tests;

/// Floating-point rounding modifier: `.rn` (nearest, ties to even), `.rz` (toward zero),
/// `.rm` (toward −∞), `.rp` (toward +∞).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    #[default]
    Rn,
    Rz,
    Rm,
    Rp,
}

/// Rounding to an integral value: `.rni` (nearest even), `.rzi`, `.rmi`, `.rpi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IntRounding {
    #[default]
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// PTX scalar types that carry a numeric value (the `.bN` types are bit patterns and are
/// handled by callers as the same-width unsigned type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
}

impl ScalarKind {
    /// Width in bits.
    pub const fn bits(self) -> u32 {
        match self {
            ScalarKind::S8 | ScalarKind::U8 => 8,
            ScalarKind::S16 | ScalarKind::U16 | ScalarKind::F16 | ScalarKind::Bf16 => 16,
            ScalarKind::S32 | ScalarKind::U32 | ScalarKind::F32 => 32,
            ScalarKind::S64 | ScalarKind::U64 | ScalarKind::F64 => 64,
        }
    }

    pub const fn is_float(self) -> bool {
        matches!(
            self,
            ScalarKind::F16 | ScalarKind::Bf16 | ScalarKind::F32 | ScalarKind::F64
        )
    }

    pub const fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarKind::S8 | ScalarKind::S16 | ScalarKind::S32 | ScalarKind::S64
        )
    }
}

/// Canonical NaN of `.f32` results.
pub const CANONICAL_NAN_F32: u32 = 0x7fff_ffff;
/// Canonical NaN of `.f64` results (our choice: the ISA does not state the `.f64`
/// pattern; the all-ones payload by analogy with `.f32`).
pub const CANONICAL_NAN_F64: u64 = 0x7fff_ffff_ffff_ffff;
/// Canonical NaN of `.f16` and `.bf16` results.
pub const CANONICAL_NAN_F16: u16 = 0x7fff;
/// Canonical NaN of `.bf16` results.
pub const CANONICAL_NAN_BF16: u16 = 0x7fff;

/// `.ftz` on one `.f32` operand or result: subnormal → zero of the same sign.
#[inline]
pub fn ftz_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}
