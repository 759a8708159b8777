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

use std::rc::Rc;

/// A thread's logical time. 0 means "nothing".
pub type Epoch = u32;

type Chunk = Rc<Vec<Epoch>>;

/// A vector clock over the threads of one launch, chunked per CTA.
#[derive(Debug, Clone, Default)]
pub struct VClock {
    /// Sorted by CTA index. `None` is the empty clock: a default clock allocates nothing
    /// (every thread of a launch starts with one, and one was an allocation per thread).
    chunks: Option<Rc<Vec<(u32, Chunk)>>>,
}

impl VClock {
    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// The chunk list (empty for the empty clock).
    #[inline]
    fn list(&self) -> &[(u32, Chunk)] {
        self.chunks.as_deref().map_or(&[], |v| v.as_slice())
    }

    /// The chunk list, unshared (copy on write).
    #[inline]
    fn list_mut(&mut self) -> &mut Vec<(u32, Chunk)> {
        Rc::make_mut(self.chunks.get_or_insert_with(Default::default))
    }

    /// Whether the two clocks share their chunk list (so are equal).
    #[inline]
    fn same(&self, other: &VClock) -> bool {
        match (&self.chunks, &other.chunks) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    #[inline]
    fn find(&self, cta: u32) -> Result<usize, usize> {
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
    pub fn get(&self, cta: u32, tid: u32) -> Epoch {
        match self.find(cta) {
            Ok(i) => self.list()[i].1.get(tid as usize).copied().unwrap_or(0),
            Err(_) => 0,
        }
    }

    /// The entries of CTA `cta`, if the clock has any.
    #[inline]
    pub fn chunk(&self, cta: u32) -> Option<&[Epoch]> {
        self.find(cta).ok().map(|i| self.list()[i].1.as_slice())
    }

    /// Raises the entry of (`cta`, `tid`) to at least `e` if that needs no copy and no
    /// new chunk: it already is, or this clock owns both its chunk list and that chunk
    /// (nothing else can see the change). Returns whether the entry is now ≥ `e`.
    #[inline]
    pub fn raise_in_place(&mut self, cta: u32, tid: u32, e: Epoch) -> bool {
        let Ok(i) = self.find(cta) else {
            return e == 0;
        };
        if self.list()[i].1.get(tid as usize).copied().unwrap_or(0) >= e {
            return true;
        }
        let entry = self
            .chunks
            .as_mut()
            .and_then(Rc::get_mut)
            .and_then(|list| Rc::get_mut(&mut list[i].1))
            .and_then(|chunk| chunk.get_mut(tid as usize));
        match entry {
            Some(x) => {
                *x = e;
                true
            }
            None => false,
        }
    }

    /// Raises the entry of (`cta`, `tid`) to at least `e`; `tpb` sizes a new chunk.
    pub fn raise(&mut self, cta: u32, tid: u32, tpb: u32, e: Epoch) {
        if self.get(cta, tid) >= e {
            return;
        }
        let chunks = self.list_mut();
        let i = match chunks.binary_search_by_key(&cta, |(k, _)| *k) {
            Ok(i) => i,
            Err(i) => {
                chunks.insert(i, (cta, Rc::new(vec![0; tpb as usize])));
                i
            }
        };
        let chunk = Rc::make_mut(&mut chunks[i].1);
        if let Some(x) = chunk.get_mut(tid as usize) {
            *x = e;
        }
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
                    s_gt |= ra.iter().any(|e| *e > 0);
                    i += 1;
                }
                (Some((_, ra)), None) => {
                    s_gt |= ra.iter().any(|e| *e > 0);
                    i += 1;
                }
                (_, Some((_, rb))) => {
                    o_gt |= rb.iter().any(|e| *e > 0);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        (s_gt, o_gt)
    }

    /// Raises many entries at once, `(cta, tid, epoch)` (a barrier's arrivals): one
    /// copy-on-write per touched chunk instead of one uniqueness check per entry.
    pub fn raise_all(&mut self, tpb: u32, items: &[(u32, u32, Epoch)]) {
        if items.iter().all(|&(c, t, e)| self.get(c, t) >= e) {
            return;
        }
        self.raise_all_unchecked(tpb, items);
    }

    /// [`VClock::raise_all`] without first checking whether anything changes (for callers
    /// that know it does: the check is a lookup per item, and copies the list anyway).
    pub fn raise_all_unchecked(&mut self, tpb: u32, items: &[(u32, u32, Epoch)]) {
        let chunks = self.list_mut();
        // Items arrive grouped by CTA (a barrier is per CTA or per warp); find the chunk
        // (and copy it) only when the CTA changes.
        let mut i = 0;
        while i < items.len() {
            let cta = items[i].0;
            let at = match chunks.binary_search_by_key(&cta, |(k, _)| *k) {
                Ok(at) => at,
                Err(at) => {
                    chunks.insert(at, (cta, Rc::new(vec![0; tpb as usize])));
                    at
                }
            };
            let chunk = Rc::make_mut(&mut chunks[at].1);
            while i < items.len() && items[i].0 == cta {
                let (_, t, e) = items[i];
                if let Some(x) = chunk.get_mut(t as usize) {
                    *x = (*x).max(e);
                }
                i += 1;
            }
        }
    }

    /// `self := self ⊔ other`. Keeps `self` when it already dominates, adopts `other`
    /// when that dominates, and otherwise merges chunk by chunk (sharing unchanged chunks).
    pub fn join(&mut self, other: &VClock) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            self.chunks = other.chunks.clone();
            return;
        }
        if self.same(other) {
            return;
        }
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
                        if rb.iter().any(|e| *e > 0) {
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

    /// The chunks, by CTA (for folding a clock into another structure without copying).
    pub fn chunks(&self) -> impl Iterator<Item = (u32, &Rc<Vec<Epoch>>)> + '_ {
        self.list().iter().map(|(c, r)| (*c, r))
    }
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
        t_gt |= theirs[mine.len()..].iter().any(|e| *e > 0);
    }
    if mine.len() > theirs.len() {
        m_gt |= mine[theirs.len()..].iter().any(|e| *e > 0);
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
        m.resize(theirs.len(), 0);
    }
    for (a, b) in m.iter_mut().zip(theirs.iter()) {
        *a = (*a).max(*b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_raise_and_sharing() {
        let mut a = VClock::default();
        a.raise(0, 3, 8, 5);
        a.raise(2, 1, 8, 7);
        let mut b = VClock::default();
        b.raise(0, 3, 8, 2);
        b.raise(1, 0, 8, 9);
        let mut j = a.clone();
        j.join(&b);
        assert_eq!(j.get(0, 3), 5);
        assert_eq!(j.get(1, 0), 9);
        assert_eq!(j.get(2, 1), 7);
        assert_eq!(j.get(3, 0), 0);
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
}
