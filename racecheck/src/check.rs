//! The race check: a [`Hooks`] wrapper that sees every global/shared access, fence and
//! barrier each thread executes (in program order, whatever the inner hooks do with the
//! values), keeps PTX happens-before, and reports pairs of conflicting accesses that it
//! does not order.
//!
//! # The model
//!
//! Happens-before is the shared engine [`fencehound_hb::Hb`] — the same rules the `weak`
//! memory model uses to decide which stores a load may still read, so the two never
//! disagree on what synchronizes: scoped release/acquire patterns (a fence before a
//! strong write; a strong read before a fence; release/acquire operations), release
//! sequences through other threads' RMWs (one CTA-scope publication kept per CTA),
//! fence-SC order, barriers (named, counted, arrive), `bar.warp.sync`, kernel boundaries.
//! No leniency: a relaxed read-modify-write does not acquire, and a release fence orders
//! what precedes it, not everything its thread does afterwards.
//!
//! Shadow memory works as in FastTrack (Flanagan & Freund, PLDI 2009): each byte
//! remembers its last write and its reads since ([`crate::shadow`]); an access is checked
//! against them with the thread's knowledge. Two accesses to a byte *conflict* if at least
//! one writes. A conflicting pair that happens-before does not order is reported as one of
//! these classes ([`RaceClass`]):
//!
//! * **Data races** — the pair is not morally strong (at least one access is weak, or
//!   their scopes do not include each other): `intra-warp`, `intra-block`, `inter-block`
//!   by where the two threads are; `insufficient-scope` when the pair (or the
//!   synchronization between them) fails only because of a `.cta` scope across CTAs;
//!   `lock-misuse` when locks are involved but do not order the critical sections.
//! * **`lock-acquire`** ("lock acquired without acquire ordering") — the later access's
//!   thread took a lock with a relaxed RMW (`atomicCAS`) and executed no acquire fence of
//!   sufficient scope after it, and the earlier access was made under the same lock: the
//!   critical section may read the previous holder's data stale. The report names the
//!   CAS after which `__threadfence()` goes.
//! * **`unordered`** ("unordered, stale read possible") — both accesses are strong
//!   (`volatile` is `.relaxed.sys`) and morally strong, so PTX calls it no data race, yet
//!   happens-before does not order them. Not every such pair is a bug: a flag's store and
//!   the polls that wait for it are unordered by construction — the synchronization is
//!   the poll *observing* the store (PTX's observation order), which orders what comes
//!   before the release and after the acquire, never the flag accesses themselves. So
//!   the class is decided by this rule (issue 23.3), for a morally strong pair that
//!   happens-before does not order:
//!
//!   1. **Two RMWs**: never (they are atomic with respect to each other: two
//!      `atomicAdd`s on a counter, a CAS spin against the `atomicExch` that unlocks).
//!      An RMW that left the value as it was (a failed CAS, `atomicAdd(p, 0)`) wrote
//!      nothing and counts as a read below.
//!   2. **Write–write** (at most one an RMW): reported when the two wrote *different
//!      values* and the second writer had not read the location since the first write
//!      (a strong read of the first write's value by the same thread, or the RMW's own
//!      read when the second write is an RMW). Then the final value depends on the
//!      schedule. Writes of the same value ("done" flags) leave nothing to the schedule;
//!      a consumer resetting a flag it saw is ordered after the set by coherence.
//!   3. **Read–write** (RAW or WAR, at most one an RMW): reported when neither side is
//!      synchronization — the write completes no release pattern (no release semantics,
//!      no release fence before it in its thread, no release operation on its location
//!      before it in its thread) and the read starts no acquire pattern (no acquire
//!      semantics, no acquire fence after it in its thread before the launch ends, no
//!      acquire operation on its location after it), and the read is no *poll* (below):
//!      the volatile warp reduction without `__syncwarp()`, a volatile value read once
//!      while another thread overwrites it. "After" is program
//!      order, counted per thread ([`RaceCheck::ops`]): an acquire before the read, or
//!      on another location, does not make it an acquire pattern. A compare-and-swap
//!      whose comparison failed wrote nothing: it is a read for every class, and no
//!      release operation. A load that a later CAS of its thread on the same location
//!      validates (the CAS loop: a stale value makes the CAS fail) is not reported, as
//!      for weak loads. A read that observed a later write of the same writer with no
//!      release fence between (failed message passing) is reported whatever follows it,
//!      a poll (below) included: a seqlock reader's validating counter read is one —
//!      unless the read is a poll and the thread observed that later write with an
//!      arithmetic RMW that took a ticket or a slot (`atomicAdd`, not a CAS or an
//!      exchange): it waits for its turn, and a stale value is an earlier turn's (a
//!      correct ticket lock's waiter, which took its ticket from the unlocker's next one).
//!      **Lock rule**: a pair where one access is inside a critical section of a lock
//!      and the other is made by a thread that takes that same lock elsewhere but did
//!      not hold it here (a store after the unlock, a read before the lock) is reported
//!      even when its two sides look like a flag: that location is data the lock
//!      protects, not a flag. (The lock word itself is exempt.) A flag that a lock
//!      holder writes and a thread that never takes the lock polls stays a flag.
//!
//!      **Polls** (known with [`RaceCheck::for_module`]): a read whose value decides
//!      whether its loop spins again — a spin on a flag, a status word, a counter, a CAS
//!      lock — counts as the waiting side of a hand-off, as an acquire does
//!      ([`fencehound_vgpu::program::Program::poll_sites`] finds them in the control-flow
//!      graph). Its pair with the write it waits for is not reported on its own: if the
//!      hand-off publishes anything besides the polled word, what is published is read
//!      after the loop, and that read's pair is judged by these rules (a data race when
//!      the data is plain, failed message passing when it is strong, naming the missing
//!      fence); if it publishes nothing else — a status word that carries its own payload,
//!      as CUB's single-word tile descriptors in the decoupled look-back do — nothing is
//!      wrong, and reporting it was a false alarm on every `cub::DeviceScan`/
//!      `DeviceRadixSort` under `exec --race`. (Before 2026-12-03 a fenceless flag's own
//!      pair was reported as well: `fence_message_passing` without its fences gave the flag
//!      pair besides the data pair.)
//!
//!   4. **The store-buffering handshake** (Dekker's and Peterson's words): neither rule 2
//!      nor rule 3 reports a pair, outside critical sections, whose earlier write (rule 2;
//!      the write, rule 3) is followed in its thread by a `fence.sc` and whose other
//!      access is preceded in its thread by one, the two fences morally strong (each
//!      scope includes the other thread: any scopes within one CTA, `.gpu`/`.sys`
//!      across CTAs). Fence-SC order orders the two fences: if the write's comes first,
//!      the pair is ordered; if the other's does, everything its thread did before its
//!      fence happens before everything the writer does after its own — each side
//!      announces, fences, then checks the other's word, and the two checks cannot both
//!      miss. The pair left unordered is the handshake deciding who goes first, every
//!      outcome is a sequentially consistent one, and advising "`__threadfence()` before
//!      the write and after the read" to code that has `__threadfence()` after the write
//!      and before the read was a false alarm (`atomic_thread_fence(seq_cst)` between
//!      relaxed atomics, and Peterson's `turn`, before 2026-12-06). With
//!      `__threadfence_block()` across CTAs, or a fence on one side only, the pair is
//!      reported as before (`racecheck/tests/kernels/unordered.cu`, `uh_*`).
//!      [`RaceCheck::handshake`] decides it at the end of the launch, from each thread's
//!      epochs at its first and latest `fence.sc`.
//!
//!   Why not "every unordered pair": the read-write pairs of every correct flag hand-off
//!   (the polls that read the old value, the poll that reads the new one) are unordered
//!   in every execution, so that rule would report all correct message passing. Rules 2
//!   and 3 keep the pairs that no correct hand-off consists of: a blind overwrite with a
//!   different value, a read/write pair where neither side fences, and protected data
//!   accessed outside its lock.
//!
//! Each unordered pair is reported once (the key does not depend on which access came
//! first). A weak load that races with atomics is held back and dropped if the same thread's
//! next atomic on that address is a CAS (the CAS loop of the CUDA programming guide
//! validates the value it read).
//!
//! **Locks.** When the checker knows which sites are `atom.cas`/`atom.exch`
//! ([`RaceCheck::for_module`]), a CAS or exchange that turns a location from 0 to non-zero
//! takes a lock, and a store or exchange of 0 to it by the holder releases it. Accesses
//! remember the set of locks held (interned, 16 bits). At the end of the launch a race
//! where either access held a location that some holder did release to 0 (so it really was
//! a lock) becomes `lock-misuse` (or `lock-acquire`), unless its cause is a `.cta` scope
//! across CTAs (`atomicCAS_block` shared by CTAs), which stays `insufficient-scope`.
//!
//! **Scope-blind twin.** To name insufficient-scope races the checker also runs a second
//! happens-before engine in which every scope is `.sys` — from the first event where a
//! `.cta`/`.cluster` scope could matter (before that the two are identical). A cross-CTA
//! race that the twin orders is `insufficient-scope`.
//!
//! # What it cannot see
//!
//! * Races the executed interleaving does not exhibit: fence-SC order and which write a
//!   read observed come from the schedule.
//! * Reads are matched to writes by value: a strong read synchronizes with the newest of
//!   the last few strong writes to the location that wrote the value it read.
//! * Only the last write per byte is kept (FastTrack).
//! * Shuffles, votes and `match`/`redux` do not synchronize memory (PTX gives them no
//!   ordering).
//! * Local, `.const` and `.param` memory.
//! * The lock heuristic knows locks only by their CAS/exchange and 0/non-0 values.
//! * An access is checked against the last write of its location and the reads since
//!   (FastTrack), and against the writes that an unordered overwrite hid (two RMWs, a
//!   same-value strong store, a reported race: [`RaceCheck::locs`], at most
//!   [`HIDDEN_WRITES`] per word) unless it is ordered after them in causality order —
//!   happens-before, or an RMW chain that read the hidden write and is ordered before
//!   the access. A hidden write ordered before a later write drops out, as in FastTrack,
//!   so its race with an access that is unordered with both is reported against the
//!   later write only. `fencehound litmus --generate N --race` judges this checker
//!   against the axiomatic model
//!   (`litmus/src/racejudge.rs`, BENCHMARKS.md).
//! * The `unordered` class is deliberately narrow (see above): an optimistic reader that
//!   fences (a seqlock) is not reported even when a fence is missing elsewhere; the
//!   `weak` memory model finds those by execution. Write–write pairs are judged in the
//!   order the execution made them: when the later write is an RMW, it read the earlier
//!   one and the pair is not reported (another schedule may reverse them and report it).
//!   Values are compared with the last few strong writes remembered per location; a
//!   write no longer remembered is not reported.

use crate::clock::Epoch;
use crate::report::{Conflict, LockProblem, RaceClass, RaceKey, RaceSet, RawAccess, RawRace};
use crate::shadow::{flags, meta, Cell, ReadSets, Rec, Region, PAGE};
use fencehound_hb::sync::{acquires, releases, scopes_meet, Knowledge};
use fencehound_hb::{CtaId, Hb, Message, ReadOrd, WriteOrd};
use fencehound_vgpu::hooks::{le_value, load_each, store_each, RmwFn};
use fencehound_vgpu::{
    Access, AccessKind, Barrier, Device, Fence, FenceKind, Hooks, LaunchInfo, Location, MemError,
    Memory, ModuleId, Scope, Sem, ThreadRef,
};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// Multiplicative hashing for u64 keys; std's SipHash is needlessly slow here. Only
/// [`RaceCheck::deferred`] still uses it: its drain order at the end of a launch is the
/// order its races are committed in, so changing the hash would change which access of
/// a pair a report shows. (Its low bits depend only on the key's low bits, which made
/// the location table probe one bucket for one shared offset in every CTA; that table
/// uses `fencehound_hb`'s hasher, [`Locs`].)
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

fn loc_key(loc: Location) -> u64 {
    match loc {
        Location::Global(a) => a,
        Location::Shared { cta, offset } => (1 << 63) | (cta as u64) << 32 | offset as u64,
    }
}

/// Strong writes remembered per location, for matching reads to them by value.
///
/// At least as many as the `weak` model lets a load reach back
/// (`fencehound_handlers::weak::READABLE_STORES`, a unit test checks it): a stale read of
/// a store that has left this window finds no write, synchronizes with nothing, and its
/// thread's next accesses are reported as races. With 4 here against the model's 6,
/// `exec --race` reported intra-warp races around libcu++'s `cuda::barrier` in 5 of
/// seeds 0–5 (a lane's poll read the phase flip stale, after the last arriver's reset
/// and the next phase's arrivals had pushed it out); with 6, none in seeds 0–19.
const SYNC_WRITES: usize = 6;

/// A location's remembered writes, in the table's entry (a `VecDeque`'s buffer elsewhere
/// on the heap was a second cache miss per lookup, and a shared counter's RMWs look their
/// location up twice each): a ring of [`SYNC_WRITES`] in place, whose full state
/// overwrites the oldest instead of shifting the others (each RMW on a counter did).
#[derive(Debug, Default)]
struct SyncQueue {
    buf: SmallVec<[SyncWrite; SYNC_WRITES]>,
    /// Once `buf` is full: the oldest entry, which the next push replaces.
    head: u8,
}

impl SyncQueue {
    /// No write remembered (the location table's "absent").
    fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Newest first.
    fn newest_first(&self) -> impl Iterator<Item = &SyncWrite> {
        let (newer, older) = self.buf.split_at(self.head as usize);
        older.iter().chain(newer).rev()
    }

    fn last_mut(&mut self) -> Option<&mut SyncWrite> {
        let i = match self.buf.len() {
            0 => return None,
            SYNC_WRITES => (self.head as usize + SYNC_WRITES - 1) % SYNC_WRITES,
            n => n - 1,
        };
        Some(&mut self.buf[i])
    }

    fn push(&mut self, w: SyncWrite) {
        if self.buf.len() < SYNC_WRITES {
            self.buf.push(w);
        } else {
            self.buf[self.head as usize] = w;
            self.head = ((self.head as usize + 1) % SYNC_WRITES) as u8;
        }
    }
}

/// Per location key: its remembered writes ([`RaceCheck::locs`]'s `sync` side) and, for
/// a word's key, its hidden writes. One table, not two: an RMW on a counter looks up
/// both, and on a shared histogram under `exec --race` (256 CTAs × 64 bins) each was a
/// cache miss of its own.
#[derive(Debug, Default)]
struct LocEntry {
    /// Empty = no write remembered (as absent from the table).
    q: SyncQueue,
    /// Empty = no hidden write.
    hidden: HiddenList,
}

/// The location table: [`SyncQueue`]s and [`HiddenList`]s by location key, each side
/// behaving as a map of its own (an entry whose side is empty is that side's absent key).
/// Hashed with `fencehound_hb`'s folded multiply: the multiplicative hash before it kept
/// a key's low bits a function of its low bits only, so the keys of one shared offset in
/// every CTA (`cta << 32 | offset`) started their probes at one bucket.
///
/// Shared memory's keys are kept per CTA, and a CTA's table is dropped when its last
/// thread exits ([`Self::drop_cta`]): no access can reach that CTA's shared memory
/// after it, so no lookup can find those entries again. (In one table they lived to the
/// end of the launch: CUB's onesweep radix sort, whose every CTA counts digits with
/// shared RMWs, left 333,335 shared entries of ~450 bytes in one launch of 131,072 keys
/// under `exec --race`, and each weak store's lookup of its word missed the cache.)
/// One table of [`Locs`].
type LocMap = fencehound_hb::fasthash::FastMap<u64, LocEntry>;

#[derive(Debug, Default)]
struct Locs {
    global: LocMap,
    /// Per CTA, its shared keys (the whole key, as in `global`).
    shared: Vec<LocMap>,
    /// Entries in `shared`'s tables (so that [`Self::is_empty`], asked at every warp's
    /// weak stores, does not walk the CTAs).
    shared_len: usize,
    /// Keys with a window in the tables of CTAs that have exited (statistics).
    gone_sync: usize,
}

/// The CTA of a shared memory key ([`loc_key`]), or `None` for a global one.
#[inline(always)]
fn key_cta(k: u64) -> Option<usize> {
    (k >> 63 == 1).then_some(((k >> 32) & 0x7fff_ffff) as usize)
}

impl Locs {
    fn clear(&mut self) {
        self.global.clear();
        self.shared.clear();
        self.shared_len = 0;
        self.gone_sync = 0;
    }

    /// No location has a window or hidden writes.
    #[inline]
    fn is_empty(&self) -> bool {
        self.global.is_empty() && self.shared_len == 0
    }

    fn sync_len(&self) -> usize {
        let live = |m: &LocMap| m.values().filter(|e| !e.q.is_empty()).count();
        live(&self.global) + self.shared.iter().map(live).sum::<usize>() + self.gone_sync
    }

    /// The table holding `k`, if it exists.
    #[inline(always)]
    fn table(&self, k: u64) -> Option<&LocMap> {
        match key_cta(k) {
            None => Some(&self.global),
            Some(c) => self.shared.get(c),
        }
    }

    #[inline(always)]
    fn table_mut(&mut self, k: u64) -> Option<&mut LocMap> {
        match key_cta(k) {
            None => Some(&mut self.global),
            Some(c) => self.shared.get_mut(c),
        }
    }

