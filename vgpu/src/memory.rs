//! Device memory: global allocations (host `alloc` and module `.global` variables),
//! `.const` banks, per-CTA shared memory, and the generic address map.
//!
//! Generic addresses (PTX ISA §6.4.1) are laid out in fixed windows so that `cvta` and
//! `isspacep` are arithmetic: global memory is identity-mapped below [`SHARED_WINDOW`];
//! shared, local, const and kernel-parameter spaces each get a 4 GiB window above it.
//! Global allocations start at [`GLOBAL_BASE`], are 256-byte aligned (as `cudaMalloc`'s are)
//! and separated by an unmapped gap, so small overruns fault instead of landing in the
//! neighbouring buffer.

use crate::error::{FaultKind, MemError};

pub const GLOBAL_BASE: u64 = 0x0000_7f00_0000_0000;
pub const SHARED_WINDOW: u64 = 0x0001_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x0002_0000_0000_0000;
pub const CONST_WINDOW: u64 = 0x0003_0000_0000_0000;
pub const PARAM_WINDOW: u64 = 0x0004_0000_0000_0000;
pub const WINDOW_SIZE: u64 = 1 << 32;
/// Unmapped bytes between global allocations.
const GUARD_GAP: u64 = 256;
/// Largest single allocation we accept (keeps a typo from exhausting host memory).
pub const MAX_ALLOCATION: u64 = 4 << 30;

/// Which space a generic address falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Global,
    Shared,
    Local,
    Const,
    Param,
}

pub fn window_of(addr: u64) -> Option<(Window, u64)> {
    if addr < SHARED_WINDOW {
        return Some((Window::Global, addr));
    }
    let w = match addr & !(WINDOW_SIZE - 1) {
        SHARED_WINDOW => Window::Shared,
        LOCAL_WINDOW => Window::Local,
        CONST_WINDOW => Window::Const,
        PARAM_WINDOW => Window::Param,
        _ => return None,
    };
    Some((w, addr & (WINDOW_SIZE - 1)))
}

#[derive(Debug, Clone)]
pub struct Allocation {
    pub base: u64,
    pub data: Vec<u8>,
    pub name: String,
}

impl Allocation {
    /// `[base, end)`.
    pub fn range(&self) -> (u64, u64) {
        (self.base, self.base + self.data.len() as u64)
    }
}

/// A set of non-overlapping allocations sorted by base address.
#[derive(Debug, Clone, Default)]
pub struct Heap {
    allocs: Vec<Allocation>,
    next: u64,
    space: &'static str,
    /// Index of the allocation [`Heap::find`] found last, tried first: a program's
    /// accesses mostly stay in one array for a while, and a CUB program's global heap
    /// holds every module's variables too (the binary search was a quarter of a
    /// look-back spin's time under `scoped`). Any index is correct to start from: it is
    /// checked before it is used.
    last: LastHit,
    /// Freed allocations (base -> length, name), for naming a use after free: the most
    /// recent [`FREED_KEPT`] by base address.
    freed: std::collections::BTreeMap<u64, (u64, String)>,
}

/// How many freed allocations a heap remembers for fault messages.
const FREED_KEPT: usize = 1 << 16;

/// [`Heap::last`]: an index written and read with relaxed atomics (plain moves; a heap
/// is shared read-only between a campaign's worker threads).
#[derive(Debug, Default)]
struct LastHit(std::sync::atomic::AtomicUsize);

