//! Warp-level matrix instructions: `ldmatrix` and `mma` (PTX ISA §9.7.14.5). Both are
//! `.sync.aligned` collectives; they run once every thread of the warp has arrived, and a
//! warp with an absent or exited thread is undefined behaviour, reported as a fault.
//!
//! Fragment layouts follow the ISA's tables, with `g = %laneid >> 2` (groupID) and
//! `t = %laneid % 4` (threadID_in_group). Element `i` of a thread's fragment is packed
//! low-first into its registers: two 16-bit or four 8-bit elements per `.b32` register.
//!
//! Floating-point `mma`: the ISA leaves "the accumulation order, rounding and handling
//! of subnormal inputs" unspecified and asks for at least single precision. Here every
//! product of two `.f16`/`.bf16`/`.tf32`/`.e4m3`/`.e5m2` values is exact in `f64`, the sum
//! `c + Σ a·b` is taken in `f64` in order of `k`, and rounded once (to nearest even) to
//! `.f32` or `.f16`, so results with exactly representable partial sums are exact; a
//! `.tf32` operand is its register's top 19 bits (the low 13 ignored, as tensor cores
//! do). `.f64` `mma` is a chain of fused multiply-adds in order of `k` in the
//! instruction's rounding mode. Integer `mma` is exact; `.satfinite` clamps to the `.s32`
//! range, otherwise the sum wraps.

