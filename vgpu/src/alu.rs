//! Pure per-lane ALU instructions: decoding from the IR into an [`AluInst`] and executing
//! it for a mask of lanes over the warp's register file. The semantics live in
//! [`crate::arith`]; this file only maps PTX modifiers to those functions.
//!
//! Registers are stored structure-of-arrays per warp: slot `s` of lane `l` in a frame with
//! register base `b` is `regs[(b + s) * 32 + l]`, raw bits in a `u64` with narrower types
//! in the low bits (upper bits are zero for unsigned/bit types written here).

use crate::program::{Slot, Src, CC_SLOT};
use fencehound_ptx::{Instruction, Mod, Opcode};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AluKind {
    Add(u32),
    Sub(u32),
    MulLo(u32),
    MulWideU32,
    MulWideS32,
    MadLo(u32),
    And,
    Or,
    Xor,
    Not(u32),
    Shl(u32),
    ShrU(u32),
    ShrS(u32),
    Neg(u32),
    SetpU(fencehound_ptx::Mod),
    SetpS(fencehound_ptx::Mod, u32),
    Selp,
    /// Integer conversion: truncate to `to` bits, then sign- or zero-extend from `from`.
    CvtInt {
        from: u32,
        from_signed: bool,
        to: u32,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct AluInst {
    pub kind: AluKind,
    pub d: Slot,
    pub d2: Option<Slot>,
    pub s: [Src; 4],
}

fn bits_of(m: Option<Mod>) -> u32 {
    m.and_then(crate::decode::type_bytes).unwrap_or(4) * 8
}

pub fn decode(i: &Instruction, dsts: &[Option<Slot>], srcs: &[Src]) -> Result<AluInst, String> {
    let ty = i.ty();
    let bits = bits_of(ty);
    let signed = ty.is_some_and(crate::decode::is_signed);
    let float = ty.is_some_and(crate::decode::is_float);
    let d = dsts.first().copied().flatten().unwrap_or(CC_SLOT);
    let d2 = dsts.get(1).copied().flatten();
    let mut s = [Src::Imm(0); 4];
    for (k, x) in srcs.iter().take(4).enumerate() {
        s[k] = *x;
    }
    let unsupported = || Err(String::new());
    if float {
        return unsupported();
    }
    let kind = match i.opcode {
        Opcode::Add if i.mods.len() == 1 => AluKind::Add(bits),
        Opcode::Sub if i.mods.len() == 1 => AluKind::Sub(bits),
        Opcode::Mul if i.has(Mod::Lo) => AluKind::MulLo(bits),
        Opcode::Mul if i.has(Mod::Wide) && bits == 32 => {
            if signed {
                AluKind::MulWideS32
            } else {
                AluKind::MulWideU32
            }
        }
        Opcode::Mad if i.has(Mod::Lo) && !i.has(Mod::Cc) => AluKind::MadLo(bits),
        Opcode::And => AluKind::And,
        Opcode::Or => AluKind::Or,
        Opcode::Xor => AluKind::Xor,
        Opcode::Not => AluKind::Not(bits),
        Opcode::Shl => AluKind::Shl(bits),
        Opcode::Shr if signed => AluKind::ShrS(bits),
        Opcode::Shr => AluKind::ShrU(bits),
        Opcode::Neg => AluKind::Neg(bits),
        Opcode::Setp if i.op().is_none() => match i.cmp() {
            Some(c) if signed => AluKind::SetpS(c, bits),
            Some(c) => AluKind::SetpU(c),
            None => return unsupported(),
        },
        Opcode::Selp => AluKind::Selp,
        Opcode::Cvt if i.rounding().is_none() && !i.has(Mod::Sat) => {
            let t = i.types();
            if t.len() != 2 || t.iter().any(|m| crate::decode::is_float(*m)) {
                return unsupported();
            }
            AluKind::CvtInt {
                to: bits_of(Some(t[0])),
                from: bits_of(Some(t[1])),
                from_signed: crate::decode::is_signed(t[1]),
            }
        }
        _ => return unsupported(),
    };
    Ok(AluInst { kind, d, d2, s })
}

#[inline]
fn m(bits: u32) -> u64 {
    crate::exec::mask_bits(bits)
}

#[inline]
fn sx(v: u64, bits: u32) -> i64 {
    let sh = 64 - bits;
    ((v << sh) as i64) >> sh
}

#[inline]
fn rd(regs: &[u64], base: usize, s: Src, lane: usize) -> u64 {
    match s {
        Src::Reg(r) => regs[(base + r as usize) * 32 + lane],
        Src::NotReg(r) => (regs[(base + r as usize) * 32 + lane] == 0) as u64,
        Src::Imm(v) => v,
        _ => 0,
    }
}

pub fn exec(a: &AluInst, regs: &mut [u64], base: usize, mask: u32) {
    let drow = (base + a.d as usize) * 32;
    macro_rules! each {
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {{
            let mut mm = mask;
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                let $x = rd(regs, base, a.s[0], l);
                let $y = rd(regs, base, a.s[1], l);
                let $z = rd(regs, base, a.s[2], l);
                regs[drow + l] = $e;
            }
        }};
    }
    match a.kind {
        AluKind::Add(b) => each!(|x, y, _z| x.wrapping_add(y) & m(b)),
        AluKind::Sub(b) => each!(|x, y, _z| x.wrapping_sub(y) & m(b)),
        AluKind::MulLo(b) => each!(|x, y, _z| x.wrapping_mul(y) & m(b)),
        AluKind::MulWideU32 => each!(|x, y, _z| (x & 0xffff_ffff) * (y & 0xffff_ffff)),
        AluKind::MulWideS32 => each!(|x, y, _z| (sx(x, 32).wrapping_mul(sx(y, 32))) as u64),
        AluKind::MadLo(b) => each!(|x, y, z| x.wrapping_mul(y).wrapping_add(z) & m(b)),
        AluKind::And => each!(|x, y, _z| x & y),
        AluKind::Or => each!(|x, y, _z| x | y),
        AluKind::Xor => each!(|x, y, _z| x ^ y),
        AluKind::Not(b) => each!(|x, _y, _z| !x & m(b)),
        AluKind::Shl(b) => each!(|x, y, _z| if (y as u32) >= b {
            0
        } else {
            (x << (y as u32)) & m(b)
        }),
        AluKind::ShrU(b) => each!(|x, y, _z| if (y as u32) >= b {
            0
        } else {
            (x & m(b)) >> (y as u32)
        }),
        AluKind::ShrS(b) => each!(|x, y, _z| (sx(x, b) >> (y as u32).min(b - 1)) as u64 & m(b)),
        AluKind::Neg(b) => each!(|x, _y, _z| x.wrapping_neg() & m(b)),
        AluKind::SetpU(c) => each!(|x, y, _z| match c {
            Mod::Eq => x == y,
            Mod::Ne => x != y,
            Mod::Lt | Mod::Lo => x < y,
            Mod::Le | Mod::Ls => x <= y,
            Mod::Gt | Mod::Hi => x > y,
            Mod::Ge | Mod::Hs => x >= y,
            _ => false,
        } as u64),
        AluKind::SetpS(c, b) => each!(|x, y, _z| {
            let (x, y) = (sx(x, b), sx(y, b));
            match c {
                Mod::Eq => x == y,
                Mod::Ne => x != y,
                Mod::Lt => x < y,
                Mod::Le => x <= y,
                Mod::Gt => x > y,
                Mod::Ge => x >= y,
                _ => false,
            }
        } as u64),
        AluKind::Selp => each!(|x, y, z| if z != 0 { x } else { y }),
        AluKind::CvtInt {
            from,
            from_signed,
            to,
        } => each!(|x, _y, _z| {
            let v = if from_signed {
                sx(x, from) as u64
            } else {
                x & m(from)
            };
            v & m(to)
        }),
    }
}