impl LastHit {
    #[inline]
    fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[inline]
    fn set(&self, i: usize) {
        self.0.store(i, std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for LastHit {
    fn clone(&self) -> Self {
        LastHit(std::sync::atomic::AtomicUsize::new(self.get()))
    }
}

impl Heap {
    pub fn new(base: u64, space: &'static str) -> Heap {
        Heap {
            allocs: Vec::new(),
            next: base,
            space,
            last: LastHit::default(),
            freed: Default::default(),
        }
    }

    pub fn alloc(&mut self, len: u64, align: u64, name: String) -> Option<u64> {
        if len > MAX_ALLOCATION {
            return None;
        }
        let align = align.clamp(1, 1 << 12).max(256);
        let base = self.next.div_ceil(align) * align;
        let end = base.checked_add(len.max(1))?;
        self.next = end + GUARD_GAP;
        self.allocs.push(Allocation {
            base,
            data: vec![0; len as usize],
            name,
        });
        Some(base)
    }

    /// The allocation that holds byte `addr`, if any.
    pub fn holding(&self, addr: u64) -> Option<&Allocation> {
        self.index_hinted(addr, 1, &mut 0).map(|i| &self.allocs[i])
    }

    /// The allocation containing `[addr, addr+len)`, or the error naming the nearest one.
    #[inline]
    fn find(&self, addr: u64, len: u32) -> Result<usize, MemError> {
        let mut hint = self.last.get();
        match self.index_hinted(addr, len, &mut hint) {
            Some(i) => {
                self.last.set(i);
                Ok(i)
            }
            None => Err(self.fault(FaultKind::OutOfBounds, addr, len)),
        }
    }

    /// Index of the allocation holding `[addr, addr+len)`: `*hint` if it does, else
    /// found by binary search (and stored in `*hint`). Any hint gives the same answer:
    /// allocations do not overlap.
    #[inline(always)]
    fn index_hinted(&self, addr: u64, len: u32, hint: &mut usize) -> Option<usize> {
        let holds = |a: &Allocation| {
            addr >= a.base && (addr - a.base).checked_add(len as u64) <= Some(a.data.len() as u64)
        };
        if self.allocs.get(*hint).is_some_and(holds) {
            return Some(*hint);
        }
        let i = self
            .allocs
            .partition_point(|x| x.base <= addr)
            .checked_sub(1)?;
        if holds(&self.allocs[i]) {
            *hint = i;
            Some(i)
        } else {
            None
        }
    }

    pub fn fault(&self, kind: FaultKind, addr: u64, len: u32) -> MemError {
        if let Some((base, (n, name))) = self.freed.range(..=addr).next_back() {
            if addr < base + n {
                return MemError {
                    kind,
                    space: self.space,
                    addr,
                    size: len,
                    nearest: Some((format!("freed {name}"), *base, *n)),
                };
            }
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let mut best: Option<&Allocation> = None;
        let dist = |a: &Allocation| {
            if addr < a.base {
                a.base - addr
            } else {
                addr.saturating_sub(a.base + a.data.len() as u64)
            }
        };
        for j in [i.wrapping_sub(1), i] {
            if let Some(a) = self.allocs.get(j) {
                if best.is_none_or(|b| dist(a) < dist(b)) {
                    best = Some(a);
                }
            }
        }
        MemError {
            kind,
            space: self.space,
            addr,
            size: len,
            nearest: best.map(|a| (a.name.clone(), a.base, a.data.len() as u64)),
        }
    }

    #[inline]
    pub fn slice(&self, addr: u64, len: u32) -> Result<&[u8], MemError> {
        let i = self.find(addr, len)?;
        let a = &self.allocs[i];
        let off = (addr - a.base) as usize;
        Ok(&a.data[off..off + len as usize])
    }

    #[inline]
    pub fn slice_mut(&mut self, addr: u64, len: u32) -> Result<&mut [u8], MemError> {
        let i = self.find(addr, len)?;
        let a = &mut self.allocs[i];
        let off = (addr - a.base) as usize;
        Ok(&mut a.data[off..off + len as usize])
    }

    /// Removes the allocation starting at `base`; later accesses to it fault. Its
    /// addresses are not reused (a dangling pointer must not reach a new allocation).
    pub fn free(&mut self, base: u64) -> bool {
        match self.allocs.binary_search_by_key(&base, |a| a.base) {
            Ok(i) => {
                let a = self.allocs.remove(i);
                if self.freed.len() >= FREED_KEPT {
                    self.freed.pop_first();
                }
                self.freed.insert(a.base, (a.data.len() as u64, a.name));
                true
            }
            Err(_) => false,
        }
    }

    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }

    pub fn bytes_allocated(&self) -> u64 {
        self.allocs.iter().map(|a| a.data.len() as u64).sum()
    }
}

/// All memory a launch can touch except registers and local memory.
#[derive(Debug, Clone)]
pub struct Memory {
    pub global: Heap,
    pub constant: Heap,
    /// One shared memory per CTA of the running launch.
    pub shared: Vec<Vec<u8>>,
    /// The 8-byte blocks written since the log was last taken ([`Memory::take_written`]),
    /// while the interpreter's spin parking asks for them ([`Memory::log_writes`]): a
    /// parked warp wakes when a block it reads is written, not at every write.
    written: Option<Vec<u64>>,
    /// The global byte ranges the running launch may write, sorted, while
    /// loads of other memory skip their scheduling decision (`crate::unwritten`); a write
    /// outside them widens them and counts an escape.
    guard: Option<WriteGuard>,
    /// Device-side `malloc`: the bytes it may hand out at once (CUDA's
    /// `cudaLimitMallocHeapSize`, 8 MiB unless the program sets it) and the bytes live.
    pub device_heap_limit: u64,
    pub device_heap_used: u64,
    /// The live texture objects (`crate::texture`).
    pub textures: crate::texture::Textures,
}

/// The name of the allocations device-side `malloc` makes (`free` frees only those).
pub const DEVICE_MALLOC: &str = "device malloc";

#[derive(Debug, Clone, Default)]
struct WriteGuard {
    ranges: Vec<(u64, u64)>,
    escapes: u64,
    /// Per CTA: whether its shared memory was written since the interpreter last said
    /// its interval began ([`Memory::shared_interval_begins`]).
    shared_written: Vec<bool>,
}

impl WriteGuard {
    /// Whether `[a, a + len)` meets none of the ranges.
    #[inline(always)]
    fn clear_of(&self, a: u64, len: u64) -> bool {
        let end = a.saturating_add(len);
        self.ranges.iter().all(|&(s, e)| end <= s || a >= e)
    }
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            global: Heap::new(GLOBAL_BASE, "global"),
            constant: Heap::new(CONST_WINDOW, "const"),
            shared: Vec::new(),
            written: None,
            guard: None,
            device_heap_limit: 8 << 20,
            device_heap_used: 0,
            textures: Default::default(),
        }
    }
}

/// A location as one word: a global address as is (valid global addresses are far below
/// 2^63), a shared offset as `2^63 | cta << 32 | offset`. Locations of different spaces
/// (or different CTAs' shared memory) are at least 2^32 apart.
#[inline]
pub fn location_key(loc: Location) -> u64 {
    match loc {
        Location::Global(a) => a,
        Location::Shared { cta, offset } => (1 << 63) | ((cta as u64) << 32) | offset as u64,
    }
}

/// The 8-byte block holding `loc`: its [`location_key`] with the low three bits cleared.
/// The write-buffer models' block key, and spin parking's for what a warp reads and what
/// changed.
#[inline]
pub fn block_key(loc: Location) -> u64 {
    location_key(loc) & !7
}

/// The [`block_key`]s of the 8-byte blocks that `len` bytes at `loc` touch, ascending.
#[inline]
pub fn blocks_of(loc: Location, len: u32) -> impl Iterator<Item = u64> {
    let first = block_key(loc);
    let last = block_key(loc.offset(len.max(1) as u64 - 1));
    (first..=last.max(first)).step_by(8)
}

/// A global or shared location, as hooks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// A global address.
    Global(u64),
    /// An offset in the shared memory of CTA `cta` (linear CTA index).
    Shared { cta: u32, offset: u32 },
}

