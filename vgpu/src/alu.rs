//! Pure per-lane ALU instructions: decoding an IR instruction once into an [`AluInst`], and
//! executing it for a mask of lanes over a warp's register file. The semantics live in
//! [`crate::arith`]; this file maps PTX spellings onto those functions and owns the
//! register-level conventions.
//!
//! Register conventions. Registers are stored structure-of-arrays per warp: slot `s` of
//! lane `l` in a frame with register base `b` is `regs[(b + s) * 32 + l]`, raw bits in a
//! `u64`. An instruction reads only the low bits of its operand type (a register written by
//! `ld.s32` holds the value sign-extended to 64 bits; an ALU op on `.s32` must not care) and
//! writes its result zero-extended to the type width. Predicates are 0/1. Slot
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
//! `cvt` to or from the 8-bit float formats, `.satfinite`, and `.rs`.

use ::half::{bf16, f16};

use crate::arith::{
    self,
    bits::PrmtMode,
    cmp::BoolOp,
    cvt::{CvtMods, CvtRounding},
    float::TestpOp,
    half::HalfMods,
    CarryFlag, CmpOp, IntRounding, Rounding, ScalarKind,
};
use crate::program::{Slot, Src, CC_SLOT};
use fencehound_ptx::{Instruction, Mod, ModClass, Opcode, Operand};

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

    /// Integer to integer without `.sat`: truncate, then sign- or zero-extend.
    CvtInt {
        from: u8,
        from_signed: bool,
        to: u8,
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
    /// `cvt.rn{.relu}.f16x2.f32` / `.bf16x2.f32` with two sources.
    CvtPack {
        bf: bool,
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
    /// `vset4`/`vset2` with default selectors and mask.
    VideoSet {
        op: CmpOp,
        quad: bool,
        a_signed: bool,
        b_signed: bool,
        acc: bool,
    },
}

// =======================================================================================
// Decoding

/// The shape of a PTX type modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    U(u8),
    S(u8),
    B(u8),
    F16,
    Bf16,
    F16x2,
    Bf16x2,
    F32,
    F64,
    U16x2,
    S16x2,
    Pred,
    Tf32,
    Other,
}

fn ty_of(m: Mod) -> Ty {
    match m {
        Mod::U8 => Ty::U(8),
        Mod::U16 => Ty::U(16),
        Mod::U32 => Ty::U(32),
        Mod::U64 => Ty::U(64),
        Mod::S8 => Ty::S(8),
        Mod::S16 => Ty::S(16),
        Mod::S32 => Ty::S(32),
        Mod::S64 => Ty::S(64),
        Mod::B8 => Ty::B(8),
        Mod::B16 => Ty::B(16),
        Mod::B32 => Ty::B(32),
        Mod::B64 => Ty::B(64),
        Mod::F16 => Ty::F16,
        Mod::Bf16 => Ty::Bf16,
        Mod::F16x2 => Ty::F16x2,
        Mod::Bf16x2 => Ty::Bf16x2,
        Mod::F32 => Ty::F32,
        Mod::F64 => Ty::F64,
        Mod::U16x2 => Ty::U16x2,
        Mod::S16x2 => Ty::S16x2,
        Mod::Pred => Ty::Pred,
        Mod::Tf32 => Ty::Tf32,
        _ => Ty::Other,
    }
}

impl Ty {
    /// Integer width and signedness (`.bN` counts as unsigned).
    fn int(self) -> Option<(u8, bool)> {
        match self {
            Ty::U(w) | Ty::B(w) => Some((w, false)),
            Ty::S(w) => Some((w, true)),
            _ => None,
        }
    }
    /// Any width of bits a `selp`/`slct` can move.
    fn bits(self) -> Option<u8> {
        match self {
            Ty::U(w) | Ty::B(w) | Ty::S(w) => Some(w),
            Ty::F16 | Ty::Bf16 => Some(16),
            Ty::F32 | Ty::F16x2 | Ty::Bf16x2 | Ty::U16x2 | Ty::S16x2 => Some(32),
            Ty::F64 => Some(64),
            Ty::Pred => Some(1),
            _ => None,
        }
    }
    fn half(self) -> Option<HFmt> {
        match self {
            Ty::F16 => Some(HFmt {
                bf: false,
                x2: false,
            }),
            Ty::Bf16 => Some(HFmt {
                bf: true,
                x2: false,
            }),
            Ty::F16x2 => Some(HFmt {
                bf: false,
                x2: true,
            }),
            Ty::Bf16x2 => Some(HFmt { bf: true, x2: true }),
            _ => None,
        }
    }
    fn scalar(self) -> Option<ScalarKind> {
        Some(match self {
            Ty::U(8) | Ty::B(8) => ScalarKind::U8,
            Ty::U(16) | Ty::B(16) => ScalarKind::U16,
            Ty::U(32) | Ty::B(32) => ScalarKind::U32,
            Ty::U(64) | Ty::B(64) => ScalarKind::U64,
            Ty::S(8) => ScalarKind::S8,
            Ty::S(16) => ScalarKind::S16,
            Ty::S(32) => ScalarKind::S32,
            Ty::S(64) => ScalarKind::S64,
            Ty::F16 => ScalarKind::F16,
            Ty::Bf16 => ScalarKind::Bf16,
            Ty::F32 => ScalarKind::F32,
            Ty::F64 => ScalarKind::F64,
            _ => return None,
        })
    }
}

fn cmp_op(m: Mod) -> Option<CmpOp> {
    Some(match m {
        Mod::Eq => CmpOp::Eq,
        Mod::Ne => CmpOp::Ne,
        Mod::Lt => CmpOp::Lt,
        Mod::Le => CmpOp::Le,
        Mod::Gt => CmpOp::Gt,
        Mod::Ge => CmpOp::Ge,
        Mod::Lo => CmpOp::Lo,
        Mod::Ls => CmpOp::Ls,
        Mod::Hi => CmpOp::Hi,
        Mod::Hs => CmpOp::Hs,
        Mod::Equ => CmpOp::Equ,
        Mod::Neu => CmpOp::Neu,
        Mod::Ltu => CmpOp::Ltu,
        Mod::Leu => CmpOp::Leu,
        Mod::Gtu => CmpOp::Gtu,
        Mod::Geu => CmpOp::Geu,
        Mod::Num => CmpOp::Num,
        Mod::Nan => CmpOp::Nan,
        _ => return None,
    })
}

fn float_rounding(m: Mod) -> Option<Rounding> {
    Some(match m {
        Mod::Rn => Rounding::Rn,
        Mod::Rz => Rounding::Rz,
        Mod::Rm => Rounding::Rm,
        Mod::Rp => Rounding::Rp,
        _ => return None,
    })
}

type Res<T> = Result<T, String>;

/// Decoding state of one instruction: its modifiers and its operands so far.
struct Dec<'a> {
    i: &'a Instruction,
    src: [u64; 4],
    tag: [Tag; 4],
    nsrc: usize,
    d: Slot,
    d2: Slot,
    pair: bool,
}

