//! The `weak` memory model: loads may read older values wherever the PTX memory model
//! allows it, and only there.
//!
//! # Why
//!
//! Write buffers (`bugaroo`, `scoped`) only ever *delay stores*; every load reads the
//! newest value that reached memory. That exposes missing fences on the writer's side and
//! nothing on the reader's: a consumer that polls a flag and reads data without an acquire
//! fence, a lock taken by a relaxed `atomicCAS` with no fence after it, a seqlock reader
//! without its fence — all pass, and `audit` would call their fences redundant. PTX allows
//! those readers to see stale data; this model produces exactly such executions.
//!
//! # The model (per-location histories and views, after tsan11 — Lidbury & Donaldson,
//! POPL'17 —, miri's `weak_memory.rs` and C11Tester, ASPLOS'21, adapted to PTX)
//!
//! * **Histories.** Every store enters the history of its location when it executes (no
//!   store is delayed). A location is an exactly-matching (offset, size) inside an 8-byte
//!   block; a history keeps the launch's initial value and the last [`HISTORY`] stores
//!   (older ones are forgotten: they can no longer be read, which only removes behaviours).
//!   Memory always holds the newest store, so a load that reads the newest value is a
//!   plain memory read. Histories start empty at each launch (kernel boundaries
//!   synchronize everything).
//! * **Coherence order** is *partial*, as in PTX (Dat3M's `ptx-v7.5.cat`: `co` is total
//!   only among morally strong writes): a new store `W` of thread `T` is coherence-after
//!   the stores `T` knows (causality: happens-before and observations, [`fencehound_hb`]),
//!   after every store it is morally strong with, after the launch's initial value, and
//!   after everything those follow (transitively). Unordered weak stores stay unordered,
//!   so two readers may see them in different orders (`Co-Total-*`, `Coherence-weak`).
//! * **Reads.** A load of `T` may read a store `S` of the location unless `S` is
//!   coherence-before a store that `T` knows (the Causality axiom: `irreflexive((rf | fr);
//!   cause)`). The newest store is always allowed. A load that skips newer stores reads
//!   *stale*; which store it reads is a seeded choice (below).
//! * **Observations.** A morally strong read of another thread's store that `T` did not
//!   already know is recorded ([`fencehound_hb::obs`]): later reads of `T`, and of whoever
//!   synchronizes with `T` later, may not read anything coherence-before it (CoRR across
//!   threads). Weak reads record nothing (PTX gives them no coherence guarantee against
//!   other threads' writes: `CoWW-RR`).
//! * **Read-modify-writes** read a store that no store morally strong with the RMW
//!   follows in coherence order (the Atomicity axiom) — the newest, unless the newer ones
//!   are not morally strong with it (e.g. `atomicAdd_block` from another CTA, which may
//!   then lose an update) — and their write enters the history coherence-after what they
//!   read. An RMW that reads a store carrying a release continues its release sequence.
//! * **Synchronization** is the shared PTX happens-before ([`fencehound_hb::Hb`]): scoped
//!   release/acquire patterns, release sequences, fence-SC order, barriers (named,
//!   counted, arrive), `bar.warp.sync`. A `.cta` release synchronizes only with readers of
//!   the same CTA, so `__threadfence_block()` where `__threadfence()` is needed shows up
//!   as stale reads in the other CTA — no CTA overlay is needed.
//!
//! # Choice (the `p` knob)
//!
//! When a load (or RMW) may read older stores, it reads stale with probability `p` (the
//! campaign's `p_w` sweep; `p = 0` is sequential consistency for loads), and then a store
//! chosen uniformly among the allowed older ones; otherwise the newest. Both choices come
//! from a counter-based hash of (seed, launch, thread, that thread's load count), so an
//! execution replays bit for bit. The buffer filters keep their meaning: `sites` — only
//! stores at these sites may be skipped by a stale read; `buffer_global`/`buffer_shared` —
//! stale reads only in that space; `kernels` — only in launches of these kernels.
//!
//! # Liveness
//!
//! A spin loop could read a stale flag forever. When the vgpu reports that nothing makes
//! progress ([`Hooks::stalled`]), loads of the locations the threads are polling (each
//! thread's latest load) read the newest store until the next store, atomic, barrier or
//! thread exit; if it stalls again before that, every load does; only if that does not
//! help either is the state final (a real deadlock or hang). Other locations keep their
//! stale choices, so the data read after a spin can still be stale (the reader-side bug
//! a missing acquire fence leaves).
//!
//! # Soundness argument
//!
//! Every execution is an execution of the PTX axiomatic model: writes enter coherence
//! order no later than they execute and always coherence-after everything their thread
//! knows (Coherence axiom), morally strong writes are totally ordered (Coherence2), RMWs
//! read a coherence-latest morally strong write (Atomicity), a read never reads a store
//! coherence-before one that precedes it in causality order (Causality), fence-SC order
//! is the execution order of the fences and so agrees with causality (FenceSC), and a read
//! only reads stores that already executed (No-Thin-Air). Where we approximate (observation
//! thresholds, spilled publications, forgotten old stores, mixed-size accesses reading the
//! newest bytes), the approximation adds constraints, never removes them. Checked against
//! the PTX litmus suite (`litmus/RESULTS.md`: 0 unsound).
//!
//! # What it cannot produce
//!
//! Load buffering and out-of-thin-air shapes (a read returning a store that executes
//! later, `LB-*`): reads only see stores that already executed. Stores are not reordered
//! in coherence against program order beyond what the partial order leaves open.

use crate::buffers::{BufferConfig, TraceEvent};
use crate::select;
use crate::stats::{BufferStats, WeakStats};
use fencehound_hb::fasthash::FastMap;
use fencehound_hb::sync::{acquires, strong};
use fencehound_hb::{Epoch, Hb, Message, ReadOrd, WriteOrd};
use fencehound_vgpu::exec::WARP;
use fencehound_vgpu::hooks::{self, le_value, RmwFn};
// A location as one word, as in the buffers.
use fencehound_vgpu::memory::location_key as pack;
use fencehound_vgpu::{
    Access, Barrier, Fence, Hooks, LaunchInfo, Location, MemError, Memory, Scope, SiteId, ThreadRef,
};
use std::collections::BTreeSet;
use std::rc::Rc;

/// Stores kept per 8-byte block besides the oldest surviving one (the bound on each
/// location's history). Older stores are forgotten: no load can read them any more.
pub const HISTORY: usize = 4;
/// Entries in a block's list at most: [`HISTORY`] stores plus initial values.
const LIST_CAP: usize = HISTORY + 2;
/// The most stores of one location a load can choose among (the newest included): its
/// block's list. The race check matches reads to the writes they read within a window
/// that must be at least this long.
pub const READABLE_STORES: usize = LIST_CAP;
const _: () = assert!(LIST_CAP <= 16, "coherence masks are u16");

/// The page of global address `a` in [`WeakMemory`]'s slot pages, and its block there.
#[inline]
fn page_of(a: u64) -> (u64, usize) {
    (
        a / (PAGE_BLOCKS as u64 * 8),
        ((a / 8) % PAGE_BLOCKS as u64) as usize,
    )
}

/// `writer` of a launch's initial value.
const INIT: u32 = u32::MAX;

const F_STRONG: u8 = 1;
const F_WIDE: u8 = 2;
const F_RMW: u8 = 4;

/// 8-byte blocks per page of the global-memory index.
const PAGE_BLOCKS: usize = 512;

/// One store in a block's history: 32 bytes (issue 24, per-thread state at 1 M threads:
/// a block two threads store to holds four entries, and at 48 bytes they were the
/// largest per-thread item of the `weak` model after the registers). The insertion
/// number shares a word with the narrow fields, the writer's CTA is derived from the
/// writer, and the message lives in [`WeakMemory`]'s message table.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// `seq << SEQ_SHIFT | size << 14 | off << 11 | flags << 8 | co`: the insertion number
    /// in the launch (0 for initial values); the bytes `off..off + size` of the block it
    /// writes; `F_*` flags; bit `j` of `co`: the entry at position `j` of the block's
    /// list is coherence-before this one.
    hdr: u64,
    value: u64,
    writer: u32,
    epoch: Epoch,
    site: SiteId,
    /// What the store publishes (strong stores after a release pattern): an index into
    /// [`WeakMemory::msgs`], 0 for nothing.
    msg: u32,
}

/// Where the insertion number starts in [`Entry::hdr`]: 2^44 stores in one launch (days
/// of interpretation at today's speed) are the limit.
const SEQ_SHIFT: u32 = 20;
const _: () = assert!(
    LIST_CAP < 8,
    "coherence masks (LIST_CAP + 1 bits) are stored in 8 bits"
);
const _: () = assert!(std::mem::size_of::<Entry>() == 32);