impl Location {
    /// The address, for messages and keys (`offset` for shared).
    pub fn addr(self) -> u64 {
        match self {
            Location::Global(a) => a,
            Location::Shared { offset, .. } => offset as u64,
        }
    }
    pub fn offset(self, by: u64) -> Location {
        match self {
            Location::Global(a) => Location::Global(a.wrapping_add(by)),
            Location::Shared { cta, offset } => Location::Shared {
                cta,
                offset: offset.wrapping_add(by as u32),
            },
        }
    }
    pub fn is_shared(self) -> bool {
        matches!(self, Location::Shared { .. })
    }
}

impl Memory {
    /// Device-side `malloc(len)`: a fresh zeroed global allocation (16-byte aligned, as
    /// CUDA's), or 0 when the device heap's limit would be passed. Addresses are never
    /// reused ([`Heap::free`]), so no shadow state or buffered store of a freed object
    /// meets a new one.
    pub fn device_malloc(&mut self, len: u64) -> u64 {
        let Some(used) = self
            .device_heap_used
            .checked_add(len)
            .filter(|&u| u <= self.device_heap_limit)
        else {
            return 0;
        };
        match self.global.alloc(len, 16, DEVICE_MALLOC.to_string()) {
            Some(a) => {
                self.device_heap_used = used;
                a
            }
            None => 0,
        }
    }