    /// `k`'s entry, made (with its CTA's table) if it does not exist yet.
    #[inline(always)]
    fn entry(&mut self, k: u64) -> &mut LocEntry {
        match key_cta(k) {
            None => self.global.entry(k).or_default(),
            Some(c) => {
                if self.shared.len() <= c {
                    self.shared.resize_with(c + 1, LocMap::default);
                }
                match self.shared[c].entry(k) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        self.shared_len += 1;
                        e.insert(LocEntry::default())
                    }
                }
            }
        }
    }

    /// CTA `cta` has no thread left: its shared memory's entries go.
    fn drop_cta(&mut self, cta: usize) {
        if let Some(m) = self.shared.get_mut(cta) {
            if !m.is_empty() {
                self.gone_sync += m.values().filter(|e| !e.q.is_empty()).count();
                self.shared_len -= m.len();
                *m = LocMap::default();
            }
        }
    }

    #[inline]
    fn sync(&self, k: u64) -> Option<&SyncQueue> {
        self.table(k)?
            .get(&k)
            .map(|e| &e.q)
            .filter(|q| !q.is_empty())
    }

    #[inline]
    fn sync_mut(&mut self, k: u64) -> Option<&mut SyncQueue> {
        self.table_mut(k)?
            .get_mut(&k)
            .map(|e| &mut e.q)
            .filter(|q| !q.is_empty())
    }

    /// The window of `k`, created empty if absent (the caller pushes to it).
    #[inline]
    fn sync_entry(&mut self, k: u64) -> &mut SyncQueue {
        &mut self.entry(k).q
    }

    #[inline]
    fn hidden(&self, k: u64) -> Option<&HiddenList> {
        self.table(k)?
            .get(&k)
            .map(|e| &e.hidden)
            .filter(|h| !h.is_empty())
    }

    #[inline]
    fn hidden_mut(&mut self, k: u64) -> Option<&mut HiddenList> {
        self.table_mut(k)?
            .get_mut(&k)
            .map(|e| &mut e.hidden)
            .filter(|h| !h.is_empty())
    }

    #[inline]
    fn hidden_entry(&mut self, k: u64) -> &mut HiddenList {
        &mut self.entry(k).hidden
    }

    /// Drops `k`'s hidden writes (and the entry, when no write is remembered either).
    #[inline]
    fn hidden_remove(&mut self, k: u64) {
        let Some(m) = self.table_mut(k) else {
            return;
        };
        if let Some(e) = m.get_mut(&k) {
            if e.q.is_empty() {
                m.remove(&k);
                if key_cta(k).is_some() {
                    self.shared_len -= 1;
                }
            } else {
                e.hidden = HiddenList::default();
            }
        }
    }
}

/// A strong (or, to break value matches, weak) write a later read may observe.
#[derive(Debug, Clone)]
struct SyncWrite {
    value: u64,
    size: u32,
    writer: u32,
    cta: u32,
    scope: Scope,
    strong: bool,
    site: u32,
    /// What it publishes (real and scope-blind).
    msg: Option<Rc<Message>>,
    blind: Option<Rc<Message>>,
    /// The writer's program-order number of the write, and its epoch.
    number: u32,
    epoch: Epoch,
    /// The writer made a plain strong store (not an RMW) before this write in the same
    /// epoch: only then can a read of this write be the *signal* of failed message
    /// passing ([`RaceCheck::strong_candidate`] matches signals by writer and epoch
    /// against an earlier store's number), so only then is its observation recorded.
    signal: bool,
}

/// A morally strong, unordered pair, decided at the end of the launch.
#[derive(Debug)]
struct StrongCandidate {
    key: RaceKey,
    raw: RawRace,
    /// The write: (thread, site, epoch), and whether it could complete a release pattern.
    write: (u32, u32, Epoch),
    write_release: bool,
    /// The read: (thread, its operation number [`RaceCheck::ops`], location).
    read: (u32, u32, u64),
    /// The read is a load (not an RMW that left the value as it was).
    read_is_load: bool,
    /// The read's epoch (for [`RaceCheck::handshake`]).
    read_epoch: Epoch,
    /// Either access held a lock (no handshake exemption: a critical section's accesses
    /// are judged by the lock rules).
    locked: bool,
}

/// A morally strong write–write pair, unordered, different values, whose second write
/// comes after a fence.sc of its thread: decided at the end of the launch, when it is
/// known whether the first write is followed by a fence.sc of its own (then the pair is a
/// store-buffering handshake, [`RaceCheck::handshake`], and not reported).
#[derive(Debug)]
struct WawCandidate {
    key: RaceKey,
    raw: RawRace,
    /// The first write: (thread, epoch).
    first: (u32, Epoch),
    /// The second write: (thread, epoch).
    second: (u32, Epoch),
}

/// Racecheck-specific per-thread state (happens-before itself is in [`Hb`]).
#[derive(Debug, Clone, Default)]
struct ThreadState {
    /// Locks taken by an RMW that did not acquire: (lock, CAS site, a CTA-scope acquire
    /// fence followed it). A `.gpu` acquire fence removes the entry.
    unsynced: Vec<(u64, u32, bool)>,
    /// Operation number ([`RaceCheck::ops`]) of the thread's latest acquire fence; 0 =
    /// none.
    acquire_fence: u32,
    /// The same for its latest acquire fence of scope ≥ `.gpu` (the only ones that start
    /// an acquire pattern with a write of another CTA).
    wide_acquire_fence: u32,
    /// Acquire operations by location: a strong read followed by an acquire operation on
    /// its location starts an acquire pattern (PTX ISA, release and acquire patterns).
    acquire_ops: LocOps,
    /// Release operations by location: a strong write after a release operation on its
    /// location completes a release pattern.
    release_ops: LocOps,
    /// Compare-and-swaps by location (known with [`RaceCheck::for_module`]): a load that
    /// a later CAS of its thread on its location validates is not reported.
    cas_ops: LocOps,
    /// The thread's recent strong reads: (location, site, epoch, operation number), so that
    /// a read found in shadow memory later (a write after it) has its position.
    reads: SmallVec<[(u64, u32, Epoch, u32); 1]>,
    /// The thread's epoch at its latest device-scope release (fence or operation): its
    /// accesses up to this epoch are published device-wide. 0 = none. (Kept past the
    /// thread's exit, unlike the happens-before state.)
    wide_release: Epoch,
    /// Strong writes (and RMWs) so far: their program-order number.
    writes: u32,
    /// The thread's recent plain strong stores (not RMWs: only a store is looked up, as
    /// the write of failed message passing): (location, site, epoch, number). A store is
    /// remembered while it is among the thread's last [`RECENT_WRITES`] strong writes.
    recent: Recent,
    /// The epoch of the thread's latest plain strong store ([`SyncWrite::signal`]).
    store_epoch: Epoch,
    /// Per writer, the latest of its strong writes this thread has read through a morally
    /// strong read: (writer, number, site, epoch). (Inline: most threads read one writer's
    /// strong writes.)
    observed: SmallVec<[(u32, u32, u32, Epoch); 1]>,
    /// The thread's epoch at its first and at its latest `fence.sc` (index 0: any scope;
    /// 1: `.gpu`/`.sys` only), taken before the fence raises it: an access of epoch `e`
    /// comes after a fence recorded `f < e`, before one recorded `f >= e`
    /// ([`RaceCheck::handshake`]). `Epoch::NONE`: none.
    sc_first: [Epoch; 2],
    sc_last: [Epoch; 2],
}

/// What a thread without state reads as ([`Threads`]).
static NO_STATE: std::sync::LazyLock<ThreadState> = std::sync::LazyLock::new(ThreadState::default);

/// Every thread's [`ThreadState`], made on the thread's first use of it (strong
/// accesses, fences, locks): a thread of a data-parallel kernel never needs one, and
/// 232 bytes each were most of the race check's per-thread state at 1 M threads (issue
/// 24). A thread without one reads as [`ThreadState::default`]. The states live in one
/// vector (a `Box` each was 1.5% more instructions on `scale_fences`' race check,
/// callgrind).
#[derive(Debug, Default)]
struct Threads {
    /// Per thread, 1 + its index in `states`, or 0 for none yet.
    idx: Vec<u32>,
    states: Vec<ThreadState>,
}

impl Threads {
    fn reset(&mut self, n: usize) {
        self.idx.clear();
        self.idx.resize(n, 0);
        self.states.clear();
        // Room for every thread up front, as `hb`'s table does: pages a launch never uses
        // are never touched, and growing by doubling copied every state made so far
        // (realloc and memmove were 4% of `scale_fences`' race side, `perf`).
        self.states.reserve(n);
    }

    #[inline]
    fn len(&self) -> usize {
        self.idx.len()
    }

    /// Thread `g`'s state (`None` beyond the launch's threads).
    #[inline]
    fn get(&self, g: usize) -> Option<&ThreadState> {
        self.idx.get(g).map(|&i| match i {
            0 => &*NO_STATE,
            i => &self.states[i as usize - 1],
        })
    }

    /// Thread `g`'s state to change, made if it has none (`None` beyond the launch's
    /// threads).
    #[inline]
    fn get_mut(&mut self, g: usize) -> Option<&mut ThreadState> {
        let i = self.idx.get_mut(g)?;
        if *i == 0 {
            self.states.push(ThreadState::default());
            *i = self.states.len() as u32;
        }
        Some(&mut self.states[*i as usize - 1])
    }

    /// Thread `g`'s state to change if it has one.
    #[inline]
    fn existing_mut(&mut self, g: usize) -> Option<&mut ThreadState> {
        match self.idx.get(g) {
            Some(&i) if i > 0 => Some(&mut self.states[i as usize - 1]),
            _ => None,
        }
    }
}

/// The latest operation number of one kind of operation per location, for the last
/// [`LOC_OPS`] locations; `floor` is the largest number evicted, so that what is no longer
/// remembered is answered conservatively (as "there was one": a pattern, no report).
#[derive(Debug, Clone, Default)]
struct LocOps {
    recent: SmallVec<[(u64, u32); 1]>,
    floor: u32,
}

const LOC_OPS: usize = 4;

/// Strong reads remembered per thread ([`ThreadState::reads`]).
const RECENT_READS: usize = 8;

impl LocOps {
    fn note(&mut self, loc: u64, n: u32) {
        if let Some(e) = self.recent.iter_mut().find(|e| e.0 == loc) {
            e.1 = n;
            return;
        }
        if self.recent.len() >= LOC_OPS {
            if let Some(i) = (0..self.recent.len()).min_by_key(|&i| self.recent[i].1) {
                self.floor = self.floor.max(self.recent[i].1);
                self.recent.remove(i);
            }
        }
        self.recent.push((loc, n));
    }

    /// Some such operation on `loc` came after operation `n` (or may have: evicted).
    fn after(&self, loc: u64, n: u32) -> bool {
        self.floor > n || self.recent.iter().any(|e| e.0 == loc && e.1 > n)
    }

    /// Some such operation on `loc` so far (or may have been: evicted).
    fn any(&self, loc: u64) -> bool {
        self.floor > 0 || self.recent.iter().any(|e| e.0 == loc)
    }
}

/// Pushes `x`, and when `v` is full grows it straight to `cap` (then fourfold, up to
/// `max`; `v` must be shorter than `max`): the
/// per-thread lists below start inline with room for one and fill up to a small bound, and
/// growing them 2, 4, 8 one reallocation at a time was a fifth of the race check's
/// instructions per RMW on `algo_histogram` (three reallocations per thread and list).
#[inline]
fn push_growing<A: smallvec::Array>(v: &mut SmallVec<A>, x: A::Item, cap: usize, max: usize) {
    if v.len() == v.capacity() {
        let want = if v.len() < cap {
            cap
        } else {
            (v.len() * 4).min(max)
        };
        v.reserve_exact(want.saturating_sub(v.len()).max(1));
    }
    v.push(x);
}

/// The last [`RECENT_WRITES`] strong writes of a thread, oldest overwritten first. The
/// first is inline: most threads make one strong write, and a heap list per thread was
/// one allocation per thread of a 65,536-thread launch.
#[derive(Debug, Clone, Default)]
struct Recent {
    buf: SmallVec<[(u64, u32, Epoch, u32); 1]>,
    /// Where the next write goes once `buf` is full (the oldest entry).
    head: u32,
}

impl Recent {
    fn push(&mut self, e: (u64, u32, Epoch, u32)) {
        if self.buf.len() < RECENT_WRITES {
            push_growing(&mut self.buf, e, 8, RECENT_WRITES);
        } else {
            self.buf[self.head as usize] = e;
            self.head = (self.head + 1) % RECENT_WRITES as u32;
        }
    }

    /// Newest first.
    fn newest_first(&self) -> impl Iterator<Item = &(u64, u32, Epoch, u32)> {
        // Once full, `buf[head..]` is the older part and `buf[..head]` the newer.
        let (newer, older) = self.buf.split_at(self.head as usize);
        older.iter().chain(newer).rev()
    }
}

/// Recent strong writes kept per thread (to find a store's program-order number).
const RECENT_WRITES: usize = 64;
/// Writers whose latest observed write a thread remembers.
const OBSERVED_WRITERS: usize = 16;

const SITE_CAS: u8 = 1;
const SITE_EXCH: u8 = 2;
/// A read that polls: its value decides whether its loop spins again
/// ([`fencehound_vgpu::program::Program::poll_sites`]).
const SITE_POLL: u8 = 4;
/// Marks a [`ThreadState::observed`] entry's site: the thread observed that write with an
/// arithmetic RMW that changed the value (`atomicAdd`, `atomicInc`, …; not a CAS or an
/// exchange): it took a ticket or a slot.
/// Site ids are instruction indices, far below 2^31.
const OBSERVED_BY_CLAIM: u32 = 1 << 31;

/// Interned lock sets (sorted location keys); set 0 is the empty set.
#[derive(Debug)]
struct LockTable {
    sets: Vec<Vec<u64>>,
    index: HashMap<Vec<u64>, u16>,
    /// Locations a holder released to 0: real locks.
    confirmed: std::collections::HashSet<u64>,
    /// (lock, thread) whose last release of the lock was a device-scope release pattern.
    good_release: std::collections::HashSet<(u64, u32)>,
    /// Per lock: the CTA that took it with a `.cta`-scope RMW, and whether threads of
    /// more than one CTA did (then its RMWs exclude nothing across CTAs).
    cta_taken: HashMap<u64, (u32, bool)>,
    /// (lock, thread): the thread took the lock at some point of the launch.
    takers: std::collections::HashSet<(u64, u32)>,
}

impl Default for LockTable {
    fn default() -> Self {
        let mut index = HashMap::new();
        index.insert(Vec::new(), 0);
        LockTable {
            sets: vec![Vec::new()],
            index,
            confirmed: Default::default(),
            good_release: Default::default(),
            cta_taken: HashMap::new(),
            takers: Default::default(),
        }
    }
}

impl LockTable {
    fn intern(&mut self, set: Vec<u64>) -> u16 {
        if let Some(i) = self.index.get(&set) {
            return *i;
        }
        if self.sets.len() >= u16::MAX as usize {
            return 0;
        }
        let i = self.sets.len() as u16;
        self.sets.push(set.clone());
        self.index.insert(set, i);
        i
    }
    fn get(&self, i: u16) -> &[u64] {
        self.sets.get(i as usize).map_or(&[], |s| s.as_slice())
    }
}

/// Shadow memory and checker statistics of the last launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShadowStats {
    /// Accesses checked (one per element of a vector access).
    pub accesses: u64,
    /// Bytes of memory with shadow state (touched 256-byte pages).
    pub tracked_bytes: u64,
    /// Bytes of shadow cells for them.
    pub shadow_bytes: u64,
    /// Entries of read-shared sets at the end of the launch.
    pub read_set_entries: u64,
    /// Locations remembering strong writes at the end of the launch.
    pub sync_locations: u64,
}

#[derive(Debug, Default)]
struct LaunchMeta {
    kernel: String,
    tpb: u32,
    ctas: u32,
}

/// Shadow memory: one region per global allocation touched (sorted by base, the last
/// one used remembered), one per CTA's shared memory — dropped when the CTA's last
/// thread exits ([`Self::drop_shared`]).
#[derive(Debug, Default)]
struct Shadow {
    global: Vec<Region>,
    last_region: usize,
    shared: Vec<Region>,
    /// Touched pages and shadow bytes of the dropped regions (statistics: the launch's
    /// figures are what it touched, as when no region was dropped).
    gone_pages: usize,
    gone_bytes: usize,
}

impl Shadow {
    fn clear(&mut self) {
        self.global.clear();
        self.last_region = 0;
        self.shared.clear();
        self.gone_pages = 0;
        self.gone_bytes = 0;
    }

    /// CTA `cta` has no thread left: nothing can access its shared memory again, so
    /// its shadow goes. (Its cells' read sets stay allocated until the launch ends, as
    /// before, so `read_set_entries` does not change either.) CUB's onesweep radix sort
    /// keeps tens of KiB of shared memory per CTA: at 8 shadow bytes per byte, its
    /// ~1,000 CTAs' regions were most of `exec --race`'s 480 MB.
    fn drop_shared(&mut self, cta: usize) {
        if let Some(r) = self.shared.get_mut(cta) {
            if r.len > 0 {
                self.gone_pages += r.touched_pages();
                self.gone_bytes += r.shadow_bytes();
                *r = Region::default();
            }
        }
    }