impl Entry {
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn new(
        seq: u64,
        value: u64,
        writer: u32,
        epoch: Epoch,
        site: SiteId,
        msg: u32,
        off: u8,
        size: u8,
        flags: u8,
    ) -> Entry {
        debug_assert!(seq < 1 << (64 - SEQ_SHIFT) && off < 8 && (1..=8).contains(&size));
        Entry {
            hdr: seq << SEQ_SHIFT | (size as u64) << 14 | (off as u64) << 11 | (flags as u64) << 8,
            value,
            writer,
            epoch,
            site,
            msg,
        }
    }
    #[inline(always)]
    fn seq(&self) -> u64 {
        self.hdr >> SEQ_SHIFT
    }
    #[inline(always)]
    fn co(&self) -> u16 {
        (self.hdr & 0xff) as u16
    }
    #[inline(always)]
    fn set_co(&mut self, co: u16) {
        // One more than the bound while an insertion waits for the oldest to go.
        debug_assert!(co < 1 << (LIST_CAP + 1));
        self.hdr = (self.hdr & !0xff) | (co as u64 & 0xff);
    }
    #[inline(always)]
    fn flags(&self) -> u8 {
        (self.hdr >> 8 & 7) as u8
    }
    #[inline(always)]
    fn off(&self) -> u8 {
        (self.hdr >> 11 & 7) as u8
    }
    #[inline(always)]
    fn size(&self) -> u8 {
        (self.hdr >> 14 & 15) as u8
    }

    /// Whether this entry is morally strong with an access of scope `scope` by thread
    /// `t` (`tpb` threads per CTA): strong, and the scopes meet
    /// ([`fencehound_hb::sync::scopes_meet`], with the writer's CTA derived).
    #[inline(always)]
    fn ms(&self, tpb: u32, t: ThreadRef, scope: Scope) -> bool {
        self.strong()
            && ((fencehound_hb::wide(self.scope()) && fencehound_hb::wide(scope))
                || self.writer / tpb == t.cta)
    }

    /// Thread `t`'s own store, or a strong one morally strong with an access of `t` of
    /// scope `scope`: an RMW of `t` reads nothing coherence-before it, and continues its
    /// release sequence.
    #[inline]
    fn own_or_ms(&self, tpb: u32, t: ThreadRef, scope: Scope) -> bool {
        self.writer == t.global || self.ms(tpb, t, scope)
    }

    #[inline]
    fn overlaps(&self, off: u8, size: u8) -> bool {
        self.off() < off + size && off < self.off() + self.size()
    }
    #[inline]
    fn strong(&self) -> bool {
        self.flags() & F_STRONG != 0
    }
    #[inline]
    fn scope(&self) -> Scope {
        if self.flags() & F_WIDE != 0 {
            Scope::Gpu
        } else {
            Scope::Cta
        }
    }
}

/// Drops one entry of a list that went past its bound: the oldest entry that another
/// entry of exactly its bytes follows in coherence (else the oldest that a later entry of
/// its bytes follows in the list, else the oldest of all). Its message-table slot is
/// freed for reuse (0, "nothing", never is), and the others' coherence masks lose its bit.
///
/// A block holds several locations (two 4-byte words, four 2-byte ones…) in one list.
/// Dropping simply the oldest entry dropped the *only* entry of one location when another
/// location of the block was written often — a spinning RMW on `flag[0]` pushed out the
/// release store to `flag[1]` — and a load of that location then found none of its size,
/// read memory's newest bytes and took no message: an acquire that read the flag did not
/// synchronize, and the data after it read stale (an outsider program: two message
/// passings in opposite directions between two CTAs failed the default `exec` on 4 of 8
/// seeds). Now a location's newest entry goes only when every entry of the list is the
/// only one of its location — never with 4-byte or larger accesses (at most two locations
/// per block), only with seven or more byte-sized locations in one block; and then it is
/// kept aside ([`WeakMemory::orphans`]) rather than lost.
///
/// Returns the dropped entry, its message slot kept, when it was its location's last
/// entry in the list (the caller keeps it aside: [`WeakMemory::orphans`]).
fn forget_one(
    list: &mut Vec<Entry>,
    msgs: &mut [Option<Rc<Message>>],
    free: &mut Vec<u32>,
) -> Option<Entry> {
    let same = |a: &Entry, b: &Entry| a.off() == b.off() && a.size() == b.size();
    let n = list.len();
    let i = (0..n)
        .find(|&i| (0..n).any(|j| j != i && same(&list[i], &list[j]) && list[j].co() >> i & 1 == 1))
        .or_else(|| (0..n).find(|&i| (i + 1..n).any(|j| same(&list[i], &list[j]))))
        .unwrap_or(0);
    let old = list.remove(i);
    // Entries before `i` are coherence-after older entries only: their masks keep.
    let low = (1u16 << i) - 1;
    for x in list[i..].iter_mut() {
        let co = x.co();
        x.set_co((co & low) | (co >> (i + 1)) << i);
    }
    if !list.iter().any(|x| same(x, &old)) {
        return Some(old);
    }
    free_slot(msgs, free, old.msg);
    None
}

/// Frees message-table slot `m` for reuse (0, "nothing", never is).
fn free_slot(msgs: &mut [Option<Rc<Message>>], free: &mut Vec<u32>, m: u32) {
    if m != 0 {
        msgs[m as usize] = None;
        free.push(m);
    }
}

/// What the filters allow.
#[derive(Debug, Clone)]
pub struct WeakConfig {
    pub p: f64,
    pub seed: u64,
    pub global: bool,
    pub shared: bool,
    pub kernels: Option<BTreeSet<String>>,
    pub sites: Option<BTreeSet<SiteId>>,
    pub trace: bool,
}

/// The `weak` model's state (see the module docs).
pub struct WeakMemory {
    cfg: WeakConfig,
    threshold: u64,
    launch: u32,
    /// Stale reads allowed in this launch (kernel filter).
    active: bool,
    hb: Hb,
    /// Global memory: page number → index into `pages`.
    page_index: FastMap<u64, u32>,
    pages: Vec<[u32; PAGE_BLOCKS]>,
    last_page: (u64, u32),
    /// Shared memory: per CTA, one slot per 8-byte block (allocated on first store).
    shared: Vec<Vec<u32>>,
    /// Block lists; index 0 is unused (slot value 0 means "no history").
    /// A list is a `Vec` (24 bytes) rather than a `VecDeque` (32): at most [`LIST_CAP`]
    /// entries, so dropping the oldest by shifting is cheap (issue 24: per-thread state).
    lists: Vec<Vec<Entry>>,
    /// What history entries publish ([`Entry::msg`]); index 0 is "nothing" and stays
    /// `None`. Slots of forgotten entries go to `free_msgs` for reuse.
    msgs: Vec<Option<Rc<Message>>>,
    free_msgs: Vec<u32>,
    /// (list, offset, size) → the newest store of a location whose last entry a full list
    /// had to drop (more locations in one 8-byte block than a list holds: byte flags),
    /// its message slot kept. The next access of the location puts it back
    /// ([`WeakMemory::restore`]); a newer store of the location drops it. Without it a
    /// read of such a location found no entry, read memory and synchronized with nothing
    /// (UNSOUND.md, `weak-byte-flags`).
    orphans: FastMap<(u32, u8, u8), Entry>,
    /// Threads per CTA of the launch (an entry's CTA is its writer's number over it).
    tpb: u32,
    seq: u64,
    live_entries: u64,
    /// What [`Self::heap_bytes`] counted of the histories freed so far this launch, as
    /// they were when freed (they cannot change after), so that the statistic is what the
    /// launch's histories held.
    gone_heap: usize,
    /// Loads per thread (the counter of the choice hash).
    loads: Vec<u32>,
    /// Liveness: a stall is being resolved (until something makes progress); see
    /// [`WeakMemory::stalled`].
    fresh: bool,
    /// Within `fresh`: every read is of the newest store (a stall that polled no new
    /// location).
    fresh_all: bool,
    /// The locations whose reads are of the newest store for the rest of the launch:
    /// every thread's latest load at each stall so far, as [`Self::polled_key`]s.
    ///
    /// Per location, not per list (8-byte block): with the block, a reader spinning on a
    /// flag at `p = 1` read the data in the flag's block fresh after the stall, and a
    /// missing fence between a flag and its payload in one struct never failed at `p = 1`
    /// (`campaigns/minimizer/mailbox`). Kept past progress, not only until it: the
    /// per-location set, emptied at every store, made a look-back over adjacent status
    /// words take one stall per word in lockstep, and a later tile's "inclusive prefix
    /// ready" status was never read in time — `cub_scan no_fence_3` at `p = 1` failed 0
    /// of 50 (2026-12-07).
    polled: Vec<u64>,
    /// Per thread, the [`Self::polled_key`] of its latest load (`u64::MAX`: none yet).
    last_loc: Vec<u64>,
    /// A thread of this launch observed a store ([`Hb::observe`]: the only source of
    /// observations): until then every thread's are empty.
    observed: bool,
    /// Per CTA: a thread of it may hold an observation of a location outside the CTA's
    /// shared memory ([`WeakMemory::cta_steps_local`]).
    tainted: Vec<bool>,
    stats: WeakStats,
}

