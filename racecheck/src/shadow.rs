//! Shadow memory: for every byte of global and shared memory a launch touches, the last
//! write and the reads since it, each as a 16-byte [`Rec`] (thread, epoch, site, what the
//! access was, which locks it held).
//!
//! Layout: one [`Region`] per global allocation (found lazily from the device's allocation
//! table) and one per CTA's shared memory, each split into 256-byte pages that exist only
//! once touched. An access is aligned to its size (the vgpu faults otherwise), so it never
//! straddles a page.
//!
//! A page keeps one [`Cell`] per 4-byte *word* while the word's four bytes have the same
//! history, which is what word-sized accesses give them, and one cell per byte only for
//! the words a narrower access has split ([`Region::cells`]; a split word whose four byte
//! cells agree again is merged back, [`Region::merge`]). Every byte still has exactly the
//! history it would have with a cell of its own: a word cell stands for four equal byte
//! cells. (A cell per byte everywhere was 32 bytes of shadow per byte, four cells to
//! check per word access: on `algo_matmul_tiled` the race check ran at half the speed its
//! instruction count allows, waiting on shadow memory.) Concurrent reads of one byte that are
//! not ordered with each other (FastTrack's "read-shared" state) move into a side table,
//! [`ReadSets`], until the next write. Shadow state lives for one launch: a kernel
//! boundary orders everything before it, so the next launch starts from nothing.
//! (The pages themselves outlive it: a dropped region's pages go to a per-thread pool, reset
//! when the next region takes them, because a checker lives for one execution and fresh
//! memory for every execution was page faults.)

use crate::clock::Epoch;

pub const PAGE: usize = 256;

/// Meta bits of a [`Rec`].
pub mod meta {
    pub const KIND_MASK: u8 = 0b11;
    pub const LOAD: u8 = 0;
    pub const STORE: u8 = 1;
    pub const ATOMIC: u8 = 2;
    /// `Rec::epoch` is an index into [`super::ReadSets`].
    pub const READ_SET: u8 = 3;
    pub const SEM_SHIFT: u8 = 2; // 3 bits
    pub const SCOPE_SHIFT: u8 = 5; // 2 bits
    /// Morally strong for race purposes (see the model in `check.rs`).
    pub const STRONG: u8 = 0x80;
}

/// One access as shadow memory remembers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rec {
    /// Global thread index.
    pub g: u32,
    /// The thread's epoch at the access; [`Epoch::NONE`] = no access. In a
    /// [`meta::READ_SET`] record, the read set's index instead ([`Rec::read_set`]).
    pub epoch: Epoch,
    pub site: u32,
    /// The lock set (bits 0..16), [`meta`] (16..24) and [`flags`] (24..32) in one word
    /// ([`Rec::locks`], [`Rec::meta`], [`Rec::flags`]), so that a record is four 32-bit
    /// words wherever it moves. As three fields of 16, 8 and 8 bits, LLVM split a cell's
    /// copy into the write's flags and a 7-byte piece (site, locks, meta) that went
    /// through the stack as two overlapping 4-byte moves; rereading them missed
    /// store-to-load forwarding on every shadow update (a fifth of the race check's load
    /// path on a shared-memory bitonic sort).
    bits: u32,
}

/// [`Rec::flags`] bits.
pub mod flags {
    /// A strong write that completes a release pattern (a release operation, or a strong
    /// write after a release fence of its thread): it is synchronization, not data.
    pub const RELEASE: u8 = 1;
    /// An acquire read (`ld.acquire`, `atom.acquire`).
    pub const ACQUIRE: u8 = 2;
    /// An RMW that left the value as it was (a failed CAS, `atomicAdd(p, 0)`): for the
    /// `unordered` class it is a read, not a write.
    pub const NOWRITE: u8 = 4;
    /// An RMW that wrote nothing at all (a compare-and-swap whose comparison failed): a
    /// read for every class — PTX gives it no write to conflict with.
    pub const FAILED: u8 = 8;
    /// A write that overwrote earlier writes it is not ordered after: they are in the
    /// race check's hidden-write table (`RaceCheck::locs`), and accesses to the byte
    /// are checked against them too.
    pub const HIDES: u8 = 16;
    /// A strong write that completes a release pattern of scope ≥ `.gpu` (a `.gpu`/`.sys`
    /// release, or a strong write after such a release fence, or after a release
    /// operation on its location): synchronization for a reader in another CTA as well.
    /// [`RELEASE`] alone (a `__threadfence_block()` before the write) synchronizes only
    /// within the writer's CTA.
    pub const WIDE_RELEASE: u8 = 32;
}