    fn regions(&self) -> impl Iterator<Item = &Region> {
        self.global.iter().chain(&self.shared)
    }

    /// The shadow region of `loc` (created on first use), and `loc`'s address in it.
    #[inline(always)]
    fn region(&mut self, mem: &Memory, loc: Location) -> Option<(&mut Region, u64)> {
        let Shadow {
            global,
            last_region,
            shared,
            ..
        } = self;
        match loc {
            Location::Global(a) => {
                let hit = global
                    .get(*last_region)
                    .is_some_and(|r| a >= r.base && a < r.base + r.len);
                if !hit {
                    let i = global.partition_point(|r| r.base <= a);
                    if i > 0 && a < global[i - 1].base + global[i - 1].len {
                        *last_region = i - 1;
                    } else {
                        let allocs = mem.global.allocations();
                        let j = allocs.partition_point(|x| x.base <= a);
                        let al = allocs.get(j.checked_sub(1)?)?;
                        if a >= al.base + al.data.len() as u64 {
                            return None;
                        }
                        global.insert(i, Region::new(al.base, al.data.len() as u64));
                        *last_region = i;
                    }
                }
                Some((&mut global[*last_region], a))
            }
            Location::Shared { cta, offset } => {
                let cta = cta as usize;
                if cta >= shared.len() {
                    shared.resize_with(cta + 1, Region::default);
                }
                let r = &mut shared[cta];
                if r.len == 0 {
                    let len = mem.shared.get(cta).map_or(0, |s| s.len() as u64);
                    *r = Region::new(0, len);
                }
                Some((r, offset as u64))
            }
        }
    }
}

/// Whether the reads `r` of a cell (one read or a read set) include a strong read by `g`.
fn read_by(r: &Rec, read_sets: &ReadSets, g: u32) -> bool {
    if r.kind() == meta::READ_SET {
        read_sets
            .get(r.read_set())
            .iter()
            .any(|x| x.g == g && x.strong())
    } else {
        !r.is_empty() && r.g == g && r.strong()
    }
}

/// The shadow record of access `a` (see [`RaceCheck::check`]).
#[inline(always)]
fn rec_of(hb: &Hb, lock_sets: &[u16], a: &Access, strong: bool, fl: u8) -> Rec {
    let kind = match a.kind {
        AccessKind::Load => meta::LOAD,
        AccessKind::Store => meta::STORE,
        AccessKind::Atomic => meta::ATOMIC,
    };
    let sem = a.sem.code();
    let scope = a.scope.code();
    let g = a.thread.global;
    Rec::new(
        g,
        hb.epoch(g),
        a.site,
        lock_sets.get(g as usize).copied().unwrap_or(0),
        kind | sem << meta::SEM_SHIFT
            | scope << meta::SCOPE_SHIFT
            | if strong { meta::STRONG } else { 0 },
        fl,
    )
}

/// The value a warp store's lane writes (`Hooks::store_warp` stores the low `size` bytes
/// of `v`), as [`Hooks::store`] would hand it to [`le_value`].
#[inline(always)]
fn stored_value(v: u64, size: u32) -> u64 {
    le_value(&v.to_le_bytes()[..(size as usize).min(8)])
}

/// Whether access `p` happens before the current access of thread `me` (whose knowledge
/// is `know`, and `own_chunk` its clock chunk of its CTA, whose threads are numbered from
/// `cta_base`): program order, then the own chunk (most conflicting accesses are of the
/// same CTA, ordered by a barrier: a lower bound), then the full knowledge.
#[inline(always)]
fn happens_before(
    hb: &Hb,
    know: Option<&Knowledge>,
    own_chunk: Option<&[Epoch]>,
    me: u32,
    cta_base: u32,
    tpb: u32,
    p: &Rec,
) -> bool {
    p.g == me
        || (p.g.wrapping_sub(cta_base) < tpb
            && own_chunk
                .and_then(|c| c.get((p.g - cta_base) as usize))
                .is_some_and(|&e| e >= p.epoch))
        || know.is_some_and(|k| hb.covers(k, p.g, p.epoch))
}

/// The part of [`RaceCheck::check_fast`] after the region lookup: `a` (a load, or a
/// store when `store`, by a thread of the launch, recorded as `cur`) at `addr` of
/// `region`. Returns whether it took the access (then the cells are updated), having
/// changed nothing `check_general` does not change the same way otherwise.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fast_cells(
    hb: &Hb,
    read_sets: &mut ReadSets,
    region: &mut Region,
    addr: u64,
    a: &Access,
    cur: Rec,
    tpb: u32,
    store: bool,
) -> bool {
    let me = a.thread.global;
    // `me / tpb` (the vgpu numbers threads `cta * tpb + tid`), without the division.
    let my_cta = a.thread.cta;
    debug_assert_eq!(my_cta, me / tpb);
    let Some((cells, bytewise)) = region.cells(addr, a.size as usize, read_sets) else {
        return false;
    };
    let mut cell = cells[0];
    if cell.w.flags() & flags::HIDES != 0
        || (cells.len() > 1 && cells[1..].iter().any(|c| *c != cell))
    {
        return false;
    }
    let cta_base = my_cta * tpb;
    // What the thread knows, and its own CTA's clock chunk: looked up only when the
    // cells hold an access of another thread, not for a location nothing else touched
    // (a kernel's first read of its input, its stores of its output). Without them
    // `ordered` answers only "same thread" — all it is asked then.
    let others = (!cell.w.is_empty() && cell.w.g != me) || !cell.r.is_empty();
    let know = if others { hb.knowledge(me) } else { None };
    let own_chunk = know.and_then(|k| k.clock_chunk(CtaId(my_cta)));
    let ordered = |p: &Rec| happens_before(hb, know, own_chunk, me, cta_base, tpb, p);
    if !cell.w.is_empty() && !ordered(&cell.w) {
        return false;
    }
    let n = cells.len();
    if store {
        if cell.r.kind() == meta::READ_SET {
            let set = cell.r.read_set();
            if !read_sets.get(set).iter().all(&ordered) {
                return false;
            }
            read_sets.release(set, n as u32);
        } else if !cell.r.is_empty() && !ordered(&cell.r) {
            return false;
        }
        cell.w = cur;
        cell.r = Rec::default();
    } else {
        record_read(&mut cell, cur, n, read_sets, &ordered);
    }
    cells.fill(cell);
    if bytewise {
        region.merge(addr, a.size as usize, read_sets);
    }
    true
}

/// Records read `cur` of `n` equal cells `cell` (a read by the thread of `cur`, which
/// [`RaceCheck::check`] has checked): FastTrack's read update, a read set once two reads
/// are not ordered (`ordered`: happens-before the read).
#[inline(always)]
fn record_read(
    cell: &mut Cell,
    cur: Rec,
    n: usize,
    read_sets: &mut ReadSets,
    ordered: &impl Fn(&Rec) -> bool,
) {
    if cell.r.is_empty() {
        cell.r = cur;
    } else if cell.r.kind() == meta::READ_SET {
        let i = read_sets.unshare(cell.r.read_set(), n as u32);
        cell.r = Rec::read_set_ref(i);
        read_sets.add(i, cur, ordered);
    } else if ordered(&cell.r) {
        cell.r = cur;
    } else {
        cell.r = Rec::read_set_ref(read_sets.alloc(&[cell.r, cur], n as u32));
    }
}

/// Hidden writes kept per word ([`RaceCheck::locs`]), oldest dropped first.
const HIDDEN_WRITES: usize = 4;
// The update marks dropped entries in a `u8`.
const _: () = assert!(HIDDEN_WRITES <= 8);

/// One word's hidden writes, oldest first: (the write, its bytes among the word's), at
/// most [`HIDDEN_WRITES`], in place. (A `SmallVec` of two spilled to the heap on every
/// counter that many threads increment, and its moves and checks were a quarter of an
/// RMW's check on a shared histogram.)
#[derive(Debug, Clone, Copy)]
struct HiddenList {
    n: u8,
    /// Every entry is a strong device-scope (or wider) RMW: then a device-scope RMW is
    /// morally strong with all of them without asking each (false = not known).
    wide_rmws: bool,
    e: [(Rec, u8); HIDDEN_WRITES],
}

impl Default for HiddenList {
    fn default() -> Self {
        HiddenList {
            n: 0,
            wide_rmws: true,
            e: [Default::default(); HIDDEN_WRITES],
        }
    }
}

impl HiddenList {
    /// Write `w` (an overwritten last write) is now a hidden write of the bytes in `mask`
    /// too: added to its entry, or as the newest, dropping the oldest when full.
    #[inline]
    fn hide(&mut self, mut w: Rec, mask: u8) {
        w.clear_flags(flags::HIDES);
        match self.iter_mut().find(|(h, _)| *h == w) {
            Some((_, m)) => *m |= mask,
            None => self.push_evicting((w, mask)),
        }
    }

    /// Appends `x`, dropping the oldest when full.
    #[inline]
    fn push_evicting(&mut self, x: (Rec, u8)) {
        self.wide_rmws &= x.0.kind() == meta::ATOMIC && x.0.strong() && x.0.wide();
        if self.n as usize == HIDDEN_WRITES {
            self.e.copy_within(1.., 0);
            self.n -= 1;
        }
        self.e[self.n as usize] = x;
        self.n += 1;
    }

    /// Keeps the entries whose bytes are not all gone, in order.
    #[inline]
    fn retain_nonempty(&mut self) {
        let mut k = 0;
        for i in 0..self.n as usize {
            if self.e[i].1 != 0 {
                self.e[k] = self.e[i];
                k += 1;
            }
        }
        self.n = k as u8;
    }
}

impl std::ops::Deref for HiddenList {
    type Target = [(Rec, u8)];
    #[inline]
    fn deref(&self) -> &[(Rec, u8)] {
        &self.e[..self.n as usize]
    }
}

impl std::ops::DerefMut for HiddenList {
    #[inline]
    fn deref_mut(&mut self) -> &mut [(Rec, u8)] {
        &mut self.e[..self.n as usize]
    }
}

/// The 4-byte words that bytes `[addr, addr+len)` (location keys) touch, each with the
/// mask of its bytes among them.
fn words(addr: u64, len: u64) -> impl Iterator<Item = (u64, u8)> {
    let end = addr + len;
    (addr & !3..end).step_by(4).map(move |w| {
        let lo = addr.max(w) - w;
        let hi = end.min(w + 4) - w;
        (w, ((1u16 << hi) - (1u16 << lo)) as u8)
    })
}

/// The window entry of write `a` that wrote `value`; `msg`/`blind` as computed by
/// [`Hb::write_message`], moved to the heap when they publish something (an empty one is
/// not kept). Taken by reference: an `Option<Message>` moved by value is copied whole even
/// when it is `None`, and the RMW path moved two of them from call to call — the copy of
/// [`RaceCheck::messages`]' result was a tenth of `on_atomic`'s samples on a shared
/// histogram (`perf`: a store-forwarding stall, the tuple read back with wider loads than
/// it was written with).
#[allow(clippy::too_many_arguments)]
fn sync_write(
    a: &Access,
    value: u64,
    strong: bool,
    msg: &mut Option<Message>,
    blind: &mut Option<Message>,
    number: u32,
    epoch: Epoch,
    signal: bool,
) -> SyncWrite {
    SyncWrite {
        site: a.site,
        number,
        epoch,
        signal,
        value,
        size: a.size,
        writer: a.thread.global,
        cta: a.thread.cta,
        scope: a.scope,
        strong,
        msg: boxed(msg),
        blind: boxed(blind),
    }
}

/// `m` on the heap when it publishes something.
#[inline]
fn boxed(m: &mut Option<Message>) -> Option<Rc<Message>> {
    match m {
        Some(x) if !x.is_empty() => Some(Rc::new(std::mem::take(x))),
        _ => None,
    }
}

/// Adds write `w` of access `a` to its location's window `q`. An RMW that leaves the value
/// as it was (a failed CAS, `atomicAdd(p, 0)`) joins what it publishes into the write it
/// read instead of taking a slot: spinning CASes would otherwise push the unlock out of the
/// window.
fn remember_in(q: &mut SyncQueue, a: &Access, w: SyncWrite) {
    let value = w.value;
    if let Some(last) = q.last_mut() {
        if a.kind == AccessKind::Atomic && last.value == value && last.size == a.size && last.strong
        {
            if let Some(m) = w.msg {
                match &mut last.msg {
                    Some(l) => Rc::make_mut(l).merge(&m),
                    None => last.msg = Some(m),
                }
            }
            if let Some(m) = w.blind {
                match &mut last.blind {
                    Some(l) => Rc::make_mut(l).merge(&m),
                    None => last.blind = Some(m),
                }
            }
            return;
        }
    }
    q.push(w);
}

/// How a conflicting earlier access relates to the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    Ordered,
    /// Two morally strong RMWs: atomic with respect to each other, never a race of any
    /// class — but not ordered by happens-before either.
    Atomic,
    /// Not morally strong and unordered: a data race.
    DataRace,
    /// Both strong and morally strong, but unordered.
    StrongUnordered,
}

impl Relation {
    /// A race of some class (to be classified): neither ordered nor atomic.
    fn races(self) -> bool {
        matches!(self, Relation::DataRace | Relation::StrongUnordered)
    }
}

/// The race check, wrapping the hooks `H` that decide what memory does (e.g. `NoHooks`
/// for `sc`, `WriteBuffers` for the buffer and weak models). Every hook is delegated to
/// `H`; the checker only observes.
pub struct RaceCheck<H> {
    inner: H,
    launch: LaunchMeta,
    hb: Hb,
    /// The scope-blind twin (see the module docs); `None` while identical to `hb`.
    blind: Option<Hb>,
    threads: Threads,
    /// Per thread: its interned lock set (dense, apart from `threads`: every access reads
    /// it, and a plain access touches nothing else of the thread's state).
    lock_sets: Vec<u16>,
    /// Per thread: the program-order number of its latest memory operation or fence
    /// (1-based; dense like `lock_sets`: every access counts, and a plain access touches
    /// nothing else of the thread's state).
    ops: Vec<u32>,
    shadow: Shadow,
    read_sets: ReadSets,
    /// Per location key, in one table ([`Locs`]):
    /// - the strong writes a read is matched against by value ([`SyncQueue`]);
    /// - for a 4-byte word's key, its *hidden writes*: writes that a later write to the
    ///   same bytes overwrote without happens-before ordering them (two RMWs, a
    ///   same-value strong store, a reported race), each with the bytes of the word it is
    ///   still the hidden write of. A cell whose last write carries [`flags::HIDES`] has
    ///   some. FastTrack keeps one write per byte, which is enough while successive
    ///   writes are ordered or reported; an overwrite that is neither hid the earlier
    ///   write from later reads, so a read that races with both was reported against the
    ///   second only (issue 23: the misses of `litmus --generate --race`).
    locs: Locs,
    /// Per site: [`SITE_CAS`] / [`SITE_EXCH`] (known with [`RaceCheck::for_module`]).
    site_flags: Vec<u8>,
    /// Races between a weak load and an atomic, held back until we know whether the
    /// loading thread validates the value with a CAS on the same address (CAS loop).
    /// One entry per distinct pending race ([`PendingRaces`]), not per occurrence.
    deferred: FastMap<(u32, u64), PendingRaces>,
    /// Races whose accesses held locks, classified at the end of the launch.
    lock_pending: PendingRaces,
    /// `unordered` candidates: kept if the read (thread, epoch) is never followed by an
    /// acquire in its thread.
    strong_pending: Vec<StrongCandidate>,
    /// `unordered` write–write candidates that may be a handshake ([`WawCandidate`]).
    waw_pending: Vec<WawCandidate>,
    lock_table: LockTable,
    races: RaceSet,
    stats: ShadowStats,
    /// The value the access being checked writes (stores and RMWs).
    cur_value: u64,
    /// Per CTA: its threads' latest device-scope relaxed RMWs with no acquire after them
    /// yet, (thread, site, epoch), the last [`CTA_RMWS`] (for naming the reader side).
    cta_rmws: Vec<RecentRmws>,
    /// Whether [`Self::check`] may take its fast paths (off only for tests that compare
    /// them with the general path).
    fast_paths: bool,
    /// Whether the vgpu may park spinning warps ([`RaceCheck::park_spins`]).
    park_spins: bool,
}

/// Unacquired RMWs remembered per CTA.
const CTA_RMWS: usize = 4;

/// Races held back until the end of a launch (or until a CAS validates them), one entry
/// per distinct race *as the end of the launch will classify it*: the key and what
/// [`RaceCheck::finalize`] reads (the lock sets, the acquiring RMW and lock, the first
/// thread). A later occurrence of an entry adds its count and addresses to it, as
/// [`RaceCheck::commit`] would have when the entries were committed one by one, so the
/// committed races are the same — but for which addresses are listed past
/// [`crate::report::MAX_ADDRESSES`] distinct ones. (These lists grew by one entry per
/// occurrence: a spinlock released by a plain store, under `exec --race --model weak`,
/// pushed a lock-misuse race at every failed `atomicCAS` of the spinning threads, about
/// 470 MB a second, until the kernel's OOM kill.)
#[derive(Debug, Default)]
struct PendingRaces {
    list: Vec<(RaceKey, RawRace)>,
    /// Index in `list` by the identity above.
    index: FastMap<PendingId, usize>,
}

