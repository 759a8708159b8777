//! `mbarrier` objects (PTX ISA §9.7.13.15): the barriers behind libcu++'s `cuda::barrier`
//! and `cuda::pipeline` on sm_80 and later, and `cp.async.mbarrier.arrive`.
//!
//! The object is 8 bytes of shared memory whose layout PTX leaves opaque; ours:
//!
//! | bits   | field                                                         |
//! |--------|---------------------------------------------------------------|
//! | 0–19   | pending arrivals in the current phase                         |
//! | 20–39  | expected arrivals per phase                                   |
//! | 40–60  | the transaction count (21-bit two's complement: a bulk copy   |
//! |        | may complete its bytes before they are expected)               |
//! | 61     | the current phase's parity                                    |
//! | 63     | initialized (set by `init`)                                   |
//!
//! A phase completes when both the pending arrivals and the transaction count are zero;
//! then the parity flips and the pending count is the expected one again. The state token
//! an `arrive` returns holds the parity of the phase it arrived in (bit 61) and the
//! pending count right after it (bits 0–19, what `pending_count` reads back). PTX lets a
//! wait name only the current or the immediately preceding phase, so the parity tells
//! them apart.
//!
//! Memory model. An arrival is a read-modify-write of the object with the instruction's
//! semantics (default `.release.cta`), and a `test_wait`/`try_wait` a load of it (default
//! `.acquire.cta`), both through the hooks: the write-buffer models drain as for any
//! release RMW, and an acquire that sees a completed phase reads the last arrival's write,
//! which continues the release sequence of every earlier arrival (PTX's release sequence:
//! later RMWs on the same location), so the waiting thread synchronizes with every
//! arriving thread as the ISA says. A test reads the object's newest state
//! ([`crate::Access::newest`]): an older state can only say "not complete yet", which the
//! wait's loop answers by testing again, so a stale read would change no value — but under
//! `weak` at `p = 1` every CTA's wait lasted until a liveness round (a 256-CTA
//! `cub::DeviceTransform` on sm_90 took a minute). `init` is a weak store (it is not atomic: a use of
//! the object that happens-before does not order is a race). `inval` only checks its
//! address: it is no memory operation in the ISA's memory model, and as a weak store it
//! raced, by the letter, with the last arrivals of libcu++'s own `cuda::pipeline`, whose
//! last thread out invalidates the barriers after a `match.any.sync` (which orders no
//! memory) with the lanes that arrived — a report on correct library code.
//!
//! A bulk copy (`cp.async.bulk ... mbarrier::complete_tx::bytes`) is queued when it is
//! issued and performed as late as the ISA lets it: when some thread next tests the
//! object it completes on (`test_wait`/`try_wait`), or when the issuing thread exits —
//! so a kernel that reads the destination after `__syncthreads()` without waiting on the
//! barrier reads it stale, as it may on a GPU. It is performed by the issuing thread
//! (weak loads of global, weak stores to shared memory, as `cp.async`'s), and then
//! completes its bytes on the object with a release RMW: a thread whose wait sees the
//! phase complete synchronizes with it and sees the copied data.
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

const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const EXPECTED_SHIFT: u32 = COUNT_BITS;
const TX_SHIFT: u32 = 2 * COUNT_BITS;
const TX_BITS: u32 = 21;
const TX_MASK: u64 = (1 << TX_BITS) - 1;
const PARITY: u64 = 1 << 61;
const INIT: u64 = 1 << 63;
/// The largest count `init` and `arrive` take (PTX ISA: 2²⁰ − 1), and the largest
/// transaction count.
const MAX_COUNT: u64 = (1 << 20) - 1;

/// The fields of an initialized object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Object {
    pending: u64,
    expected: u64,
    tx: i64,
    parity: bool,
}

impl Object {
    fn decode(v: u64) -> Option<Object> {
        if v & INIT == 0 {
            return None;
        }
        let raw = (v >> TX_SHIFT) & TX_MASK;
        // Sign-extend the 21-bit transaction count.
        let tx = ((raw << (64 - TX_BITS)) as i64) >> (64 - TX_BITS);
        Some(Object {
            pending: v & COUNT_MASK,
            expected: (v >> EXPECTED_SHIFT) & COUNT_MASK,
            tx,
            parity: v & PARITY != 0,
        })
    }