impl<'a> Dec<'a> {
    fn new(i: &'a Instruction, dsts: &[Option<Slot>], srcs: &[Src]) -> Res<Dec<'a>> {
        if srcs.len() > 4 {
            return Err("too many operands".into());
        }
        let mut src = [0u64; 4];
        let mut tag = [Tag::None; 4];
        for (k, s) in srcs.iter().enumerate() {
            let (v, t) = match *s {
                Src::Reg(r) => (r as u64, Tag::Reg),
                Src::NotReg(r) => (r as u64, Tag::NotReg),
                Src::Imm(v) => (float_literal(i, k)?.unwrap_or(v), Tag::Imm),
                _ => return Err("special register as an arithmetic operand".into()),
            };
            src[k] = v;
            tag[k] = t;
        }
        let slot = |d: Option<&Option<Slot>>| d.copied().flatten().unwrap_or(NO_SLOT);
        Ok(Dec {
            i,
            src,
            tag,
            nsrc: srcs.len(),
            d: slot(dsts.first()),
            d2: slot(dsts.get(1)),
            pair: dsts.len() > 1,
        })
    }

    fn has(&self, m: Mod) -> bool {
        self.i.has(m)
    }

    /// Only these `Flag`-class modifiers may appear (anything else is a form we do not
    /// know the meaning of, so it must not be ignored).
    fn flags(&self, allowed: &[Mod]) -> Res<()> {
        match self
            .i
            .mods_of(ModClass::Flag)
            .find(|m| !allowed.contains(m))
        {
            Some(m) => Err(format!("modifier `.{}`", m.as_str())),
            None => Ok(()),
        }
    }

    fn no_rounding(&self) -> Res<()> {
        match self.i.rounding() {
            Some(m) => Err(format!("rounding modifier `.{}`", m.as_str())),
            None => Ok(()),
        }
    }

    fn no_cmp(&self) -> Res<()> {
        match self.i.cmp() {
            Some(m) => Err(format!("modifier `.{}`", m.as_str())),
            None => Ok(()),
        }
    }

    fn nsrc(&self, n: usize) -> Res<()> {
        if self.nsrc != n {
            return Err(format!("expected {n} source operands"));
        }
        Ok(())
    }

    fn single_dst(&self) -> Res<()> {
        if self.pair {
            return Err("`a|b` destination".into());
        }
        Ok(())
    }

    /// The only type modifier.
    fn ty1(&self) -> Res<Ty> {
        let mut it = self.i.mods_of(ModClass::Type);
        match (it.next(), it.next()) {
            (Some(t), None) => Ok(ty_of(t)),
            _ => Err("expected one type".into()),
        }
    }

    fn types(&self) -> Vec<Ty> {
        self.i.mods_of(ModClass::Type).map(ty_of).collect()
    }

    /// `.rn/.rz/.rm/.rp`, or `dflt` when absent.
    fn frnd(&self, dflt: Option<Rounding>) -> Res<Rounding> {
        match self.i.rounding() {
            None => dflt.ok_or_else(|| "a rounding modifier is required".to_string()),
            Some(m) => float_rounding(m).ok_or_else(|| format!("rounding `.{}`", m.as_str())),
        }
    }

    fn swap01(&mut self) {
        self.src.swap(0, 1);
        self.tag.swap(0, 1);
    }

    fn finish(self, kind: AluKind) -> AluInst {
        AluInst {
            src: self.src,
            tag: self.tag,
            kind,
            d: self.d,
            d2: self.d2,
        }
    }
}

/// The type a source operand of `i` has, for converting float literals.
fn literal_type(i: &Instruction, k: usize) -> Option<Mod> {
    let t = i.types();
    match i.opcode {
        Opcode::Cvt => t.get(1).copied(),
        Opcode::Slct => {
            if k < 2 {
                t.first().copied()
            } else {
                t.get(1).copied()
            }
        }
        Opcode::Set => t.get(1).copied(),
        _ => i.ty(),
    }
}

/// A float literal source (`0f...`, `0d...`, decimal) converted to its operand's type;
/// `None` for any other operand.
fn float_literal(i: &Instruction, k: usize) -> Res<Option<u64>> {
    let (f32v, f64v) = match i.operands.get(k + 1) {
        Some(Operand::F32(b)) => (f32::from_bits(*b), f32::from_bits(*b) as f64),
        Some(Operand::F64(b)) => (f64::from_bits(*b) as f32, f64::from_bits(*b)),
        _ => return Ok(None),
    };
    Ok(match literal_type(i, k).map(ty_of) {
        Some(Ty::F32) => Some(f32v.to_bits() as u64),
        Some(Ty::F64) => Some(f64v.to_bits()),
        Some(Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2) => {
            return Err("floating-point literal for a half-precision operand".into())
        }
        _ => None,
    })
}

/// Decodes one pure ALU instruction. `dsts` are its destination slots (two for `a|b`,
/// `None` for `_`); `srcs` its sources in order. An error names what is not supported.
pub fn decode(i: &Instruction, dsts: &[Option<Slot>], srcs: &[Src]) -> Result<AluInst, String> {
    let mut x = Dec::new(i, dsts, srcs)?;
    let kind = decode_kind(&mut x)?;
    if x.d == NO_SLOT && !matches!(kind, AluKind::Compare { .. }) && !x.pair {
        // Only the carry-out (or nothing) would be observable; keep it simple.
        if !matches!(
            kind,
            AluKind::AddCarry { cout: true, .. }
                | AluKind::SubCarry { cout: true, .. }
                | AluKind::MadCarry { cout: true, .. }
        ) {
            return Err("`_` destination".into());
        }
    }
    Ok(x.finish(kind))
}

fn decode_kind(x: &mut Dec) -> Res<AluKind> {
    use AluKind as K;
    let i = x.i;
    let op = i.opcode;
    if !matches!(op, Opcode::Setp) {
        x.single_dst()?;
    }
    match op {
        Opcode::Add | Opcode::Sub => decode_add_sub(x, op == Opcode::Add),
        Opcode::Addc | Opcode::Subc => {
            x.nsrc(2)?;
            x.flags(&[Mod::Cc])?;
            x.no_rounding()?;
            let w64 = carry_width(x.ty1()?)?;
            let cout = x.has(Mod::Cc);
            if cout {
                x.d2 = CC_SLOT;
            }
            Ok(if op == Opcode::Addc {
                K::AddCarry {
                    w64,
                    cin: true,
                    cout,
                }
            } else {
                K::SubCarry {
                    w64,
                    cin: true,
                    cout,
                }
            })
        }
        Opcode::Mul => decode_mul(x),
        Opcode::Mad | Opcode::Madc => decode_mad(x),
        Opcode::Fma => {
            x.nsrc(3)?;
            let t = x.ty1()?;
            decode_float3(x, t, true)
        }
        Opcode::Mul24 | Opcode::Mad24 => {
            let mad = op == Opcode::Mad24;
            x.nsrc(if mad { 3 } else { 2 })?;
            x.flags(if mad { &[Mod::Sat] } else { &[] })?;
            let (w, signed) = x.ty1()?.int().ok_or("type")?;
            if w != 32 {
                return Err("type".into());
            }
            let hi = match i.cmp() {
                Some(Mod::Hi) => true,
                Some(Mod::Lo) => false,
                _ => return Err("mode (.lo/.hi)".into()),
            };
            let sat = x.has(Mod::Sat);
            if sat && !(hi && signed) {
                return Err("`.sat` is only defined for `mad24.hi.sat.s32`".into());
            }
            Ok(if mad {
                K::Mad24 { hi, signed, sat }
            } else {
                K::Mul24 { hi, signed }
            })
        }
        Opcode::Sad | Opcode::Div | Opcode::Rem => {
            let t = x.ty1()?;
            if op == Opcode::Div && matches!(t, Ty::F32 | Ty::F64) {
                return decode_div_float(x, t);
            }
            x.nsrc(if op == Opcode::Sad { 3 } else { 2 })?;
            x.flags(&[])?;
            x.no_rounding()?;
            x.no_cmp()?;
            let (w, signed) = t.int().filter(|(w, _)| *w >= 16).ok_or("type")?;
            Ok(match op {
                Opcode::Sad => K::Sad { w, signed },
                Opcode::Div => K::Div { w, signed },
                _ => K::Rem { w, signed },
            })
        }
        Opcode::Abs | Opcode::Neg => {
            x.nsrc(1)?;
            x.no_rounding()?;
            let abs = op == Opcode::Abs;
            let t = x.ty1()?;
            let ftz = x.has(Mod::Ftz);
            match t {
                Ty::S(w) if w >= 16 => {
                    x.flags(&[])?;
                    Ok(if abs { K::Abs(w) } else { K::Neg(w) })
                }
                Ty::F32 => {
                    x.flags(&[Mod::Ftz])?;
                    Ok(if abs {
                        K::AbsF32 { ftz }
                    } else {
                        K::NegF32 { ftz }
                    })
                }
                Ty::F64 => {
                    x.flags(&[])?;
                    Ok(if abs { K::AbsF64 } else { K::NegF64 })
                }
                _ => {
                    let fmt = t.half().ok_or("type")?;
                    x.flags(&[Mod::Ftz])?;
                    let op = if abs { HUn::Abs } else { HUn::Neg };
                    Ok(K::HalfUn { op, fmt, ftz })
                }
            }
        }
        Opcode::Min | Opcode::Max => decode_min_max(x, op == Opcode::Max),
        Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not | Opcode::Cnot => {
            let unary = matches!(op, Opcode::Not | Opcode::Cnot);
            x.nsrc(if unary { 1 } else { 2 })?;
            x.flags(&[])?;
            let w = match x.ty1()? {
                Ty::B(w) | Ty::U(w) | Ty::S(w) if w >= 16 => w,
                Ty::Pred if op != Opcode::Cnot => 1,
                _ => return Err("type".into()),
            };
            Ok(match op {
                Opcode::And => K::And(w),
                Opcode::Or => K::Or(w),
                Opcode::Xor => K::Xor(w),
                Opcode::Not => K::Not(w),
                _ => K::Cnot(w),
            })
        }
        Opcode::Lop3 => {
            x.nsrc(4)?;
            x.flags(&[])?;
            if i.op().is_some() {
                return Err("`lop3` with a predicate combining operation".into());
            }
            if x.ty1()? != Ty::B(32) {
                return Err("type".into());
            }
            if x.tag[3] != Tag::Imm {
                return Err("the truth table of `lop3` must be an immediate".into());
            }
            let lut = x.src[3] as u8;
            x.tag[3] = Tag::None;
            Ok(K::Lop3(lut))
        }
        Opcode::Shl | Opcode::Shr => {
            x.nsrc(2)?;
            x.flags(&[])?;
            let (w, signed) = x.ty1()?.int().filter(|(w, _)| *w >= 16).ok_or("type")?;
            Ok(match (op, signed) {
                (Opcode::Shl, _) => K::Shl(w),
                (_, true) => K::ShrS(w),
                _ => K::ShrU(w),
            })
        }
        Opcode::Shf => {
            x.nsrc(3)?;
            x.flags(&[Mod::L, Mod::R, Mod::Wrap, Mod::Clamp])?;
            if x.ty1()? != Ty::B(32) {
                return Err("type".into());
            }
            let left = match (x.has(Mod::L), x.has(Mod::R)) {
                (true, false) => true,
                (false, true) => false,
                _ => return Err("direction (.l/.r)".into()),
            };
            let clamp = match (x.has(Mod::Wrap), x.has(Mod::Clamp)) {
                (true, false) => false,
                (false, true) => true,
                _ => return Err("mode (.wrap/.clamp)".into()),
            };
            Ok(K::Shf { left, clamp })
        }
        Opcode::Bfe | Opcode::Bfi => {
            let bfi = op == Opcode::Bfi;
            x.nsrc(if bfi { 4 } else { 3 })?;
            x.flags(&[])?;
            let t = x.ty1()?;
            let (w, signed) = t.int().ok_or("type")?;
            if w < 32 || (bfi && !matches!(t, Ty::B(_))) || (!bfi && matches!(t, Ty::B(_))) {
                return Err("type".into());
            }
            let w64 = w == 64;
            Ok(if bfi {
                K::Bfi { w64 }
            } else {
                K::Bfe { w64, signed }
            })
        }
        Opcode::Bfind => {
            x.nsrc(1)?;
            x.flags(&[Mod::Shiftamt])?;
            let t = x.ty1()?;
            let (w, signed) = t.int().filter(|(w, _)| *w >= 32).ok_or("type")?;
            if matches!(t, Ty::B(_)) {
                return Err("type".into());
            }
            Ok(K::Bfind {
                w64: w == 64,
                signed,
                shiftamt: x.has(Mod::Shiftamt),
            })
        }
        Opcode::Popc | Opcode::Clz | Opcode::Brev => {
            x.nsrc(1)?;
            x.flags(&[])?;
            let w64 = match x.ty1()? {
                Ty::B(32) => false,
                Ty::B(64) => true,
                _ => return Err("type".into()),
            };
            Ok(match op {
                Opcode::Popc => K::Popc { w64 },
                Opcode::Clz => K::Clz { w64 },
                _ => K::Brev { w64 },
            })
        }
        Opcode::Bmsk => {
            x.nsrc(2)?;
            x.flags(&[Mod::Wrap, Mod::Clamp])?;
            if x.ty1()? != Ty::B(32) {
                return Err("type".into());
            }
            let clamp = match (x.has(Mod::Wrap), x.has(Mod::Clamp)) {
                (true, false) => false,
                (false, true) => true,
                _ => return Err("mode (.wrap/.clamp)".into()),
            };
            Ok(K::Bmsk { clamp })
        }
        Opcode::Fns => {
            x.nsrc(3)?;
            if x.ty1()? != Ty::B(32) {
                return Err("type".into());
            }
            Ok(K::Fns)
        }
        Opcode::Prmt => {
            x.nsrc(3)?;
            let modes = [Mod::F4e, Mod::B4e, Mod::Rc8, Mod::Ecl, Mod::Ecr, Mod::Rc16];
            x.flags(&modes)?;
            if x.ty1()? != Ty::B(32) {
                return Err("type".into());
            }
            let mode = match i.mods_of(ModClass::Flag).next() {
                None => PrmtMode::Default,
                Some(Mod::F4e) => PrmtMode::F4e,
                Some(Mod::B4e) => PrmtMode::B4e,
                Some(Mod::Rc8) => PrmtMode::Rc8,
                Some(Mod::Ecl) => PrmtMode::Ecl,
                Some(Mod::Ecr) => PrmtMode::Ecr,
                Some(_) => PrmtMode::Rc16,
            };
            Ok(K::Prmt(mode))
        }
        Opcode::Dp4a | Opcode::Dp2a => {
            x.nsrc(3)?;
            let t = x.types();
            let (a_signed, b_signed) = match t.as_slice() {
                [a, b] if is_32(*a) && is_32(*b) => (*a == Ty::S(32), *b == Ty::S(32)),
                _ => return Err("types".into()),
            };
            if op == Opcode::Dp4a {
                x.no_cmp()?;
                Ok(K::Dp4a { a_signed, b_signed })
            } else {
                let hi = match i.cmp() {
                    Some(Mod::Hi) => true,
                    Some(Mod::Lo) => false,
                    _ => return Err("mode (.lo/.hi)".into()),
                };
                Ok(K::Dp2a {
                    a_signed,
                    b_signed,
                    hi,
                })
            }
        }
        Opcode::Selp => {
            x.nsrc(3)?;
            let w = x.ty1()?.bits().filter(|w| *w >= 16).ok_or("type")?;
            Ok(K::Selp(w))
        }
        Opcode::Slct => {
            x.nsrc(3)?;
            x.flags(&[Mod::Ftz])?;
            let t = x.types();
            let (dt, ct) = match t.as_slice() {
                [d, c] => (*d, *c),
                _ => return Err("types".into()),
            };
            let w = dt.bits().filter(|w| *w >= 16).ok_or("type")?;
            match ct {
                Ty::S(32) if !x.has(Mod::Ftz) => Ok(K::SlctS32(w)),
                Ty::F32 => Ok(K::SlctF32 {
                    w,
                    ftz: x.has(Mod::Ftz),
                }),
                _ => Err("type".into()),
            }
        }
        Opcode::Setp | Opcode::Set => decode_compare(x, op == Opcode::Setp),
        Opcode::Testp => {
            x.nsrc(1)?;
            let ops = [
                (Mod::Finite, TestpOp::Finite),
                (Mod::Infinite, TestpOp::Infinite),
                (Mod::Number, TestpOp::Number),
                (Mod::Notanumber, TestpOp::NotANumber),
                (Mod::Normal, TestpOp::Normal),
                (Mod::Subnormal, TestpOp::Subnormal),
            ];
            x.flags(&ops.map(|(m, _)| m))?;
            let op = ops
                .iter()
                .find(|(m, _)| x.has(*m))
                .map(|(_, o)| *o)
                .ok_or("test operation")?;
            let f64 = match x.ty1()? {
                Ty::F32 => false,
                Ty::F64 => true,
                _ => return Err("type".into()),
            };
            Ok(K::Testp { f64, op })
        }
        Opcode::Copysign => {
            x.nsrc(2)?;
            x.flags(&[])?;
            match x.ty1()? {
                Ty::F32 => Ok(K::CopysignF32),
                Ty::F64 => Ok(K::CopysignF64),
                _ => Err("type".into()),
            }
        }
        Opcode::Rcp | Opcode::Sqrt | Opcode::Rsqrt => decode_rcp_sqrt(x),
        Opcode::Sin | Opcode::Cos | Opcode::Lg2 | Opcode::Ex2 | Opcode::Tanh => {
            x.nsrc(1)?;
            x.no_rounding()?;
            if !x.has(Mod::Approx) {
                return Err("only the `.approx` form exists".into());
            }
            x.flags(&[Mod::Approx, Mod::Ftz])?;
            let ftz = x.has(Mod::Ftz);
            let t = x.ty1()?;
            if t == Ty::F32 {
                return Ok(match op {
                    Opcode::Sin => K::SinF32 { ftz },
                    Opcode::Cos => K::CosF32 { ftz },
                    Opcode::Lg2 => K::Lg2F32 { ftz },
                    Opcode::Ex2 => K::Ex2F32 { ftz },
                    _ if !ftz => K::TanhF32,
                    _ => return Err("`tanh.approx.ftz`".into()),
                });
            }
            let fmt = t.half().ok_or("type")?;
            match op {
                // PTX: `ex2.approx.f16{x2}` (no `.ftz`) and `ex2.approx.ftz.bf16{x2}`.
                Opcode::Ex2 if ftz == fmt.bf => Ok(K::HalfUn {
                    op: HUn::Ex2,
                    fmt,
                    ftz,
                }),
                Opcode::Tanh if !ftz => Ok(K::HalfUn {
                    op: HUn::Tanh,
                    fmt,
                    ftz,
                }),
                _ => Err("type".into()),
            }
        }
        Opcode::Cvt => decode_cvt(x),
        Opcode::Vadd4
        | Opcode::Vsub4
        | Opcode::Vavrg4
        | Opcode::Vabsdiff4
        | Opcode::Vmin4
        | Opcode::Vmax4
        | Opcode::Vadd2
        | Opcode::Vsub2
        | Opcode::Vavrg2
        | Opcode::Vabsdiff2
        | Opcode::Vmin2
        | Opcode::Vmax2
        | Opcode::Vset4
        | Opcode::Vset2 => decode_video(x),
        Opcode::Vadd
        | Opcode::Vsub
        | Opcode::Vabsdiff
        | Opcode::Vmin
        | Opcode::Vmax
        | Opcode::Vshl
        | Opcode::Vshr
        | Opcode::Vmad
        | Opcode::Vset => Err("scalar video instructions are not supported".into()),
        _ => Err("not an ALU instruction".into()),
    }
}

fn is_32(t: Ty) -> bool {
    matches!(t, Ty::U(32) | Ty::S(32))
}

fn carry_width(t: Ty) -> Res<bool> {
    match t {
        Ty::U(32) | Ty::S(32) => Ok(false),
        Ty::U(64) | Ty::S(64) => Ok(true),
        _ => Err("type".into()),
    }
}

fn fmods(x: &Dec, rnd: Rounding) -> FMods {
    FMods {
        rnd,
        ftz: x.has(Mod::Ftz),
        sat: x.has(Mod::Sat),
    }
}

fn half_mods(x: &Dec) -> HalfMods {
    HalfMods {
        ftz: x.has(Mod::Ftz),
        sat: x.has(Mod::Sat),
        relu: x.has(Mod::Relu),
    }
}

/// Half-precision arithmetic accepts only `.rn` (the default).
fn half_rounding(x: &Dec, fmt: HFmt) -> Res<()> {
    x.frnd(Some(Rounding::Rn)).and_then(|r| {
        if r == Rounding::Rn {
            Ok(())
        } else {
            Err("half-precision rounding other than `.rn`".into())
        }
    })?;
    if fmt.bf && (x.has(Mod::Ftz) || x.has(Mod::Sat)) {
        return Err("`.ftz`/`.sat` on `.bf16`".into());
    }
    Ok(())
}

fn decode_add_sub(x: &mut Dec, add: bool) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(2)?;
    x.no_cmp()?;
    let t = x.ty1()?;
    match t {
        Ty::U(_) | Ty::S(_) => {
            x.no_rounding()?;
            x.flags(&[Mod::Cc, Mod::Sat])?;
            let (w, signed) = t.int().ok_or("type")?;
            if w < 16 {
                return Err("type".into());
            }
            if x.has(Mod::Cc) {
                if x.has(Mod::Sat) {
                    return Err("`.sat` with `.cc`".into());
                }
                let w64 = carry_width(t)?;
                x.d2 = CC_SLOT;
                let (cin, cout) = (false, true);
                return Ok(if add {
                    K::AddCarry { w64, cin, cout }
                } else {
                    K::SubCarry { w64, cin, cout }
                });
            }
            if x.has(Mod::Sat) {
                if t != Ty::S(32) {
                    return Err("`.sat` is only defined for `.s32`".into());
                }
                return Ok(if add { K::AddSatS32 } else { K::SubSatS32 });
            }
            let _ = signed;
            Ok(if add { K::Add(w) } else { K::Sub(w) })
        }
        Ty::U16x2 | Ty::S16x2 => {
            x.no_rounding()?;
            x.flags(&[])?;
            let op = if add { Op16x2::Add } else { Op16x2::Sub };
            Ok(K::X16x2 { op, relu: false })
        }
        Ty::F32 => {
            x.flags(&[Mod::Ftz, Mod::Sat])?;
            let m = fmods(x, x.frnd(Some(Rounding::Rn))?);
            Ok(match (add, m) {
                (
                    true,
                    FMods {
                        rnd: Rounding::Rn,
                        ftz: false,
                        sat: false,
                    },
                ) => K::AddF32Rn,
                (
                    false,
                    FMods {
                        rnd: Rounding::Rn,
                        ftz: false,
                        sat: false,
                    },
                ) => K::SubF32Rn,
                (true, m) => K::AddF32(m),
                (false, m) => K::SubF32(m),
            })
        }
        Ty::F64 => {
            x.flags(&[])?;
            let r = x.frnd(Some(Rounding::Rn))?;
            Ok(if add { K::AddF64(r) } else { K::SubF64(r) })
        }
        _ => half_arith(x, t, if add { HOp::Add } else { HOp::Sub }),
    }
}

