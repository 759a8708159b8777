//! The hook interface: every global/shared memory operation, fence, barrier and thread
//! exit of a launch goes through a [`Hooks`] implementation. Write buffers (`handlers`) and
//! the race check (`racecheck`) plug in here; the interpreter knows nothing of them.
//!
//! The default methods implement plain sequentially consistent memory, so [`NoHooks`]
//! is the `sc` model. A launch is generic over `H: Hooks`, so the default costs nothing.
//!
//! Local, `.const` and `.param` accesses do not reach hooks: they are private to a thread
//! or read-only, so no memory-model behaviour depends on them.

use crate::error::MemError;
use crate::memory::{Location, Memory};

/// Memory-ordering semantics of an access (PTX ISA §8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sem {
    Weak,
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

/// Scope of a strong operation (PTX ISA §8.5). `Cluster` is treated as `Gpu`'s subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl Sem {
    const ALL: [Sem; 7] = [
        Sem::Weak,
        Sem::Volatile,
        Sem::Relaxed,
        Sem::Acquire,
        Sem::Release,
        Sem::AcqRel,
        Sem::Sc,
    ];

    /// A number in 0..7 for packed records (the race check's, a program's event log).
    #[inline]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The inverse of [`Sem::code`].
    #[inline]
    pub fn from_code(c: u8) -> Option<Sem> {
        Self::ALL.get(c as usize).copied()
    }
}

impl Scope {
    const ALL: [Scope; 4] = [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys];

    /// A number in 0..4 for packed records.
    #[inline]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The inverse of [`Scope::code`].
    #[inline]
    pub fn from_code(c: u8) -> Option<Scope> {
        Self::ALL.get(c as usize).copied()
    }
}

/// Identifies one thread of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadRef {
    /// Linear CTA index (`x + y*nx + z*nx*ny`).
    pub cta: u32,
    /// Linear thread index inside the CTA.
    pub tid: u32,
    /// Linear thread index in the grid (`cta * threads_per_cta + tid`).
    pub global: u32,
    pub lane: u32,
    /// Global warp index.
    pub warp: u32,
}

/// The static site of an instruction: index into the module's instruction table
/// ([`crate::Device::site`] gives its PTX text and CUDA line).
pub type SiteId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    /// Read-modify-write (`atom`), or a reduction (`red`) when `returns` is false.
    Atomic,
}

/// One memory access.
///
/// A vector `ld`/`st` of at most 8 bytes (`.v2.u32`, `.v4.u16`, `.v2.f32`, …, naturally
/// aligned: the vgpu faults otherwise) is **one** access of the vector's size; a wider one
/// is one access per element. The PTX ISA's memory consistency model describes a vector
/// access as scalar accesses in unspecified order, so a reader could see half of a
/// vector store. Hardware does not tear such a message, and NVIDIA's own libraries rely
/// on it: CCCL (`cub/util_arch.cuh`, `largest_atomic_message_size`) passes a CUB scan
/// tile's status and value in one `st.relaxed.gpu.v2.u32` that the next tile reads with
/// one `ld.relaxed.gpu.v2.u32`. Splitting it made `cub::DeviceScan` fail under `scoped`
/// and `weak` — a false alarm on correct code (issue 22) — so no model tears such a
/// vector. A 16-byte vector (`.v2.u64`, `.v4.u32`: CUB's descriptor for 8-byte values) is
/// one access per element, the hooks' values being at most 8 bytes; when it is *strong*
/// (relaxed, volatile, acquire, release) its elements come with [`Access::indivisible`]
/// set, and every model performs them at once and reads the newest values, so the pair
/// is never torn either (a scan of 64-bit values with `cub::DeviceScan` failed falsely
/// under `weak` before). Plain (weak) 16-byte vectors are still split: a torn plain read
/// is what a stale read of vectorized data looks like, and must stay visible.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub thread: ThreadRef,
    pub loc: Location,
    pub size: u32,
    pub kind: AccessKind,
    pub sem: Sem,
    /// Scope; `Sys` for weak and volatile accesses (they have no scope).
    pub scope: Scope,
    pub site: SiteId,
    /// Which launch of the device this is (0-based), for counter-based choices.
    pub launch: u32,
    /// One element of a strong, naturally aligned 16-byte vector access (see above): a
    /// model must neither delay it nor let it read an older value than the newest, so the
    /// vector is one message as on hardware.
    pub indivisible: bool,
    /// The read of a synchronization object's state (an `mbarrier` test): a model lets
    /// it read only the newest value. A stale state can only say "not complete yet",
    /// which the wait's loop answers by testing again: reading it stale changes no value
    /// a program computes, but at `p = 1` under `weak` each of a launch's CTAs waited for
    /// a whole liveness round (a 256-CTA `cub::DeviceTransform` on sm_90 ran for minutes).
    pub newest: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceKind {
    /// `fence.sc`, `membar`
    Sc,
    AcqRel,
    Acquire,
    Release,
}

