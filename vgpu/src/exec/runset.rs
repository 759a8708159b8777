//! The runnable warps: a bit per warp, and a Fenwick tree over the bit words' counts.
//!
//! The interpreter used to keep them as a sorted `Vec<u32>`: a warp arriving at a CTA
//! barrier was removed and inserted again at the release, each a `memmove` of the list's
//! tail — in a launch of 16,384 warps, 32 KiB on average, twice per warp and barrier:
//! `perf` of a shared-memory bitonic sort (1,024 CTAs of 512 threads) had `memmove` and
//! `set_runnable` at 17% of the run. Here both are a bit flip and `log₂(words)` counter
//! updates, and the `i`-th runnable warp in ascending order — what the uniformly random
//! scheduler's pick names — is found by descending the tree. The sorted list that other
//! schedulers take ([`Scheduler::pick`]'s slice) is made on demand and kept until the set
//! changes. Same picks as the list: `select(i)` is the list's `i`-th entry.

/// A set of warp ids below a fixed bound.
#[derive(Debug, Clone)]
pub(super) struct RunSet {
    bits: Vec<u64>,
    /// Fenwick tree (1-based) over `bits[k].count_ones()`.
    tree: Vec<u32>,
    /// The largest power of two not above `bits.len()` (the descent's first step).
    top: usize,
    len: usize,
    /// The members in ascending order, while `fresh`.
    list: Vec<u32>,
    fresh: bool,
}

