//! Binary relations over at most [`MAX`] events, one bit row per event.

/// Most events (memory events, fences, barrier nodes, one initial write per location) a
/// candidate execution may have.
pub const MAX: usize = 128;

/// A set of events.
pub type Set = u128;

/// Iterates over the members of a set, in increasing order.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if s == 0 {
            None
        } else {
            let i = s.trailing_zeros() as usize;
            s &= s - 1;
            Some(i)
        }
    })
}

/// A relation: `rows[a]` holds every `b` with `a → b`.
#[derive(Clone, PartialEq, Eq)]
pub struct Rel {
    pub rows: Vec<Set>,
}

impl std::fmt::Debug for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pairs: Vec<(usize, usize)> = self.pairs().collect();
        write!(f, "{pairs:?}")
    }
}

impl Rel {
    pub fn new(n: usize) -> Rel {
        Rel { rows: vec![0; n] }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|r| *r == 0)
    }

    #[inline]
    pub fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= 1 << b;
    }

    #[inline]
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a] >> b & 1 == 1
    }

    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(a, r)| members(*r).map(move |b| (a, b)))
    }

    pub fn union_with(&mut self, o: &Rel) {
        for (a, b) in self.rows.iter_mut().zip(&o.rows) {
            *a |= *b;
        }
    }

    pub fn union(&self, o: &Rel) -> Rel {
        let mut r = self.clone();
        r.union_with(o);
        r
    }

    /// `self ; o`.
    pub fn then(&self, o: &Rel) -> Rel {
        let mut r = Rel::new(self.len());
        for (a, row) in self.rows.iter().enumerate() {
            let mut acc = 0;
            for m in members(*row) {
                acc |= o.rows[m];
            }
            r.rows[a] = acc;
        }
        r
    }

    pub fn inverse(&self) -> Rel {
        let mut r = Rel::new(self.len());
        for (a, b) in self.pairs() {
            r.add(b, a);
        }
        r
    }

    /// Only the pairs whose source is in `from` and target in `to`.
    pub fn restrict(&self, from: Set, to: Set) -> Rel {
        let mut r = Rel::new(self.len());
        for m in members(from) {
            r.rows[m] = self.rows[m] & to;
        }
        r
    }

    /// The transitive closure (Warshall, a row at a time).
    pub fn closure(&self) -> Rel {
        let mut r = self.clone();
        let n = r.len();
        for k in 0..n {
            let rk = r.rows[k];
            if rk == 0 {
                continue;
            }
            let bit = 1u128 << k;
            for i in 0..n {
                if r.rows[i] & bit != 0 {
                    r.rows[i] |= rk;
                }
            }
        }
        r
    }

    /// No `a → a`.
    pub fn irreflexive(&self) -> bool {
        self.rows.iter().enumerate().all(|(a, r)| r >> a & 1 == 0)
    }

    /// No cycle: the closure is irreflexive.
    pub fn acyclic(&self) -> bool {
        self.closure().irreflexive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_and_cycles() {
        let mut r = Rel::new(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.acyclic());
        let c = r.closure();
        assert!(c.has(0, 2) && !c.has(2, 0) && !c.has(0, 3));
        r.add(2, 0);
        assert!(!r.acyclic());
        let mut s = Rel::new(4);
        s.add(1, 3);
        let t = r.then(&s);
        assert_eq!(t.pairs().collect::<Vec<_>>(), vec![(0, 3)]);
        assert!(r.inverse().has(1, 0));
        assert_eq!(members(0b1010).collect::<Vec<_>>(), vec![1, 3]);
        let mut big = Rel::new(MAX);
        big.add(MAX - 1, 0);
        big.add(0, MAX - 1);
        assert!(!big.acyclic());
        assert_eq!(r.restrict(0b0001, 0b0010).pairs().count(), 1);
    }
}