impl Rec {
    #[inline]
    pub fn new(g: u32, epoch: Epoch, site: u32, locks: u16, meta: u8, flags: u8) -> Rec {
        Rec {
            g,
            epoch,
            site,
            bits: locks as u32 | (meta as u32) << 16 | (flags as u32) << 24,
        }
    }
    /// The lock set held at the access (an index into the checker's lock table).
    #[inline]
    pub fn locks(&self) -> u16 {
        self.bits as u16
    }
    /// [`meta`] bits: kind, semantics, scope, strength.
    #[inline]
    pub fn meta(&self) -> u8 {
        (self.bits >> 16) as u8
    }
    /// [`flags`] bits.
    #[inline]
    pub fn flags(&self) -> u8 {
        (self.bits >> 24) as u8
    }
    /// Sets the [`flags`] bits `f`.
    #[inline]
    pub fn add_flags(&mut self, f: u8) {
        self.bits |= (f as u32) << 24;
    }
    /// Clears the [`flags`] bits `f`.
    #[inline]
    pub fn clear_flags(&mut self, f: u8) {
        self.bits &= !((f as u32) << 24);
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.epoch.is_none()
    }

    /// A [`meta::READ_SET`] record: the reads are in read set `i` of [`ReadSets`]. The
    /// index is kept as `i + 1`, so that no reference reads as empty ([`Rec::is_empty`]:
    /// epoch 0): with `i` itself, set 0's reference was taken for "no read" where a cell's
    /// reads are tested for emptiness first (`record_read`), and the next read replaced
    /// the whole set.
    #[inline]
    pub fn read_set_ref(i: u32) -> Rec {
        Rec::new(0, Epoch::new(i + 1), 0, 0, meta::READ_SET, 0)
    }

    /// The read set index of a [`meta::READ_SET`] record.
    #[inline]
    pub fn read_set(&self) -> u32 {
        debug_assert_eq!(self.kind(), meta::READ_SET);
        self.epoch.get() - 1
    }
    #[inline]
    pub fn kind(&self) -> u8 {
        self.meta() & meta::KIND_MASK
    }
    #[inline]
    pub fn strong(&self) -> bool {
        self.meta() & meta::STRONG != 0
    }
    /// Scope at least `.gpu`.
    #[inline]
    pub fn wide(&self) -> bool {
        (self.meta() >> meta::SCOPE_SHIFT) & 0b11 >= 2
    }
}

/// Last write and the reads since, of one byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cell {
    pub w: Rec,
    pub r: Rec,
}

/// Words per page.
const WORDS: usize = PAGE / 4;

/// One page: a cell per word, and per byte for the words in `split`.
#[derive(Debug)]
struct Page {
    words: [Cell; WORDS],
    /// Bit `i`: word `i`'s bytes are `bytes[4i..4i+4]` (its word cell is stale).
    split: u64,
    bytes: Option<Box<[Cell; PAGE]>>,
}

// The pool holds the regions' own boxes (moved in and out, not copied: 2 KiB each).
#[allow(clippy::vec_box)]
type Pool = Vec<Box<Page>>;

thread_local! {
    /// Pages of dropped regions, for the next ones on this thread. A checker lives for one
    /// execution, and the pages it frees went back to the kernel (glibc trims the heap top),
    /// so every execution faulted its shadow in again: page faults were a fifth of the
    /// race-checked time of a small kernel (`perf`, `algo_transpose_dyn_shared`).
    static PAGE_POOL: std::cell::RefCell<Pool> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Pages the pool keeps at most (2 KiB each: 16 MiB per thread).
const POOL_PAGES: usize = 8192;

/// A page with no history: from the pool, reset, or newly allocated.
fn new_page() -> Box<Page> {
    let reused = PAGE_POOL
        .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
        .ok()
        .flatten();
    match reused {
        Some(mut page) => {
            page.words = [Cell::default(); WORDS];
            page.split = 0;
            page.bytes = None;
            page
        }
        None => Box::new(Page {
            words: [Cell::default(); WORDS],
            split: 0,
            bytes: None,
        }),
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        let pages = std::mem::take(&mut self.pages);
        let _ = PAGE_POOL.try_with(|p| {
            if let Ok(mut pool) = p.try_borrow_mut() {
                let room = POOL_PAGES.saturating_sub(pool.len());
                pool.extend(pages.into_iter().flatten().take(room));
            }
        });
    }
}

/// A lazily paged shadow of `len` bytes starting at `base`.
#[derive(Debug, Default)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    pages: Vec<Option<Box<Page>>>,
}

/// Bits `w0..w0+nw` of a word mask.
#[inline]
fn word_mask(w0: usize, nw: usize) -> u64 {
    let m = if nw >= 64 { u64::MAX } else { (1u64 << nw) - 1 };
    m << w0
}

impl Region {
    pub fn new(base: u64, len: u64) -> Region {
        Region {
            base,
            len,
            pages: Vec::new(),
        }
    }