use super::memops::Place;
use super::*;
use crate::arith::cvt::{fp8_to_f16, Fp8};
use crate::arith::float::fma_f64;
use crate::arith::round::{round_f64, Dir, Format};
use ::half::{bf16, f16};

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// Fails unless all 32 lanes of the warp exist and take part.
    pub(super) fn whole_warp(
        &self,
        w: u32,
        pc: u32,
        have: u32,
        what: &str,
    ) -> Result<(), LaunchOutcome> {
        if have == u32::MAX {
            return Ok(());
        }
        let l = have.trailing_zeros() as usize;
        Err(self.fault(
            w,
            l.min(WARP - 1),
            pc,
            FaultKind::Undefined,
            format!(
                "`{what}` needs all 32 threads of the warp; only {:#010x} take part (absent or exited threads)",
                have
            ),
        ))
    }

    /// `ldmatrix.m8n8.b16`: matrix `m`'s row `r` starts at the address held by thread
    /// `8m + r`; thread `l` receives row `l / 4`, columns `2(l % 4)` and `2(l % 4) + 1`
    /// (low half first) or, with `.trans`, rows `2(l % 4)` and `2(l % 4) + 1` of column
    /// `l / 4` (PTX ISA §9.7.14.5.15, Figure "ldmatrix fragment layout").
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_ldmatrix(
        &mut self,
        w: u32,
        pc: u32,
        have: u32,
        ds: &[Slot],
        addr: Addr,
        space: MemSpace,
        trans: bool,
    ) -> Result<(), LaunchOutcome> {
        self.whole_warp(w, pc, have, "ldmatrix")?;
        let site = self.prog.insts[pc as usize].site;
        let mut rows = Vec::with_capacity(8 * ds.len());
        for t in 0..8 * ds.len() {
            let p = self.place(w, t, space, addr);
            self.check_align(w, t, pc, p, 16)?;
            match p {
                Place::Mem(loc @ Location::Shared { .. }) => rows.push(loc),
                _ => {
                    return Err(self.fault(
                        w,
                        t,
                        pc,
                        FaultKind::InvalidAddress,
                        "ldmatrix row address is not in shared memory".into(),
                    ))
                }
            }
        }
        for l in 0..WARP {
            for (m, d) in ds.iter().enumerate() {
                let row0 = &rows[8 * m..8 * m + 8];
                let (lo, hi) = if trans {
                    let r = 2 * (l % 4);
                    let col = 2 * (l / 4) as u64;
                    (row0[r].offset(col), row0[r + 1].offset(col))
                } else {
                    let row = row0[l / 4];
                    let col = 4 * (l % 4) as u64;
                    (row.offset(col), row.offset(col + 2))
                };
                let mut v = 0u64;
                for (k, loc) in [lo, hi].into_iter().enumerate() {
                    if self.park_reads {
                        self.park_read(w, loc, 2);
                    }
                    let a =
                        self.access(w, l, loc, 2, AccessKind::Load, Sem::Weak, Scope::Sys, site);
                    let mut b = [0u8; 2];
                    if let Err(e) = self.hooks.load(self.mem, &a, &mut b) {
                        return Err(self.mem_fault(w, l, pc, e));
                    }
                    v |= (u16::from_le_bytes(b) as u64) << (16 * k);
                }
                self.set(w, l, *d, v);
            }
        }
        Ok(())
    }

    /// `mma.mMn8kK.row.col`: D (M×8) = A (M×K) · B (K×8) + C.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_mma(
        &mut self,
        w: u32,
        pc: u32,
        have: u32,
        kind: MmaKind,
        d: &[Slot],
        a: &[Src],
        b: &[Src],
        c: &[Src],
    ) -> Result<(), LaunchOutcome> {
        self.whole_warp(w, pc, have, "mma")?;
        let (m, k) = (kind.m as usize, kind.k as usize);
        let int = kind.a.is_int();
        // Elements per register of A and B.
        let per = kind.a.per_reg();
        // Matrices as f64 (floats; exact for 16-bit inputs) or i64 (integers).
        let mut ma = vec![0f64; m * k];
        let mut mb = vec![0f64; k * 8];
        let mut ia = vec![0i64; m * k];
        let mut ib = vec![0i64; k * 8];
        let mut mc = vec![0f64; m * 8];
        let mut ic = vec![0i64; m * 8];
        for l in 0..WARP {
            let (g, t) = (l / 4, l % 4);
            let regs =
                |srcs: &[Src]| -> Vec<u64> { srcs.iter().map(|s| self.src(w, l, *s)).collect() };
            let (ra, rb, rc) = (regs(a), regs(b), regs(c));
            for i in 0..ra.len() * per {
                let (row, col) = frag_a(m, k, per, g, t, i);
                let r = ra[i / per];
                if int {
                    ia[row * k + col] = int_elem(r, i % per, kind.a);
                } else {
                    ma[row * k + col] = half(r, i % per, kind.a);
                }
            }
            for i in 0..rb.len() * per {
                let row = frag_b_row(m, k, per, t, i);
                let r = rb[i / per];
                if int {
                    ib[row * 8 + g] = int_elem(r, i % per, kind.b);
                } else {
                    mb[row * 8 + g] = half(r, i % per, kind.b);
                }
            }
            for i in 0..m / 4 {
                let (row, col) = frag_c(g, t, i);
                match kind.c {
                    MmaAcc::S32 => ic[row * 8 + col] = rc[i] as u32 as i32 as i64,
                    MmaAcc::F32 => mc[row * 8 + col] = f32::from_bits(rc[i] as u32) as f64,
                    MmaAcc::F16 => {
                        mc[row * 8 + col] =
                            f16::from_bits((rc[i / 2] >> (16 * (i % 2))) as u16).to_f64()
                    }
                    MmaAcc::F64 => mc[row * 8 + col] = f64::from_bits(rc[i]),
                }
            }
        }
        for l in 0..WARP {
            let (g, t) = (l / 4, l % 4);
            let mut out = [0u64; 4];
            for i in 0..m / 4 {
                let (row, col) = frag_c(g, t, i);
                let pairs = (0..k).map(|x| (ma[row * k + x], mb[x * 8 + col]));
                let bits = if int {
                    let mut s = ic[row * 8 + col];
                    for x in 0..k {
                        s += ia[row * k + x] * ib[x * 8 + col];
                    }
                    s32_sum(s, kind.satfinite)
                } else if kind.d == MmaAcc::F64 {
                    fma_chain(mc[row * 8 + col], pairs, kind.rnd).to_bits()
                } else {
                    // In order of k, starting from C.
                    let s = pairs.fold(mc[row * 8 + col], |s, (a, b)| s + a * b);
                    round_sum(s, kind.d == MmaAcc::F16)
                };
                if kind.d == MmaAcc::F16 {
                    out[i / 2] |= bits << (16 * (i % 2));
                } else {
                    out[i] = bits;
                }
            }
            for (reg, v) in d.iter().zip(out) {
                self.set(w, l, *reg, v);
            }
        }
        Ok(())
    }
}

/// A `.tf32` operand: its register's top 19 bits (the low 13 ignored, as tensor cores
/// do). Shared with `wmma.mma`.
pub(super) fn tf32(r: u64) -> f64 {
    f32::from_bits(r as u32 & !0x1fff) as f64
}

/// A floating-point sum taken in `f64` rounded once (to nearest even) to `.f16` (`f16`)
/// or `.f32` bits; NaN becomes the canonical NaN. (`half`'s `from_f64` would round
/// through f32 on hosts with F16C.) Shared with `wmma.mma`.
pub(super) fn round_sum(s: f64, f16: bool) -> u64 {
    match (f16, s.is_nan()) {
        (true, true) => 0x7fff,
        (true, false) => round_f64(Format::F16, s, Dir::Rn),
        (false, true) => 0x7fff_ffff,
        (false, false) => (s as f32).to_bits() as u64,
    }
}

