//! The numbers happens-before is made of, each its own type: a CTA's index ([`CtaId`]), a
//! thread's index inside its CTA ([`Tid`]), the number of threads per CTA ([`Tpb`]) and a
//! thread's logical time ([`Epoch`]). They were all bare `u32`s, and a clock entry is
//! addressed by three of them at once (`raise(cta, tid, tpb, e)`): swapping two was a
//! silent wrong answer, now it does not compile.
//!
//! Every type is `#[repr(transparent)]` over its `u32` and every method `#[inline]`: the
//! clocks are on the hot path of the `weak` model and the race check, and a `Vec<Epoch>`
//! chunk must stay a `Vec<u32>` in memory and in the code that scans it.
//!
//! A thread's *global* index (`cta · tpb + tid`, the vgpu's `ThreadRef::global`) stays a
//! `u32`: it is what the vgpu, shadow memory and the `weak` model's histories are keyed
//! by, and it is not an argument next to the others here.

use fencehound_vgpu::ThreadRef;
use std::fmt;

/// A CTA's linear index in the grid (`ThreadRef::cta`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct CtaId(pub u32);

/// A thread's linear index inside its CTA (`ThreadRef::tid`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Tid(pub u32);

/// Threads per CTA of a launch: the length of a clock chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Tpb(pub u32);

impl CtaId {
    /// The CTA of thread `t`.
    #[inline]
    pub fn of(t: ThreadRef) -> CtaId {
        CtaId(t.cta)
    }

    /// As an index (into per-CTA tables).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Tid {
    /// The index of thread `t` inside its CTA.
    #[inline]
    pub fn of(t: ThreadRef) -> Tid {
        Tid(t.tid)
    }

    /// As an index (into a clock chunk).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Tpb {
    /// As a length (of a clock chunk).
    #[inline]
    pub fn len(self) -> usize {
        self.0 as usize
    }

    /// Whether CTAs have no threads (only a default, never a launch: `Hb::begin` makes
    /// it at least 1).
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The global index of thread `tid` of CTA `cta` (`cta · tpb + tid`).
    #[inline]
    pub fn global(self, cta: CtaId, tid: Tid) -> u32 {
        cta.0 * self.0 + tid.0
    }
}

/// A thread's logical time. [`Epoch::NONE`] (0) means "nothing"; a launch starts every
/// thread at [`Epoch::FIRST`].
///
/// A thread's epoch grows by one each time it publishes what it knows (a release, a
/// release-capable fence, a barrier arrival) or acquires with a fence, and only through
/// [`Epoch::next`], which panics rather than wrap: a wrapped epoch would be *smaller* than
/// the ones before it, so clocks that cover the thread's early accesses would suddenly
/// cover its later ones too — happens-before edges that do not exist, hiding races and
/// forbidding stale reads. It cannot happen in practice: epochs restart at every launch,
/// and one thread would have to synchronize 2³² − 1 ≈ 4.3 billion times in one launch. A
/// synchronization costs the vgpu at least tens of nanoseconds (a fence snapshots the
/// thread's knowledge), so that is at least tens of seconds, more likely many minutes, of
/// one thread doing nothing else, where real kernels synchronize a handful of times per
/// thread (and `fencehound exec` stops a launch after 10 minutes by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Epoch(u32);

impl Epoch {
    /// "Nothing": below every access's epoch.
    pub const NONE: Epoch = Epoch(0);
    /// Every thread's epoch at the start of a launch.
    pub const FIRST: Epoch = Epoch(1);

    /// The epoch with number `n` (0 is [`Epoch::NONE`]).
    #[inline]
    pub const fn new(n: u32) -> Epoch {
        Epoch(n)
    }

    /// Its number.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether this is [`Epoch::NONE`].
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The next epoch. Panics (with a message) instead of wrapping; see the type's docs
    /// for why it cannot happen in practice.
    #[inline]
    #[must_use]
    pub fn next(self) -> Epoch {
        match self.0.checked_add(1) {
            Some(n) => Epoch(n),
            None => overflow(),
        }
    }

    /// `*self = self.next()`.
    #[inline]
    pub fn advance(&mut self) {
        *self = self.next();
    }
}

#[cold]
#[inline(never)]
fn overflow() -> ! {
    panic!(
        "fencehound-hb: a thread's epoch overflowed (2^32 - 1 synchronizations by one thread \
         in one launch); refusing to wrap, which would make happens-before wrong"
    )
}

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newtypes_are_their_u32() {
        use std::mem::{align_of, size_of};
        assert_eq!(size_of::<Epoch>(), 4);
        assert_eq!(align_of::<Epoch>(), 4);
        assert_eq!(size_of::<(CtaId, Tid, Epoch)>(), 12);
        assert_eq!(size_of::<Option<std::rc::Rc<Vec<Epoch>>>>(), 8);
    }

    #[test]
    fn epochs_grow_by_one_and_never_wrap() {
        assert!(Epoch::NONE < Epoch::FIRST);
        assert_eq!(Epoch::NONE.next(), Epoch::FIRST);
        let mut e = Epoch::new(41);
        e.advance();
        assert_eq!(e.get(), 42);
        assert_eq!(Epoch::new(u32::MAX - 1).next().get(), u32::MAX);
    }

    #[test]
    #[should_panic(expected = "epoch overflowed")]
    fn an_epoch_never_wraps() {
        let _ = Epoch::new(u32::MAX).next();
    }

    #[test]
    fn global_index() {
        assert_eq!(Tpb(256).global(CtaId(3), Tid(5)), 3 * 256 + 5);
    }
}
