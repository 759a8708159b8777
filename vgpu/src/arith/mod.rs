//! Exact PTX ALU semantics as pure functions over concrete Rust types.
//!
//! The interpreter decodes each PTX instruction once and then calls these functions on
//! register values. Register values are raw bits in a `u64`; narrower types live in the low
//! bits, so callers reinterpret (`as u32`, `f32::from_bits`, ...) at the boundary and these
//! functions never see register layout. Nothing here allocates, panics on any input, or
//! keeps state: the carry flag of `add.cc`/`addc` is an explicit value ([`CarryFlag`]).
//!
//! Layout, by PTX ISA chapter 9.7 ("Instructions") section:
//! - [`int`]: 9.7.1 integer arithmetic (`add`/`sub`/`mul`/`mad`/`mul24`/`mad24`/`sad`/
//!   `div`/`rem`/`abs`/`neg`/`min`/`max`), 9.7.2 extended-precision (`add.cc`, `addc`,
//!   `sub.cc`, `subc`, `mad.cc`, `madc`), and `dp4a`/`dp2a`.
//! - [`bits`]: 9.7.1 bit instructions (`popc`, `clz`, `bfind`, `brev`, `bfe`, `bfi`),
//!   9.7.8 logic and shift (`and`/`or`/`xor`/`not`/`cnot`/`lop3`/`shf`/`shl`/`shr`) and
//!   9.7.9.7 `prmt`.
//! - [`float`]: 9.7.3 single/double floating point (`add`/`sub`/`mul`/`fma`/`mad`/`div`/
//!   `rcp`/`sqrt`/`rsqrt`/`sin`/`cos`/`lg2`/`ex2`/`tanh`/`min`/`max`/`abs`/`neg`/
//!   `copysign`/`testp`).
//! - [`half`]: 9.7.4 half precision (`.f16`, `.f16x2`, `.bf16`, `.bf16x2`).
//! - [`cmp`]: 9.7.6 comparison and selection (`setp`, `set`, `selp`, `slct`).
//! - [`cvt`]: 9.7.9.21 `cvt` between every pair of scalar types.
//! - `round`: the one correctly-rounding soft-float core every directed-rounding path and
//!   every narrowing conversion ends in.
//!
//! `cvt`, `round`, the rounding modes ([`Rounding`], [`IntRounding`]), [`ScalarKind`] and
//! the canonical NaNs live in `fencehound_numconv`, below this crate, because the host side
//! (the oracle, the argument specs) rounds values with the same code without depending on
//! the interpreter; they are re-exported here under their old paths.
//!
//! NaN results: PTX produces a *canonical* NaN for floating-point arithmetic rather than
//! propagating payloads. We use `0x7fffffff` for `.f32`, `0x7fff` for `.f16`/`.bf16`
//! (both stated by the ISA) and `0x7fffffffffffffff` for `.f64` (the ISA does not state
//! the `.f64` pattern; we chose the all-ones payload by analogy with `.f32`). Bit
//! operations (`abs`, `neg`, `copysign`, `mov`) keep payloads.

pub mod bits;
pub mod cmp;
pub mod float;
pub mod half;
pub mod int;

pub use fencehound_numconv::cvt;
pub(crate) use fencehound_numconv::round;
pub use fencehound_numconv::{
    IntRounding, Rounding, ScalarKind, CANONICAL_NAN_BF16, CANONICAL_NAN_F16, CANONICAL_NAN_F32,
    CANONICAL_NAN_F64,
};

#[cfg(test)]
mod tests;

/// Comparison operator of `setp`/`set` (PTX ISA 9.7.6.1). `Lo/Ls/Hi/Hs` are the unsigned
/// integer comparisons; the `u`-suffixed and `Num/Nan` operators are float-only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// The condition-code carry flag `CC.CF` that `add.cc`/`addc`/`sub.cc`/`subc`/`mad.cc`/
/// `madc` read and write. It is always a carry, also for subtraction: NVIDIA hardware
/// subtracts as `a + !b + 1` (`sub.cc`) and `a + !b + CC.CF` (`subc`), so after a
/// subtraction `CC.CF` is 1 when there was *no* borrow, and an `addc` or `subc` that
/// follows reads it that way (checked against results recorded on GPUs, issue 17). The
/// ISA's `a - (b + CC.CF)` for `subc` describes the same chain with the flag inverted;
/// the difference is visible only when additions and subtractions share the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CarryFlag(pub bool);