    /// The word, completing the phase first when nothing is pending any more.
    fn encode(mut self) -> u64 {
        if self.pending == 0 && self.tx == 0 {
            self.parity = !self.parity;
            self.pending = self.expected;
        }
        INIT | if self.parity { PARITY } else { 0 }
            | ((self.tx as u64) & TX_MASK) << TX_SHIFT
            | (self.expected & COUNT_MASK) << EXPECTED_SHIFT
            | (self.pending & COUNT_MASK)
    }
}

const NOT_INITIALIZED: &str = "mbarrier object used before mbarrier.init";

/// What `init` writes for `count` expected arrivals.
pub(super) fn init_value(count: u64) -> u64 {
    Object {
        pending: count,
        expected: count,
        tx: 0,
        parity: false,
    }
    .encode()
}

fn pending(token: u64) -> u64 {
    token & COUNT_MASK
}

/// An arrival of `count` on object `v` (`drop`: also lowers the expected count) after
/// raising its transaction count by `tx`: the new object and the state token, or why the
/// arrival is undefined.
pub(super) fn arrive(v: u64, count: u64, drop: bool, tx: u64) -> Result<(u64, u64), &'static str> {
    let mut o = Object::decode(v).ok_or(NOT_INITIALIZED)?;
    if count == 0 || count > MAX_COUNT {
        return Err("mbarrier arrive count outside 1 ..= 2^20 - 1");
    }
    if count > o.pending {
        return Err("mbarrier arrive with a count larger than the pending arrivals");
    }
    o = add_tx(o, tx as i64)?;
    if drop {
        o.expected -= count.min(o.expected);
    }
    o.pending -= count;
    let token = if o.parity { PARITY } else { 0 } | o.pending;
    Ok((o.encode(), token))
}

fn add_tx(mut o: Object, d: i64) -> Result<Object, &'static str> {
    if d.unsigned_abs() > MAX_COUNT {
        return Err("mbarrier transaction count outside 0 ..= 2^20 - 1");
    }
    o.tx += d;
    if o.tx.unsigned_abs() > MAX_COUNT {
        return Err("mbarrier transaction count out of range (2^20 - 1 either way)");
    }
    Ok(o)
}

/// `expect_tx` (`sign` 1) or `complete_tx` (`sign` -1) of `bytes` on object `v`.
pub(super) fn transact(v: u64, bytes: u64, sign: i64) -> Result<u64, &'static str> {
    let o = Object::decode(v).ok_or(NOT_INITIALIZED)?;
    if bytes > MAX_COUNT {
        return Err("mbarrier transaction count outside 0 ..= 2^20 - 1");
    }
    Ok(add_tx(o, sign * bytes as i64)?.encode())
}

/// Whether `test_wait`/`try_wait` on object `v` finds complete the phase of `state` (a
/// token from `arrive`), or with `parity` the phase whose parity is `state & 1`.
pub(super) fn phase_complete(v: u64, state: u64, parity: bool) -> bool {
    let now = v & PARITY != 0;
    if parity {
        now != (state & 1 != 0)
    } else {
        now != (state & PARITY != 0)
    }
}