    /// Device-side `free(p)`: false when `p` is neither 0 nor the start of a live
    /// allocation device-side `malloc` made.
    pub fn device_free(&mut self, p: u64) -> bool {
        if p == 0 {
            return true;
        }
        let len = match self
            .global
            .allocations()
            .binary_search_by_key(&p, |a| a.base)
        {
            Ok(i) if self.global.allocations()[i].name == DEVICE_MALLOC => {
                self.global.allocations()[i].data.len() as u64
            }
            _ => return false,
        };
        self.device_heap_used = self.device_heap_used.saturating_sub(len);
        self.global.free(p)
    }

    /// Starts (`true`) or stops logging the blocks that writes touch (see
    /// [`Memory::take_written`]); starting forgets anything logged before.
    pub fn log_writes(&mut self, on: bool) {
        self.written = on.then(Vec::new);
    }

    /// Moves the blocks written since the last call (in write order, repeats kept) to
    /// the end of `out`; false when writes are not being logged.
    pub fn take_written(&mut self, out: &mut Vec<u64>) -> bool {
        match &mut self.written {
            Some(w) => {
                out.append(w);
                true
            }
            None => false,
        }
    }

    /// Logs the blocks of a write of `len` bytes at `loc`, when logging, and holds it to
    /// the write guard.
    #[inline(always)]
    fn note_write(&mut self, loc: Location, len: u32) {
        if let Some(w) = &mut self.written {
            w.extend(blocks_of(loc, len));
        }
        self.guard_write(loc, len);
    }

    /// Holds a write of `len` bytes at `loc` to the write guard, if one is set: the
    /// interpreter calls it before handing a store or atomic to hooks that are not
    /// transparent, which may keep the store in a buffer and write memory only later,
    /// while a load that reads memory directly (`Hooks::unwritten_loads`) must already
    /// count the bytes as written.
    #[inline(always)]
    pub(crate) fn guard_write(&mut self, loc: Location, len: u32) {
        let Some(g) = &mut self.guard else {
            return;
        };
        match loc {
            Location::Shared { cta, .. } => {
                if let Some(w) = g.shared_written.get_mut(cta as usize) {
                    *w = true;
                }
            }
            Location::Global(a) => {
                if !g
                    .ranges
                    .iter()
                    .any(|&(s, e)| a >= s && a.saturating_add(len as u64) <= e)
                {
                    Self::escape(g, &self.global, a, len as u64);
                }
            }
        }
    }

    /// A write outside the launch's bound: the bound takes the allocation it lands in.
    /// A write that no allocation holds whole faults instead of landing (it is held to
    /// the guard before the bounds check): no escape.
    #[cold]
    fn escape(g: &mut WriteGuard, heap: &Heap, a: u64, len: u64) {
        let Some(r) = heap.holding(a).map(|x| x.range()) else {
            return;
        };
        if a.saturating_add(len) > r.1 {
            return;
        }
        g.escapes += 1;
        g.ranges.push(r);
        g.ranges.sort_unstable();
    }

    /// Starts holding global writes to `ranges` (see [`Memory::unwritten`]), or stops
    /// (`None`); returns the escapes counted since the guard was set.
    pub(crate) fn set_write_guard(&mut self, ranges: Option<Vec<(u64, u64)>>) -> u64 {
        let ctas = self.shared.len();
        let old = std::mem::replace(
            &mut self.guard,
            ranges.map(|ranges| WriteGuard {
                ranges,
                escapes: 0,
                shared_written: vec![true; ctas],
            }),
        );
        old.map_or(0, |g| g.escapes)
    }

    /// A barrier of every thread of CTA `cta` released: what its threads wrote to shared
    /// memory before it is ordered before what they do after it.
    #[inline]
    pub(crate) fn shared_interval_begins(&mut self, cta: u32) {
        if let Some(w) = self
            .guard
            .as_mut()
            .and_then(|g| g.shared_written.get_mut(cta as usize))
        {
            *w = false;
        }
    }

    /// Whether CTA `cta`'s shared memory may have been written since its current interval
    /// began (always, without a guard, and before the CTA's first barrier: the launch's
    /// first interval has no barrier before it to order a write).
    #[inline]
    pub(crate) fn shared_written(&self, cta: u32) -> bool {
        self.guard
            .as_ref()
            .and_then(|g| g.shared_written.get(cta as usize))
            .is_none_or(|&w| w)
    }

    /// Whether a guard is set and the `len` global bytes at `a` are outside what the
    /// launch may write.
    #[inline(always)]
    pub(crate) fn unwritten(&self, a: u64, len: u64) -> bool {
        self.guard.as_ref().is_some_and(|g| g.clear_of(a, len))
    }