#[derive(Debug, Clone, Copy)]
pub struct Fence {
    pub thread: ThreadRef,
    pub kind: FenceKind,
    pub scope: Scope,
    pub site: SiteId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierKind {
    /// `bar.sync`/`barrier.sync`/`bar.red`: waits.
    Sync,
    /// `bar.arrive`: does not wait.
    Arrive,
    /// `bar.warp.sync`
    Warp,
}

#[derive(Debug, Clone, Copy)]
pub struct Barrier {
    pub thread: ThreadRef,
    pub kind: BarrierKind,
    /// Named-barrier id (0 for `__syncthreads`); for `Warp`, the member mask.
    pub id: u32,
    pub site: SiteId,
}

/// What a launch is, for hooks that filter by kernel or size their state.
#[derive(Debug, Clone, Copy)]
pub struct LaunchInfo<'a> {
    /// Which launch of the device this is (0-based).
    pub launch: u32,
    pub kernel: &'a str,
    pub threads: u32,
    pub ctas: u32,
    pub threads_per_cta: u32,
}

/// The little-endian value of a hook's bytes (a load's `buf`, a store's `data`): up to 8,
/// zero-extended; of a wider access, its first 8. Built without a variable-length copy into
/// a stack buffer, whose reread as one word stalled store-to-load forwarding (a quarter of
/// the `weak` model's store time, and most of a plain store's cost in the race check).
#[inline(always)]
pub fn le_value(data: &[u8]) -> u64 {
    match *data {
        [a] => a as u64,
        [a, b] => u16::from_le_bytes([a, b]) as u64,
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => data
            .iter()
            .take(8)
            .enumerate()
            .fold(0, |v, (i, &b)| v | (b as u64) << (8 * i)),
    }
}

/// The operation of an atomic: the vgpu computes `new = op(old)`; `None` when it writes
/// nothing (a compare-and-swap whose comparison failed: then it is only a read).
pub type RmwFn<'a> = &'a mut dyn FnMut(u64) -> Option<u64>;

/// [`Hooks::load`] on each of a warp instruction's lanes in order, as [`Hooks::load_warp`]
/// does by default: for an implementation that does something first and then what the
/// default does.
pub fn load_each<H: Hooks + ?Sized>(
    h: &mut H,
    mem: &mut Memory,
    a: &[Access],
    out: &mut [u64],
) -> Result<(), (usize, MemError)> {
    for (i, a) in a.iter().enumerate() {
        let mut b = [0u8; 8];
        h.load(mem, a, &mut b[..a.size as usize])
            .map_err(|e| (i, e))?;
        out[i] = u64::from_le_bytes(b);
    }
    Ok(())
}

