//! Observations: stores a thread has read through a *morally strong* read, beyond what
//! happens-before already tells it.
//!
//! PTX's causality order may begin with one observation step (PTX ISA §8.9.x, "Causality
//! order"; in Dat3M's `ptx-v7.5.cat`: `cause = cause-base | (observation; cause-base)`):
//! a store `W` that a thread read through a morally strong read constrains that thread's
//! later reads, and those of every thread it later synchronizes with, exactly like a store
//! that happens before them (the Causality axiom then forbids reading anything
//! coherence-ordered before `W`).
//!
//! Stores are named by per-launch sequence numbers that grow in the order stores enter the
//! history, and an observation is kept as a per-location *threshold*: "every store to this
//! location whose sequence number is ≤ s counts as observed" (the `weak` model keys a
//! location by its 8-byte block and offset). A threshold also covers
//! older stores that were never read, which can only forbid more, so the
//! over-approximation removes behaviours and never adds any. At most [`CAP`] locations are
//! kept exactly; when more are observed, the smallest threshold is folded into a
//! watermark that applies to every location (again an over-approximation).

use std::rc::Rc;

/// Locations with their own threshold; more fold into the watermark.
pub const CAP: usize = 8;

/// A thread's observations. Cheap to clone (shared until written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Obs(Option<Rc<ObsSet>>);

/// The thresholds inline (a fixed array, `n` in use): a thread's first observation, and
/// every copy-on-write after a barrier shared the set, was two allocations and a
/// reallocation per growth step — a fifth of `exec --model weak` on a shared-memory
/// histogram (callgrind) went to `malloc`/`realloc`/`free` for these lists.
#[derive(Debug, Clone, Default)]
struct ObsSet {
    /// (location key, threshold), sorted by key; `keys[..n]` are in use (one spare slot for
    /// the insertion that overflows, folded at once).
    keys: [(u64, u64); CAP + 1],
    n: u8,
    /// Every store with a sequence number ≤ this counts as observed, at every location.
    watermark: u64,
}

impl PartialEq for ObsSet {
    fn eq(&self, o: &Self) -> bool {
        self.watermark == o.watermark && self.keys() == o.keys()
    }
}

impl Eq for ObsSet {}

impl ObsSet {
    fn keys(&self) -> &[(u64, u64)] {
        &self.keys[..self.n as usize]
    }

    fn find(&self, key: u64) -> Result<usize, usize> {
        self.keys().binary_search_by_key(&key, |(k, _)| *k)
    }

    /// Whether every threshold of `o` is implied by `self` (by the watermark, or by an
    /// equal or higher threshold of the same location). Both key lists are sorted, so one
    /// merge walk answers it: a binary search per key of `o` was most of
    /// [`Obs::join`]'s time, and `join` a tenth of `fuzz --model weak` on the
    /// work-stealing campaign (`ct_octree`, `perf`), where acquires join the same
    /// observations again and again.
    #[inline]
    fn covers_keys(&self, o: &ObsSet) -> bool {
        let mine = self.keys();
        let mut j = 0;
        for &(k, t) in o.keys() {
            if t <= self.watermark {
                continue;
            }
            while j < mine.len() && mine[j].0 < k {
                j += 1;
            }
            if j == mine.len() || mine[j].0 != k || mine[j].1 < t {
                return false;
            }
        }
        true
    }

    fn remove(&mut self, i: usize) -> (u64, u64) {
        let n = self.n as usize;
        let x = self.keys[i];
        self.keys.copy_within(i + 1..n, i);
        self.n -= 1;
        x
    }

    /// Keeps the thresholds above the watermark.
    fn drop_covered(&mut self) {
        let w = self.watermark;
        let mut j = 0;
        for i in 0..self.n as usize {
            if self.keys[i].1 > w {
                self.keys[j] = self.keys[i];
                j += 1;
            }
        }
        self.n = j as u8;
    }

    fn raise(&mut self, key: u64, seq: u64) {
        if seq <= self.watermark {
            return;
        }
        match self.find(key) {
            Ok(i) => self.keys[i].1 = self.keys[i].1.max(seq),
            Err(i) => {
                let n = self.n as usize;
                self.keys.copy_within(i..n, i + 1);
                self.keys[i] = (key, seq);
                self.n += 1;
                if self.n as usize > CAP {
                    // Fold the least informative threshold into the watermark.
                    let (j, _) = self
                        .keys()
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, (_, s))| *s)
                        .unwrap_or((0, &(0, 0)));
                    let (_, s) = self.remove(j);
                    self.watermark = self.watermark.max(s);
                    self.drop_covered();
                }
            }
        }
    }
}

