//! Pure per-lane ALU instructions: decoding an IR instruction once into an [`AluInst`], and
//! executing it for a mask of lanes over a warp's register file. The semantics live in
//! [`crate::arith`]; this file maps PTX spellings onto those functions and owns the
//! register-level conventions.
//!
//! Register conventions. Registers are stored structure-of-arrays per warp: slot `s` of
//! lane `l` in a frame with register base `b` is `regs[(b + s) * 32 + l]`, raw bits in a
//! `u64`. An instruction reads only the low bits of its operand type (a register written by
//! `ld.s32` holds the value sign-extended to 64 bits; an ALU op on `.s32` must not care) and
//! writes its result zero-extended to the type width. Predicates are 0/1.
//!
//! The one exception is `cvt` to a signed integer type: its destination register may be
//! wider than the type (`cvt.s16.s8 %r1, %r2` with a `.b32` `%r1`), and then PTX
//! sign-extends the result to the register's width (ISA "Operand Size Exceeding
//! Instruction-Type Size", destination operands; GPUs write `0xffffffc2` for `0xc2`). So
//! such a `cvt` writes the value sign-extended to 64 bits, which is right for every
//! register width. ptxas accepts a wider destination register only for `cvt` and `ld`
//! (`ld.s*` sign-extends the same way), so no other ALU op needs this. Slot
//! [`CC_SLOT`] holds the carry flag `CC.CF` (0/1 per lane).
//!
//! Speed. Every modifier is folded into the [`AluKind`] at load time, so `exec` matches on
//! the kind once per instruction and then runs a tight loop over lanes. Source operands are
//! materialised as whole 32-lane rows first (a register row is borrowed, an immediate is
//! splatted), so a converged warp runs each arm as a branch-free loop over arrays that the
//! compiler can vectorise; divergent warps walk only the active lanes.
//!
//! Not modelled (decode returns an error naming the form, never a wrong result): the
//! scalar video instructions (`vadd`, `vshl`, `vmad`, ...) and operand byte/half selectors
//! of the SIMD video instructions; `fma`/`add` on `.bf16` with rounding other than `.rn`;
//! `cvt` with `.rs`, with the 4- and 6-bit float formats, and from `.bf16x2` to 8-bit
//! floats.

use crate::arith::{
    bits::PrmtMode, cmp::BoolOp, cvt::CvtMods, float::TestpOp, half::HalfMods, CmpOp, Rounding,
    ScalarKind,
};
use crate::operand::Slot;

/// "No destination" (`_`, or a second destination that is absent).
pub const NO_SLOT: Slot = Slot::MAX;

/// How one source operand of an [`AluInst`] is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// Not used by this kind: reads as 0.
    None,
    /// The register slot in `AluInst::src`.
    Reg,
    /// `!p`: 1 where the register slot holds 0, else 0.
    NotReg,
    /// The immediate bits in `AluInst::src`.
    Imm,
}

/// One decoded ALU instruction. Kept small: the interpreter holds one per PTX instruction
/// and reads it on every execution.
#[derive(Debug, Clone, PartialEq)]
pub struct AluInst {
    /// Register slot or immediate bits of each source, per `tag`.
    pub src: [u64; 4],
    pub tag: [Tag; 4],
    pub kind: AluKind,
    pub d: Slot,
    /// The second destination: `q` of `setp p|q`, or [`CC_SLOT`] for a carry-out.
    pub d2: Slot,
}

/// `.rnd`, `.ftz` and `.sat` of an `.f32` instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FMods {
    pub rnd: Rounding,
    pub ftz: bool,
    pub sat: bool,
}

/// The upper or lower half of a product in `mad.cc`/`madc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadHalf {
    Lo,
    HiU,
    HiS,
}

/// Lane-wise operations on `.s16x2`/`.u16x2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op16x2 {
    Add,
    Sub,
    MinS,
    MaxS,
    MinU,
    MaxU,
}

/// Half-precision formats: scalar `.f16`/`.bf16` or packed pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HFmt {
    pub bf: bool,
    pub x2: bool,
}

/// Two-operand half-precision operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HOp {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    /// `min.xorsign.abs`
    MinXs,
    /// `max.xorsign.abs`
    MaxXs,
}

/// One-operand half-precision operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HUn {
    Neg,
    Abs,
    Ex2,
    Tanh,
}