    /// The cells of `[addr, addr+n)` (aligned to `n`, within one page): the word cells
    /// when the access covers whole words none of which is split, with `false`; else the
    /// byte cells (splitting the words first: each byte cell a copy of its word cell, a
    /// read set gaining the references), with `true` — call [`Region::merge`] after
    /// updating them.
    #[inline(always)]
    pub fn cells(
        &mut self,
        addr: u64,
        n: usize,
        read_sets: &mut ReadSets,
    ) -> Option<(&mut [Cell], bool)> {
        let off = addr.checked_sub(self.base)?;
        if off + n as u64 > self.len || n == 0 {
            return None;
        }
        let p = (off / PAGE as u64) as usize;
        let o = (off % PAGE as u64) as usize;
        if o + n > PAGE {
            return None;
        }
        if p >= self.pages.len() {
            self.pages.resize_with(p + 1, || None);
        }
        let page = self.pages[p].get_or_insert_with(new_page);
        let (w0, w1) = (o / 4, (o + n).div_ceil(4));
        let mask = word_mask(w0, w1 - w0);
        if o.is_multiple_of(4) && n.is_multiple_of(4) && page.split & mask == 0 {
            return Some((&mut page.words[w0..w1], false));
        }
        let bytes = page
            .bytes
            .get_or_insert_with(|| Box::new([Cell::default(); PAGE]));
        for w in w0..w1 {
            if page.split & (1 << w) == 0 {
                let c = page.words[w];
                bytes[4 * w..4 * w + 4].fill(c);
                if c.r.kind() == meta::READ_SET {
                    read_sets.add_refs(c.r.read_set(), 3);
                }
            }
        }
        page.split |= mask;
        Some((&mut bytes[o..o + n], true))
    }

    /// Merges each split word of `[addr, addr+n)` whose four byte cells agree back into
    /// its word cell.
    pub fn merge(&mut self, addr: u64, n: usize, read_sets: &mut ReadSets) {
        let Some(off) = addr.checked_sub(self.base) else {
            return;
        };
        let p = (off / PAGE as u64) as usize;
        let o = (off % PAGE as u64) as usize;
        let Some(Some(page)) = self.pages.get_mut(p) else {
            return;
        };
        let Some(bytes) = page.bytes.as_ref() else {
            return;
        };
        for w in o / 4..(o + n).div_ceil(4).min(WORDS) {
            if page.split & (1 << w) == 0 {
                continue;
            }
            let c = bytes[4 * w];
            if bytes[4 * w + 1..4 * w + 4].iter().all(|b| *b == c) {
                page.words[w] = c;
                page.split &= !(1 << w);
                if c.r.kind() == meta::READ_SET {
                    read_sets.release(c.r.read_set(), 3);
                }
            }
        }
    }

    pub fn touched_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.is_some()).count()
    }

    /// Bytes of shadow this region holds (pages, and byte cells of split pages).
    pub fn shadow_bytes(&self) -> usize {
        self.pages
            .iter()
            .flatten()
            .map(|p| {
                std::mem::size_of::<Page>()
                    + p.bytes
                        .as_ref()
                        .map_or(0, |_| PAGE * std::mem::size_of::<Cell>())
            })
            .sum()
    }
}

/// Read sets of bytes in the read-shared state.
///
/// A set is shared by every byte whose reads it holds: the bytes of one word read as a
/// word by the 16 threads of a tile row hold one set, not four equal ones (each byte with
/// its own set was three quarters of the race check's read-set work on
/// `algo_matmul_tiled`: four scans, four pushes, four allocations per access). `refs`
/// counts the cells that point at a set; a cell that changes alone gets its own copy
/// first ([`ReadSets::unshare`]), so every cell still sees exactly the reads of its byte.
///
/// **Storage.** A set's reads live in a block of one of the arena's chunks, of the
/// smallest size class that holds them ([`ROOMS`]: 5, 16, 64, … reads); a full set moves
/// to a block of the next class, and the block it leaves goes to its class's free list
/// for the next set. A set that outgrows the largest class ([`CHUNK`] reads) gets a
/// vector of its own. Why not a `Vec` per set:
/// every set then started with room for 16 reads (fewer cost reallocations that were
/// 5–8% of `algo_matmul_tiled`'s race check), so a word that five threads of a stencil
/// read held 256 bytes of reads, a 24-byte vector and a 16-byte allocation header —
/// 300 bytes, 67 MB of a 262,144-thread stencil's 175 MB under `exec --race` (issue 24:
/// per-thread state at 1 M threads). Here it holds 5 reads' room (80 bytes) and a 12-byte
/// header, and growing a set is a copy within memory the arena already has, not a call
/// to the allocator.
#[derive(Debug, Default)]
pub struct ReadSets {
    sets: Vec<SetHdr>,
    free: Vec<u32>,
    /// The arena: chunks of [`CHUNK`] records, each made with that room and filled as
    /// blocks are carved from it (a chunk zeroed in full at its making was 64 KiB of `memset` for a kernel with
    /// a handful of read sets, +7% race-check instructions on `algo_spinlock`.)
    chunks: Vec<Vec<Rec>>,
    /// Per size class, the starts of free blocks.
    free_blocks: Vec<Vec<u32>>,
    /// Sets beyond the largest class.
    big: Vec<Vec<Rec>>,
    free_big: Vec<u32>,
    /// The class most sets released so far ended in (per class, how many): new sets
    /// start there. Sets made again and again for the same kind of word (a tile element
    /// each phase of a tiled kernel, 16 reads) then start with the room they will need
    /// instead of growing into it each time (a move per set: +5% race-check instructions
    /// on `algo_matmul_tiled`, callgrind). The most common class, not the last one: with
    /// the last one, the few smaller sets of a tiled kernel sent the next ones back to
    /// growing (3,046 moves for 12,016 sets on `algo_matmul_tiled`), and one set many
    /// threads polled would make every later set that large.
    start_class: u8,
    released: [u32; ROOMS.len()],
}