    /// Whether a write guard is set.
    #[inline(always)]
    pub(crate) fn guarded(&self) -> bool {
        self.guard.is_some()
    }

    fn shared_err(&self, cta: u32, offset: u32, len: u32) -> MemError {
        let size = self.shared.get(cta as usize).map_or(0, |s| s.len() as u64);
        MemError {
            kind: FaultKind::OutOfBounds,
            space: "shared",
            addr: offset as u64,
            size: len,
            nearest: Some(("shared memory of the CTA".into(), 0, size)),
        }
    }

    /// Reads `buf.len()` bytes at `loc`.
    #[inline]
    pub fn read(&self, loc: Location, buf: &mut [u8]) -> Result<(), MemError> {
        let len = buf.len() as u32;
        match loc {
            Location::Global(a) => copy_small(buf, self.global.slice(a, len)?),
            Location::Shared { cta, offset } => {
                let s = self
                    .shared
                    .get(cta as usize)
                    .and_then(|s| s.get(offset as usize..offset as usize + len as usize))
                    .ok_or_else(|| self.shared_err(cta, offset, len))?;
                copy_small(buf, s);
            }
        }
        Ok(())
    }

    #[inline]
    pub fn write(&mut self, loc: Location, data: &[u8]) -> Result<(), MemError> {
        let len = data.len() as u32;
        self.note_write(loc, len);
        match loc {
            Location::Global(a) => copy_small(self.global.slice_mut(a, len)?, data),
            Location::Shared { cta, offset } => {
                // The error (with its allocated name) only when there is one: this is on
                // every shared store's path.
                match self
                    .shared
                    .get_mut(cta as usize)
                    .and_then(|s| s.get_mut(offset as usize..offset as usize + len as usize))
                {
                    Some(s) => copy_small(s, data),
                    None => return Err(self.shared_err(cta, offset, len)),
                }
            }
        }
        Ok(())
    }

    /// The `size` bytes (1, 2, 4 or 8) at `loc` as a little-endian value; `None` when they
    /// are not all in one allocation (the caller's slow path reports the fault). The
    /// interpreter's path for transparent hooks: no slice copy of variable length.
    #[inline]
    pub fn load_fast(&self, loc: Location, size: u32) -> Option<u64> {
        self.load_hinted(loc, size, &mut 0)
    }

    /// [`Memory::load_fast`], trying first the global allocation at index `*hint` (and
    /// leaving there the index of the one that held the bytes): the lanes of one warp
    /// instruction mostly hit the same array, and then no search is needed. Same result
    /// as without the hint: allocations do not overlap, so an allocation that holds all
    /// the bytes is the one the search would find.
    #[inline(always)]
    pub fn load_hinted(&self, loc: Location, size: u32, hint: &mut usize) -> Option<u64> {
        let b = self.bytes(loc, size, hint)?;
        Some(match size {
            1 => b[0] as u64,
            2 => u16::from_le_bytes(*b.first_chunk::<2>()?) as u64,
            4 => u32::from_le_bytes(*b.first_chunk::<4>()?) as u64,
            8 => u64::from_le_bytes(*b.first_chunk::<8>()?),
            _ => return None,
        })
    }

    /// Writes the low `size` bytes (1, 2, 4 or 8) of `v` at `loc`; `None` (and nothing
    /// written) when they are not all in one allocation.
    #[inline]
    pub fn store_fast(&mut self, loc: Location, size: u32, v: u64) -> Option<()> {
        self.store_hinted(loc, size, v, &mut 0)
    }

    /// [`Memory::store_fast`] with an allocation hint, as [`Memory::load_hinted`].
    #[inline(always)]
    pub fn store_hinted(
        &mut self,
        loc: Location,
        size: u32,
        v: u64,
        hint: &mut usize,
    ) -> Option<()> {
        let b = self.bytes_mut(loc, size, hint)?;
        match size {
            1 => b[0] = v as u8,
            2 => *b.first_chunk_mut::<2>()? = (v as u16).to_le_bytes(),
            4 => *b.first_chunk_mut::<4>()? = (v as u32).to_le_bytes(),
            8 => *b.first_chunk_mut::<8>()? = v.to_le_bytes(),
            _ => return None,
        }
        // Noted once written: a caller whose store this cannot finish takes a path that
        // notes it (`Memory::write`), which noted it a second time before.
        self.note_write(loc, size);
        Some(())
    }