/// An `.s32` result: clamped with `.satfinite`, else wrapped. Shared with `wmma.mma`.
pub(super) fn s32_sum(s: i64, satfinite: bool) -> u64 {
    let v = if satfinite {
        s.clamp(i32::MIN as i64, i32::MAX as i64) as i32
    } else {
        s as i32
    };
    v as u32 as u64
}

/// `acc + Σ a·b` as fused multiply-adds in order, each in rounding mode `rnd` (`.f64`).
/// Shared with `wmma.mma`.
pub(super) fn fma_chain(
    acc: f64,
    pairs: impl Iterator<Item = (f64, f64)>,
    rnd: crate::arith::Rounding,
) -> f64 {
    pairs.fold(acc, |s, (a, b)| fma_f64(a, b, s, rnd))
}

/// (row, column) in A (M×K) of element `i` of the fragment of the thread with groupID
/// `g` and threadID_in_group `t`; `per` elements per register (PTX ISA §9.7.14.5.x,
/// "Matrix Fragments for mma.mMn8kK").
fn frag_a(m: usize, k: usize, per: usize, g: usize, t: usize, i: usize) -> (usize, usize) {
    match (m, k, per) {
        // One `.tf32`/`.f64` per register: m8n8k4 `(g, t)`; m16n8k4, k8, k16 rows g and
        // g+8 in turn, columns t, t+4, t+8, t+12 in pairs.
        (_, _, 1) => (g + 8 * (i % 2), t + 4 * (i / 2)),
        // m8n8k16 (.s8/.u8) and m8n8k32 (.s4/.u4): one register, one row.
        (8, _, _) => (g, t * per + i),
        // m16n8k8 (16-bit): rows g, g+8 in turn per register.
        (_, 8, _) => (g + 8 * (i / 2), t * 2 + (i & 1)),
        // m16n8k16 (16-bit): registers (g, k 0-7), (g+8, 0-7), (g, 8-15), (g+8, 8-15).
        (_, 16, 2) => (g + 8 * ((i / 2) % 2), t * 2 + (i & 1) + 8 * (i / 4)),
        // m16n8k16 (8-bit): registers row g, row g+8.
        (_, 16, _) => (g + 8 * (i / 4), t * 4 + (i & 3)),
        // m16n8k32 (8-bit): (g, k 0-15), (g+8, 0-15), (g, 16-31), (g+8, 16-31).
        _ => (g + 8 * ((i / 4) % 2), t * 4 + (i & 3) + 16 * (i / 8)),
    }
}

/// The row in B (K×8) of element `i` of a thread's fragment (its column is the groupID).
fn frag_b_row(m: usize, k: usize, per: usize, t: usize, i: usize) -> usize {
    match (m, k, per) {
        // One `.tf32`/`.f64` per register: rows t, t+4, t+8, t+12.
        (_, _, 1) => t + 4 * i,
        (8, _, _) | (_, 8, _) => t * per + i,
        (_, 16, 2) => t * 2 + (i & 1) + 8 * (i / 2),
        (_, 16, _) => t * 4 + i,
        _ => t * 4 + (i & 3) + 16 * (i / 4),
    }
}

/// (row, column) in C/D (M×8) of element `i`: `(g, 2t)`, `(g, 2t+1)`, then for M = 16
/// the same columns of row g+8.
fn frag_c(g: usize, t: usize, i: usize) -> (usize, usize) {
    (g + 8 * (i / 2), t * 2 + (i & 1))
}

/// Element `i` (of `32 / bits`) of `r`, sign- or zero-extended per the element type.
fn int_elem(r: u64, i: usize, ty: MmaIn) -> i64 {
    let bits = ty.bits();
    let v = (r >> (bits as usize * i)) & ((1 << bits) - 1);
    if ty.is_signed() {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    } else {
        v as i64
    }
}

/// Element `i` of `r` as a real number (`.f16`, `.bf16`, `.tf32`, `.f64`, `.e4m3`,
/// `.e5m2`).
fn half(r: u64, i: usize, ty: MmaIn) -> f64 {
    match ty {
        MmaIn::F64 => f64::from_bits(r),
        MmaIn::Tf32 => tf32(r),
        MmaIn::E4m3 | MmaIn::E5m2 => {
            let fmt = if ty == MmaIn::E4m3 {
                Fp8::E4m3
            } else {
                Fp8::E5m2
            };
            f16::from_bits(fp8_to_f16((r >> (8 * i)) as u8, fmt, false)).to_f64()
        }
        MmaIn::Bf16 => bf16::from_bits((r >> (16 * i)) as u16).to_f64(),
        _ => f16::from_bits((r >> (16 * i)) as u16).to_f64(),
    }
}