/// Where a set's reads are: `len` records from `start` (a position in the arena), in a
/// block with room for `room` (one of [`ROOMS`]); or, with `room` 0, the set has a vector
/// of its own, `ReadSets::big[start]`, whose length is the set's (`len` stays 0).
///
/// 12 bytes: one per word that several threads read, so at 1 M threads it is per-thread
/// state (issue 24, ≤ 256 B beyond registers). The size class is not stored: it follows
/// from the room ([`SetHdr::class`]), and the paths that need it (growth, release) are
/// the rare ones; the room is what [`ReadSets::add`] tests on every read.
#[derive(Debug, Clone, Copy, Default)]
struct SetHdr {
    start: u32,
    refs: u32,
    len: u16,
    room: u16,
}
const _: () = assert!(std::mem::size_of::<SetHdr>() == 12);
const _: () = assert!(CHUNK <= u16::MAX as usize);

impl SetHdr {
    /// The set has a vector of its own (`ReadSets::big[start]`), not a block.
    #[inline(always)]
    fn is_big(&self) -> bool {
        self.room == 0
    }

    /// The size class (or [`BIG`]).
    fn class(&self) -> u8 {
        if self.is_big() {
            BIG
        } else {
            class_for(self.room as usize)
        }
    }
}

/// The room a [`SetHdr`] of class `c` records.
fn hdr_room(c: u8) -> u16 {
    if c == BIG {
        0
    } else {
        class_room(c) as u16
    }
}

/// Records per arena chunk (64 KiB), and the largest class's room.
pub const CHUNK: usize = 4096;
const CHUNK_SHIFT: u32 = 12;
const _: () = assert!(1 << CHUNK_SHIFT == CHUNK);

/// Size class of a set with its own vector.
const BIG: u8 = u8::MAX;

/// Room of each size class. A new set (two reads) starts with room for 5: a word that
/// the five threads of a 2-D stencil read fits, with no room to spare (room for 6 was 16
/// bytes more per word, so per thread, of a stencil at 1 M threads: issue 24's 256 B).
/// Then 16 (a tile element read by a row of 16 threads, with one move). Finer steps
/// after the first (8, 12, 16) cost `algo_matmul_tiled` three moves per tile element,
/// +20% race-check instructions (callgrind); a first class smaller than the stencil's
/// five (2, 3, 4) left blocks in the free lists while a stencil's sets grew together.
const ROOMS: [usize; 6] = [5, 16, 64, 256, 1024, CHUNK];

/// Room of size class `c` (not [`BIG`]).
#[inline(always)]
fn class_room(c: u8) -> usize {
    ROOMS[c as usize]
}

/// The smallest class with room for `n` reads, or [`BIG`].
fn class_for(n: usize) -> u8 {
    ROOMS.iter().position(|&r| r >= n).map_or(BIG, |c| c as u8)
}

/// The class after `c`, or [`BIG`].
fn next_class(c: u8) -> u8 {
    if c as usize + 1 < ROOMS.len() {
        c + 1
    } else {
        BIG
    }
}