/// `add`/`sub`/`mul` on `.f16`/`.bf16` (scalar or x2): `.ftz`/`.sat` allowed, `.rn` only.
fn half_arith(x: &mut Dec, t: Ty, op: HOp) -> Res<AluKind> {
    let fmt = t.half().ok_or("type")?;
    x.flags(&[Mod::Ftz, Mod::Sat])?;
    half_rounding(x, fmt)?;
    Ok(AluKind::HalfBin {
        op,
        fmt,
        m: half_mods(x),
        nan: false,
    })
}

fn decode_mul(x: &mut Dec) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(2)?;
    let t = x.ty1()?;
    if let Some((w, signed)) = t.int() {
        x.no_rounding()?;
        x.flags(&[Mod::Wide])?;
        if w < 16 || matches!(t, Ty::B(_)) {
            return Err("type".into());
        }
        return match (x.i.cmp(), x.has(Mod::Wide)) {
            (Some(Mod::Lo), false) => Ok(K::MulLo(w)),
            (Some(Mod::Hi), false) if signed => Ok(K::MulHiS(w)),
            (Some(Mod::Hi), false) => Ok(K::MulHiU(w)),
            (None, true) if w < 64 && signed => Ok(K::MulWideS(w)),
            (None, true) if w < 64 => Ok(K::MulWideU(w)),
            _ => Err("mode (.lo/.hi/.wide)".into()),
        };
    }
    x.no_cmp()?;
    match t {
        Ty::F32 => {
            x.flags(&[Mod::Ftz, Mod::Sat])?;
            let m = fmods(x, x.frnd(Some(Rounding::Rn))?);
            Ok(if m.rnd == Rounding::Rn && !m.ftz && !m.sat {
                K::MulF32Rn
            } else {
                K::MulF32(m)
            })
        }
        Ty::F64 => {
            x.flags(&[])?;
            Ok(K::MulF64(x.frnd(Some(Rounding::Rn))?))
        }
        _ => half_arith(x, t, HOp::Mul),
    }
}

fn decode_mad(x: &mut Dec) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(3)?;
    let t = x.ty1()?;
    let madc = x.i.opcode == Opcode::Madc;
    let Some((w, signed)) = t.int() else {
        if madc {
            return Err("type".into());
        }
        return decode_float3(x, t, false);
    };
    x.no_rounding()?;
    x.flags(&[Mod::Wide, Mod::Sat, Mod::Cc])?;
    if w < 16 || matches!(t, Ty::B(_)) {
        return Err("type".into());
    }
    let mode = x.i.cmp();
    let wide = x.has(Mod::Wide);
    let sat = x.has(Mod::Sat);
    let cc = x.has(Mod::Cc);
    if madc || cc {
        if sat || wide {
            return Err("`.sat`/`.wide` with a carry".into());
        }
        let w64 = carry_width(t)?;
        let half = match mode {
            Some(Mod::Lo) => MadHalf::Lo,
            Some(Mod::Hi) if signed => MadHalf::HiS,
            Some(Mod::Hi) => MadHalf::HiU,
            _ => return Err("mode (.lo/.hi)".into()),
        };
        if cc {
            x.d2 = CC_SLOT;
        }
        return Ok(K::MadCarry {
            half,
            w64,
            cin: madc,
            cout: cc,
        });
    }
    match (mode, wide, sat) {
        (Some(Mod::Lo), false, false) => Ok(K::MadLo(w)),
        (Some(Mod::Hi), false, true) if t == Ty::S(32) => Ok(K::MadHiSatS32),
        (Some(Mod::Hi), false, false) if signed => Ok(K::MadHiS(w)),
        (Some(Mod::Hi), false, false) => Ok(K::MadHiU(w)),
        (None, true, false) if w < 64 && signed => Ok(K::MadWideS(w)),
        (None, true, false) if w < 64 => Ok(K::MadWideU(w)),
        _ => Err("mode".into()),
    }
}