    /// The base and bytes of the global allocation that holds `[lo, hi)`; `None` when no
    /// one allocation holds it all.
    #[inline(always)]
    pub(crate) fn global_span(&self, lo: u64, hi: u64) -> Option<(u64, &[u8])> {
        let len = u32::try_from(hi.checked_sub(lo)?).ok()?;
        let a = &self.global.allocs[self.global.index_hinted(lo, len, &mut 0)?];
        Some((a.base, &a.data))
    }

    /// Index of the global allocation holding `[a, a+size)`: `*hint` if it does, else
    /// found by binary search (and stored in `*hint`).
    #[inline(always)]
    fn global_index(&self, a: u64, size: u32, hint: &mut usize) -> Option<usize> {
        self.global.index_hinted(a, size, hint)
    }

    #[inline(always)]
    fn bytes(&self, loc: Location, size: u32, hint: &mut usize) -> Option<&[u8]> {
        match loc {
            Location::Global(a) => {
                let al = &self.global.allocs[self.global_index(a, size, hint)?];
                let off = (a - al.base) as usize;
                al.data.get(off..off + size as usize)
            }
            Location::Shared { cta, offset } => self
                .shared
                .get(cta as usize)?
                .get(offset as usize..offset as usize + size as usize),
        }
    }

    #[inline(always)]
    fn bytes_mut(&mut self, loc: Location, size: u32, hint: &mut usize) -> Option<&mut [u8]> {
        match loc {
            Location::Global(a) => {
                let i = self.global_index(a, size, hint)?;
                let al = &mut self.global.allocs[i];
                let off = (a - al.base) as usize;
                al.data.get_mut(off..off + size as usize)
            }
            Location::Shared { cta, offset } => self
                .shared
                .get_mut(cta as usize)?
                .get_mut(offset as usize..offset as usize + size as usize),
        }
    }

    /// [`Memory::read_u64`] through [`Memory::load_hinted`]: the same value, or the same
    /// error (a lane whose bytes are not all in one allocation takes `read_u64`'s path).
    /// [`NoHooks`](crate::NoHooks)' warp loads, which the race check wraps under `sc`.
    #[inline(always)]
    pub fn read_hinted(&self, loc: Location, size: u32, hint: &mut usize) -> Result<u64, MemError> {
        match self.load_hinted(loc, size, hint) {
            Some(v) => Ok(v),
            None => self.read_u64(loc, size),
        }
    }

    /// [`Memory::write_u64`] through [`Memory::store_hinted`]: the same bytes written and
    /// the same write noted once, or the same error (a store the fast path cannot finish
    /// takes `write_u64`'s path). [`NoHooks`](crate::NoHooks)' warp stores and RMWs.
    #[inline(always)]
    pub fn write_hinted(
        &mut self,
        loc: Location,
        size: u32,
        v: u64,
        hint: &mut usize,
    ) -> Result<(), MemError> {
        match self.store_hinted(loc, size, v, hint) {
            Some(()) => Ok(()),
            None => self.write_u64(loc, size, v),
        }
    }

    /// Reads a little-endian value of `size` bytes (1, 2, 4, 8).
    #[inline]
    pub fn read_u64(&self, loc: Location, size: u32) -> Result<u64, MemError> {
        let mut b = [0u8; 8];
        self.read(loc, &mut b[..size as usize])?;
        Ok(u64::from_le_bytes(b))
    }

    #[inline]
    pub fn write_u64(&mut self, loc: Location, size: u32, v: u64) -> Result<(), MemError> {
        self.write(loc, &v.to_le_bytes()[..size as usize])
    }
}

/// `dst.copy_from_slice(src)` (equal lengths) with the access sizes 1, 2, 4 and 8 as fixed
/// moves: a variable-length `copy_from_slice` is a call into libc's `memmove`, which was
/// 5–8% of `exec --model bugaroo` on a shared-memory sort (every buffered store reads its
/// bytes to check the address, and every drain writes them).
#[inline(always)]
fn copy_small(dst: &mut [u8], src: &[u8]) {
    match (dst.len(), src.len()) {
        (1, 1) => dst[0] = src[0],
        (2, 2) => dst.copy_from_slice(&src[..2]),
        (4, 4) => dst.copy_from_slice(&src[..4]),
        (8, 8) => dst.copy_from_slice(&src[..8]),
        _ => dst.copy_from_slice(src),
    }
}
