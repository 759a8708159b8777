//! `mbarrier` objects (PTX ISA §9.7.13.15): the barriers behind libcu++'s `cuda::barrier`
//! and `cuda::pipeline` on sm_80 and later, and `cp.async.mbarrier.arrive`.
//!
//! The object is 8 bytes of shared memory whose layout PTX leaves opaque; ours:
//!
//! | bits   | field                                              |
//! |--------|----------------------------------------------------|
//! | 0–20   | pending arrivals in the current phase              |
//! | 21–41  | expected arrivals per phase                        |
//! | 42–62  | the phase number (modulo 2²¹; bit 42 is its parity) |
//! | 63     | initialized (set by `init`)                        |
//!
//! The state token an `arrive` returns holds the phase it arrived in (bits 42–62) and the
//! pending count right after it (bits 0–20, what `pending_count` reads back).
//!
//! Memory model. An arrival is a read-modify-write of the object with the instruction's
//! semantics (default `.release.cta`), and a `test_wait`/`try_wait` a load of it (default
//! `.acquire.cta`), both through the hooks: the write-buffer models drain as for any
//! release RMW, and an acquire that sees a completed phase reads the last arrival's write,
//! which continues the release sequence of every earlier arrival (PTX's release sequence:
//! later RMWs on the same location), so the waiting thread synchronizes with every
//! arriving thread as the ISA says. `init` is a weak store (it is not atomic: a use of
//! the object that happens-before does not order is a race). `inval` only checks its
//! address: it is no memory operation in the ISA's memory model, and as a weak store it
//! raced, by the letter, with the last arrivals of libcu++'s own `cuda::pipeline`, whose
//! last thread out invalidates the barriers after a `match.any.sync` (which orders no
//! memory) with the lanes that arrived — a report on correct library code.
//!
//! `try_wait` may suspend the thread for a bounded time before it returns false; ours
//! returns at once (one of the executions the ISA allows, the loop around it retries).
//! `cp.async.mbarrier.arrive` makes an arrival happen once the thread's earlier
//! `cp.async` copies complete: here the copies complete at once, then (with `.noinc`) the
//! thread arrives; without `.noinc` the pending count is raised by one before the
//! asynchronous arrival lowers it again, a net change of nothing. Undefined uses fault:
//! an object used before `init`, an arrival that would take the pending count below zero,
//! and a count outside 1 ..= 2²⁰ − 1.

use super::memops::Place;
use super::*;
use crate::program::MbarKind;

const FIELD: u32 = 21;
const MASK: u64 = (1 << FIELD) - 1;
const EXPECTED_SHIFT: u32 = FIELD;
const PHASE_SHIFT: u32 = 2 * FIELD;
const INIT: u64 = 1 << 63;
/// The largest count `init` and `arrive` take (PTX ISA: 2²⁰ − 1).
const MAX_COUNT: u64 = (1 << 20) - 1;

fn pending(v: u64) -> u64 {
    v & MASK
}
fn expected(v: u64) -> u64 {
    (v >> EXPECTED_SHIFT) & MASK
}
fn phase(v: u64) -> u64 {
    (v >> PHASE_SHIFT) & MASK
}
fn object(pending: u64, expected: u64, phase: u64) -> u64 {
    INIT | (phase & MASK) << PHASE_SHIFT | (expected & MASK) << EXPECTED_SHIFT | (pending & MASK)
}

/// What `init` writes for `count` expected arrivals.
pub(super) fn init_value(count: u64) -> u64 {
    object(count, count, 0)
}

/// An arrival of `count` on object `v` (`drop`: also lowers the expected count): the new
/// object and the state token, or why the arrival is undefined.
pub(super) fn arrive(v: u64, count: u64, drop: bool) -> Result<(u64, u64), &'static str> {
    if v & INIT == 0 {
        return Err("mbarrier arrive on an object that was not initialized (mbarrier.init)");
    }
    if count == 0 || count > MAX_COUNT {
        return Err("mbarrier arrive count outside 1 ..= 2^20 - 1");
    }
    let (p, e, ph) = (pending(v), expected(v), phase(v));
    if count > p {
        return Err("mbarrier arrive with a count larger than the pending arrivals");
    }
    let e = if drop { e - count.min(e) } else { e };
    let p = p - count;
    let token = (ph & MASK) << PHASE_SHIFT | p;
    let new = if p == 0 {
        // The phase completes; the next one expects the (possibly dropped) count.
        object(e, e, ph + 1)
    } else {
        object(p, e, ph)
    };
    Ok((new, token))
}

