//! Decoding: one IR instruction into an [`AluInst`], with every modifier folded into its
//! [`AluKind`] at load time (see the parent module for the conventions).

use super::*;
use crate::arith::{
    bits::PrmtMode,
    cmp::BoolOp,
    cvt::{CvtMods, CvtRounding},
    float::TestpOp,
    half::HalfMods,
    CmpOp, IntRounding, Rounding, ScalarKind,
};
use crate::operand::{Slot, Src, CC_SLOT};
use fencehound_ptx::{Instruction, Mod, ModClass, Opcode, Operand};

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
    /// `.e4m3x2` (false) / `.e5m2x2` (true).
    F8x2(bool),
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
        Mod::E4m3x2 => Ty::F8x2(false),
        Mod::E5m2x2 => Ty::F8x2(true),
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
        | Opcode::Vset => decode_scalar_video(x),
        Opcode::Vmad => Err("`vmad` is not supported".into()),
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
    x.flags(&[Mod::Ftz, Mod::Sat, Mod::Relu, Mod::Satfinite, Mod::Pack])?;
    if x.has(Mod::Pack) {
        return decode_cvt_pack_int(x);
    }
    let types = x.types();
    let [to, from] = types.as_slice() else {
        return Err("types".into());
    };
    let (to, from) = (*to, *from);
    let rnd = x.i.rounding();
    let (relu, satfinite) = (x.has(Mod::Relu), x.has(Mod::Satfinite));
    // Packed pair from two f32 sources.
    if matches!(to, Ty::F16x2 | Ty::Bf16x2) && from == Ty::F32 {
        x.nsrc(2)?;
        let rz = match rnd {
            Some(Mod::Rn) => false,
            Some(Mod::Rz) => true,
            _ => return Err("rounding (`.rn` or `.rz`)".into()),
        };
        if x.has(Mod::Ftz) || x.has(Mod::Sat) {
            return Err("form".into());
        }
        return Ok(K::CvtPack {
            bf: to == Ty::Bf16x2,
            relu,
            rz,
            satfinite,
        });
    }
    // 8-bit float pairs (PTX ISA §9.7.9.21): `.rn` only, `.satfinite` mandatory when
    // converting to them.
    if let Ty::F8x2(e5m2) = to {
        if rnd != Some(Mod::Rn) || !satfinite || x.has(Mod::Ftz) || x.has(Mod::Sat) {
            return Err("form (`.rn.satfinite` is required)".into());
        }
        let from_f16x2 = match from {
            Ty::F32 => false,
            Ty::F16x2 => true,
            _ => return Err("source type".into()),
        };
        x.nsrc(if from_f16x2 { 1 } else { 2 })?;
        return Ok(K::CvtToF8x2 {
            e5m2,
            from_f16x2,
            relu,
        });
    }
    if let (Ty::F16x2, Ty::F8x2(e5m2)) = (to, from) {
        if rnd != Some(Mod::Rn) || satfinite || x.has(Mod::Ftz) || x.has(Mod::Sat) {
            return Err("form".into());
        }
        x.nsrc(1)?;
        return Ok(K::CvtFromF8x2 { e5m2, relu });
    }
    x.nsrc(1)?;
    if satfinite && !matches!(to, Ty::F16 | Ty::Bf16) {
        return Err("`.satfinite` on this conversion".into());
    }
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
        satfinite,
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
    let plain = !m.ftz && !m.sat && !m.relu && !m.satfinite;
    if !tf && !ff && !m.sat && rnd == CvtRounding::None {
        return Ok(K::CvtInt {
            from: fk.bits() as u8,
            from_signed: fk.is_signed_int(),
            to: tk.bits() as u8,
            to_signed: tk.is_signed_int(),
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

/// The selector code of operand `k` of a scalar video instruction (see [`VSel`]).
fn video_sel(i: &Instruction, k: usize) -> Res<u8> {
    use fencehound_ptx::Selector as S;
    match i.operands.get(k) {
        Some(Operand::Select { sel, .. }) => match sel {
            S::Byte(b) => Ok(1 + b),
            S::Half(h) => Ok(5 + h),
            _ => Err(format!("selector `.{}`", sel.spelling())),
        },
        _ => Ok(0),
    }
}

/// `vadd vsub vabsdiff vmin vmax vshl vshr vset` (PTX ISA §9.7.18.1): 32-bit operands
/// with byte/half selectors, `.sat`, and a secondary `.add/.min/.max` with `c` or a
/// merge of the result into `c` at the destination's selector.
fn decode_scalar_video(x: &mut Dec) -> Res<AluKind> {
    let op = x.i.opcode;
    x.no_rounding()?;
    let set = op == Opcode::Vset;
    let shift = matches!(op, Opcode::Vshl | Opcode::Vshr);
    let mut allowed = vec![Mod::Sat];
    if shift {
        allowed.extend([Mod::Clamp, Mod::Wrap]);
    }
    x.flags(&allowed)?;
    let types = x.types();
    if !types.iter().all(|t| is_32(*t)) {
        return Err("types".into());
    }
    let signed = |t: &Ty| *t == Ty::S(32);
    // vset.atype.btype.cmp: the result (0/1) is unsigned.
    let (d_signed, a_signed, b_signed) = match (set, types.as_slice()) {
        (true, [a, b]) => (false, signed(a), signed(b)),
        (false, [d, a, b]) => (signed(d), signed(a), signed(b)),
        _ => return Err("types".into()),
    };
    if shift && b_signed {
        return Err("shift amount type must be `.u32`".into());
    }
    let cmp = if set {
        let c =
            x.i.cmp()
                .and_then(cmp_op)
                .filter(|c| {
                    matches!(
                        c,
                        CmpOp::Eq | CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge
                    )
                })
                .ok_or("comparison")?;
        Some(c)
    } else {
        x.no_cmp()?;
        None
    };
    let sec = match x.i.op() {
        None => 0,
        Some(Mod::Add) => 1,
        Some(Mod::Min) => 2,
        Some(Mod::Max) => 3,
        Some(m) => return Err(format!("secondary operation `.{}`", m.as_str())),
    };
    let dsel = video_sel(x.i, 0)?;
    let (asel, bsel) = (video_sel(x.i, 1)?, video_sel(x.i, 2)?);
    if dsel != 0 && sec != 0 {
        return Err("a secondary operation and a destination selector together".into());
    }
    let with_c = dsel != 0 || sec != 0;
    x.nsrc(if with_c { 3 } else { 2 })?;
    if set && x.has(Mod::Sat) {
        return Err("`.sat` on `vset`".into());
    }
    let vop = match op {
        Opcode::Vadd => SVOp::Add,
        Opcode::Vsub => SVOp::Sub,
        Opcode::Vabsdiff => SVOp::Absdiff,
        Opcode::Vmin => SVOp::Min,
        Opcode::Vmax => SVOp::Max,
        Opcode::Vshl => SVOp::Shl,
        Opcode::Vshr => SVOp::Shr,
        _ => SVOp::Set(cmp.unwrap_or(CmpOp::Eq)),
    };
    if shift && !(x.has(Mod::Clamp) ^ x.has(Mod::Wrap)) {
        return Err("`.clamp` or `.wrap` is required".into());
    }
    let flags = (a_signed as u8)
        | (b_signed as u8) << 1
        | (d_signed as u8) << 2
        | (x.has(Mod::Sat) as u8) << 3
        | (x.has(Mod::Clamp) as u8) << 4;
    Ok(AluKind::ScalarVideo(VideoScalar {
        op: vop,
        asel,
        bsel,
        dsel,
        flags,
        sec,
    }))
}

/// `cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}` (PTX ISA §9.7.9.22).
fn decode_cvt_pack_int(x: &mut Dec) -> Res<AluKind> {
    if !x.has(Mod::Sat) || x.i.rounding().is_some() || x.has(Mod::Relu) || x.has(Mod::Ftz) {
        return Err("`cvt.pack` takes exactly `.sat`".into());
    }
    let types: Vec<Mod> = x.i.mods_of(ModClass::Type).collect();
    let (bits, signed) = match types.first() {
        Some(Mod::U16) => (16, false),
        Some(Mod::S16) => (16, true),
        Some(Mod::U8) => (8, false),
        Some(Mod::S8) => (8, true),
        Some(Mod::U4) => (4, false),
        Some(Mod::S4) => (4, true),
        Some(Mod::U2) => (2, false),
        Some(Mod::S2) => (2, true),
        _ => return Err("convert type".into()),
    };
    let merge = bits < 16;
    let want: &[Mod] = if merge {
        &[Mod::S32, Mod::B32]
    } else {
        &[Mod::S32]
    };
    if &types[1..] != want {
        return Err("types".into());
    }
    x.nsrc(if merge { 3 } else { 2 })?;
    Ok(AluKind::CvtPackInt {
        bits,
        signed,
        merge,
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
