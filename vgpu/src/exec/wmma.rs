//! `wmma` (PTX ISA §9.7.14.4): the warp-level matrix load, store and multiply-accumulate
//! that CUDA's `nvcuda::wmma` (`mma.h`) compiles to. All three are `.sync.aligned`
//! collectives: they run once every thread of the warp has arrived, and a warp with an
//! absent or exited thread faults (as `ldmatrix` and `mma` do).
//!
//! **Fragment layout.** Unlike `mma`'s, a `wmma` fragment's layout is unspecified: the ISA
//! fixes how many registers each thread holds (§9.7.14.4.1) and nothing about which
//! elements they are, so portable code only loads, stores, multiplies and applies
//! element-wise operations (`frag.x[i] = f(frag.x[i])`). The vgpu's own layout: element
//! `i` of the fragment of lane `l` is element `(l·E + i) mod (R·C)` of the `R×C` matrix
//! (A is M×K, B K×N, C and D M×N) in row-major order, `E` the elements per thread, packed
//! low first into the registers like `mma`'s. The layout is the same whatever the memory
//! layout (`.row`/`.col`) the fragment was loaded with, so a fragment loaded one way and
//! stored the other transposes correctly. `.f16` A and B fragments are eight `.f16x2`
//! registers in every shape, more than some matrices need: those are held twice or four
//! times over the warp (lanes `l` and `l + R·C/E` hold the same elements), and `mma` reads
//! the first copy.
//!
//! **Memory.** Each lane reads (or writes) its own elements, one weak access per element
//! at `p + (row·stride + col)·size` (`.row`) or `p + (col·stride + row)·size` (`.col`),
//! from its own `p` and `stride` (the stride defaults to the leading dimension's length);
//! sub-byte elements (`.s4`, `.u4`, `.b1`) read the byte that holds them. So the race
//! check and the write-buffer models see exactly the locations a fragment covers. A
//! store's fragment never holds an element twice (C and D are exactly `R·C/32` per
//! thread), so every location is written once. Alignment: the ISA asks each row (column)
//! start to be aligned to the fragment's size in bytes, CUDA's `load_matrix_sync` a
//! 256-bit aligned pointer and a stride of a multiple of 16 bytes; the vgpu faults only
//! what both forbid — a base not aligned to min(32, fragment bytes) or a row pitch not a
//! multiple of min(16, fragment bytes) — so no correct program faults.
//!
//! **Arithmetic.** As for `mma` (see `matrix.rs`): `.f16`/`.bf16`/`.tf32` products are
//! exact in `f64`, `c + Σ a·b` is summed in `f64` in order of `k` and rounded once to
//! `.f32` or `.f16`; `.tf32` inputs use their top 19 bits (the low 13 of the `.b32`
//! ignored, as tensor cores do). `.f64` is a chain of fused multiply-adds in order of `k`
//! in the instruction's rounding mode. Integer sums are exact, wrapping or (`.satfinite`)
//! clamped to `.s32`; `.b1` adds `popc(a xor b)` or `popc(a and b)` over each row-column
//! pair.

use super::matrix::{fma_chain, round_sum, s32_sum, tf32};
use super::memops::Place;
use super::*;
use ::half::{bf16, f16};

/// Where lane `l`'s element `i` of a fragment lies: (row, column) in the `rows×cols`
/// matrix, and whether this lane holds its first copy.
fn frag_elem(l: usize, i: usize, e: usize, rows: usize, cols: usize) -> (usize, usize, bool) {
    let total = rows * cols;
    let lin = l * e + i;
    let idx = lin % total;
    (idx / cols, idx % cols, lin < total)
}

/// Element `i` of a thread's fragment, from its registers.
fn reg_elem(regs: &[u64], i: usize, e: WmmaElem) -> u64 {
    let per = e.per_reg();
    let bits = e.bits().min(64) as usize;
    let r = regs[i / per];
    if per == 1 {
        r
    } else {
        (r >> (bits * (i % per))) & ((1u64 << bits) - 1)
    }
}

