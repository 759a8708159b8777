//! Non-bulk asynchronous copies, `cp.async` (PTX ISA §9.7.9.25.3).
//!
//! A `cp.async` only records the copy in the issuing thread's open group;
//! `cp.async.commit_group` closes the group and `cp.async.wait_group N` performs every
//! committed group except the newest `N`, oldest first (`wait_all` commits, then waits
//! for all). A thread that exits performs what it still has pending. The ISA lets a copy
//! happen at any time between issue and the wait that completes it; performing it at
//! the wait is one of those executions, and the one that shows a read of the
//! destination before the wait (undefined behaviour per §9.7.9.25.1) as stale data.
//!
//! The copy is a weak read of global memory and a weak write of shared memory by the
//! issuing thread (§9.7.9.25.3.1: "treated as a weak memory operation performed in the
//! generic proxy"), so both go through the hooks, attributed to the `cp.async` site, in
//! 4-byte elements (single bytes when `src-size` is not a multiple of 4).

use super::memops::Place;
use super::*;

/// One queued copy.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingCopy {
    /// The `cp.async` instruction (for faults and hook sites).
    pc: u32,
    site: SiteId,
    dst: Location,
    src: Location,
    /// cp-size: bytes written to `dst`.
    size: u32,
    /// Bytes read from `src`; the rest of `dst` is zero-filled.
    src_size: u32,
}

impl PendingCopy {
    /// A copy of `size` bytes, all read (a 16-byte piece of a bulk copy, `mbarrier`).
    pub(super) fn whole(pc: u32, site: SiteId, dst: Location, src: Location, size: u32) -> Self {
        PendingCopy {
            pc,
            site,
            dst,
            src,
            size,
            src_size: size,
        }
    }
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// Queues one copy per active lane.
    pub(super) fn exec_cp_async(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::CpAsync {
            dst,
            src,
            size,
            src_size,
            ignore_src,
        } = &inst.op
        else {
            return Ok(());
        };
        for l in lanes(active) {
            let d = self.place(w, l, MemSpace::Shared, dst);
            let s = self.place(w, l, MemSpace::Global, src);
            self.check_align(w, l, pc, d, size)?;
            self.check_align(w, l, pc, s, size)?;
            let (Place::Mem(d), Place::Mem(s)) = (d, s) else {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "cp.async needs a shared destination and a global source".into(),
                ));
            };
            let mut n = match src_size {
                Some(v) => self.src(w, l, v) & 0xffff_ffff,
                None => size as u64,
            };
            if n > size as u64 {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::Undefined,
                    format!("cp.async src-size {n} is larger than cp-size {size}"),
                ));
            }
            if let Some(p) = ignore_src {
                if self.src(w, l, p) & 1 != 0 {
                    n = 0;
                }
            }
            let copy = PendingCopy {
                pc,
                site: inst.site,
                dst: d,
                src: s,
                size,
                src_size: n as u32,
            };
            self.warps[w as usize].lanes[l].rare().async_open.push(copy);
        }
        Ok(())
    }

    /// Performs `copies` for lane `l`, in issue order.
    pub(super) fn complete_copies(
        &mut self,
        w: u32,
        l: usize,
        copies: &[PendingCopy],
    ) -> Result<(), LaunchOutcome> {
        for c in copies {
            let mut data = [0u8; 16];
            let chunk = if c.src_size % 4 == 0 { 4 } else { 1 };
            let mut off = 0;
            while off < c.src_size {
                let a = self.access(
                    w,
                    l,
                    c.src.offset(off as u64),
                    chunk,
                    AccessKind::Load,
                    Sem::Weak,
                    Scope::Sys,
                    c.site,
                );
                let buf = &mut data[off as usize..(off + chunk) as usize];
                if let Err(e) = self.hooks.load(self.mem, &a, buf) {
                    return Err(self.mem_fault(w, l, c.pc, e));
                }
                off += chunk;
            }
            let mut off = 0;
            while off < c.size {
                let a = self.access(
                    w,
                    l,
                    c.dst.offset(off as u64),
                    4,
                    AccessKind::Store,
                    Sem::Weak,
                    Scope::Sys,
                    c.site,
                );
                let buf = &data[off as usize..off as usize + 4];
                if let Err(e) = self.hooked_store(&a, buf) {
                    return Err(self.mem_fault(w, l, c.pc, e));
                }
                off += 4;
            }
        }
        if !copies.is_empty() {
            self.changed();
        }
        Ok(())
    }

    /// Performs every copy the lanes in `mask` still have pending (they are exiting).
    pub(super) fn finish_async_copies(
        &mut self,
        w: u32,
        mask: u32,
        _pc: u32,
    ) -> Result<(), LaunchOutcome> {
        // Their bulk copies too (`mbarrier`).
        if !self.bulk.is_empty() {
            self.complete_bulk(|b| b.w == w && mask >> b.l & 1 != 0)?;
        }
        for l in lanes(mask) {
            self.complete_lane_copies(w, l)?;
            if let Some(rare) = self.warps[w as usize].lanes[l].rare.as_mut() {
                rare.async_groups.clear();
            }
        }
        Ok(())
    }

    /// Completes every `cp.async` copy lane `l` of warp `w` has issued, in issue order,
    /// leaving its groups (now empty) in place for the `cp.async.wait_group` counts (a
    /// `cp.async.mbarrier.arrive`, and a lane's exit).
    pub(super) fn complete_lane_copies(&mut self, w: u32, l: usize) -> Result<(), LaunchOutcome> {
        let Some(rare) = self.warps[w as usize].lanes[l].rare.as_mut() else {
            return Ok(());
        };
        let mut all: Vec<PendingCopy> = Vec::new();
        for g in rare.async_groups.iter_mut() {
            all.append(g);
        }
        all.append(&mut rare.async_open);
        if all.is_empty() {
            return Ok(());
        }
        self.complete_copies(w, l, &all)
    }
}