/// The identity of a pending race (see [`PendingRaces`]).
type PendingId = (
    RaceKey,
    (u16, u16),
    Option<fencehound_vgpu::SiteId>,
    u64,
    u32,
);

impl PendingRaces {
    fn add(&mut self, key: RaceKey, raw: RawRace) {
        let id = (
            key.clone(),
            raw.lock_ids,
            raw.acquire_site,
            raw.acquire_lock,
            raw.first.global,
        );
        match self.index.get(&id) {
            Some(&i) => {
                // What `commit` does with a later occurrence of a committed race.
                let into = &mut self.list[i].1;
                if into.addresses.len() < crate::report::MAX_ADDRESSES {
                    into.addresses.insert(raw.addr);
                }
                crate::report::add_addresses(&mut into.addresses, &raw.addresses);
                into.occurrences += raw.occurrences.max(1);
            }
            None => {
                self.index.insert(id, self.list.len());
                self.list.push((key, raw));
            }
        }
    }
}

/// One CTA's [`RaceCheck::cta_rmws`]: (thread, site, epoch), oldest first, one entry per
/// thread, at most [`CTA_RMWS`], in place. (A `SmallVec` of two spilled to the heap at
/// the third thread, and its `retain`, `remove(0)` and `push` at every device-scope RMW
/// were a visible part of an RMW's check on a shared histogram: the shared atomics of
/// `atomicAdd` have the default `.gpu` scope.)
#[derive(Debug, Clone, Copy, Default)]
struct RecentRmws {
    n: u8,
    e: [(u32, u32, Epoch); CTA_RMWS],
}

impl RecentRmws {
    fn iter(&self) -> impl DoubleEndedIterator<Item = &(u32, u32, Epoch)> {
        self.e[..self.n as usize].iter()
    }

    /// Drops thread `t`'s entry, keeping the others' order.
    #[inline]
    fn forget(&mut self, t: u32) {
        let n = self.n as usize;
        if let Some(i) = self.e[..n].iter().position(|x| x.0 == t) {
            self.e.copy_within(i + 1..n, i);
            self.n -= 1;
        }
    }

    /// Thread `t`'s newest RMW: its older entry dropped, then the oldest if full.
    #[inline]
    fn note(&mut self, t: u32, site: u32, epoch: Epoch) {
        self.forget(t);
        if self.n as usize >= CTA_RMWS {
            self.e.copy_within(1.., 0);
            self.n -= 1;
        }
        self.e[self.n as usize] = (t, site, epoch);
        self.n += 1;
    }
}

impl<H: Hooks> RaceCheck<H> {
    /// A checker without lock recognition.
    pub fn new(inner: H) -> Self {
        RaceCheck {
            inner,
            launch: LaunchMeta::default(),
            hb: Hb::new(),
            blind: None,
            threads: Threads::default(),
            lock_sets: Vec::new(),
            ops: Vec::new(),
            shadow: Shadow::default(),
            read_sets: ReadSets::default(),
            locs: Locs::default(),
            site_flags: Vec::new(),
            deferred: FastMap::default(),
            lock_pending: PendingRaces::default(),
            strong_pending: Vec::new(),
            waw_pending: Vec::new(),
            lock_table: LockTable::default(),
            races: RaceSet::default(),
            stats: ShadowStats::default(),
            cur_value: 0,
            cta_rmws: Vec::new(),
            fast_paths: true,
            park_spins: true,
        }
    }

    /// Whether the vgpu may park spinning warps under the checker (on by default; off
    /// only for tests that compare the two).
    ///
    /// A parked warp's repeated steps are *applied*, not interpreted: their counts are
    /// added and its state is set, but no hook is called (the vgpu's `livelock` module).
    /// The checker then answers the model's own load-effect counts
    /// ([`Hooks::load_effects`], [`Hooks::shared_effects`], [`Hooks::changed_blocks`]),
    /// so the vgpu parks exactly the warps it parks without the race check: the
    /// execution is the one `fencehound exec` runs without `--race`, step for step.
    ///
    /// What the checker does not see is the parked turns of a spin loop, and it checks the
    /// execution in which the spinning warp did not run them — it sat unscheduled from its
    /// parking to its wake. That is an execution of the same program with the same values:
    /// a parked turn writes nothing, its loads return what the same loads returned in
    /// the warp's last interpreted turn (nothing changed their blocks since: any change
    /// wakes the warp), and a fence in it drained nothing (else the model's count would
    /// have moved). So a reported pair is still a pair that an execution leaves
    /// unordered. The turns left out repeat accesses already checked — same sites, same
    /// addresses, same values — at later epochs of the same thread (a probe interprets at
    /// least two turns before the warp is parked, and the turn after the wake is
    /// interpreted and reads the store that woke it), so the pairs they would add are
    /// mostly pairs already reported from those sites. The one kind they can add alone:
    /// a left-out read that follows the turn's fence, against a later write of the
    /// polled word by a thread ordered after that fence (and so after every interpreted
    /// read) — a WAR of a poll, never reported when the poll is strong (a poll is
    /// synchronization, see the module docs), and for a weak poll the woken warp's read
    /// of that write is a RAW pair of the same two lines. On every program of
    /// tests/programs and every campaign, under `sc`, `bugaroo` and `scoped`, the reports
    /// with parking and without it were the same (BENCHMARKS.md, 2026-12-06).
    ///
    /// Why: without parking, a look-back under `scoped` at `p_w = 1` is interpreted turn
    /// by turn until its predecessor's status store drains — one drain per liveness
    /// period, with every spinning warp running its poll loop in between. `exec --race
    /// --model scoped` of a CUB/Thrust device-layer program (tests/programs/cub_device.cu)
    /// took 218 s against 5.4 s with parking (2026-12-06, team VM, BENCHMARKS.md), and
    /// with `LaunchOptions::quick_stalls` (on in `exec`) the race check used to see
    /// another execution than the one `exec` without `--race` ran.
    pub fn park_spins(mut self, on: bool) -> Self {
        self.park_spins = on;
        self
    }

    /// A checker for kernels of `module`: recognizes locks taken with `atom.cas` or
    /// `atom.exch` (see the module docs).
    pub fn for_module(inner: H, dev: &Device, module: ModuleId) -> Self {
        let mut rc = RaceCheck::new(inner);
        if let Some(p) = dev.program(module) {
            rc.site_flags = p
                .sites
                .iter()
                .map(|s| {
                    let t = s.text.as_str();
                    match t.find("atom") {
                        Some(i) if t[i..].contains(".cas") => SITE_CAS,
                        Some(i) if t[i..].contains(".exch") => SITE_EXCH,
                        _ => 0,
                    }
                })
                .collect();
            for &s in p.poll_sites() {
                if let Some(f) = rc.site_flags.get_mut(s as usize) {
                    *f |= SITE_POLL;
                }
            }
        }
        rc
    }