/// Which stores a read may return: bit `j` for the entry at position `j`.
struct Choice {
    /// Exactly matching entries.
    exact: u16,
    /// Position of the newest exact entry.
    newest: usize,
    allowed: u16,
}

impl WeakMemory {
    pub fn new(cfg: WeakConfig) -> Self {
        WeakMemory {
            threshold: select::threshold(cfg.p),
            cfg,
            launch: 0,
            active: false,
            hb: Hb::new(),
            page_index: FastMap::default(),
            pages: Vec::new(),
            last_page: (u64::MAX, 0),
            shared: Vec::new(),
            lists: vec![Vec::new()],
            msgs: vec![None],
            free_msgs: Vec::new(),
            orphans: FastMap::default(),
            tpb: 1,
            seq: 0,
            live_entries: 0,
            gone_heap: 0,
            loads: Vec::new(),
            fresh: false,
            fresh_all: false,
            polled: Vec::new(),
            last_loc: Vec::new(),
            observed: false,
            tainted: Vec::new(),
            stats: WeakStats::default(),
        }
    }

    /// A slot of the message table for `m` (0 for `None`).
    fn put_msg(&mut self, m: Option<Rc<Message>>) -> u32 {
        let Some(m) = m else { return 0 };
        match self.free_msgs.pop() {
            Some(i) => {
                self.msgs[i as usize] = Some(m);
                i
            }
            None => {
                self.msgs.push(Some(m));
                self.msgs.len() as u32 - 1
            }
        }
    }

    pub fn stats(&self) -> &WeakStats {
        &self.stats
    }

    /// Heap bytes of histories and synchronization state.
    pub fn heap_bytes(&self) -> usize {
        let e = std::mem::size_of::<Entry>();
        self.lists
            .iter()
            .map(|l| 24 + l.capacity() * e)
            .sum::<usize>()
            + self
                .lists
                .iter()
                .flatten()
                .filter_map(|x| self.msgs[x.msg as usize].as_ref())
                .map(|m| m.heap_bytes())
                .sum::<usize>()
            + self.gone_heap
            + self.pages.len() * (PAGE_BLOCKS * 4 + 16)
            + self.page_index.capacity() * 16
            + self.shared.iter().map(|s| s.capacity() * 4).sum::<usize>()
            + self.loads.capacity() * 4
            + self.hb.heap_bytes()
    }

    fn space_enabled(&self, loc: Location) -> bool {
        if loc.is_shared() {
            self.cfg.shared
        } else {
            self.cfg.global
        }
    }

    /// The list of `loc`'s block if it has one, as [`WeakMemory::slot`] finds it without
    /// creating one, and without touching anything (not even the page memo).
    #[inline]
    fn peek_slot(&self, loc: Location) -> Option<usize> {
        let li = match loc {
            Location::Global(a) => {
                let (page, blk) = page_of(a);
                let pi = if self.last_page.0 == page {
                    self.last_page.1
                } else {
                    *self.page_index.get(&page)?
                };
                self.pages[pi as usize][blk]
            }
            Location::Shared { cta, offset } => {
                *self.shared.get(cta as usize)?.get(offset as usize / 8)?
            }
        };
        (li != 0).then_some(li as usize)
    }

    /// Reads the block lists that a warp's `accesses` are about to use, all of them
    /// before any is needed, so that their cache misses overlap instead of coming one
    /// after the other in the lanes' loads: first every list's header, then every list's
    /// first entry (the header says where the entries are). Nothing changes; it only
    /// brings memory in. (`perf annotate`: half of `WeakMemory::choice`, itself over a
    /// third of `exec --model weak` on a 4 M-element transpose, waited for a list's
    /// header, the other half for its entries; each lane of a warp reads another list.)
    pub(crate) fn warm(&self, accesses: &[Access]) {
        let mut li = [0u32; WARP];
        let n = accesses.len().min(WARP);
        for (k, a) in accesses[..n].iter().enumerate() {
            li[k] = self.peek_slot(a.loc).unwrap_or(0) as u32;
        }
        let mut touch = 0usize;
        for &l in &li[..n] {
            touch = touch.wrapping_add(self.lists[l as usize].len());
        }
        for &l in &li[..n] {
            if let Some(e) = self.lists[l as usize].first() {
                touch ^= e.hdr as usize;
            }
        }
        std::hint::black_box(touch);
    }

    /// The list index of `loc`'s block (creating the slot when `create`).
    fn slot(&mut self, mem: &Memory, loc: Location, create: bool) -> Option<usize> {
        match loc {
            Location::Global(a) => {
                let (page, blk) = page_of(a);
                let pi = if self.last_page.0 == page {
                    self.last_page.1
                } else {
                    let pi = match self.page_index.get(&page) {
                        Some(p) => *p,
                        None if create => {
                            self.pages.push([0; PAGE_BLOCKS]);
                            let p = self.pages.len() as u32 - 1;
                            self.page_index.insert(page, p);
                            p
                        }
                        None => return None,
                    };
                    self.last_page = (page, pi);
                    pi
                };
                let s = &mut self.pages[pi as usize][blk];
                if *s == 0 {
                    if !create {
                        return None;
                    }
                    self.lists.push(Vec::with_capacity(2));
                    *s = self.lists.len() as u32 - 1;
                }
                Some(*s as usize)
            }
            Location::Shared { cta, offset } => {
                let c = cta as usize;
                let blk = offset as usize / 8;
                if self.shared.len() <= c {
                    if !create {
                        return None;
                    }
                    self.shared.resize_with(c + 1, Vec::new);
                }
                let v = &mut self.shared[c];
                if v.len() <= blk {
                    if !create {
                        return None;
                    }
                    let len = mem.shared.get(c).map_or(0, |s| s.len()).div_ceil(8);
                    v.resize(len.max(blk + 1), 0);
                }
                if v[blk] == 0 {
                    if !create {
                        return None;
                    }
                    self.lists.push(Vec::with_capacity(2));
                    v[blk] = self.lists.len() as u32 - 1;
                }
                Some(v[blk] as usize)
            }
        }
    }

    /// Whether thread `g` knows entry `e` of block `key`: it happens before the thread,
    /// or the thread observed it or a later store *of its location*. Observations are
    /// kept per location (the block key with the entry's offset, [`Self::obs_key`]): kept
    /// per 8-byte block, a strong read of a flag made every earlier store to the other
    /// half of its block "known" — `struct { int flag; int data; }` written by one
    /// thread, flag polled by another with no acquire, never read stale data (PTX allows
    /// it; found with libcu++'s `atomic_ref::wait` on adjacent words, 2026-12-07).
    #[inline]
    fn known(hb: &Hb, g: u32, key: u64, e: &Entry) -> bool {
        e.writer == INIT
            || hb.knows(g, e.writer, e.epoch)
            || hb
                .obs(g)
                .is_some_and(|o| e.seq() <= o.threshold(Self::obs_key(key, e)))
    }

    /// A location as [`Self::polled`] names it: its list and its offset in the block.
    #[inline]
    fn polled_key(li: usize, off: u8) -> u64 {
        (li as u64) << 3 | off as u64
    }

    /// The observation key of entry `e` of block `key`: the block with the entry's
    /// offset (locations of one offset but different sizes share it — mixed sizes read
    /// the newest bytes anyway, [`Self::choice`]).
    #[inline]
    fn obs_key(key: u64, e: &Entry) -> u64 {
        key | e.off() as u64
    }

    /// The entries of list `li` of exactly (off, size), as a mask, and the newest of them;
    /// `None` when there is none, or when an overlapping entry has another offset or size.
    fn exact_entries(&self, li: usize, off: u8, size: u8) -> Option<(u16, usize)> {
        let mut exact = 0u16;
        for (p, e) in self.lists[li].iter().enumerate() {
            if e.overlaps(off, size) {
                if e.off() != off || e.size() != size {
                    return None;
                }
                exact |= 1 << p;
            }
        }
        (exact != 0).then(|| (exact, 15 - exact.leading_zeros() as usize))
    }

