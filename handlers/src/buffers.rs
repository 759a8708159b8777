//! Per-thread write buffers, the `bugaroo` and `scoped` models, as a vgpu [`Hooks`]
//! implementation: [`StoreBuffers`]. This module also holds what every model shares: the
//! configuration ([`BufferConfig`], [`DrainPolicy`]) and the trace events
//! ([`TraceEvent`]); [`crate::hooks`] chooses the model family.
//!
//! Each thread has one FIFO buffer per space (global, shared). A store is *selected* by
//! [`crate::select`]; an unselected store goes to memory. In the `scoped` model, a drain to
//! CTA scope moves global entries into the CTA's *overlay* (visible only to that CTA's
//! threads); shared entries at CTA scope go to shared memory (which only the CTA sees
//! anyway). A drain to GPU/system scope publishes the CTA overlay, then the thread's
//! entries, to memory. Loads read own buffer → own CTA overlay → memory.
//!
//! Invariants that keep every produced outcome allowed by the PTX memory model:
//! - entries for one address drain oldest first, at every level (thread FIFO, overlay
//!   FIFO; a single-entry drain to memory first drains the overlay's entries for that
//!   address);
//! - a thread always reads its own newest write (forwarding) or something newer;
//! - anything a thread's CTA can read from the overlay becomes visible to the whole GPU
//!   before that thread's GPU-scope fence/release completes (cumulativity, conservatively:
//!   the whole overlay drains);
//! - atomics act on memory after the thread's own entries for that address (and the
//!   CTA overlay's) have drained.
//!
//! Every release pattern form of the PTX ISA (§8.8) is kept by the drain table itself: a
//! release operation (form 1) and a release fence (form 3) drain everything before them up
//! to their scope before they take effect, so a later strong write — the release
//! operation's own location written again (form 2), or any location after the fence —
//! can only become visible after what the pattern orders. Buffers never make a load read
//! older data than memory holds, so acquire patterns need no rule here (the `weak` model
//! is where they matter, through `fencehound_hb`). The device rewrite applies the same
//! table.
//!
//! Deliberately not modelled: delayed *loads* (load buffering), non-multi-copy-atomic
//! propagation between CTAs (IRIW), speculation. Such outcomes are allowed by PTX but we
//! never produce them; the litmus results file lists them.

use crate::model::Model;
use crate::select;
use crate::stats::{BufferStats, DrainReason};
use fencehound_hb::fasthash::{FastMap, FastSet};
use fencehound_vgpu::hooks::RmwFn;
// A location as one word (`pack`, undone by `unpack`), and the 8-byte block an access
// lies in (`key`: accesses are naturally aligned and at most 8 bytes, so each lies in
// exactly one block). The interpreter's spin parking keys what changed the same way
// (`Hooks::changed_blocks`).
use fencehound_vgpu::memory::{block_key as key, location_key as pack};
use fencehound_vgpu::{
    Access, Barrier, BarrierKind, Fence, FenceKind, Hooks, LaunchInfo, Location, MemError, Memory,
    Scope, Sem, SiteId, ThreadRef,
};
use serde::Serialize;
use std::collections::{BTreeSet, VecDeque};

/// What to buffer and how.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferConfig {
    pub model: Model,
    /// Probability that a store is buffered.
    pub p_w: f64,
    pub seed: u64,
    /// Entries per thread per space before the space drains (Bugaroo's "buffer full").
    pub capacity: u32,
    pub buffer_global: bool,
    pub buffer_shared: bool,
    /// Only launches of these kernels buffer (all when `None`).
    pub kernels: Option<BTreeSet<String>>,
    /// Only stores at these static sites are buffered (all when `None`).
    pub sites: Option<BTreeSet<SiteId>>,
    /// Record a trace of buffering events.
    pub trace: bool,
    /// What forces entries out when the program does not.
    pub policy: DrainPolicy,
}

/// How buffered entries are forced out when no fence, barrier or atomic drains them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainPolicy {
    /// The vgpu's own rules: an exited thread's entries stay buffered; when nothing can
    /// progress one entry drains, chosen at random (seeded); at kernel exit the rest drain
    /// in a random order that keeps each address's order.
    Native,
    /// What the device-side buffers of [`crate::rewrite`] do, which threads can decide
    /// without a global view of the launch (a GPU has none): an exiting thread's entries
    /// move, still invisible, to its CTA's *orphan queue*; the last thread of the launch
    /// to exit drains every CTA (overlay, then orphans) to memory; every
    /// `liveness_period`-th load or atomic of a thread first drains one entry, of a holder
    /// picked uniformly among the thread itself, the non-empty CTA overlays and the exited
    /// threads whose entries wait in orphan queues (so a spinning thread cannot wait
    /// forever for a store that is buffered anywhere it can reach, and the drain order
    /// follows the native stall rule's pick); a CTA's overlay and its orphan queue hold at most
    /// `overlay_capacity` entries each and drain to memory when full; a stall report
    /// drains nothing (it only reports whether liveness drains wrote memory since the
    /// last report). The differential test runs the rewritten PTX against the native
    /// handlers under this policy.
    Device {
        liveness_period: u32,
        overlay_capacity: u32,
    },
}

impl BufferConfig {
    pub fn new(model: Model, p_w: f64, seed: u64) -> Self {
        BufferConfig {
            model,
            p_w,
            seed,
            capacity: 256,
            buffer_global: true,
            buffer_shared: true,
            kernels: None,
            sites: None,
            trace: false,
            policy: DrainPolicy::Native,
        }
    }
}

/// Where an entry went when it drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The CTA overlay (`scoped` model).
    Cta,
    Memory,
}

/// One buffering event, for `replay --trace`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum TraceEvent {
    Buffered {
        seq: u64,
        thread: u32,
        site: SiteId,
        loc: Location,
        size: u8,
        value: u64,
    },
    Drained {
        seq: u64,
        thread: u32,
        site: SiteId,
        loc: Location,
        to: Level,
        reason: DrainReason,
        /// The instruction that caused the drain (fence, barrier, ...), if any.
        at: Option<SiteId>,
    },
    Forwarded {
        thread: u32,
        site: SiteId,
        loc: Location,
        value: u64,
    },
    /// A load returned the value in memory while a newer store to that address was still
    /// buffered somewhere else.
    StaleLoad {
        thread: u32,
        site: SiteId,
        loc: Location,
        value: u64,
    },
    /// `weak`: a load (or RMW) read an older store although a newer one existed. `seq`s
    /// number the launch's stores in the order they executed (0: the value before the
    /// launch); sites are the stores' instructions.
    StaleRead {
        thread: u32,
        site: SiteId,
        loc: Location,
        value: u64,
        read_seq: u64,
        read_site: Option<SiteId>,
        newest_seq: u64,
        newest_site: Option<SiteId>,
        newest_value: u64,
    },
}

/// One buffered store: 32 bytes (the location packed into one word, the size into the
/// top bits of the sequence number), so a 65,536-thread launch holding 16 entries per
/// thread needs 32 MiB of entries.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The location, packed by [`pack`].
    k: u64,
    value: u64,
    /// The global store sequence number in bits 0..61, `size - 1` (sizes 1..=8) in bits
    /// 61..64.
    seq_size: u64,
    site: SiteId,
    thread: u32,
}

const SEQ_BITS: u32 = 61;

impl Entry {
    fn new(loc: Location, value: u64, size: u32, site: SiteId, seq: u64, thread: u32) -> Entry {
        debug_assert!((1..=8).contains(&size) && seq < 1 << SEQ_BITS);
        Entry {
            k: pack(loc),
            value,
            seq_size: seq | ((size as u64 - 1) << SEQ_BITS),
            site,
            thread,
        }
    }
    #[inline]
    fn seq(&self) -> u64 {
        self.seq_size & ((1 << SEQ_BITS) - 1)
    }
    #[inline]
    fn size(&self) -> u32 {
        (self.seq_size >> SEQ_BITS) as u32 + 1
    }
    #[inline]
    fn loc(&self) -> Location {
        unpack(self.k)
    }
    /// Whether the entry shares a byte with the access at packed location `k` of `size`
    /// bytes. Packed locations of different spaces (or different CTAs' shared memory) are
    /// at least 2^32 apart, so comparing byte ranges of packed values is exact.
    #[inline]
    fn overlaps(&self, k: u64, size: u32) -> bool {
        self.k < k + size as u64 && k < self.k + self.size() as u64
    }
}

#[inline]
fn unpack(k: u64) -> Location {
    if k >> 63 == 0 {
        Location::Global(k)
    } else {
        Location::Shared {
            cta: ((k >> 32) & 0x7fff_ffff) as u32,
            offset: k as u32,
        }
    }
}

/// Block keys of [`StoreBuffers::pending`] (std's SipHash dominated the store and load
/// paths).
type KeyMap<V> = FastMap<u64, V>;
type KeySet = FastSet<u64>;

/// The bits of a 64-bit filter for the 4-byte words that the `size` bytes at packed
/// location `k` cover (one word, or two for 8 bytes: accesses and entries are aligned to
/// their size).
#[inline]
fn words_filter(k: u64, size: u32) -> u64 {
    let bit = |w: u64| 1u64 << (w.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58);
    let (first, last) = (k >> 2, (k + size.max(1) as u64 - 1) >> 2);
    if first == last {
        bit(first)
    } else {
        bit(first) | bit(last)
    }
}

/// Empties a thread's two queues (global, shared) into `out` in store order: each queue
/// is in store order already, so this is a merge, not a sort.
fn merge_in_store_order(q: &mut [Fifo; 2], out: &mut Vec<Entry>) {
    let [qg, qs] = q;
    while let (Some(a), Some(b)) = (qg.front(), qs.front()) {
        let e = if a.seq() < b.seq() {
            qg.pop_front()
        } else {
            qs.pop_front()
        };
        out.extend(e);
    }
    qg.drain_into(out);
    qs.drain_into(out);
}

/// What the scans of a queue read — an overlay's `VecDeque` or a thread's [`Fifo`]:
/// its entries in queue order, as two slices.
trait Entries: std::ops::Index<usize, Output = Entry> {
    fn slices(&self) -> (&[Entry], &[Entry]);

    #[inline]
    fn count(&self) -> usize {
        let (a, b) = self.slices();
        a.len() + b.len()
    }

    #[inline]
    fn each(&self) -> std::iter::Chain<std::slice::Iter<'_, Entry>, std::slice::Iter<'_, Entry>> {
        let (a, b) = self.slices();
        a.iter().chain(b)
    }
}

impl Entries for VecDeque<Entry> {
    #[inline]
    fn slices(&self) -> (&[Entry], &[Entry]) {
        self.as_slices()
    }
}

impl Entries for Fifo {
    #[inline]
    fn slices(&self) -> (&[Entry], &[Entry]) {
        match self {
            Fifo::Empty => (&[], &[]),
            Fifo::One(e) => (std::slice::from_ref(e), &[]),
            Fifo::Many(v) => v.as_slices(),
        }
    }
}