/// [`Hooks::store`] on each of a warp instruction's lanes in order, as
/// [`Hooks::store_warp`] does by default (see [`load_each`]).
pub fn store_each<H: Hooks + ?Sized>(
    h: &mut H,
    mem: &mut Memory,
    a: &[Access],
    vals: &[u64],
) -> Result<(), (usize, MemError)> {
    for (i, a) in a.iter().enumerate() {
        let b = vals[i].to_le_bytes();
        h.store(mem, a, &b[..a.size as usize]).map_err(|e| (i, e))?;
    }
    Ok(())
}

pub trait Hooks {
    /// Called once before the first instruction of a launch.
    fn launch_begin(&mut self, _info: &LaunchInfo<'_>) {}

    /// A load of `buf.len()` bytes; fill `buf` with the value the thread observes.
    #[inline]
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        mem.read(a.loc, buf)
    }

    /// A store of `data`.
    #[inline]
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        mem.write(a.loc, data)
    }

    /// An atomic read-modify-write of `a.size` bytes (1..=8); returns the old value.
    #[inline]
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let old = mem.read_u64(a.loc, a.size)?;
        if let Some(new) = rmw(old) {
            mem.write_u64(a.loc, a.size, new)?;
        }
        Ok(old)
    }

    /// The scalar loads of one warp instruction, in lane order: `a[i]` is one lane's
    /// access (at most 8 bytes), its value goes to `out[i]` (the little-endian bytes
    /// [`Hooks::load`] fills, zero-extended). Must be exactly [`Hooks::load`] on each in
    /// order, which the default is; an implementation may share work between the lanes.
    /// On an error, the index of the access that failed (the ones before it are done,
    /// the ones after it not started).
    #[inline]
    fn load_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        load_each(self, mem, a, out)
    }

    /// The scalar stores of one warp instruction, in lane order: `a[i]` stores the low
    /// `a[i].size` bytes of `vals[i]` (little-endian). Exactly [`Hooks::store`] on each
    /// in order, as [`Hooks::load_warp`].
    #[inline]
    fn store_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        store_each(self, mem, a, vals)
    }

    /// The atomics of one warp instruction, in lane order: `a[i]` with operation
    /// `rmw(i, old)`, its old value to `old[i]`. Exactly [`Hooks::atomic`] on each in
    /// order, as [`Hooks::load_warp`].
    #[inline]
    fn atomic_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        rmw: &mut dyn FnMut(usize, u64) -> Option<u64>,
        old: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        for (i, a) in a.iter().enumerate() {
            old[i] = self
                .atomic(mem, a, &mut |o| rmw(i, o))
                .map_err(|e| (i, e))?;
        }
        Ok(())
    }

    /// A fence (`fence.*`, `membar.*`).
    #[inline]
    fn fence(&mut self, _mem: &mut Memory, _f: &Fence) {}

    /// A thread arrives at a barrier (before it waits).
    #[inline]
    fn barrier_arrive(&mut self, _mem: &mut Memory, _b: &Barrier) {}

    /// A barrier completed; `threads` are the threads it released.
    #[inline]
    fn barrier_release(&mut self, _mem: &mut Memory, _b: &Barrier, _threads: &[ThreadRef]) {}

    /// A thread exits.
    #[inline]
    fn thread_exit(&mut self, _mem: &mut Memory, _t: ThreadRef) {}

    /// Every thread of CTA `cta` has exited (called after the last one's
    /// [`Hooks::thread_exit`]): nothing can access the CTA's shared memory again in this
    /// launch, so what the hooks keep for it alone may go.
    #[inline]
    fn cta_exit(&mut self, _mem: &mut Memory, _cta: u32) {}

    /// Nothing can run, or every runnable thread has spun without progress for a long
    /// time. Return true if the hook changed memory (e.g. drained a buffered store) so
    /// that execution may make progress again; false means the state is final.
    #[inline]
    fn stalled(&mut self, _mem: &mut Memory) -> bool {
        false
    }

    /// Called once after the last thread exited (or the launch ended otherwise).
    #[inline]
    fn launch_end(&mut self, _mem: &mut Memory) {}

    /// Spin parking (the interpreter's `livelock` module): how many loads so far did
    /// anything besides returning a value — changed the hooks' state (a drain, a
    /// forwarded or overlay read that is counted), their statistics or trace, or used
    /// randomness (a seeded choice among several values) — or `None` when the hooks
    /// cannot say, and then no warp is parked. Between two calls that return the same
    /// count, every load returned a function of memory and of the hooks' state, and left
    /// both as they were: a warp that repeats such a step is parked, and its further
    /// repeats are applied without calling `load` again. Stores, atomics, fences,
    /// barriers, exits and [`Hooks::stalled`] need not be counted: each of them ends
    /// every parking anyway (see [`Hooks::shared_effects`] for hooks that can say more).
    /// Asked after every scheduling step: it should be a field read.
    #[inline]
    fn load_effects(&self) -> Option<u64> {
        None
    }

    /// Spin parking, finer: how many times so far the hooks changed anything that a
    /// load by *another* thread could see — memory, or a buffer or overlay that other
    /// threads' loads read — in any call (`store`, `fence`, `load`, `atomic`, barriers,
    /// exits, `stalled`), or `None` (the default). With a count:
    /// - a fence is no event: one that changed nothing (a thread with nothing to drain)
    ///   can be inside a parked cycle (the `__threadfence_block()` of CUB's look-back);
    /// - a store ends the parking of no other warp unless it moved this count (a store
    ///   that waits in its thread's buffer); the storing warp's own step is never parked;
    /// - a load whose [`Hooks::load_effects`] moved keeps only its own warp's step from
    ///   parking (a load forwarded from the thread's own buffer changes statistics, not
    ///   what others read);
    /// - a move of this count after a step ends every parking — or, when the hooks name
    ///   the blocks of the changes ([`Hooks::changed_blocks`]), the parkings of the warps
    ///   that read one of them and of the warp whose step made it.
    ///
    /// Asked after every scheduling step, as `load_effects`; only used when that is
    /// `Some` too.
    #[inline]
    fn shared_effects(&self) -> Option<u64> {
        None
    }

    /// Spin parking, finest: appends to `out` the 8-byte blocks
    /// ([`block_key`](crate::memory::block_key)) of every change counted by
    /// [`Hooks::shared_effects`] since the last call that was *not* a write to memory —
    /// the interpreter logs those itself ([`Memory::take_written`]) — such as a store
    /// placed in a buffer that other threads' loads read (a CTA overlay). True when the
    /// two together name every such change: then a change wakes only the parked warps
    /// whose loads read one of its blocks (a load's value and effects are functions of
    /// what the hooks hold for its own block and of memory there). False (the default)
    /// when the hooks cannot say; then every counted change wakes every parked warp.
    /// Asked after `shared_effects` moved, after a [`Hooks::stalled`] that returned
    /// true, at the launch's start and after events for every warp (an exit): the last
    /// two only to empty the hooks' log.
    #[inline]
    fn changed_blocks(&mut self, _out: &mut Vec<u64>) -> bool {
        false
    }

    /// True when `load`, `store` and `atomic` are plain memory for the rest of this
    /// launch (asked after `launch_begin`): the interpreter may then access memory
    /// directly, without building an [`Access`] per lane or calling them. Fences,
    /// barriers and exits still reach the hooks. Only say true if the three are exactly
    /// the default methods' behaviour.
    #[inline]
    fn transparent(&self) -> bool {
        false
    }

    /// True when, right now, a global, shared or generic load by each thread of CTA `cta`
    /// whose global id is in `first .. first + 32` and whose lane is set in `lanes` (one
    /// warp's, lane `l` being thread `first + l`) is plain memory: `load` would read memory
    /// and nothing else — no value of its own, no state, statistics, trace or
    /// [`Hooks::load_effects`] change. The interpreter then reads memory directly for
    /// those lanes as with [`Hooks::transparent`] hooks (a lane whose address it cannot
    /// finish still goes through `load`). Asked once per warp load instruction, so it
    /// should be cheap: a write-buffer model says true while the threads' buffers (and
    /// what else a load consults) are empty — after a barrier, in a tile kernel's inner
    /// loop.
    #[inline]
    fn plain_loads(&self, _cta: u32, _first: u32, _lanes: u32) -> bool {
        false
    }

    /// True when, right now, nothing the threads named as in [`Hooks::plain_loads`] stored
    /// can still become visible to other threads later (no store of theirs is buffered or
    /// pending anywhere) and their loads are plain memory. The interpreter then lets the
    /// shared loads of a CTA all of whose threads are settled run without a scheduling
    /// decision once none of them can write shared memory before the CTA's next barrier
    /// (`crate::unwritten`). Asked once per warp of the CTA until the answer holds, then
    /// not again until the barrier. Default: [`Hooks::transparent`].
    #[inline]
    fn settled(&self, _cta: u32, _first: u32, _lanes: u32) -> bool {
        self.transparent()
    }

    /// CTA-local scheduling under hooks that are not [`Hooks::transparent`] (the
    /// interpreter's `ctalocal` module; [`crate::LaunchOptions::cta_local`]): true when,
    /// right now, any step of a thread of CTA `cta` (global ids `first .. first + n`) that
    /// begins with an instruction
    /// [`crate::program::Op::is_cta_local`] — a shared access, a CTA
    /// barrier, a warp collective — reads and changes in these hooks only state of that
    /// CTA (its threads' buffers for shared memory, the CTA's own tables) and memory of
    /// the CTA's shared window, plus counters whose values at the end do not depend on the
    /// order of such steps among other CTAs' steps (statistics, effect counts, labels
    /// compared only between the CTA's own entries); and any choice it makes at random is
    /// a function of the thread and its own history, not of a stream other threads draw
    /// from. The interpreter keeps a true answer until a step of the CTA that is not
    /// CTA-local, so the answer must not turn false by anything else: a write-buffer
    /// model answers "no thread of the CTA holds a buffered store to global memory"
    /// (a barrier would drain it), which only a global store of the CTA can undo.
    /// Asked when the CTA's runnable warps are found CTA-local after a change, so it may
    /// cost a pass over the CTA's threads. Default: [`Hooks::transparent`] (plain memory
    /// is CTA-local by itself; a wrapper asks the hooks it wraps).
    #[inline]
    fn cta_steps_local(&self, _cta: u32, _first: u32, _n: u32) -> bool {
        self.transparent()
    }

    /// Asked before a weak (`ld`, `ld.weak`, `ld.global.nc`) load of one warp whose every
    /// lane (`lanes`, of the warp of global thread ids `first ..`) reads bytes that no
    /// write of the launch reaches unordered with the load (`crate::unwritten`): global
    /// bytes no thread of the launch writes, or shared bytes of a CTA whose threads are
    /// all [`Hooks::settled`], none of which has written shared memory since the barrier
    /// that began the interval nor can before the barrier that ends it. True: the
    /// interpreter reads memory directly for those lanes and does not call `load`. Say
    /// true only when `load` of such bytes would give memory's value and change nothing a
    /// later answer of these hooks depends on — there is no buffered store to forward, no
    /// older value to read, no message to receive and no race to find; hooks that count
    /// loads count `lanes` here. Asked in every launch with hooks that are not
    /// transparent. Default: [`Hooks::transparent`].
    #[inline]
    fn unwritten_loads(&mut self, _first: u32, _lanes: u32) -> bool {
        self.transparent()
    }
}

