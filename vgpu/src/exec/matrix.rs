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
//! product of two `.f16`/`.bf16` values is exact in `f64`, the sum `c + Σ a·b` is taken in
//! `f64` in order of `k`, and rounded once (to nearest even) to `.f32` or `.f16`, so
//! results with exactly representable partial sums are exact. Integer `mma` is exact;
//! `.satfinite` clamps to the `.s32` range, otherwise the sum wraps.

use super::memops::Place;
use super::*;
use crate::arith::round::{round_f64, Dir, Format};
use ::half::{bf16, f16};

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// Fails unless all 32 lanes of the warp exist and take part.
    fn whole_warp(&self, w: u32, pc: u32, have: u32, what: &str) -> Result<(), LaunchOutcome> {
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

    /// `mma.m16n8kK.row.col`: D (16×8) = A (16×K) · B (K×8) + C.
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
        let k = kind.k as usize;
        let int = matches!(kind.a, MmaIn::S8 | MmaIn::U8);
        // Matrices as f64 (floats; exact for 16-bit inputs) or i64 (integers).
        let mut ma = vec![0f64; 16 * k];
        let mut mb = vec![0f64; k * 8];
        let mut ia = vec![0i64; 16 * k];
        let mut ib = vec![0i64; k * 8];
        let mut mc = [0f64; 128];
        let mut ic = [0i64; 128];
        for l in 0..WARP {
            let (g, t) = (l / 4, l % 4);
            let regs =
                |srcs: &[Src]| -> Vec<u64> { srcs.iter().map(|s| self.src(w, l, *s)).collect() };
            let (ra, rb, rc) = (regs(a), regs(b), regs(c));
            if int {
                for i in 0..ra.len() * 4 {
                    let (row, col) = if k == 32 {
                        (g + 8 * ((i / 4) % 2), t * 4 + (i & 3) + 16 * (i / 8))
                    } else {
                        (g + 8 * (i / 4), t * 4 + (i & 3))
                    };
                    ia[row * k + col] = byte(ra[i / 4], i % 4, kind.a == MmaIn::S8);
                }
                for i in 0..rb.len() * 4 {
                    let row = if k == 32 {
                        t * 4 + (i & 3) + 16 * (i / 4)
                    } else {
                        t * 4 + i
                    };
                    ib[row * 8 + g] = byte(rb[i / 4], i % 4, kind.b == MmaIn::S8);
                }
            } else {
                for i in 0..ra.len() * 2 {
                    let (row, col) = if k == 16 {
                        (g + 8 * ((i / 2) % 2), t * 2 + (i & 1) + 8 * (i / 4))
                    } else {
                        (g + 8 * (i / 2), t * 2 + (i & 1))
                    };
                    ma[row * k + col] = half(ra[i / 2], i % 2, kind.a);
                }
                for i in 0..rb.len() * 2 {
                    let row = if k == 16 {
                        t * 2 + (i & 1) + 8 * (i / 2)
                    } else {
                        t * 2 + i
                    };
                    mb[row * 8 + g] = half(rb[i / 2], i % 2, kind.b);
                }
            }
            for i in 0..4 {
                let (row, col) = (g + 8 * (i / 2), t * 2 + (i & 1));
                match kind.c {
                    MmaAcc::S32 => ic[row * 8 + col] = rc[i] as u32 as i32 as i64,
                    MmaAcc::F32 => mc[row * 8 + col] = f32::from_bits(rc[i] as u32) as f64,
                    MmaAcc::F16 => {
                        mc[row * 8 + col] =
                            f16::from_bits((rc[i / 2] >> (16 * (i % 2))) as u16).to_f64()
                    }
                }
            }
        }
        for l in 0..WARP {
            let (g, t) = (l / 4, l % 4);
            let mut out = [0u64; 4];
            for i in 0..4 {
                let (row, col) = (g + 8 * (i / 2), t * 2 + (i & 1));
                let bits = if int {
                    let mut s = ic[row * 8 + col];
                    for x in 0..k {
                        s += ia[row * k + x] * ib[x * 8 + col];
                    }
                    let v = if kind.satfinite {
                        s.clamp(i32::MIN as i64, i32::MAX as i64) as i32
                    } else {
                        s as i32
                    };
                    v as u32 as u64
                } else {
                    let mut s = mc[row * 8 + col];
                    for x in 0..k {
                        s += ma[row * k + x] * mb[x * 8 + col];
                    }
                    match kind.d {
                        MmaAcc::F16 if s.is_nan() => 0x7fff,
                        // One rounding of the f64 sum (`half`'s `from_f64` would round
                        // through f32 on hosts with F16C).
                        MmaAcc::F16 => round_f64(Format::F16, s, Dir::Rn),
                        _ if s.is_nan() => 0x7fff_ffff,
                        _ => (s as f32).to_bits() as u64,
                    }
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

/// Byte `i` of `r`, sign- or zero-extended.
fn byte(r: u64, i: usize, signed: bool) -> i64 {
    let b = (r >> (8 * i)) as u8;
    if signed {
        b as i8 as i64
    } else {
        b as i64
    }
}

/// Half `i` of `r` as a `.f16` or `.bf16` value.
fn half(r: u64, i: usize, ty: MmaIn) -> f64 {
    let h = (r >> (16 * i)) as u16;
    match ty {
        MmaIn::Bf16 => bf16::from_bits(h).to_f64(),
        _ => f16::from_bits(h).to_f64(),
    }
}
