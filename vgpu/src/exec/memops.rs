//! Memory instructions: resolving an address to a place, alignment and bounds checks,
//! `ld`/`st`/`atom` through the hooks for global and shared memory, and the private
//! spaces (local, `.const`, `.param`) that never reach the hooks.

use super::*;
use crate::arith::half::{self as hx, HalfMods};
use ::half::{bf16, f16};

/// A resolved memory place for one lane.
#[derive(Debug, Clone, Copy)]
pub(super) enum Place {
    Mem(Location),
    Local(u64),
    Const(u64),
    Param(u64),
    Invalid(u64, &'static str),
}

/// Reads `n` bytes at a generic address from global, const or the lane's local memory.
pub(super) fn read_generic(mem: &Memory, lane: &Lane, addr: u64, n: usize) -> Option<u64> {
    let mut b = [0u8; 8];
    let n = n.min(8);
    match window_of(addr)? {
        (Window::Global, a) => b[..n].copy_from_slice(mem.global.slice(a, n as u32).ok()?),
        (Window::Const, _) => b[..n].copy_from_slice(mem.constant.slice(addr, n as u32).ok()?),
        (Window::Local, a) => b[..n].copy_from_slice(lane.local.get(a as usize..a as usize + n)?),
        _ => return None,
    }
    Some(u64::from_le_bytes(b))
}

/// Whether `a` is not a multiple of `align` (`align` ≤ 1: never): `a % align != 0`, with a
/// mask instead of a divide when `align` is a power of two (always, in practice).
#[inline(always)]
pub(super) fn misaligned(a: u64, align: u32) -> bool {
    if align.is_power_of_two() {
        a & (align as u64 - 1) != 0
    } else {
        align > 1 && !a.is_multiple_of(align as u64)
    }
}

/// Where a global, shared or generic address `raw` of a lane of CTA `cta` lands when it
/// is in global or shared memory, as [`Machine::place`] resolves it; `None` for every
/// other place (the general path resolves those).
#[inline(always)]
fn fast_loc(space: MemSpace, cta: u32, raw: u64) -> Option<Location> {
    match space {
        MemSpace::Global => Some(Location::Global(raw)),
        MemSpace::Shared if raw < WINDOW_SIZE => Some(Location::Shared {
            cta,
            offset: raw as u32,
        }),
        MemSpace::Generic => match window_of(raw)? {
            (Window::Global, a) => Some(Location::Global(a)),
            (Window::Shared, off) => Some(Location::Shared {
                cta,
                offset: off as u32,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Lanes from which a memory instruction with hooks that are not transparent takes the
/// per-warp hooked path ([`Machine::exec_ld_warp`] and its store and atomic twins): it
/// fills per-warp arrays first, which costs more than it saves for a single lane (a
/// divergent spin loop's lanes: `algo_spinlock` +11% instructions with the race check).
const WARP_PATH_LANES: u32 = 2;

/// An address operand `[ar + offset]` of a warp's group as the per-warp fast paths of
/// [`Machine::exec_ld`], [`Machine::exec_st`] and [`Machine::exec_atom`] resolve it, lane by
/// lane: [`fast_loc`] of the lane's address when it is aligned to `align`, else `None` (the
/// lane takes the general path).
#[derive(Clone, Copy)]
struct FastAddr {
    space: MemSpace,
    cta: u32,
    /// Row of the address register in the warp's registers.
    row: usize,
    offset: u64,
    align: u32,
}

impl FastAddr {
    /// The operand for the group of `active`, and its frame's first register slot (every
    /// lane of a group shares its frame, see `step`).
    #[inline(always)]
    fn new(
        warp: &Warp,
        active: u32,
        space: MemSpace,
        ar: Slot,
        offset: i64,
        align: u32,
    ) -> (FastAddr, u32) {
        let base = warp.reg_base[active.trailing_zeros() as usize];
        let a = FastAddr {
            space,
            cta: warp.cta,
            row: row(base, ar),
            offset: offset as u64,
            align,
        };
        (a, base)
    }

    #[inline(always)]
    fn loc(&self, regs: &[u64], l: usize) -> Option<Location> {
        let raw = regs[self.row + l].wrapping_add(self.offset);
        fast_loc(self.space, self.cta, raw).filter(|loc| !misaligned(loc.addr(), self.align))
    }
}

/// The plain loads of a warp's lanes `active` from global or `.shared` memory (address
/// operand `fa`, destination row `di`), read straight from the bytes of the one
/// allocation (or CTA shared memory) that holds every lane's address, when every lane is
/// aligned — the same values the per-lane path reads, in one pass without a `Location`
/// and an allocation look-up per lane (`perf` of a tiled matmul under `exec --model sc`
/// had that path at a third of the run). False, with nothing written, otherwise (the
/// per-lane path then takes them all, faults in lane order included).
#[inline(always)]
fn direct_loads(
    warp: &mut Warp,
    mem: &Memory,
    active: u32,
    fa: &FastAddr,
    di: usize,
    size: u32,
    signed: bool,
) -> bool {
    let align = size.next_power_of_two() as u64;
    let regs = &mut warp.regs;
    let (mut lo, mut hi, mut aligned) = (u64::MAX, 0u64, true);
    for l in lanes(active) {
        let raw = regs[fa.row + l].wrapping_add(fa.offset);
        aligned &= raw & (align - 1) == 0;
        lo = lo.min(raw);
        hi = hi.max(raw);
    }
    let Some(hi) = hi
        .checked_add(size as u64)
        .filter(|_| aligned && active != 0)
    else {
        return false;
    };
    let (base, bytes) = match fa.space {
        MemSpace::Shared => match mem.shared.get(fa.cta as usize) {
            Some(sh) if hi <= sh.len() as u64 => (0, sh.as_slice()),
            _ => return false,
        },
        MemSpace::Global => match mem.global_span(lo, hi) {
            Some(span) => span,
            None => return false,
        },
        _ => return false,
    };
    /// Every lane's `N` bytes, little-endian, extended to 64 bits as `signed` says.
    fn each<const N: usize>(
        regs: &mut [u64],
        (base, bytes): (u64, &[u8]),
        active: u32,
        fa: &FastAddr,
        di: usize,
        signed: bool,
    ) {
        for l in lanes(active) {
            let at = regs[fa.row + l].wrapping_add(fa.offset).wrapping_sub(base) as usize;
            if let Some(b) = bytes.get(at..at + N).and_then(|b| b.first_chunk::<N>()) {
                let mut w = [0u8; 8];
                w[..N].copy_from_slice(b);
                let v = u64::from_le_bytes(w);
                regs[di + l] = if signed { sign_extend(v, N as u32) } else { v };
            }
        }
    }
    let span = (base, bytes);
    match size {
        1 => each::<1>(regs, span, active, fa, di, signed),
        2 => each::<2>(regs, span, active, fa, di, signed),
        4 => each::<4>(regs, span, active, fa, di, signed),
        8 => each::<8>(regs, span, active, fa, di, signed),
        _ => return false,
    }
    true
}

pub(super) fn sign_extend(v: u64, bytes: u32) -> u64 {
    let sh = 64 - bytes * 8;
    if sh == 0 {
        v
    } else {
        (((v << sh) as i64) >> sh) as u64
    }
}

/// The read-modify-write function of an atomic, as PTX ISA §9.7.13.4 defines each op:
/// the value it writes, or `None` for a compare-and-swap whose comparison fails.
///
/// A failing `atom.cas` writes nothing. The ISA's pseudo-code stores `(r == s) ? t : r`,
/// which on hardware is unobservable; but in a model where a CAS may read a stale value
/// (`weak`), storing that value back would make it the newest, an outcome the PTX model
/// forbids as Lustig et al. (ASPLOS'19) and Dat3M encode it (a failed CAS only reads), as
/// C++'s failed `compare_exchange` does (found by the litmus generator: UNSOUND.md,
/// `failed-cas-writes-back`).
pub(super) fn rmw(op: AtomOp, size: u32, b: u64, c: u64) -> impl FnMut(u64) -> Option<u64> {
    let m = mask_bits(size * 8);
    move |old: u64| -> Option<u64> {
        let r = match op {
            AtomOp::And => old & b,
            AtomOp::Or => old | b,
            AtomOp::Xor => old ^ b,
            AtomOp::Exch => b,
            AtomOp::Cas => {
                if old & m == b & m {
                    c
                } else {
                    return None;
                }
            }
            AtomOp::AddInt => old.wrapping_add(b),
            AtomOp::AddF32 => {
                // atom.add.f32 rounds to nearest even and flushes subnormal inputs and
                // results to sign-preserving zero (PTX ISA, atom).
                let ftz = |x: f32| {
                    if x.is_subnormal() {
                        0.0f32.copysign(x)
                    } else {
                        x
                    }
                };
                let r = ftz(ftz(f32::from_bits(old as u32)) + ftz(f32::from_bits(b as u32)));
                r.to_bits() as u64
            }
            AtomOp::AddF64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            // `.noftz`, `.rn`: the same correctly rounded add as `add.rn.f16`.
            AtomOp::AddF16 => {
                let (x, y) = (f16::from_bits(old as u16), f16::from_bits(b as u16));
                hx::add_f16(x, y, HalfMods::default()).to_bits() as u64
            }
            AtomOp::AddBf16 => {
                let (x, y) = (bf16::from_bits(old as u16), bf16::from_bits(b as u16));
                hx::add_bf16(x, y, HalfMods::default()).to_bits() as u64
            }
            AtomOp::AddF16x2 => hx::add_f16x2(old as u32, b as u32, HalfMods::default()) as u64,
            AtomOp::AddBf16x2 => hx::add_bf16x2(old as u32, b as u32, HalfMods::default()) as u64,
            AtomOp::Inc => {
                if (old & m) >= (b & m) {
                    0
                } else {
                    old + 1
                }
            }
            AtomOp::Dec => {
                if old & m == 0 || (old & m) > (b & m) {
                    b
                } else {
                    old - 1
                }
            }
            AtomOp::MinS => {
                if (sign_extend(old, size) as i64) < (sign_extend(b, size) as i64) {
                    old
                } else {
                    b
                }
            }
            AtomOp::MaxS => {
                if (sign_extend(old, size) as i64) > (sign_extend(b, size) as i64) {
                    old
                } else {
                    b
                }
            }
            AtomOp::MinU => (old & m).min(b & m),
            AtomOp::MaxU => (old & m).max(b & m),
            AtomOp::MinF | AtomOp::MaxF => {
                let min = op == AtomOp::MinF;
                if size == 4 {
                    let (x, y) = (f32::from_bits(old as u32), f32::from_bits(b as u32));
                    (if min { x.min(y) } else { x.max(y) }).to_bits() as u64
                } else {
                    let (x, y) = (f64::from_bits(old), f64::from_bits(b));
                    (if min { x.min(y) } else { x.max(y) }).to_bits()
                }
            }
        };
        Some(r & m)
    }
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// Resolves an address for one lane into a concrete place.
    #[inline(always)]
    pub(super) fn place(&self, w: u32, lane: usize, space: MemSpace, a: Addr) -> Place {
        let raw = match a.base {
            AddrBase::Reg(_) | AddrBase::Abs(_) => {
                let b = match a.base {
                    AddrBase::Reg(r) => self.src(w, lane, Src::Reg(r)),
                    AddrBase::Abs(v) => v,
                    AddrBase::Frame(_) => 0,
                };
                b.wrapping_add(a.offset as u64)
            }
            AddrBase::Frame(o) => {
                let l = &self.warps[w as usize].lanes[lane];
                return Place::Local(
                    (l.local_base as u64 + o as u64).wrapping_add(a.offset as u64),
                );
            }
        };
        let cta = self.warps[w as usize].cta;
        match space {
            MemSpace::Global => Place::Mem(Location::Global(raw)),
            MemSpace::Shared => {
                if raw >= WINDOW_SIZE {
                    Place::Invalid(raw, "shared")
                } else {
                    Place::Mem(Location::Shared {
                        cta,
                        offset: raw as u32,
                    })
                }
            }
            MemSpace::Local | MemSpace::FrameParam => Place::Local(raw),
            MemSpace::Const => Place::Const(raw),
            MemSpace::KernelParam => Place::Param(raw),
            MemSpace::Generic => match window_of(raw) {
                Some((Window::Global, a)) => Place::Mem(Location::Global(a)),
                Some((Window::Shared, off)) => Place::Mem(Location::Shared {
                    cta,
                    offset: off as u32,
                }),
                Some((Window::Local, off)) => Place::Local(off),
                Some((Window::Const, _)) => Place::Const(raw),
                Some((Window::Param, off)) => Place::Param(off),
                None => Place::Invalid(raw, "generic"),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &self,
        w: u32,
        l: usize,
        loc: Location,
        size: u32,
        kind: AccessKind,
        sem: Sem,
        scope: Scope,
        site: SiteId,
    ) -> Access {
        Access {
            thread: self.thread_ref(w, l),
            loc,
            size,
            kind,
            sem,
            scope,
            site,
            launch: self.launch,
            indivisible: false,
            newest: false,
        }
    }

    /// Faults unless `p` is a valid place aligned to `align` bytes. On every memory
    /// instruction's path, once per lane: the test is a mask (every alignment the
    /// interpreter asks for is a power of two: an access size or a vector's total size
    /// rounded up to one; anything else falls back to the remainder), the faults are
    /// built out of line.
    #[inline(always)]
    pub(super) fn check_align(
        &self,
        w: u32,
        l: usize,
        pc: u32,
        p: Place,
        align: u32,
    ) -> Result<(), LaunchOutcome> {
        let a = match p {
            Place::Mem(loc) => loc.addr(),
            Place::Local(a) | Place::Const(a) | Place::Param(a) => a,
            Place::Invalid(a, space) => return Err(self.invalid_place(w, l, pc, a, space)),
        };
        if misaligned(a, align) {
            return Err(self.misaligned_fault(w, l, pc, a, align));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn invalid_place(&self, w: u32, l: usize, pc: u32, a: u64, space: &str) -> LaunchOutcome {
        self.fault(
            w,
            l,
            pc,
            FaultKind::InvalidAddress,
            format!("{space} address {a:#x} is in no state space"),
        )
    }

    #[cold]
    #[inline(never)]
    pub(super) fn misaligned_fault(
        &self,
        w: u32,
        l: usize,
        pc: u32,
        a: u64,
        align: u32,
    ) -> LaunchOutcome {
        self.fault(
            w,
            l,
            pc,
            FaultKind::Misaligned,
            format!("address {a:#x} is not aligned to {align} bytes"),
        )
    }

    pub(super) fn private_read(
        &self,
        w: u32,
        l: usize,
        p: Place,
        size: u32,
    ) -> Result<u64, MemError> {
        let mut b = [0u8; 8];
        let n = size as usize;
        let oob = |space: &'static str, addr: u64, len: u64| MemError {
            kind: FaultKind::OutOfBounds,
            space,
            addr,
            size,
            nearest: Some((format!("{space} memory"), 0, len)),
        };
        match p {
            Place::Local(a) => {
                let local = &self.warps[w as usize].lanes[l].local;
                let s = local
                    .get(a as usize..a as usize + n)
                    .ok_or_else(|| oob("local", a, local.len() as u64))?;
                b[..n].copy_from_slice(s);
            }
            Place::Param(a) => {
                let s = self
                    .params
                    .get(a as usize..a as usize + n)
                    .ok_or_else(|| oob("param", a, self.params.len() as u64))?;
                b[..n].copy_from_slice(s);
            }
            Place::Const(a) => b[..n].copy_from_slice(self.mem.constant.slice(a, size)?),
            Place::Mem(_) | Place::Invalid(..) => {}
        }
        Ok(u64::from_le_bytes(b))
    }

    /// Spin parking: warp `w`'s counting step reads the `len` bytes at `loc` (see
    /// `livelock::Parking::read`).
    #[inline]
    pub(super) fn park_read(&mut self, w: u32, loc: Location, len: u32) {
        for b in blocks_of(loc, len) {
            self.park.read(w, b);
        }
    }

    /// [`Hooks::plain_loads`] for the `active` lanes of warp `w`.
    #[inline]
    fn plain_loads(&self, w: u32, active: u32) -> bool {
        let t = self.thread_ref(w, 0);
        self.hooks.plain_loads(t.cta, t.global, active)
    }

    /// A store through the hooks, held first to the launch's write bound
    /// ([`Memory::guard_write`]: a model may keep it in a buffer, while loads that read
    /// memory directly must already count its bytes as written).
    pub(super) fn hooked_store(&mut self, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.mem.guard_write(a.loc, a.size);
        self.hooks.store(self.mem, a, data)
    }

    /// An atomic through the hooks, held first to the write bound as
    /// [`Self::hooked_store`].
    pub(super) fn hooked_atomic(&mut self, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        self.mem.guard_write(a.loc, a.size);
        self.hooks.atomic(self.mem, a, rmw)
    }

    /// The writes of a warp's accesses, held to the write bound before the hooks'
    /// `store_warp`/`atomic_warp` see them (as [`Self::hooked_store`]).
    fn guard_writes(&mut self, acc: &[Access]) {
        for a in acc {
            self.mem.guard_write(a.loc, a.size);
        }
    }

    /// Whether the global, shared or generic load at `addr` of `size` bytes by the lanes
    /// of `active` reads, in every lane, bytes that no write of this launch reaches
    /// unordered with it — global bytes outside the launch's write bound, or shared
    /// bytes of a clean interval of the CTA (`crate::unwritten`; every launch with hooks
    /// that are not transparent keeps the bound) — and the hooks agree to let it read
    /// memory directly ([`Hooks::unwritten_loads`]).
    fn unwritten_load(
        &mut self,
        w: u32,
        active: u32,
        space: MemSpace,
        addr: Addr,
        size: u32,
    ) -> bool {
        if !self.mem.guarded()
            || !matches!(
                space,
                MemSpace::Global | MemSpace::Shared | MemSpace::Generic
            )
        {
            return false;
        }
        let warp = &self.warps[w as usize];
        let (base, off) = match addr.base {
            AddrBase::Reg(ar) => {
                let at = row(warp.reg_base[active.trailing_zeros() as usize], ar);
                match warp.regs.get(at..at + WARP) {
                    Some(regs) => (Some(regs), addr.offset as u64),
                    None => return false,
                }
            }
            AddrBase::Abs(a) => (None, a.wrapping_add(addr.offset as u64)),
            AddrBase::Frame(_) => return false,
        };
        let mem = &*self.mem;
        // Per lane: global bytes outside the bound, or shared bytes (then the CTA's
        // interval must be clean, asked once after the lanes).
        let mut in_shared = false;
        let clear = lanes(active).all(|l| {
            let raw = base.map_or(off, |r| r[l].wrapping_add(off));
            match (space, window_of(raw)) {
                (MemSpace::Global, _) => mem.unwritten(raw, size as u64),
                (MemSpace::Shared, _) | (_, Some((Window::Shared, _))) => {
                    in_shared = true;
                    true
                }
                (_, Some((Window::Global, _))) => mem.unwritten(raw, size as u64),
                _ => false,
            }
        });
        let (cta, first) = (warp.cta, warp.cta * self.tpb + warp.first_tid);
        clear
            && (!in_shared || (!self.mem.shared_written(cta) && self.shared_settled(w)))
            && self.hooks.unwritten_loads(first, active)
    }

    /// `inst` is an `Op::Ld`.
    ///
    /// The common case, a scalar load from global, shared or generic memory through a
    /// register with transparent hooks, runs per lane in one tight loop; a lane it cannot
    /// finish (another window, a misaligned or out-of-bounds address) goes through the
    /// general path [`Self::exec_ld_lanes`] alone, in its turn, so the lanes' effects
    /// and the first fault are the same as if every lane had.
    pub(super) fn exec_ld(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        if let Op::Ld {
            space: space @ (MemSpace::Global | MemSpace::Shared | MemSpace::Generic),
            ref ds,
            addr:
                addr @ Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            size,
            signed,
            sem,
            ..
        } = inst.op
        {
            if ds.len() == 1
                && (self.hooks.transparent()
                    || self.plain_loads(w, active)
                    || (sem == Sem::Weak && self.unwritten_load(w, active, space, addr, size)))
            {
                let (fa, base) = FastAddr::new(
                    &self.warps[w as usize],
                    active,
                    space,
                    ar,
                    offset,
                    size.next_power_of_two(),
                );
                let di = ds[0].map(|d| row(base, d));
                let mut hint = 0;
                let track = self.park_reads;
                if let Some(di) = di.filter(|_| !track && space != MemSpace::Generic) {
                    let warp = &mut self.warps[w as usize];
                    if direct_loads(warp, self.mem, active, &fa, di, size, signed) {
                        return Ok(());
                    }
                }
                for l in lanes(active) {
                    let loc = fa.loc(&self.warps[w as usize].regs, l);
                    if track {
                        if let Some(loc) = loc {
                            self.park_read(w, loc, size);
                        }
                    }
                    let v = loc.and_then(|loc| self.mem.load_hinted(loc, size, &mut hint));
                    match v {
                        Some(v) => {
                            if let Some(di) = di {
                                let v = if signed { sign_extend(v, size) } else { v };
                                self.warps[w as usize].regs[di + l] = v;
                            }
                        }
                        None => self.exec_ld_lanes(w, 1 << l, pc, inst)?,
                    }
                }
                return Ok(());
            }
            if ds.len() == 1 && active.count_ones() >= WARP_PATH_LANES {
                return self.exec_ld_warp(w, active, pc, inst);
            }
        }
        if let Op::Ld {
            space: MemSpace::KernelParam,
            ref ds,
            addr:
                Addr {
                    base: AddrBase::Abs(a),
                    offset,
                },
            size,
            signed,
            ..
        } = inst.op
        {
            // A kernel parameter: the same place, hence the same value, for every lane.
            let raw = a.wrapping_add(offset as u64);
            if ds.len() == 1 && !misaligned(raw, size.next_power_of_two()) {
                let first = active.trailing_zeros() as usize;
                if let Ok(v) = self.private_read(w, first, Place::Param(raw), size) {
                    if let Some(d) = ds[0] {
                        let v = if signed { sign_extend(v, size) } else { v };
                        for l in lanes(active) {
                            self.set(w, l, d, v);
                        }
                    }
                    return Ok(());
                }
            }
        }
        self.exec_ld_lanes(w, active, pc, inst)
    }

    /// [`Self::exec_ld`] for every lane of `active`, one at a time, any space and shape.
    fn exec_ld_lanes(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::Ld {
            space,
            ref ds,
            addr,
            size,
            signed,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let total = size * ds.len() as u32;
        // Plain memory (transparent hooks) and a scalar load: read it directly. So too a
        // weak scalar load of a fixed address no write reaches unordered (`exec_ld` asks
        // that of addresses in registers before it comes here).
        let direct = ds.len() == 1
            && (self.hooks.transparent()
                || (sem == Sem::Weak
                    && matches!(addr.base, AddrBase::Abs(_))
                    && self.unwritten_load(w, active, space, addr, size)));
        let mut hint = 0;
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, total.next_power_of_two())?;
            if let (Place::Mem(loc), true) = (p, self.park_reads) {
                self.park_read(w, loc, total);
            }
            if let (Place::Mem(loc), true) = (p, direct) {
                if let Some(v) = self.mem.load_hinted(loc, size, &mut hint) {
                    if let Some(d) = ds[0] {
                        let v = if signed { sign_extend(v, size) } else { v };
                        self.set(w, l, d, v);
                    }
                    continue;
                }
            }
            if let (Place::Mem(loc), true) = (p, ds.len() > 1 && total <= 8) {
                // A vector of at most 8 bytes is one access (see `Access`).
                let a = self.access(w, l, loc, total, AccessKind::Load, sem, scope, site);
                let mut b = [0u8; 8];
                if let Err(e) = self.hooks.load(self.mem, &a, &mut b[..total as usize]) {
                    return Err(self.mem_fault(w, l, pc, e));
                }
                let whole = u64::from_le_bytes(b);
                for (k, d) in ds.iter().enumerate() {
                    let v = (whole >> (k as u32 * size * 8)) & mask_bits(size * 8);
                    let v = if signed { sign_extend(v, size) } else { v };
                    if let Some(d) = d {
                        self.set(w, l, *d, v);
                    }
                }
                continue;
            }
            for (k, d) in ds.iter().enumerate() {
                let off = k as u64 * size as u64;
                let v = match p {
                    Place::Mem(loc) => {
                        let mut a = self.access(
                            w,
                            l,
                            loc.offset(off),
                            size,
                            AccessKind::Load,
                            sem,
                            scope,
                            site,
                        );
                        a.indivisible = total == 16 && sem != Sem::Weak;
                        let mut b = [0u8; 8];
                        if let Err(e) = self.hooks.load(self.mem, &a, &mut b[..size as usize]) {
                            return Err(self.mem_fault(w, l, pc, e));
                        }
                        Ok(u64::from_le_bytes(b))
                    }
                    Place::Local(a) => self.private_read(w, l, Place::Local(a + off), size),
                    Place::Const(a) => self.private_read(w, l, Place::Const(a + off), size),
                    Place::Param(a) => self.private_read(w, l, Place::Param(a + off), size),
                    Place::Invalid(..) => Ok(0),
                }
                .map_err(|e| self.mem_fault(w, l, pc, e))?;
                let v = if signed { sign_extend(v, size) } else { v };
                if let Some(d) = d {
                    self.set(w, l, *d, v);
                }
            }
        }
        Ok(())
    }

    /// `inst` is an `Op::St`. The common case as in [`Self::exec_ld`].
    pub(super) fn exec_st(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        if let Op::St {
            space: space @ (MemSpace::Global | MemSpace::Shared | MemSpace::Generic),
            addr:
                Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            ref vals,
            size,
            ..
        } = inst.op
        {
            if vals.len() == 1 && self.hooks.transparent() {
                let val = vals[0];
                let (fa, _) = FastAddr::new(
                    &self.warps[w as usize],
                    active,
                    space,
                    ar,
                    offset,
                    size.next_power_of_two(),
                );
                let mut hint = 0;
                for l in lanes(active) {
                    if let Some(loc) = fa.loc(&self.warps[w as usize].regs, l) {
                        let v = self.src(w, l, val);
                        if self.mem.store_hinted(loc, size, v, &mut hint).is_some() {
                            self.since_progress = 0;
                            self.changed();
                            continue;
                        }
                    }
                    self.exec_st_lanes(w, 1 << l, pc, inst)?;
                }
                return Ok(());
            }
            if vals.len() == 1 && active.count_ones() >= WARP_PATH_LANES {
                return self.exec_st_warp(w, active, pc, inst);
            }
        }
        self.exec_st_lanes(w, active, pc, inst)
    }

    /// [`Self::exec_st`] for every lane of `active`, one at a time, any space and shape.
    fn exec_st_lanes(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::St {
            space,
            addr,
            ref vals,
            size,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let total = size * vals.len() as u32;
        // Plain memory (transparent hooks) and a scalar store: write it directly.
        let direct = vals.len() == 1 && self.hooks.transparent();
        let mut hint = 0;
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, total.next_power_of_two())?;
            if let (Place::Mem(loc), true) = (p, direct) {
                let v = self.src(w, l, vals[0]);
                if self.mem.store_hinted(loc, size, v, &mut hint).is_some() {
                    self.since_progress = 0;
                    self.changed();
                    continue;
                }
            }
            if let (Place::Mem(loc), true) = (p, vals.len() > 1 && total <= 8) {
                // A vector of at most 8 bytes is one access (see `Access`).
                let mut whole = 0u64;
                for (k, s) in vals.iter().enumerate() {
                    let v = self.src(w, l, *s) & mask_bits(size * 8);
                    whole |= v << (k as u32 * size * 8);
                }
                let a = self.access(w, l, loc, total, AccessKind::Store, sem, scope, site);
                let bytes = whole.to_le_bytes();
                if let Err(e) = self.hooked_store(&a, &bytes[..total as usize]) {
                    return Err(self.mem_fault(w, l, pc, e));
                }
                self.since_progress = 0;
                self.changed();
                continue;
            }
            for (k, s) in vals.iter().enumerate() {
                let off = k as u64 * size as u64;
                let v = self.src(w, l, *s);
                let bytes = v.to_le_bytes();
                let data = &bytes[..size as usize];
                match p {
                    Place::Mem(loc) => {
                        let mut a = self.access(
                            w,
                            l,
                            loc.offset(off),
                            size,
                            AccessKind::Store,
                            sem,
                            scope,
                            site,
                        );
                        a.indivisible = total == 16 && sem != Sem::Weak;
                        if let Err(e) = self.hooked_store(&a, data) {
                            return Err(self.mem_fault(w, l, pc, e));
                        }
                        self.since_progress = 0;
                        self.changed();
                    }
                    Place::Local(a) => {
                        let local = &mut self.warps[w as usize].lanes[l].local;
                        let len = local.len() as u64;
                        match local.get_mut((a + off) as usize..(a + off) as usize + size as usize)
                        {
                            Some(dst) => dst.copy_from_slice(data),
                            None => {
                                let e = MemError {
                                    kind: FaultKind::OutOfBounds,
                                    space: "local",
                                    addr: a + off,
                                    size,
                                    nearest: Some(("local memory".into(), 0, len)),
                                };
                                return Err(self.mem_fault(w, l, pc, e));
                            }
                        }
                    }
                    Place::Const(a) | Place::Param(a) => {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::ReadOnly,
                            format!("store to read-only address {a:#x}"),
                        ));
                    }
                    Place::Invalid(..) => {}
                }
            }
        }
        Ok(())
    }

    /// `inst` is an `Op::Atom`. The common case as in [`Self::exec_ld`].
    pub(super) fn exec_atom(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        if let Op::Atom {
            space: space @ (MemSpace::Global | MemSpace::Shared | MemSpace::Generic),
            op,
            size,
            d,
            addr:
                Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            b,
            c,
            ..
        } = inst.op
        {
            if self.hooks.transparent() {
                let (fa, _) =
                    FastAddr::new(&self.warps[w as usize], active, space, ar, offset, size);
                let mut hint = 0;
                for l in lanes(active) {
                    if let Some(loc) = fa.loc(&self.warps[w as usize].regs, l) {
                        // As the general path: the read-modify-write directly.
                        if let Some(old) = self.mem.load_hinted(loc, size, &mut hint) {
                            let bv = self.src(w, l, b);
                            let cv = c.map_or(0, |c| self.src(w, l, c));
                            let new = rmw(op, size, bv, cv)(old).unwrap_or(old);
                            if new == old
                                || self.mem.store_hinted(loc, size, new, &mut hint).is_some()
                            {
                                self.since_progress = 0;
                                if new != old {
                                    self.changed();
                                }
                                if let Some(d) = d {
                                    self.set(w, l, d, old);
                                }
                                continue;
                            }
                        }
                    }
                    self.exec_atom_lanes(w, 1 << l, pc, inst)?;
                }
                return Ok(());
            }
            if active.count_ones() >= WARP_PATH_LANES {
                return self.exec_atom_warp(w, active, pc, inst);
            }
        }
        self.exec_atom_lanes(w, active, pc, inst)
    }

    /// [`Self::exec_atom`] for every lane of `active`, one at a time, any space.
    fn exec_atom_lanes(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::Atom {
            space,
            op,
            size,
            d,
            addr,
            b,
            c,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let direct = self.hooks.transparent();
        let mut hint = 0;
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, size)?;
            if let (Place::Mem(loc), true) = (p, direct) {
                // Plain memory: the read-modify-write directly (nothing can come between
                // its read and its write: the interpreter runs one lane at a time).
                if let Some(old) = self.mem.load_hinted(loc, size, &mut hint) {
                    let bv = self.src(w, l, b);
                    let cv = c.map_or(0, |c| self.src(w, l, c));
                    let new = rmw(op, size, bv, cv)(old).unwrap_or(old);
                    if new == old || self.mem.store_hinted(loc, size, new, &mut hint).is_some() {
                        // An RMW that leaves memory as it was (a failed CAS, `atomicAdd(p,
                        // 0)`) is a read: no progress (see `atomic_one`).
                        if new != old {
                            self.since_progress = 0;
                            self.changed();
                        }
                        if let Some(d) = d {
                            self.set(w, l, d, old);
                        }
                        continue;
                    }
                }
            }
            let Place::Mem(loc) = p else {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "atomic on memory that is neither global nor shared".into(),
                ));
            };
            let bv = self.src(w, l, b);
            let cv = c.map_or(0, |c| self.src(w, l, c));
            let old = self.atomic_one(w, l, pc, (loc, size, sem, scope, site), op, bv, cv)?;
            if let Some(d) = d {
                self.set(w, l, d, old);
            }
        }
        Ok(())
    }

    /// One lane's atomic `op` (operands `bv`, `cv`) on `at` = (location, size, semantics,
    /// scope, site) through the hooks: returns the old value.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn atomic_one(
        &mut self,
        w: u32,
        l: usize,
        pc: u32,
        at: (Location, u32, Sem, Scope, SiteId),
        op: AtomOp,
        bv: u64,
        cv: u64,
    ) -> Result<u64, LaunchOutcome> {
        let (loc, size, sem, scope, site) = at;
        let a = self.access(w, l, loc, size, AccessKind::Atomic, sem, scope, site);
        let mut f = rmw(op, size, bv, cv);
        // A failing compare-and-swap (a spin lock's) changes nothing (see `livelock`).
        let mut changed = false;
        let mut g = |old: u64| {
            let new = f(old);
            changed |= new.is_some_and(|n| n != old);
            new
        };
        let old = match self.hooked_atomic(&a, &mut g) {
            Ok(v) => v,
            Err(e) => return Err(self.mem_fault(w, l, pc, e)),
        };
        // Progress only when memory changed: an RMW that leaves it as it was (a failed
        // compare-and-swap, `atomicAdd(p, 0)`) is a poll, as a load is. Counted as
        // progress, a spin of failed CASes on a lock whose release waits to become
        // visible (a plain-store unlock under `weak`, a buffered one under the buffer
        // models) kept the stall rule from ever firing: under `weak` the lock's CAS read
        // the stale "held" forever (`exec` of such a spinlock never ended).
        if changed {
            self.since_progress = 0;
            self.changed();
        }
        Ok(old)
    }

    /// `inst` is an `Op::AtomVec`: for each lane of `active`, the elements' atomics in
    /// element order, each through the hooks as a scalar atomic would go.
    pub(super) fn exec_atom_vec(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let Op::AtomVec {
            space,
            op,
            size,
            ds,
            addr,
            bs,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let (space, op, size, addr, sem, scope) = (*space, *op, *size, *addr, *sem, *scope);
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            // The vector is aligned to its whole size.
            self.check_align(w, l, pc, p, size * bs.len() as u32)?;
            let Place::Mem(base) = p else {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "vector atomic on memory that is not global".into(),
                ));
            };
            if base.is_shared() {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "vector atomic on shared memory (only global memory has them)".into(),
                ));
            }
            for (k, (&b, d)) in bs.iter().zip(ds).enumerate() {
                let loc = base.offset(k as u64 * size as u64);
                let bv = self.src(w, l, b);
                let at = (loc, size, sem, scope, inst.site);
                let old = self.atomic_one(w, l, pc, at, op, bv, 0)?;
                if let Some(d) = *d {
                    self.set(w, l, d, old);
                }
            }
        }
        Ok(())
    }

    /// A scalar load through a register, hooks not transparent: the lanes whose address
    /// [`FastAddr`] resolves reach the hooks together ([`Hooks::load_warp`]), in lane
    /// order; a lane it cannot resolve goes through [`Self::exec_ld_lanes`] alone, in its
    /// turn (after the lanes before it), so the hook calls, their order and the first
    /// fault are those of the per-lane path.
    fn exec_ld_warp(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::Ld {
            space,
            ref ds,
            addr:
                Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            size,
            signed,
            sem,
            scope,
        } = &inst.op
        else {
            return self.exec_ld_lanes(w, active, pc, inst);
        };
        let (fa, base) = FastAddr::new(
            &self.warps[w as usize],
            active,
            space,
            ar,
            offset,
            size.next_power_of_two(),
        );
        let di = ds[0].map(|d| row(base, d));
        let tmpl = self.access(
            w,
            active.trailing_zeros() as usize,
            Location::Global(0),
            size,
            AccessKind::Load,
            sem,
            scope,
            inst.site,
        );
        let mut acc = [tmpl; WARP];
        let mut idx = [0u8; WARP];
        let mut out = [0u64; WARP];
        let mut rest = active;
        loop {
            let (n, slow) = self.gather(w, &fa, &mut rest, &mut acc, &mut idx);
            if self.park_reads {
                for a in &acc[..n] {
                    let loc = a.loc;
                    self.park_read(w, loc, size);
                }
            }
            if n > 0 {
                let r = self.hooks.load_warp(self.mem, &acc[..n], &mut out[..n]);
                let done = r.as_ref().map_or_else(|e| e.0, |_| n);
                if let Some(di) = di {
                    let regs = &mut self.warps[w as usize].regs;
                    for k in 0..done {
                        let v = out[k];
                        regs[di + idx[k] as usize] = if signed { sign_extend(v, size) } else { v };
                    }
                }
                if let Err((i, e)) = r {
                    return Err(self.mem_fault(w, idx[i] as usize, pc, e));
                }
            }
            match slow {
                Some(l) => self.exec_ld_lanes(w, 1 << l, pc, inst)?,
                None => return Ok(()),
            }
        }
    }

    /// The next lanes of `rest` (taken out of it) whose address `fa` resolves, into
    /// `acc`/`idx` (each lane's thread and location; the rest of `acc` is the
    /// instruction's), up to the first it does not: their count, and that lane.
    #[inline(always)]
    fn gather(
        &self,
        w: u32,
        fa: &FastAddr,
        rest: &mut u32,
        acc: &mut [Access; WARP],
        idx: &mut [u8; WARP],
    ) -> (usize, Option<usize>) {
        let regs = &self.warps[w as usize].regs;
        let mut n = 0;
        while *rest != 0 {
            let l = rest.trailing_zeros() as usize;
            *rest &= *rest - 1;
            match fa.loc(regs, l) {
                Some(loc) => {
                    acc[n].thread = self.thread_ref(w, l);
                    acc[n].loc = loc;
                    idx[n] = l as u8;
                    n += 1;
                }
                None => return (n, Some(l)),
            }
        }
        (n, None)
    }

    /// A scalar store through a register, hooks not transparent: as
    /// [`Self::exec_ld_warp`], with [`Hooks::store_warp`].
    fn exec_st_warp(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::St {
            space,
            addr:
                Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            ref vals,
            size,
            sem,
            scope,
        } = &inst.op
        else {
            return self.exec_st_lanes(w, active, pc, inst);
        };
        let val = vals[0];
        let (fa, _) = FastAddr::new(
            &self.warps[w as usize],
            active,
            space,
            ar,
            offset,
            size.next_power_of_two(),
        );
        let tmpl = self.access(
            w,
            active.trailing_zeros() as usize,
            Location::Global(0),
            size,
            AccessKind::Store,
            sem,
            scope,
            inst.site,
        );
        let mut acc = [tmpl; WARP];
        let mut idx = [0u8; WARP];
        let mut data = [0u64; WARP];
        let mut rest = active;
        loop {
            let (n, slow) = self.gather(w, &fa, &mut rest, &mut acc, &mut idx);
            if n > 0 {
                for k in 0..n {
                    data[k] = self.src(w, idx[k] as usize, val);
                }
                self.guard_writes(&acc[..n]);
                let r = self.hooks.store_warp(self.mem, &acc[..n], &data[..n]);
                let done = r.as_ref().map_or_else(|e| e.0, |_| n);
                if done > 0 {
                    self.since_progress = 0;
                    self.changed();
                }
                if let Err((i, e)) = r {
                    return Err(self.mem_fault(w, idx[i] as usize, pc, e));
                }
            }
            match slow {
                Some(l) => self.exec_st_lanes(w, 1 << l, pc, inst)?,
                None => return Ok(()),
            }
        }
    }

    /// An atomic through a register, hooks not transparent: as [`Self::exec_ld_warp`],
    /// with [`Hooks::atomic_warp`].
    fn exec_atom_warp(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::Atom {
            space,
            op,
            size,
            d,
            addr:
                Addr {
                    base: AddrBase::Reg(ar),
                    offset,
                },
            b,
            c,
            sem,
            scope,
        } = &inst.op
        else {
            return self.exec_atom_lanes(w, active, pc, inst);
        };
        let (fa, _) = FastAddr::new(&self.warps[w as usize], active, space, ar, offset, size);
        let tmpl = self.access(
            w,
            active.trailing_zeros() as usize,
            Location::Global(0),
            size,
            AccessKind::Atomic,
            sem,
            scope,
            inst.site,
        );
        let mut acc = [tmpl; WARP];
        let mut idx = [0u8; WARP];
        let mut bv = [0u64; WARP];
        let mut cv = [0u64; WARP];
        let mut old = [0u64; WARP];
        let mut rest = active;
        loop {
            let (n, slow) = self.gather(w, &fa, &mut rest, &mut acc, &mut idx);
            if n > 0 {
                for k in 0..n {
                    let l = idx[k] as usize;
                    bv[k] = self.src(w, l, b);
                    cv[k] = c.map_or(0, |c| self.src(w, l, c));
                }
                // A failing compare-and-swap (a spin lock's) changes nothing (see
                // `livelock`).
                let mut changed = false;
                let mut f = |k: usize, o: u64| {
                    let new = rmw(op, size, bv[k], cv[k])(o);
                    changed |= new.is_some_and(|x| x != o);
                    new
                };
                self.guard_writes(&acc[..n]);
                let r = self
                    .hooks
                    .atomic_warp(self.mem, &acc[..n], &mut f, &mut old[..n]);
                let done = r.as_ref().map_or_else(|e| e.0, |_| n);
                // Progress only when memory changed (see `atomic_one`).
                if changed {
                    self.since_progress = 0;
                    self.changed();
                }
                if let Some(d) = d {
                    for k in 0..done {
                        self.set(w, idx[k] as usize, d, old[k]);
                    }
                }
                if let Err((i, e)) = r {
                    return Err(self.mem_fault(w, idx[i] as usize, pc, e));
                }
            }
            match slow {
                Some(l) => self.exec_atom_lanes(w, 1 << l, pc, inst)?,
                None => return Ok(()),
            }
        }
    }
}