impl RunSet {
    /// The set `0 .. n`.
    pub(super) fn full(n: usize) -> Self {
        let words = n.div_ceil(64);
        let mut bits = vec![u64::MAX; words];
        if !n.is_multiple_of(64) {
            bits[words - 1] = (1u64 << (n % 64)) - 1;
        }
        let mut tree = vec![0u32; words + 1];
        for (k, b) in bits.iter().enumerate() {
            tree[k + 1] += b.count_ones();
            let parent = (k + 1) + ((k + 1) & (k + 1).wrapping_neg());
            if parent <= words {
                tree[parent] += tree[k + 1];
            }
        }
        let top = if words == 0 {
            0
        } else {
            1 << (usize::BITS - 1 - words.leading_zeros())
        };
        RunSet {
            bits,
            tree,
            top,
            len: n,
            list: (0..n as u32).collect(),
            fresh: true,
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(super) fn contains(&self, w: u32) -> bool {
        self.bits
            .get(w as usize / 64)
            .is_some_and(|b| b >> (w % 64) & 1 != 0)
    }

    /// Puts `w` in (`on`) or takes it out; nothing when it already is so.
    #[inline]
    pub(super) fn set(&mut self, w: u32, on: bool) {
        let k = w as usize / 64;
        let Some(word) = self.bits.get_mut(k) else {
            return;
        };
        let bit = 1u64 << (w % 64);
        if (*word & bit != 0) == on {
            return;
        }
        *word ^= bit;
        self.fresh = false;
        let mut i = k + 1;
        if on {
            self.len += 1;
            while i < self.tree.len() {
                self.tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        } else {
            self.len -= 1;
            while i < self.tree.len() {
                self.tree[i] -= 1;
                i += i & i.wrapping_neg();
            }
        }
    }

    /// The `i`-th member in ascending order (`i < len`).
    #[inline]
    pub(super) fn select(&self, i: usize) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        // Descend the tree to the word holding it, then the bit within the word.
        let (mut at, mut left, mut step) = (0usize, i as u32, self.top);
        while step > 0 {
            let next = at + step;
            if next < self.tree.len() && self.tree[next] <= left {
                at = next;
                left -= self.tree[next];
            }
            step >>= 1;
        }
        let mut word = *self.bits.get(at)?;
        for _ in 0..left {
            word &= word - 1;
        }
        Some((at * 64) as u32 + word.trailing_zeros())
    }

    /// The members in `lo .. hi` (at most 64 apart), in ascending order, into `out`;
    /// returns how many.
    #[inline]
    pub(super) fn members_in(&self, lo: u32, hi: u32, out: &mut [u32; 64]) -> usize {
        let mut n = 0;
        let mut w = lo;
        while w < hi {
            let k = w as usize / 64;
            let Some(&word) = self.bits.get(k) else {
                break;
            };
            let end = hi.min((k as u32 + 1) * 64);
            let span = end - w;
            let mut m = (word >> (w % 64))
                & if span == 64 {
                    u64::MAX
                } else {
                    (1 << span) - 1
                };
            while m != 0 && n < out.len() {
                out[n] = w + m.trailing_zeros();
                n += 1;
                m &= m - 1;
            }
            w = end;
        }
        n
    }

    /// The members in `lo .. hi`, word by word: (first id of the word, its bits in range).
    #[inline]
    fn words_in(&self, lo: u32, hi: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let (first, last) = (lo as usize / 64, (hi as usize).div_ceil(64));
        self.bits
            .get(first..last.min(self.bits.len()))
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(move |(j, &b)| {
                let base = ((first + j) * 64) as u32;
                let from = lo.saturating_sub(base).min(64);
                let to = hi.saturating_sub(base).min(64);
                let keep = if to - from == 64 {
                    u64::MAX
                } else {
                    ((1u64 << (to - from)) - 1) << from
                };
                (base, b & keep)
            })
    }

    /// How many members are in `lo .. hi`.
    #[inline]
    pub(super) fn count_in(&self, lo: u32, hi: u32) -> usize {
        self.words_in(lo, hi)
            .map(|(_, m)| m.count_ones() as usize)
            .sum()
    }

    /// The `i`-th member in `lo .. hi`, in ascending order.
    #[inline]
    pub(super) fn nth_in(&self, lo: u32, hi: u32, mut i: usize) -> Option<u32> {
        for (base, mut m) in self.words_in(lo, hi) {
            let n = m.count_ones() as usize;
            if i < n {
                for _ in 0..i {
                    m &= m - 1;
                }
                return Some(base + m.trailing_zeros());
            }
            i -= n;
        }
        None
    }

    /// Makes [`RunSet::list`] current.
    pub(super) fn refresh(&mut self) {
        if self.fresh {
            return;
        }
        self.list.clear();
        for (k, &b) in self.bits.iter().enumerate() {
            let mut m = b;
            while m != 0 {
                self.list.push((k * 64) as u32 + m.trailing_zeros());
                m &= m - 1;
            }
        }
        self.fresh = true;
    }

    /// The members in ascending order, as of the last [`RunSet::refresh`] (the caller
    /// refreshes first).
    #[inline]
    pub(super) fn list(&self) -> &[u32] {
        debug_assert!(self.fresh);
        &self.list
    }

    /// Every member, in ascending order.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(k, &b)| {
            let mut m = b;
            std::iter::from_fn(move || {
                (m != 0).then(|| {
                    let w = (k * 64) as u32 + m.trailing_zeros();
                    m &= m - 1;
                    w
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Against a sorted list, under random inserts and removals, for sizes around the
    /// word and tree boundaries.
    #[test]
    fn agrees_with_a_sorted_list() {
        for n in [1usize, 5, 63, 64, 65, 127, 128, 200, 1000, 4097] {
            let mut set = RunSet::full(n);
            let mut list: Vec<u32> = (0..n as u32).collect();
            let mut rng = Rng::new(n as u64);
            for round in 0..3000 {
                let w = rng.below(n as u64) as u32;
                let on = rng.below(2) == 0;
                set.set(w, on);
                match (list.binary_search(&w), on) {
                    (Ok(i), false) => {
                        list.remove(i);
                    }
                    (Err(i), true) => list.insert(i, w),
                    _ => {}
                }
                assert_eq!(set.len(), list.len());
                assert_eq!(set.contains(w), on);
                if round % 97 == 0 || n < 70 {
                    for (i, &x) in list.iter().enumerate() {
                        assert_eq!(set.select(i), Some(x), "n {n} i {i}");
                    }
                    assert_eq!(set.select(list.len()), None);
                    assert!(set.iter().eq(list.iter().copied()));
                    set.refresh();
                    assert_eq!(set.list(), list.as_slice());
                    let lo = rng.below(n as u64) as u32;
                    let hi = (lo + 1 + rng.below(64) as u32).min(n as u32);
                    let mut out = [0u32; 64];
                    let k = set.members_in(lo, hi, &mut out);
                    let want: Vec<u32> = list
                        .iter()
                        .copied()
                        .filter(|&x| x >= lo && x < hi)
                        .collect();
                    assert_eq!(&out[..k], want.as_slice(), "n {n} {lo}..{hi}");
                    assert_eq!(set.count_in(lo, hi), want.len());
                    for (i, &x) in want.iter().enumerate() {
                        assert_eq!(set.nth_in(lo, hi, i), Some(x));
                    }
                    assert_eq!(set.nth_in(lo, hi, want.len()), None);
                }
            }
        }
    }
}
