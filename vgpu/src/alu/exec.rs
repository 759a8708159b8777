//! Execution: runs one [`AluInst`] for a mask of lanes over a warp's register rows (see the
//! parent module for the register conventions and why operands are whole rows).

use ::half::{bf16, f16};

use super::*;
use crate::arith::{self, half::HalfMods, CarryFlag, CmpOp};
use crate::operand::{Slot, CC_SLOT};

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

/// One source operand as a full row of lanes: `operand!(regs, base, tag, v, buf)` is a
/// reference to its register's row, or to `buf` (a `Row` binding declared without a
/// value) filled here for an immediate or a negated predicate. A buffer of each operand
/// zero-filled up front (as a function taking `&mut Row` needs) was 1 KiB of stores per
/// warp instruction, for the few operands that are not registers.
macro_rules! operand {
    ($regs:expr, $base:expr, $tag:expr, $v:expr, $buf:ident) => {
        match $tag {
            Tag::None => &ZERO_ROW,
            Tag::Reg => row($regs, $base + $v as usize),
            Tag::Imm => {
                $buf = [$v; LANES];
                &$buf
            }
            Tag::NotReg => {
                let r = row($regs, $base + $v as usize);
                $buf = std::array::from_fn(|l| (r[l] == 0) as u64);
                &$buf
            }
        }
    };
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
        K::Compare { cmp, .. } if plain_setp(a) => return exec_setp(a, regs, base, mask, cmp),
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
        let (b0, b1, b2, b3): (Row, Row, Row, Row);
        let x: &Row = operand!(regs, base, a.tag[0], a.src[0], b0);
        let y: &Row = operand!(regs, base, a.tag[1], a.src[1], b1);
        let z: &Row = operand!(regs, base, a.tag[2], a.src[2], b2);
        let u: &Row = operand!(regs, base, a.tag[3], a.src[3], b3);
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
                from_signed,
                to,
                to_signed,
            } => match (from_signed, to_signed) {
                (true, true) => run!(|l| sx(sx(x[l], from) as u64, to) as u64),
                (true, false) => run!(|l| sx(x[l], from) as u64 & mw(to)),
                (false, true) => run!(|l| sx(x[l] & mw(from), to) as u64),
                (false, false) => run!(|l| x[l] & mw(from) & mw(to)),
            },
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
                // `cvt` already sign-extends a signed integer result to 64 bits.
                let keep = if to.is_signed_int() {
                    u64::MAX
                } else {
                    mw(to.bits() as u8)
                };
                run!(|l| arith::cvt::cvt(x[l], from, to, m) & keep)
            }
            K::CvtPack {
                bf: false,
                relu,
                rz: false,
                satfinite: false,
            } => run!(|l| arith::cvt::cvt_rn_f16x2_f32(f32of(x[l]), f32of(y[l]), relu) as u64),
            K::CvtPack {
                bf: true,
                relu,
                rz: false,
                satfinite: false,
            } => {
                run!(|l| arith::cvt::cvt_rn_bf16x2_f32(f32of(x[l]), f32of(y[l]), relu) as u64)
            }
            K::CvtPack {
                bf,
                relu,
                rz,
                satfinite,
            } => {
                let rnd = if rz {
                    arith::Rounding::Rz
                } else {
                    arith::Rounding::Rn
                };
                run!(|l| {
                    arith::cvt::cvt_x2_f32(f32of(x[l]), f32of(y[l]), bf, rnd, relu, satfinite)
                        as u64
                })
            }
            K::CvtPackInt {
                bits,
                signed,
                merge,
            } => run!(|l| {
                let c = merge.then_some(z[l] as u32);
                arith::cvt::cvt_pack_sat(x[l] as i32, y[l] as i32, bits as u32, signed, c) as u64
            }),
            K::CvtToF8x2 {
                e5m2,
                from_f16x2,
                relu,
            } => {
                use arith::cvt::{to_fp8, Fp8};
                let f = if e5m2 { Fp8::E5m2 } else { Fp8::E4m3 };
                run!(|l| {
                    let (hi, lo) = if from_f16x2 {
                        let h = |v: u64| f16::from_bits(v as u16).to_f64();
                        (h(x[l] >> 16), h(x[l]))
                    } else {
                        (f32of(x[l]) as f64, f32of(y[l]) as f64)
                    };
                    ((to_fp8(hi, f, relu) as u64) << 8) | to_fp8(lo, f, relu) as u64
                })
            }
            K::CvtFromF8x2 { e5m2, relu } => {
                use arith::cvt::{fp8_to_f16, Fp8};
                let f = if e5m2 { Fp8::E5m2 } else { Fp8::E4m3 };
                run!(|l| {
                    let h = |v: u64| fp8_to_f16(v as u8, f, relu) as u64;
                    (h(x[l] >> 8) << 16) | h(x[l])
                })
            }
            K::CvtTf32 => run!(|l| arith::cvt::cvt_rna_tf32_f32(f32of(x[l])) as u64),
            K::ScalarVideo(v) => run!(|l| scalar_video(v, x[l], y[l], z[l])),

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
///
/// (The plain `setp` to one predicate, in nearly every loop, goes to [`exec_setp`]
/// instead: the same comparison without the second result row this function clears.)
#[inline(never)]
fn exec_rare(a: &AluInst, regs: &mut [u64], base: usize, mask: u32) {
    use AluKind as K;
    let mut out: Row = [0; LANES];
    let mut out2: Row = [0; LANES];
    let mut second = false;
    {
        let (b0, b1, b2): (Row, Row, Row);
        let x: &Row = operand!(regs, base, a.tag[0], a.src[0], b0);
        let y: &Row = operand!(regs, base, a.tag[1], a.src[1], b1);
        let z: &Row = operand!(regs, base, a.tag[2], a.src[2], b2);
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
                    // `sub.cc` is `subc` with a carry-in of 1: `a + !b + 1`.
                    let c = CarryFlag(!cin || cc[l] & 1 != 0);
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
                if !plain_setp(a) {
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

/// Whether `a` is a `setp` to one predicate with no combining operation, not packed: the
/// comparison's raw result is all it writes.
#[inline(always)]
fn plain_setp(a: &AluInst) -> bool {
    matches!(
        a.kind,
        AluKind::Compare { cmp, out: CmpOut::Pred, bop: None }
            if a.d2 == NO_SLOT && !matches!(cmp, Cmp::Half(_, HFmt { x2: true, .. }, _))
    )
}

/// A [`plain_setp`]: [`exec_rare`]'s comparison without its other rows.
#[inline(never)]
fn exec_setp(a: &AluInst, regs: &mut [u64], base: usize, mask: u32, cmp: Cmp) {
    let mut out: Row = [0; LANES];
    {
        let (b0, b1): (Row, Row);
        let x: &Row = operand!(regs, base, a.tag[0], a.src[0], b0);
        let y: &Row = operand!(regs, base, a.tag[1], a.src[1], b1);
        compare(cmp, mask, x, y, &mut out);
    }
    write(regs, base, a.d, mask, &out);
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

/// The selected byte/half/word of `v`, sign- or zero-extended (PTX ISA §9.7.18.1
/// `partSelectSignExtend`).
#[inline]
fn vpart(v: u64, sel: u8, signed: bool) -> i64 {
    let (x, w) = match sel {
        1..=4 => (v >> (8 * (sel - 1)), 8),
        5 | 6 => (v >> (16 * (sel - 5)), 16),
        _ => (v, 32),
    };
    if signed {
        sx(x, w)
    } else {
        (x & mw(w)) as i64
    }
}

/// One scalar video instruction (PTX ISA §9.7.18.1): inputs extended to 33 bits, the
/// operation giving a signed 34-bit intermediate, `optSaturate` to the destination type
/// (the subword size with a destination selector), then `optSecondaryOp` or `optMerge`
/// with `c`, and the low 32 bits written.
fn scalar_video(v: VideoScalar, a: u64, b: u64, c: u64) -> u64 {
    let f = |bit: u8| v.flags >> bit & 1 != 0;
    let (a_signed, b_signed, d_signed, sat, clamp) = (f(0), f(1), f(2), f(3), f(4));
    let ta = vpart(a, v.asel, a_signed);
    let tb = vpart(b, v.bsel, b_signed);
    let tmp: i64 = match v.op {
        SVOp::Add => ta + tb,
        SVOp::Sub => ta - tb,
        SVOp::Absdiff => (ta - tb).abs(),
        SVOp::Min => ta.min(tb),
        SVOp::Max => ta.max(tb),
        SVOp::Shl | SVOp::Shr => {
            let n = if clamp { tb.min(32) } else { tb & 0x1f } as u32;
            let r = if v.op == SVOp::Shl {
                (ta as i128) << n
            } else {
                (ta as i128) >> n
            };
            // Only a signed 34-bit intermediate exists.
            ((r << 94) >> 94) as i64
        }
        SVOp::Set(op) => i64::from(match op {
            CmpOp::Eq => ta == tb,
            CmpOp::Ne => ta != tb,
            CmpOp::Lt => ta < tb,
            CmpOp::Le => ta <= tb,
            CmpOp::Gt => ta > tb,
            _ => ta >= tb,
        }),
    };
    let tmp = if sat {
        let bits = match v.dsel {
            1..=4 => 8,
            5 | 6 => 16,
            _ => 32,
        };
        let (lo, hi) = if d_signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        };
        tmp.clamp(lo, hi)
    } else {
        tmp
    };
    // The third operand's sign follows dtype (the result of vset is unsigned).
    let tc = if d_signed {
        c as u32 as i32 as i64
    } else {
        c as u32 as i64
    };
    let d = match (v.sec, v.dsel) {
        (1, _) => tmp + tc,
        (2, _) => tmp.min(tc),
        (3, _) => tmp.max(tc),
        (_, 1..=4) => {
            let sh = 8 * (v.dsel - 1) as u32;
            ((tmp & 0xff) << sh) | (tc & !(0xff << sh))
        }
        (_, 5 | 6) => {
            let sh = 16 * (v.dsel - 5) as u32;
            ((tmp & 0xffff) << sh) | (tc & !(0xffff << sh))
        }
        _ => tmp,
    };
    d as u64 & 0xffff_ffff
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