    pub fn inner(&self) -> &H {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut H {
        &mut self.inner
    }

    pub fn into_inner(self) -> H {
        self.inner
    }

    /// Every access through the general path, none through the fast paths (which must
    /// find and record exactly what it does): for tests that check that they do.
    #[doc(hidden)]
    pub fn without_fast_paths(mut self) -> Self {
        self.fast_paths = false;
        self
    }

    /// Races found so far, over every launch observed.
    pub fn races(&self) -> &RaceSet {
        &self.races
    }

    /// Takes the races found so far, leaving an empty set.
    pub fn take_races(&mut self) -> RaceSet {
        std::mem::take(&mut self.races)
    }

    /// Shadow statistics of the current (or last) launch.
    pub fn stats(&self) -> ShadowStats {
        let mut s = self.stats;
        let pages: usize = self.shadow.regions().map(|r| r.touched_pages()).sum();
        s.tracked_bytes = ((pages + self.shadow.gone_pages) * PAGE) as u64;
        s.shadow_bytes = self
            .shadow
            .regions()
            .map(|r| r.shadow_bytes() as u64)
            .sum::<u64>()
            + self.shadow.gone_bytes as u64;
        s.read_set_entries = self.read_sets.entries() as u64;
        s.sync_locations = self.locs.sync_len() as u64;
        s
    }

    fn reset(&mut self, info: &LaunchInfo<'_>) {
        self.launch = LaunchMeta {
            kernel: info.kernel.to_string(),
            tpb: info.threads_per_cta.max(1),
            ctas: info.ctas,
        };
        self.hb.begin(info.threads, info.ctas, info.threads_per_cta);
        self.blind = None;
        self.threads.reset(info.threads as usize);
        self.lock_sets.clear();
        self.lock_sets.resize(info.threads as usize, 0);
        self.ops.clear();
        self.ops.resize(info.threads as usize, 0);
        self.shadow.clear();
        self.read_sets.clear();
        self.locs.clear();
        self.deferred.clear();
        self.lock_pending = PendingRaces::default();
        self.strong_pending.clear();
        self.waw_pending.clear();
        self.lock_table = LockTable::default();
        self.cta_rmws.clear();
        self.cta_rmws
            .resize_with(info.ctas as usize, RecentRmws::default);
        self.races.executions += 1;
        self.stats = ShadowStats::default();
    }

    /// Starts the scope-blind twin when a `.cta`/`.cluster` scope could make it differ.
    #[inline]
    fn scoped_event(&mut self, scope: Scope) {
        if scope < Scope::Gpu && self.blind.is_none() && self.launch.ctas > 1 {
            self.blind = Some(self.hb.clone());
        }
    }

    #[inline(always)]
    fn rec(&self, a: &Access, strong: bool, fl: u8) -> Rec {
        rec_of(&self.hb, &self.lock_sets, a, strong, fl)
    }

    /// Whether `a` is a fast-path candidate: whole aligned words, by a thread of the launch.
    #[inline(always)]
    fn whole_words(&self, a: &Access) -> bool {
        (a.thread.global as usize) < self.threads.len()
            && a.size.is_multiple_of(4)
            && a.loc.addr().is_multiple_of(4)
    }

    /// [`Self::check`] for the commonest access: a load whose cells agree, whose last
    /// write (if any) happens before it and hid no other write. Then it conflicts with
    /// nothing `check` would look at, and only the read is recorded, as `check` records
    /// it. Returns false, having changed nothing `check` does not change the same way
    /// (creating the page, splitting the words a narrower access covers), for every other
    /// access.
    ///
    /// The cells are a word's when the access covers whole words none of which is split,
    /// else its bytes' ([`Region::cells`]): a byte or half-word access takes this path
    /// too, and ends as `check` does, merging the words whose bytes agree again. (Byte
    /// loads of a `char` input took the general path: 580 instructions each on a byte
    /// histogram, a sixth of its race check.)
    ///
    /// A plain or strong *store* takes the same path when, besides, every read since the
    /// last write (one read, or each of a read set) happens before it: then `check` finds
    /// no conflict either (`relation` is `Ordered` for every earlier access a store meets,
    /// so nothing is hidden or reported), and the update is the same: the store becomes the
    /// last write, the reads are dropped. (Tile kernels store each shared element once per
    /// phase after a barrier: the general path was most of their stores' check time.)
    #[inline(always)]
    fn check_fast(&mut self, mem: &Memory, a: &Access, strong: bool, fl: u8) -> bool {
        let me = a.thread.global;
        let store = a.kind == AccessKind::Store;
        if !(a.kind == AccessKind::Load || store) || me as usize >= self.threads.len() {
            return false;
        }
        let cur = self.rec(a, strong, fl);
        let Some((region, addr)) = self.shadow.region(mem, a.loc) else {
            return false;
        };
        if !fast_cells(
            &self.hb,
            &mut self.read_sets,
            region,
            addr,
            a,
            cur,
            self.launch.tpb,
            store,
        ) {
            return false;
        }
        self.stats.accesses += 1;
        true
    }

    /// [`Self::check_fast`] on the weak loads (`vals` `None`) or weak stores (`vals` the
    /// values) of one warp instruction, lanes `from..` in order, each lane's operation
    /// counted ([`Self::tick`]) once it is checked; stops at the first lane the fast path
    /// does not take, or whose store would need more than the check (a remembered window
    /// — the caller only asks with none —, or a store of 0 by a lock holder), and returns
    /// its index (that lane untouched), or `a.len()`. The region is looked up once, and
    /// a lane outside it stops the run. The same updates in the same order as lane by
    /// lane: the fast check reads neither the operation counts nor the value stored, and
    /// `cur_value` ends as the last lane's.
    fn fast_warp(
        &mut self,
        mem: &Memory,
        a: &[Access],
        vals: Option<&[u64]>,
        from: usize,
    ) -> usize {
        if !self.fast_paths || from >= a.len() {
            return from;
        }
        let store = vals.is_some();
        let RaceCheck {
            hb,
            threads,
            lock_sets,
            ops,
            shadow,
            read_sets,
            stats,
            launch,
            cur_value,
            ..
        } = self;
        let nthreads = threads.len().min(ops.len());
        let Some((region, _)) = shadow.region(mem, a[from].loc) else {
            return from;
        };
        let (base, len) = (region.base, region.len);
        let shared_cta = match a[from].loc {
            Location::Shared { cta, .. } => Some(cta),
            Location::Global(_) => None,
        };
        let mut i = from;
        while i < a.len() {
            let l = &a[i];
            let g = l.thread.global as usize;
            if g >= nthreads {
                break;
            }
            let addr = match (l.loc, shared_cta) {
                (Location::Shared { cta, offset }, Some(c)) if cta == c => offset as u64,
                (Location::Global(x), None) if x >= base && x - base < len => x,
                _ => break,
            };
            let value = match vals {
                Some(v) => {
                    let v = stored_value(v[i], l.size);
                    if v == 0 && lock_sets.get(g).copied().unwrap_or(0) != 0 {
                        break;
                    }
                    v
                }
                None => 0,
            };
            let cur = rec_of(hb, lock_sets, l, false, 0);
            if !fast_cells(hb, read_sets, region, addr, l, cur, launch.tpb, store) {
                break;
            }
            stats.accesses += 1;
            ops[g] += 1;
            if store {
                *cur_value = value;
            }
            i += 1;
        }
        i
    }

    /// Checks and records one access in shadow memory: [`Self::check_fast`], else the
    /// general path (kept out of line, so that the fast path does not pay its frame).
    #[inline(always)]
    fn check(&mut self, mem: &Memory, a: &Access, strong: bool, fl: u8) {
        let fast = self.fast_paths
            && if a.kind == AccessKind::Atomic {
                self.check_rmw_fast(mem, a, strong, fl)
            } else {
                self.check_fast(mem, a, strong, fl)
            };
        if !fast {
            self.check_general(mem, a, strong, fl);
        }
    }

    /// [`Self::check`] for an RMW on a counter: an RMW that writes whole unsplit words
    /// whose cells agree, with no read since the last write, where the last write and
    /// every hidden write of the words ([`RaceCheck::locs`]) is an RMW morally strong
    /// with this one. `check_general` then relates each of them as `Ordered` (same
    /// thread) or `Atomic` — never a race, so it reports nothing and drops no hidden
    /// write — and its update is this one's: the overwritten RMW joins the hidden list
    /// unless it is the thread's own, the RMW becomes the last write. No clock is
    /// consulted (two morally strong RMWs are related without happens-before), and the
    /// general path's frame and conflict list are not paid: on a 64-bin shared
    /// histogram every RMW met the previous one's and was most of the check's time.
    /// Returns false, having changed nothing `check_general` does not change the same
    /// way (creating the page), for every other access.
    #[inline(always)]
    fn check_rmw_fast(&mut self, mem: &Memory, a: &Access, strong: bool, fl: u8) -> bool {
        let me = a.thread.global;
        if !strong || fl & flags::FAILED != 0 || !self.whole_words(a) {
            return false;
        }
        let cur = self.rec(a, strong, fl);
        let tpb = self.launch.tpb;
        let cta_base = a.thread.cta * tpb;
        let my_wide = fencehound_hb::wide(a.scope);
        // `check_general`'s "morally strong, both RMWs" (its `relation`).
        let rmw_ms = |p: &Rec| -> bool {
            p.kind() == meta::ATOMIC
                && p.strong()
                && ((p.wide() && my_wide) || p.g.wrapping_sub(cta_base) < tpb)
        };
        let Some((region, addr)) = self.shadow.region(mem, a.loc) else {
            return false;
        };
        let Some((cells, false)) = region.cells(addr, a.size as usize, &mut self.read_sets) else {
            return false;
        };
        let locs = &mut self.locs;
        let cell = cells[0];
        if !cell.r.is_empty()
            || (!cell.w.is_empty() && !rmw_ms(&cell.w))
            || (cells.len() > 1 && cells[1..].iter().any(|c| *c != cell))
        {
            return false;
        }
        let key = loc_key(a.loc);
        let run_len = cells.len() as u64 * 4;
        let hide_old = !cell.w.is_empty() && cell.w.g != me;
        let mut hides = false;
        if cells.len() == 1 {
            // One word (a counter): its list looked up once, checked, then updated as
            // below.
            if cell.w.flags() & flags::HIDES != 0 || hide_old {
                match locs.hidden_mut(key) {
                    Some(list) => {
                        if cell.w.flags() & flags::HIDES != 0
                            && !(my_wide && list.wide_rmws)
                            && list.iter().any(|(h, _)| !rmw_ms(h))
                        {
                            return false;
                        }
                        if hide_old {
                            list.hide(cell.w, 0b1111);
                        }
                        // A list in the table is never empty (it leaves when it empties).
                        hides = true;
                    }
                    None if hide_old => {
                        let mut list = HiddenList::default();
                        list.hide(cell.w, 0b1111);
                        *locs.hidden_entry(key) = list;
                        hides = true;
                    }
                    None => {}
                }
            }
        } else if cell.w.flags() & flags::HIDES != 0 {
            for (wk, mask) in words(key, run_len) {
                if let Some(list) = locs.hidden(wk) {
                    if list.iter().any(|(h, m)| m & mask != 0 && !rmw_ms(h)) {
                        return false;
                    }
                }
            }
        }
        // The update, as `check_general` makes it.
        if cells.len() > 1 && (cell.w.flags() & flags::HIDES != 0 || hide_old) {
            for (wk, mask) in words(key, run_len) {
                let list = locs.hidden_entry(wk);
                if hide_old {
                    list.hide(cell.w, mask);
                }
                if list.is_empty() {
                    locs.hidden_remove(wk);
                } else {
                    hides = true;
                }
            }
        }
        let mut new = Cell {
            w: cur,
            r: Rec::default(),
        };
        if hides {
            new.w.add_flags(flags::HIDES);
        }
        cells.fill(new);
        self.stats.accesses += 1;
        true
    }

    #[inline(never)]
    fn check_general(&mut self, mem: &Memory, a: &Access, strong: bool, fl: u8) {
        self.stats.accesses += 1;
        let me = a.thread.global;
        if me as usize >= self.threads.len() {
            return;
        }
        let cur = self.rec(a, strong, fl);
        let writes = a.kind != AccessKind::Load && fl & flags::FAILED == 0;
        let size = a.size as usize;
        let tpb = self.launch.tpb;
        // `me / tpb` (the vgpu numbers threads `cta * tpb + tid`), without the division.
        let my_cta = a.thread.cta;
        debug_assert_eq!(my_cta, me / tpb);
        let my_scope = a.scope;
        // Split borrows: the region is in `self.shadow`, the rest is read.
        let Some((region, addr)) = self.shadow.region(mem, a.loc) else {
            return;
        };
        let read_sets = &mut self.read_sets;
        let Some((cells, bytewise)) = region.cells(addr, size, read_sets) else {
            return;
        };
        let locs = &mut self.locs;
        // The location key of the access's first byte, and the bytes per cell.
        let key = loc_key(a.loc);
        let unit: u64 = if bytewise { 1 } else { 4 };
        let hb = &self.hb;
        // Conflicts of this access, each earlier access (site, thread) once however many
        // bytes it conflicts on (inline: two RMWs on a counter conflict on every
        // increment, and a heap list each time was an allocation per RMW; a set only past
        // 16, for a write after many unordered reads).
        type Found = SmallVec<[(Rec, Conflict, Relation); 4]>;
        let mut many: Option<std::collections::HashSet<(u32, u32)>> = None;
        let mut seen = |p: &Rec, c: Conflict, r: Relation, out: &mut Found| {
            let k = (p.site, p.g);
            if out.len() < 16 {
                if out.iter().any(|(q, ..)| (q.site, q.g) == k) {
                    return;
                }
            } else if !many
                .get_or_insert_with(|| out.iter().map(|(q, ..)| (q.site, q.g)).collect())
                .insert(k)
            {
                return;
            }
            out.push((*p, c, r));
        };
        let mut races = Found::new();
        let know = hb.knowledge(me);
        // Most conflicting accesses are of this CTA, ordered by a barrier: look them up in
        // this CTA's clock chunk directly (a lower bound; the full check decides the rest).
        let cta_base = my_cta * tpb;
        let own_chunk = know.and_then(|k| k.clock_chunk(CtaId(my_cta)));
        let ordered = |p: &Rec| happens_before(hb, know, own_chunk, me, cta_base, tpb, p);
        let cur_atomic = a.kind == AccessKind::Atomic;
        let relation = |p: &Rec| -> Relation {
            // `scopes_meet`, with the division for the CTA only when the scopes do not
            // settle it.
            let morally_strong = p.strong()
                && strong
                && ((p.wide() && fencehound_hb::wide(my_scope))
                    || p.g.wrapping_sub(cta_base) < tpb);
            // Two morally strong RMWs are atomic with respect to each other: never a race
            // of any class, so no need to ask happens-before. (Every RMW on a shared
            // counter conflicts with the previous one.)
            if morally_strong && cur_atomic && p.kind() == meta::ATOMIC {
                // (Only its own thread is checked for order here: that is all hiding
                // needs, and a counter's RMWs would otherwise each ask the clocks.)
                return if p.g == me {
                    Relation::Ordered
                } else {
                    Relation::Atomic
                };
            }
            if ordered(p) {
                Relation::Ordered
            } else if morally_strong {
                Relation::StrongUnordered
            } else {
                Relation::DataRace
            }
        };
        // Whether this access is ordered after hidden write `list[i]` (of the bytes in
        // `mask`) through the RMWs that followed it in coherence order — the newer
        // entries, then the last write `last`, as long as each is an RMW (so it read the
        // write before it): one of them is ordered before this access.
        let observed = |list: &[(Rec, u8)], i: usize, mask: u8, last: &Rec| -> bool {
            for (x, m) in &list[i + 1..] {
                if m & mask == 0 {
                    continue;
                }
                if x.kind() != meta::ATOMIC {
                    return false;
                }
                if ordered(x) {
                    return true;
                }
            }
            last.kind() == meta::ATOMIC && ordered(last)
        };
        // Runs of equal cells (the bytes of a word accessed as a word) are checked and
        // updated once; their read set, if any, is one set they share.
        let mut k = 0;
        while k < cells.len() {
            let before = cells[k];
            let n = 1 + cells[k + 1..].iter().take_while(|c| **c == before).count();
            let mut cell = before;
            // Against the last write.
            let mut last_ordered = true;
            if !cell.w.is_empty() {
                let c = if writes { Conflict::Waw } else { Conflict::Raw };
                let r = relation(&cell.w);
                last_ordered = r == Relation::Ordered;
                // A strong write that overwrites a value its thread has read (a strong
                // read since that write) is ordered after it by coherence: it saw it.
                let overwrites_seen = c == Conflict::Waw
                    && r == Relation::StrongUnordered
                    && read_by(&cell.r, read_sets, me);
                if r.races() && !overwrites_seen {
                    seen(&cell.w, c, r, &mut races);
                }
            }
            // Against the writes the last one hid (see `RaceCheck::locs`): a data race
            // with any of them, or a read–write pair for the `unordered` rules (write–write
            // pairs of that class concern the overwritten write only) — unless this
            // access is ordered after the hidden write in PTX causality order, which also
            // counts observation: an RMW that read it (or read an RMW that did, and so on)
            // and is ordered before this access orders it too (`observed`).
            //
            // A write then updates the list in the same pass: the overwritten write joins
            // it unless ordered before this one, and a plain write ordered after hidden
            // writes (as above) stands for them, as FastTrack's last write does: they drop
            // out. (After an RMW they stay, oldest evicted first: keeping one longer only
            // costs a check, while asking the clocks about each at every increment of a
            // counter was most of the race check's time on a histogram.)
            let run_addr = key + k as u64 * unit;
            let run_len = n as u64 * unit;
            let hide_old = writes && !cell.w.is_empty() && !last_ordered;
            let mut hides = false;
            if cell.w.flags() & flags::HIDES != 0 || hide_old {
                let c = if writes { Conflict::Waw } else { Conflict::Raw };
                let dropping = writes && !cur_atomic;
                for (wk, mask) in words(run_addr, run_len) {
                    let list = if writes {
                        locs.hidden_entry(wk)
                    } else {
                        match locs.hidden_mut(wk) {
                            Some(l) => l,
                            None => continue,
                        }
                    };
                    // Decided on the list as it was, then applied.
                    let mut drop: u8 = 0;
                    for (i, (h, m)) in list.iter().enumerate() {
                        if m & mask == 0 {
                            continue;
                        }
                        let r = relation(h);
                        let reportable = r.races() && !(writes && r == Relation::StrongUnordered);
                        if !reportable && !dropping {
                            continue;
                        }
                        let after = r == Relation::Ordered || observed(list, i, mask, &cell.w);
                        if reportable && !after {
                            seen(h, c, r, &mut races);
                        }
                        if dropping && after {
                            drop |= 1 << i;
                        }
                    }
                    if !writes {
                        continue;
                    }
                    if drop != 0 {
                        for (i, (_, m)) in list.iter_mut().enumerate() {
                            if drop & (1 << i) != 0 {
                                *m &= !mask;
                            }
                        }
                        list.retain_nonempty();
                    }
                    if hide_old {
                        list.hide(cell.w, mask);
                    }
                    if list.is_empty() {
                        locs.hidden_remove(wk);
                    } else {
                        hides = true;
                    }
                }
            }
            if writes {
                // Against the reads since.
                if cell.r.kind() == meta::READ_SET {
                    for rd in read_sets.get(cell.r.read_set()) {
                        let r = relation(rd);
                        if r.races() {
                            seen(rd, Conflict::War, r, &mut races);
                        }
                    }
                    read_sets.release(cell.r.read_set(), n as u32);
                } else if !cell.r.is_empty() {
                    let r = relation(&cell.r);
                    if r.races() {
                        seen(&cell.r, Conflict::War, r, &mut races);
                    }
                }
                cell.w = cur;
                if hides {
                    cell.w.add_flags(flags::HIDES);
                }
                cell.r = Rec::default();
            } else {
                record_read(&mut cell, cur, n, read_sets, &ordered);
            }
            cells[k..k + n].fill(cell);
            k += n;
        }
        if bytewise {
            region.merge(addr, size, read_sets);
        }
        for (p, c, rel) in races {
            if rel == Relation::StrongUnordered {
                self.strong_candidate(mem, a, &p, &cur, c);
                continue;
            }
            let weak_load = |r: &Rec| r.kind() == meta::LOAD && !r.strong();
            let loader = match c {
                Conflict::Raw if p.kind() == meta::ATOMIC && weak_load(&cur) => Some(cur.g),
                Conflict::War if weak_load(&p) && cur.kind() == meta::ATOMIC => Some(p.g),
                _ => None,
            };
            let (key, raw) = self.race(mem, a, &p, &cur, c);
            match loader {
                Some(g) if !self.site_flags.is_empty() => self
                    .deferred
                    .entry((g, loc_key(a.loc)))
                    .or_default()
                    .add(key, raw),
                _ if raw.lock_ids != (0, 0) => self.lock_pending.add(key, raw),
                _ => self.commit(key, raw),
            }
        }
    }

    /// A morally strong, unordered pair: an `unordered` race unless one side is
    /// synchronization (see the module docs). The read side's "followed by an acquire" is
    /// decided at the end of the launch.
    fn strong_candidate(&mut self, mem: &Memory, a: &Access, p: &Rec, cur: &Rec, c: Conflict) {
        // An RMW that left the value as it was wrote nothing: it is a read here.
        let nowrite = |x: &Rec| x.kind() == meta::ATOMIC && x.flags() & flags::NOWRITE != 0;
        let c = match c {
            Conflict::Waw if nowrite(p) && nowrite(cur) => return,
            Conflict::Waw if nowrite(p) => Conflict::War,
            Conflict::Waw if nowrite(cur) => Conflict::Raw,
            Conflict::Raw if nowrite(p) => return,
            Conflict::War if nowrite(cur) => return,
            c => c,
        };
        if c == Conflict::Waw {
            self.strong_waw(mem, a, p, cur);
            return;
        }
        let (w, r) = match c {
            Conflict::Raw => (p, cur),
            _ => (cur, p),
        };
        if w.kind() == meta::ATOMIC && r.kind() == meta::ATOMIC {
            return;
        }
        let locked = p.locks() != 0 || cur.locks() != 0;
        if r.flags() & flags::ACQUIRE != 0 && !locked {
            return;
        }
        // The report is built (`race`, which changes nothing) only once the pair is kept:
        // a poll repeats this pair at every turn of its loop — under `scoped`, where the
        // store it waits for sits in an overlay, thousands of turns per look-back in
        // CUB's device scan and radix sort — and is dropped below.
        let unordered = |this: &Self| {
            let (mut key, mut raw) = this.race(mem, a, p, cur, c);
            key.class = RaceClass::Unordered;
            raw.class = RaceClass::Unordered;
            (key, raw)
        };
        // A poll is the waiting side of a hand-off: the flag (or status word) it spins on is
        // what it waits for, not data it reads stale. What the hand-off publishes besides
        // the flag is read after the loop, and that read's pair is judged on its own (a data
        // race, or failed message passing); a status word that carries its own
        // payload (CUB's single-word tile descriptors in the decoupled look-back) publishes
        // nothing else, and its polls are correct without fences.
        let poll = self
            .site_flags
            .get(r.site as usize)
            .is_some_and(|f| f & SITE_POLL != 0);
        // Message passing that failed: before this read, its thread read a later strong
        // write of the writer (the signal), yet this read is not ordered after the write.
        // (Plain accesses only: a control word changed by RMWs is not data handed over.)
        // Polls too: a seqlock reader's second counter read decides whether its loop
        // spins again, and a stale value ends the loop with a torn snapshot (a poll that
        // reads stale does not always just spin longer).
        let plain = w.kind() != meta::ATOMIC && r.kind() != meta::ATOMIC;
        if c == Conflict::Raw && plain && r.flags() & flags::ACQUIRE == 0 {
            let number = self.threads.get(w.g as usize).and_then(|t| {
                t.recent
                    .newest_first()
                    .find(|x| x.0 == loc_key(a.loc) && x.1 == w.site && x.2 == w.epoch)
                    .map(|x| x.3)
                    .filter(|&n| t.writes - n < RECENT_WRITES as u32)
            });
            // Only a later write of the same epoch counts: a release fence between the two
            // would have raised the writer's epoch. (When a fence separates them the
            // reader's acquire may be what is missing — or the later write is just newer
            // data, as in a seqlock's torn snapshot, which its reader discards: a race
            // check cannot tell the two apart, the `weak` model finds the former.)
            let signal = self.threads.get(r.g as usize).and_then(|t| {
                t.observed
                    .iter()
                    .find(|o| o.0 == w.g && o.3 == w.epoch && number.is_some_and(|n| o.1 > n))
                    .copied()
            });
            // A poll after a claim: the reader took a ticket (or a slot) from an RMW that
            // read the writer's later write, and now waits for its turn. A stale value of
            // the polled word is an earlier turn's: the loop spins again. (A ticket lock's
            // waiter took its ticket from the unlocker's next ticket, and its poll of
            // `serving` was reported on a correct, fenced lock.) A seqlock reader's
            // validating read observed the record with a plain load: still reported.
            let claimed_then_polls =
                poll && !locked && signal.is_some_and(|o| o.2 & OBSERVED_BY_CLAIM != 0);
            if let (Some((_, _, site, _)), false) = (signal, claimed_then_polls) {
                let (key, mut raw) = unordered(self);
                raw.signal = Some((site & !OBSERVED_BY_CLAIM, false));
                self.commit(key, raw);
                return;
            }
        }
        // A write that completes a release pattern, or a read that is an acquire or a poll,
        // is synchronization (a flag): decided now unless a lock is involved (the lock rule
        // below needs the end of the launch).
        // Across CTAs only a release pattern of scope ≥ `.gpu` synchronizes: a write after
        // `__threadfence_block()` read by another CTA is data, not a flag.
        let cross = !self.same_cta(w.g, r.g);
        let release = if cross {
            flags::WIDE_RELEASE
        } else {
            flags::RELEASE
        };
        let write_release = w.flags() & release != 0 || r.flags() & flags::ACQUIRE != 0 || poll;
        if write_release && !locked {
            return;
        }
        let (key, mut raw) = unordered(self);
        raw.narrow_fences = cross && w.flags() & flags::RELEASE != 0;
        let write = (w.g, w.site, w.epoch);
        let loc = loc_key(a.loc);
        let read = (r.g, self.read_number(r, c, loc), loc);
        if let Some(x) = self
            .strong_pending
            .iter_mut()
            .find(|x| x.key == key && x.read.0 == read.0 && x.write == write)
        {
            // Keep the latest read: if it is followed by an acquire, so are the earlier.
            x.read.1 = x.read.1.max(read.1);
            x.raw.occurrences += 1;
            return;
        }
        self.strong_pending.push(StrongCandidate {
            key,
            raw,
            write,
            write_release,
            read,
            read_is_load: r.kind() == meta::LOAD,
            read_epoch: r.epoch,
            locked,
        });
    }

    /// The operation number of the read `r` of a strong candidate: the current access for a
    /// read-after-write, else the reader's remembered read (its latest of that site and
    /// epoch; 0 if no longer remembered, which counts any acquire of the thread as
    /// following it: no report rather than a false one).
    fn read_number(&self, r: &Rec, c: Conflict, loc: u64) -> u32 {
        let Some(ts) = self.threads.get(r.g as usize) else {
            return u32::MAX;
        };
        if c == Conflict::Raw {
            return self.ops.get(r.g as usize).copied().unwrap_or(0);
        }
        ts.reads
            .iter()
            .filter(|x| x.0 == loc && x.1 == r.site && x.2 == r.epoch)
            .map(|x| x.3)
            .max()
            .unwrap_or(0)
    }

    /// Numbers the thread's next operation (memory access or fence) in program order.
    fn tick(&mut self, g: u32) -> u32 {
        match self.ops.get_mut(g as usize) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => 0,
        }
    }

