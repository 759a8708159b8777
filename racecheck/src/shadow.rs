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
    pub locks: u16,
    pub meta: u8,
    /// [`flags`] bits.
    pub flags: u8,
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
    /// race check's hidden-write table (`RaceCheck::hidden`), and accesses to the byte
    /// are checked against them too.
    pub const HIDES: u8 = 16;
}

impl Rec {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.epoch.is_none()
    }

    /// A [`meta::READ_SET`] record: the reads are in read set `i` of [`ReadSets`].
    #[inline]
    pub fn read_set_ref(i: u32) -> Rec {
        Rec {
            epoch: Epoch::new(i),
            meta: meta::READ_SET,
            ..Rec::default()
        }
    }

    /// The read set index of a [`meta::READ_SET`] record.
    #[inline]
    pub fn read_set(&self) -> u32 {
        debug_assert_eq!(self.kind(), meta::READ_SET);
        self.epoch.get()
    }
    #[inline]
    pub fn kind(&self) -> u8 {
        self.meta & meta::KIND_MASK
    }
    #[inline]
    pub fn strong(&self) -> bool {
        self.meta & meta::STRONG != 0
    }
    /// Scope at least `.gpu`.
    #[inline]
    pub fn wide(&self) -> bool {
        (self.meta >> meta::SCOPE_SHIFT) & 0b11 >= 2
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

/// Read sets of bytes in the read-shared state, with a free list.
///
/// A set is shared by every byte whose reads it holds: the bytes of one word read as a
/// word by the 16 threads of a tile row hold one set, not four equal ones (each byte with
/// its own set was three quarters of the race check's read-set work on
/// `algo_matmul_tiled`: four scans, four pushes, four allocations per access). `refs`
/// counts the cells that point at a set; a cell that changes alone gets its own copy
/// first ([`ReadSets::unshare`]), so every cell still sees exactly the reads of its byte.
#[derive(Debug, Default)]
pub struct ReadSets {
    sets: Vec<Vec<Rec>>,
    refs: Vec<u32>,
    free: Vec<u32>,
}

/// Room a new read set starts with; a full one grows fourfold. (A shared-memory tile
/// element read by the 16 threads of a row grew 2, 4, 8, 16 by doubling: three
/// reallocations per set were a fifth of the race check's time on `algo_matmul_tiled`;
/// starting at 4, the one reallocation left, 4 to 16, was still 5–8% of it under `perf`,
/// copying from cold memory.)
const READ_SET_CAPACITY: usize = 16;

/// Adds read `r` to `set`, growing it fourfold when full.
#[inline(always)]
pub fn push_read(set: &mut Vec<Rec>, r: Rec) {
    if set.len() == set.capacity() {
        grow_read_set(set);
    }
    set.push(r);
}

#[cold]
#[inline(never)]
fn grow_read_set(set: &mut Vec<Rec>) {
    set.reserve_exact(set.len().max(1) * 3);
}

impl ReadSets {
    /// A new set of `recs`, referenced by `refs` cells.
    pub fn alloc(&mut self, recs: &[Rec], refs: u32) -> u32 {
        if let Some(i) = self.free.pop() {
            self.sets[i as usize].extend_from_slice(recs);
            self.refs[i as usize] = refs;
            i
        } else {
            let mut v = Vec::with_capacity(READ_SET_CAPACITY.max(recs.len()));
            v.extend_from_slice(recs);
            self.sets.push(v);
            self.refs.push(refs);
            (self.sets.len() - 1) as u32
        }
    }

    pub fn get(&self, i: u32) -> &[Rec] {
        self.sets.get(i as usize).map_or(&[], |v| v.as_slice())
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: u32) -> Option<&mut Vec<Rec>> {
        self.sets.get_mut(i as usize)
    }

    /// `n` more cells point at set `i`.
    pub fn add_refs(&mut self, i: u32, n: u32) {
        if let Some(r) = self.refs.get_mut(i as usize) {
            *r += n;
        }
    }

    /// How many cells point at set `i`.
    pub fn refs(&self, i: u32) -> u32 {
        self.refs.get(i as usize).copied().unwrap_or(0)
    }

    /// The set that `n` cells pointing at set `i` may change without changing any other
    /// cell: `i` itself when they are all its references, else a copy of it that they
    /// now point at (and `i` loses their `n` references).
    #[inline(always)]
    pub fn unshare(&mut self, i: u32, n: u32) -> u32 {
        match self.refs.get(i as usize) {
            Some(&r) if r > n => self.copy_out(i, r, n),
            _ => i,
        }
    }

    /// [`ReadSets::unshare`]'s copy: set `i` has `r` references, `n` of which move to a
    /// copy.
    #[cold]
    #[inline(never)]
    fn copy_out(&mut self, i: u32, r: u32, n: u32) -> u32 {
        self.refs[i as usize] = r - n;
        let src = std::mem::take(&mut self.sets[i as usize]);
        let j = self.alloc(&src, n);
        self.sets[i as usize] = src;
        j
    }

    /// `n` cells stop pointing at set `i`; the last one frees it.
    pub fn release(&mut self, i: u32, n: u32) {
        let Some(r) = self.refs.get_mut(i as usize) else {
            return;
        };
        *r = r.saturating_sub(n);
        if *r == 0 {
            self.sets[i as usize].clear();
            self.free.push(i);
        }
    }

    pub fn clear(&mut self) {
        self.sets.clear();
        self.refs.clear();
        self.free.clear();
    }

    /// Reads held in all sets (each shared set counted once).
    pub fn entries(&self) -> usize {
        self.sets.iter().map(|s| s.len()).sum()
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

    #[test]
    fn read_sets_grow_fourfold_keep_their_reads_and_are_reused() {
        let mut sets = ReadSets::default();
        let i = sets.alloc(&[read(0), read(1)], 1);
        for g in 2..20 {
            let set = sets.get_mut(i).expect("allocated");
            let before = set.capacity();
            push_read(set, read(g));
            // Reallocated only when full, and then to four times the size.
            if before == g as usize {
                assert_eq!(set.capacity(), 4 * before);
            } else {
                assert_eq!(set.capacity(), before);
            }
        }
        let gs: Vec<u32> = sets.get(i).iter().map(|r| r.g).collect();
        assert_eq!(gs, (0..20).collect::<Vec<_>>());
        assert_eq!(sets.get(i).len(), 20);
        sets.release(i, 1);
        assert_eq!(sets.entries(), 0);
        // A released set is handed out again, with its room.
        let j = sets.alloc(&[read(7), read(8)], 1);
        assert_eq!(j, i);
        assert_eq!(sets.get(j).len(), 2);
        assert!(sets.get_mut(j).expect("reused").capacity() >= 64);
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
        push_read(sets.get_mut(j).expect("copy"), read(5));
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