/// `fma` and float `mad`.
fn decode_float3(x: &mut Dec, t: Ty, fma: bool) -> Res<AluKind> {
    use AluKind as K;
    x.no_cmp()?;
    match t {
        Ty::F32 => {
            x.flags(&[Mod::Ftz, Mod::Sat])?;
            // `mad.f32` without a rounding modifier is the fused `.rn` form on sm_20+.
            let dflt = if fma { None } else { Some(Rounding::Rn) };
            let m = fmods(x, x.frnd(dflt)?);
            Ok(if m.rnd == Rounding::Rn && !m.ftz && !m.sat {
                K::FmaF32Rn
            } else {
                K::FmaF32(m)
            })
        }
        Ty::F64 => {
            x.flags(&[])?;
            let dflt = if fma { None } else { Some(Rounding::Rn) };
            Ok(K::FmaF64(x.frnd(dflt)?))
        }
        _ => {
            let fmt = t.half().ok_or("type")?;
            if !fma {
                return Err("type".into());
            }
            x.flags(&[Mod::Ftz, Mod::Sat, Mod::Relu])?;
            if x.i.rounding() != Some(Mod::Rn) {
                return Err("half-precision `fma` needs `.rn`".into());
            }
            let m = half_mods(x);
            if fmt.bf && (m.ftz || m.sat) {
                return Err("`.ftz`/`.sat` on `.bf16`".into());
            }
            if m.sat && m.relu {
                return Err("`.sat` with `.relu`".into());
            }
            Ok(K::HalfFma { fmt, m })
        }
    }
}

fn decode_div_float(x: &mut Dec, t: Ty) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(2)?;
    x.no_cmp()?;
    let ftz = x.has(Mod::Ftz);
    if t == Ty::F64 {
        x.flags(&[])?;
        return Ok(K::DivF64(x.frnd(Some(Rounding::Rn))?));
    }
    x.flags(&[Mod::Ftz, Mod::Approx, Mod::Full])?;
    match (x.has(Mod::Approx), x.has(Mod::Full), x.i.rounding()) {
        (true, false, None) => Ok(K::DivApproxF32 { ftz }),
        (false, true, None) => Ok(K::DivFullF32 { ftz }),
        (false, false, Some(_)) => Ok(K::DivF32 {
            rnd: x.frnd(None)?,
            ftz,
        }),
        _ => Err("`div.f32` needs exactly one of `.approx`, `.full` or a rounding".into()),
    }
}

fn decode_rcp_sqrt(x: &mut Dec) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(1)?;
    x.flags(&[Mod::Ftz, Mod::Approx])?;
    let op = x.i.opcode;
    let t = x.ty1()?;
    let ftz = x.has(Mod::Ftz);
    let approx = x.has(Mod::Approx);
    if approx && x.i.rounding().is_some() {
        return Err("`.approx` with a rounding modifier".into());
    }
    match (op, t, approx) {
        (Opcode::Rsqrt, Ty::F32, true) => Ok(K::RsqrtF32 { ftz }),
        (Opcode::Rsqrt, Ty::F64, true) => Ok(K::RsqrtF64 { ftz }),
        (Opcode::Rcp, Ty::F32, true) => Ok(K::RcpApproxF32 { ftz }),
        (Opcode::Rcp, Ty::F64, true) if ftz => Ok(K::RcpApproxFtzF64),
        (Opcode::Sqrt, Ty::F32, true) => Ok(K::SqrtApproxF32 { ftz }),
        (Opcode::Rcp, Ty::F32, false) => Ok(K::RcpF32 {
            rnd: x.frnd(None)?,
            ftz,
        }),
        (Opcode::Sqrt, Ty::F32, false) => Ok(K::SqrtF32 {
            rnd: x.frnd(None)?,
            ftz,
        }),
        (Opcode::Rcp, Ty::F64, false) if !ftz => Ok(K::RcpF64(x.frnd(None)?)),
        (Opcode::Sqrt, Ty::F64, false) if !ftz => Ok(K::SqrtF64(x.frnd(None)?)),
        _ => Err("form".into()),
    }
}

fn decode_min_max(x: &mut Dec, max: bool) -> Res<AluKind> {
    use AluKind as K;
    x.nsrc(2)?;
    x.no_rounding()?;
    let t = x.ty1()?;
    let relu = x.has(Mod::Relu);
    match t {
        Ty::U(w) | Ty::S(w) if w >= 16 => {
            x.flags(&[Mod::Relu])?;
            let signed = matches!(t, Ty::S(_));
            if relu {
                if t != Ty::S(32) {
                    return Err("`.relu` on this type".into());
                }
                return Ok(K::MinMaxReluS32 { max });
            }
            Ok(if max {
                K::Max { w, signed }
            } else {
                K::Min { w, signed }
            })
        }
        Ty::U16x2 | Ty::S16x2 => {
            x.flags(&[Mod::Relu])?;
            let signed = t == Ty::S16x2;
            if relu && !signed {
                return Err("`.relu` on `.u16x2`".into());
            }
            let op = match (signed, max) {
                (true, false) => Op16x2::MinS,
                (true, true) => Op16x2::MaxS,
                (false, false) => Op16x2::MinU,
                (false, true) => Op16x2::MaxU,
            };
            Ok(K::X16x2 { op, relu })
        }
        Ty::F32 | Ty::F64 => {
            x.flags(&[Mod::Ftz, Mod::NaN, Mod::Xorsign, Mod::Abs])?;
            let nan = x.has(Mod::NaN);
            let xorsign = x.has(Mod::Xorsign);
            if xorsign != x.has(Mod::Abs) {
                return Err("`.xorsign` and `.abs` go together".into());
            }
            let ftz = x.has(Mod::Ftz);
            if t == Ty::F64 {
                if ftz || xorsign {
                    return Err("form".into());
                }
                return Ok(if max {
                    K::MaxF64 { nan }
                } else {
                    K::MinF64 { nan }
                });
            }
            Ok(if max {
                K::MaxF32 { ftz, nan, xorsign }
            } else {
                K::MinF32 { ftz, nan, xorsign }
            })
        }
        _ => {
            let fmt = t.half().ok_or("type")?;
            x.flags(&[Mod::Ftz, Mod::NaN, Mod::Xorsign, Mod::Abs])?;
            let xorsign = x.has(Mod::Xorsign);
            if xorsign != x.has(Mod::Abs) {
                return Err("`.xorsign` and `.abs` go together".into());
            }
            if fmt.bf && x.has(Mod::Ftz) {
                return Err("`.ftz` on `.bf16`".into());
            }
            let op = match (max, xorsign) {
                (false, false) => HOp::Min,
                (true, false) => HOp::Max,
                (false, true) => HOp::MinXs,
                (true, true) => HOp::MaxXs,
            };
            Ok(K::HalfBin {
                op,
                fmt,
                m: HalfMods {
                    ftz: x.has(Mod::Ftz),
                    sat: false,
                    relu: false,
                },
                nan: x.has(Mod::NaN),
            })
        }
    }
}

fn decode_compare(x: &mut Dec, setp: bool) -> Res<AluKind> {
    x.no_rounding()?;
    x.flags(&[Mod::Ftz])?;
    let i = x.i;
    let op = i
        .cmp()
        .and_then(cmp_op)
        .ok_or("missing comparison operator")?;
    let bop = match i.op() {
        None => None,
        Some(Mod::And) => Some(BoolOp::And),
        Some(Mod::Or) => Some(BoolOp::Or),
        Some(Mod::Xor) => Some(BoolOp::Xor),
        Some(m) => return Err(format!("combining operation `.{}`", m.as_str())),
    };
    x.nsrc(if bop.is_some() { 3 } else { 2 })?;
    let types = x.types();
    let (out, st) = match (setp, types.as_slice()) {
        (true, [s]) => (CmpOut::Pred, *s),
        (false, [d, s]) => {
            let out = match d {
                Ty::U(32) | Ty::S(32) | Ty::B(32) => CmpOut::Int(32),
                Ty::U(16) | Ty::S(16) | Ty::B(16) if s.half().is_some_and(|f| !f.x2) => {
                    CmpOut::Int(16)
                }
                Ty::F32 => CmpOut::F32,
                Ty::F16 | Ty::F16x2 => CmpOut::Half(false),
                Ty::Bf16 | Ty::Bf16x2 => CmpOut::Half(true),
                _ => return Err("destination type".into()),
            };
            // A packed destination goes with a packed source and vice versa.
            let dx2 = matches!(d, Ty::F16x2 | Ty::Bf16x2);
            let sx2 = s.half().is_some_and(|f| f.x2);
            if matches!(out, CmpOut::Half(_)) && dx2 != sx2 {
                return Err("destination type".into());
            }
            (out, *s)
        }
        _ => return Err("types".into()),
    };
    if x.pair && !setp {
        return Err("`a|b` destination".into());
    }
    let ftz = x.has(Mod::Ftz);
    let float_only = !matches!(
        op,
        CmpOp::Eq
            | CmpOp::Ne
            | CmpOp::Lt
            | CmpOp::Le
            | CmpOp::Gt
            | CmpOp::Ge
            | CmpOp::Lo
            | CmpOp::Ls
            | CmpOp::Hi
            | CmpOp::Hs
    );
    let cmp = if let Some((w, signed)) = st.int() {
        if w < 16 || ftz || float_only {
            return Err("form".into());
        }
        let swap = matches!(op, CmpOp::Gt | CmpOp::Ge | CmpOp::Hi | CmpOp::Hs);
        if swap {
            x.swap01();
        }
        match op {
            CmpOp::Eq => Cmp::Eq(w),
            CmpOp::Ne => Cmp::Ne(w),
            CmpOp::Lt | CmpOp::Gt if signed => Cmp::LtS(w),
            CmpOp::Le | CmpOp::Ge if signed => Cmp::LeS(w),
            CmpOp::Lt | CmpOp::Gt | CmpOp::Lo | CmpOp::Hi => Cmp::LtU(w),
            _ => Cmp::LeU(w),
        }
    } else {
        if matches!(op, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs) {
            return Err("unsigned comparison on a float type".into());
        }
        match st {
            Ty::F32 => Cmp::F32(op, ftz),
            Ty::F64 if !ftz => Cmp::F64(op),
            _ => {
                let fmt = st.half().ok_or("type")?;
                if fmt.bf && ftz {
                    return Err("`.ftz` on `.bf16`".into());
                }
                Cmp::Half(op, fmt, ftz)
            }
        }
    };
    let x2 = matches!(cmp, Cmp::Half(_, HFmt { x2: true, .. }, _));
    if setp && x2 && !x.pair {
        return Err("packed `setp` needs a `p|q` destination".into());
    }
    if matches!(out, CmpOut::Int(16)) && x2 {
        return Err("destination type".into());
    }
    Ok(AluKind::Compare { cmp, out, bop })
}

