//! Shadow memory: for every byte of global and shared memory a launch touches, the last
//! write and the reads since it, each as a 16-byte [`Rec`] (thread, epoch, site, what the
//! access was, which locks it held).
//!
//! Layout: one [`Region`] per global allocation (found lazily from the device's allocation
//! table) and one per CTA's shared memory, each split into 256-byte pages of [`Cell`]s that
//! exist only once touched. An access is at most 8 bytes and aligned to its size (the vgpu
//! faults otherwise), so it never straddles a page. Concurrent reads of one byte that are
//! not ordered with each other (FastTrack's "read-shared" state) move into a side table,
//! [`ReadSets`], until the next write. Shadow state lives for one launch: a kernel
//! boundary orders everything before it, so the next launch starts from nothing.

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

/// A lazily paged shadow of `len` bytes starting at `base`.
#[derive(Debug, Default)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    pages: Vec<Option<Box<[Cell]>>>,
}

impl Region {
    pub fn new(base: u64, len: u64) -> Region {
        Region {
            base,
            len,
            pages: Vec::new(),
        }
    }

    /// The cells of `[addr, addr+n)`, which must lie in one page.
    #[inline]
    pub fn cells(&mut self, addr: u64, n: usize) -> Option<&mut [Cell]> {
        let off = addr.checked_sub(self.base)?;
        if off + n as u64 > self.len {
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
        let page = self.pages[p].get_or_insert_with(|| vec![Cell::default(); PAGE].into());
        Some(&mut page[o..o + n])
    }

    pub fn touched_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.is_some()).count()
    }
}

/// Read sets of bytes in the read-shared state, with a free list.
#[derive(Debug, Default)]
pub struct ReadSets {
    sets: Vec<Vec<Rec>>,
    free: Vec<u32>,
}

/// Room a new read set starts with; a full one grows fourfold. (A shared-memory tile
/// element read by the 16 threads of a row — each byte of it with its own set — grew
/// 2, 4, 8, 16 by doubling: three reallocations per byte were a fifth of the race check's
/// time on `algo_matmul_tiled`.)
const READ_SET_CAPACITY: usize = 4;

/// Adds read `r` to `set`, growing it fourfold when full.
#[inline]
pub fn push_read(set: &mut Vec<Rec>, r: Rec) {
    if set.len() == set.capacity() {
        set.reserve_exact(set.len().max(1) * 3);
    }
    set.push(r);
}

impl ReadSets {
    pub fn alloc(&mut self, recs: [Rec; 2]) -> u32 {
        if let Some(i) = self.free.pop() {
            self.sets[i as usize].extend_from_slice(&recs);
            i
        } else {
            let mut v = Vec::with_capacity(READ_SET_CAPACITY);
            v.extend_from_slice(&recs);
            self.sets.push(v);
            (self.sets.len() - 1) as u32
        }
    }

    pub fn get(&self, i: u32) -> &[Rec] {
        self.sets.get(i as usize).map_or(&[], |v| v.as_slice())
    }

    pub fn get_mut(&mut self, i: u32) -> Option<&mut Vec<Rec>> {
        self.sets.get_mut(i as usize)
    }

    pub fn release(&mut self, i: u32) {
        if let Some(v) = self.sets.get_mut(i as usize) {
            v.clear();
            self.free.push(i);
        }
    }

    pub fn clear(&mut self) {
        self.sets.clear();
        self.free.clear();
    }

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
        let i = sets.alloc([read(0), read(1)]);
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
        sets.release(i);
        assert_eq!(sets.entries(), 0);
        // A released set is handed out again, with its room.
        let j = sets.alloc([read(7), read(8)]);
        assert_eq!(j, i);
        assert_eq!(sets.get(j).len(), 2);
        assert!(sets.get_mut(j).expect("reused").capacity() >= 64);
    }
}