    /// Remembers a strong read of the thread (see [`ThreadState::reads`]).
    fn note_read(&mut self, a: &Access) {
        let epoch = self.hb.epoch(a.thread.global);
        let ops = self.ops.get(a.thread.global as usize).copied().unwrap_or(0);
        let Some(ts) = self.threads.get_mut(a.thread.global as usize) else {
            return;
        };
        let e = (loc_key(a.loc), a.site, epoch, ops);
        if let Some(x) = ts
            .reads
            .iter_mut()
            .find(|x| x.0 == e.0 && x.1 == e.1 && x.2 == e.2)
        {
            x.3 = e.3;
        } else {
            if ts.reads.len() >= RECENT_READS {
                ts.reads.remove(0);
            }
            push_growing(&mut ts.reads, e, RECENT_READS, RECENT_READS);
        }
    }

    /// Two morally strong writes that happens-before does not order (at most one an RMW,
    /// which then came first: an RMW that comes second read the first write). Reported
    /// when they wrote different values — the final value depends on the schedule — and
    /// the second writer had not read the first write (checked by the caller).
    fn strong_waw(&mut self, mem: &Memory, a: &Access, p: &Rec, cur: &Rec) {
        if cur.kind() == meta::ATOMIC {
            return;
        }
        let (g, site, epoch) = (p.g, p.site, p.epoch);
        let Some(before) = self.locs.sync(loc_key(a.loc)).and_then(|q| {
            q.newest_first()
                .find(|w| w.writer == g && w.site == site && w.epoch == epoch && w.strong)
        }) else {
            // Not remembered (evicted): no value to compare, no report.
            return;
        };
        if before.size != a.size || before.value == self.cur_value {
            return;
        }
        let (mut key, mut raw) = self.race(mem, a, p, cur, Conflict::Waw);
        key.class = RaceClass::Unordered;
        raw.class = RaceClass::Unordered;
        let locked = p.locks() != 0 || cur.locks() != 0;
        if !locked && self.sc_fence_before(cur.g, cur.epoch, self.same_cta(p.g, cur.g)) {
            let (first, second) = ((p.g, p.epoch), (cur.g, cur.epoch));
            if let Some(x) = self
                .waw_pending
                .iter_mut()
                .find(|x| x.key == key && x.first == first && x.second.0 == second.0)
            {
                // Keep the earliest second write: if a fence.sc came before it, it came
                // before the later ones too.
                x.raw.occurrences += 1;
                return;
            }
            self.waw_pending.push(WawCandidate {
                key,
                raw,
                first,
                second,
            });
            return;
        }
        self.commit(key, raw);
    }

    /// Whether threads `a` and `b` are in one CTA.
    fn same_cta(&self, a: u32, b: u32) -> bool {
        a / self.launch.tpb == b / self.launch.tpb
    }

    /// Whether thread `g` executed a `fence.sc` before its access of epoch `e` — of any
    /// scope when the other side of the pair is in its CTA (`same_cta`), else of `.gpu`
    /// or `.sys` scope (a `.cta` one is not morally strong with another CTA's fence).
    fn sc_fence_before(&self, g: u32, e: Epoch, same_cta: bool) -> bool {
        let f = self
            .threads
            .get(g as usize)
            .map_or(Epoch::NONE, |t| t.sc_first[usize::from(!same_cta)]);
        f != Epoch::NONE && f < e
    }

    /// Whether thread `g` executed a `fence.sc` after its access of epoch `e` (scopes as
    /// for [`Self::sc_fence_before`]).
    fn sc_fence_after(&self, g: u32, e: Epoch, same_cta: bool) -> bool {
        let f = self
            .threads
            .get(g as usize)
            .map_or(Epoch::NONE, |t| t.sc_last[usize::from(!same_cta)]);
        f != Epoch::NONE && f >= e
    }

    /// The store-buffering handshake (Dekker, Peterson): an access `x` (thread, epoch)
    /// followed by a `fence.sc` of its thread and an access `y` preceded by one of its
    /// thread, the two fences morally strong. The fences are ordered (fence-SC order):
    /// if `x`'s comes first, `x` happens before `y`; if `y`'s does, what `y`'s thread did
    /// before its fence happens before everything `x`'s thread does after its own — so
    /// the pair `x`, `y` being unordered is the handshake deciding who goes first (each
    /// side checks the other's word after its fence, and they cannot both miss), not a
    /// stale read or a lost update: every outcome is one a sequentially consistent
    /// interleaving gives. Not an exemption for pairs that hold locks (a critical
    /// section's accesses are judged by the lock rules). The axiomatic reference states
    /// the same rule (`litmus/src/axiom/check.rs`, rules 2 and 3).
    fn handshake(&self, x: (u32, Epoch), y: (u32, Epoch)) -> bool {
        let same = self.same_cta(x.0, y.0);
        self.sc_fence_after(x.0, x.1, same) && self.sc_fence_before(y.0, y.1, same)
    }

    /// A strong write (`store`) or RMW of thread `g`: its program-order number (a store's
    /// remembered), and whether it can be a signal ([`SyncWrite::signal`]).
    fn note_strong_write(
        &mut self,
        g: u32,
        loc: u64,
        site: u32,
        epoch: Epoch,
        store: bool,
        same_op: bool,
    ) -> (u32, bool) {
        let Some(ts) = self.threads.get_mut(g as usize) else {
            return (0, false);
        };
        if !same_op || ts.writes == 0 {
            ts.writes += 1;
        }
        let signal = ts.store_epoch == epoch && epoch != Epoch::NONE;
        if store {
            ts.recent.push((loc, site, epoch, ts.writes));
            ts.store_epoch = epoch;
        }
        (ts.writes, signal)
    }

    /// Reclassifies a race whose accesses held locks, now that the launch is over.
    fn finalize(&self, mut key: RaceKey, mut raw: RawRace) -> (RaceKey, RawRace) {
        let t = &self.lock_table;
        let real = |id: u16| -> Vec<u64> {
            t.get(id)
                .iter()
                .copied()
                .filter(|l| t.confirmed.contains(l))
                .collect()
        };
        let (lp, lc) = (real(raw.lock_ids.0), real(raw.lock_ids.1));
        let shared_lock = lp.iter().any(|l| lc.contains(l));
        // The race is on a held lock's own word, between a plain store (the release) and
        // an atomic (another thread's attempt to take it).
        let word = loc_key(match raw.shared_cta {
            Some(cta) => Location::Shared {
                cta,
                offset: raw.addr as u32,
            },
            None => Location::Global(raw.addr),
        });
        let plain_store = |x: &RawAccess| x.kind == AccessKind::Store && x.sem == Sem::Weak;
        let plain_release = (lp.contains(&word) || lc.contains(&word))
            && ((plain_store(&raw.first) && raw.second.kind == AccessKind::Atomic)
                || (plain_store(&raw.second) && raw.first.kind == AccessKind::Atomic));
        // The previous holder released properly, and this thread took the lock without
        // acquire ordering (of enough scope): the acquire is what to fix.
        let acquire_problem = shared_lock
            && raw.acquire_site.is_some()
            && t.good_release
                .contains(&(raw.acquire_lock, raw.first.global));
        // A lock taken with `.cta` RMWs by threads of several CTAs excludes nothing across
        // CTAs: the scope is the cause, whatever else.
        let cta_lock = lp
            .iter()
            .chain(&lc)
            .any(|l| t.cta_taken.get(l).is_some_and(|x| x.1));
        if cta_lock
            || (raw.class == RaceClass::InsufficientScope && !acquire_problem)
            || (lp.is_empty() && lc.is_empty())
        {
            if cta_lock {
                raw.class = RaceClass::InsufficientScope;
                key.class = RaceClass::InsufficientScope;
            }
            return (key, raw);
        }
        raw.lock = Some(if plain_release {
            LockProblem::PlainRelease
        } else if shared_lock {
            LockProblem::Unordered
        } else if !lp.is_empty() && !lc.is_empty() {
            LockProblem::DifferentLocks
        } else {
            LockProblem::Unprotected
        });
        let class = if acquire_problem && !plain_release {
            RaceClass::LockAcquire
        } else {
            RaceClass::LockMisuse
        };
        raw.class = class;
        key.class = class;
        (key, raw)
    }

    /// The lock rule of the `unordered` class: one access was made inside a critical
    /// section of a (confirmed) lock, the other by a thread that takes that same lock
    /// elsewhere but did not hold it at this access — data the lock protects, touched
    /// outside the critical section (a store after the unlock, a read before the lock).
    /// A flag that a lock holder writes and a thread that never takes the lock polls is
    /// not this.
    fn outside_critical_section(&self, raw: &RawRace) -> bool {
        let t = &self.lock_table;
        // The lock word itself: its CASes and its release are the lock, not data.
        let word = match raw.shared_cta {
            Some(cta) => (1 << 63) | (cta as u64) << 32 | raw.addr,
            None => raw.addr,
        };
        if t.takers.iter().any(|(l, _)| *l == word) {
            return false;
        }
        let (a, b) = (t.get(raw.lock_ids.0), t.get(raw.lock_ids.1));
        let one_way = |held: &[u64], other: &[u64], other_thread: u32| {
            held.iter().any(|l| {
                t.confirmed.contains(l)
                    && !other.contains(l)
                    && t.takers.contains(&(*l, other_thread))
            })
        };
        one_way(a, b, raw.second.global) || one_way(b, a, raw.first.global)
    }

    fn commit(&mut self, key: RaceKey, mut raw: RawRace) {
        let execution = self.races.executions;
        match self.races.races.get_mut(&key) {
            Some(r) => {
                if r.addresses.len() < crate::report::MAX_ADDRESSES {
                    r.addresses.insert(raw.addr);
                }
                crate::report::add_addresses(&mut r.addresses, &raw.addresses);
                r.occurrences += raw.occurrences.max(1);
                if r.last_execution != execution {
                    r.last_execution = execution;
                    r.executions += 1;
                }
            }
            None => {
                raw.addresses.insert(raw.addr);
                self.races.races.insert(key, raw);
            }
        }
    }

    fn race(
        &self,
        mem: &Memory,
        a: &Access,
        p: &Rec,
        cur: &Rec,
        conflict: Conflict,
    ) -> (RaceKey, RawRace) {
        let tpb = self.launch.tpb;
        let (pc, pt) = (p.g / tpb, p.g % tpb);
        let (cc, ct) = (cur.g / tpb, cur.g % tpb);
        // Lock misuse is decided at the end of the launch (`finalize`), once we know
        // which CAS/exchange locations were really locks (released to 0 by a holder).
        let class = if pc == cc && pt / 32 == ct / 32 {
            RaceClass::IntraWarp
        } else if pc == cc {
            RaceClass::IntraBlock
        } else {
            let scope_only = p.strong() && cur.strong();
            let blind_orders = self
                .blind
                .as_ref()
                .is_some_and(|b| b.knows(cur.g, p.g, p.epoch));
            if scope_only || blind_orders {
                RaceClass::InsufficientScope
            } else {
                RaceClass::InterBlock
            }
        };
        // A lock taken without acquire ordering by the later access's thread, that the
        // earlier access also held: the CAS after which the fence goes.
        let acquire = self.threads.get(cur.g as usize).and_then(|t| {
            let held = self.lock_table.get(p.locks());
            t.unsynced
                .iter()
                .find(|(l, _, cta_ok)| held.contains(l) && !(*cta_ok && pc == cc))
                .map(|(l, site, _)| (*site, *l))
        });
        // Which side of a cross-CTA read after write lacks its half of release/acquire:
        // the writer, if no device-scope release fence followed its write; else the
        // reader, if it comes after a relaxed RMW (a ticket) of its CTA with no acquire
        // after it.
        let (mut reader_rmw, mut writer_unreleased) = (None, false);
        if conflict == Conflict::Raw && pc != cc && p.kind() != meta::ATOMIC {
            let released = self
                .threads
                .get(p.g as usize)
                .is_some_and(|t| t.wide_release >= p.epoch);
            if !released {
                writer_unreleased = true;
            } else {
                reader_rmw = self.cta_rmws.get(cc as usize).and_then(|l| {
                    l.iter()
                        .rev()
                        .find(|(t, _, e)| self.hb.knows(cur.g, *t, *e))
                        .map(|x| x.1)
                });
            }
        }
        let key = RaceKey::new(&self.launch.kernel, p.site, cur.site, class);
        let execution = self.races.executions;
        let raw = |r: &Rec| RawAccess {
            cta: r.g / tpb,
            tid: r.g % tpb,
            global: r.g,
            site: r.site,
            kind: match r.kind() {
                meta::STORE => AccessKind::Store,
                meta::ATOMIC => AccessKind::Atomic,
                _ => AccessKind::Load,
            },
            sem: Sem::from_code((r.meta() >> meta::SEM_SHIFT) & 0b111).unwrap_or(Sem::Sc),
            scope: Scope::from_code((r.meta() >> meta::SCOPE_SHIFT) & 0b11).unwrap_or(Scope::Sys),
        };
        let (shared_cta, addr, allocation) = match a.loc {
            Location::Shared { cta, offset } => (Some(cta), offset as u64, None),
            Location::Global(g) => {
                let allocs = mem.global.allocations();
                let i = allocs.partition_point(|x| x.base <= g);
                let al = i
                    .checked_sub(1)
                    .and_then(|i| allocs.get(i))
                    .map(|x| (x.name.clone(), x.base));
                (None, g, al)
            }
        };
        (
            key,
            RawRace {
                kernel: self.launch.kernel.clone(),
                class,
                conflict,
                first: raw(p),
                second: raw(cur),
                shared_cta,
                addr,
                allocation,
                lock: None,
                acquire_site: acquire.map(|a| a.0),
                signal: None,
                acquire_lock: acquire.map_or(0, |a| a.1),
                lock_ids: (p.locks(), cur.locks()),
                addresses: Default::default(),
                reader_rmw,
                writer_unreleased,
                narrow_fences: false,
                occurrences: 1,
                executions: 1,
                last_execution: execution,
            },
        )
    }

    /// A strong read of `a.loc` by `a.thread` that observed `value`: synchronizes with
    /// the newest remembered write of that value if the two are morally strong.
    /// The newest remembered write of `value` (with `a`'s size) to `a`'s location: the
    /// write a read of that value is taken to have read.
    ///
    /// Else, for a read narrower than 8 bytes, the newest remembered write of a naturally
    /// aligned wider location that contains the read and holds `value` in the read's
    /// bytes (the narrowest such location first). PTX calls operations morally strong
    /// only when they overlap completely; we let a containing write count as the `weak`
    /// model does (`fencehound_handlers::weak`, `containing`, which says why: libcu++'s
    /// `cuda::atomic_ref<uint8_t>` releases with a 32-bit `atom.cas` and acquires with a
    /// 16-bit `ld.acquire`).
    fn written(&self, a: &Access, value: u64) -> Option<SyncWrite> {
        let key = loc_key(a.loc);
        let same = self.locs.sync(key).and_then(|q| {
            q.newest_first()
                .find(|w| w.value == value && w.size == a.size)
                .cloned()
        });
        if same.is_some() || a.size >= 8 || a.size == 0 {
            return same;
        }
        let mask = (1u64 << (8 * a.size)) - 1;
        let mut wide = a.size * 2;
        while wide <= 8 {
            let base = key & !(wide as u64 - 1);
            let shift = 8 * (key - base);
            let found = self.locs.sync(base).and_then(|q| {
                q.newest_first()
                    .find(|w| w.size == wide && (w.value >> shift) & mask == value)
                    .cloned()
            });
            if found.is_some() {
                return found;
            }
            wide *= 2;
        }
        None
    }

    fn observe(&mut self, a: &Access, value: u64) {
        let found = self.written(a, value);
        self.observe_found(a, found, false);
    }

    /// [`RaceCheck::observe`] with the write already looked up. `claim`: the access is an
    /// arithmetic RMW that changed the value (not a CAS or an exchange, which take locks
    /// and consume flags) — a thread taking a ticket or a slot ([`OBSERVED_BY_CLAIM`]).
    fn observe_found(&mut self, a: &Access, found: Option<SyncWrite>, claim: bool) {
        let t = a.thread;
        let ms = found.as_ref().is_some_and(|w| {
            w.strong
                && (w.writer == t.global
                    || scopes_meet(CtaId(w.cta), w.scope, CtaId::of(t), a.scope))
        });
        let blind_ms = found.as_ref().is_some_and(|w| w.strong);
        let (msg, bmsg) = match &found {
            Some(w) => (
                if ms { w.msg.clone() } else { None },
                if blind_ms { w.blind.clone() } else { None },
            ),
            None => (None, None),
        };
        let ord = ReadOrd::of(a.kind, a.sem);
        // A relaxed read of a write that publishes nothing changes no clock.
        if msg.is_some() || ord.acquires() {
            self.hb.read(t, ord, a.scope, msg.as_ref());
        }
        if let Some(b) = &mut self.blind {
            if bmsg.is_some() || ord.acquires() {
                b.read(t, ord, Scope::Sys, bmsg.as_ref());
            }
        }
        if acquires(a.sem) {
            self.note_acquire(t, a.scope, Some(loc_key(a.loc)));
        }
        if let (Some(w), true) = (&found, ms) {
            if w.writer != t.global && w.number > 0 {
                let site = w.site | if claim { OBSERVED_BY_CLAIM } else { 0 };
                let entry = (w.writer, w.number, site, w.epoch);
                if w.signal {
                    if let Some(ts) = self.threads.get_mut(t.global as usize) {
                        match ts.observed.iter().position(|o| o.0 == w.writer) {
                            Some(i) if ts.observed[i].1 < w.number => ts.observed[i] = entry,
                            Some(_) => {}
                            None if ts.observed.len() < OBSERVED_WRITERS => {
                                push_growing(&mut ts.observed, entry, 4, OBSERVED_WRITERS)
                            }
                            None => {}
                        }
                    }
                } else if let Some(ts) = self.threads.existing_mut(t.global as usize) {
                    // A write that cannot be a signal matches no lookup, but still
                    // replaces an older entry of its writer (which then no longer matches,
                    // as before); a writer without an entry gets none (it would only have
                    // taken a place in the list).
                    if let Some(o) = ts.observed.iter_mut().find(|o| o.0 == w.writer) {
                        if o.1 < w.number {
                            *o = entry;
                        }
                    }
                }
            }
        }
    }