    /// For a read of (off, size) that [`Self::choice`] leaves to memory (mixed sizes):
    /// the newest overlapping entry, when it covers every byte of the read and memory
    /// holds its bytes there (`buf`) — the read then reads that store, and a strong read
    /// of a strong store synchronizes with it as a same-size one would.
    ///
    /// PTX ISA (memory consistency model, "morally strong"): two memory operations are
    /// morally strong only if they *overlap completely*, so by the letter a 16-bit acquire
    /// load of a 32-bit release store's bytes synchronizes with nothing. We deliberately
    /// let a store that *contains* the read count: libcu++ builds its sub-word atomics on
    /// exactly that — `cuda::atomic_ref<uint8_t>` (or `<bool>`, `<char>`) releases with a
    /// 32-bit `atom.cas.release` on the enclosing word and acquires with a 16-bit
    /// `ld.acquire` of the enclosing half-word — and NVIDIA's hardware honours it; by the
    /// letter every such program (a byte flag array) fails under `weak` with stale data.
    /// This removes outcomes PTX allows, never adds one PTX forbids: it can hide a bug
    /// only in code that synchronizes through contained mixed-size accesses, which the
    /// race check (same rule, `RaceCheck::written`) does not report either.
    fn containing(&self, li: usize, off: u8, size: u8, buf: &[u8]) -> Option<usize> {
        let (pos, e) = self.lists[li]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, e)| e.overlaps(off, size))?;
        if e.off() > off || off + size > e.off() + e.size() || buf.len() != size as usize {
            return None;
        }
        let v = e.value >> (8 * (off - e.off()) as u32);
        (v.to_le_bytes()[..buf.len()] == *buf).then_some(pos)
    }

    /// Exact entries, the newest, and what thread `g` may read (None: mixed sizes).
    fn choice(&self, li: usize, g: u32, key: u64, off: u8, size: u8) -> Option<Choice> {
        let (exact, newest) = self.exact_entries(li, off, size)?;
        let list = &self.lists[li];
        let others = exact & !(1 << newest);
        // Fast path: the thread knows the newest store and every other one precedes it.
        if others == 0
            || (list[newest].co() & others == others
                && Self::known(&self.hb, g, key, &list[newest]))
        {
            return Some(Choice {
                exact,
                newest,
                allowed: 1 << newest,
            });
        }
        // Causality: nothing coherence-before a store the thread knows.
        let mut forbidden = 0u16;
        for (p, e) in list.iter().enumerate() {
            if exact >> p & 1 == 1 && Self::known(&self.hb, g, key, e) {
                forbidden |= e.co();
            }
        }
        let allowed = (exact & !forbidden) | 1 << newest;
        Some(Choice {
            exact,
            newest,
            allowed,
        })
    }

    /// Whether the filters let a store of `site` be delayed (skipped by a stale read, or
    /// placed early in coherence order): every site unless the minimizer restricts them.
    #[inline]
    fn site_delayable(&self, site: SiteId) -> bool {
        self.cfg.sites.as_ref().is_none_or(|s| s.contains(&site))
    }

    /// With probability `p`, one of the bits of `among` (uniformly); the thread's
    /// decision counter advances either way.
    fn pick_among(&mut self, g: u32, among: u16, salt: u64) -> Option<usize> {
        let n = self.loads.get(g as usize).copied().unwrap_or(0);
        if let Some(x) = self.loads.get_mut(g as usize) {
            *x = x.wrapping_add(1);
        }
        let h = select::mix(
            select::mix(
                select::mix(select::mix(self.cfg.seed ^ salt) ^ self.launch as u64) ^ g as u64,
            ) ^ n as u64,
        );
        if (h >> 11) >= self.threshold || among == 0 {
            return None;
        }
        let k = (select::mix(h) % among.count_ones() as u64) as usize;
        (0..16).filter(|p| among >> p & 1 == 1).nth(k)
    }

    /// Picks what a read returns among `cands` (entries older than the newest); the
    /// newest when the coin says fresh or nothing older may be read.
    fn pick(&mut self, li: usize, g: u32, c: &Choice, cands: u16) -> usize {
        let n = self.loads.get(g as usize).copied().unwrap_or(0);
        if let Some(x) = self.loads.get_mut(g as usize) {
            *x = x.wrapping_add(1);
        }
        // Skippable: only stores the filters allow may be skipped by a stale read.
        let list = &self.lists[li];
        let mut ok = 0u16;
        let mut suffix_ok = true;
        for p in (0..=c.newest).rev() {
            if c.exact >> p & 1 == 0 {
                continue;
            }
            if p != c.newest && suffix_ok && cands >> p & 1 == 1 {
                ok |= 1 << p;
            }
            suffix_ok &= self.site_delayable(list[p].site);
        }
        if ok == 0
            || !self.active
            || (self.fresh && self.fresh_all)
            || (!self.polled.is_empty()
                && self
                    .polled
                    .binary_search(&Self::polled_key(li, list[c.newest].off()))
                    .is_ok())
        {
            return c.newest;
        }
        let h = select::mix(
            select::mix(
                select::mix(select::mix(self.cfg.seed ^ 0x7765_616b) ^ self.launch as u64)
                    ^ g as u64,
            ) ^ n as u64,
        );
        if (h >> 11) >= self.threshold {
            return c.newest;
        }
        let k = (select::mix(h) % ok.count_ones() as u64) as usize;
        (0..16)
            .filter(|p| ok >> p & 1 == 1)
            .nth(k)
            .unwrap_or(c.newest)
    }

    /// Appends a store to list `li`, coherence-after `preds` and what they follow; forgets
    /// the oldest entry beyond the bound.
    // Always inlined: built in the caller and copied through the stack, the entry's
    // narrow fields written just before were re-read as 16-byte words (a stalled
    // store-to-load forward, a fifth of this function's time).
    #[inline(always)]
    fn push(&mut self, li: usize, mut e: Entry, preds: u16) -> usize {
        let list = &mut self.lists[li];
        let mut co = preds;
        // An entry is only ever coherence-after entries older than it, so when every
        // entry is a predecessor their `co` add nothing.
        if preds != ((1u32 << list.len()) - 1) as u16 {
            for (p, x) in list.iter().enumerate() {
                if preds >> p & 1 == 1 {
                    co |= x.co();
                }
            }
        }
        e.set_co(co);
        list.push(e);
        self.live_entries += 1;
        self.bound(li);
        self.stats.entries_peak = self.stats.entries_peak.max(self.live_entries);
        self.supersede_orphan(li, &e);
        self.lists[li].len() - 1
    }

    /// A list past its bound drops one entry ([`forget_one`]); a location's last entry is
    /// kept aside ([`WeakMemory::orphans`]).
    fn bound(&mut self, li: usize) {
        if self.lists[li].len() <= LIST_CAP {
            return;
        }
        let gone = forget_one(&mut self.lists[li], &mut self.msgs, &mut self.free_msgs);
        self.live_entries -= 1;
        let Some(o) = gone else { return };
        if let Some(old) = self.orphans.insert((li as u32, o.off(), o.size()), o) {
            self.free_msg(old.msg);
        }
    }

    /// A new entry of `e`'s location: a kept-aside store of it is older, and goes.
    #[inline]
    fn supersede_orphan(&mut self, li: usize, e: &Entry) {
        if self.orphans.is_empty() {
            return;
        }
        if let Some(old) = self.orphans.remove(&(li as u32, e.off(), e.size())) {
            self.free_msg(old.msg);
        }
    }

    fn free_msg(&mut self, m: u32) {
        free_slot(&mut self.msgs, &mut self.free_msgs, m);
    }

    /// Puts back the kept-aside newest store of location (`off`, `size`) of list `li`
    /// when the list holds no entry of the location, and memory still holds its value
    /// (no store of another size overwrote its bytes since): an access of the location
    /// then reads it, and synchronizes with it, like any entry.
    fn restore(&mut self, mem: &Memory, li: usize, loc: Location, off: u8, size: u8) {
        if self.orphans.is_empty() {
            return;
        }
        let key = (li as u32, off, size);
        let Some(o) = self.orphans.get(&key).copied() else {
            return;
        };
        if self.lists[li].iter().any(|e| e.overlaps(off, size)) {
            return;
        }
        self.orphans.remove(&key);
        if mem.read_u64(loc, size as u32).ok() != Some(o.value) {
            self.free_msg(o.msg);
            return;
        }
        self.push(li, o, 0);
    }

    /// Positions where a plain store of thread `t` may enter coherence order other than at
    /// the end: before a suffix of the list that holds only stores `t` does not know
    /// (they would otherwise have to precede it) and no read-modify-write (an RMW must
    /// stay right after what it read: Atomicity). Bit `q`: "insert at position `q`".
    fn insertion_points(&self, li: usize, required: u16, off: u8, size: u8) -> u16 {
        let list = &self.lists[li];
        if list
            .iter()
            .any(|e| e.overlaps(off, size) && (e.off() != off || e.size() != size))
        {
            return 0;
        }
        let first = 16 - required.leading_zeros() as usize;
        // Before at least one later store of the location (else it is simply the newest),
        // and with no RMW of the location after the insertion point.
        let mut points = 0u16;
        let mut later_store = false;
        for q in (first..list.len()).rev() {
            let e = &list[q];
            if e.off() == off && e.size() == size {
                if e.flags() & F_RMW != 0 {
                    break;
                }
                later_store = true;
            }
            if later_store {
                points |= 1 << q;
            }
        }
        points
    }

    /// Whether inserting a store of thread `t` (strong with scope `sw`) at list position
    /// `q` leaves the coherence order among the existing entries as it is. The insertion
    /// makes everything before the new store (what it must follow) coherence-before
    /// everything after it (what it must precede), transitively; if that orders two
    /// entries that were unordered, a read already made may become inconsistent after the
    /// fact (a thread that knew the later one read the earlier: UNSOUND.md,
    /// `weak-late-insertion`). Such positions are not used.
    #[allow(clippy::too_many_arguments)]
    fn insertion_orders_nothing_new(
        &self,
        li: usize,
        q: usize,
        required: u16,
        t: ThreadRef,
        sw: Option<Scope>,
        off: u8,
        size: u8,
    ) -> bool {
        let tpb = self.tpb;
        let ms =
            |x: &Entry| x.off() == off && x.size() == size && sw.is_some_and(|s| x.ms(tpb, t, s));
        let list = &self.lists[li];
        let mut before = 0u16;
        for (p, x) in list.iter().enumerate().take(q) {
            if required >> p & 1 == 1 || ms(x) {
                before |= 1 << p | x.co();
            }
        }
        let mut after = 0u16;
        for (p, x) in list.iter().enumerate().skip(q) {
            if ms(x) || x.co() & after != 0 {
                after |= 1 << p;
                if x.co() & before != before {
                    return false;
                }
            }
        }
        true
    }

    /// Inserts plain store `e` of thread `t` at list position `q`: coherence-after the
    /// `required` entries, the entries before `q` it is morally strong with, and what
    /// those follow; coherence-before the entries from `q` on that it is morally strong
    /// with, and whatever follows those.
    fn insert_at(
        &mut self,
        li: usize,
        mut e: Entry,
        q: usize,
        required: u16,
        t: ThreadRef,
        sw: Option<Scope>,
    ) {
        let tpb = self.tpb;
        let ms = |x: &Entry| {
            x.off() == e.off() && x.size() == e.size() && sw.is_some_and(|s| x.ms(tpb, t, s))
        };
        let list = &mut self.lists[li];
        let mut co = 0u16;
        for (p, x) in list.iter().enumerate().take(q) {
            if required >> p & 1 == 1 || ms(x) {
                co |= 1 << p | x.co();
            }
        }
        let widen = |m: u16| (m & ((1u16 << q) - 1)) | ((m >> q) << (q + 1));
        let succs: Vec<bool> = list.iter().map(ms).collect();
        for x in list.iter_mut() {
            x.set_co(widen(x.co()));
        }
        e.set_co(co);
        list.insert(q, e);
        let mut after = 0u16;
        for p in q + 1..list.len() {
            if succs[p - 1] || list[p].co() & after != 0 {
                let c = list[p].co() | 1 << q | co;
                list[p].set_co(c);
                after |= 1 << p;
            }
        }
        self.live_entries += 1;
        self.bound(li);
        self.stats.entries_peak = self.stats.entries_peak.max(self.live_entries);
        self.stats.reordered_stores += 1;
        self.supersede_orphan(li, &e);
    }

    /// Entries a new write of thread `t` (strong with scope `sw`) follows in coherence
    /// order: `(preds, required)`. `required` are those it must follow wherever it goes —
    /// the ones `t` knows, and every overlapping entry of another size (mixed sizes are
    /// read as the newest bytes anyway); `preds` adds the ones it is morally strong with
    /// (ordered before it when it goes last).
    fn write_preds(
        &self,
        li: usize,
        t: ThreadRef,
        key: u64,
        off: u8,
        size: u8,
        sw: Option<Scope>,
    ) -> (u16, u16) {
        let (mut preds, mut required) = (0u16, 0u16);
        for (p, e) in self.lists[li].iter().enumerate() {
            if !e.overlaps(off, size) {
                continue;
            }
            let exact = e.off() == off && e.size() == size;
            if !exact || Self::known(&self.hb, t.global, key, e) {
                required |= 1 << p;
                preds |= 1 << p;
            } else if sw.is_some_and(|s| e.ms(self.tpb, t, s)) {
                preds |= 1 << p;
            }
        }
        (preds, required)
    }

    /// [`Self::write_preds`]' first result for an RMW of scope `scope`, asking
    /// happens-before (the costly part) only about entries that are not morally strong
    /// with it: those are predecessors either way. (Every RMW on a counter that all
    /// threads increment asked it about every entry of the history.)
    fn rmw_preds(&self, li: usize, t: ThreadRef, key: u64, off: u8, size: u8, scope: Scope) -> u16 {
        let mut preds = 0u16;
        for (p, e) in self.lists[li].iter().enumerate() {
            if !e.overlaps(off, size) {
                continue;
            }
            let exact = e.off() == off && e.size() == size;
            if !exact || e.ms(self.tpb, t, scope) || Self::known(&self.hb, t.global, key, e) {
                preds |= 1 << p;
            }
        }
        preds
    }

    /// The common case of what an RMW reads, decided without happens-before: when the
    /// newest entry of its exact size is morally strong with it (or its own) and
    /// coherence-after every other such entry, [`Self::atomic`]'s candidates are empty
    /// whatever [`Self::choice`] allows (they exclude everything coherence-before a
    /// morally strong entry, and the newest itself), so it reads the newest. `None`:
    /// decide the long way (also when an overlapping entry has another size, where
    /// `choice` gives up).
    fn rmw_reads_newest(
        &self,
        li: usize,
        t: ThreadRef,
        off: u8,
        size: u8,
        scope: Scope,
    ) -> Option<usize> {
        let (exact, newest) = self.exact_entries(li, off, size)?;
        let others = exact & !(1 << newest);
        let e = &self.lists[li][newest];
        (e.own_or_ms(self.tpb, t, scope) && e.co() & others == others).then_some(newest)
    }

    /// Ensures the block has an initial-value entry for (off, size): the bytes memory
    /// holds before the launch's first store there.
    fn ensure_init(
        &mut self,
        mem: &Memory,
        li: usize,
        loc: Location,
        off: u8,
        size: u8,
    ) -> Result<(), MemError> {
        self.restore(mem, li, loc, off, size);
        let list = &self.lists[li];
        if list.iter().any(|e| e.off() == off && e.size() == size) {
            return Ok(());
        }
        let mut b = [0u8; 8];
        mem.read(loc, &mut b[..size as usize])?;
        let init = Entry::new(
            0,
            u64::from_le_bytes(b),
            INIT,
            Epoch::NONE,
            SiteId::MAX,
            0,
            off,
            size,
            0,
        );
        // Initial values follow nothing; any other-size entries are older history that
        // reads of this location never choose (mixed sizes read the newest bytes).
        let preds = self.lists[li]
            .iter()
            .enumerate()
            .filter(|(_, e)| e.overlaps(off, size))
            .fold(0u16, |m, (p, _)| m | 1 << p);
        self.push(li, init, preds);
        Ok(())
    }

    fn note_stale(
        &mut self,
        trace: &mut Vec<TraceEvent>,
        a: &Access,
        li: usize,
        read: usize,
        newest: usize,
    ) {
        self.stats.stale_reads += 1;
        if !self.cfg.trace {
            return;
        }
        let l = &self.lists[li];
        let site = |e: &Entry| (e.writer != INIT).then_some(e.site);
        trace.push(TraceEvent::StaleRead {
            thread: a.thread.global,
            site: a.site,
            loc: a.loc,
            value: l[read].value,
            read_seq: l[read].seq(),
            read_site: site(&l[read]),
            newest_seq: l[newest].seq(),
            newest_site: site(&l[newest]),
            newest_value: l[newest].value,
        });
    }

    /// The read of entry `pos` by `a` synchronizes (and is recorded as an observation)
    /// when the two are morally strong.
    fn sync_read(&mut self, a: &Access, li: usize, pos: Option<usize>, key: u64) {
        let t = a.thread;
        let r_strong = strong(a.sem);
        if let Some(pos) = pos {
            let e = &self.lists[li][pos];
            let ms =
                r_strong && e.writer != INIT && e.writer != t.global && e.ms(self.tpb, t, a.scope);
            if ms {
                let msg = self.msgs[e.msg as usize].clone();
                let (seq, known) = (e.seq(), Self::known(&self.hb, t.global, key, e));
                let okey = Self::obs_key(key, e);
                self.hb
                    .read(t, ReadOrd::of(a.kind, a.sem), a.scope, msg.as_ref());
                if !known {
                    self.observed = true;
                    self.hb.observe(t.global, okey, seq);
                }
                return;
            }
        }
        if acquires(a.sem) {
            self.hb.read(t, ReadOrd::of(a.kind, a.sem), a.scope, None);
        }
    }

    pub fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.launch = info.launch;
        self.active = self
            .cfg
            .kernels
            .as_ref()
            .is_none_or(|k| k.contains(info.kernel));
        self.hb.begin(info.threads, info.ctas, info.threads_per_cta);
        self.page_index.clear();
        self.pages.clear();
        self.last_page = (u64::MAX, 0);
        self.shared.clear();
        self.lists.truncate(1);
        self.msgs.truncate(1);
        self.free_msgs.clear();
        self.orphans.clear();
        self.tpb = info.threads_per_cta.max(1);
        self.seq = 0;
        self.live_entries = 0;
        self.gone_heap = 0;
        self.observed = false;
        self.tainted.clear();
        self.tainted.resize(info.ctas as usize, false);
        self.loads.clear();
        self.loads.resize(info.threads as usize, 0);
        self.last_loc.clear();
        self.polled.clear();
        self.last_loc.resize(info.threads as usize, u64::MAX);
        self.fresh = false;
    }

    pub fn launch_end(&mut self) {
        self.stats.peak_heap = self.stats.peak_heap.max(self.heap_bytes() as u64);
        self.stats.histories_peak = self.stats.histories_peak.max(self.lists.len() as u64 - 1);
    }

    /// Counts `n` loads that read memory without [`WeakMemory::load`] (see
    /// `Hooks::unwritten_loads`).
    pub fn count_loads(&mut self, n: u64) {
        self.stats.loads += n;
    }

    pub fn load(
        &mut self,
        mem: &mut Memory,
        a: &Access,
        buf: &mut [u8],
        trace: &mut Vec<TraceEvent>,
    ) -> Result<(), MemError> {
        self.stats.loads += 1;
        mem.read(a.loc, buf)?;
        let (key, off, size) = (pack(a.loc) & !7, (pack(a.loc) & 7) as u8, a.size as u8);
        let Some(li) = self.slot(mem, a.loc, false) else {
            if acquires(a.sem) {
                self.hb
                    .read(a.thread, ReadOrd::of(a.kind, a.sem), a.scope, None);
            }
            return Ok(());
        };
        let g = a.thread.global;
        if let Some(x) = self.last_loc.get_mut(g as usize) {
            *x = Self::polled_key(li, off);
        }
        self.restore(mem, li, a.loc, off, size);
        let Some(c) = self.choice(li, g, key, off, size) else {
            // Mixed sizes (or nothing of this size stored): the newest bytes. When they
            // are all one store's, the read reads that store ([`Self::containing`]).
            if let Some(pos) = self.containing(li, off, size, buf) {
                self.sync_read(a, li, Some(pos), key);
                return Ok(());
            }
            if acquires(a.sem) {
                self.hb
                    .read(a.thread, ReadOrd::of(a.kind, a.sem), a.scope, None);
            }
            return Ok(());
        };
        // An element of a strong 16-byte vector reads the newest value, as its sibling
        // does: the vector is one message (vgpu `Access::indivisible`).
        let cands = if self.space_enabled(a.loc) && !a.indivisible && !a.newest {
            c.allowed & !(1 << c.newest)
        } else {
            0
        };
        let pos = if cands == 0 {
            c.newest
        } else {
            self.pick(li, g, &c, cands)
        };
        if pos != c.newest {
            let v = self.lists[li][pos].value;
            buf.copy_from_slice(&v.to_le_bytes()[..buf.len()]);
            self.note_stale(trace, a, li, pos, c.newest);
        }
        self.sync_read(a, li, Some(pos), key);
        Ok(())
    }

    pub fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        let t = a.thread;
        let (key, off, size) = (pack(a.loc) & !7, (pack(a.loc) & 7) as u8, a.size as u8);
        // Fast path, the common case of a location only this thread writes: every entry
        // that overlaps the store has its offset and size and is the thread's own or the
        // initial value (entries of the block's other bytes do not matter). The thread
        // knows all of them, so the store follows each one (`preds` = `required` = those)
        // and has no insertion point (nothing of the location comes after the last of
        // them) — what the general path computes, in one pass.
        let known_block = self.slot(mem, a.loc, false);
        let mut exact = 0u16;
        let mut own = known_block.is_some();
        if let Some(li) = known_block {
            for (p, e) in self.lists[li].iter().enumerate() {
                if e.overlaps(off, size) {
                    if e.off() == off
                        && e.size() == size
                        && (e.writer == t.global || e.writer == INIT)
                    {
                        exact |= 1 << p;
                    } else {
                        own = false;
                        break;
                    }
                }
            }
        }
        let own = own && exact != 0;
        // Fault before any state changes: on the fast path the store goes to memory now
        // (it is the newest of the coherence order), elsewhere a probe read checks it.
        if own {
            mem.write(a.loc, data)?;
        } else {
            let mut probe = [0u8; 8];
            mem.read(a.loc, &mut probe[..data.len()])?;
        }
        let s = strong(a.sem);
        let msg = if s {
            self.hb
                .write_message(t, WriteOrd::of(a.kind, a.sem), a.scope, a.loc, a.size)
        } else {
            None
        };
        let epoch = self.hb.epoch(t.global);
        self.fresh = false;
        if let Some(li) = known_block.or_else(|| self.slot(mem, a.loc, true)) {
            let sw = s.then_some(a.scope);
            let (preds, required) = if own {
                (exact, exact)
            } else {
                self.ensure_init(mem, li, a.loc, off, size)?;
                self.write_preds(li, t, key, off, size, sw)
            };
            // Coherence order need not follow execution order: the store may go before
            // later stores its thread does not know (same coin as stale reads).
            // Only a store the filters allow may be delayed this way too (the minimizer's
            // store bisection: without this, under `weak` a lost update still failed with
            // no store allowed to be delayed, and no store was singled out).
            let mut q = None;
            if !own
                && self.active
                && self.site_delayable(a.site)
                && self.space_enabled(a.loc)
                && !self.fresh
                && !a.indivisible
            {
                let mut points = self.insertion_points(li, required, off, size);
                for q in 0..16 {
                    if points >> q & 1 == 1
                        && !self.insertion_orders_nothing_new(li, q, required, t, sw, off, size)
                    {
                        points &= !(1 << q);
                    }
                }
                if points != 0 {
                    q = self
                        .pick_among(t.global, points, 0x696e_7372)
                        .map(|q| (q, required));
                }
            }
            let value = le_value(data);
            self.seq += 1;
            let m = self.put_msg(msg.map(Rc::new));
            let e = Entry::new(
                self.seq,
                value,
                t.global,
                epoch,
                a.site,
                m,
                off,
                size,
                if s { F_STRONG } else { 0 }
                    | if fencehound_hb::wide(a.scope) {
                        F_WIDE
                    } else {
                        0
                    },
            );
            if let Some((q, required)) = q {
                // Memory keeps the newest store of the coherence order.
                self.insert_at(li, e, q, required, t, sw);
                return Ok(());
            }
            self.push(li, e, preds);
        }
        if own {
            return Ok(());
        }
        mem.write(a.loc, data)
    }

    pub fn atomic(
        &mut self,
        mem: &mut Memory,
        a: &Access,
        rmw: RmwFn<'_>,
        trace: &mut Vec<TraceEvent>,
    ) -> Result<u64, MemError> {
        let current = mem.read_u64(a.loc, a.size)?;
        self.stats.rmws += 1;
        let t = a.thread;
        let g = t.global;
        let (key, off, size) = (pack(a.loc) & !7, (pack(a.loc) & 7) as u8, a.size as u8);
        let Some(li) = self.slot(mem, a.loc, true) else {
            if let Some(new) = rmw(current) {
                mem.write_u64(a.loc, a.size, new)?;
            }
            return Ok(current);
        };
        self.ensure_init(mem, li, a.loc, off, size)?;
        // What it reads: allowed, and followed by no store morally strong with it.
        let (pos, newest) = match self.rmw_reads_newest(li, t, off, size, a.scope) {
            Some(newest) => (Some(newest), newest),
            None => match self.choice(li, g, key, off, size) {
                Some(c) => {
                    let mut after_ms = 0u16;
                    for (p, e) in self.lists[li].iter().enumerate() {
                        if c.exact >> p & 1 == 1 && e.own_or_ms(self.tpb, t, a.scope) {
                            after_ms |= e.co();
                        }
                    }
                    let cands = if self.space_enabled(a.loc) {
                        c.allowed & !after_ms & !(1 << c.newest)
                    } else {
                        0
                    };
                    let pos = if cands == 0 {
                        c.newest
                    } else {
                        self.pick(li, g, &c, cands)
                    };
                    (Some(pos), c.newest)
                }
                None => (None, 0),
            },
        };
        let old = match pos {
            Some(p) => self.lists[li][p].value,
            None => current,
        };
        if let Some(p) = pos.filter(|p| *p != newest) {
            self.stats.stale_rmws += 1;
            self.note_stale(trace, a, li, p, newest);
        }
        // Acquire first, then release: PTX orders an RMW's read before its write (base
        // causality through the instruction), so what its read part acquired is published
        // by its write's release too — an acq_rel RMW that takes a `.cta` release of its
        // CTA passes it on to a `.gpu` acquirer elsewhere (UNSOUND.md,
        // `hb-rmw-publishes-acquired`: released first, it did not).
        self.sync_read(a, li, pos, key);
        let mut msg = self
            .hb
            .write_message(t, WriteOrd::of(a.kind, a.sem), a.scope, a.loc, a.size);
        let chained = pos.and_then(|p| {
            let e = &self.lists[li][p];
            if e.own_or_ms(self.tpb, t, a.scope) {
                self.msgs[e.msg as usize].clone()
            } else {
                None
            }
        });
        if let Some(c) = chained {
            msg = Some(Message::continued(&c, msg.take()));
        }
        let epoch = self.hb.epoch(g);
        let mut preds = self.rmw_preds(li, t, key, off, size, a.scope);
        if let Some(p) = pos {
            preds |= 1 << p;
        }
        let mask = if a.size >= 8 {
            u64::MAX
        } else {
            (1u64 << (a.size * 8)) - 1
        };
        // A failing compare-and-swap is only a read: no store enters the history (and
        // memory keeps the newest store), whatever value it read.
        let Some(new) = rmw(old) else {
            return Ok(old);
        };
        let new = new & mask;
        // Progress, which ends the liveness rule's fresh reads ([`Self::stalled`]), is a
        // store that changes a value: an RMW that fails or writes the value it read is a
        // poll, as the vgpu counts it. (It ended them at every RMW, before its own read:
        // the failed CASes of a spinlock released by a plain store read the stale "held"
        // at every stall, and `exec --model weak` of such a lock never ended.)
        if new != old {
            self.fresh = false;
        }
        self.seq += 1;
        let m = self.put_msg(msg.filter(|m| !m.is_empty()).map(Rc::new));
        let e = Entry::new(
            self.seq,
            new,
            g,
            epoch,
            a.site,
            m,
            off,
            size,
            F_STRONG
                | F_RMW
                | if fencehound_hb::wide(a.scope) {
                    F_WIDE
                } else {
                    0
                },
        );
        self.push(li, e, preds);
        mem.write_u64(a.loc, a.size, new)?;
        Ok(old)
    }

    pub fn fence(&mut self, f: &Fence) {
        self.hb.fence(f.thread, f.kind, f.scope);
    }

    pub fn barrier_arrive(&mut self, b: &Barrier) {
        self.hb.arrive(b);
    }

    pub fn barrier_release(&mut self, b: &Barrier, threads: &[ThreadRef]) {
        self.fresh = false;
        self.hb.release(b, threads);
    }

    pub fn thread_exit(&mut self) {
        self.fresh = false;
    }

    /// CTA `cta` has no thread left: nothing can access its shared memory again, so the
    /// entries of its blocks' histories go (CUB's onesweep radix sort, 131,072 keys:
    /// 2.3 M shared histories, 400 MB, in its upsweep launch, all alive to the end of the
    /// launch, and freed one by one at the next launch's start). What stays is all that
    /// anything outside the block's own accesses reads: the lists' numbers (the polled
    /// set and the kept-aside orphans name blocks by them; a number is never reused
    /// within a launch) and the messages' slots (freeing them would change which slot
    /// the next message takes). `live_entries` keeps counting the dropped entries, so
    /// `entries_peak` is the same as without this.
    pub fn drop_cta(&mut self, cta: usize) {
        let Some(slots) = self.shared.get(cta) else {
            return;
        };
        let e = std::mem::size_of::<Entry>();
        for &li in slots.iter().filter(|&&li| li != 0) {
            let list = std::mem::take(&mut self.lists[li as usize]);
            self.gone_heap += list.capacity() * e
                + list
                    .iter()
                    .filter_map(|x| self.msgs[x.msg as usize].as_ref())
                    .map(|m| m.heap_bytes())
                    .sum::<usize>();
        }
    }

    /// Liveness: the locations the threads are polling — each thread's latest load —
    /// read the newest store from now to the end of the launch. A stall that adds no
    /// location to that set (every thread polls one already fresh) makes every load read
    /// the newest store until something makes progress. Returns false when every load
    /// already did (the state is final). Each stall grows the set (bounded by the
    /// locations loaded) or makes every load fresh, so a spin that can end does.
    ///
    /// Reading a location's newest store is always allowed, so the rule adds no outcome;
    /// what it costs is stale reads of polled locations after their stall, which a spin
    /// only turns into more spinning. (Every load read the newest store from the first
    /// stall on, before 2026-12-05: at `p = 1` a consumer's flag read is stale until the
    /// stall, and then its read of the data the flag guards was never stale — a chained
    /// scan with both fences removed passed 10 of 10 seeds at `p = 1` and failed 10 of 10
    /// at `p = 0.5`. Until 2026-12-07 the polled set was per 8-byte block and emptied at
    /// progress, and the second stall in a row made every load fresh; see
    /// [`Self::polled`] for what each hid.)
    /// `Hooks::cta_steps_local` (the vgpu's CTA-local picks): whether a step of CTA
    /// `cta`'s threads (`first .. first + n`) that starts with a shared access, a CTA
    /// barrier or a warp collective reads and changes only what belongs to the CTA here,
    /// or what no order of steps among CTAs changes. Such a step reaches: the histories
    /// of the CTA's shared blocks (lists and slots are labels; coherence, insertion
    /// points and messages are per location), its threads' load counters (the choice
    /// hash is per thread), knowledge and observations in `hb` (a barrier joins the
    /// CTA's threads only; fences and the fence-SC order are not such steps), `fresh`
    /// (cleared by stores and barriers) and statistics. Two things are not the CTA's:
    /// - the liveness rule: while a stall is being resolved (`fresh`), a barrier or
    ///   store of this CTA ends it for every thread — so not then; a stall only comes
    ///   after the vgpu's picks are global again, and it asks anew;
    /// - sequence numbers: `seq` is one counter for the launch, and an observation's
    ///   threshold is compared with the stores of its own location only — but a
    ///   watermark ([`fencehound_hb::obs`], more than `CAP` locations observed) is
    ///   compared with every location's, so once a thread of the CTA may hold an
    ///   observation of another location than the CTA's own shared memory, the relative
    ///   numbering of this CTA's shared stores and other CTAs' stores would matter.
    ///   Observations travel where knowledge does — into messages kept in shared
    ///   histories (after their writer exited), pending lists a later shared acquire
    ///   joins, barrier accumulators — but they enter a CTA only through its threads'
    ///   own observations, made by their loads and RMWs, and through what their loads,
    ///   RMWs and fences acquire from outside. So a CTA is *tainted* ([`Self::note`]) by
    ///   any global load, RMW or fence of its threads once some thread of the launch has
    ///   observed a store ([`Hb::observe`] is the one source: until then no knowledge,
    ///   message or pending list holds any), and by an observation of a location that is
    ///   not its own shared memory; only while it is not. A shared access observes only
    ///   the CTA's own shared stores, numbered in the same relative order among them
    ///   either way.
    pub fn cta_steps_local(&self, cta: u32, _first: u32, _n: u32) -> bool {
        // (A trace records events in execution order: as the write buffers, not then.)
        !(self.fresh || self.cfg.trace || self.tainted.get(cta as usize).is_none_or(|&t| t))
    }

    /// After an access or fence of thread `t` (`global`: not to shared memory; fences
    /// count as global): taints its CTA when it may have brought in an observation from
    /// outside ([`Self::cta_steps_local`]).
    #[inline]
    pub fn note(&mut self, t: ThreadRef, global: bool) {
        if global && self.observed {
            if let Some(x) = self.tainted.get_mut(t.cta as usize) {
                *x = true;
            }
        }
    }

    pub fn stalled(&mut self) -> bool {
        if !self.active || (self.fresh && self.fresh_all) {
            return false;
        }
        if !self.fresh {
            self.fresh_all = false;
        }
        let before = self.polled.len();
        let mut added = false;
        for &x in &self.last_loc {
            if x != u64::MAX && self.polled[..before].binary_search(&x).is_err() {
                self.polled.push(x);
                added = true;
            }
        }
        if added {
            self.polled.sort_unstable();
            self.polled.dedup();
        }
        if self.fresh && !added {
            self.fresh_all = true;
        }
        self.fresh = true;
        self.stats.liveness += 1;
        true
    }

    /// Adds this model's statistics to `s`.
    pub fn fill_stats(&self, s: &mut BufferStats) {
        s.weak = Some(self.stats.clone());
    }
}