impl ReadSets {
    /// A block of class `c` (not [`BIG`]): from its free list, else from the arena.
    fn block(&mut self, c: u8) -> u32 {
        if let Some(b) = self.free_blocks.get_mut(c as usize).and_then(|l| l.pop()) {
            return b;
        }
        let room = class_room(c);
        if self
            .chunks
            .last()
            .is_none_or(|last| last.len() + room > CHUNK)
        {
            // (The last chunk's tail, if any, stays unused.)
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let k = self.chunks.len() - 1;
        let chunk = &mut self.chunks[k];
        let start = (k << CHUNK_SHIFT) as u32 + chunk.len() as u32;
        chunk.resize(chunk.len() + room, Rec::default());
        start
    }

    /// Keeps `v` as a set with a vector of its own; returns its index in `big`.
    fn big_set(&mut self, v: Vec<Rec>) -> u32 {
        match self.free_big.pop() {
            Some(b) => {
                self.big[b as usize] = v;
                b
            }
            None => {
                self.big.push(v);
                (self.big.len() - 1) as u32
            }
        }
    }

    fn free_block(&mut self, c: u8, start: u32) {
        if self.free_blocks.len() <= c as usize {
            self.free_blocks.resize_with(c as usize + 1, Vec::new);
        }
        self.free_blocks[c as usize].push(start);
    }

    #[inline(always)]
    fn slot(&self, start: u32, len: u32) -> &[Rec] {
        let (k, o) = (
            (start >> CHUNK_SHIFT) as usize,
            (start as usize) & (CHUNK - 1),
        );
        &self.chunks[k][o..o + len as usize]
    }

    #[inline(always)]
    fn slot_mut(&mut self, start: u32, len: u32) -> &mut [Rec] {
        let (k, o) = (
            (start >> CHUNK_SHIFT) as usize,
            (start as usize) & (CHUNK - 1),
        );
        &mut self.chunks[k][o..o + len as usize]
    }

    /// A new set of `recs`, referenced by `refs` cells.
    pub fn alloc(&mut self, recs: &[Rec], refs: u32) -> u32 {
        let class = class_for(recs.len());
        let class = if class == BIG {
            BIG
        } else {
            class.max(self.start_class)
        };
        let start = if class == BIG {
            self.big_set(recs.to_vec())
        } else {
            let b = self.block(class);
            self.slot_mut(b, recs.len() as u32).copy_from_slice(recs);
            b
        };
        let hdr = SetHdr {
            start,
            refs,
            len: if class == BIG { 0 } else { recs.len() as u16 },
            room: hdr_room(class),
        };
        match self.free.pop() {
            Some(i) => {
                self.sets[i as usize] = hdr;
                i
            }
            None => {
                self.sets.push(hdr);
                (self.sets.len() - 1) as u32
            }
        }
    }

    /// The reads of set `i`, in the order they were added.
    #[inline]
    pub fn get(&self, i: u32) -> &[Rec] {
        match self.sets.get(i as usize) {
            Some(h) if h.is_big() => self.big.get(h.start as usize).map_or(&[], |v| v),
            Some(h) => self.slot(h.start, h.len as u32),
            None => &[],
        }
    }

    /// Adds read `cur` to set `i` as FastTrack's read update does: it replaces the
    /// newest read when that is by the same thread; else it is appended, and a set
    /// reaching 64, 128, … reads then drops the reads `ordered` (happens-before `cur`)
    /// says it implies, and takes `cur` again (amortized pruning).
    #[inline(always)]
    pub fn add(&mut self, i: u32, cur: Rec, ordered: &impl Fn(&Rec) -> bool) {
        let Some(h) = self.sets.get_mut(i as usize) else {
            return;
        };
        // (A set with its own vector has room 0.)
        if h.len > 0 && h.len < h.room {
            // In the block: `o + len` < CHUNK, so the masks change nothing and spare the
            // bounds checks.
            let chunk = &mut self.chunks[(h.start >> CHUNK_SHIFT) as usize];
            let end = (h.start as usize & (CHUNK - 1)) + h.len as usize;
            let last = &mut chunk[(end - 1) & (CHUNK - 1)];
            if last.g == cur.g {
                *last = cur;
                return;
            }
            chunk[end & (CHUNK - 1)] = cur;
            h.len += 1;
            let len = h.len;
            if len >= 64 && len.is_power_of_two() {
                self.prune(i, cur, ordered);
            }
            return;
        }
        self.add_slow(i, cur, ordered);
    }

    /// [`ReadSets::add`] to a full set, an empty one, or one with its own vector.
    #[cold]
    #[inline(never)]
    fn add_slow(&mut self, i: u32, cur: Rec, ordered: &impl Fn(&Rec) -> bool) {
        let newest = self.get(i).last().map(|r| r.g);
        if newest == Some(cur.g) {
            let h = self.sets[i as usize];
            if h.is_big() {
                if let Some(l) = self.big[h.start as usize].last_mut() {
                    *l = cur;
                }
            } else {
                self.slot_mut(h.start, h.len as u32)[h.len as usize - 1] = cur;
            }
            return;
        }
        let len = self.append(i, cur);
        if len >= 64 && len.is_power_of_two() {
            self.prune(i, cur, ordered);
        }
    }

    /// The pruning of [`ReadSets::add`]: keeps, in order, the reads `ordered` does not
    /// imply, then `cur` (by this thread, `ordered` dropped it).
    #[cold]
    #[inline(never)]
    fn prune(&mut self, i: u32, cur: Rec, ordered: &impl Fn(&Rec) -> bool) {
        let h = self.sets[i as usize];
        if h.is_big() {
            self.big[h.start as usize].retain(|r| !ordered(r));
        } else {
            let set = self.slot_mut(h.start, h.len as u32);
            // The kept prefix stays where it is; then the rest moves up.
            let mut k = set.iter().position(ordered).unwrap_or(set.len());
            for j in k + 1..set.len() {
                if !ordered(&set[j]) {
                    set[k] = set[j];
                    k += 1;
                }
            }
            self.sets[i as usize].len = k as u16;
        }
        self.append(i, cur);
    }

    /// Appends `r` to set `i` (moving it to a bigger block when full); returns its
    /// length.
    fn append(&mut self, i: u32, r: Rec) -> u32 {
        let mut h = self.sets[i as usize];
        if !h.is_big() && h.len == h.room {
            self.grow(i);
            h = self.sets[i as usize];
        }
        if h.is_big() {
            let set = &mut self.big[h.start as usize];
            set.push(r);
            return set.len() as u32;
        }
        self.slot_mut(h.start, h.len as u32 + 1)[h.len as usize] = r;
        self.sets[i as usize].len = h.len + 1;
        h.len as u32 + 1
    }

    /// Moves full set `i` to a block of the next class (or a vector of its own).
    fn grow(&mut self, i: u32) {
        let h = self.sets[i as usize];
        let class = h.class();
        let next = next_class(class);
        let start = if next == BIG {
            let v = self.slot(h.start, h.len as u32).to_vec();
            self.big_set(v)
        } else {
            let b = self.block(next);
            let (from_k, from_o) = (
                (h.start >> CHUNK_SHIFT) as usize,
                (h.start as usize) & (CHUNK - 1),
            );
            let (to_k, to_o) = ((b >> CHUNK_SHIFT) as usize, (b as usize) & (CHUNK - 1));
            let n = h.len as usize;
            if from_k == to_k {
                self.chunks[to_k].copy_within(from_o..from_o + n, to_o);
            } else {
                let (a, c) = if from_k < to_k {
                    let (lo, hi) = self.chunks.split_at_mut(to_k);
                    (&lo[from_k], &mut hi[0])
                } else {
                    let (lo, hi) = self.chunks.split_at_mut(from_k);
                    (&hi[0], &mut lo[to_k])
                };
                c[to_o..to_o + n].copy_from_slice(&a[from_o..from_o + n]);
            }
            b
        };
        self.free_block(class, h.start);
        let s = &mut self.sets[i as usize];
        s.start = start;
        s.room = hdr_room(next);
        if next == BIG {
            s.len = 0;
        }
    }

    /// `n` more cells point at set `i`.
    pub fn add_refs(&mut self, i: u32, n: u32) {
        if let Some(h) = self.sets.get_mut(i as usize) {
            h.refs += n;
        }
    }

    /// How many cells point at set `i`.
    pub fn refs(&self, i: u32) -> u32 {
        self.sets.get(i as usize).map_or(0, |h| h.refs)
    }

    /// The set that `n` cells pointing at set `i` may change without changing any other
    /// cell: `i` itself when they are all its references, else a copy of it that they
    /// now point at (and `i` loses their `n` references).
    #[inline(always)]
    pub fn unshare(&mut self, i: u32, n: u32) -> u32 {
        match self.sets.get(i as usize) {
            Some(h) if h.refs > n => self.copy_out(i, h.refs, n),
            _ => i,
        }
    }

    /// [`ReadSets::unshare`]'s copy: set `i` has `r` references, `n` of which move to a
    /// copy.
    #[cold]
    #[inline(never)]
    fn copy_out(&mut self, i: u32, r: u32, n: u32) -> u32 {
        self.sets[i as usize].refs = r - n;
        let src = self.get(i).to_vec();
        self.alloc(&src, n)
    }

    /// `n` cells stop pointing at set `i`; the last one frees it.
    #[inline]
    pub fn release(&mut self, i: u32, n: u32) {
        let Some(h) = self.sets.get_mut(i as usize) else {
            return;
        };
        h.refs = h.refs.saturating_sub(n);
        if h.refs == 0 {
            let h = *h;
            let class = h.class();
            if let Some(n) = self.released.get_mut(class as usize) {
                *n += 1;
                if *n > self.released[self.start_class as usize] {
                    self.start_class = class;
                }
            }
            if class == BIG {
                if let Some(v) = self.big.get_mut(h.start as usize) {
                    *v = Vec::new();
                }
                self.free_big.push(h.start);
            } else {
                self.free_block(class, h.start);
            }
            // Empty, and not a vector's (whose length `entries` would count).
            self.sets[i as usize] = SetHdr {
                room: hdr_room(0),
                ..SetHdr::default()
            };
            self.free.push(i);
        }
    }

    /// Forgets every set (the arena's chunks stay, for the next launch's sets).
    pub fn clear(&mut self) {
        self.sets.clear();
        self.free.clear();
        self.chunks.truncate(1);
        if let Some(c) = self.chunks.first_mut() {
            c.clear();
        }
        for l in &mut self.free_blocks {
            l.clear();
        }
        self.big.clear();
        self.free_big.clear();
        self.start_class = 0;
        self.released = [0; ROOMS.len()];
    }

    /// Reads held in all sets (each shared set counted once).
    pub fn entries(&self) -> usize {
        self.sets
            .iter()
            .map(|h| {
                if h.is_big() {
                    self.big.get(h.start as usize).map_or(0, Vec::len)
                } else {
                    h.len as usize
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(g: u32) -> Rec {
        Rec {
            g,
            epoch: Epoch::FIRST,
            ..Rec::default()
        }
    }

    /// The arena against a vector per set, over a random mix of what the race check
    /// does to read sets: new sets, reads added (by the newest reader again, or another;
    /// sets pruned at 64, 128, …), copies for cells that change alone, releases — with
    /// sets of every class, and ones that outgrow the largest.
    #[test]
    fn read_sets_in_the_arena_hold_what_a_vector_per_set_holds() {
        let mut sets = ReadSets::default();
        // (set index, references, the reads it must hold)
        let mut model: Vec<(u32, u32, Vec<Rec>)> = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        // "Ordered before the read": same thread, or a thread of the same residue mod 1024.
        let add_model = |v: &mut Vec<Rec>, cur: Rec| {
            let ordered = |r: &Rec| r.g % 1024 == cur.g % 1024;
            match v.last_mut() {
                Some(l) if l.g == cur.g => *l = cur,
                _ => {
                    v.push(cur);
                    if v.len() >= 64 && v.len().is_power_of_two() {
                        v.retain(|r| !ordered(r));
                        v.push(cur);
                    }
                }
            }
        };
        let mut big_seen = false;
        for step in 0..60_000u32 {
            let op = rnd(100);
            if model.is_empty() || op < 8 {
                let recs = [read(step), read(step + 1)];
                let refs = 1 + rnd(4) as u32;
                let i = sets.alloc(&recs, refs);
                assert!(model.iter().all(|m| m.0 != i), "a live set handed out");
                model.push((i, refs, recs.to_vec()));
            } else if op < 90 {
                let k = rnd(model.len() as u64) as usize;
                // One set (the first) grows past the largest class.
                let k = if step % 3 == 0 { 0 } else { k };
                let last = model[k].2.last().map(|r| r.g).unwrap_or(0);
                let g = if rnd(4) == 0 { last } else { step * 7 + 1 };
                let cur = Rec {
                    site: step,
                    ..read(g)
                };
                let n = model[k].1;
                let i = sets.unshare(model[k].0, n);
                assert_eq!(i, model[k].0, "all references change together");
                sets.add(i, cur, &|r: &Rec| r.g % 1024 == cur.g % 1024);
                add_model(&mut model[k].2, cur);
            } else if op < 95 {
                let k = rnd(model.len() as u64) as usize;
                let (i, refs, v) = model[k].clone();
                if refs > 1 {
                    let j = sets.unshare(i, 1);
                    assert_ne!(j, i);
                    model[k].1 -= 1;
                    model.push((j, 1, v));
                }
            } else if model.len() > 1 {
                // (Never the first set: it is the one that grows past the largest class.)
                let k = 1 + rnd(model.len() as u64 - 1) as usize;
                let (i, refs, _) = model.swap_remove(k);
                sets.release(i, refs);
            }
            big_seen |= model.first().is_some_and(|m| m.2.len() > CHUNK);
            if step % 97 == 0 || step > 59_900 {
                for (i, refs, v) in &model {
                    assert_eq!(sets.get(*i), v.as_slice(), "set {i} at step {step}");
                    assert_eq!(sets.refs(*i), *refs);
                }
            }
        }
        assert!(big_seen, "no set outgrew the arena's largest class");
        let live: usize = model.iter().map(|m| m.2.len()).sum();
        assert_eq!(sets.entries(), live);
        sets.clear();
        assert_eq!(sets.entries(), 0);
        let i = sets.alloc(&[read(1), read(2)], 1);
        assert_eq!(sets.get(i), &[read(1), read(2)]);
    }

    #[test]
    fn size_classes() {
        assert_eq!(class_for(2), 0);
        assert_eq!(class_for(5), 0);
        assert_eq!(class_for(6), 1);
        assert_eq!(class_room(next_class(0)), 16);
        assert_eq!(class_for(CHUNK), class_for(CHUNK - 1));
        assert_eq!(class_room(class_for(CHUNK)), CHUNK);
        assert_eq!(next_class(class_for(CHUNK)), BIG);
        assert_eq!(class_for(CHUNK + 1), BIG);
    }

    #[test]
    fn a_page_reused_from_a_dropped_region_has_no_history() {
        let mut sets = ReadSets::default();
        let mut r = Region::new(0x1000, 2 * PAGE as u64);
        // A word written, a byte of another split off and read, on both pages.
        for base in [0x1000u64, 0x1000 + PAGE as u64] {
            let (cells, _) = r.cells(base, 4, &mut sets).expect("in range");
            cells[0].w = read(3);
            let (cells, bytewise) = r.cells(base + 9, 1, &mut sets).expect("in range");
            assert!(bytewise);
            cells[0].r = read(4);
        }
        assert_eq!(r.touched_pages(), 2);
        drop(r);
        // The next region on this thread takes those pages from the pool: they must
        // look new (every cell empty, no word split, no byte cells).
        let mut r = Region::new(0x8000, 2 * PAGE as u64);
        for base in [0x8000u64, 0x8000 + PAGE as u64] {
            let (cells, bytewise) = r.cells(base, 4, &mut sets).expect("in range");
            assert!(!bytewise);
            assert_eq!(cells[0], Cell::default());
            let (cells, bytewise) = r.cells(base + 8, 4, &mut sets).expect("in range");
            assert!(!bytewise, "a reused page keeps no split words");
            assert_eq!(cells[0], Cell::default());
        }
        assert_eq!(
            r.shadow_bytes(),
            2 * std::mem::size_of::<Page>(),
            "no byte cells carried over"
        );
    }

    #[test]
    fn a_shared_read_set_is_copied_before_one_of_its_cells_changes_alone() {
        let mut sets = ReadSets::default();
        // Four byte cells of a word point at one set.
        let i = sets.alloc(&[read(0), read(1)], 4);
        assert_eq!(sets.unshare(i, 4), i, "all four change together: no copy");
        // Two of them change alone: they get a copy, the other two keep the original.
        let j = sets.unshare(i, 2);
        assert_ne!(j, i);
        assert_eq!((sets.refs(i), sets.refs(j)), (2, 2));
        sets.add(j, read(5), &|_: &Rec| false);
        assert_eq!(sets.get(i).len(), 2);
        assert_eq!(sets.get(j).len(), 3);
        // A write releases its cells' references; the last one frees the set.
        sets.release(i, 1);
        assert_eq!(sets.get(i).len(), 2);
        sets.release(i, 1);
        assert!(sets.get(i).is_empty());
        sets.add_refs(j, 3);
        sets.release(j, 3);
        assert_eq!(sets.refs(j), 2);
    }

    #[test]
    fn words_split_for_narrow_accesses_and_merge_when_their_bytes_agree() {
        let mut sets = ReadSets::default();
        let mut r = Region::new(0x1000, 1024);
        let (cells, bytewise) = r.cells(0x1004, 4, &mut sets).expect("in range");
        assert!(!bytewise);
        assert_eq!(cells.len(), 1);
        let shared = sets.alloc(&[read(1), read(2)], 1);
        cells[0].r = Rec::read_set_ref(shared);
        // A byte access splits the word: four byte cells, the set now referenced by each.
        let (cells, bytewise) = r.cells(0x1005, 1, &mut sets).expect("in range");
        assert!(bytewise);
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].r.read_set(), shared);
        assert_eq!(sets.refs(shared), 4);
        cells[0].w = read(9);
        r.merge(0x1005, 1, &mut sets);
        // Its bytes differ: it stays split, and a word access now sees the byte cells.
        let (cells, bytewise) = r.cells(0x1004, 4, &mut sets).expect("in range");
        assert!(bytewise);
        assert_eq!(cells.len(), 4);
        assert_eq!(cells[1].w, read(9));
        assert!(cells[0].w.is_empty());
        // Once the four agree again the word merges back into one cell.
        for c in cells.iter_mut() {
            c.w = read(3);
        }
        r.merge(0x1004, 4, &mut sets);
        assert_eq!(sets.refs(shared), 1);
        let (cells, bytewise) = r.cells(0x1004, 4, &mut sets).expect("in range");
        assert!(!bytewise);
        assert_eq!(cells[0].w, read(3));
        // An 8-byte access over one split word takes byte cells for both words.
        r.cells(0x1009, 1, &mut sets).expect("in range");
        let (cells, bytewise) = r.cells(0x1008, 8, &mut sets).expect("in range");
        assert!(bytewise);
        assert_eq!(cells.len(), 8);
        assert_eq!(r.shadow_bytes(), std::mem::size_of::<Page>() + PAGE * 32);
    }
}
