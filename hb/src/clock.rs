//! Vector clocks for up to 65,536 (and more) threads: chunked by CTA and shared.
//!
//! A textbook vector clock has one entry per thread, so a grid of 65,536 threads would
//! need 65,536 × 65,536 × 4 bytes = 16 GiB of clocks. Two facts about GPU programs make a
//! much smaller representation exact:
//!
//! * Most synchronization is a CTA barrier, after which every participant knows exactly the
//!   same thing. So a clock is a sorted list of **per-CTA chunks** (`tpb` entries each), and
//!   every chunk is behind an `Rc`: after `__syncthreads()` all threads of the CTA point at
//!   one clock, and a later change copies only the one chunk it touches (copy on write).
//! * A thread only knows about CTAs it has synchronized with, so a chunk that would be all
//!   zeros is simply absent: a thread of a kernel that never synchronizes across CTAs holds
//!   at most its own CTA's chunk.
//!
//! Joins are chunk-wise and avoid work and allocation when they can: equal pointers are
//! skipped, and a chunk that dominates the other is kept (or adopted) as it is, so a join
//! of a clock that already knows everything is a scan without a copy, and the result keeps
//! sharing memory with its inputs.
//!
//! Entries are epochs: a thread's epoch grows each time it *publishes* its clock (a
//! barrier arrival, a release, a release fence), so accesses after the publication are not
//! covered by it (FastTrack, Flanagan & Freund, PLDI 2009).

//!
//! # Invariants
//!
//! * The chunk list is sorted by CTA, with at most one chunk per CTA.
//! * Epochs only grow: no operation lowers an entry (a join's result dominates both of
//!   its inputs, a raise changes nothing or raises).
//!
//! Debug builds assert both after every operation that changes a clock; the property
//! test at the end of this file compares the clock with a plain dense vector clock over
//! random operation sequences.

use std::rc::Rc;

pub use crate::ids::{CtaId, Epoch, Tid, Tpb};

type Chunk = Rc<Vec<Epoch>>;

/// A vector clock over the threads of one launch, chunked per CTA.
#[derive(Debug, Clone, Default)]
pub struct VClock {
    /// Sorted by CTA index. `None` is the empty clock: a default clock allocates nothing
    /// (every thread of a launch starts with one, and one was an allocation per thread).
    chunks: Option<Rc<Vec<(CtaId, Chunk)>>>,
}

impl VClock {
    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// The chunk list (empty for the empty clock).
    #[inline]
    fn list(&self) -> &[(CtaId, Chunk)] {
        self.chunks.as_deref().map_or(&[], |v| v.as_slice())
    }

    /// The chunk list, unshared (copy on write).
    #[inline]
    fn list_mut(&mut self) -> &mut Vec<(CtaId, Chunk)> {
        Rc::make_mut(self.chunks.get_or_insert_with(Default::default))
    }