/// A thread's queue of buffered stores (one per space), oldest first. Most threads
/// buffer one store at a time: that entry stays in place, with no allocation; a second
/// moves the queue to the heap, where it keeps its room for the rest of the launch.
/// (As a `VecDeque` each thread that buffered anything made an allocation of its own,
/// grown at its second entry and freed with the launch's buffers: `malloc`, `realloc`
/// and `free` were a fifth of `exec --model bugaroo --p 0.5` on a 1 M-thread transpose,
/// whose threads buffer up to four shared and four global stores each.) The same
/// entries in the same order as the `VecDeque` it replaces, with the same positions for
/// `remove`.
#[derive(Debug, Clone, Default)]
enum Fifo {
    #[default]
    Empty,
    One(Entry),
    Many(VecDeque<Entry>),
}

impl Fifo {
    #[inline]
    fn len(&self) -> usize {
        match self {
            Fifo::Empty => 0,
            Fifo::One(_) => 1,
            Fifo::Many(v) => v.len(),
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn front(&self) -> Option<&Entry> {
        match self {
            Fifo::Empty => None,
            Fifo::One(e) => Some(e),
            Fifo::Many(v) => v.front(),
        }
    }

    #[inline]
    fn push_back(&mut self, e: Entry) {
        match self {
            Fifo::Empty => *self = Fifo::One(e),
            Fifo::One(x) => {
                // (Four: the room a `VecDeque` takes at its first growth.)
                let mut v = VecDeque::with_capacity(4);
                v.push_back(*x);
                v.push_back(e);
                *self = Fifo::Many(v);
            }
            Fifo::Many(v) => v.push_back(e),
        }
    }

    #[inline]
    fn pop_front(&mut self) -> Option<Entry> {
        match self {
            Fifo::Empty => None,
            Fifo::One(e) => {
                let e = *e;
                *self = Fifo::Empty;
                Some(e)
            }
            Fifo::Many(v) => v.pop_front(),
        }
    }

    #[inline]
    fn remove(&mut self, i: usize) -> Option<Entry> {
        match self {
            Fifo::One(_) if i == 0 => self.pop_front(),
            Fifo::Many(v) => v.remove(i),
            _ => None,
        }
    }

    /// Moves every entry, in queue order, to the end of `out`.
    #[inline]
    fn drain_into(&mut self, out: &mut Vec<Entry>) {
        match self {
            Fifo::Empty => {}
            Fifo::One(e) => {
                out.push(*e);
                *self = Fifo::Empty;
            }
            Fifo::Many(v) => out.extend(v.drain(..)),
        }
    }

    #[inline]
    fn clear(&mut self) {
        match self {
            Fifo::Many(v) => v.clear(),
            _ => *self = Fifo::Empty,
        }
    }

    /// Entries the queue has room for on the heap.
    fn heap_capacity(&self) -> usize {
        match self {
            Fifo::Many(v) => v.capacity(),
            _ => 0,
        }
    }
}

impl std::ops::Index<usize> for Fifo {
    type Output = Entry;
    #[inline]
    fn index(&self, i: usize) -> &Entry {
        let (a, b) = self.slices();
        if i < a.len() {
            &a[i]
        } else {
            &b[i - a.len()]
        }
    }
}

/// The positions in `q` of its heads, ascending, into `out` (emptied first): the entries
/// that are the oldest of their 8-byte block in `q` (the liveness and kernel-exit drains
/// pick among them, so each address keeps its order). `seen` is scratch.
fn head_positions(q: &(impl Entries + ?Sized), seen: &mut KeySet, out: &mut Vec<u32>) {
    out.clear();
    if q.count() <= 16 {
        // (Pairwise: cheaper than hashing for a short queue.)
        let head = |i: usize| q.each().take(i).all(|e| e.k & !7 != q[i].k & !7);
        out.extend((0..q.count()).filter(|&i| head(i)).map(|i| i as u32));
    } else {
        seen.clear();
        out.extend(
            q.each()
                .enumerate()
                .filter(|(_, e)| seen.insert(e.k & !7))
                .map(|(i, _)| i as u32),
        );
    }
}

/// Scratch for picking heads ([`head_positions`]).
#[derive(Default)]
struct HeadScratch {
    seen: KeySet,
    heads: Vec<u32>,
}

/// The index of head number `r % heads` of `q` ([`head_positions`]); 0 for an empty `q`.
fn pick_head(q: &(impl Entries + ?Sized), r: u64, scratch: &mut HeadScratch) -> usize {
    if q.count() <= 1 {
        return 0;
    }
    head_positions(q, &mut scratch.seen, &mut scratch.heads);
    let heads = &scratch.heads;
    heads[(r % heads.len() as u64) as usize] as usize
}

/// A CTA's overlay under `scoped`: its entries in queue order, how many of them each
/// 8-byte block has, and the positions of its heads ([`pick_head`]'s) while they are
/// known.
///
/// - The block counts let a load, and a drain of one address, skip an overlay that holds
///   nothing of its block instead of scanning it: every committed entry asks its CTA's
///   overlay (the coherence drain), which the global index
///   ([`StoreBuffers::maybe_pending`], which counted the entry itself) never spared.
/// - The liveness and kernel-exit drains take one head at a time, picked at random;
///   recounting the heads for each (a hash insert per entry) made a drained overlay of
///   n entries cost O(n²) hash inserts — 27% of `exec --model scoped` on `cub_radix`.
///   Here they are counted once; a push of a new block's entry adds a head, and a take
///   updates them: the taken head leaves, the later positions move down by one, and the
///   next entry of its block (if the block has one: its count says) becomes a head. A
///   removal from the middle forgets them.
#[derive(Clone, Default)]
struct Overlay {
    q: VecDeque<Entry>,
    /// Entries per block (`k & !7`); blocks with none are absent.
    blocks: KeyMap<u32>,
    /// With `known`: the heads' positions in `q`, ascending.
    heads: Vec<u32>,
    known: bool,
}

impl std::ops::Deref for Overlay {
    type Target = VecDeque<Entry>;
    fn deref(&self) -> &VecDeque<Entry> {
        &self.q
    }
}

impl Overlay {
    /// Whether an entry of `k`'s 8-byte block is here.
    #[inline]
    fn holds_block(&self, k: u64) -> bool {
        !self.q.is_empty() && self.blocks.contains_key(&(k & !7))
    }

    /// [`StoreBuffers::lookup`] in this overlay (an access lies in one 8-byte block:
    /// misaligned ones fault before they get here).
    #[inline]
    fn lookup(&self, loc: Location, size: u32) -> Result<Option<u64>, ()> {
        if !self.holds_block(pack(loc)) {
            return Ok(None);
        }
        StoreBuffers::lookup(&self.q, loc, size)
    }

    fn push_back(&mut self, e: Entry) {
        let n = self.blocks.entry(e.k & !7).or_insert(0);
        *n += 1;
        if *n == 1 && self.known {
            self.heads.push(self.q.len() as u32);
        }
        self.q.push_back(e);
    }

    /// One entry fewer of `k`'s block; whether the block still has some.
    fn unblock(&mut self, k: u64) -> bool {
        let b = k & !7;
        match self.blocks.get_mut(&b) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            _ => {
                self.blocks.remove(&b);
                false
            }
        }
    }

    fn remove(&mut self, i: usize) -> Option<Entry> {
        let e = self.q.remove(i)?;
        self.unblock(e.k);
        self.known = false;
        Some(e)
    }

    /// Moves every entry, in queue order, to the end of `out`.
    fn drain_into(&mut self, out: &mut Vec<Entry>) {
        out.extend(self.q.drain(..));
        self.clear();
    }

    fn clear(&mut self) {
        self.q.clear();
        self.blocks.clear();
        self.heads.clear();
        self.known = false;
    }

    /// Removes head number `r % heads` (the entry [`pick_head`] picks for `r`).
    fn take_head(&mut self, r: u64, seen: &mut KeySet) -> Option<Entry> {
        if self.q.is_empty() {
            return None;
        }
        if !self.known {
            head_positions(&self.q, seen, &mut self.heads);
            self.known = true;
        }
        let j = (r % self.heads.len() as u64) as usize;
        let i = self.heads.remove(j) as usize;
        let e = self.q.remove(i)?;
        for h in &mut self.heads[j..] {
            *h -= 1;
        }
        // The block's next entry, if it has one, is its oldest now.
        if self.unblock(e.k) {
            let b = e.k & !7;
            if let Some(next) = self.q.range(i..).position(|x| x.k & !7 == b) {
                let at = (i + next) as u32;
                let pos = self.heads.partition_point(|&h| h < at);
                self.heads.insert(pos, at);
            }
        }
        Some(e)
    }
}

/// Whether no byte lies in the ranges `start..end` of two different owners, for
/// `(start, end, owner)` triples (sorted here). Sorted by start, a range that starts below
/// the furthest end so far while that end is another owner's overlaps it; and the first
/// overlap of two owners' ranges in that order is always caught so: the earlier ranges
/// that contain its start are all the other owner's (else two earlier ones would overlap),
/// the one with the furthest end among them.
fn disjoint(spans: &mut [(u64, u64, u32)]) -> bool {
    spans.sort_unstable();
    let (mut end, mut owner) = (0u64, u32::MAX);
    for &(a, b, g) in spans.iter() {
        if a < end && owner != g {
            return false;
        }
        if b > end {
            (end, owner) = (b, g);
        }
    }
    true
}

/// The CTAs whose overlays hold entries, in a Fenwick tree over CTA indices: their
/// number and the `k`-th of them in index order in O(log CTAs), for the kernel-exit
/// drain, which picks one per drained entry ([`StoreBuffers::drain_one_random`]).
struct LiveOverlays {
    /// Fenwick tree (1-based) of 0/1 per CTA.
    tree: Vec<u32>,
    member: Vec<bool>,
    count: usize,
}

impl LiveOverlays {
    fn of(overlays: &[Overlay]) -> LiveOverlays {
        let mut l = LiveOverlays {
            tree: vec![0; overlays.len() + 1],
            member: vec![false; overlays.len()],
            count: 0,
        };
        for c in 0..overlays.len() {
            l.update(c, overlays);
        }
        l
    }