/// The `weak` model as vgpu [`Hooks`] (the family [`crate::hooks::ModelHooks::Weak`]
/// holds): [`WeakMemory`] with the statistics and trace every model reports. Nothing is
/// buffered, so it keeps no per-thread buffers.
pub struct WeakHooks {
    cfg: BufferConfig,
    weak: WeakMemory,
    stats: BufferStats,
    trace: Vec<TraceEvent>,
    /// Lanes whose lists [`WeakMemory::warm`] brought in ([`WeakHooks::warmed`]).
    warmed: u64,
}

impl WeakHooks {
    pub fn new(cfg: BufferConfig) -> Self {
        let weak = WeakMemory::new(WeakConfig {
            p: cfg.p_w,
            seed: cfg.seed,
            global: cfg.buffer_global,
            shared: cfg.buffer_shared,
            kernels: cfg.kernels.clone(),
            sites: cfg.sites.clone(),
            trace: cfg.trace,
        });
        WeakHooks {
            cfg,
            weak,
            stats: BufferStats::default(),
            trace: Vec::new(),
            warmed: 0,
        }
    }
    pub fn config(&self) -> &BufferConfig {
        &self.cfg
    }
    /// How many lanes' block lists warp loads brought in before their loads
    /// ([`WeakMemory::warm`]): that the path is taken, for tests.
    pub fn warmed(&self) -> u64 {
        self.warmed
    }
    /// Stores seen per space, and [`BufferStats::weak`] from the last launch's end on.
    pub fn stats(&self) -> &BufferStats {
        &self.stats
    }
    pub fn trace(&self) -> &[TraceEvent] {
        &self.trace
    }
    pub fn take_trace(&mut self) -> Vec<TraceEvent> {
        std::mem::take(&mut self.trace)
    }
    /// The model's state (histories, happens-before).
    pub fn memory(&self) -> &WeakMemory {
        &self.weak
    }
}