/// Whether `test_wait`/`try_wait` on object `v` finds complete the phase of `state` (a
/// token from `arrive`), or with `parity` the phase whose parity is `state & 1`.
pub(super) fn phase_complete(v: u64, state: u64, parity: bool) -> bool {
    if parity {
        phase(v) & 1 != state & 1
    } else {
        phase(v) != phase(state)
    }
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// `inst` is an `Op::Mbar`: each lane of `active` in lane order.
    pub(super) fn exec_mbar(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::Mbar {
            kind,
            space,
            addr,
            d,
            b,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let site = inst.site;
        for l in lanes(active) {
            let bv = b.map_or(0, |b| self.src(w, l, b));
            if kind == MbarKind::PendingCount {
                if let Some(d) = d {
                    self.set(w, l, d, pending(bv));
                }
                continue;
            }
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, 8)?;
            let loc = match p {
                Place::Mem(loc) if loc.is_shared() => loc,
                _ => {
                    return Err(self.fault(
                        w,
                        l,
                        pc,
                        FaultKind::InvalidAddress,
                        "an mbarrier object must be in shared memory".into(),
                    ))
                }
            };
            match kind {
                MbarKind::Inval => {}
                MbarKind::Init => {
                    if bv == 0 || bv > MAX_COUNT {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::Undefined,
                            format!("mbarrier.init count {bv} outside 1 ..= 2^20 - 1"),
                        ));
                    }
                    let v = init_value(bv);
                    let a =
                        self.access(w, l, loc, 8, AccessKind::Store, Sem::Weak, Scope::Sys, site);
                    if let Err(e) = self.hooks.store(self.mem, &a, &v.to_le_bytes()) {
                        return Err(self.mem_fault(w, l, pc, e));
                    }
                    self.since_progress = 0;
                    self.changed();
                }
                MbarKind::Arrive { drop } => {
                    let token = self.mbar_arrive(w, l, pc, loc, bv, drop, sem, scope, site)?;
                    if let Some(d) = d {
                        self.set(w, l, d, token);
                    }
                }
                MbarKind::CpAsyncArrive { noinc } => {
                    self.complete_lane_copies(w, l)?;
                    if noinc {
                        self.mbar_arrive(w, l, pc, loc, 1, false, sem, scope, site)?;
                    }
                }
                MbarKind::Test { parity } => {
                    let a = self.access(w, l, loc, 8, AccessKind::Load, sem, scope, site);
                    let mut buf = [0u8; 8];
                    if let Err(e) = self.hooks.load(self.mem, &a, &mut buf) {
                        return Err(self.mem_fault(w, l, pc, e));
                    }
                    let v = u64::from_le_bytes(buf);
                    if v & INIT == 0 {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::Undefined,
                            "mbarrier wait on an object that was not initialized (mbarrier.init)"
                                .into(),
                        ));
                    }
                    if let Some(d) = d {
                        self.set(w, l, d, phase_complete(v, bv, parity) as u64);
                    }
                }
                MbarKind::PendingCount => {}
            }
        }
        Ok(())
    }

    /// One arrival of `count` by lane `l` on the object at `loc`: returns the state token.
    #[allow(clippy::too_many_arguments)]
    fn mbar_arrive(
        &mut self,
        w: u32,
        l: usize,
        pc: u32,
        loc: Location,
        count: u64,
        drop: bool,
        sem: Sem,
        scope: Scope,
        site: SiteId,
    ) -> Result<u64, LaunchOutcome> {
        let a = self.access(w, l, loc, 8, AccessKind::Atomic, sem, scope, site);
        let mut out: Result<u64, &'static str> = Ok(0);
        let mut f = |old: u64| match arrive(old, count, drop) {
            Ok((new, token)) => {
                out = Ok(token);
                Some(new)
            }
            Err(e) => {
                out = Err(e);
                None
            }
        };
        if let Err(e) = self.hooks.atomic(self.mem, &a, &mut f) {
            return Err(self.mem_fault(w, l, pc, e));
        }
        self.since_progress = 0;
        match out {
            Ok(token) => {
                self.changed();
                Ok(token)
            }
            Err(why) => Err(self.fault(w, l, pc, FaultKind::Undefined, why.into())),
        }
    }

    /// Completes every `cp.async` copy lane `l` of warp `w` has issued, in issue order,
    /// leaving its groups (now empty) in place for the `cp.async.wait_group` counts.
    fn complete_lane_copies(&mut self, w: u32, l: usize) -> Result<(), LaunchOutcome> {
        let Some(rare) = self.warps[w as usize].lanes[l].rare.as_mut() else {
            return Ok(());
        };
        let mut all: Vec<asynccopy::PendingCopy> = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_complete_after_the_expected_arrivals() {
        let mut v = init_value(3);
        let mut tokens = Vec::new();
        for _ in 0..3 {
            assert!(!phase_complete(
                v,
                tokens.first().copied().unwrap_or(v),
                false
            ));
            let (n, t) = arrive(v, 1, false).unwrap();
            tokens.push(t);
            v = n;
        }
        // Phase 0 is complete for every token of it; the next phase expects 3 again.
        assert!(tokens.iter().all(|&t| phase_complete(v, t, false)));
        assert_eq!((pending(v), expected(v), phase(v)), (3, 3, 1));
        assert_eq!(pending(tokens[0]), 2);
        assert_eq!(pending(tokens[2]), 0);
        // Parity: phase 0 (parity 0) is complete, phase 1 (parity 1) is not.
        assert!(phase_complete(v, 0, true));
        assert!(!phase_complete(v, 1, true));
    }

    #[test]
    fn counts_drops_and_undefined_uses() {
        let v = init_value(4);
        let (v, t) = arrive(v, 3, false).unwrap();
        assert_eq!(pending(t), 1);
        assert!(arrive(v, 2, false).is_err(), "more than pending");
        let (v, _) = arrive(v, 1, true).unwrap();
        // The dropped arrival lowers the next phase's expected count.
        assert_eq!((pending(v), expected(v), phase(v)), (3, 3, 1));
        assert!(arrive(0, 1, false).is_err(), "not initialized");
        assert!(arrive(v, 0, false).is_err());
    }
}