/// A fragment element's bits as a real number (floating-point types).
fn as_f64(v: u64, e: WmmaElem) -> f64 {
    match e {
        WmmaElem::F16 => f16::from_bits(v as u16).to_f64(),
        WmmaElem::Bf16 => bf16::from_bits(v as u16).to_f64(),
        WmmaElem::Tf32 => tf32(v),
        WmmaElem::F32 => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// A fragment element's bits as an integer (integer and bit types).
fn as_i64(v: u64, e: WmmaElem) -> i64 {
    match e {
        WmmaElem::S8 => v as u8 as i8 as i64,
        WmmaElem::S4 => ((v << 60) as i64) >> 60,
        WmmaElem::S32 => v as u32 as i32 as i64,
        _ => v as i64,
    }
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// The matrix lane `l` addresses for fragment `frag` of `regs` registers: its first
    /// element's location and the distance in bits between consecutive rows (`.row`) or
    /// columns (`.col`). Faults on a place that is not global or shared memory and on the
    /// misalignments described in the module docs.
    #[allow(clippy::too_many_arguments)]
    fn wmma_matrix(
        &self,
        (w, l, pc): (u32, usize, u32),
        (space, addr, stride): (MemSpace, Addr, Option<Src>),
        (frag, shape, elem, row): (WmmaFrag, WmmaShape, WmmaElem, bool),
        regs: usize,
    ) -> Result<(Location, u64), LaunchOutcome> {
        let dims = shape.dims(frag);
        let frag_bytes = 4 * regs as u32 * if elem == WmmaElem::F64 { 2 } else { 1 };
        let p = self.place(w, l, space, addr);
        self.check_align(w, l, pc, p, frag_bytes.min(32))?;
        let Place::Mem(loc) = p else {
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::InvalidAddress,
                "a wmma matrix must be in global or shared memory".into(),
            ));
        };
        let stride = match stride {
            Some(s) => self.src(w, l, s) as u32 as u64,
            None if row => dims.1 as u64,
            None => dims.0 as u64,
        };
        let pitch = stride * elem.bits() as u64;
        let unit = 8 * frag_bytes.min(16) as u64;
        if !pitch.is_multiple_of(unit) {
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::Misaligned,
                format!(
                    "wmma stride {stride} puts rows {} bits apart, not a multiple of {} bytes",
                    pitch,
                    unit / 8
                ),
            ));
        }
        Ok((loc, pitch))
    }

    /// `wmma.load.{a,b,c}`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_wmma_load(
        &mut self,
        w: u32,
        pc: u32,
        have: u32,
        frag: WmmaFrag,
        shape: WmmaShape,
        elem: WmmaElem,
        row: bool,
        space: MemSpace,
        addr: Addr,
        stride: Option<Src>,
        ds: &[Slot],
    ) -> Result<(), LaunchOutcome> {
        self.whole_warp(w, pc, have, "wmma.load")?;
        let site = self.prog.insts[pc as usize].site;
        let (rows, cols) = shape.dims(frag);
        let e = shape.elems_per_thread(frag, elem);
        let bits = elem.bits() as u64;
        let mut regs = vec![0u64; ds.len()];
        for l in 0..WARP {
            let (base, pitch) = self.wmma_matrix(
                (w, l, pc),
                (space, addr, stride),
                (frag, shape, elem, row),
                ds.len(),
            )?;
            regs.iter_mut().for_each(|r| *r = 0);
            // Sub-byte elements: the byte last read, so that a byte is read once per run
            // of the elements it holds.
            let mut held: Option<(u64, u8)> = None;
            for i in 0..e {
                let (r, c, _) = frag_elem(l, i, e, rows, cols);
                let (major, minor) = if row { (r, c) } else { (c, r) };
                let bit = major as u64 * pitch + minor as u64 * bits;
                let v = if bits >= 8 {
                    self.wmma_read(w, l, pc, base.offset(bit / 8), (bits / 8) as u32, site)?
                } else {
                    let byte = match held {
                        Some((at, b)) if at == bit / 8 => b,
                        _ => {
                            let b = self.wmma_read(w, l, pc, base.offset(bit / 8), 1, site)? as u8;
                            held = Some((bit / 8, b));
                            b
                        }
                    };
                    (byte as u64 >> (bit % 8)) & ((1 << bits) - 1)
                };
                let per = elem.per_reg();
                regs[i / per] |= if per == 1 {
                    v
                } else {
                    v << (bits as usize * (i % per))
                };
            }
            for (d, v) in ds.iter().zip(&regs) {
                self.set(w, l, *d, *v);
            }
        }
        Ok(())
    }

    /// One weak load of `size` bytes through the hooks, as a little-endian value.
    fn wmma_read(
        &mut self,
        w: u32,
        l: usize,
        pc: u32,
        loc: Location,
        size: u32,
        site: SiteId,
    ) -> Result<u64, LaunchOutcome> {
        if self.park_reads {
            self.park_read(w, loc, size);
        }
        let a = self.access(
            w,
            l,
            loc,
            size,
            AccessKind::Load,
            Sem::Weak,
            Scope::Sys,
            site,
        );
        let mut b = [0u8; 8];
        if let Err(e) = self.hooks.load(self.mem, &a, &mut b[..size as usize]) {
            return Err(self.mem_fault(w, l, pc, e));
        }
        Ok(u64::from_le_bytes(b))
    }

    /// `wmma.store.d`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_wmma_store(
        &mut self,
        w: u32,
        pc: u32,
        have: u32,
        shape: WmmaShape,
        elem: WmmaElem,
        row: bool,
        space: MemSpace,
        addr: Addr,
        stride: Option<Src>,
        vals: &[Src],
    ) -> Result<(), LaunchOutcome> {
        self.whole_warp(w, pc, have, "wmma.store")?;
        let site = self.prog.insts[pc as usize].site;
        let (rows, cols) = shape.dims(WmmaFrag::C);
        let e = shape.elems_per_thread(WmmaFrag::C, elem);
        let bits = elem.bits() as u64;
        let size = (bits / 8) as u32;
        for l in 0..WARP {
            let (base, pitch) = self.wmma_matrix(
                (w, l, pc),
                (space, addr, stride),
                (WmmaFrag::C, shape, elem, row),
                vals.len(),
            )?;
            let regs: Vec<u64> = vals.iter().map(|s| self.src(w, l, *s)).collect();
            for i in 0..e {
                let (r, c, first) = frag_elem(l, i, e, rows, cols);
                if !first {
                    continue;
                }
                let (major, minor) = if row { (r, c) } else { (c, r) };
                let loc = base.offset((major as u64 * pitch + minor as u64 * bits) / 8);
                let v = reg_elem(&regs, i, elem);
                let a = self.access(
                    w,
                    l,
                    loc,
                    size,
                    AccessKind::Store,
                    Sem::Weak,
                    Scope::Sys,
                    site,
                );
                if let Err(e) = self.hooked_store(&a, &v.to_le_bytes()[..size as usize]) {
                    return Err(self.mem_fault(w, l, pc, e));
                }
            }
        }
        self.since_progress = 0;
        self.changed();
        Ok(())
    }

    /// `wmma.mma`: D = A·B + C.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_wmma_mma(
        &mut self,
        w: u32,
        pc: u32,
        have: u32,
        kind: WmmaKind,
        d: &[Slot],
        a: &[Src],
        b: &[Src],
        c: &[Src],
    ) -> Result<(), LaunchOutcome> {
        self.whole_warp(w, pc, have, "wmma.mma")?;
        let sh = kind.shape;
        let (m, n, k) = (sh.m as usize, sh.n as usize, sh.k as usize);
        // The three matrices' element bits, gathered from every lane's first copies.
        let mut ma = vec![0u64; m * k];
        let mut mb = vec![0u64; k * n];
        let mut mc = vec![0u64; m * n];
        for l in 0..WARP {
            for (srcs, frag, ty, mat) in [
                (a, WmmaFrag::A, kind.a, &mut ma),
                (b, WmmaFrag::B, kind.b, &mut mb),
                (c, WmmaFrag::C, kind.c, &mut mc),
            ] {
                let regs: Vec<u64> = srcs.iter().map(|s| self.src(w, l, *s)).collect();
                let (rows, cols) = sh.dims(frag);
                let e = sh.elems_per_thread(frag, ty);
                for i in 0..e {
                    let (r, col, first) = frag_elem(l, i, e, rows, cols);
                    if first {
                        mat[r * cols + col] = reg_elem(&regs, i, ty);
                    }
                }
            }
        }
        let mut md = vec![0u64; m * n];
        for r in 0..m {
            for col in 0..n {
                md[r * n + col] = if kind.a.is_float() {
                    let acc = as_f64(mc[r * n + col], kind.c);
                    wmma_float(kind, acc, (0..k).map(|x| (ma[r * k + x], mb[x * n + col])))
                } else {
                    let mut s = as_i64(mc[r * n + col], kind.c);
                    for x in 0..k {
                        let (p, q) = (ma[r * k + x], mb[x * n + col]);
                        s += if kind.a == WmmaElem::B1 {
                            (if kind.and { p & q } else { p ^ q }) as i64
                        } else {
                            as_i64(p, kind.a) * as_i64(q, kind.b)
                        };
                    }
                    s32_sum(s, kind.satfinite)
                };
            }
        }
        let e = sh.elems_per_thread(WmmaFrag::C, kind.d);
        let per = kind.d.per_reg();
        let bits = kind.d.bits() as usize;
        let mut out = vec![0u64; d.len()];
        for l in 0..WARP {
            out.iter_mut().for_each(|o| *o = 0);
            for i in 0..e {
                let (r, col, _) = frag_elem(l, i, e, m, n);
                let v = md[r * n + col];
                out[i / per] |= if per == 1 { v } else { v << (bits * (i % per)) };
            }
            for (reg, v) in d.iter().zip(&out) {
                self.set(w, l, *reg, *v);
            }
        }
        Ok(())
    }
}