impl Hooks for WeakHooks {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.weak.launch_begin(info);
    }

    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.weak.load(mem, a, buf, &mut self.trace);
        self.weak.note(a.thread, !a.loc.is_shared());
        r
    }

    /// [`Hooks::load`] on each lane in order, as the default does, after
    /// [`WeakMemory::warm`] has brought in the lanes' block lists together.
    fn load_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        if a.len() > 1 {
            self.weak.warm(a);
            self.warmed += a.len() as u64;
        }
        hooks::load_each(self, mem, a, out)
    }

    /// What a load of a CTA's shared memory can read, once no thread of the CTA can write
    /// shared memory before its next barrier, no longer depends on the schedule: the
    /// stores it can read are all made, and which of them it may read depends on its own
    /// thread's knowledge (changed only by that thread's operations) and on its choice,
    /// drawn from the thread's own counter. And with no shared write since the barrier
    /// that began the interval, every store is ordered before the load by `bar.sync`: the
    /// load may read only the newest, which is memory's value. (This says nothing about
    /// global memory, which the interpreter does not ask about.)
    fn settled(&self, _cta: u32, _first: u32, _lanes: u32) -> bool {
        true
    }

    fn cta_steps_local(&self, cta: u32, first: u32, n: u32) -> bool {
        self.weak.cta_steps_local(cta, first, n)
    }

    /// A weak load of bytes no thread writes has no history to choose from (a block's
    /// list holds its stores) and synchronizes with nothing; one of shared bytes in a clean
    /// interval (`settled` above) may read only the newest store, memory's value, which its
    /// thread already knows through the barrier, and as a weak read it receives no
    /// message. `WeakMemory::load` would only read memory and count the load, which this
    /// does.
    fn unwritten_loads(&mut self, _first: u32, lanes: u32) -> bool {
        self.weak.count_loads(lanes.count_ones() as u64);
        true
    }

    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.stats.space(a.loc.is_shared()).stores_seen += 1;
        self.weak.store(mem, a, data)
    }

    /// [`Hooks::store`] on each lane in order, as the default does, after
    /// [`WeakMemory::warm`] (a store reads its block's list too).
    fn store_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        if a.len() > 1 {
            self.weak.warm(a);
            self.warmed += a.len() as u64;
        }
        hooks::store_each(self, mem, a, vals)
    }

    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let r = self.weak.atomic(mem, a, rmw, &mut self.trace);
        self.weak.note(a.thread, !a.loc.is_shared());
        r
    }

    fn fence(&mut self, _mem: &mut Memory, f: &Fence) {
        self.weak.fence(f);
        self.weak.note(f.thread, true);
    }

    fn barrier_arrive(&mut self, _mem: &mut Memory, b: &Barrier) {
        self.weak.barrier_arrive(b);
    }

    fn barrier_release(&mut self, _mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.weak.barrier_release(b, threads);
    }

    fn thread_exit(&mut self, _mem: &mut Memory, _t: ThreadRef) {
        self.weak.thread_exit();
    }

    fn cta_exit(&mut self, _mem: &mut Memory, cta: u32) {
        self.weak.drop_cta(cta as usize);
    }

    fn stalled(&mut self, _mem: &mut Memory) -> bool {
        self.weak.stalled()
    }

    fn launch_end(&mut self, _mem: &mut Memory) {
        self.weak.launch_end();
        self.weak.fill_stats(&mut self.stats);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block list past its bound drops a location's older entry, not the only entry of
    /// another location, and the coherence masks lose exactly that entry's bit.
    #[test]
    fn a_full_list_keeps_every_locations_newest_entry() {
        // Position: 0 = word 4's only store (a release with a message), 1..=6 = stores to
        // word 0, each coherence-after the ones before it.
        let mut list: Vec<Entry> = Vec::new();
        list.push(Entry::new(1, 1, 7, Epoch::FIRST, 0, 3, 4, 4, 0));
        for k in 0..6u64 {
            let mut e = Entry::new(2 + k, k, 8, Epoch::FIRST, 0, 0, 0, 4, 0);
            e.set_co(((1u16 << (k + 1)) - 1) & !1);
            list.push(e);
        }
        let mut msgs: Vec<Option<Rc<Message>>> = vec![None; 4];
        msgs[3] = Some(Rc::new(Message::default()));
        let mut free = Vec::new();
        forget_one(&mut list, &mut msgs, &mut free);
        assert_eq!(list.len(), 6);
        // Word 4's entry (and its message) stays; word 0's oldest (seq 2) went.
        assert_eq!((list[0].off(), list[0].msg), (4, 3));
        assert!(msgs[3].is_some() && free.is_empty());
        assert_eq!(
            list[1..].iter().map(|e| e.seq()).collect::<Vec<_>>(),
            vec![3, 4, 5, 6, 7]
        );
        // Entry at new position p (p >= 1) follows positions 1..p of word 0.
        for (p, e) in list.iter().enumerate().skip(1) {
            assert_eq!(e.co(), ((1u16 << p) - 1) & !1, "position {p}");
        }
        // With every entry the only one of its location, the oldest goes (no choice).
        let mut lone: Vec<Entry> = (0..7u8)
            .map(|o| Entry::new(1 + o as u64, 0, 1, Epoch::FIRST, 0, 0, o, 1, 0))
            .collect();
        forget_one(&mut lone, &mut msgs, &mut free);
        assert_eq!(lone[0].off(), 1);
    }

    /// A CTA's shared-memory histories go with its last thread; the global ones stay,
    /// and the statistics count what went.
    #[test]
    fn a_ctas_shared_histories_go_with_its_last_thread() {
        use fencehound_vgpu::{Arg, Device, Dim3, LaunchOptions, RoundRobin};
        // Every thread: a store to its own shared word, then its own global word.
        let ptx = r#".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 sm[256];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mov.u32 %r5, sm;
    shl.b32 %r7, %r1, 2;
    add.u32 %r7, %r7, %r5;
    st.shared.u32 [%r7], %r4;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r4;
    ret;
}
"#;
        let module = fencehound_ptx::parse("k.ptx", ptx).expect("parse");
        let mut dev = Device::new();
        let id = dev.load_module(&module).expect("load");
        let out = dev.alloc(4 * 4 * 64).expect("alloc");
        let mut h = WeakHooks::new(BufferConfig::new(crate::Model::Weak, 0.5, 1));
        let r = dev
            .launch_with(
                id,
                "k",
                Dim3::x(4),
                Dim3::x(64),
                0,
                &[Arg::Ptr(out)],
                LaunchOptions::default(),
                &mut h,
                &mut RoundRobin::new(1),
            )
            .expect("launch");
        assert!(r.outcome.is_completed());
        let w = h.memory();
        let shared: Vec<u32> = w
            .shared
            .iter()
            .flatten()
            .copied()
            .filter(|&l| l != 0)
            .collect();
        // 64 words of 4 bytes per CTA: 32 blocks each.
        assert_eq!(shared.len(), 4 * 32);
        assert!(shared.iter().all(|&l| w.lists[l as usize].is_empty()));
        // Every global block keeps its history (its initial value and the store).
        let global = w.lists.len() - 1 - shared.len();
        assert_eq!(global, 4 * 64 / 2);
        assert!(w.gone_heap >= 4 * 32 * std::mem::size_of::<Entry>());
    }

    #[test]
    fn entry_is_small() {
        assert!(std::mem::size_of::<Entry>() <= 48);
    }
}