impl Obs {
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `self` is empty or shares `other`'s set (joining it into `other` changes nothing).
    #[inline]
    pub fn same_or_empty(&self, other: &Obs) -> bool {
        match (&self.0, &other.0) {
            (None, _) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (Some(_), None) => false,
        }
    }

    /// Stores to `key` with a sequence number ≤ the result count as observed.
    #[inline]
    pub fn threshold(&self, key: u64) -> u64 {
        match &self.0 {
            None => 0,
            Some(s) => {
                let own = s.find(key).map_or(0, |i| s.keys[i].1);
                own.max(s.watermark)
            }
        }
    }

    /// Records that store `seq` of location `key` was observed.
    pub fn record(&mut self, key: u64, seq: u64) {
        if self.threshold(key) >= seq {
            return;
        }
        let s = self.0.get_or_insert_with(Default::default);
        Rc::make_mut(s).raise(key, seq);
    }

    /// `self := self ⊔ other`.
    ///
    /// The common cases inline (nothing to join, or the very same set: a barrier's
    /// arrivals all share the set the last barrier handed out), the merge out of line.
    #[inline]
    pub fn join(&mut self, other: &Obs) {
        let Some(o) = &other.0 else { return };
        match &self.0 {
            Some(s) if Rc::ptr_eq(s, o) => {}
            _ => self.join_slow(other),
        }
    }

    #[inline(never)]
    fn join_slow(&mut self, other: &Obs) {
        let Some(o) = &other.0 else { return };
        match &mut self.0 {
            None => self.0 = Some(o.clone()),
            Some(s) => {
                if o.watermark <= s.watermark && s.covers_keys(o) {
                    return;
                }
                let m = Rc::make_mut(s);
                m.watermark = m.watermark.max(o.watermark);
                m.drop_covered();
                for &(k, t) in o.keys() {
                    m.raise(k, t);
                }
            }
        }
    }

    /// Bytes held (for memory statistics).
    pub fn heap_bytes(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |_| std::mem::size_of::<ObsSet>() + 16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_join_and_overflow() {
        let mut a = Obs::default();
        assert_eq!(a.threshold(8), 0);
        a.record(8, 5);
        a.record(8, 3);
        assert_eq!(a.threshold(8), 5);
        assert_eq!(a.threshold(16), 0);
        let mut b = Obs::default();
        b.record(16, 7);
        a.join(&b);
        assert_eq!((a.threshold(8), a.threshold(16)), (5, 7));
        // Overflow: the smallest threshold becomes the watermark for every block.
        let mut c = Obs::default();
        for i in 0..=CAP as u64 {
            c.record(i * 8, 100 + i);
        }
        assert_eq!(c.threshold(4096), 100);
        assert_eq!(c.threshold(8), 101);
        // Never lower than before (an over-approximation only grows).
        for i in 0..=CAP as u64 {
            assert!(c.threshold(i * 8) >= 100 + i);
        }
    }

    /// The merge walk of `covers_keys` answers what a binary search per key answers.
    #[test]
    fn covers_keys_is_the_per_key_test() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut answers = [0; 2];
        for _ in 0..20_000 {
            let mut sets = [ObsSet::default(), ObsSet::default()];
            for s in &mut sets {
                for _ in 0..next(12) {
                    s.raise(next(16) * 8, 1 + next(20));
                }
                if next(4) == 0 {
                    s.watermark = s.watermark.max(next(12));
                    s.drop_covered();
                }
            }
            let [s, o] = &sets;
            let slow = o
                .keys()
                .iter()
                .all(|(k, t)| *t <= s.watermark || s.find(*k).is_ok_and(|i| s.keys[i].1 >= *t));
            assert_eq!(s.covers_keys(o), slow, "{s:?} / {o:?}");
            answers[slow as usize] += 1;
        }
        assert!(answers.iter().all(|&n| n > 1000), "{answers:?}");
    }
}