/// The comparison of `setp`/`set`, with integer forms canonicalised at load time
/// (`a > b` is decoded as `b < a` with the operands swapped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq(u8),
    Ne(u8),
    LtS(u8),
    LeS(u8),
    LtU(u8),
    LeU(u8),
    F32(CmpOp, bool),
    F64(CmpOp),
    /// `.f16`/`.bf16` (bit 0 of the result) or `.f16x2`/`.bf16x2` (bits 0 and 1).
    Half(CmpOp, HFmt, bool),
}

/// What `setp`/`set` write for "true".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOut {
    /// A predicate (and the optional second predicate `q`).
    Pred,
    /// All ones in an integer of this width (0xffff per half for packed sources).
    Int(u8),
    F32,
    /// 1.0 in `.f16` or `.bf16` (per half for packed sources).
    Half(bool),
}

/// The SIMD video operations (`vadd4`, `vabsdiff2`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VOp {
    Add,
    Sub,
    Avrg,
    Absdiff,
    Min,
    Max,
}

/// Every executable ALU instruction form. Integer widths are in bits (8, 16, 32, 64).
/// The primary operation of a scalar video instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SVOp {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    Shl,
    Shr,
    Set(CmpOp),
}

/// A decoded scalar video instruction. Selectors: 0 none (the whole word), 1–4 bytes
/// `.b0`–`.b3`, 5–6 halves `.h0`, `.h1`. `flags`: bit 0 a signed, 1 b signed, 2 d signed,
/// 3 `.sat`, 4 `.clamp` (shifts; otherwise `.wrap`). `sec`: 0 none, 1 `.add`, 2 `.min`,
/// 3 `.max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoScalar {
    pub op: SVOp,
    pub asel: u8,
    pub bsel: u8,
    pub dsel: u8,
    pub flags: u8,
    pub sec: u8,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AluKind {
    Add(u8),
    Sub(u8),
    MulLo(u8),
    MadLo(u8),
    MulHiU(u8),
    MulHiS(u8),
    MadHiU(u8),
    MadHiS(u8),
    MadHiSatS32,
    MulWideU(u8),
    MulWideS(u8),
    MadWideU(u8),
    MadWideS(u8),
    AddSatS32,
    SubSatS32,
    /// `add.cc`, `addc{.cc}` on 32 or 64 bits.
    AddCarry {
        w64: bool,
        cin: bool,
        cout: bool,
    },
    /// `sub.cc`, `subc{.cc}`.
    SubCarry {
        w64: bool,
        cin: bool,
        cout: bool,
    },
    /// `mad{.lo,.hi}.cc`, `madc{.lo,.hi}{.cc}`.
    MadCarry {
        half: MadHalf,
        w64: bool,
        cin: bool,
        cout: bool,
    },
    Mul24 {
        hi: bool,
        signed: bool,
    },
    Mad24 {
        hi: bool,
        signed: bool,
        sat: bool,
    },
    Sad {
        w: u8,
        signed: bool,
    },
    Div {
        w: u8,
        signed: bool,
    },
    Rem {
        w: u8,
        signed: bool,
    },
    Abs(u8),
    Neg(u8),
    Min {
        w: u8,
        signed: bool,
    },
    Max {
        w: u8,
        signed: bool,
    },
    /// `min.relu.s32` / `max.relu.s32`
    MinMaxReluS32 {
        max: bool,
    },
    X16x2 {
        op: Op16x2,
        relu: bool,
    },

    And(u8),
    Or(u8),
    Xor(u8),
    Not(u8),
    Cnot(u8),
    Lop3(u8),
    Shl(u8),
    ShrU(u8),
    ShrS(u8),
    Shf {
        left: bool,
        clamp: bool,
    },
    Bfe {
        w64: bool,
        signed: bool,
    },
    Bfi {
        w64: bool,
    },
    Bfind {
        w64: bool,
        signed: bool,
        shiftamt: bool,
    },
    Popc {
        w64: bool,
    },
    Clz {
        w64: bool,
    },
    Brev {
        w64: bool,
    },
    Bmsk {
        clamp: bool,
    },
    Fns,
    Prmt(PrmtMode),
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    Dp2a {
        a_signed: bool,
        b_signed: bool,
        hi: bool,
    },

    Selp(u8),
    SlctS32(u8),
    SlctF32 {
        w: u8,
        ftz: bool,
    },
    Compare {
        cmp: Cmp,
        out: CmpOut,
        bop: Option<BoolOp>,
    },
    Testp {
        f64: bool,
        op: TestpOp,
    },

    AddF32Rn,
    SubF32Rn,
    MulF32Rn,
    FmaF32Rn,
    AddF32(FMods),
    SubF32(FMods),
    MulF32(FMods),
    FmaF32(FMods),
    DivF32 {
        rnd: Rounding,
        ftz: bool,
    },
    DivFullF32 {
        ftz: bool,
    },
    DivApproxF32 {
        ftz: bool,
    },
    RcpF32 {
        rnd: Rounding,
        ftz: bool,
    },
    RcpApproxF32 {
        ftz: bool,
    },
    SqrtF32 {
        rnd: Rounding,
        ftz: bool,
    },
    SqrtApproxF32 {
        ftz: bool,
    },
    RsqrtF32 {
        ftz: bool,
    },
    SinF32 {
        ftz: bool,
    },
    CosF32 {
        ftz: bool,
    },
    Lg2F32 {
        ftz: bool,
    },
    Ex2F32 {
        ftz: bool,
    },
    TanhF32,
    MinF32 {
        ftz: bool,
        nan: bool,
        xorsign: bool,
    },
    MaxF32 {
        ftz: bool,
        nan: bool,
        xorsign: bool,
    },
    AbsF32 {
        ftz: bool,
    },
    NegF32 {
        ftz: bool,
    },
    CopysignF32,

    AddF64(Rounding),
    SubF64(Rounding),
    MulF64(Rounding),
    FmaF64(Rounding),
    DivF64(Rounding),
    RcpF64(Rounding),
    RcpApproxFtzF64,
    SqrtF64(Rounding),
    RsqrtF64 {
        ftz: bool,
    },
    MinF64 {
        nan: bool,
    },
    MaxF64 {
        nan: bool,
    },
    AbsF64,
    NegF64,
    CopysignF64,

    HalfBin {
        op: HOp,
        fmt: HFmt,
        m: HalfMods,
        nan: bool,
    },
    HalfFma {
        fmt: HFmt,
        m: HalfMods,
    },
    HalfUn {
        op: HUn,
        fmt: HFmt,
        ftz: bool,
    },

    /// Integer to integer without `.sat`: truncate, then sign- or zero-extend (a signed
    /// destination type to the whole register, see the module docs).
    CvtInt {
        from: u8,
        from_signed: bool,
        to: u8,
        to_signed: bool,
    },
    /// `cvt.f64.f32` (exact).
    CvtF32F64,
    /// `cvt.rn.f32.f64` (no `.ftz`/`.sat`).
    CvtF64F32Rn,
    /// `cvt.rn.f32/f64.{s,u}{32,64}` (Rust's `as` rounds to nearest even).
    CvtIntFloatRn {
        from: u8,
        signed: bool,
        f64: bool,
    },
    /// Every other scalar `cvt`.
    Cvt {
        from: ScalarKind,
        to: ScalarKind,
        m: CvtMods,
    },
    /// `cvt.{rn,rz}{.relu}{.satfinite}.f16x2.f32` / `.bf16x2.f32` with two sources.
    CvtPack {
        bf: bool,
        relu: bool,
        rz: bool,
        satfinite: bool,
    },
    /// `cvt.pack.sat` of two `.s32` into `bits`-wide fields (`merge`: upper bits from c).
    CvtPackInt {
        bits: u8,
        signed: bool,
        merge: bool,
    },
    /// `cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2` from two `.f32` or one `.f16x2`.
    CvtToF8x2 {
        e5m2: bool,
        from_f16x2: bool,
        relu: bool,
    },
    /// `cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2`
    CvtFromF8x2 {
        e5m2: bool,
        relu: bool,
    },
    CvtTf32,

    /// `vop4`/`vop2` with default selectors and mask; `acc` is the `.add` form.
    Video {
        op: VOp,
        quad: bool,
        a_signed: bool,
        b_signed: bool,
        d_signed: bool,
        sat: bool,
        acc: bool,
    },
    /// A scalar video instruction (`vadd` … `vset`).
    ScalarVideo(VideoScalar),
    /// `vset4`/`vset2` with default selectors and mask.
    VideoSet {
        op: CmpOp,
        quad: bool,
        a_signed: bool,
        b_signed: bool,
        acc: bool,
    },
}

mod decode;
mod exec;

pub use decode::decode;
pub use exec::exec;