    /// The thread executed an acquire of `scope`: an operation on `loc`, or a fence
    /// (`None`).
    fn note_acquire(&mut self, t: ThreadRef, scope: Scope, loc: Option<u64>) {
        if fencehound_hb::wide(scope) {
            if let Some(l) = self.cta_rmws.get_mut(t.cta as usize) {
                l.forget(t.global);
            }
        }
        let ops = self.ops.get(t.global as usize).copied().unwrap_or(0);
        if let Some(ts) = self.threads.get_mut(t.global as usize) {
            match loc {
                Some(l) => ts.acquire_ops.note(l, ops),
                None => {
                    ts.acquire_fence = ops;
                    if fencehound_hb::wide(scope) {
                        ts.wide_acquire_fence = ops;
                    }
                }
            }
            if fencehound_hb::wide(scope) {
                ts.unsynced.clear();
            } else {
                for u in &mut ts.unsynced {
                    u.2 = true;
                }
            }
        }
    }

    fn messages(&mut self, a: &Access, msg: &mut Option<Message>, bmsg: &mut Option<Message>) {
        let ord = WriteOrd::of(a.kind, a.sem);
        let g = a.thread.global;
        if !self.hb.may_publish(g, ord)
            && !self.blind.as_ref().is_some_and(|b| b.may_publish(g, ord))
        {
            return;
        }
        *msg = self.hb.write_message(a.thread, ord, a.scope, a.loc, a.size);
        *bmsg = self
            .blind
            .as_mut()
            .and_then(|b| b.write_message(a.thread, ord, Scope::Sys, a.loc, a.size));
    }

    fn on_load(&mut self, mem: &Memory, a: &Access, buf: &[u8]) {
        let strong = a.sem != Sem::Weak;
        if strong {
            self.scoped_event(a.scope);
        }
        let fl = if acquires(a.sem) { flags::ACQUIRE } else { 0 };
        self.tick(a.thread.global);
        if strong {
            self.note_read(a);
        }
        self.check(mem, a, strong, fl);
        if strong {
            self.observe(a, le_value(buf));
        }
    }

    /// The weak loads of one warp instruction, each checked exactly as [`Self::on_load`]
    /// checks a weak load (its operation counted, then [`Self::check`]), in lane order:
    /// runs of lanes through [`Self::fast_warp`] (the region looked up once, no call per
    /// lane), the lane a run stops at as `on_load` checks it. (Race-check bench,
    /// callgrind, launch instructions of the race side: `algo_bitonic_sort` 21.56 M →
    /// 19.99 M, `algo_scan_block` 8.26 M → 7.80 M, against 7.06 M and 2.84 M plain.)
    fn on_weak_loads(&mut self, mem: &Memory, a: &[Access]) {
        let mut i = 0;
        while i < a.len() {
            i = self.fast_warp(mem, a, None, i);
            if let Some(l) = a.get(i) {
                // The lane the run stopped at, as `on_load` checks it.
                self.tick(l.thread.global);
                self.check(mem, l, false, 0);
                i += 1;
            }
        }
    }

    /// The weak stores of one warp instruction (`vals[i]` the value of `a[i]`), each as
    /// [`Self::on_store`] handles a weak store, in lane order.
    fn on_weak_stores(&mut self, mem: &Memory, a: &[Access], vals: &[u64]) {
        let mut i = 0;
        while i < a.len() {
            // (Lanes whose stores are remembered in a window take `weak_store`.)
            if self.locs.is_empty() {
                i = self.fast_warp(mem, a, Some(vals), i);
            }
            if let Some(l) = a.get(i) {
                self.weak_store(mem, l, stored_value(vals[i], l.size));
                i += 1;
            }
        }
    }

    /// [`Self::on_store`] for a weak store of `value`.
    #[inline(always)]
    fn weak_store(&mut self, mem: &Memory, a: &Access, value: u64) {
        let g = a.thread.global;
        self.tick(g);
        // As a strong store, without a message or a strong-write number (kept apart: the
        // moves of two empty messages were a visible part of a plain store's cost).
        let epoch = self.hb.epoch(g);
        self.cur_value = value;
        self.check(mem, a, false, 0);
        // A plain write to a location no strong write has touched yet is not
        // remembered: a read that finds it synchronizes with nothing, exactly as a
        // read that finds nothing — and later strong writes come after it in the
        // window anyway. (Most data locations never see a strong access, and their
        // windows were a tenth of a copy kernel's time.)
        if let Some(q) = self.locs.sync_mut(loc_key(a.loc)) {
            remember_in(
                q,
                a,
                sync_write(a, value, false, &mut None, &mut None, 0, epoch, false),
            );
        }
        if value == 0 {
            self.unlock(a);
        }
    }

    fn on_store(&mut self, mem: &Memory, a: &Access, data: &[u8]) {
        if a.sem == Sem::Weak {
            return self.weak_store(mem, a, le_value(data));
        }
        self.scoped_event(a.scope);
        let g = a.thread.global;
        let n = self.tick(g);
        let fl = self.release_flags(a);
        if releases(a.sem) {
            if let Some(ts) = self.threads.get_mut(g as usize) {
                ts.release_ops.note(loc_key(a.loc), n);
            }
        }
        if releases(a.sem) && fencehound_hb::wide(a.scope) {
            self.note_wide_release(g);
        }
        let value = le_value(data);
        // The message first: a release raises the epoch, and the store is after it.
        let (mut msg, mut bmsg) = (None, None);
        self.messages(a, &mut msg, &mut bmsg);
        let epoch = self.hb.epoch(g);
        self.cur_value = value;
        self.check(mem, a, true, fl);
        // The later elements of a strong 16-byte vector store are the same operation as
        // its first ([`Access::indivisible`]: no model tears it): they share its number, so
        // that one half is never the other's "later write" (failed message passing).
        let same_op = a.indivisible && !a.loc.addr().is_multiple_of(16);
        let (number, signal) =
            self.note_strong_write(g, loc_key(a.loc), a.site, epoch, true, same_op);
        let w = sync_write(a, value, true, &mut msg, &mut bmsg, number, epoch, signal);
        remember_in(self.locs.sync_entry(loc_key(a.loc)), a, w);
        if value == 0 {
            self.unlock(a);
        }
    }

    /// An atomic that read `old` and wrote `new` (`None`: a compare-and-swap whose
    /// comparison failed, which writes nothing — PTX makes it a read, and not a release
    /// operation either).
    fn on_atomic(&mut self, mem: &Memory, a: &Access, old: u64, new: Option<u64>) {
        self.scoped_event(a.scope);
        let n = self.tick(a.thread.global);
        let stored = new.is_some();
        let new = new.unwrap_or(old);
        let fl = if stored { self.release_flags(a) } else { 0 }
            | if acquires(a.sem) { flags::ACQUIRE } else { 0 }
            | if old == new { flags::NOWRITE } else { 0 }
            | if stored { 0 } else { flags::FAILED };
        let release = stored && releases(a.sem);
        if release {
            if let Some(ts) = self.threads.get_mut(a.thread.global as usize) {
                ts.release_ops.note(loc_key(a.loc), n);
            }
        }
        self.cur_value = new;
        if release && fencehound_hb::wide(a.scope) {
            self.note_wide_release(a.thread.global);
        }
        // Release part (publishes what precedes the RMW), then the access, then the read
        // part (observes `old`), and the write continues the release sequence it read.
        let (mut msg, mut bmsg) = (None, None);
        if stored {
            self.messages(a, &mut msg, &mut bmsg);
        }
        let t = a.thread;
        let epoch = self.hb.epoch(t.global);
        // Only an RMW that wrote nothing (a failed CAS) or left the value as it was is a
        // read in shadow memory, whose position a strong candidate may ask for
        // ([`Self::read_number`]); any other is a write there.
        if !stored || old == new {
            self.note_read(a);
        }
        self.check(mem, a, true, fl);
        let (number, signal) = if stored {
            self.note_strong_write(t.global, loc_key(a.loc), a.site, epoch, false, false)
        } else {
            (0, false)
        };
        // The write it read (in its location's window), the release sequence its write
        // continues, and its own entry: one lookup of the window when it stores.
        let continues = |w: &SyncWrite, msg: &mut Option<Message>, bmsg: &mut Option<Message>| {
            if w.strong
                && (w.writer == t.global
                    || scopes_meet(CtaId(w.cta), w.scope, CtaId::of(t), a.scope))
            {
                if let Some(m) = &w.msg {
                    let own = msg.as_mut().map(std::mem::take);
                    *msg = Some(Message::continued(m, own));
                }
            }
            if w.strong {
                if let Some(m) = &w.blind {
                    let own = bmsg.as_mut().map(std::mem::take);
                    *bmsg = Some(Message::continued(m, own));
                }
            }
        };
        let src = if stored {
            let q = self.locs.sync_entry(loc_key(a.loc));
            let src = q
                .newest_first()
                .find(|w| w.value == old && w.size == a.size)
                .cloned();
            if let Some(w) = &src {
                continues(w, &mut msg, &mut bmsg);
            }
            let w = sync_write(a, new, true, &mut msg, &mut bmsg, number, epoch, signal);
            remember_in(q, a, w);
            src
        } else {
            self.written(a, old)
        };
        let flags = self.site_flags.get(a.site as usize).copied().unwrap_or(0);
        let claim = stored && old != new && flags & (SITE_CAS | SITE_EXCH) == 0;
        self.observe_found(a, src, claim);
        if !acquires(a.sem) && fencehound_hb::wide(a.scope) {
            let e = self.hb.epoch(t.global);
            if let Some(l) = self.cta_rmws.get_mut(t.cta as usize) {
                l.note(t.global, a.site, e);
            }
        }
        if flags & SITE_CAS != 0 {
            if let Some(ts) = self.threads.get_mut(a.thread.global as usize) {
                ts.cas_ops.note(loc_key(a.loc), n);
            }
            // The thread's own earlier weak read of this address fed this CAS: validated.
            self.deferred.remove(&(a.thread.global, loc_key(a.loc)));
        }
        if stored && flags & (SITE_CAS | SITE_EXCH) != 0 {
            if old == 0 && new != 0 {
                self.lock(a);
            } else if new == 0 {
                self.unlock(a);
            }
        }
    }

    fn lock(&mut self, a: &Access) {
        let Some(&held) = self.lock_sets.get(a.thread.global as usize) else {
            return;
        };
        let mut set = self.lock_table.get(held).to_vec();
        let k = loc_key(a.loc);
        if set.len() >= 8 || set.contains(&k) {
            return;
        }
        set.push(k);
        set.sort_unstable();
        self.lock_table.takers.insert((k, a.thread.global));
        let id = self.lock_table.intern(set);
        if !fencehound_hb::wide(a.scope) {
            let e = self
                .lock_table
                .cta_taken
                .entry(k)
                .or_insert((a.thread.cta, false));
            e.1 |= e.0 != a.thread.cta;
        }
        let acquired = acquires(a.sem) && fencehound_hb::wide(a.scope);
        if let Some(l) = self.lock_sets.get_mut(a.thread.global as usize) {
            *l = id;
        }
        if let Some(ts) = self.threads.get_mut(a.thread.global as usize) {
            ts.unsynced.retain(|u| u.0 != k);
            if !acquired {
                ts.unsynced.push((k, a.site, acquires(a.sem)));
            }
        }
    }

    fn unlock(&mut self, a: &Access) {
        let Some(&held) = self.lock_sets.get(a.thread.global as usize) else {
            return;
        };
        if held == 0 {
            return;
        }
        let k = loc_key(a.loc);
        let set = self.lock_table.get(held);
        if !set.contains(&k) {
            return;
        }
        let set: Vec<u64> = set.iter().copied().filter(|l| *l != k).collect();
        self.lock_table.confirmed.insert(k);
        let g = a.thread.global;
        let good =
            (releases(a.sem) && fencehound_hb::wide(a.scope)) || self.hb.has_wide_release_fence(g);
        if good {
            self.lock_table.good_release.insert((k, g));
        } else {
            self.lock_table.good_release.remove(&(k, g));
        }
        let id = self.lock_table.intern(set);
        if let Some(l) = self.lock_sets.get_mut(a.thread.global as usize) {
            *l = id;
        }
        if let Some(ts) = self.threads.existing_mut(a.thread.global as usize) {
            ts.unsynced.retain(|u| u.0 != k);
        }
    }

    /// [`flags::RELEASE`] and [`flags::WIDE_RELEASE`] of a strong write `a`: whether it
    /// completes a release pattern, and one of scope ≥ `.gpu`. (A release operation on
    /// its location before it counts as wide whatever its scope: rare, and the cautious
    /// side — fewer reports.)
    fn release_flags(&self, a: &Access) -> u8 {
        let g = a.thread.global;
        let own = releases(a.sem);
        let on_loc = || {
            self.threads
                .get(g as usize)
                .is_some_and(|t| t.release_ops.any(loc_key(a.loc)))
        };
        let (any_fence, wide_fence) = self.hb.release_fences(g);
        if (own && fencehound_hb::wide(a.scope)) || wide_fence || on_loc() {
            flags::RELEASE | flags::WIDE_RELEASE
        } else if own || any_fence {
            flags::RELEASE
        } else {
            0
        }
    }

    /// Thread `g` makes a device-scope release now (before its epoch is raised).
    fn note_wide_release(&mut self, g: u32) {
        let e = self.hb.epoch(g);
        if let Some(ts) = self.threads.get_mut(g as usize) {
            ts.wide_release = e;
        }
    }

    fn on_fence(&mut self, f: &Fence) {
        self.scoped_event(f.scope);
        if f.kind == FenceKind::Sc {
            // Before `hb.fence`, which raises the thread's epoch.
            let e = self.hb.epoch(f.thread.global);
            let wide = fencehound_hb::wide(f.scope);
            if let Some(ts) = self.threads.get_mut(f.thread.global as usize) {
                // Index 0 counts every fence.sc, index 1 the `.gpu`/`.sys` ones.
                for i in 0..1 + usize::from(wide) {
                    if ts.sc_first[i] == Epoch::NONE {
                        ts.sc_first[i] = e;
                    }
                    ts.sc_last[i] = e;
                }
            }
        }
        if f.kind != FenceKind::Acquire && fencehound_hb::wide(f.scope) {
            self.note_wide_release(f.thread.global);
        }
        let acquire = matches!(
            f.kind,
            FenceKind::Sc | FenceKind::AcqRel | FenceKind::Acquire
        );
        self.tick(f.thread.global);
        if acquire {
            self.note_acquire(f.thread, f.scope, None);
        }
        self.hb.fence(f.thread, f.kind, f.scope);
        if let Some(b) = &mut self.blind {
            b.fence(f.thread, f.kind, Scope::Sys);
        }
    }

    fn on_arrive(&mut self, b: &Barrier) {
        self.hb.arrive(b);
        if let Some(x) = &mut self.blind {
            x.arrive(b);
        }
    }

    fn on_release(&mut self, b: &Barrier, threads: &[ThreadRef]) {
        self.hb.release(b, threads);
        if let Some(x) = &mut self.blind {
            x.release(b, threads);
        }
    }

