//! Memory orderings as happens-before takes them: one type per operation kind.
//!
//! The vgpu describes an access by one [`Sem`] whatever its kind, so a read could be
//! handed to the engine as `Release` and a write as `Acquire`. Here a read (a load, or the
//! read half of a read-modify-write) has a [`ReadOrd`], which cannot release, and a write
//! (a store, or the write half of an RMW) a [`WriteOrd`], which cannot acquire. The
//! conversion from [`Sem`] happens once, at the boundary, and says what each combination
//! means:
//!
//! | `Sem` | load | store | RMW read half | RMW write half |
//! |---|---|---|---|---|
//! | `Weak` | weak | weak | weak | weak |
//! | `Volatile`, `Relaxed` | relaxed | relaxed | relaxed | relaxed |
//! | `Acquire` | acquire | *impossible* | acquire | relaxed |
//! | `Release` | *impossible* | release | relaxed | release |
//! | `AcqRel` | *impossible* | *impossible* | acquire | release |
//! | `Sc` | acquire | release | acquire | release |
//!
//! (`volatile` is `.relaxed.sys`; the scope travels separately.) PTX has no `ld.release`,
//! `ld.acq_rel`, `st.acquire` or `st.acq_rel`, and the vgpu's decoder rejects them, so the
//! impossible cells never reach the engine from a kernel. Should one arrive anyway (a hook
//! event built by hand), a debug build panics, and a release build reads it as the
//! matching half of an RMW with the same semantics — an `ld.release` as a relaxed read, an
//! `st.acq_rel` as a release — which is what the engine did when it took a bare `Sem`.

use fencehound_vgpu::{AccessKind, Sem};

/// The ordering of a read: a load, or the read half of a read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadOrd {
    /// `ld` / `ld.weak`: not morally strong with anything.
    Weak,
    /// `ld.relaxed`, `ld.volatile`, and the read half of a relaxed or release RMW.
    Relaxed,
    /// `ld.acquire`, and the read half of an acquire, acq_rel or sc RMW.
    Acquire,
}

/// The ordering of a write: a store, or the write half of a read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteOrd {
    /// `st` / `st.weak`: not morally strong with anything.
    Weak,
    /// `st.relaxed`, `st.volatile`, and the write half of a relaxed or acquire RMW.
    Relaxed,
    /// `st.release`, and the write half of a release, acq_rel or sc RMW.
    Release,
}

impl ReadOrd {
    /// The read half of an RMW (`atom`) with semantics `sem`.
    #[inline]
    pub fn of_rmw(sem: Sem) -> ReadOrd {
        match sem {
            Sem::Weak => ReadOrd::Weak,
            Sem::Volatile | Sem::Relaxed | Sem::Release => ReadOrd::Relaxed,
            Sem::Acquire | Sem::AcqRel | Sem::Sc => ReadOrd::Acquire,
        }
    }

    /// A load with semantics `sem`. `Release` and `AcqRel` are impossible for a load (see
    /// the module docs): a debug build panics, a release build takes the RMW read half.
    /// Every possible load means what the RMW read half with its `Sem` means, so after the
    /// check this *is* [`ReadOrd::of_rmw`] (one table lookup on the hot path).
    #[inline]
    pub fn of_load(sem: Sem) -> ReadOrd {
        if matches!(sem, Sem::Release | Sem::AcqRel) {
            impossible("a load", sem);
        }
        ReadOrd::of_rmw(sem)
    }

    /// The read of an access of kind `kind` with semantics `sem`: a load, or the read half
    /// of an RMW. A store reads nothing: a debug build panics, a release build takes the
    /// RMW read half.
    #[inline]
    pub fn of(kind: AccessKind, sem: Sem) -> ReadOrd {
        match kind {
            AccessKind::Load => return ReadOrd::of_load(sem),
            AccessKind::Atomic => {}
            AccessKind::Store => impossible("the read of a store", sem),
        }
        ReadOrd::of_rmw(sem)
    }

    /// Strong (morally strong with other strong accesses of sufficient scope).
    #[inline]
    pub fn is_strong(self) -> bool {
        self != ReadOrd::Weak
    }

    /// Completes an acquire pattern by itself (acquire pattern form 1).
    #[inline]
    pub fn acquires(self) -> bool {
        self == ReadOrd::Acquire
    }
}

impl WriteOrd {
    /// The write half of an RMW (`atom`, `red`) with semantics `sem`.
    #[inline]
    pub fn of_rmw(sem: Sem) -> WriteOrd {
        match sem {
            Sem::Weak => WriteOrd::Weak,
            Sem::Volatile | Sem::Relaxed | Sem::Acquire => WriteOrd::Relaxed,
            Sem::Release | Sem::AcqRel | Sem::Sc => WriteOrd::Release,
        }
    }

    /// A store with semantics `sem`. `Acquire` and `AcqRel` are impossible for a store
    /// (see the module docs): a debug build panics, a release build takes the RMW write
    /// half. Every possible store means what the RMW write half with its `Sem` means, so
    /// after the check this *is* [`WriteOrd::of_rmw`].
    #[inline]
    pub fn of_store(sem: Sem) -> WriteOrd {
        if matches!(sem, Sem::Acquire | Sem::AcqRel) {
            impossible("a store", sem);
        }
        WriteOrd::of_rmw(sem)
    }