    /// Brings CTA `c`'s membership in step with its overlay.
    fn update(&mut self, c: usize, overlays: &[Overlay]) {
        let on = overlays.get(c).is_some_and(|o| !o.is_empty());
        if c >= self.member.len() || self.member[c] == on {
            return;
        }
        self.member[c] = on;
        if on {
            self.count += 1;
        } else {
            self.count -= 1;
        }
        let mut i = c + 1;
        while i < self.tree.len() {
            if on {
                self.tree[i] += 1;
            } else {
                self.tree[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
    }

    /// The `k`-th (0-based) member in index order; `k < count`.
    fn nth(&self, k: usize) -> usize {
        let n = self.tree.len() - 1;
        let mut pos = 0;
        let mut rest = k as u32 + 1;
        let mut step = n.checked_next_power_of_two().unwrap_or(0).max(1);
        while step > 0 {
            if pos + step <= n && self.tree[pos + step] < rest {
                pos += step;
                rest -= self.tree[pos];
            }
            step /= 2;
        }
        // `pos` members' prefix is below `rest`: the member is index `pos` (0-based).
        pos
    }
}

/// One thread's buffers: 104 bytes, per thread of a launch whatever it stores (issue 24:
/// per-thread state ≤ 256 B beyond registers at 1 M threads). The queues hold one entry
/// each in place ([`Fifo`]): 16 bytes more than as `VecDeque`s (88), and no allocation
/// of 48 bytes (32 and malloc's header) for a thread that buffers one store at a time —
/// a 1 M-thread stencil under `bugaroo` takes 227 B per thread in all, against 247 B
/// with 88-byte records and a `VecDeque` each (`scripts/per-thread-memory.py`,
/// 2026-12-08).
#[derive(Debug, Default, Clone)]
struct ThreadBuf {
    /// [global, shared]
    q: [Fifo; 2],
    /// Stores so far (bits 0..62), and per queue `s` in bit `62 + s` whether it may hold
    /// two entries of one 8-byte block (set when such a store is buffered, cleared when
    /// the queue is empty). When that bit is clear every entry is the oldest of its
    /// block, which makes the liveness/exit pick O(1).
    stores_mixed: u64,
    /// Per queue: a filter of the 4-byte words its entries cover ([`words_filter`]): a
    /// superset of theirs — set by every push, reset when a push finds the queue empty,
    /// made exact again by every scan that finds nothing. A store (write after write)
    /// or a load (forwarding) whose words it does not hold has no overlapping entry
    /// here, and skips the scan. At 8-byte blocks it would not do: a radix sort's thread
    /// writes the neighbouring 4-byte word of what it wrote just before, and half its
    /// stores found an entry of their block but none of their bytes (`cub_radix` under
    /// `bugaroo`: 5 M checks, 47% with an entry of the block, 0.005% overlapping; the
    /// scans, cache misses on the entries, were a quarter of the time).
    words: [u64; 2],
}
const _: () = assert!(std::mem::size_of::<ThreadBuf>() == 104);

const MIXED_SHIFT: u32 = 62;

impl ThreadBuf {
    #[inline]
    fn mixed(&self, s: usize) -> bool {
        self.stores_mixed >> (MIXED_SHIFT + s as u32) & 1 != 0
    }

    #[inline]
    fn set_mixed(&mut self, s: usize, on: bool) {
        let bit = 1u64 << (MIXED_SHIFT + s as u32);
        if on {
            self.stores_mixed |= bit;
        } else {
            self.stores_mixed &= !bit;
        }
    }

    /// The number of the thread's next store (counting from 0), counted.
    #[inline]
    fn next_store(&mut self) -> u64 {
        let n = self.stores_mixed & ((1 << MIXED_SHIFT) - 1);
        // (2^62 stores of one thread in one launch: centuries of the vgpu.)
        debug_assert!(n + 1 < 1 << MIXED_SHIFT);
        self.stores_mixed += 1;
        n
    }
}

/// A thread's liveness clock under [`DrainPolicy::Device`] (only that policy keeps them).
#[derive(Debug, Default, Clone, Copy)]
struct Liveness {
    /// Loads and atomics since the last liveness drain.
    ticks: u32,
    /// Liveness drains of this thread in this launch (seeds which entry they drain).
    lives: u32,
}

/// The write-buffer models, `bugaroo` and `scoped`, as vgpu [`Hooks`] (the family
/// [`crate::hooks::ModelHooks::Buffers`] holds). Under another model (`sc`, `weak`) it
/// buffers nothing and is plain memory; [`crate::hooks::ModelHooks`] never builds it for
/// them.
pub struct StoreBuffers {
    cfg: BufferConfig,
    threshold: u64,
    launch: u32,
    /// [`select::launch_key`] of this launch: the part of every store's selection hash
    /// fixed for the launch (two of its four `mix` rounds, once instead of per store).
    launch_key: u64,
    active: bool,
    tpc: u32,
    threads: Vec<ThreadBuf>,
    /// [`DrainPolicy::Device`]: per thread, its liveness clock (empty under `Native`).
    liveness: Vec<Liveness>,
    overlays: Vec<Overlay>,
    /// [`DrainPolicy::Device`]: per CTA, the entries of its exited threads (in exit order,
    /// each thread's in store order); threads that exited in this launch, of `nthreads`.
    orphans: Vec<VecDeque<Entry>>,
    /// [`DrainPolicy::Device`]: per CTA, how many exited threads put entries into its
    /// orphan queue since it was last empty (the liveness pick's weight of the queue).
    orphan_threads: Vec<u32>,
    /// [`DrainPolicy::Device`]: a liveness drain wrote memory since the vgpu last asked
    /// ([`Hooks::stalled`]).
    device_progress: bool,
    exited: u32,
    nthreads: u32,
    /// Buffered entries (thread buffers and overlays) per 8-byte block.
    /// Only kept when something reads it: traces (stale loads). Elsewhere it would be a
    /// filter in front of the thread's own queue, and two hash updates per buffered store
    /// cost more than looking at the queue; a CTA overlay counts its own blocks
    /// ([`Overlay::holds_block`]). (Kept under `scoped` too until 2026-12-02, for the
    /// overlays: 4% of `exec --model scoped` on `cub_radix`, most of it for shared-memory
    /// stores, which never reach an overlay.)
    pending: KeyMap<u32>,
    /// Whether `pending` is kept up to date; when false, [`Self::maybe_pending`] is
    /// always true.
    track: bool,
    liveness_drains: u64,
    /// Loads that did more than read ([`Hooks::load_effects`]): forwarded, overlay and
    /// draining loads, and traced ones.
    load_effects: u64,
    /// Changes another thread's load could see ([`Hooks::shared_effects`]): every drain
    /// that moved an entry, every direct write to memory.
    shared_effects: u64,
    /// The blocks of the counted changes that were not memory writes (entries placed in
    /// a CTA overlay) since [`Hooks::changed_blocks`] last took them; `named_lost` when
    /// more piled up than are kept, untaken (a driver that does not ask), so that the
    /// next answer says it cannot name them.
    named: Vec<u64>,
    named_lost: bool,
    /// Threads whose buffers are not empty, and each thread's index in it.
    holders: Vec<u32>,
    holder_pos: Vec<u32>,
    seq: u64,
    stats: BufferStats,
    trace: Vec<TraceEvent>,
    /// Largest [`StoreBuffers::heap_bytes`] at the end of a launch so far.
    peak_heap: usize,
    /// Reused buffers (drained entries; block keys seen while picking a head).
    scratch: Vec<Entry>,
    heads: HeadScratch,
}

fn sp(loc: Location) -> usize {
    loc.is_shared() as usize
}

impl StoreBuffers {
    pub fn new(cfg: BufferConfig) -> Self {
        let track = cfg.trace;
        StoreBuffers {
            threshold: select::threshold(cfg.p_w),
            cfg,
            launch: 0,
            launch_key: 0,
            active: false,
            tpc: 1,
            threads: Vec::new(),
            liveness: Vec::new(),
            overlays: Vec::new(),
            orphans: Vec::new(),
            orphan_threads: Vec::new(),
            device_progress: false,
            exited: 0,
            nthreads: 0,
            pending: KeyMap::default(),
            track,
            liveness_drains: 0,
            load_effects: 0,
            shared_effects: 0,
            named: Vec::new(),
            named_lost: false,
            holders: Vec::new(),
            holder_pos: Vec::new(),
            seq: 0,
            stats: BufferStats::default(),
            trace: Vec::new(),
            peak_heap: 0,
            scratch: Vec::new(),
            heads: HeadScratch::default(),
        }
    }

    pub fn config(&self) -> &BufferConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &BufferStats {
        &self.stats
    }
    pub fn trace(&self) -> &[TraceEvent] {
        &self.trace
    }
    pub fn take_trace(&mut self) -> Vec<TraceEvent> {
        std::mem::take(&mut self.trace)
    }

    /// Entries currently buffered (threads and overlays).
    pub fn buffered(&self) -> usize {
        self.threads
            .iter()
            .map(|t| t.q[0].len() + t.q[1].len())
            .sum::<usize>()
            + self.overlays.iter().map(|o| o.len()).sum::<usize>()
            + self.orphans.iter().map(|o| o.len()).sum::<usize>()
    }

    /// Approximate heap bytes held by the buffers (for the memory benchmark).
    pub fn heap_bytes(&self) -> usize {
        let e = std::mem::size_of::<Entry>();
        self.threads.len() * std::mem::size_of::<ThreadBuf>()
            + self.liveness.len() * std::mem::size_of::<Liveness>()
            + self
                .threads
                .iter()
                .map(|t| (t.q[0].heap_capacity() + t.q[1].heap_capacity()) * e)
                .sum::<usize>()
            + self
                .overlays
                .iter()
                .map(|o| o.capacity() * e + o.blocks.capacity() * 16 + o.heads.capacity() * 4)
                .sum::<usize>()
            + self.pending.capacity() * 16
            + (self.holders.capacity() + self.holder_pos.capacity()) * 4
    }

    /// The most heap the buffers held during any launch so far: [`Self::heap_bytes`] taken
    /// at each launch's end. Within a launch nothing the buffers allocate shrinks (queues,
    /// overlays and the index keep their capacity when entries drain), so the value at the
    /// end is the launch's peak.
    pub fn peak_heap_bytes(&self) -> usize {
        self.peak_heap.max(self.heap_bytes())
    }

    /// Whether thread `g`, whose `holder_pos` entry is `pos`, holds no entry in either
    /// queue. `sync_holder` runs after every change of a thread's queues (and the
    /// kernel-exit drain and `discard_all` reset the entries of the queues they empty),
    /// so between hook calls a thread holds entries exactly when it has a position in
    /// `holders`: `plain_loads` and `cta_steps_local` read one `u32` per thread here, two
    /// cache lines per warp, instead of each thread's 104-byte record (the look at the
    /// records was a tenth of what `bugaroo` added to `sc` on a block reduction, `perf`,
    /// BENCHMARKS.md). Debug builds — the test suite's — check it against the queues.
    #[inline]
    fn holds_nothing(&self, g: usize, pos: u32) -> bool {
        let nothing = pos == u32::MAX;
        debug_assert_eq!(
            nothing,
            self.threads
                .get(g)
                .is_none_or(|t| t.q[0].is_empty() && t.q[1].is_empty()),
            "holder_pos of thread {g}"
        );
        nothing
    }

    /// Keeps `holders` in step with thread `g`'s buffers.
    fn sync_holder(&mut self, g: u32) {
        let Some(tb) = self.threads.get(g as usize) else {
            return;
        };
        let has = !(tb.q[0].is_empty() && tb.q[1].is_empty());
        let pos = self.holder_pos[g as usize];
        if has && pos == u32::MAX {
            self.holder_pos[g as usize] = self.holders.len() as u32;
            self.holders.push(g);
        } else if !has && pos != u32::MAX {
            self.holders.swap_remove(pos as usize);
            if let Some(moved) = self.holders.get(pos as usize) {
                self.holder_pos[*moved as usize] = pos;
            }
            self.holder_pos[g as usize] = u32::MAX;
        }
    }

    /// Drains one entry chosen at random (seeded) among the entries that are the oldest
    /// for their address in their queue, so stores to different addresses become
    /// visible in any order (weak stores are unordered without a fence) while each
    /// address keeps its order. Returns false when nothing is buffered.
    ///
    /// `live`, when given, is the set of CTAs whose overlays hold entries (exact: the
    /// kernel-exit drain keeps it, see [`Self::launch_end`]); without it they are counted
    /// here. Both give the same pick.
    fn drain_one_random(
        &mut self,
        mem: &mut Memory,
        reason: DrainReason,
        mut live: Option<&mut LiveOverlays>,
    ) -> bool {
        let overlays = if self.cfg.model == Model::Scoped {
            match &live {
                Some(l) => {
                    debug_assert_eq!(
                        l.count,
                        self.overlays.iter().filter(|o| !o.is_empty()).count()
                    );
                    l.count
                }
                None => self.overlays.iter().filter(|o| !o.is_empty()).count(),
            }
        } else {
            0
        };
        let n = self.holders.len() + overlays;
        if n == 0 {
            return false;
        }
        self.liveness_drains += 1;
        let r = select::mix(
            select::mix(self.cfg.seed ^ 0x6c69_7665)
                ^ select::mix(self.launch as u64)
                ^ self.liveness_drains,
        );
        let pick = (r % n as u64) as usize;
        let r2 = select::mix(r);
        if pick < self.holders.len() {
            let g = self.holders[pick];
            let tb = &self.threads[g as usize];
            let s = if tb.q[0].is_empty() {
                1
            } else if tb.q[1].is_empty() {
                0
            } else {
                (r2 >> 40) as usize & 1
            };
            let i = if tb.mixed(s) {
                pick_head(&tb.q[s], r2, &mut self.heads)
            } else {
                // Every entry is the only one of its block: each is a head.
                (r2 % tb.q[s].len() as u64) as usize
            };
            let cta = g / self.tpc;
            if let Some(e) = self.threads[g as usize].q[s].remove(i) {
                // (Its coherence drain may empty the CTA's overlay.)
                self.commit_entry(mem, cta, e, reason, None);
                let mut counts = [0, 0];
                counts[s] = 1;
                self.record_flush(counts, reason);
            }
            self.sync_holder(g);
            if let Some(l) = live.as_deref_mut() {
                l.update(cta as usize, &self.overlays);
            }
        } else {
            let nth = pick - self.holders.len();
            let scan = |s: &Self| {
                s.overlays
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| !o.is_empty())
                    .nth(nth)
                    .map_or(0, |(c, _)| c)
            };
            let c = match live.as_deref() {
                Some(l) => {
                    debug_assert_eq!(l.nth(nth), scan(self));
                    l.nth(nth)
                }
                None => scan(self),
            };
            if let Some(e) = self.overlays[c].take_head(r2, &mut self.heads.seen) {
                Self::write_mem(mem, &e);
                self.pend(e.k, -1);
                self.note_drain(&e, Level::Memory, reason, None);
                *self.stats.drains.entry(reason).or_default() += 1;
            }
            if let Some(l) = live {
                l.update(c, &self.overlays);
            }
        }
        true
    }

    /// The kernel-exit drain (native policy) when its random order cannot matter: no
    /// byte is held by the buffers of two threads, and the overlays are empty. Then each
    /// byte's final value is its one thread's newest entry whatever the order (a thread's
    /// entries of one byte are of one 8-byte block — entries are aligned to their size —
    /// and the random pick keeps a block's entries oldest first, as draining each queue
    /// front to back does), and what the drain counts does not depend on the order
    /// either: so every thread's queues drain in turn, front to back, instead of one
    /// random entry at a time (a cache miss or more per entry on a large launch: a third
    /// of `exec --model bugaroo` on a 1 M-element transpose). Not with a trace (the
    /// events' order is the random one). Returns false, having changed nothing, when the
    /// condition does not hold.
    fn drain_exit_disjoint(&mut self, mem: &mut Memory) -> bool {
        if self.cfg.trace || self.holders.is_empty() || self.overlays.iter().any(|o| !o.is_empty())
        {
            return false;
        }
        // (Room for one entry per holder, the common case: grown by doubling, this list
        // of a 1 M-thread launch was copied twenty times.)
        let mut spans: Vec<(u64, u64, u32)> = Vec::with_capacity(self.holders.len());
        for &g in &self.holders {
            for q in &self.threads[g as usize].q {
                spans.extend(q.each().map(|e| (e.k, e.k + e.size() as u64, g)));
            }
        }
        if !disjoint(&mut spans) {
            return false;
        }
        let reason = DrainReason::KernelExit;
        let holders = std::mem::take(&mut self.holders);
        let mut counts = [0u64; 2];
        for &g in &holders {
            let cta = g / self.tpc;
            for (s, n) in counts.iter_mut().enumerate() {
                while let Some(e) = self.threads[g as usize].q[s].pop_front() {
                    self.commit_entry(mem, cta, e, reason, None);
                    *n += 1;
                }
            }
            self.holder_pos[g as usize] = u32::MAX;
        }
        self.holders = holders;
        self.holders.clear();
        // What `drain_one_random` counts, one entry at a time.
        self.liveness_drains += counts[0] + counts[1];
        for (s, n) in counts.into_iter().enumerate() {
            if n > 0 {
                *self.stats.space(s == 1).flush_lengths.entry(1).or_default() += n;
                *self.stats.drains.entry(reason).or_default() += n;
            }
        }
        true
    }

    /// Whether some buffer may hold an entry in 8-byte block `block` (exact when tracked).
    #[inline]
    fn maybe_pending(&self, block: u64) -> bool {
        !self.track || self.pending.contains_key(&block)
    }

    /// A CTA-scope atomic on global memory under `scoped`: atomic only among the CTA's
    /// threads (PTX: `.cta` operations from different CTAs are not morally strong, so they
    /// need not be atomic with respect to each other). It reads the CTA-visible value (the
    /// CTA overlay, else memory) and leaves its result in the CTA overlay, from where it
    /// reaches memory at the next GPU-scope drain, liveness or kernel end — so two CTAs
    /// using `atomicAdd_block` on one counter can lose updates, as they may on hardware.
    fn cta_atomic(
        &mut self,
        mem: &mut Memory,
        a: &Access,
        rmw: RmwFn<'_>,
    ) -> Result<u64, MemError> {
        let t = a.thread;
        if matches!(a.sem, Sem::Release | Sem::AcqRel | Sem::Sc) {
            self.drain_thread(mem, t, Scope::Cta, DrainReason::Release, Some(a.site));
        }
        if self.maybe_pending(key(a.loc)) {
            self.drain_addr(
                mem,
                t,
                a.loc,
                a.size,
                Level::Cta,
                DrainReason::Atomic,
                Some(a.site),
            );
        }
        // Validates the address as a real access would.
        let in_memory = mem.read_u64(a.loc, a.size)?;
        let visible = match self
            .overlays
            .get(t.cta as usize)
            .map(|ov| ov.lookup(a.loc, a.size))
        {
            Some(Ok(Some(v))) => v,
            Some(Err(())) => {
                self.drain_overlay_addr(
                    mem,
                    t.cta,
                    a.loc,
                    a.size,
                    DrainReason::PartialOverlap,
                    Some(a.site),
                );
                mem.read_u64(a.loc, a.size)?
            }
            _ => in_memory,
        };
        let mask = if a.size >= 8 {
            u64::MAX
        } else {
            (1u64 << (a.size * 8)) - 1
        };
        // A failing compare-and-swap writes nothing: the visible value stays.
        let new = rmw(visible).unwrap_or(visible) & mask;
        if new != visible {
            self.overlay_room(mem, t.cta, Some(a.site));
            self.seq += 1;
            let e = Entry::new(a.loc, new, a.size, a.site, self.seq, t.global);
            if let Some(ov) = self.overlays.get_mut(t.cta as usize) {
                ov.push_back(e);
                self.name(e.k);
                self.pend(e.k, 1);
                self.note_buffered(&e);
            } else {
                mem.write_u64(a.loc, a.size, new)?;
            }
        }
        Ok(visible)
    }

    /// Whether this launch buffers: the kernel filter let it, and the model is one of
    /// this family's.
    fn buffering(&self) -> bool {
        self.active && !matches!(self.cfg.model, Model::Sc | Model::Weak)
    }

    /// [`DrainPolicy::Device`]: every `liveness_period`-th load or atomic of a thread
    /// drains one entry to memory before the access, picked like the native stall rule
    /// picks (one *holder* uniformly, then one of its entries) among the holders a thread
    /// on a GPU can drain: its own buffer (weighing as many holders as there are live
    /// threads holding entries, see below), each non-empty CTA overlay, and each exited
    /// thread whose entries wait in a CTA's orphan queue (weight: those threads, at most
    /// the queue's length; an orphan queue holds the exited threads' entries without their
    /// boundaries, so the entry is then uniform in the queue). Other live threads' buffers
    /// are the holders a GPU thread cannot drain (see the rewrite's docs, "Where the device
    /// differs"). Draining one's own buffer on every tick instead (and a CTA entry besides)
    /// made a spinning thread publish its own stores far sooner than other threads'
    /// orphaned ones, which the native rule does not: `cub_scan no_fence_3` under
    /// `scoped` found its bug 0 in 40 times at `p_w = 1` instrumented, 10 in 40 natively.
    fn liveness_tick(&mut self, mem: &mut Memory, t: ThreadRef, site: SiteId) {
        let DrainPolicy::Device {
            liveness_period, ..
        } = self.cfg.policy
        else {
            return;
        };
        let Some(lv) = self.liveness.get_mut(t.global as usize) else {
            return;
        };
        lv.ticks += 1;
        if liveness_period > 0 && lv.ticks >= liveness_period {
            lv.ticks = 0;
            lv.lives = lv.lives.wrapping_add(1);
            let lives = lv.lives;
            let tb = &self.threads[t.global as usize];
            // The own buffer weighs as many holders as there are live ones: each live
            // holder can drain only itself, at its own ticks, so giving its own buffer the
            // weight of all of them gives the live holders together the share of the
            // drains the native stall rule gives them (there, one uniform pick among every
            // holder). Weight 1 made a thread spinning among other spinning holders
            // publish its own stores several times less often than natively: `cub_scan
            // no_fence_2` under `scoped` at `p_w = 1`, native 38/40, device 16-20/40.
            let holding = tb.q[0].len() + tb.q[1].len() > 0;
            let own = if holding {
                self.holders.len().max(1) as u64
            } else {
                0
            };
            let prefix = select::thread_prefix(self.cfg.seed, self.launch, t.global);
            let r = select::mix(prefix ^ 0x6c69_7665_0000_0000 ^ lives as u64);
            let total = own
                + (0..self.orphans.len())
                    .map(|c| self.cta_weight(c))
                    .sum::<u64>();
            if total == 0 {
                return;
            }
            self.device_progress = true;
            let mut x = r % total;
            if x < own {
                self.drain_one_own_entry(mem, t, r, Some(site));
                return;
            }
            x -= own;
            for c in 0..self.orphans.len() {
                let w = self.cta_weight(c);
                if x < w {
                    let overlay = x == 0 && self.overlays.get(c).is_some_and(|o| !o.is_empty());
                    self.drain_one_cta_entry(mem, c, overlay, r, Some(site));
                    return;
                }
                x -= w;
            }
        }
    }

    /// [`DrainPolicy::Device`]: how many holders CTA `c` stands for in the liveness pick:
    /// its overlay (one, when not empty) and its orphaned threads (at most one per entry).
    fn cta_weight(&self, c: usize) -> u64 {
        let ov = self.overlays.get(c).is_some_and(|o| !o.is_empty()) as u64;
        let orph = self.orphans.get(c).map_or(0, |o| o.len()) as u64;
        let thr = self.orphan_threads.get(c).copied().unwrap_or(0) as u64;
        ov + thr.min(orph)
    }

    /// [`DrainPolicy::Device`]'s liveness drain of the thread's own stores: one entry to
    /// memory, chosen at random (`r`, then replaced by the oldest entry of its 8-byte
    /// block). One at a time, not the whole buffer in program order, for the reason
    /// [`Self::drain_one_cta_entry`] gives: a thread that spins while it holds stores must
    /// let them out in other orders too (CUB's look-back under `fuzz --instrumented` found
    /// nothing at `p_w = 1` otherwise). The device runtime does the same
    /// (`fh_drain_one_own_entry`).
    fn drain_one_own_entry(&mut self, mem: &mut Memory, t: ThreadRef, r: u64, at: Option<SiteId>) {
        let Some(tb) = self.threads.get_mut(t.global as usize) else {
            return;
        };
        let n = tb.q[0].len() + tb.q[1].len();
        if n == 0 {
            return;
        }
        // Both spaces in store order, as (seq, space, index, key).
        let mut order: Vec<(u64, usize, usize, u64)> = (0..2)
            .flat_map(|s| {
                tb.q[s]
                    .each()
                    .enumerate()
                    .map(move |(i, e)| (e.seq(), s, i, e.k))
            })
            .collect();
        order.sort_unstable();
        let i = (select::mix(r.wrapping_add(1)) % n as u64) as usize;
        let block = order[i].3 & !7;
        let j = (0..i).find(|&x| order[x].3 & !7 == block).unwrap_or(i);
        let (_, s, idx, _) = order[j];
        let Some(e) = tb.q[s].remove(idx) else {
            return;
        };
        self.sync_holder(t.global);
        self.place(mem, t.cta, e, Level::Memory, DrainReason::Liveness, at);
        let mut counts = [0u32; 2];
        counts[s] = 1;
        self.record_flush(counts, DrainReason::Liveness);
    }

    /// [`DrainPolicy::Device`]'s liveness drain of other threads' stores: one entry of CTA
    /// `c` to memory, chosen at random (`r`, seeded by the thread and its liveness count):
    /// one of its overlay (`overlay`) or of its orphan queue, replaced by the oldest entry of
    /// its 8-byte block in the overlay followed by the orphans (each address keeps its
    /// order). One entry rather than whole queues: a spinning reader must be able to see a
    /// later store before an earlier one to another address, as the native rule lets it
    /// (draining the queues in order made `fuzz --instrumented` blind at `p_w = 1` to the
    /// missing or CTA-scoped fences the native handlers find every time: issue 25). The
    /// device runtime does the same (`fh_drain_one_cta_entry`).
    fn drain_one_cta_entry(
        &mut self,
        mem: &mut Memory,
        c: usize,
        overlay: bool,
        r: u64,
        at: Option<SiteId>,
    ) {
        let nov = self.overlays.get(c).map_or(0, |o| o.len());
        let norph = self.orphans.get(c).map_or(0, |o| o.len());
        let (base, n) = if overlay { (0, nov) } else { (nov, norph) };
        if n == 0 {
            return;
        }
        let at_k = |s: &Self, x: usize| {
            if x < nov {
                s.overlays[c][x].k
            } else {
                s.orphans[c][x - nov].k
            }
        };
        let i = base + (select::mix(r) % n as u64) as usize;
        let b = at_k(self, i) & !7;
        let j = (0..i).find(|&x| at_k(self, x) & !7 == b).unwrap_or(i);
        if j < nov {
            let Some(e) = self.overlays[c].remove(j) else {
                return;
            };
            Self::write_mem(mem, &e);
            self.pend(e.k, -1);
            self.note_drain(&e, Level::Memory, DrainReason::Liveness, at);
        } else {
            let Some(e) = self.orphans[c].remove(j - nov) else {
                return;
            };
            if self.orphans[c].is_empty() {
                self.orphan_threads[c] = 0;
            }
            let shared = (e.k >> 63) as usize;
            self.commit_entry(mem, c as u32, e, DrainReason::Liveness, at);
            let mut counts = [0u32; 2];
            counts[shared] = 1;
            self.record_flush(counts, DrainReason::Liveness);
        }
    }

    /// [`DrainPolicy::Device`]: every CTA's overlay, then its orphan queue, to memory
    /// (the overlay first: an orphan of an address is newer than that CTA's overlay
    /// entries for it).
    fn drain_ctas(&mut self, mem: &mut Memory, reason: DrainReason, at: Option<SiteId>) {
        for c in 0..self.orphans.len() as u32 {
            self.drain_overlay(mem, c, reason, at);
            self.drain_orphans(mem, c, reason, at);
        }
    }

    /// The orphan queue of `cta` to memory, as one flush.
    fn drain_orphans(
        &mut self,
        mem: &mut Memory,
        cta: u32,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        let Some(q) = self.orphans.get_mut(cta as usize) else {
            return;
        };
        if q.is_empty() {
            return;
        }
        let mut entries = std::mem::take(&mut self.scratch);
        entries.extend(q.drain(..));
        if let Some(n) = self.orphan_threads.get_mut(cta as usize) {
            *n = 0;
        }
        let mut counts = [0u32; 2];
        for e in &entries {
            counts[(e.k >> 63) as usize] += 1;
        }
        for e in entries.drain(..) {
            self.commit_entry(mem, cta, e, reason, at);
        }
        self.scratch = entries;
        self.record_flush(counts, reason);
    }

    /// [`DrainPolicy::Device`] at thread exit: the thread's entries join its CTA's orphan
    /// queue; the launch's last thread drains every CTA.
    fn orphan_thread(&mut self, mem: &mut Memory, t: ThreadRef) {
        let DrainPolicy::Device {
            overlay_capacity, ..
        } = self.cfg.policy
        else {
            return;
        };
        if let Some(tb) = self.threads.get_mut(t.global as usize) {
            let mut all = std::mem::take(&mut self.scratch);
            merge_in_store_order(&mut tb.q, &mut all);
            let had = !all.is_empty();
            self.sync_holder(t.global);
            for e in all.drain(..) {
                if self
                    .orphans
                    .get(t.cta as usize)
                    .is_some_and(|q| q.len() >= overlay_capacity as usize)
                {
                    self.drain_orphans(mem, t.cta, DrainReason::Full, None);
                }
                if let Some(q) = self.orphans.get_mut(t.cta as usize) {
                    q.push_back(e);
                }
            }
            self.scratch = all;
            if had {
                if let Some(n) = self.orphan_threads.get_mut(t.cta as usize) {
                    *n += 1;
                }
            }
        }
        self.exited += 1;
        if self.exited == self.nthreads {
            self.drain_ctas(mem, DrainReason::KernelExit, None);
        }
    }

    /// [`DrainPolicy::Device`]: a full CTA overlay drains to memory before it takes
    /// another entry.
    fn overlay_room(&mut self, mem: &mut Memory, cta: u32, at: Option<SiteId>) {
        if let DrainPolicy::Device {
            overlay_capacity, ..
        } = self.cfg.policy
        {
            if self
                .overlays
                .get(cta as usize)
                .is_some_and(|o| o.len() >= overlay_capacity as usize)
            {
                self.drain_overlay(mem, cta, DrainReason::Full, at);
            }
        }
    }

    /// Counts entries per 8-byte block; `k` is a packed location.
    #[inline]
    fn pend(&mut self, k: u64, delta: i32) {
        if !self.track {
            return;
        }
        let k = k & !7;
        let c = self.pending.entry(k).or_insert(0);
        *c = c.saturating_add_signed(delta);
        if *c == 0 {
            self.pending.remove(&k);
        }
    }

    /// A counted change at packed location `k` that is not a memory write (see `named`).
    #[inline]
    fn name(&mut self, k: u64) {
        if self.named.len() >= 1 << 16 {
            self.named.clear();
            self.named_lost = true;
        }
        self.named.push(k & !7);
    }

    fn write_mem(mem: &mut Memory, e: &Entry) {
        // Addresses were checked when the store was buffered; allocations do not move.
        let _ = mem.write(e.loc(), &e.value.to_le_bytes()[..e.size() as usize]);
    }

    fn note_buffered(&mut self, e: &Entry) {
        if self.cfg.trace {
            self.trace.push(TraceEvent::Buffered {
                seq: e.seq(),
                thread: e.thread,
                site: e.site,
                loc: e.loc(),
                size: e.size() as u8,
                value: e.value,
            });
        }
    }

    fn note_drain(&mut self, e: &Entry, to: Level, reason: DrainReason, at: Option<SiteId>) {
        if self.cfg.trace {
            self.trace.push(TraceEvent::Drained {
                seq: e.seq(),
                thread: e.thread,
                site: e.site,
                loc: e.loc(),
                to,
                reason,
                at,
            });
        }
    }

    /// Overlay entries of `cta` overlapping `loc` drain to memory (oldest first).
    fn drain_overlay_addr(
        &mut self,
        mem: &mut Memory,
        cta: u32,
        loc: Location,
        size: u32,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        if self.cfg.model != Model::Scoped || loc.is_shared() {
            return;
        }
        let k = pack(loc);
        let Some(ov) = self.overlays.get_mut(cta as usize) else {
            return;
        };
        // (The overlay's block counts are exact: no need to ask the pending index.)
        if !ov.holds_block(k) {
            return;
        }
        let mut drained = std::mem::take(&mut self.scratch);
        let mut i = 0;
        while i < ov.len() {
            if ov[i].overlaps(k, size) {
                if let Some(e) = ov.remove(i) {
                    drained.push(e);
                }
            } else {
                i += 1;
            }
        }
        if !drained.is_empty() {
            self.shared_effects += 1;
        }
        for e in drained.drain(..) {
            Self::write_mem(mem, &e);
            self.pend(e.k, -1);
            self.note_drain(&e, Level::Memory, reason, at);
        }
        self.scratch = drained;
    }

    /// One thread entry goes to memory (after the overlay's entries for its address).
    fn commit_entry(
        &mut self,
        mem: &mut Memory,
        cta: u32,
        e: Entry,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        self.drain_overlay_addr(mem, cta, e.loc(), e.size(), DrainReason::Coherence, at);
        Self::write_mem(mem, &e);
        self.pend(e.k, -1);
        self.note_drain(&e, Level::Memory, reason, at);
    }

    fn record_flush(&mut self, counts: [u32; 2], reason: DrainReason) {
        for (s, n) in counts.into_iter().enumerate() {
            if n > 0 {
                *self.stats.space(s == 1).flush_lengths.entry(n).or_default() += 1;
                *self.stats.drains.entry(reason).or_default() += n as u64;
            }
        }
    }

    /// Own entries overlapping `loc` drain (oldest first) to `level`.
    #[allow(clippy::too_many_arguments)]
    fn drain_addr(
        &mut self,
        mem: &mut Memory,
        t: ThreadRef,
        loc: Location,
        size: u32,
        level: Level,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        let s = sp(loc);
        let Some(tb) = self.threads.get_mut(t.global as usize) else {
            return;
        };
        let k = pack(loc);
        // (Usually nothing overlaps: every buffered store asks. The words filter says
        // so without touching the entries, mostly.)
        if tb.words[s] & words_filter(k, size) == 0 {
            return;
        }
        // (One pass: the filter is made exact on the way, for when nothing overlaps.)
        let (mut hit, mut exact) = (false, 0);
        for e in tb.q[s].each() {
            hit |= e.overlaps(k, size);
            exact |= words_filter(e.k, e.size());
        }
        if !hit {
            tb.words[s] = exact;
            return;
        }
        self.shared_effects += 1;
        let mut out = std::mem::take(&mut self.scratch);
        let mut i = 0;
        while i < tb.q[s].len() {
            if tb.q[s][i].overlaps(k, size) {
                if let Some(e) = tb.q[s].remove(i) {
                    out.push(e);
                }
            } else {
                i += 1;
            }
        }
        let n = out.len() as u32;
        self.sync_holder(t.global);
        for e in out.drain(..) {
            self.place(mem, t.cta, e, level, reason, at);
        }
        self.scratch = out;
        let mut counts = [0, 0];
        counts[s] = n;
        self.record_flush(counts, reason);
    }

    /// Puts a drained thread entry at `level` (shared entries always go to memory).
    fn place(
        &mut self,
        mem: &mut Memory,
        cta: u32,
        e: Entry,
        level: Level,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        if level == Level::Cta && self.cfg.model == Model::Scoped && e.k >> 63 == 0 {
            self.overlay_room(mem, cta, at);
            self.note_drain(&e, Level::Cta, reason, at);
            if let Some(ov) = self.overlays.get_mut(cta as usize) {
                ov.push_back(e);
                self.name(e.k);
            }
        } else {
            self.commit_entry(mem, cta, e, reason, at);
        }
    }

    /// Everything of thread `t` drains to the level `scope` requires; a GPU/system-scope
    /// drain publishes the CTA overlay first (cumulativity).
    fn drain_thread(
        &mut self,
        mem: &mut Memory,
        t: ThreadRef,
        scope: Scope,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        let level = match (self.cfg.model, scope) {
            (Model::Scoped, Scope::Cta) => Level::Cta,
            _ => Level::Memory,
        };
        if level == Level::Memory && self.cfg.model == Model::Scoped {
            self.drain_overlay(mem, t.cta, reason, at);
        }
        let Some(tb) = self.threads.get_mut(t.global as usize) else {
            return;
        };
        if tb.q[0].is_empty() && tb.q[1].is_empty() {
            return;
        }
        self.shared_effects += 1;
        let counts = [tb.q[0].len() as u32, tb.q[1].len() as u32];
        // Merge both spaces in store order (each queue is in store order already).
        let mut all = std::mem::take(&mut self.scratch);
        merge_in_store_order(&mut tb.q, &mut all);
        self.sync_holder(t.global);
        for e in all.drain(..) {
            self.place(mem, t.cta, e, level, reason, at);
        }
        self.scratch = all;
        self.record_flush(counts, reason);
    }

    fn drain_overlay(
        &mut self,
        mem: &mut Memory,
        cta: u32,
        reason: DrainReason,
        at: Option<SiteId>,
    ) {
        let Some(ov) = self.overlays.get_mut(cta as usize) else {
            return;
        };
        if ov.is_empty() {
            return;
        }
        self.shared_effects += 1;
        let mut entries = std::mem::take(&mut self.scratch);
        ov.drain_into(&mut entries);
        for e in entries.drain(..) {
            Self::write_mem(mem, &e);
            self.pend(e.k, -1);
            self.note_drain(&e, Level::Memory, reason, at);
        }
        self.scratch = entries;
    }

    /// Forgets everything still buffered.
    fn discard_all(&mut self) {
        for t in &mut self.threads {
            t.q[0].clear();
            t.q[1].clear();
        }
        for o in &mut self.overlays {
            o.clear();
        }
        for o in &mut self.orphans {
            o.clear();
        }
        for &g in &self.holders {
            self.holder_pos[g as usize] = u32::MAX;
        }
        self.holders.clear();
        self.pending.clear();
    }

    /// Drains everything still buffered (kernel exit).
    fn drain_all(&mut self, mem: &mut Memory) {
        for cta in 0..self.overlays.len() as u32 {
            self.drain_overlay(mem, cta, DrainReason::KernelExit, None);
        }
        for g in 0..self.threads.len() as u32 {
            let cta = g / self.tpc.max(1);
            let t = ThreadRef {
                cta,
                tid: g % self.tpc.max(1),
                global: g,
                lane: 0,
                warp: 0,
            };
            self.drain_thread(mem, t, Scope::Sys, DrainReason::KernelExit, None);
        }
    }

    /// Reads what thread `t` would observe at `loc` from its buffer, or None.
    /// Returns Err(()) when the buffer covers the bytes only partly.
    fn lookup(entries: &impl Entries, loc: Location, size: u32) -> Result<Option<u64>, ()> {
        let mut covered = 0u64; // bit i: byte i known
        let mut value = 0u64;
        let full = if size >= 8 { 0xff } else { (1u64 << size) - 1 };
        let mut any = false;
        let la = pack(loc);
        for e in entries.each().rev() {
            if !e.overlaps(la, size) {
                continue;
            }
            let ea = e.k;
            if !any && ea == la && e.size() == size {
                // The newest overlapping entry is exactly this access (the usual case).
                return Ok(Some(e.value));
            }
            any = true;
            for i in 0..size as u64 {
                let addr = la + i;
                if addr >= ea && addr < ea + e.size() as u64 && covered >> i & 1 == 0 {
                    let byte = (e.value >> ((addr - ea) * 8)) & 0xff;
                    value |= byte << (i * 8);
                    covered |= 1 << i;
                }
            }
            if covered == full {
                return Ok(Some(value));
            }
        }
        if any {
            Err(())
        } else {
            Ok(None)
        }
    }
}

impl StoreBuffers {
    /// What [`Hooks::plain_loads`] and [`Hooks::cta_steps_local`] both need of CTA `cta`
    /// besides its threads' queues: the native policy (no liveness tick reaching other
    /// holders), no trace (events in execution order), and under `scoped` its overlay
    /// empty (global loads look there; a release at `.gpu` scope publishes it).
    #[inline]
    fn plain_cta(&self, cta: u32) -> bool {
        self.cfg.policy == DrainPolicy::Native
            && !self.cfg.trace
            && (self.cfg.model != Model::Scoped
                || self.overlays.get(cta as usize).is_none_or(|o| o.is_empty()))
    }
}

impl Hooks for StoreBuffers {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.launch = info.launch;
        self.launch_key = select::launch_key(self.cfg.seed, info.launch);
        self.active = self
            .cfg
            .kernels
            .as_ref()
            .is_none_or(|k| k.contains(info.kernel));
        self.tpc = info.threads_per_cta.max(1);
        // Each table emptied and refilled with defaults, not rebuilt with `vec![x; n]`:
        // that clones `x` n times (an out-of-line `VecDeque::clone` per thread, 1.7% of
        // `fuzz sdk_red --model bugaroo`, and `Vec::extend_with` 1.4%), and the tables'
        // own room is kept for the next launch.
        let (threads, ctas) = (info.threads as usize, info.ctas as usize);
        self.threads.clear();
        self.threads.resize_with(threads, ThreadBuf::default);
        self.liveness.clear();
        if matches!(self.cfg.policy, DrainPolicy::Device { .. }) {
            self.liveness.resize_with(threads, Liveness::default);
        }
        self.overlays.clear();
        self.overlays.resize_with(ctas, Overlay::default);
        self.orphans.clear();
        if self.cfg.policy != DrainPolicy::Native {
            self.orphans.resize_with(ctas, VecDeque::new);
        }
        self.orphan_threads = vec![0; self.orphans.len()];
        self.device_progress = false;
        self.exited = 0;
        self.nthreads = info.threads;
        self.liveness_drains = 0;
        self.holders.clear();
        // (Made to its length: `heap_bytes` counts its capacity.)
        self.holder_pos = vec![u32::MAX; threads];
        self.pending.clear();
        self.named.clear();
        self.named_lost = false;
    }

    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        if !self.buffering() {
            return mem.read(a.loc, buf);
        }
        let t = a.thread;
        let size = a.size;
        let s = sp(a.loc);
        self.liveness_tick(mem, t, a.site);
        if self.maybe_pending(key(a.loc)) {
            if let Some(tb) = self.threads.get(t.global as usize) {
                // (No entry covers a word the filter does not hold: nothing to forward.)
                let found = if tb.words[s] & words_filter(pack(a.loc), size) == 0 {
                    Ok(None)
                } else {
                    Self::lookup(&tb.q[s], a.loc, size)
                };
                match found {
                    Ok(Some(v)) => {
                        // Validate the address like a real load would.
                        mem.read(a.loc, buf)?;
                        buf.copy_from_slice(&v.to_le_bytes()[..size as usize]);
                        self.load_effects += 1;
                        self.stats.forwarded_loads += 1;
                        if self.cfg.trace {
                            self.trace.push(TraceEvent::Forwarded {
                                thread: t.global,
                                site: a.site,
                                loc: a.loc,
                                value: v,
                            });
                        }
                        return Ok(());
                    }
                    Ok(None) => {}
                    Err(()) => {
                        self.load_effects += 1;
                        let level = if self.cfg.model == Model::Scoped {
                            Level::Cta
                        } else {
                            Level::Memory
                        };
                        self.drain_addr(
                            mem,
                            t,
                            a.loc,
                            size,
                            level,
                            DrainReason::PartialOverlap,
                            Some(a.site),
                        );
                    }
                }
            }
            if self.cfg.model == Model::Scoped && !a.loc.is_shared() {
                if let Some(ov) = self.overlays.get(t.cta as usize) {
                    match ov.lookup(a.loc, size) {
                        Ok(Some(v)) => {
                            mem.read(a.loc, buf)?;
                            buf.copy_from_slice(&v.to_le_bytes()[..size as usize]);
                            self.load_effects += 1;
                            self.stats.overlay_loads += 1;
                            return Ok(());
                        }
                        Ok(None) => {}
                        Err(()) => {
                            self.load_effects += 1;
                            self.drain_overlay_addr(
                                mem,
                                t.cta,
                                a.loc,
                                size,
                                DrainReason::PartialOverlap,
                                Some(a.site),
                            )
                        }
                    }
                }
            }
        }
        mem.read(a.loc, buf)?;
        if self.cfg.trace && self.maybe_pending(key(a.loc)) {
            self.load_effects += 1;
            let mut v = [0u8; 8];
            v[..buf.len()].copy_from_slice(buf);
            self.trace.push(TraceEvent::StaleLoad {
                thread: t.global,
                site: a.site,
                loc: a.loc,
                value: u64::from_le_bytes(v),
            });
        }
        Ok(())
    }

    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        if !self.buffering() {
            self.shared_effects += 1;
            return mem.write(a.loc, data);
        }
        // Check the address now, so a bad store faults at its own instruction.
        let mut probe = [0u8; 8];
        mem.read(a.loc, &mut probe[..data.len()])?;
        let t = a.thread;
        let s = sp(a.loc);
        let size = a.size;
        if matches!(a.sem, Sem::Release | Sem::AcqRel | Sem::Sc) {
            self.drain_thread(mem, t, a.scope, DrainReason::Release, Some(a.site));
        }
        let level = if self.cfg.model == Model::Scoped {
            Level::Cta
        } else {
            Level::Memory
        };
        let block = key(a.loc);
        let was_pending = self.maybe_pending(block);
        if was_pending {
            self.drain_addr(
                mem,
                t,
                a.loc,
                size,
                level,
                DrainReason::WriteAfterWrite,
                Some(a.site),
            );
        }
        let Some(tb) = self.threads.get_mut(t.global as usize) else {
            self.shared_effects += 1;
            return mem.write(a.loc, data);
        };
        let n = tb.next_store();
        let shared = s == 1;
        self.stats.space(shared).stores_seen += 1;
        let eligible = if shared {
            self.cfg.buffer_shared
        } else {
            self.cfg.buffer_global
        } && self
            .cfg
            .sites
            .as_ref()
            .is_none_or(|set| set.contains(&a.site))
            // An element of a strong 16-byte vector goes to memory with its sibling in
            // the same step: the vector is one message (vgpu `Access::indivisible`).
            && !a.indivisible;
        let value = fencehound_vgpu::hooks::le_value(data);
        if eligible && select::selected_in(self.launch_key, t.global, n, self.threshold) {
            if self.threads[t.global as usize].q[s].len() as u32 >= self.cfg.capacity {
                self.shared_effects += 1;
                let mut entries = std::mem::take(&mut self.scratch);
                self.threads[t.global as usize].q[s].drain_into(&mut entries);
                let cnt = entries.len() as u32;
                for e in entries.drain(..) {
                    self.commit_entry(mem, t.cta, e, DrainReason::Full, Some(a.site));
                }
                self.scratch = entries;
                let mut counts = [0, 0];
                counts[s] = cnt;
                self.record_flush(counts, DrainReason::Full);
            }
            self.seq += 1;
            let e = Entry::new(a.loc, value, size, a.site, self.seq, t.global);
            let still_pending = was_pending && self.maybe_pending(block);
            let tb = &mut self.threads[t.global as usize];
            if tb.q[s].is_empty() {
                tb.set_mixed(s, false);
                tb.words[s] = 0;
            } else if still_pending
                && !tb.mixed(s)
                // The words filter first: it holds every entry's words, so a block none
                // of whose two words it holds has no entry here (the scan's first entry
                // was a cache miss per store: a tenth of `exec --model bugaroo` on a
                // transpose whose neighbouring lanes store into one 8-byte block).
                && tb.words[s] & words_filter(block, 8) != 0
                && tb.q[s].each().any(|o| o.k & !7 == block)
            {
                tb.set_mixed(s, true);
            }
            tb.q[s].push_back(e);
            tb.words[s] |= words_filter(e.k, e.size());
            let occ = (tb.q[0].len() + tb.q[1].len()) as u32;
            self.sync_holder(t.global);
            self.stats.peak_occupancy = self.stats.peak_occupancy.max(occ);
            self.stats.space(shared).stores_buffered += 1;
            self.pend(e.k, 1);
            self.note_buffered(&e);
            Ok(())
        } else {
            self.shared_effects += 1;
            self.drain_overlay_addr(
                mem,
                t.cta,
                a.loc,
                size,
                DrainReason::Coherence,
                Some(a.site),
            );
            mem.write(a.loc, data)
        }
    }

    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        if self.buffering() {
            self.liveness_tick(mem, a.thread, a.site);
        }
        if self.buffering()
            && self.cfg.model == Model::Scoped
            && a.scope == Scope::Cta
            && !a.loc.is_shared()
        {
            return self.cta_atomic(mem, a, rmw);
        }
        if self.buffering() {
            let t = a.thread;
            if matches!(a.sem, Sem::Release | Sem::AcqRel | Sem::Sc) {
                self.drain_thread(mem, t, a.scope, DrainReason::Release, Some(a.site));
            }
            if self.maybe_pending(key(a.loc)) {
                self.drain_addr(
                    mem,
                    t,
                    a.loc,
                    a.size,
                    Level::Memory,
                    DrainReason::Atomic,
                    Some(a.site),
                );
                self.drain_overlay_addr(
                    mem,
                    t.cta,
                    a.loc,
                    a.size,
                    DrainReason::Coherence,
                    Some(a.site),
                );
            }
        }
        let old = mem.read_u64(a.loc, a.size)?;
        if let Some(new) = rmw(old) {
            mem.write_u64(a.loc, a.size, new)?;
        }
        Ok(old)
    }

    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        if !self.buffering() || f.kind == FenceKind::Acquire {
            return;
        }
        self.drain_thread(mem, f.thread, f.scope, DrainReason::Fence, Some(f.site));
    }

    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        if !self.buffering() {
            return;
        }
        let reason = if b.kind == BarrierKind::Warp {
            DrainReason::WarpSync
        } else {
            DrainReason::Barrier
        };
        self.drain_thread(mem, b.thread, Scope::Cta, reason, Some(b.site));
    }

    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        // Native: an exited thread's buffered stores stay buffered: nothing obliges them to
        // become visible before kernel exit, and draining them at random moments
        // (liveness, the final drain) is what produces outcomes like 2+2W. Spinning
        // waiters are served by the liveness rule. A device has no such global view: see
        // `orphan_thread`.
        if self.buffering() && self.cfg.policy != DrainPolicy::Native {
            self.orphan_thread(mem, t);
        }
    }

    fn load_effects(&self) -> Option<u64> {
        // Under the device policy a load may drain (the liveness tick), which it does not
        // count: no parking there.
        match self.cfg.policy {
            DrainPolicy::Native => Some(self.load_effects),
            DrainPolicy::Device { .. } => None,
        }
    }

    fn shared_effects(&self) -> Option<u64> {
        // What another thread's load reads: its own queue, its CTA's overlay
        // (`scoped`), memory. Those change only by drains (`drain_thread`,
        // `drain_overlay`, `drain_addr`, `drain_overlay_addr`, a full queue's flush,
        // the liveness drains of `stalled` and of atomics) and by the writes that go to
        // memory directly; each counts in `shared_effects` when it moved anything. A store
        // that waits in its thread's buffer changes that thread's queue, the `pending`
        // filter and statistics: no other thread's load result. A fence with nothing to
        // drain changes nothing at all.
        // (A launch that does not buffer is transparent: the interpreter writes memory
        // itself.)
        match self.cfg.policy {
            DrainPolicy::Native if self.buffering() => Some(self.shared_effects),
            _ => None,
        }
    }

    fn changed_blocks(&mut self, out: &mut Vec<u64>) -> bool {
        // What another thread's load reads (see `shared_effects`) changes by memory
        // writes, which the interpreter logs, by entries placed in a CTA overlay (named
        // here by `key`, the interpreter's block key), and by entries leaving a thread's
        // queue or an overlay —
        // each of which is written to memory or placed in an overlay in the same call.
        // (A store that waits in its thread's buffer changes no other thread's load.)
        out.append(&mut self.named);
        !std::mem::replace(&mut self.named_lost, false)
    }

    fn transparent(&self) -> bool {
        // `sc`, or a launch the filters leave unbuffered: loads, stores and atomics go
        // straight to memory (see the first lines of each).
        !self.buffering()
    }

    #[inline]
    fn plain_loads(&self, cta: u32, first: u32, lanes: u32) -> bool {
        // `load` of a thread that holds nothing, under the native policy (no liveness
        // tick), without a trace (no stale-load events), with its CTA's overlay empty
        // (`scoped` global loads look there): both lookups find nothing, and what is left
        // is `mem.read` — no statistic, no load effect.
        if !self.buffering() {
            return true;
        }
        if !self.plain_cta(cta) {
            return false;
        }
        let Some(pos) = self.holder_pos.get(first as usize..) else {
            return false;
        };
        let mut rest = lanes;
        while rest != 0 {
            let l = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            match pos.get(l) {
                Some(&p) if self.holds_nothing(first as usize + l, p) => {}
                _ => return false,
            }
        }
        true
    }

    fn settled(&self, cta: u32, first: u32, lanes: u32) -> bool {
        // `plain_loads` holds exactly when these threads' queues are empty and their
        // CTA's overlay is (`scoped`), under the native policy: nothing of theirs is
        // buffered, so no drain — a fence, a barrier, a liveness drain — can make a store
        // of theirs visible later. (Not buffering: transparent.)
        self.plain_loads(cta, first, lanes)
    }

    fn cta_steps_local(&self, cta: u32, first: u32, n: u32) -> bool {
        // A CTA-local step of these threads (a shared access, a barrier, a collective;
        // the vgpu's `ctalocal` module) reaches: their own queues (forwarding, a shared
        // store's entry — chosen by `select`, a function of the thread and its store
        // count — a full shared queue's flush, a drain at a barrier or warp sync or
        // before a shared atomic), shared memory of their CTA, the `pending` counts of
        // blocks of that shared window (keys name the CTA), and their CTA's overlay only
        // for global addresses (none here). Besides those: statistics and effect counts
        // (sums), `seq` (compared only between entries of one block: here the CTA's
        // own), `holders` as a set (the stall and exit drains pick from it uniformly)
        // and the `named` log of changed blocks. All of it is the CTA's or sums — as
        // long as no queue of theirs holds a *global* store: the next barrier or warp
        // sync would write it to memory (`bugaroo`) or into the overlay and on to a
        // `scoped` load of it, which another CTA's steps can see or race with. And under
        // `scoped`, as long as the CTA's overlay is empty: a shared store or atomic that
        // releases at `.gpu` scope or wider (`st.release.gpu.shared`, an `atomic_ref` of
        // device scope on shared memory) is a CTA-local step, and it publishes the
        // overlay to memory. Only a global store of the CTA (a step that is not
        // CTA-local) puts an entry in either place: the queue first, the overlay after.
        // The device policy's liveness tick picks among other CTAs' holders, and a
        // trace records the order of events: neither here.
        if !self.buffering() {
            return true;
        }
        if !self.plain_cta(cta) {
            return false;
        }
        let (a, b) = (first as usize, first as usize + n as usize);
        let b = b.min(self.threads.len());
        // (A thread that holds nothing, most of them, is answered from `holder_pos`.)
        self.holder_pos.get(a..b).is_some_and(|pos| {
            pos.iter()
                .zip(a..)
                .all(|(&p, g)| self.holds_nothing(g, p) || self.threads[g].q[0].is_empty())
        })
    }

    fn unwritten_loads(&mut self, _first: u32, _lanes: u32) -> bool {
        // Bytes no thread writes have no entry in any queue or overlay (an entry is a
        // store to them), so `load` finds nothing to forward or drain and reads memory;
        // the device policy's liveness tick counts every load, so it is asked.
        !self.buffering() || self.cfg.policy == DrainPolicy::Native
    }

    fn stalled(&mut self, mem: &mut Memory) -> bool {
        if !self.buffering() {
            return false;
        }
        match self.cfg.policy {
            DrainPolicy::Native => self.drain_one_random(mem, DrainReason::Liveness, None),
            // A stall report drains nothing under the device policy (a GPU has no such
            // view); it only says whether liveness drains, which the vgpu does not see
            // (they happen inside a load), wrote memory since it last asked, so its
            // livelock detector does not call a spinning warp hung while they still
            // release it. On the rewritten side the runtime's own stores tell it.
            DrainPolicy::Device { .. } => std::mem::take(&mut self.device_progress),
        }
    }

    fn launch_end(&mut self, mem: &mut Memory) {
        if self.buffering() {
            // No load can follow, so the index is only a filter from here on: stop
            // keeping it (one hash update less per drained entry).
            let track = std::mem::replace(&mut self.track, false);
            self.pending.clear();
            // Every thread has exited: what remains drains in a random order (per address
            // oldest first), which decides races between threads' stores (2+2W). Under the
            // device policy exiting threads drained already.
            if self.cfg.policy == DrainPolicy::Native {
                // Every entry drains through the stall rule's pick, which needs the
                // non-empty overlays: kept here rather than counted per entry (that scan
                // of every CTA per drained entry was 40% of `exec --model scoped` on a
                // 1,024-CTA transpose).
                if !self.drain_exit_disjoint(mem) {
                    let mut live =
                        (self.cfg.model == Model::Scoped).then(|| LiveOverlays::of(&self.overlays));
                    while self.drain_one_random(mem, DrainReason::KernelExit, live.as_mut()) {}
                }
                self.drain_all(mem);
            } else {
                // Only a launch that did not complete (trap, fault, hang) leaves entries:
                // a device loses them with the aborted kernel.
                self.discard_all();
            }
            self.track = track;
        }
        self.peak_heap = self.peak_heap.max(self.heap_bytes());
        self.active = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `disjoint` agrees with a byte-by-byte check on random ranges of a few owners.
    #[test]
    fn disjoint_agrees_with_a_byte_map() {
        let mut r = 7u64;
        let mut both = [0, 0];
        for round in 0..20_000 {
            r = select::mix(r ^ round);
            let n = 1 + (r % 6) as usize;
            let mut spans = Vec::new();
            for i in 0..n {
                let h = select::mix(r ^ ((i as u64 + 1) * 0x9e37));
                let size = [1u64, 2, 4, 8][(h % 4) as usize];
                let start = (h >> 8) % 24 / size * size;
                spans.push((start, start + size, ((h >> 32) % 3) as u32));
            }
            let mut owner = [u32::MAX; 32];
            let mut want = true;
            for &(a, b, g) in &spans {
                for byte in a..b {
                    let o = &mut owner[byte as usize];
                    if *o != u32::MAX && *o != g {
                        want = false;
                    }
                    *o = g;
                }
            }
            assert_eq!(disjoint(&mut spans), want, "{spans:?}");
            both[want as usize] += 1;
        }
        assert!(both[0] > 1000 && both[1] > 1000, "{both:?}");
    }

    /// The Fenwick set answers `count` and `nth` as a scan of the overlays does, through
    /// every pattern of filling and emptying (sizes around powers of two included).
    #[test]
    fn live_overlays_agree_with_a_scan() {
        let e = Entry::new(Location::Global(0), 1, 4, 0, 1, 0);
        for n in [1usize, 2, 3, 7, 8, 9, 16, 31, 33, 100] {
            let mut ovs: Vec<Overlay> = vec![Overlay::default(); n];
            let mut live = LiveOverlays::of(&ovs);
            let mut r = 0x1234_5678_u64 ^ n as u64;
            for _ in 0..400 {
                r = select::mix(r);
                let c = (r % n as u64) as usize;
                if r >> 40 & 1 == 0 {
                    ovs[c].push_back(e);
                } else {
                    ovs[c].remove(0);
                }
                live.update(c, &ovs);
                let members: Vec<usize> = (0..n).filter(|&i| !ovs[i].is_empty()).collect();
                assert_eq!(live.count, members.len());
                for (k, m) in members.iter().enumerate() {
                    assert_eq!(live.nth(k), *m, "n={n} k={k}");
                }
            }
        }
    }

    /// The words filter never hides an overlap: for every aligned entry and aligned
    /// access of 1, 2, 4 or 8 bytes (global and shared, across block and word edges)
    /// whose bytes intersect, their filters share a bit.
    #[test]
    fn words_filter_keeps_every_overlap() {
        let bases = [0x7f00_0000_0100u64, (1 << 63) | (3 << 32) | 0x40];
        let mut checked = 0;
        for base in bases {
            for a in 0..32u64 {
                for sa in [1u32, 2, 4, 8] {
                    for b in 0..32u64 {
                        for sb in [1u32, 2, 4, 8] {
                            if a % sa as u64 != 0 || b % sb as u64 != 0 {
                                continue;
                            }
                            let overlap = a < b + sb as u64 && b < a + sa as u64;
                            if overlap {
                                let (x, y) =
                                    (words_filter(base + a, sa), words_filter(base + b, sb));
                                assert_ne!(x & y, 0, "{base:#x}: {a}+{sa} and {b}+{sb}");
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// A thread's queue ([`Fifo`]) holds what a `VecDeque` holds through random pushes,
    /// pops, removals anywhere, drains and clears — one entry in place, several on the
    /// heap, and back — and the scans read the same entries in the same order: the
    /// slices, indexing, `front`, `lookup` and `pick_head`.
    #[test]
    fn a_fifo_is_the_vecdeque_it_replaces() {
        let mut q = Fifo::default();
        let mut v: VecDeque<Entry> = VecDeque::new();
        let mut scratch = (HeadScratch::default(), HeadScratch::default());
        let (mut r, mut seq, mut many, mut one) = (select::mix(0x5eed), 0u64, 0, 0);
        let same = |q: &Fifo, v: &VecDeque<Entry>| {
            let key = |e: &Entry| (e.k, e.value, e.seq_size, e.thread);
            assert_eq!(q.len(), v.len());
            assert_eq!(q.is_empty(), v.is_empty());
            assert!(q.each().map(key).eq(v.iter().map(key)));
            assert_eq!(q.front().map(key), v.front().map(key));
            for i in 0..v.len() {
                assert_eq!(key(&q[i]), key(&v[i]));
            }
        };
        for step in 0..20_000 {
            r = select::mix(r);
            // Phases that keep the queue short (at most one entry) and that grow it.
            let long = step % 4000 >= 2000;
            match r % 8 {
                0..=2 if long || v.is_empty() => {
                    seq += 1;
                    let loc = Location::Global((r >> 8) % 6 * 4);
                    let e = Entry::new(loc, seq, 4, 0, seq, 0);
                    q.push_back(e);
                    v.push_back(e);
                }
                3 => assert_eq!(
                    q.pop_front().map(|e| e.seq()),
                    v.pop_front().map(|e| e.seq())
                ),
                4 if !v.is_empty() => {
                    let i = (r >> 16) as usize % (v.len() + 1);
                    assert_eq!(q.remove(i).map(|e| e.seq()), v.remove(i).map(|e| e.seq()));
                }
                5 if r >> 40 & 15 == 0 => {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    q.drain_into(&mut a);
                    b.extend(v.drain(..));
                    assert!(a.iter().map(|e| e.seq()).eq(b.iter().map(|e| e.seq())));
                }
                6 if r >> 40 & 31 == 0 => {
                    q.clear();
                    v.clear();
                    // Sometimes a new queue (a new launch's), which starts in place.
                    if r >> 50 & 1 == 0 {
                        q = Fifo::default();
                    }
                }
                _ => {
                    let loc = Location::Global((r >> 8) % 6 * 4);
                    assert_eq!(
                        StoreBuffers::lookup(&q, loc, 4),
                        StoreBuffers::lookup(&v, loc, 4)
                    );
                    assert_eq!(
                        pick_head(&q, r >> 3, &mut scratch.0),
                        pick_head(&v, r >> 3, &mut scratch.1)
                    );
                }
            }
            // In the short phases an emptied queue is often a new one (the next launch's).
            if !long && v.is_empty() && r >> 52 & 1 == 0 {
                q = Fifo::default();
            }
            many += matches!(q, Fifo::Many(_)) as u32;
            one += matches!(q, Fifo::One(_)) as u32;
            same(&q, &v);
        }
        // Both shapes were exercised.
        assert!(many > 1000 && one > 1000, "{many} {one}");
    }

    /// An overlay's kept heads pick and remove what `pick_head` and a removal pick and
    /// remove, and its block counts say what a scan says, through random takes mixed
    /// with other changes (pushes, removals elsewhere, which forget the heads), on
    /// overlays below and above the 16 entries where `head_positions` stops comparing
    /// pairs, with blocks that repeat and that do not.
    #[test]
    fn kept_heads_take_what_pick_head_picks() {
        let mut seen = KeySet::default();
        let mut seen2 = HeadScratch::default();
        let (mut takes, mut longest) = (0, 0);
        for (round, blocks) in [(0u64, 3u64), (1, 12), (2, 40), (3, 400)] {
            let mut ov = Overlay::default();
            let mut plain: VecDeque<Entry> = VecDeque::new();
            let mut r = select::mix(round ^ 0xbeef);
            let mut seq = 0;
            for step in 0..6000 {
                r = select::mix(r);
                // Phases that fill the overlay (to 600 entries) and phases that empty it.
                let pushes = if step % 1200 < 600 { 7 } else { 2 };
                match r % 10 {
                    x if x < pushes => {
                        seq += 1;
                        // Locations in a few 8-byte blocks, at different offsets.
                        let loc = (r >> 8) % blocks * 8 + (r >> 20) % 2 * 4;
                        let e = Entry::new(Location::Global(loc), seq, 4, 0, seq, 0);
                        ov.push_back(e);
                        plain.push_back(e);
                    }
                    x if x == pushes && !plain.is_empty() => {
                        let i = (r >> 8) as usize % plain.len();
                        ov.remove(i);
                        plain.remove(i);
                    }
                    _ => {
                        let i = pick_head(&plain, r >> 3, &mut seen2);
                        let want = plain.remove(i);
                        let got = ov.take_head(r >> 3, &mut seen);
                        assert_eq!(got.map(|e| e.seq()), want.map(|e| e.seq()), "round {round}");
                        takes += want.is_some() as u32;
                    }
                }
                assert_eq!(ov.len(), plain.len());
                longest = longest.max(plain.len());
                // The block counts answer as a scan does.
                let probe = pack(Location::Global(select::mix(r) % blocks * 8));
                let held = plain.iter().any(|e| e.k & !7 == probe);
                assert_eq!(ov.holds_block(probe), held, "round {round}");
            }
        }
        assert!(takes > 5000 && longest > 200, "{takes} {longest}");
    }
}