/// One element of a floating-point D: `acc + Σ a·b` over `pairs` (element bits of A and
/// B), as D's bits.
fn wmma_float(kind: WmmaKind, acc: f64, pairs: impl Iterator<Item = (u64, u64)>) -> u64 {
    if kind.a == WmmaElem::F64 {
        let pairs = pairs.map(|(p, q)| (f64::from_bits(p), f64::from_bits(q)));
        return fma_chain(acc, pairs, kind.rnd).to_bits();
    }
    let mut s = acc;
    for (p, q) in pairs {
        s += as_f64(p, kind.a) * as_f64(q, kind.b);
    }
    if kind.satfinite {
        // Floating-point `.satfinite`: NaN becomes +0 and infinities the largest finite
        // value of their sign (rounded below).
        if s.is_nan() {
            s = 0.0;
        } else if s.is_infinite() {
            s = s.signum() * f64::MAX;
        }
    }
    let f16 = kind.d == WmmaElem::F16;
    match (f16, kind.satfinite) {
        (true, true) if s.abs() > 65504.0 => {
            f16::from_f32(65504.0f32.copysign(s as f32)).to_bits() as u64
        }
        (false, true) if s.abs() > f32::MAX as f64 => f32::MAX.copysign(s as f32).to_bits() as u64,
        _ => round_sum(s, f16),
    }
}