/// Plain memory: the `sc` model.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl Hooks for NoHooks {
    #[inline]
    fn transparent(&self) -> bool {
        true
    }
    #[inline]
    fn load_effects(&self) -> Option<u64> {
        // Plain memory: a load only reads.
        Some(0)
    }
    #[inline]
    fn shared_effects(&self) -> Option<u64> {
        // Every store writes memory: none is counted here, so stores stay events.
        None
    }

    // The interpreter never calls these for transparent hooks; a wrapper that observes
    // (the race check under `sc`) does, once per warp instruction. Exactly `load_each` /
    // `store_each` of the default `load`/`store` (the same values, writes and errors),
    // with the allocation looked up once per run of lanes instead of a slice copy per
    // lane: `load_each` was a tenth of the race-checked side of the race-check bench's
    // `algo_bitonic_sort` (callgrind, `Hooks::load` and `Hooks::store` per lane).
    #[inline]
    fn load_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        let mut hint = 0;
        for (i, a) in a.iter().enumerate() {
            out[i] = mem
                .read_hinted(a.loc, a.size, &mut hint)
                .map_err(|e| (i, e))?;
        }
        Ok(())
    }

    /// The default `atomic` through the same fast reads and writes (the race check's
    /// RMWs under `sc`).
    #[inline]
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let mut hint = 0;
        let old = mem.read_hinted(a.loc, a.size, &mut hint)?;
        if let Some(new) = rmw(old) {
            mem.write_hinted(a.loc, a.size, new, &mut hint)?;
        }
        Ok(old)
    }

    #[inline]
    fn store_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        let mut hint = 0;
        for (i, a) in a.iter().enumerate() {
            mem.write_hinted(a.loc, a.size, vals[i], &mut hint)
                .map_err(|e| (i, e))?;
        }
        Ok(())
    }
}