    /// The write of an access of kind `kind` with semantics `sem`: a store, or the write
    /// half of an RMW. A load writes nothing: a debug build panics, a release build takes
    /// the RMW write half.
    #[inline]
    pub fn of(kind: AccessKind, sem: Sem) -> WriteOrd {
        match kind {
            AccessKind::Store => return WriteOrd::of_store(sem),
            AccessKind::Atomic => {}
            AccessKind::Load => impossible("the write of a load", sem),
        }
        WriteOrd::of_rmw(sem)
    }

    /// Strong (morally strong with other strong accesses of sufficient scope).
    #[inline]
    pub fn is_strong(self) -> bool {
        self != WriteOrd::Weak
    }

    /// Begins a release pattern by itself (release pattern form 1).
    #[inline]
    pub fn releases(self) -> bool {
        self == WriteOrd::Release
    }
}

/// An ordering PTX does not have for this kind of operation (and the vgpu's decoder
/// rejects) reached the engine. (Empty in release builds, where the call disappears.)
#[inline]
#[track_caller]
fn impossible(what: &str, sem: Sem) {
    debug_assert!(
        false,
        "fencehound-hb: {what} with {sem:?} semantics: PTX has no such operation (the \
         vgpu's decoder rejects it)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{acquires, releases, strong};

    const ALL: [Sem; 7] = [
        Sem::Weak,
        Sem::Volatile,
        Sem::Relaxed,
        Sem::Acquire,
        Sem::Release,
        Sem::AcqRel,
        Sem::Sc,
    ];

    /// The module docs' table, cell by cell (`None`: impossible).
    #[test]
    fn conversions_are_the_documented_table() {
        use ReadOrd as R;
        use WriteOrd as W;
        type Row = (Sem, Option<R>, Option<W>, R, W);
        let table: [Row; 7] = [
            (Sem::Weak, Some(R::Weak), Some(W::Weak), R::Weak, W::Weak),
            (
                Sem::Volatile,
                Some(R::Relaxed),
                Some(W::Relaxed),
                R::Relaxed,
                W::Relaxed,
            ),
            (
                Sem::Relaxed,
                Some(R::Relaxed),
                Some(W::Relaxed),
                R::Relaxed,
                W::Relaxed,
            ),
            (Sem::Acquire, Some(R::Acquire), None, R::Acquire, W::Relaxed),
            (Sem::Release, None, Some(W::Release), R::Relaxed, W::Release),
            (Sem::AcqRel, None, None, R::Acquire, W::Release),
            (
                Sem::Sc,
                Some(R::Acquire),
                Some(W::Release),
                R::Acquire,
                W::Release,
            ),
        ];
        for (sem, load, store, rmw_r, rmw_w) in table {
            if let Some(l) = load {
                assert_eq!(ReadOrd::of_load(sem), l, "{sem:?}");
                assert_eq!(ReadOrd::of(AccessKind::Load, sem), l, "{sem:?}");
            }
            if let Some(s) = store {
                assert_eq!(WriteOrd::of_store(sem), s, "{sem:?}");
                assert_eq!(WriteOrd::of(AccessKind::Store, sem), s, "{sem:?}");
            }
            assert_eq!(ReadOrd::of_rmw(sem), rmw_r, "{sem:?}");
            assert_eq!(WriteOrd::of_rmw(sem), rmw_w, "{sem:?}");
            assert_eq!(ReadOrd::of(AccessKind::Atomic, sem), rmw_r, "{sem:?}");
            assert_eq!(WriteOrd::of(AccessKind::Atomic, sem), rmw_w, "{sem:?}");
        }
    }

    /// The halves of an RMW, and every possible load and store, mean exactly what the
    /// `Sem` predicates said when the engine took a bare `Sem`.
    #[test]
    fn conversions_agree_with_the_sem_predicates() {
        for sem in ALL {
            let (r, w) = (ReadOrd::of_rmw(sem), WriteOrd::of_rmw(sem));
            assert_eq!(r.acquires(), acquires(sem), "{sem:?}");
            assert_eq!(w.releases(), releases(sem), "{sem:?}");
            assert_eq!(r.is_strong(), strong(sem), "{sem:?}");
            assert_eq!(w.is_strong(), strong(sem), "{sem:?}");
            assert_eq!(ReadOrd::of(AccessKind::Atomic, sem), r);
            assert_eq!(WriteOrd::of(AccessKind::Atomic, sem), w);
            if !matches!(sem, Sem::Release | Sem::AcqRel) {
                assert_eq!(ReadOrd::of(AccessKind::Load, sem), r, "{sem:?}");
            }
            if !matches!(sem, Sem::Acquire | Sem::AcqRel) {
                assert_eq!(WriteOrd::of(AccessKind::Store, sem), w, "{sem:?}");
            }
        }
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "PTX has no such operation"))]
    fn a_release_load_is_impossible() {
        // Release builds: the RMW read half, as before the types.
        assert_eq!(ReadOrd::of_load(Sem::Release), ReadOrd::Relaxed);
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "PTX has no such operation"))]
    fn an_acq_rel_store_is_impossible() {
        assert_eq!(WriteOrd::of_store(Sem::AcqRel), WriteOrd::Release);
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "PTX has no such operation"))]
    fn the_read_of_a_store_is_impossible() {
        assert_eq!(
            ReadOrd::of(AccessKind::Store, Sem::Acquire),
            ReadOrd::Acquire
        );
    }
}
