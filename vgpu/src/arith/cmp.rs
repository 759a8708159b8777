//! Comparison and selection, PTX ISA §9.7.6: `setp`, `set`, `selp`, `slct`.
//!
//! Floats: the plain operators (`eq ne lt le gt ge`) are *ordered* — false if either
//! operand is NaN (so `ne` with a NaN is false); the `u` operators are *unordered* — true
//! if either is NaN; `num` is true iff neither is NaN, `nan` iff either is. −0.0 equals
//! +0.0. `.ftz` flushes `.f32` subnormal operands first.
//!
//! Integers: `lo ls hi hs` compare the bits as unsigned whatever the operand type; the
//! plain operators compare as the operand type. Float-only operators on integer operands
//! are rejected by the parser; here they are false.
//!
//! `slct` selects on the sign of `c`: `c >= 0` picks `a`. For `.f32`, −0.0 counts as ≥ 0;
//! with `.ftz` a subnormal `c` is flushed to zero (so picks `a`); a NaN `c` is not
//! specified by the ISA and we pick `b` (NaN is not ≥ 0).

use super::float::ftz_f32;
use super::CmpOp;

/// `setp.op{.ftz}.f32`
#[inline]
pub fn setp_f32(a: f32, b: f32, op: CmpOp, ftz: bool) -> bool {
    if ftz {
        setp_f64(ftz_f32(a) as f64, ftz_f32(b) as f64, op)
    } else {
        setp_f64(a as f64, b as f64, op)
    }
}

/// `setp.op.f64` (also used for `.f16`/`.bf16` after exact widening).
#[inline]
pub fn setp_f64(a: f64, b: f64, op: CmpOp) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => !unordered && a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        CmpOp::Equ => unordered || a == b,
        CmpOp::Neu => a != b,
        CmpOp::Ltu => unordered || a < b,
        CmpOp::Leu => unordered || a <= b,
        CmpOp::Gtu => unordered || a > b,
        CmpOp::Geu => unordered || a >= b,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

/// `setp.op.sN` for any signed width: pass the operands sign-extended to 64 bits and the
/// operand width in bits (needed for the unsigned `lo ls hi hs`).
#[inline]
pub fn setp_signed(a: i64, b: i64, width: u32, op: CmpOp) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs => {
            let m = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            setp_unsigned(a as u64 & m, b as u64 & m, op)
        }
        _ => false,
    }
}

/// `setp.op.uN` / `setp.op.bN` for any width, operands zero-extended to 64 bits.
#[inline]
pub fn setp_unsigned(a: u64, b: u64, op: CmpOp) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        _ => false,
    }
}

/// The boolean combining operation of `setp.op.bop` / `set.op.bop` with predicate `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// `t bop c` for `setp`/`set` with a predicate operand.
#[inline]
pub fn combine(t: bool, op: BoolOp, c: bool) -> bool {
    match op {
        BoolOp::And => t & c,
        BoolOp::Or => t | c,
        BoolOp::Xor => t ^ c,
    }
}

/// `set` with an integer destination: all ones for true, 0 for false.
#[inline]
pub fn set_int(t: bool) -> u64 {
    if t {
        u64::MAX
    } else {
        0
    }
}

/// `set` with an `.f32` destination: 1.0 for true, 0.0 for false.
#[inline]
pub fn set_f32(t: bool) -> f32 {
    if t {
        1.0
    } else {
        0.0
    }
}

/// `selp.type d, a, b, c`: `c ? a : b`.
#[inline]
pub fn selp<T>(a: T, b: T, c: bool) -> T {
    if c {
        a
    } else {
        b
    }
}

/// `slct.dtype.s32 d, a, b, c`: `c >= 0 ? a : b`.
#[inline]
pub fn slct_s32<T>(a: T, b: T, c: i32) -> T {
    if c >= 0 {
        a
    } else {
        b
    }
}

/// `slct{.ftz}.dtype.f32 d, a, b, c`: `c >= 0.0 ? a : b` (−0.0 picks `a`, NaN picks `b`).
#[inline]
pub fn slct_f32<T>(a: T, b: T, c: f32, ftz: bool) -> T {
    let c = if ftz { ftz_f32(c) } else { c };
    if c >= 0.0 {
        a
    } else {
        b
    }
}