/// Sees every global/shared access, fence, barrier and launch before the hooks do, and
/// cannot change the execution: the minimizer's coverage observer, and the event log a
/// program writes for it (`fencehound_cudart_protocol::events`).
pub trait Observer {
    fn launch_begin(&mut self, _info: &LaunchInfo<'_>) {}
    fn access(&mut self, _a: &Access) {}
    fn fence(&mut self, _f: &Fence) {}
    fn barrier(&mut self, _b: &Barrier) {}
    /// The observer did not see every event of the execution (a program's event log was
    /// cut short): whatever it concludes from absence is unfounded.
    fn incomplete(&mut self, _why: &str) {}
}

/// Hooks that show every event to an [`Observer`], then hand it to `inner`. Never
/// transparent: the observer must see each access.
pub struct Observed<'o, H> {
    pub inner: H,
    pub obs: &'o mut dyn Observer,
}

impl<H: Hooks> Hooks for Observed<'_, H> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.obs.launch_begin(info);
        self.inner.launch_begin(info)
    }
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.obs.access(a);
        self.inner.load(mem, a, buf)
    }
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.obs.access(a);
        self.inner.store(mem, a, data)
    }
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        self.obs.access(a);
        self.inner.atomic(mem, a, rmw)
    }
    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.obs.fence(f);
        self.inner.fence(mem, f)
    }
    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.obs.barrier(b);
        self.inner.barrier_arrive(mem, b)
    }
    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.inner.barrier_release(mem, b, threads)
    }
    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.inner.thread_exit(mem, t)
    }
    fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
        self.inner.cta_exit(mem, cta)
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.inner.stalled(mem)
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        self.inner.launch_end(mem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hooks with every default method: `load_warp`/`store_warp` are `load_each` /
    /// `store_each` over the default `load`/`store`.
    struct Defaults;
    impl Hooks for Defaults {}

    fn lane(i: u32, loc: Location, size: u32, kind: AccessKind) -> Access {
        Access {
            thread: ThreadRef {
                cta: 0,
                tid: i,
                global: i,
                lane: i,
                warp: 0,
            },
            loc,
            size,
            kind,
            sem: Sem::Weak,
            scope: Scope::Sys,
            site: 0,
            launch: 0,
            indivisible: false,
            newest: false,
        }
    }

    /// Two arrays, and a warp's lanes over them: every access size, both arrays in one
    /// warp (the allocation hint moves), and, when `fault` is set, a lane that runs past
    /// the end of the first array (then more lanes after it, which must not happen).
    fn setup(fault: bool) -> (Memory, Vec<Access>, Vec<u64>) {
        let mut mem = Memory::default();
        let a = mem.device_malloc(32);
        let b = mem.device_malloc(16);
        assert!(a != 0 && b != 0);
        for (i, v) in (0..32u8).enumerate() {
            mem.write(Location::Global(a + i as u64), &[v.wrapping_mul(7)])
                .unwrap();
        }
        mem.log_writes(true);
        let mut places = vec![
            (a, 4),
            (a + 4, 2),
            (a + 6, 1),
            (b, 8),
            (a + 8, 8),
            (b + 8, 4),
        ];
        if fault {
            places.push((a + 30, 4));
        }
        places.push((a + 16, 4));
        let acc = places
            .iter()
            .enumerate()
            .map(|(i, &(x, s))| lane(i as u32, Location::Global(x), s, AccessKind::Store))
            .collect();
        let vals = (0..places.len() as u64)
            .map(|i| 0x1122_3344_5566_7788u64.rotate_left(8 * i as u32))
            .collect();
        (mem, acc, vals)
    }

    /// Both arrays' bytes (the first two device allocations of a fresh memory).
    fn bytes(mem: &Memory, acc: &[Access]) -> Vec<u8> {
        let Location::Global(a) = acc[0].loc else {
            unreachable!()
        };
        let Location::Global(b) = acc[3].loc else {
            unreachable!()
        };
        let mut out = vec![0; 48];
        mem.read(Location::Global(a), &mut out[..32]).unwrap();
        mem.read(Location::Global(b), &mut out[32..]).unwrap();
        out
    }

    #[test]
    fn plain_warp_accesses_are_the_default_lane_by_lane() {
        for fault in [false, true] {
            let (mut m1, acc, vals) = setup(fault);
            let (mut m2, _, _) = setup(fault);
            let r1 = NoHooks.store_warp(&mut m1, &acc, &vals);
            let r2 = Defaults.store_warp(&mut m2, &acc, &vals);
            assert_eq!(r1, r2);
            assert_eq!(r1.is_err(), fault);
            assert_eq!(bytes(&m1, &acc), bytes(&m2, &acc));
            let (mut w1, mut w2) = (Vec::new(), Vec::new());
            m1.take_written(&mut w1);
            m2.take_written(&mut w2);
            assert_eq!(w1, w2, "the same blocks noted as written, as often");
            assert!(!w1.is_empty());
            let loads: Vec<Access> = acc
                .iter()
                .map(|a| Access {
                    kind: AccessKind::Load,
                    ..*a
                })
                .collect();
            let (mut o1, mut o2) = (vec![0; acc.len()], vec![0; acc.len()]);
            let r1 = NoHooks.load_warp(&mut m1, &loads, &mut o1);
            let r2 = Defaults.load_warp(&mut m2, &loads, &mut o2);
            assert_eq!(r1, r2);
            assert_eq!(o1, o2);
            assert!(o1.iter().any(|&v| v != 0));
            // RMWs: an add on even lanes, a failed compare (no write) on odd ones.
            let rmws: Vec<Access> = acc
                .iter()
                .map(|a| Access {
                    kind: AccessKind::Atomic,
                    ..*a
                })
                .collect();
            let run = |h: &mut dyn Hooks, m: &mut Memory| {
                let mut olds = vec![0; rmws.len()];
                let r = h.atomic_warp(
                    m,
                    &rmws,
                    &mut |i, o| i.is_multiple_of(2).then(|| o.wrapping_add(0x0101_0101)),
                    &mut olds,
                );
                (r, olds)
            };
            assert_eq!(run(&mut NoHooks, &mut m1), run(&mut Defaults, &mut m2));
            assert_eq!(bytes(&m1, &acc), bytes(&m2, &acc));
            let (mut w1, mut w2) = (Vec::new(), Vec::new());
            m1.take_written(&mut w1);
            m2.take_written(&mut w2);
            assert_eq!(w1, w2);
        }
    }
}