fn decode_cvt(x: &mut Dec) -> Res<AluKind> {
    use AluKind as K;
    x.flags(&[Mod::Ftz, Mod::Sat, Mod::Relu])?;
    let types = x.types();
    let [to, from] = types.as_slice() else {
        return Err("types".into());
    };
    let (to, from) = (*to, *from);
    let rnd = x.i.rounding();
    // Packed pair from two f32 sources.
    if matches!(to, Ty::F16x2 | Ty::Bf16x2) {
        x.nsrc(2)?;
        if from != Ty::F32 || rnd != Some(Mod::Rn) || x.has(Mod::Ftz) || x.has(Mod::Sat) {
            return Err("form".into());
        }
        return Ok(K::CvtPack {
            bf: to == Ty::Bf16x2,
            relu: x.has(Mod::Relu),
        });
    }
    x.nsrc(1)?;
    if to == Ty::Tf32 {
        if from != Ty::F32 || rnd != Some(Mod::Rna) || x.has(Mod::Ftz) || x.has(Mod::Sat) {
            return Err("form".into());
        }
        return Ok(K::CvtTf32);
    }
    let (Some(tk), Some(fk)) = (to.scalar(), from.scalar()) else {
        return Err("types".into());
    };
    let rnd = match rnd {
        None => CvtRounding::None,
        Some(m @ (Mod::Rn | Mod::Rz | Mod::Rm | Mod::Rp)) => {
            CvtRounding::Float(float_rounding(m).ok_or("rounding")?)
        }
        Some(Mod::Rni) => CvtRounding::Int(IntRounding::Rni),
        Some(Mod::Rzi) => CvtRounding::Int(IntRounding::Rzi),
        Some(Mod::Rmi) => CvtRounding::Int(IntRounding::Rmi),
        Some(Mod::Rpi) => CvtRounding::Int(IntRounding::Rpi),
        Some(m) => return Err(format!("rounding `.{}`", m.as_str())),
    };
    let m = CvtMods {
        rnd,
        ftz: x.has(Mod::Ftz),
        sat: x.has(Mod::Sat),
        relu: x.has(Mod::Relu),
    };
    // Which rounding class fits which conversion (PTX ISA `cvt`): integer rounding for
    // float→int and float→same-float-size; float rounding for int→float and narrowing.
    let (tf, ff) = (tk.is_float(), fk.is_float());
    let ok = match rnd {
        CvtRounding::None => true,
        CvtRounding::Int(_) => ff && (!tf || tk.bits() == fk.bits()),
        CvtRounding::Float(_) => tf && (!ff || tk.bits() < fk.bits()),
    };
    if !ok {
        return Err("rounding modifier for this conversion".into());
    }
    if m.relu && !matches!(tk, ScalarKind::F16 | ScalarKind::Bf16) {
        return Err("`.relu` on this conversion".into());
    }
    if m.ftz && fk != ScalarKind::F32 && tk != ScalarKind::F32 {
        return Err("`.ftz` on this conversion".into());
    }
    let plain = !m.ftz && !m.sat && !m.relu;
    if !tf && !ff && !m.sat && rnd == CvtRounding::None {
        return Ok(K::CvtInt {
            from: fk.bits() as u8,
            from_signed: fk.is_signed_int(),
            to: tk.bits() as u8,
        });
    }
    if plain && fk == ScalarKind::F32 && tk == ScalarKind::F64 && rnd == CvtRounding::None {
        return Ok(K::CvtF32F64);
    }
    let rn = matches!(rnd, CvtRounding::None | CvtRounding::Float(Rounding::Rn));
    if plain && rn && fk == ScalarKind::F64 && tk == ScalarKind::F32 {
        return Ok(K::CvtF64F32Rn);
    }
    if plain && rn && !ff && fk.bits() >= 32 && matches!(tk, ScalarKind::F32 | ScalarKind::F64) {
        return Ok(K::CvtIntFloatRn {
            from: fk.bits() as u8,
            signed: fk.is_signed_int(),
            f64: tk == ScalarKind::F64,
        });
    }
    Ok(K::Cvt {
        from: fk,
        to: tk,
        m,
    })
}

fn decode_video(x: &mut Dec) -> Res<AluKind> {
    let op = x.i.opcode;
    x.nsrc(3)?;
    x.no_rounding()?;
    x.flags(&[Mod::Sat])?;
    let quad = matches!(
        op,
        Opcode::Vadd4
            | Opcode::Vsub4
            | Opcode::Vavrg4
            | Opcode::Vabsdiff4
            | Opcode::Vmin4
            | Opcode::Vmax4
            | Opcode::Vset4
    );
    let acc = match x.i.op() {
        None => false,
        Some(Mod::Add) => true,
        Some(m) => return Err(format!("secondary operation `.{}`", m.as_str())),
    };
    let sat = x.has(Mod::Sat);
    if sat && acc {
        return Err("`.sat` with `.add`".into());
    }
    let types = x.types();
    if !types.iter().all(|t| is_32(*t)) {
        return Err("types".into());
    }
    let signed = |t: &Ty| *t == Ty::S(32);
    if matches!(op, Opcode::Vset4 | Opcode::Vset2) {
        let [a, b] = types.as_slice() else {
            return Err("types".into());
        };
        let cmp =
            x.i.cmp()
                .and_then(cmp_op)
                .filter(|c| {
                    matches!(
                        c,
                        CmpOp::Eq | CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge
                    )
                })
                .ok_or("comparison")?;
        if sat {
            return Err("`.sat` on `vset`".into());
        }
        return Ok(AluKind::VideoSet {
            op: cmp,
            quad,
            a_signed: signed(a),
            b_signed: signed(b),
            acc,
        });
    }
    x.no_cmp()?;
    let [d, a, b] = types.as_slice() else {
        return Err("types".into());
    };
    let vop = match op {
        Opcode::Vadd4 | Opcode::Vadd2 => VOp::Add,
        Opcode::Vsub4 | Opcode::Vsub2 => VOp::Sub,
        Opcode::Vavrg4 | Opcode::Vavrg2 => VOp::Avrg,
        Opcode::Vabsdiff4 | Opcode::Vabsdiff2 => VOp::Absdiff,
        Opcode::Vmin4 | Opcode::Vmin2 => VOp::Min,
        _ => VOp::Max,
    };
    Ok(AluKind::Video {
        op: vop,
        quad,
        a_signed: signed(a),
        b_signed: signed(b),
        d_signed: signed(d),
        sat,
        acc,
    })
}

// =======================================================================================
// Execution

const LANES: usize = 32;
type Row = [u64; LANES];
static ZERO_ROW: Row = [0; LANES];

/// Low `w` bits set (`w` in 1..=64).
#[inline(always)]
fn mw(w: u8) -> u64 {
    u64::MAX >> (64 - w as u32)
}

/// The low `w` bits of `v`, sign-extended.
#[inline(always)]
fn sx(v: u64, w: u8) -> i64 {
    let sh = 64 - w as u32;
    ((v << sh) as i64) >> sh
}

#[inline(always)]
fn f32of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline(always)]
fn f64of(v: u64) -> f64 {
    f64::from_bits(v)
}

#[inline(always)]
fn bf(x: f32) -> u64 {
    x.to_bits() as u64
}

#[inline(always)]
fn bd(x: f64) -> u64 {
    x.to_bits()
}

/// The bits of an arithmetic `.f32` result, NaN made canonical. Done on the bits: Rust
/// (and LLVM) do not preserve NaN payloads through float operations, and a float-typed
/// `if x.is_nan() { CANONICAL } else { x }` may legally be folded to `x` — which happens
/// to the arith helpers once inlined here.
#[inline(always)]
fn canon32(x: f32) -> u64 {
    let b = x.to_bits();
    if b & 0x7fff_ffff > 0x7f80_0000 {
        arith::CANONICAL_NAN_F32 as u64
    } else {
        b as u64
    }
}

/// [`canon32`] for `.f64`.
#[inline(always)]
fn canon64(x: f64) -> u64 {
    let b = x.to_bits();
    if b & !(1 << 63) > 0x7ff0_0000_0000_0000 {
        arith::CANONICAL_NAN_F64
    } else {
        b
    }
}

#[inline(always)]
fn row(regs: &[u64], abs_slot: usize) -> &Row {
    regs[abs_slot * LANES..]
        .first_chunk::<LANES>()
        .unwrap_or(&ZERO_ROW)
}

/// One source operand as a full row of lanes.
#[inline(always)]
fn operand<'a>(regs: &'a [u64], base: usize, tag: Tag, v: u64, buf: &'a mut Row) -> &'a Row {
    match tag {
        Tag::None => &ZERO_ROW,
        Tag::Reg => row(regs, base + v as usize),
        Tag::Imm => {
            *buf = [v; LANES];
            buf
        }
        Tag::NotReg => {
            let r = row(regs, base + v as usize);
            for l in 0..LANES {
                buf[l] = (r[l] == 0) as u64;
            }
            buf
        }
    }
}

#[inline(always)]
fn write(regs: &mut [u64], base: usize, d: Slot, mask: u32, out: &Row) {
    if d == NO_SLOT {
        return;
    }
    let start = (base + d as usize) * LANES;
    let Some(dst) = regs[start..].first_chunk_mut::<LANES>() else {
        return;
    };
    if mask == u32::MAX {
        *dst = *out;
    } else {
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            dst[l] = out[l];
        }
    }
}

/// Runs `$e` for every active lane `$l`, storing into `$out[$l]`: a plain loop over all
/// 32 lanes when the warp is converged, a walk over the set bits of `mask` otherwise.
macro_rules! lanes {
    ($mask:expr, $out:ident, |$l:ident| $e:expr) => {{
        if $mask == u32::MAX {
            for $l in 0..LANES {
                $out[$l] = $e;
            }
        } else {
            let mut m = $mask;
            while m != 0 {
                let $l = m.trailing_zeros() as usize;
                m &= m - 1;
                $out[$l] = $e;
            }
        }
    }};
}