    /// Whether the two clocks share their chunk list (so are equal).
    #[inline]
    pub fn same(&self, other: &VClock) -> bool {
        match (&self.chunks, &other.chunks) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    #[inline]
    fn find(&self, cta: CtaId) -> Result<usize, usize> {
        let c = self.list();
        if c.len() <= 8 {
            for (i, (k, _)) in c.iter().enumerate() {
                if *k == cta {
                    return Ok(i);
                }
                if *k > cta {
                    return Err(i);
                }
            }
            return Err(c.len());
        }
        c.binary_search_by_key(&cta, |(k, _)| *k)
    }

    /// The entry of thread `tid` of CTA `cta`.
    #[inline]
    pub fn get(&self, cta: CtaId, tid: Tid) -> Epoch {
        match self.find(cta) {
            Ok(i) => self.list()[i]
                .1
                .get(tid.index())
                .copied()
                .unwrap_or(Epoch::NONE),
            Err(_) => Epoch::NONE,
        }
    }

    /// The entries of CTA `cta`, if the clock has any.
    #[inline]
    pub fn chunk(&self, cta: CtaId) -> Option<&[Epoch]> {
        self.find(cta).ok().map(|i| self.list()[i].1.as_slice())
    }

    /// Raises the entry of (`cta`, `tid`) to at least `e` if that needs no copy and no
    /// new chunk: it already is, or this clock owns both its chunk list and that chunk
    /// (nothing else can see the change). Returns whether the entry is now ≥ `e`.
    #[inline]
    pub fn raise_in_place(&mut self, cta: CtaId, tid: Tid, e: Epoch) -> bool {
        let Ok(i) = self.find(cta) else {
            return e.is_none();
        };
        if self.list()[i]
            .1
            .get(tid.index())
            .copied()
            .unwrap_or(Epoch::NONE)
            >= e
        {
            return true;
        }
        let entry = self
            .chunks
            .as_mut()
            .and_then(Rc::get_mut)
            .and_then(|list| Rc::get_mut(&mut list[i].1))
            .and_then(|chunk| chunk.get_mut(tid.index()));
        match entry {
            Some(x) => {
                debug_assert!(*x < e, "an epoch only grows");
                *x = e;
                true
            }
            None => false,
        }
    }

    /// Raises the entry of (`cta`, `tid`) to at least `e`; `tpb` sizes a new chunk.
    pub fn raise(&mut self, cta: CtaId, tid: Tid, tpb: Tpb, e: Epoch) {
        if self.get(cta, tid) >= e {
            return;
        }
        let chunks = self.list_mut();
        let i = match chunks.binary_search_by_key(&cta, |(k, _)| *k) {
            Ok(i) => i,
            Err(i) => {
                chunks.insert(i, (cta, new_chunk(tpb)));
                i
            }
        };
        let chunk = Rc::make_mut(&mut chunks[i].1);
        debug_assert!(
            tid.index() < chunk.len(),
            "{tid:?} beyond a chunk of {tpb:?}"
        );
        if let Some(x) = chunk.get_mut(tid.index()) {
            *x = e;
        }
        self.debug_check();
    }

    /// (`self` has an entry greater than `other`'s, `other` has one greater than `self`'s),
    /// by one merge walk over both sorted chunk lists.
    fn compare(&self, other: &VClock) -> (bool, bool) {
        if self.same(other) {
            return (false, false);
        }
        let (a, b) = (self.list(), other.list());
        let (mut i, mut j) = (0, 0);
        let (mut s_gt, mut o_gt) = (false, false);
        while (i < a.len() || j < b.len()) && !(s_gt && o_gt) {
            match (a.get(i), b.get(j)) {
                (Some((ca, ra)), Some((cb, rb))) if ca == cb => {
                    if !Rc::ptr_eq(ra, rb) {
                        let (m, t) = dominance(ra, rb);
                        s_gt |= m;
                        o_gt |= t;
                    }
                    i += 1;
                    j += 1;
                }
                (Some((ca, ra)), Some((cb, _))) if ca < cb => {
                    s_gt |= any_set(ra);
                    i += 1;
                }
                (Some((_, ra)), None) => {
                    s_gt |= any_set(ra);
                    i += 1;
                }
                (_, Some((_, rb))) => {
                    o_gt |= any_set(rb);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        (s_gt, o_gt)
    }

    /// Raises many entries at once, `(cta, tid, epoch)` (a barrier's arrivals): one
    /// copy-on-write per touched chunk instead of one uniqueness check per entry.
    pub fn raise_all(&mut self, tpb: Tpb, items: &[(CtaId, Tid, Epoch)]) {
        if items.iter().all(|&(c, t, e)| self.get(c, t) >= e) {
            return;
        }
        self.raise_all_unchecked(tpb, items);
    }

    /// [`VClock::raise_all`] without first checking whether anything changes (for callers
    /// that know it does: the check is a lookup per item, and copies the list anyway).
    pub fn raise_all_unchecked(&mut self, tpb: Tpb, items: &[(CtaId, Tid, Epoch)]) {
        let chunks = self.list_mut();
        // Items arrive grouped by CTA (a barrier is per CTA or per warp); find the chunk
        // (and copy it) only when the CTA changes.
        let mut i = 0;
        while i < items.len() {
            let cta = items[i].0;
            let at = match chunks.binary_search_by_key(&cta, |(k, _)| *k) {
                Ok(at) => at,
                Err(at) => {
                    chunks.insert(at, (cta, new_chunk(tpb)));
                    at
                }
            };
            let chunk = Rc::make_mut(&mut chunks[at].1);
            while i < items.len() && items[i].0 == cta {
                let (_, t, e) = items[i];
                if let Some(x) = chunk.get_mut(t.index()) {
                    *x = (*x).max(e);
                }
                i += 1;
            }
        }
        self.debug_check();
    }

    /// `self := self ⊔ other`. Keeps `self` when it already dominates, adopts `other`
    /// when that dominates, and otherwise merges chunk by chunk (sharing unchanged chunks).
    /// Inline when there is nothing to do (`other` empty, or the very list `self` holds:
    /// every arrival at a barrier after the first, every thread of a CTA between two
    /// barriers), out of line otherwise.
    #[inline]
    pub fn join(&mut self, other: &VClock) {
        if other.chunks.is_none() || self.same(other) {
            return;
        }
        self.join_slow(other);
    }

    #[inline(never)]
    fn join_slow(&mut self, other: &VClock) {
        #[cfg(debug_assertions)]
        let before = self.clone();
        self.join_inner(other);
        #[cfg(debug_assertions)]
        {
            self.debug_check();
            debug_assert!(
                self.dominates(&before) && self.dominates(other),
                "a join only grows: {self:?} from {before:?} and {other:?}"
            );
        }
    }

    #[inline]
    fn join_inner(&mut self, other: &VClock) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            self.chunks = other.chunks.clone();
            return;
        }
        // (Identical lists were taken by `join`.)
        if other.list().len() * 8 <= self.list().len() {
            // A small clock into a large one (one thread's release into a clock that
            // spans the grid): chunk by chunk, without walking or rebuilding the list.
            for (c, rb) in other.list() {
                match self.find(*c) {
                    Ok(i) => {
                        let ra = &self.list()[i].1;
                        if Rc::ptr_eq(ra, rb) || !dominance(ra, rb).1 {
                            continue;
                        }
                        join_chunk(&mut self.list_mut()[i].1, rb);
                    }
                    Err(i) => {
                        if any_set(rb) {
                            self.list_mut().insert(i, (*c, rb.clone()));
                        }
                    }
                }
            }
            return;
        }
        let (s_gt, o_gt) = self.compare(other);
        if !o_gt {
            return;
        }
        if !s_gt {
            self.chunks = other.chunks.clone();
            return;
        }
        let (a, b) = (self.list(), other.list());
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some((ca, ra)), Some((cb, rb))) if ca == cb => {
                    let mut c = ra.clone();
                    join_chunk(&mut c, rb);
                    out.push((*ca, c));
                    i += 1;
                    j += 1;
                }
                (Some((ca, ra)), Some((cb, _))) if ca < cb => {
                    out.push((*ca, ra.clone()));
                    i += 1;
                }
                (Some((ca, ra)), None) => {
                    out.push((*ca, ra.clone()));
                    i += 1;
                }
                (_, Some((cb, rb))) => {
                    out.push((*cb, rb.clone()));
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.chunks = Some(Rc::new(out));
    }

    /// Every entry of `other` is ≤ the one in `self`.
    pub fn dominates(&self, other: &VClock) -> bool {
        other.is_empty() || self.same(other) || !self.compare(other).1
    }

    /// Makes each chunk of `self` whose entries equal `other`'s chunk of the same CTA the
    /// very chunk of `other` (the clock stays the same; it only shares more memory).
    /// Returns whether any chunk changed.
    ///
    /// For two clocks built apart from the same releases — a collapsed release sequence's
    /// `.gpu` part and its spill hold the same CTAs' chunks, each made by its own
    /// copy-on-write — so that a thread that joins both (a `.gpu` acquire takes both)
    /// compares the second's chunks by pointer instead of entry by entry: on a grid of
    /// 256 CTAs of 256 threads whose thread 0s each acquire every CTA's publication, those
    /// comparisons were a ninth of the race-checked launch (`scale_reduce`, racecheck
    /// bench, callgrind).
    pub fn share_equal_chunks(&mut self, other: &VClock) -> bool {
        if self.same(other) || other.is_empty() {
            return false;
        }
        // The chunks of `other` to take, by index in `self`, found without copying.
        let mut take: Vec<(usize, Chunk)> = Vec::new();
        let (a, b) = (self.list(), other.list());
        let mut j = 0;
        for (i, (c, ra)) in a.iter().enumerate() {
            while j < b.len() && b[j].0 < *c {
                j += 1;
            }
            match b.get(j) {
                Some((cb, rb)) if cb == c && !Rc::ptr_eq(ra, rb) && ra[..] == rb[..] => {
                    take.push((i, rb.clone()))
                }
                _ => {}
            }
        }
        if take.is_empty() {
            return false;
        }
        let list = self.list_mut();
        for (i, r) in take {
            list[i].1 = r;
        }
        self.debug_check();
        true
    }

    /// The chunks, by CTA (for folding a clock into another structure without copying).
    pub fn chunks(&self) -> impl Iterator<Item = (CtaId, &Rc<Vec<Epoch>>)> + '_ {
        self.list().iter().map(|(c, r)| (*c, r))
    }

    /// Debug builds: asserts that the chunk list is sorted by CTA, one chunk per CTA.
    #[inline]
    fn debug_check(&self) {
        #[cfg(debug_assertions)]
        {
            let l = self.list();
            debug_assert!(
                l.windows(2).all(|w| w[0].0 < w[1].0),
                "clock chunks out of order or repeated: {:?}",
                l.iter().map(|(c, _)| c.0).collect::<Vec<_>>()
            );
        }
    }
}

/// A chunk of `tpb` entries, all [`Epoch::NONE`].
#[inline]
fn new_chunk(tpb: Tpb) -> Chunk {
    Rc::new(vec![Epoch::NONE; tpb.len()])
}

/// Whether any entry is set.
#[inline]
fn any_set(chunk: &[Epoch]) -> bool {
    chunk.iter().any(|e| !e.is_none())
}

/// (mine has an entry greater than theirs, theirs has an entry greater than mine)
#[inline]
fn dominance(mine: &[Epoch], theirs: &[Epoch]) -> (bool, bool) {
    let mut m_gt = false;
    let mut t_gt = false;
    for (a, b) in mine.iter().zip(theirs) {
        m_gt |= a > b;
        t_gt |= b > a;
    }
    if theirs.len() > mine.len() {
        t_gt |= any_set(&theirs[mine.len()..]);
    }
    if mine.len() > theirs.len() {
        m_gt |= any_set(&mine[theirs.len()..]);
    }
    (m_gt, t_gt)
}

fn join_chunk(mine: &mut Chunk, theirs: &Chunk) {
    if Rc::ptr_eq(mine, theirs) {
        return;
    }
    let (m_gt, t_gt) = dominance(mine, theirs);
    if !t_gt {
        return;
    }
    if !m_gt {
        *mine = theirs.clone();
        return;
    }
    let m = Rc::make_mut(mine);
    if m.len() < theirs.len() {
        m.resize(theirs.len(), Epoch::NONE);
    }
    for (a, b) in m.iter_mut().zip(theirs.iter()) {
        *a = (*a).max(*b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn raise(c: &mut VClock, cta: u32, tid: u32, e: u32) {
        c.raise(CtaId(cta), Tid(tid), Tpb(TPB), Epoch::new(e));
    }

    fn get(c: &VClock, cta: u32, tid: u32) -> u32 {
        c.get(CtaId(cta), Tid(tid)).get()
    }

    #[test]
    fn join_raise_and_sharing() {
        let mut a = VClock::default();
        raise(&mut a, 0, 3, 5);
        raise(&mut a, 2, 1, 7);
        let mut b = VClock::default();
        raise(&mut b, 0, 3, 2);
        raise(&mut b, 1, 0, 9);
        let mut j = a.clone();
        j.join(&b);
        assert_eq!(get(&j, 0, 3), 5);
        assert_eq!(get(&j, 1, 0), 9);
        assert_eq!(get(&j, 2, 1), 7);
        assert_eq!(get(&j, 3, 0), 0);
        assert!(j.dominates(&a) && j.dominates(&b) && !a.dominates(&b));
        // A join with a dominated clock keeps the pointers.
        let before = j.clone();
        j.join(&a);
        assert!(before.same(&j));
        // A dominated clock adopts the dominating one.
        let mut small = a.clone();
        small.join(&j);
        assert!(small.same(&j));
    }

    /// The reference: a plain vector clock, one entry per thread of the grid, no sharing
    /// and no chunks.
    #[derive(Debug, Clone, PartialEq)]
    struct Plain(Vec<u32>);

    impl Plain {
        fn at(cta: u32, tid: u32) -> usize {
            (cta * TPB + tid) as usize
        }
        fn raise(&mut self, cta: u32, tid: u32, e: u32) {
            let x = &mut self.0[Plain::at(cta, tid)];
            *x = (*x).max(e);
        }
        fn join(&mut self, o: &Plain) {
            for (a, b) in self.0.iter_mut().zip(&o.0) {
                *a = (*a).max(*b);
            }
        }
        /// (self has a greater entry, other has a greater entry)
        fn compare(&self, o: &Plain) -> (bool, bool) {
            let gt = self.0.iter().zip(&o.0).any(|(a, b)| a > b);
            let lt = self.0.iter().zip(&o.0).any(|(a, b)| a < b);
            (gt, lt)
        }
    }

    /// CTAs and threads per CTA of the random grids: more CTAs than the linear lookup's 8,
    /// so the binary search and the small-into-large join path are exercised too.
    const CTAS: u32 = 20;
    const TPB: u32 = 4;
    /// Clocks an operation sequence works on (clones make them share chunks).
    const CLOCKS: usize = 4;

    #[derive(Debug, Clone)]
    enum Op {
        Raise(usize, u32, u32, u32),
        RaiseInPlace(usize, u32, u32, u32),
        RaiseAll(usize, Vec<(u32, u32, u32)>),
        Join(usize, usize),
        Clone(usize, usize),
        Reset(usize),
        /// Several CTAs' worth of entries at once, into one clock (a wide clock, for the
        /// small-into-large join).
        Fill(usize, u32),
        /// `share_equal_chunks` of clock `i` with clock `j` (changes no entry).
        Share(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let c = 0..CLOCKS;
        let cta = 0..CTAS;
        let tid = 0..TPB;
        let e = 1u32..40;
        prop_oneof![
            4 => (c.clone(), cta.clone(), tid.clone(), e.clone())
                .prop_map(|(i, c, t, e)| Op::Raise(i, c, t, e)),
            2 => (c.clone(), cta.clone(), tid.clone(), e.clone())
                .prop_map(|(i, c, t, e)| Op::RaiseInPlace(i, c, t, e)),
            2 => (c.clone(), prop::collection::vec((cta.clone(), tid, e.clone()), 0..12))
                .prop_map(|(i, mut v)| {
                    // Grouped by CTA, as a barrier's arrivals are.
                    v.sort_by_key(|x| x.0);
                    Op::RaiseAll(i, v)
                }),
            4 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Join(i, j)),
            2 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Clone(i, j)),
            1 => c.clone().prop_map(Op::Reset),
            1 => (c.clone(), e).prop_map(|(i, e)| Op::Fill(i, e)),
            2 => (c.clone(), c).prop_map(|(i, j)| Op::Share(i, j)),
        ]
    }

    /// Every query of `v` agrees with `p`.
    fn agree(v: &VClock, p: &Plain) -> Result<(), TestCaseError> {
        for cta in 0..CTAS {
            for tid in 0..TPB {
                prop_assert_eq!(
                    get(v, cta, tid),
                    p.0[Plain::at(cta, tid)],
                    "({}, {})",
                    cta,
                    tid
                );
            }
            if let Some(ch) = v.chunk(CtaId(cta)) {
                let want = &p.0[Plain::at(cta, 0)..Plain::at(cta + 1, 0)];
                prop_assert_eq!(ch.iter().map(|e| e.get()).collect::<Vec<_>>(), want);
            }
        }
        let listed: Vec<u32> = v.chunks().map(|(c, _)| c.0).collect();
        prop_assert!(listed.windows(2).all(|w| w[0] < w[1]), "{:?}", listed);
        prop_assert_eq!(v.is_empty(), listed.is_empty());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The chunked, shared clock against the plain one over random sequences of
        /// raises, batch raises, joins and clones (so chunks and lists are shared and
        /// copied on write), comparing every entry, every chunk and every pairwise
        /// comparison after each step.
        #[test]
        fn behaves_like_a_plain_vector_clock(ops in prop::collection::vec(op(), 1..60)) {
            let mut vs: Vec<VClock> = vec![VClock::default(); CLOCKS];
            let mut ps: Vec<Plain> = vec![Plain(vec![0; (CTAS * TPB) as usize]); CLOCKS];
            for op in ops {
                match op {
                    Op::Raise(i, c, t, e) => {
                        raise(&mut vs[i], c, t, e);
                        ps[i].raise(c, t, e);
                    }
                    Op::RaiseInPlace(i, c, t, e) => {
                        let before = ps[i].0[Plain::at(c, t)];
                        let done = vs[i].raise_in_place(CtaId(c), Tid(t), Epoch::new(e));
                        if done {
                            ps[i].raise(c, t, e);
                        } else {
                            // Only declined when something would have to change.
                            prop_assert!(before < e);
                        }
                    }
                    Op::RaiseAll(i, items) => {
                        let typed: Vec<(CtaId, Tid, Epoch)> = items
                            .iter()
                            .map(|&(c, t, e)| (CtaId(c), Tid(t), Epoch::new(e)))
                            .collect();
                        vs[i].raise_all(Tpb(TPB), &typed);
                        for (c, t, e) in items {
                            ps[i].raise(c, t, e);
                        }
                    }
                    Op::Join(i, j) => {
                        let (o, p) = (vs[j].clone(), ps[j].clone());
                        vs[i].join(&o);
                        ps[i].join(&p);
                    }
                    Op::Clone(i, j) => {
                        vs[i] = vs[j].clone();
                        ps[i] = ps[j].clone();
                    }
                    Op::Reset(i) => {
                        vs[i] = VClock::default();
                        ps[i].0.fill(0);
                    }
                    Op::Fill(i, e) => {
                        for c in 0..CTAS {
                            raise(&mut vs[i], c, c % TPB, e);
                            ps[i].raise(c, c % TPB, e);
                        }
                    }
                    Op::Share(i, j) => {
                        let o = vs[j].clone();
                        let before: Vec<*const Vec<Epoch>> =
                            vs[i].chunks().map(|(_, r)| Rc::as_ptr(r)).collect();
                        let changed = vs[i].share_equal_chunks(&o);
                        let after: Vec<*const Vec<Epoch>> =
                            vs[i].chunks().map(|(_, r)| Rc::as_ptr(r)).collect();
                        prop_assert_eq!(changed, before != after);
                        // Afterwards every chunk equal to `o`'s is `o`'s own.
                        for (c, r) in vs[i].chunks() {
                            if let Some((_, ro)) = o.chunks().find(|(x, _)| *x == c) {
                                if r[..] == ro[..] {
                                    prop_assert!(Rc::ptr_eq(r, ro), "chunk {} not shared", c.0);
                                }
                            }
                        }
                        prop_assert!(!vs[i].share_equal_chunks(&o), "a second call shared more");
                    }
                }
                for i in 0..CLOCKS {
                    agree(&vs[i], &ps[i])?;
                    for j in 0..CLOCKS {
                        let want = ps[i].compare(&ps[j]);
                        prop_assert_eq!(vs[i].compare(&vs[j]), want, "compare {} {}", i, j);
                        prop_assert_eq!(vs[i].dominates(&vs[j]), !want.1, "dominates {} {}", i, j);
                    }
                }
            }
        }
    }
}