    fn end_launch(&mut self) {
        let mut held: Vec<_> = self.deferred.drain().flat_map(|(_, v)| v.list).collect();
        held.append(&mut std::mem::take(&mut self.lock_pending).list);
        for (key, raw) in held {
            let (key, raw) = self.finalize(key, raw);
            self.commit(key, raw);
        }
        // Otherwise an `unordered` pair is reported only when neither side is
        // synchronization at all (no release fence before the write, no acquire after the
        // read, the read no poll: the volatile warp reduction).
        for mut c in std::mem::take(&mut self.strong_pending) {
            // Followed by an acquire fence, or by an acquire operation on its location: an
            // acquire pattern (either form).
            // Across CTAs only an acquire fence of scope ≥ `.gpu` counts (a narrower one
            // after the read is named in the report). The CAS loop: the value read is
            // checked by a later CAS of the reader on the location (a stale read makes
            // the CAS fail), as for weak loads above.
            let cross = !self.same_cta(c.write.0, c.read.0);
            let (read, n, loc) = c.read;
            let (followed, narrow, validated) =
                self.threads
                    .get(read as usize)
                    .map_or((false, false, false), |t| {
                        let fence = if cross {
                            t.wide_acquire_fence
                        } else {
                            t.acquire_fence
                        };
                        (
                            fence > n || t.acquire_ops.after(loc, n),
                            cross && t.acquire_fence > n,
                            c.read_is_load && t.cas_ops.after(loc, n),
                        )
                    });
            c.raw.narrow_fences |= narrow;
            let outside = self.outside_critical_section(&c.raw);
            if outside {
                c.raw.lock = Some(LockProblem::Unprotected);
            }
            let handshake =
                !c.locked && self.handshake((c.write.0, c.write.2), (c.read.0, c.read_epoch));
            if (!c.write_release && !followed && !validated && !handshake) || outside {
                self.commit(c.key, c.raw);
            }
        }
        for c in std::mem::take(&mut self.waw_pending) {
            if !self.handshake(c.first, c.second) {
                self.commit(c.key, c.raw);
            }
        }
    }
}

impl<H: Hooks> Hooks for RaceCheck<H> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.reset(info);
        self.inner.launch_begin(info);
    }

    #[inline]
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.inner.load(mem, a, buf)?;
        self.on_load(mem, a, buf);
        Ok(())
    }

    #[inline]
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.inner.store(mem, a, data)?;
        self.on_store(mem, a, data);
        Ok(())
    }

    /// A warp's weak loads: the inner hooks load every lane (what they load does not
    /// depend on the race check, nor the reverse on anything but the values), then the
    /// lanes are checked in order, those before a failed lane only.
    fn load_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        if a.iter().any(|l| l.sem != Sem::Weak) {
            return load_each(self, mem, a, out);
        }
        let r = self.inner.load_warp(mem, a, out);
        let done = r.as_ref().err().map_or(a.len(), |e| e.0);
        self.on_weak_loads(mem, &a[..done]);
        r
    }

    /// A warp's weak stores, as [`Self::load_warp`].
    fn store_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        if a.iter().any(|l| l.sem != Sem::Weak) {
            return store_each(self, mem, a, vals);
        }
        let r = self.inner.store_warp(mem, a, vals);
        let done = r.as_ref().err().map_or(a.len(), |e| e.0);
        self.on_weak_stores(mem, &a[..done], &vals[..done]);
        r
    }

    #[inline]
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let mut new = None;
        let mut f = |old: u64| {
            new = rmw(old);
            new
        };
        let old = self.inner.atomic(mem, a, &mut f)?;
        // A failing compare-and-swap writes nothing; the race check still sees the RMW
        // access (its value, the one it read, is what memory holds).
        self.on_atomic(mem, a, old, new);
        Ok(old)
    }

    /// A weak load of bytes that no write of the launch reaches unordered is in no race:
    /// global bytes no thread writes (the vgpu's bound), or shared bytes in an interval of
    /// the CTA in which none of its threads has written shared memory since the barrier
    /// that began it and none can before the barrier that ends it (every write is ordered
    /// before or after the load by `bar.sync`). Nor does a weak read receive a message.
    /// So it is not recorded, when the model agrees to skip it too.
    #[inline]
    fn unwritten_loads(&mut self, first: u32, lanes: u32) -> bool {
        self.inner.unwritten_loads(first, lanes)
    }

    /// The model's answer: what the race check records of a load does not depend on where
    /// the load falls among other threads' loads, and in an interval in which no thread
    /// of the CTA can write shared memory before the next barrier, a shared load races
    /// only with writes made before it in the interval — found when it runs, whatever
    /// runs around it — and not with the writes after the barrier, which it orders.
    #[inline]
    fn settled(&self, cta: u32, first: u32, lanes: u32) -> bool {
        self.inner.settled(cta, first, lanes)
    }

    /// CTA-local picks (the vgpu's `ctalocal` module) when the model allows them: what
    /// the race check keeps is partitioned by location and by thread — shadow cells and
    /// read sets per byte (a CTA's shared window is its own), the per-key table of strong
    /// writes, hidden writes and windows, per-thread clocks, lock sets and program-order
    /// counts, the per-CTA recent RMWs, `hb`'s barriers per CTA — so a shared access,
    /// barrier or collective of one CTA and any step of another CTA touch disjoint parts,
    /// and commute to the same state up to labels (interned lock sets and read sets,
    /// compared only for equality), sums (statistics, occurrence counts) and the order in
    /// which pending candidates and reports were listed. Which pair is reported as a race
    /// is a function of each location's own sequence of accesses and of the clocks of the
    /// threads making them (FastTrack: Flanagan and Freund, PLDI 2009), both kept by the
    /// reordering. The candidates judged at the end of the launch (`strong_pending`,
    /// `waw_pending`, `deferred`, locked races) are judged on the final per-thread state
    /// (was the read followed by an acquire, was there a fence.sc before the write). The
    /// scope-blind twin starts as a copy of `hb` at the first narrow-scope event; before
    /// that the two are equal, so when it starts does not matter.
    #[inline]
    fn cta_steps_local(&self, cta: u32, first: u32, n: u32) -> bool {
        self.inner.cta_steps_local(cta, first, n)
    }

    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.on_fence(f);
        self.inner.fence(mem, f);
    }

    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.on_arrive(b);
        self.inner.barrier_arrive(mem, b);
    }

    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.on_release(b, threads);
        self.inner.barrier_release(mem, b, threads);
    }

    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.hb.exit(t.global);
        if let Some(b) = &mut self.blind {
            b.exit(t.global);
        }
        self.inner.thread_exit(mem, t);
    }

    /// Nothing can access the CTA's shared memory again: its keys' table and its shadow
    /// region go (see [`Locs`], [`Shadow::drop_shared`]).
    fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
        self.locs.drop_cta(cta as usize);
        self.shadow.drop_shared(cta as usize);
        self.inner.cta_exit(mem, cta);
    }

    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.inner.stalled(mem)
    }

    // Spin parking (see [`RaceCheck::park_spins`]): the model's counts, when allowed.
    #[inline]
    fn load_effects(&self) -> Option<u64> {
        self.park_spins.then(|| self.inner.load_effects()).flatten()
    }

    #[inline]
    fn shared_effects(&self) -> Option<u64> {
        self.park_spins
            .then(|| self.inner.shared_effects())
            .flatten()
    }

    #[inline]
    fn changed_blocks(&mut self, out: &mut Vec<u64>) -> bool {
        self.park_spins && self.inner.changed_blocks(out)
    }

    fn launch_end(&mut self, mem: &mut Memory) {
        self.end_launch();
        self.inner.launch_end(mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pending races keep one entry per race as the end of the launch classifies it, and
    /// later occurrences add to its count and addresses exactly as `commit` would.
    #[test]
    fn pending_races_hold_one_entry_per_race_not_per_occurrence() {
        let access = |global: u32| crate::report::RawAccess {
            cta: global / 32,
            tid: global % 32,
            global,
            site: 1,
            kind: AccessKind::Atomic,
            sem: Sem::Relaxed,
            scope: Scope::Gpu,
        };
        let race = |first: u32, addr: u64| {
            (
                RaceKey::new("k", 1, 2, RaceClass::IntraBlock),
                RawRace {
                    kernel: "k".into(),
                    class: RaceClass::IntraBlock,
                    conflict: Conflict::War,
                    first: access(first),
                    second: access(99),
                    shared_cta: None,
                    addr,
                    allocation: None,
                    lock: None,
                    acquire_site: None,
                    signal: None,
                    acquire_lock: 0,
                    lock_ids: (1, 0),
                    addresses: Default::default(),
                    reader_rmw: None,
                    writer_unreleased: false,
                    narrow_fences: false,
                    occurrences: 1,
                    executions: 1,
                    last_execution: 0,
                },
            )
        };
        let mut p = PendingRaces::default();
        for i in 0..1000u64 {
            // 20 first threads, each race at two addresses.
            let (k, r) = race((i % 20) as u32, 0x100 + (i / 20 % 2) * 8);
            p.add(k, r);
        }
        assert_eq!(p.list.len(), 20);
        for (i, (_, r)) in p.list.iter().enumerate() {
            assert_eq!(
                r.first.global, i as u32,
                "first occurrences keep their order"
            );
            assert_eq!(r.occurrences, 50);
            // The first occurrence's own address is added when it is committed.
            assert_eq!(
                r.addresses.iter().copied().collect::<Vec<_>>(),
                vec![0x100, 0x108]
            );
        }
        // Committed one by one or merged first: the same race set.
        let mut one = RaceCheck::new(fencehound_vgpu::NoHooks);
        let mut merged = RaceCheck::new(fencehound_vgpu::NoHooks);
        for i in 0..1000u64 {
            let (k, r) = race((i % 20) as u32, 0x100 + (i / 20 % 2) * 8);
            one.commit(k, r);
        }
        for (k, r) in p.list {
            merged.commit(k, r);
        }
        assert_eq!(format!("{:?}", one.races), format!("{:?}", merged.races));
    }

    /// [`RecentRmws`] is the list it replaced: per note, the thread's older entry dropped,
    /// then the oldest if [`CTA_RMWS`] are held, then the new one at the end; `forget`
    /// drops the thread's entry. Checked against a `Vec` on a long pseudo-random sequence.
    /// A CTA's shared-memory entries of the location table and its shadow region go
    /// when its last thread exits, and the launch's statistics still count them.
    #[test]
    fn a_ctas_shared_state_goes_with_its_last_thread() {
        use fencehound_vgpu::{Arg, Device, Dim3, LaunchOptions, NoHooks, RoundRobin};
        // Every thread: an RMW on shared word 0 (a window for its key), then a weak
        // store to its own word (shadow cells), then a store of its own word to global.
        let ptx = r#".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 sm[512];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mov.u32 %r5, sm;
    atom.shared.add.u32 %r6, [%r5], 1;
    shl.b32 %r7, %r1, 2;
    add.u32 %r7, %r7, 4;
    add.u32 %r7, %r7, %r5;
    st.shared.u32 [%r7], %r4;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r6;
    ret;
}
"#;
        let module = fencehound_ptx::parse("k.ptx", ptx).expect("parse");
        let mut dev = Device::new();
        let id = dev.load_module(&module).expect("load");
        let out = dev.alloc(4 * 4 * 64).expect("alloc");
        let mut rc = RaceCheck::new(NoHooks);
        let r = dev
            .launch_with(
                id,
                "k",
                Dim3::x(4),
                Dim3::x(64),
                0,
                &[Arg::Ptr(out)],
                LaunchOptions::default(),
                &mut rc,
                &mut RoundRobin::new(1),
            )
            .expect("launch");
        assert!(r.outcome.is_completed());
        assert!(rc.races().is_empty());
        assert_eq!(rc.locs.shared.len(), 4, "every CTA made a window");
        assert!(rc.locs.shared.iter().all(|m| m.is_empty()));
        assert!(rc.locs.is_empty());
        assert!(rc.shadow.shared.iter().all(|r| r.len == 0));
        let s = rc.stats();
        // One window per CTA (its counter word), and each CTA's 260 shared bytes tracked
        // besides the output's.
        assert_eq!(s.sync_locations, 4);
        let per_cta = 260usize.div_ceil(PAGE);
        assert_eq!(rc.shadow.gone_pages, 4 * per_cta);
        assert!(
            s.tracked_bytes >= ((4 * per_cta + 1) * PAGE) as u64,
            "{s:?}"
        );
        assert!(s.shadow_bytes >= rc.shadow.gone_bytes as u64 && rc.shadow.gone_bytes > 0);
    }

    #[test]
    fn recent_rmws_keep_the_lists_order_and_bound() {
        let mut r = RecentRmws::default();
        let mut v: Vec<(u32, u32, Epoch)> = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..5000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = (x % 7) as u32;
            if x.is_multiple_of(5) {
                r.forget(t);
                v.retain(|e| e.0 != t);
            } else {
                let e = (t, i, Epoch::FIRST);
                r.note(e.0, e.1, e.2);
                v.retain(|e| e.0 != t);
                if v.len() >= CTA_RMWS {
                    v.remove(0);
                }
                v.push(e);
            }
            assert_eq!(r.iter().copied().collect::<Vec<_>>(), v, "step {i}");
        }
    }

    /// Each side of the location table behaves as a map of its own: an entry made for
    /// hidden writes is no window (a plain store to it is not remembered, `on_store`),
    /// dropping a word's hidden writes keeps its window, and the statistics count windows.
    #[test]
    fn location_table_sides_are_separate_maps() {
        let mut locs = Locs::default();
        let w = Rec::new(3, Epoch::FIRST, 0, 0, 0, 0);
        locs.hidden_entry(8).hide(w, 0b1111);
        assert!(locs.sync(8).is_none() && locs.sync_mut(8).is_none());
        assert_eq!(locs.hidden(8).map(|h| h.len()), Some(1));
        assert_eq!(locs.sync_len(), 0);
        let a = Access {
            thread: ThreadRef {
                cta: 0,
                tid: 3,
                global: 3,
                lane: 3,
                warp: 0,
            },
            loc: Location::Global(8),
            size: 4,
            kind: AccessKind::Atomic,
            sem: Sem::Relaxed,
            scope: Scope::Gpu,
            site: 0,
            launch: 0,
            indivisible: false,
            newest: false,
        };
        remember_in(
            locs.sync_entry(8),
            &a,
            sync_write(&a, 5, true, &mut None, &mut None, 1, Epoch::FIRST, false),
        );
        assert_eq!(locs.sync_len(), 1);
        locs.hidden_remove(8);
        assert!(locs.hidden(8).is_none() && locs.hidden_mut(8).is_none());
        assert_eq!(locs.sync(8).map(|q| q.newest_first().count()), Some(1));
        // A hidden-only entry leaves the table when its list goes.
        locs.hidden_entry(12).hide(w, 0b0011);
        locs.hidden_remove(12);
        assert!(!locs.global.contains_key(&12));
    }

    /// Location keys that differ only above bit 32 (one shared offset in every CTA) must
    /// not share their hash's low bits (the bucket a probe starts at): with the
    /// multiplicative hash the table used before, all 256 of these started at one bucket.
    #[test]
    fn shared_keys_of_many_ctas_spread_over_buckets() {
        use std::hash::BuildHasher;
        let h = fencehound_hb::fasthash::FastMap::<u64, ()>::default();
        let buckets: std::collections::HashSet<u64> = (0..256u32)
            .map(|cta| {
                h.hasher()
                    .hash_one(loc_key(Location::Shared { cta, offset: 64 }))
                    & 1023
            })
            .collect();
        assert!(
            buckets.len() > 200,
            "{} distinct buckets of 1024",
            buckets.len()
        );
    }

    /// The first read set of a launch (index 0) stays a read set when a further read
    /// meets it: its reference once read as "no read", and the read replaced the set.
    #[test]
    fn the_first_read_set_keeps_its_reads() {
        let mut sets = ReadSets::default();
        let read = |g| Rec::new(g, Epoch::FIRST, 0, 0, 0, 0);
        let unordered = |_: &Rec| false;
        let mut cell = Cell::default();
        for g in 1..=3 {
            record_read(&mut cell, read(g), 1, &mut sets, &unordered);
        }
        assert_eq!(cell.r.kind(), meta::READ_SET);
        assert_eq!(cell.r.read_set(), 0);
        let readers: Vec<u32> = sets.get(cell.r.read_set()).iter().map(|r| r.g).collect();
        assert_eq!(readers, [1, 2, 3]);
    }

    #[test]
    fn recent_writes_wrap_and_list_newest_first() {
        let mut r = Recent::default();
        for n in 1..=3u32 {
            r.push((u64::from(n), 0, Epoch::NONE, n));
        }
        let order: Vec<u32> = r.newest_first().map(|x| x.3).collect();
        assert_eq!(order, [3, 2, 1]);
        let total = RECENT_WRITES as u32 + 5;
        for n in 4..=total {
            r.push((u64::from(n), 0, Epoch::NONE, n));
        }
        let order: Vec<u32> = r.newest_first().map(|x| x.3).collect();
        assert_eq!(order.len(), RECENT_WRITES);
        assert_eq!(order[0], total);
        assert_eq!(order[RECENT_WRITES - 1], total - RECENT_WRITES as u32 + 1);
        assert!(order.windows(2).all(|w| w[0] == w[1] + 1));
    }

    /// Every store the `weak` model lets a load read is still in the read's window, so
    /// the read finds the write it read (or a newer one of the same value).
    #[test]
    fn the_sync_window_covers_what_a_weak_load_can_read() {
        let readable = fencehound_handlers::weak::READABLE_STORES;
        assert!(
            SYNC_WRITES >= readable,
            "window {SYNC_WRITES} < weak model's {readable}"
        );
        let mut q = SyncQueue::default();
        let w = |value| SyncWrite {
            value,
            size: 8,
            writer: 0,
            cta: 0,
            scope: Scope::Cta,
            strong: true,
            site: 0,
            number: 0,
            epoch: Epoch::NONE,
            signal: false,
            msg: None,
            blind: None,
        };
        for v in 0..20u64 {
            q.push(w(v));
        }
        let kept: Vec<u64> = q.newest_first().map(|x| x.value).collect();
        let newest: Vec<u64> = (20 - readable as u64..20).rev().collect();
        assert_eq!(kept[..readable], newest[..]);
    }
}