/// Executes `a` for the lanes in `mask` of the warp whose frame starts at register `base`.
pub fn exec(a: &AluInst, regs: &mut [u64], base: usize, mask: u32) {
    use AluKind as K;
    if mask == 0 {
        return;
    }
    match a.kind {
        K::AddCarry { .. }
        | K::SubCarry { .. }
        | K::MadCarry { .. }
        | K::Compare { .. }
        | K::Video { .. }
        | K::VideoSet { .. } => return exec_rare(a, regs, base, mask),
        _ => {}
    }
    let mut out: Row = [0; LANES];
    {
        let (mut b0, mut b1, mut b2, mut b3): (Row, Row, Row, Row) =
            ([0; LANES], [0; LANES], [0; LANES], [0; LANES]);
        let x = operand(regs, base, a.tag[0], a.src[0], &mut b0);
        let y = operand(regs, base, a.tag[1], a.src[1], &mut b1);
        let z = operand(regs, base, a.tag[2], a.src[2], &mut b2);
        let u = operand(regs, base, a.tag[3], a.src[3], &mut b3);
        macro_rules! run {
            (|$l:ident| $e:expr) => {
                lanes!(mask, out, |$l| $e)
            };
        }
        use arith::float as fl;
        match a.kind {
            K::Add(w) => run!(|l| x[l].wrapping_add(y[l]) & mw(w)),
            K::Sub(w) => run!(|l| x[l].wrapping_sub(y[l]) & mw(w)),
            K::MulLo(w) => run!(|l| x[l].wrapping_mul(y[l]) & mw(w)),
            K::MadLo(w) => run!(|l| x[l].wrapping_mul(y[l]).wrapping_add(z[l]) & mw(w)),
            K::MulHiU(w) => run!(|l| mul_hi_u(x[l], y[l], w)),
            K::MulHiS(w) => run!(|l| mul_hi_s(x[l], y[l], w)),
            K::MadHiU(w) => run!(|l| mul_hi_u(x[l], y[l], w).wrapping_add(z[l]) & mw(w)),
            K::MadHiS(w) => run!(|l| mul_hi_s(x[l], y[l], w).wrapping_add(z[l]) & mw(w)),
            K::MadHiSatS32 => run!(|l| {
                arith::int::mad_hi_sat_s32(x[l] as i32, y[l] as i32, z[l] as i32) as u32 as u64
            }),
            K::MulWideU(w) => run!(|l| (x[l] & mw(w)) * (y[l] & mw(w))),
            K::MulWideS(w) => run!(|l| (sx(x[l], w) * sx(y[l], w)) as u64 & mw(2 * w)),
            K::MadWideU(w) => {
                run!(|l| ((x[l] & mw(w)) * (y[l] & mw(w))).wrapping_add(z[l]) & mw(2 * w))
            }
            K::MadWideS(w) => {
                run!(|l| ((sx(x[l], w) * sx(y[l], w)) as u64).wrapping_add(z[l]) & mw(2 * w))
            }
            K::AddSatS32 => {
                run!(|l| arith::int::add_sat_s32(x[l] as i32, y[l] as i32) as u32 as u64)
            }
            K::SubSatS32 => {
                run!(|l| arith::int::sub_sat_s32(x[l] as i32, y[l] as i32) as u32 as u64)
            }
            K::Mul24 { hi, signed } => run!(|l| {
                let (p, q) = (x[l] as u32, y[l] as u32);
                (match (hi, signed) {
                    (false, false) => arith::int::mul24_lo_u32(p, q),
                    (true, false) => arith::int::mul24_hi_u32(p, q),
                    (false, true) => arith::int::mul24_lo_s32(p as i32, q as i32) as u32,
                    (true, true) => arith::int::mul24_hi_s32(p as i32, q as i32) as u32,
                }) as u64
            }),
            K::Mad24 { hi, signed, sat } => run!(|l| {
                let (p, q, r) = (x[l] as u32, y[l] as u32, z[l] as u32);
                (match (hi, signed, sat) {
                    (false, false, _) => arith::int::mad24_lo_u32(p, q, r),
                    (true, false, _) => arith::int::mad24_hi_u32(p, q, r),
                    (false, true, _) => {
                        arith::int::mad24_lo_s32(p as i32, q as i32, r as i32) as u32
                    }
                    (true, true, false) => {
                        arith::int::mad24_hi_s32(p as i32, q as i32, r as i32) as u32
                    }
                    (true, true, true) => {
                        arith::int::mad24_hi_sat_s32(p as i32, q as i32, r as i32) as u32
                    }
                }) as u64
            }),
            K::Sad { w, signed: true } => {
                run!(|l| z[l].wrapping_add(sx(x[l], w).abs_diff(sx(y[l], w))) & mw(w))
            }
            K::Sad { w, signed: false } => {
                run!(|l| z[l].wrapping_add((x[l] & mw(w)).abs_diff(y[l] & mw(w))) & mw(w))
            }
            K::Div { w, signed: true } => {
                run!(|l| arith::int::div_s64(sx(x[l], w), sx(y[l], w)) as u64 & mw(w))
            }
            K::Div { w, signed: false } => {
                run!(|l| arith::int::div_u64(x[l] & mw(w), y[l] & mw(w)) & mw(w))
            }
            K::Rem { w, signed: true } => {
                run!(|l| arith::int::rem_s64(sx(x[l], w), sx(y[l], w)) as u64 & mw(w))
            }
            K::Rem { w, signed: false } => {
                run!(|l| arith::int::rem_u64(x[l] & mw(w), y[l] & mw(w)) & mw(w))
            }
            K::Abs(w) => run!(|l| sx(x[l], w).wrapping_abs() as u64 & mw(w)),
            K::Neg(w) => run!(|l| x[l].wrapping_neg() & mw(w)),
            K::Min { w, signed: true } => run!(|l| sx(x[l], w).min(sx(y[l], w)) as u64 & mw(w)),
            K::Max { w, signed: true } => run!(|l| sx(x[l], w).max(sx(y[l], w)) as u64 & mw(w)),
            K::Min { w, signed: false } => run!(|l| (x[l] & mw(w)).min(y[l] & mw(w))),
            K::Max { w, signed: false } => run!(|l| (x[l] & mw(w)).max(y[l] & mw(w))),
            K::MinMaxReluS32 { max } => run!(|l| {
                let (p, q) = (x[l] as i32, y[l] as i32);
                (if max {
                    arith::int::max_relu_s32(p, q)
                } else {
                    arith::int::min_relu_s32(p, q)
                }) as u32 as u64
            }),
            K::X16x2 { op, relu } => run!(|l| {
                let (p, q) = (x[l] as u32, y[l] as u32);
                (match op {
                    Op16x2::Add => arith::int::add_16x2(p, q),
                    Op16x2::Sub => arith::int::sub_16x2(p, q),
                    Op16x2::MinS => arith::int::min_s16x2(p, q, relu),
                    Op16x2::MaxS => arith::int::max_s16x2(p, q, relu),
                    Op16x2::MinU => arith::int::min_u16x2(p, q),
                    Op16x2::MaxU => arith::int::max_u16x2(p, q),
                }) as u64
            }),

            K::And(w) => run!(|l| x[l] & y[l] & mw(w)),
            K::Or(w) => run!(|l| (x[l] | y[l]) & mw(w)),
            K::Xor(w) => run!(|l| (x[l] ^ y[l]) & mw(w)),
            K::Not(w) => run!(|l| !x[l] & mw(w)),
            K::Cnot(w) => run!(|l| (x[l] & mw(w) == 0) as u64),
            K::Lop3(lut) => run!(|l| arith::bits::lop3_b64(x[l], y[l], z[l], lut) & mw(32)),
            K::Shl(w) => run!(|l| {
                let n = y[l] as u32;
                if n >= w as u32 {
                    0
                } else {
                    (x[l] << n) & mw(w)
                }
            }),
            K::ShrU(w) => run!(|l| {
                let n = y[l] as u32;
                if n >= w as u32 {
                    0
                } else {
                    (x[l] & mw(w)) >> n
                }
            }),
            K::ShrS(w) => run!(|l| {
                let n = (y[l] as u32).min(w as u32 - 1);
                (sx(x[l], w) >> n) as u64 & mw(w)
            }),
            K::Shf { left: true, clamp } => {
                run!(|l| arith::bits::shf_l(x[l] as u32, y[l] as u32, z[l] as u32, clamp) as u64)
            }
            K::Shf { left: false, clamp } => {
                run!(|l| arith::bits::shf_r(x[l] as u32, y[l] as u32, z[l] as u32, clamp) as u64)
            }
            K::Bfe { w64, signed } => run!(|l| {
                let (p, n) = (y[l] as u32, z[l] as u32);
                match (w64, signed) {
                    (false, false) => arith::bits::bfe_u32(x[l] as u32, p, n) as u64,
                    (false, true) => arith::bits::bfe_s32(x[l] as i32, p, n) as u32 as u64,
                    (true, false) => arith::bits::bfe_u64(x[l], p, n),
                    (true, true) => arith::bits::bfe_s64(x[l] as i64, p, n) as u64,
                }
            }),
            K::Bfi { w64: false } => run!(|l| {
                arith::bits::bfi_b32(x[l] as u32, y[l] as u32, z[l] as u32, u[l] as u32) as u64
            }),
            K::Bfi { w64: true } => {
                run!(|l| arith::bits::bfi_b64(x[l], y[l], z[l] as u32, u[l] as u32))
            }
            K::Bfind {
                w64,
                signed,
                shiftamt,
            } => run!(|l| (match (w64, signed) {
                (false, false) => arith::bits::bfind_u32(x[l] as u32, shiftamt),
                (false, true) => arith::bits::bfind_s32(x[l] as i32, shiftamt),
                (true, false) => arith::bits::bfind_u64(x[l], shiftamt),
                (true, true) => arith::bits::bfind_s64(x[l] as i64, shiftamt),
            }) as u64),
            K::Popc { w64: false } => run!(|l| (x[l] as u32).count_ones() as u64),
            K::Popc { w64: true } => run!(|l| x[l].count_ones() as u64),
            K::Clz { w64: false } => run!(|l| (x[l] as u32).leading_zeros() as u64),
            K::Clz { w64: true } => run!(|l| x[l].leading_zeros() as u64),
            K::Brev { w64: false } => run!(|l| (x[l] as u32).reverse_bits() as u64),
            K::Brev { w64: true } => run!(|l| x[l].reverse_bits()),
            K::Bmsk { clamp } => run!(|l| bmsk(x[l] as u32, y[l] as u32, clamp) as u64),
            K::Fns => run!(|l| fns(x[l] as u32, y[l] as u32, z[l] as i32) as u64),
            K::Prmt(mode) => {
                run!(|l| arith::bits::prmt(x[l] as u32, y[l] as u32, z[l] as u32, mode) as u64)
            }
            K::Dp4a { a_signed, b_signed } => run!(|l| {
                arith::int::dp4a(x[l] as u32, y[l] as u32, z[l] as u32, a_signed, b_signed) as u64
            }),
            K::Dp2a {
                a_signed,
                b_signed,
                hi,
            } => run!(|l| {
                let (p, q, r) = (x[l] as u32, y[l] as u32, z[l] as u32);
                arith::int::dp2a(p, q, r, a_signed, b_signed, hi) as u64
            }),

            K::Selp(w) => run!(|l| if z[l] != 0 { x[l] } else { y[l] } & mw(w)),
            K::SlctS32(w) => run!(|l| if (z[l] as i32) >= 0 { x[l] } else { y[l] } & mw(w)),
            K::SlctF32 { w, ftz } => {
                run!(|l| arith::cmp::slct_f32(x[l], y[l], f32of(z[l]), ftz) & mw(w))
            }
            K::Testp { f64: false, op } => run!(|l| fl::testp_f32(op, f32of(x[l])) as u64),
            K::Testp { f64: true, op } => run!(|l| fl::testp_f64(op, f64of(x[l])) as u64),

            K::AddF32Rn => run!(|l| canon32(f32of(x[l]) + f32of(y[l]))),
            K::SubF32Rn => run!(|l| canon32(f32of(x[l]) - f32of(y[l]))),
            K::MulF32Rn => run!(|l| canon32(f32of(x[l]) * f32of(y[l]))),
            K::FmaF32Rn => run!(|l| canon32(f32of(x[l]).mul_add(f32of(y[l]), f32of(z[l])))),
            K::AddF32(m) => {
                run!(|l| canon32(fl::add_f32(f32of(x[l]), f32of(y[l]), m.rnd, m.ftz, m.sat)))
            }
            K::SubF32(m) => {
                run!(|l| canon32(fl::sub_f32(f32of(x[l]), f32of(y[l]), m.rnd, m.ftz, m.sat)))
            }
            K::MulF32(m) => {
                run!(|l| canon32(fl::mul_f32(f32of(x[l]), f32of(y[l]), m.rnd, m.ftz, m.sat)))
            }
            K::FmaF32(m) => run!(|l| canon32(fl::fma_f32(
                f32of(x[l]),
                f32of(y[l]),
                f32of(z[l]),
                m.rnd,
                m.ftz,
                m.sat
            ))),
            K::DivF32 { rnd, ftz } => {
                run!(|l| canon32(fl::div_f32(f32of(x[l]), f32of(y[l]), rnd, ftz)))
            }
            K::DivFullF32 { ftz } => {
                run!(|l| canon32(fl::div_full_f32(f32of(x[l]), f32of(y[l]), ftz)))
            }
            K::DivApproxF32 { ftz } => {
                run!(|l| canon32(fl::div_approx_f32(f32of(x[l]), f32of(y[l]), ftz)))
            }
            K::RcpF32 { rnd, ftz } => run!(|l| canon32(fl::rcp_f32(f32of(x[l]), rnd, ftz))),
            K::RcpApproxF32 { ftz } => run!(|l| canon32(fl::rcp_approx_f32(f32of(x[l]), ftz))),
            K::SqrtF32 { rnd, ftz } => run!(|l| canon32(fl::sqrt_f32(f32of(x[l]), rnd, ftz))),
            K::SqrtApproxF32 { ftz } => run!(|l| canon32(fl::sqrt_approx_f32(f32of(x[l]), ftz))),
            K::RsqrtF32 { ftz } => run!(|l| canon32(fl::rsqrt_approx_f32(f32of(x[l]), ftz))),
            K::SinF32 { ftz } => run!(|l| canon32(fl::sin_approx_f32(f32of(x[l]), ftz))),
            K::CosF32 { ftz } => run!(|l| canon32(fl::cos_approx_f32(f32of(x[l]), ftz))),
            K::Lg2F32 { ftz } => run!(|l| canon32(fl::lg2_approx_f32(f32of(x[l]), ftz))),
            K::Ex2F32 { ftz } => run!(|l| canon32(fl::ex2_approx_f32(f32of(x[l]), ftz))),
            K::TanhF32 => run!(|l| canon32(fl::tanh_approx_f32(f32of(x[l])))),
            K::MinF32 { ftz, nan, xorsign } => run!(|l| {
                let (p, q) = (f32of(x[l]), f32of(y[l]));
                canon32(if xorsign {
                    fl::min_xorsign_abs_f32(p, q, ftz, nan)
                } else {
                    fl::min_f32(p, q, ftz, nan)
                })
            }),
            K::MaxF32 { ftz, nan, xorsign } => run!(|l| {
                let (p, q) = (f32of(x[l]), f32of(y[l]));
                canon32(if xorsign {
                    fl::max_xorsign_abs_f32(p, q, ftz, nan)
                } else {
                    fl::max_f32(p, q, ftz, nan)
                })
            }),
            K::AbsF32 { ftz } => run!(|l| bf(fl::abs_f32(f32of(x[l]), ftz))),
            K::NegF32 { ftz } => run!(|l| bf(fl::neg_f32(f32of(x[l]), ftz))),
            K::CopysignF32 => run!(|l| bf(fl::copysign_f32(f32of(x[l]), f32of(y[l])))),

            K::AddF64(r) => run!(|l| canon64(fl::add_f64(f64of(x[l]), f64of(y[l]), r))),
            K::SubF64(r) => run!(|l| canon64(fl::sub_f64(f64of(x[l]), f64of(y[l]), r))),
            K::MulF64(r) => run!(|l| canon64(fl::mul_f64(f64of(x[l]), f64of(y[l]), r))),
            K::FmaF64(r) => {
                run!(|l| canon64(fl::fma_f64(f64of(x[l]), f64of(y[l]), f64of(z[l]), r)))
            }
            K::DivF64(r) => run!(|l| canon64(fl::div_f64(f64of(x[l]), f64of(y[l]), r))),
            K::RcpF64(r) => run!(|l| canon64(fl::rcp_f64(f64of(x[l]), r))),
            K::RcpApproxFtzF64 => run!(|l| canon64(fl::rcp_approx_ftz_f64(f64of(x[l])))),
            K::SqrtF64(r) => run!(|l| canon64(fl::sqrt_f64(f64of(x[l]), r))),
            K::RsqrtF64 { ftz: false } => run!(|l| canon64(fl::rsqrt_approx_f64(f64of(x[l])))),
            K::RsqrtF64 { ftz: true } => run!(|l| canon64(fl::rsqrt_approx_ftz_f64(f64of(x[l])))),
            K::MinF64 { nan } => run!(|l| canon64(fl::min_f64(f64of(x[l]), f64of(y[l]), nan))),
            K::MaxF64 { nan } => run!(|l| canon64(fl::max_f64(f64of(x[l]), f64of(y[l]), nan))),
            K::AbsF64 => run!(|l| bd(fl::abs_f64(f64of(x[l])))),
            K::NegF64 => run!(|l| bd(fl::neg_f64(f64of(x[l])))),
            K::CopysignF64 => run!(|l| bd(fl::copysign_f64(f64of(x[l]), f64of(y[l])))),

            K::HalfBin { op, fmt, m, nan } => run!(|l| {
                let f = |p: u16, q: u16| half_bin(op, fmt.bf, m, nan, p, q);
                if fmt.x2 {
                    pair(x[l], y[l], f)
                } else {
                    f(x[l] as u16, y[l] as u16) as u64
                }
            }),
            K::HalfFma { fmt, m } => run!(|l| {
                let f = |p: u16, q: u16, r: u16| half_fma(fmt.bf, m, p, q, r);
                if fmt.x2 {
                    let lo = f(x[l] as u16, y[l] as u16, z[l] as u16) as u64;
                    let hi = f(
                        (x[l] >> 16) as u16,
                        (y[l] >> 16) as u16,
                        (z[l] >> 16) as u16,
                    );
                    lo | (hi as u64) << 16
                } else {
                    f(x[l] as u16, y[l] as u16, z[l] as u16) as u64
                }
            }),
            K::HalfUn { op, fmt, ftz } => run!(|l| {
                let f = |p: u16, _: u16| half_un(op, fmt.bf, ftz, p);
                if fmt.x2 {
                    pair(x[l], 0, f)
                } else {
                    f(x[l] as u16, 0) as u64
                }
            }),

            K::CvtInt {
                from,
                from_signed: true,
                to,
            } => run!(|l| sx(x[l], from) as u64 & mw(to)),
            K::CvtInt {
                from,
                from_signed: false,
                to,
            } => run!(|l| x[l] & mw(from) & mw(to)),
            K::CvtF32F64 => run!(|l| {
                let v = f32of(x[l]);
                if v.is_nan() {
                    arith::CANONICAL_NAN_F64
                } else {
                    bd(v as f64)
                }
            }),
            K::CvtF64F32Rn => run!(|l| canon32(f64of(x[l]) as f32)),
            K::CvtIntFloatRn { from, signed, f64 } => run!(|l| match (signed, f64) {
                (true, false) => bf(sx(x[l], from) as f32),
                (false, false) => bf((x[l] & mw(from)) as f32),
                (true, true) => bd(sx(x[l], from) as f64),
                (false, true) => bd((x[l] & mw(from)) as f64),
            }),
            K::Cvt { from, to, m } => {
                let keep = mw(to.bits() as u8);
                run!(|l| arith::cvt::cvt(x[l], from, to, m) & keep)
            }
            K::CvtPack { bf: false, relu } => {
                run!(|l| arith::cvt::cvt_rn_f16x2_f32(f32of(x[l]), f32of(y[l]), relu) as u64)
            }
            K::CvtPack { bf: true, relu } => {
                run!(|l| arith::cvt::cvt_rn_bf16x2_f32(f32of(x[l]), f32of(y[l]), relu) as u64)
            }
            K::CvtTf32 => run!(|l| arith::cvt::cvt_rna_tf32_f32(f32of(x[l])) as u64),

            K::AddCarry { .. }
            | K::SubCarry { .. }
            | K::MadCarry { .. }
            | K::Compare { .. }
            | K::Video { .. }
            | K::VideoSet { .. } => {}
        }
    }
    write(regs, base, a.d, mask, &out);
}