/// One bulk copy waiting to be performed.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingBulk {
    pub(super) w: u32,
    pub(super) l: usize,
    pc: u32,
    site: SiteId,
    dst: Location,
    src: Location,
    n: u64,
    mbar: Location,
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
                    if let Err(e) = self.hooked_store(&a, &v.to_le_bytes()) {
                        return Err(self.mem_fault(w, l, pc, e));
                    }
                    self.since_progress = 0;
                    self.changed();
                }
                MbarKind::Arrive { drop, tx } => {
                    let (count, tx) = if tx { (1, bv) } else { (bv, 0) };
                    let f = move |old: u64| arrive(old, count, drop, tx);
                    let token = self.mbar_rmw(w, l, pc, loc, sem, scope, site, f)?;
                    if let Some(d) = d {
                        self.set(w, l, d, token);
                    }
                }
                MbarKind::CpAsyncArrive { noinc } => {
                    self.complete_lane_copies(w, l)?;
                    if noinc {
                        let f = |old: u64| arrive(old, 1, false, 0);
                        self.mbar_rmw(w, l, pc, loc, sem, scope, site, f)?;
                    }
                }
                MbarKind::ExpectTx | MbarKind::CompleteTx => {
                    let sign = if kind == MbarKind::ExpectTx { 1 } else { -1 };
                    let f = move |old: u64| transact(old, bv, sign).map(|n| (n, 0));
                    self.mbar_rmw(w, l, pc, loc, sem, scope, site, f)?;
                }
                MbarKind::Test { parity } => {
                    if !self.bulk.is_empty() {
                        self.complete_bulk(|b| b.mbar == loc)?;
                    }
                    let mut a = self.access(w, l, loc, 8, AccessKind::Load, sem, scope, site);
                    a.newest = true;
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
                            NOT_INITIALIZED.into(),
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

    /// A read-modify-write `f` (new object and a result, or why it is undefined) of the
    /// object at `loc` by lane `l`: returns the result.
    #[allow(clippy::too_many_arguments)]
    fn mbar_rmw(
        &mut self,
        w: u32,
        l: usize,
        pc: u32,
        loc: Location,
        sem: Sem,
        scope: Scope,
        site: SiteId,
        f: impl Fn(u64) -> Result<(u64, u64), &'static str>,
    ) -> Result<u64, LaunchOutcome> {
        let a = self.access(w, l, loc, 8, AccessKind::Atomic, sem, scope, site);
        let mut out: Result<u64, &'static str> = Ok(0);
        let mut g = |old: u64| match f(old) {
            Ok((new, r)) => {
                out = Ok(r);
                Some(new)
            }
            Err(e) => {
                out = Err(e);
                None
            }
        };
        if let Err(e) = self.hooked_atomic(&a, &mut g) {
            return Err(self.mem_fault(w, l, pc, e));
        }
        self.since_progress = 0;
        match out {
            Ok(r) => {
                self.changed();
                Ok(r)
            }
            Err(why) => Err(self.fault(w, l, pc, FaultKind::Undefined, why.into())),
        }
    }

    /// `inst` is an `Op::BulkCopy`: checks each lane's copy and queues it
    /// ([`Self::complete_bulk`] performs it).
    pub(super) fn exec_bulk_copy(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let &Op::BulkCopy {
            dst,
            src,
            size,
            mbar,
        } = &inst.op
        else {
            return Ok(());
        };
        let site = inst.site;
        for l in lanes(active) {
            let n = self.src(w, l, size) & 0xffff_ffff;
            let d = self.place(w, l, MemSpace::Shared, dst);
            let s = self.place(w, l, MemSpace::Global, src);
            let m = self.place(w, l, MemSpace::Shared, mbar);
            let (Place::Mem(d), Place::Mem(s), Place::Mem(m)) = (d, s, m) else {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "cp.async.bulk needs shared destination and mbarrier, global source".into(),
                ));
            };
            if !n.is_multiple_of(16) || !d.addr().is_multiple_of(16) || !s.addr().is_multiple_of(16)
            {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::Misaligned,
                    format!(
                        "cp.async.bulk of {n} bytes: size and addresses must be multiples of 16"
                    ),
                ));
            }
            self.check_align(w, l, pc, Place::Mem(m), 8)?;
            self.bulk.push(PendingBulk {
                w,
                l,
                pc,
                site,
                dst: d,
                src: s,
                n,
                mbar: m,
            });
        }
        Ok(())
    }

    /// Performs, in issue order, the queued bulk copies `which` selects: each copy, then
    /// the completion of its bytes on its mbarrier object, by its issuing thread.
    pub(super) fn complete_bulk(
        &mut self,
        which: impl Fn(&PendingBulk) -> bool,
    ) -> Result<(), LaunchOutcome> {
        let (now, later): (Vec<PendingBulk>, Vec<PendingBulk>) =
            self.bulk.iter().partition(|b| which(b));
        if now.is_empty() {
            return Ok(());
        }
        self.bulk = later;
        for b in now {
            let (w, l, pc, site) = (b.w, b.l, b.pc, b.site);
            // As `cp.async`'s copies, in 16-byte pieces (the size is a multiple of 16).
            let pieces: Vec<asynccopy::PendingCopy> = (0..b.n / 16)
                .map(|k| {
                    let off = 16 * k;
                    asynccopy::PendingCopy::whole(
                        pc,
                        site,
                        b.dst.offset(off),
                        b.src.offset(off),
                        16,
                    )
                })
                .collect();
            self.complete_copies(w, l, &pieces)?;
            let n = b.n;
            let f = move |old: u64| transact(old, n, -1).map(|v| (v, 0));
            self.mbar_rmw(w, l, pc, b.mbar, Sem::Release, Scope::Cta, site, f)?;
        }
        // Memory changed outside any warp's own step: an event for every warp.
        self.changed_for_all();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: u64) -> (u64, u64, i64, bool) {
        let o = Object::decode(v).unwrap();
        (o.pending, o.expected, o.tx, o.parity)
    }

    #[test]
    fn phases_complete_after_the_expected_arrivals() {
        let mut v = init_value(3);
        let mut tokens = Vec::new();
        for _ in 0..3 {
            if let Some(&t) = tokens.first() {
                assert!(!phase_complete(v, t, false));
            }
            let (n, t) = arrive(v, 1, false, 0).unwrap();
            tokens.push(t);
            v = n;
        }
        // Phase 0 is complete for every token of it; the next phase expects 3 again.
        assert!(tokens.iter().all(|&t| phase_complete(v, t, false)));
        assert_eq!(fields(v), (3, 3, 0, true));
        assert_eq!(pending(tokens[0]), 2);
        assert_eq!(pending(tokens[2]), 0);
        // Parity: phase 0 (parity 0) is complete, phase 1 (parity 1) is not.
        assert!(phase_complete(v, 0, true));
        assert!(!phase_complete(v, 1, true));
    }

    #[test]
    fn counts_drops_and_undefined_uses() {
        let v = init_value(4);
        let (v, t) = arrive(v, 3, false, 0).unwrap();
        assert_eq!(pending(t), 1);
        assert!(arrive(v, 2, false, 0).is_err(), "more than pending");
        let (v, _) = arrive(v, 1, true, 0).unwrap();
        // The dropped arrival lowers the next phase's expected count.
        assert_eq!(fields(v), (3, 3, 0, true));
        assert!(arrive(0, 1, false, 0).is_err(), "not initialized");
        assert!(arrive(v, 0, false, 0).is_err());
        assert!(transact(0, 16, 1).is_err(), "not initialized");
    }

    #[test]
    fn transactions_hold_the_phase_until_their_bytes_complete() {
        // A copy that completes before its bytes are expected (as CUDA 13's
        // `cuda::memcpy_async` orders them): the count goes negative, then back to zero.
        let v = init_value(2);
        let v = transact(v, 1024, -1).unwrap();
        assert_eq!(fields(v).2, -1024);
        let v = transact(v, 1024, 1).unwrap();
        let (v, t) = arrive(v, 1, false, 0).unwrap();
        let (v, _) = arrive(v, 1, false, 0).unwrap();
        assert!(phase_complete(v, t, false));
        // Expected first: both arrivals are in, the phase waits for the bytes.
        let (v, t) = arrive(v, 1, false, 512).unwrap();
        let (v, _) = arrive(v, 1, false, 0).unwrap();
        assert!(!phase_complete(v, t, false));
        assert_eq!(fields(v), (0, 2, 512, true));
        let v = transact(v, 512, -1).unwrap();
        assert!(phase_complete(v, t, false));
        assert_eq!(fields(v), (2, 2, 0, false));
    }
}