#[inline(always)]
fn mul_hi_u(x: u64, y: u64, w: u8) -> u64 {
    if w == 64 {
        ((x as u128 * y as u128) >> 64) as u64
    } else {
        ((x & mw(w)) * (y & mw(w))) >> w
    }
}

#[inline(always)]
fn mul_hi_s(x: u64, y: u64, w: u8) -> u64 {
    if w == 64 {
        ((x as i64 as i128 * y as i64 as i128) >> 64) as u64
    } else {
        ((sx(x, w) * sx(y, w)) >> w) as u64 & mw(w)
    }
}

/// `bmsk.{wrap,clamp}.b32 d, a, b` (PTX ISA `bmsk` semantics).
fn bmsk(a: u32, b: u32, clamp: bool) -> u32 {
    let a1 = a & 0x1f;
    let b1 = b & 0x1f;
    let mut mask0 = u32::MAX << a1;
    let sum = a1 + b1;
    let mut overflow = sum >= 32;
    if clamp {
        if a >= 32 {
            overflow = true;
            mask0 = 0;
        }
        if b >= 32 {
            overflow = true;
        }
    }
    let mask1 = if overflow {
        0
    } else if b1 == 0 {
        u32::MAX
    } else {
        u32::MAX << sum
    };
    mask0 & !mask1
}

/// `fns.b32 d, mask, base, offset`: the position of the `|offset|`-th set bit of `mask`
/// counting from `base` upwards (offset > 0) or downwards (offset < 0); `offset == 0` asks
/// whether bit `base` itself is set. 0xffffffff when there is none (also for `base` > 31,
/// which the ISA leaves undefined).
fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    if base > 31 {
        return u32::MAX;
    }
    if offset == 0 {
        return if mask >> base & 1 != 0 {
            base
        } else {
            u32::MAX
        };
    }
    let mut count = offset.unsigned_abs() - 1;
    let mut pos = base as i32;
    let inc = if offset > 0 { 1 } else { -1 };
    while (0..32).contains(&pos) {
        if mask >> pos & 1 != 0 {
            if count == 0 {
                return pos as u32;
            }
            count -= 1;
        }
        pos += inc;
    }
    u32::MAX
}

/// Applies a 16-bit lane function to both halves of two packed registers.
#[inline(always)]
fn pair(a: u64, b: u64, f: impl Fn(u16, u16) -> u16) -> u64 {
    let lo = f(a as u16, b as u16) as u64;
    let hi = f((a >> 16) as u16, (b >> 16) as u16) as u64;
    lo | hi << 16
}

fn half_bin(op: HOp, is_bf: bool, m: HalfMods, nan: bool, a: u16, b: u16) -> u16 {
    use arith::half as h;
    let sign = (a ^ b) & 0x8000;
    let (a, b) = match op {
        HOp::MinXs | HOp::MaxXs => (a & 0x7fff, b & 0x7fff),
        _ => (a, b),
    };
    let r = if is_bf {
        let (p, q) = (bf16::from_bits(a), bf16::from_bits(b));
        match op {
            HOp::Add => h::add_bf16(p, q, m),
            HOp::Sub => h::sub_bf16(p, q, m),
            HOp::Mul => h::mul_bf16(p, q, m),
            HOp::Min | HOp::MinXs => h::min_bf16(p, q, m.ftz, nan),
            HOp::Max | HOp::MaxXs => h::max_bf16(p, q, m.ftz, nan),
        }
        .to_bits()
    } else {
        let (p, q) = (f16::from_bits(a), f16::from_bits(b));
        match op {
            HOp::Add => h::add_f16(p, q, m),
            HOp::Sub => h::sub_f16(p, q, m),
            HOp::Mul => h::mul_f16(p, q, m),
            HOp::Min | HOp::MinXs => h::min_f16(p, q, m.ftz, nan),
            HOp::Max | HOp::MaxXs => h::max_f16(p, q, m.ftz, nan),
        }
        .to_bits()
    };
    let is_nan = r & 0x7fff > if is_bf { 0x7f80 } else { 0x7c00 };
    match op {
        HOp::MinXs | HOp::MaxXs if !is_nan => r | sign,
        _ => r,
    }
}

fn half_fma(is_bf: bool, m: HalfMods, a: u16, b: u16, c: u16) -> u16 {
    use arith::half as h;
    if is_bf {
        let f = bf16::from_bits;
        h::fma_bf16(f(a), f(b), f(c), m).to_bits()
    } else {
        let f = f16::from_bits;
        h::fma_f16(f(a), f(b), f(c), m).to_bits()
    }
}

fn half_un(op: HUn, is_bf: bool, ftz: bool, a: u16) -> u16 {
    use arith::half as h;
    if is_bf {
        let p = bf16::from_bits(a);
        match op {
            HUn::Neg => h::neg_bf16(p, ftz),
            HUn::Abs => h::abs_bf16(p, ftz),
            HUn::Ex2 => h::ex2_approx_ftz_bf16(p),
            HUn::Tanh => h::tanh_approx_bf16(p),
        }
        .to_bits()
    } else {
        let p = f16::from_bits(a);
        match op {
            HUn::Neg => h::neg_f16(p, ftz),
            HUn::Abs => h::abs_f16(p, ftz),
            HUn::Ex2 => h::ex2_approx_f16(p),
            HUn::Tanh => h::tanh_approx_f16(p),
        }
        .to_bits()
    }
}

/// Kinds with a second result (carry-out, `q`), a post-processing step, or that are
/// simply rare: kept out of [`exec`] so its common arms stay compact.
#[inline(never)]
fn exec_rare(a: &AluInst, regs: &mut [u64], base: usize, mask: u32) {
    use AluKind as K;
    let mut out: Row = [0; LANES];
    let mut out2: Row = [0; LANES];
    let mut second = false;
    {
        let (mut b0, mut b1, mut b2): (Row, Row, Row) = ([0; LANES], [0; LANES], [0; LANES]);
        let x = operand(regs, base, a.tag[0], a.src[0], &mut b0);
        let y = operand(regs, base, a.tag[1], a.src[1], &mut b1);
        let z = operand(regs, base, a.tag[2], a.src[2], &mut b2);
        let cc = row(regs, base + CC_SLOT as usize);
        macro_rules! run2 {
            (|$l:ident| $e:expr) => {{
                lanes!(mask, out, |$l| {
                    let (v, c) = $e;
                    out2[$l] = c.0 as u64;
                    v
                })
            }};
        }
        use arith::int as i;
        match a.kind {
            K::AddCarry { w64, cin, cout } => {
                second = cout;
                run2!(|l| {
                    let c = CarryFlag(cin && cc[l] & 1 != 0);
                    if w64 {
                        i::addc_64(x[l], y[l], c)
                    } else {
                        let (v, c) = i::addc_32(x[l] as u32, y[l] as u32, c);
                        (v as u64, c)
                    }
                })
            }
            K::SubCarry { w64, cin, cout } => {
                second = cout;
                run2!(|l| {
                    let c = CarryFlag(cin && cc[l] & 1 != 0);
                    if w64 {
                        i::subc_64(x[l], y[l], c)
                    } else {
                        let (v, c) = i::subc_32(x[l] as u32, y[l] as u32, c);
                        (v as u64, c)
                    }
                })
            }
            K::MadCarry {
                half,
                w64,
                cin,
                cout,
            } => {
                second = cout;
                run2!(|l| {
                    let c = CarryFlag(cin && cc[l] & 1 != 0);
                    if w64 {
                        let (p, q, r) = (x[l], y[l], z[l]);
                        match half {
                            MadHalf::Lo => i::madc_lo_64(p, q, r, c),
                            MadHalf::HiU => i::madc_hi_u64(p, q, r, c),
                            MadHalf::HiS => i::madc_hi_s64(p, q, r, c),
                        }
                    } else {
                        let (p, q, r) = (x[l] as u32, y[l] as u32, z[l] as u32);
                        let (v, c) = match half {
                            MadHalf::Lo => i::madc_lo_32(p, q, r, c),
                            MadHalf::HiU => i::madc_hi_u32(p, q, r, c),
                            MadHalf::HiS => i::madc_hi_s32(p, q, r, c),
                        };
                        (v as u64, c)
                    }
                })
            }
            K::Compare { cmp, out: o, bop } => {
                compare(cmp, mask, x, y, &mut out);
                let x2 = matches!(cmp, Cmp::Half(_, HFmt { x2: true, .. }, _));
                let simple = o == CmpOut::Pred && bop.is_none() && a.d2 == NO_SLOT && !x2;
                if !simple {
                    second = a.d2 != NO_SLOT;
                    let t = out;
                    lanes!(mask, out, |l| {
                        let c = z[l] != 0;
                        let comb = |t: bool| match bop {
                            Some(op) => arith::cmp::combine(t, op, c),
                            None => t,
                        };
                        // Scalar: p = t·c and q = !t·c. Packed: p, q = the two halves.
                        let (p, q) = if x2 {
                            (comb(t[l] & 1 != 0), comb(t[l] & 2 != 0))
                        } else {
                            (comb(t[l] != 0), comb(t[l] == 0))
                        };
                        out2[l] = q as u64;
                        cmp_value(o, x2, p, q)
                    });
                }
            }
            K::Video {
                op,
                quad,
                a_signed,
                b_signed,
                d_signed,
                sat,
                acc,
            } => lanes!(mask, out, |l| {
                video(
                    op, quad, a_signed, b_signed, d_signed, sat, acc, x[l], y[l], z[l],
                )
            }),
            K::VideoSet {
                op,
                quad,
                a_signed,
                b_signed,
                acc,
            } => lanes!(mask, out, |l| {
                video_set(op, quad, a_signed, b_signed, acc, x[l], y[l], z[l])
            }),
            _ => return exec(a, regs, base, mask),
        }
    }
    write(regs, base, a.d, mask, &out);
    if second {
        write(regs, base, a.d2, mask, &out2);
    }
}

/// The raw comparison result per lane: 0/1, or two bits for packed halves.
#[inline(always)]
fn compare(cmp: Cmp, mask: u32, x: &Row, y: &Row, out: &mut Row) {
    use arith::cmp as c;
    match cmp {
        Cmp::Eq(w) => lanes!(mask, out, |l| ((x[l] ^ y[l]) & mw(w) == 0) as u64),
        Cmp::Ne(w) => lanes!(mask, out, |l| ((x[l] ^ y[l]) & mw(w) != 0) as u64),
        Cmp::LtS(w) => lanes!(mask, out, |l| (sx(x[l], w) < sx(y[l], w)) as u64),
        Cmp::LeS(w) => lanes!(mask, out, |l| (sx(x[l], w) <= sx(y[l], w)) as u64),
        Cmp::LtU(w) => lanes!(mask, out, |l| ((x[l] & mw(w)) < (y[l] & mw(w))) as u64),
        Cmp::LeU(w) => lanes!(mask, out, |l| ((x[l] & mw(w)) <= (y[l] & mw(w))) as u64),
        Cmp::F32(op, ftz) => lanes!(
            mask,
            out,
            |l| c::setp_f32(f32of(x[l]), f32of(y[l]), op, ftz) as u64
        ),
        Cmp::F64(op) => lanes!(mask, out, |l| c::setp_f64(f64of(x[l]), f64of(y[l]), op)
            as u64),
        Cmp::Half(op, fmt, ftz) => lanes!(mask, out, |l| {
            let one = |p: u64, q: u64| -> bool {
                let (p, q) = (p as u16, q as u16);
                if fmt.bf {
                    arith::half::setp_bf16(bf16::from_bits(p), bf16::from_bits(q), op, ftz)
                } else {
                    arith::half::setp_f16(f16::from_bits(p), f16::from_bits(q), op, ftz)
                }
            };
            let lo = one(x[l], y[l]) as u64;
            if fmt.x2 {
                lo | (one(x[l] >> 16, y[l] >> 16) as u64) << 1
            } else {
                lo
            }
        }),
    }
}

/// The value `set`/`setp` writes to `d` for results `p` (and `q`, the high half of a
/// packed comparison).
#[inline(always)]
fn cmp_value(o: CmpOut, x2: bool, p: bool, q: bool) -> u64 {
    let one = |t: bool, v: u64| if t { v } else { 0 };
    match o {
        CmpOut::Pred => p as u64,
        CmpOut::Int(_) if x2 => one(p, 0xffff) | one(q, 0xffff) << 16,
        CmpOut::Int(w) => one(p, mw(w)),
        CmpOut::F32 => one(p, bf(1.0)),
        CmpOut::Half(is_bf) => {
            let v = if is_bf { 0x3f80 } else { 0x3c00 };
            if x2 {
                one(p, v) | one(q, v) << 16
            } else {
                one(p, v)
            }
        }
    }
}

/// Lane `k` of a SIMD video operand: a byte (quad) or half-word, sign- or zero-extended.
#[inline(always)]
fn vlane(v: u64, k: u32, quad: bool, signed: bool) -> i64 {
    let bits = if quad { 8 } else { 16 };
    let raw = (v >> (k * bits)) & mw(bits as u8);
    if signed {
        sx(raw, bits as u8)
    } else {
        raw as i64
    }
}

/// `vop4`/`vop2` with default selectors (`a`'s lanes, `b`'s lanes) and the full mask.
#[allow(clippy::too_many_arguments)]
fn video(
    op: VOp,
    quad: bool,
    a_signed: bool,
    b_signed: bool,
    d_signed: bool,
    sat: bool,
    acc: bool,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    let (n, bits) = if quad { (4, 8) } else { (2, 16) };
    let mut d: u32 = if acc { c as u32 } else { 0 };
    for k in 0..n {
        let (p, q) = (vlane(a, k, quad, a_signed), vlane(b, k, quad, b_signed));
        let mut t = match op {
            VOp::Add => p + q,
            VOp::Sub => p - q,
            VOp::Avrg => {
                if p + q >= 0 {
                    (p + q + 1) >> 1
                } else {
                    (p + q) >> 1
                }
            }
            VOp::Absdiff => (p - q).abs(),
            VOp::Min => p.min(q),
            VOp::Max => p.max(q),
        };
        if sat {
            let (lo, hi) = if d_signed {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            } else {
                (0, (1i64 << bits) - 1)
            };
            t = t.clamp(lo, hi);
        }
        if acc {
            d = d.wrapping_add(t as u32);
        } else {
            d |= ((t as u64 & mw(bits as u8)) << (k * bits)) as u32;
        }
    }
    d as u64
}

/// `vset4`/`vset2` with default selectors and the full mask.
#[allow(clippy::too_many_arguments)]
fn video_set(
    op: CmpOp,
    quad: bool,
    a_signed: bool,
    b_signed: bool,
    acc: bool,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    let (n, bits) = if quad { (4, 8) } else { (2, 16) };
    let mut d: u32 = if acc { c as u32 } else { 0 };
    for k in 0..n {
        let (p, q) = (vlane(a, k, quad, a_signed), vlane(b, k, quad, b_signed));
        let t = match op {
            CmpOp::Eq => p == q,
            CmpOp::Ne => p != q,
            CmpOp::Lt => p < q,
            CmpOp::Le => p <= q,
            CmpOp::Gt => p > q,
            _ => p >= q,
        } as u32;
        if acc {
            d = d.wrapping_add(t);
        } else {
            d |= t << (k * bits);
        }
    }
    d as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alu_inst_stays_small() {
        assert_eq!(std::mem::size_of::<AluInst>(), 56);
        assert!(std::mem::size_of::<AluKind>() <= 12);
    }

    #[test]
    fn bmsk_matches_the_isa_examples() {
        assert_eq!(bmsk(1, 2, false), 0x6);
        assert_eq!(bmsk(0, 0, false), 0);
        assert_eq!(bmsk(0, 32, true), u32::MAX);
        assert_eq!(bmsk(0, 32, false), 0);
        assert_eq!(bmsk(32, 4, true), 0);
        assert_eq!(bmsk(32, 4, false), 0xf);
        assert_eq!(bmsk(28, 8, false), 0xf000_0000);
    }

    #[test]
    fn fns_matches_the_isa_examples() {
        assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 3, -1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, -1), 1);
        assert_eq!(fns(0xaaaa_aaaa, 2, 0), u32::MAX);
        assert_eq!(fns(0xaaaa_aaaa, 1, 0), 1);
        assert_eq!(fns(0x1, 5, 1), u32::MAX);
        assert_eq!(fns(0x8000_0001, 0, 2), 31);
    }
}
