//! The race check: a [`Hooks`] wrapper that sees every global/shared access, fence and
//! barrier each thread executes (in program order, whatever the inner hooks do with the
//! values), maintains happens-before with vector clocks, and reports pairs of conflicting
//! accesses that it does not order.
//!
//! # The model
//!
//! This follows the PTX memory model (PTX ISA §8, "Memory Consistency Model") the way
//! miri's `data_race.rs` follows C++20: a detector in the style of FastTrack (Flanagan &
//! Freund, PLDI 2009) where each thread has a vector clock ([`crate::clock::VClock`]) and
//! each byte remembers its last write and its reads since ([`crate::shadow`]). Two accesses
//! to a byte *conflict* if at least one writes; they *race* if they conflict, neither
//! happens before the other, and they are not both morally strong.
//!
//! Happens-before is built from:
//!
//! * **Program order** of each thread.
//! * **Barriers**: `bar.sync`/`barrier.sync`/`bar.red` and named barriers with thread
//!   counts, per CTA: every arrival (including `bar.arrive`, which does not wait) happens
//!   before every thread the barrier releases. `bar.warp.sync` does the same among the
//!   lanes of its member mask. Barriers order shared *and* global memory among their
//!   participants.
//! * **Kernel boundaries**: a launch starts with empty shadow memory.
//! * **Release/acquire patterns** (§8.8): a release operation (`st.release`, `atom.release`
//!   or `.acq_rel`), or a release fence (`fence.sc`, `fence.acq_rel`, `fence.release`,
//!   `membar`) followed by a strong write, *publishes* the thread's clock on the location.
//!   An acquire operation that reads that value takes the published clock at once; a
//!   relaxed or volatile read takes it when the thread later executes an acquire fence.
//!   Atomic read-modify-writes continue release sequences: they add to what the location
//!   publishes rather than replace it, so `__threadfence(); atomicAdd(&count, 1)` by many
//!   CTAs publishes all of them to whoever reads the final count.
//! * **Fence-SC order**: morally strong `fence.sc` (and `membar`) are totally ordered
//!   and synchronize in that order (§8.8, "Fence-SC order"); we take the order in which
//!   the vgpu executed them.
//!
//! **Scopes.** Synchronization counts only between threads that are both inside the scope
//! of each operation involved: a `.cta` release, acquire, fence or atomic orders nothing
//! for a thread of another CTA, and two strong accesses of different CTAs where either is
//! `.cta`-scoped are not morally strong, so they race. To *name* such bugs, each thread
//! also keeps a scope-blind clock (only when it differs from the real one): what it would
//! know if every scope were `.gpu`. A cross-CTA race that the blind clock orders, or
//! strong accesses that race only because of a `.cta` scope, is reported as
//! [`RaceClass::InsufficientScope`] rather than [`RaceClass::InterBlock`].
//!
//! **Strong accesses.** Atomics and `.relaxed`/`.acquire`/`.release` loads and stores are
//! morally strong with each other at sufficient scope, so never race with each other.
//! Volatile (`ld.volatile`, `st.volatile`, i.e. `volatile T*` in CUDA) is `relaxed.sys` in
//! the PTX model, but in CUDA code it mostly carries *data* in the pre-Volta idiom that
//! assumed lockstep warps or cache-bypassing reads, so: a volatile load is strong, and a
//! volatile store is strong only when it can be a release pattern, i.e. when its thread
//! has executed a release fence earlier in the launch. A volatile store with no fence
//! before it cannot publish anything; when such a store conflicts with unordered accesses
//! we report it (the volatile warp reduction without `__syncwarp()`, the flag written
//! without `__threadfence()`).
//!
//! **Deliberate leniency.** A relaxed read-modify-write acquires what it reads, as if it
//! were followed by an acquire fence at its scope. CUDA's own "threadfence reduction"
//! (one `__threadfence()` before `atomicInc`, none after it) relies on this, and no
//! hardware breaks it; the strict model would report it. And a weak load that races with
//! atomics is not reported if the same thread's next atomic on that address is a CAS (the
//! CAS loop of the CUDA programming guide: the CAS validates the value read); such races
//! are held until the end of the launch and dropped when the CAS comes.
//!
//! **Locks.** When the checker knows which sites are `atom.cas`/`atom.exch`
//! ([`RaceCheck::for_module`]), a CAS or exchange that turns a location from 0 to
//! non-zero takes a lock, and a store or exchange of 0 to it by the holder releases it.
//! Accesses remember the set of locks held (interned, 16 bits). At the end of the launch a
//! race where either access held a location that some holder did release to 0 (so it
//! really was a lock, not a counter that happened to start at 0) becomes
//! [`RaceClass::LockMisuse`], naming the problem ([`LockProblem`]).
//!
//! # Clocks that scale
//!
//! Threads have epochs and chunked, shared vector clocks ([`crate::clock`]); shadow cells
//! hold epochs, not clocks. After `__syncthreads()` every thread of a CTA shares one
//! clock; locations, barrier accumulators and fences hold clocks only while they matter.
//! Memory is ~72 bytes per thread plus one chunk (4 bytes × threads per CTA) per distinct
//! clock, and 32 bytes of shadow per touched byte of memory.
//!
//! # What it cannot see
//!
//! * Races the executed interleaving does not exhibit: happens-before is exact for the
//!   execution, but `fence.sc` ordering and which release a read observed come from the
//!   schedule, so other schedules (seeds) can order things differently.
//! * Reads are matched to writes by value: a strong read synchronizes with the latest
//!   strong write to the location only if it read that write's value (under write
//!   buffers it may have read an older one). An older release it actually read (ABA
//!   values, or a write superseded by a later one) is not used.
//! * Only the last write per byte is kept (FastTrack): if several strong writes (atomics)
//!   are concurrent, a later weak access is checked against the last of them only.
//! * Shuffles, votes and `match`/`redux` do not synchronize memory (PTX gives them no
//!   ordering); `bar.sync` does not act as a fence for later relaxed accesses.
//! * Local, `.const` and `.param` memory, and accesses through other hooks' own state (the
//!   checker sees what threads execute, not when buffered stores drain).
//! * CAS loops: we do not check that the validated value feeds *only* the CAS.
//! * The lock heuristic knows locks only by their CAS/exchange and 0/non-0 values; a
//!   ticket lock or a lock not released to 0 is not recognized (its races are classified
//!   by thread relation instead).

use crate::clock::{Epoch, VClock};
use crate::report::{Conflict, LockProblem, RaceClass, RaceKey, RaceSet, RawAccess, RawRace};
use crate::shadow::{meta, Cell, ReadSets, Rec, Region, PAGE};
use fencehound_vgpu::hooks::RmwFn;
use fencehound_vgpu::{
    Access, AccessKind, Barrier, BarrierKind, Device, Fence, FenceKind, Hooks, LaunchInfo,
    Location, MemError, Memory, ModuleId, Scope, Sem, ThreadRef,
};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplicative hashing for u64 keys (addresses); std's SipHash is needlessly slow here.
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

#[inline]
fn wide(s: Scope) -> bool {
    s >= Scope::Gpu
}

/// Per-thread synchronization state.
#[derive(Debug, Clone, Default)]
struct ThreadState {
    epoch: Epoch,
    clock: VClock,
    /// What the thread would know if every scope were `.gpu`; `None` = same as `clock`.
    blind: Option<VClock>,
    /// Snapshots at the last release fence of any scope, and of scope ≥ `.gpu`.
    rel_fence: [Option<VClock>; 2],
    /// Published clocks read by relaxed/volatile reads, waiting for an acquire fence:
    /// from writers of this CTA, from writers of other CTAs.
    pending: [Option<VClock>; 2],
    pending_blind: Option<VClock>,
    /// Executed a release fence in this launch (volatile stores become strong).
    fenced: bool,
    /// Interned lock set.
    locks: u16,
}

impl ThreadState {
    fn join(&mut self, c: &VClock) {
        self.clock.join(c);
        if let Some(b) = &mut self.blind {
            b.join(c);
        }
    }

    fn join_blind(&mut self, c: &VClock) {
        if self.blind.is_none() {
            if self.clock.dominates(c) {
                return;
            }
            self.blind = Some(self.clock.clone());
        }
        if let Some(b) = &mut self.blind {
            b.join(c);
        }
    }
}

/// What a location publishes to whoever reads its current value.
#[derive(Debug, Clone, Default)]
struct LocSync {
    value: u64,
    size: u32,
    /// The CTA of the last writer (whose `.cta`-scoped releases `narrow` holds).
    cta: u32,
    narrow: Option<VClock>,
    wide: Option<VClock>,
}

fn join_opt(dst: &mut Option<VClock>, src: &Option<VClock>) {
    if let Some(s) = src {
        match dst {
            Some(d) => d.join(s),
            None => *dst = Some(s.clone()),
        }
    }
}

/// A barrier instance being assembled from arrivals.
#[derive(Debug, Default)]
struct BarrierAcc {
    clock: VClock,
    /// Clocks already folded in (kept alive so that their chunk pointers stay unique).
    folded: Vec<VClock>,
    blind_parts: Vec<VClock>,
}

const MAX_FOLDED: usize = 64;

const SITE_CAS: u8 = 1;
const SITE_EXCH: u8 = 2;

impl BarrierAcc {
    fn fold(&mut self, c: &VClock) {
        for (cta, ptr) in c.chunk_ptrs() {
            let seen = self
                .folded
                .iter()
                .any(|f| f.chunk_ptrs().any(|(k, p)| k == cta && p == ptr));
            if !seen {
                self.clock.join_one(c, cta);
            }
        }
        if self.folded.len() < MAX_FOLDED {
            self.folded.push(c.clone());
        }
    }
}

/// Interned lock sets (sorted location keys); set 0 is the empty set.
#[derive(Debug)]
struct LockTable {
    sets: Vec<Vec<u64>>,
    index: HashMap<Vec<u64>, u16>,
    /// Locations a holder released to 0: real locks.
    confirmed: std::collections::HashSet<u64>,
}

impl Default for LockTable {
    fn default() -> Self {
        let mut index = HashMap::new();
        index.insert(Vec::new(), 0);
        LockTable {
            sets: vec![Vec::new()],
            index,
            confirmed: Default::default(),
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
    /// Locations publishing a clock at the end of the launch.
    pub sync_locations: u64,
}

#[derive(Debug, Default)]
struct LaunchMeta {
    kernel: String,
    tpb: u32,
}

/// The shadow region of `loc` (created on first use).
fn region<'a>(
    global: &'a mut Vec<Region>,
    last_region: &mut usize,
    shared: &'a mut Vec<Region>,
    mem: &Memory,
    loc: Location,
) -> Option<(&'a mut Region, u64)> {
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

/// The race check, wrapping the hooks `H` that decide what memory does (e.g. `NoHooks`
/// for `sc`, `WriteBuffers` for buffered models). Every hook is delegated to `H`; the
/// checker only observes.
pub struct RaceCheck<H> {
    inner: H,
    launch: LaunchMeta,
    threads: Vec<ThreadState>,
    global: Vec<Region>,
    last_region: usize,
    shared: Vec<Region>,
    read_sets: ReadSets,
    sync: FastMap<u64, LocSync>,
    barriers: FastMap<(u8, u32, u32), BarrierAcc>,
    sc_gpu: VClock,
    sc_cta: Vec<VClock>,
    /// Join of every fence.sc (any scope); kept only once a `.cta` fence.sc was seen.
    sc_blind: VClock,
    sc_blind_live: bool,
    /// Per site: [`SITE_CAS`] / [`SITE_EXCH`] (known with [`RaceCheck::for_module`]).
    site_flags: Vec<u8>,
    /// Races between a weak load and an atomic, held back until we know whether the
    /// loading thread validates the value with a CAS on the same address (CAS loop).
    deferred: FastMap<(u32, u64), Vec<(RaceKey, RawRace)>>,
    /// Races whose accesses held locks, classified at the end of the launch.
    lock_pending: Vec<(RaceKey, RawRace)>,
    lock_table: LockTable,
    races: RaceSet,
    stats: ShadowStats,
}

impl<H: Hooks> RaceCheck<H> {
    /// A checker without lock recognition.
    pub fn new(inner: H) -> Self {
        RaceCheck {
            inner,
            launch: LaunchMeta::default(),
            threads: Vec::new(),
            global: Vec::new(),
            last_region: 0,
            shared: Vec::new(),
            read_sets: ReadSets::default(),
            sync: FastMap::default(),
            barriers: FastMap::default(),
            sc_gpu: VClock::default(),
            sc_cta: Vec::new(),
            sc_blind: VClock::default(),
            sc_blind_live: false,
            site_flags: Vec::new(),
            deferred: FastMap::default(),
            lock_pending: Vec::new(),
            lock_table: LockTable::default(),
            races: RaceSet::default(),
            stats: ShadowStats::default(),
        }
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
        let pages: usize = self
            .global
            .iter()
            .chain(&self.shared)
            .map(|r| r.touched_pages())
            .sum();
        s.tracked_bytes = (pages * PAGE) as u64;
        s.shadow_bytes = (pages * PAGE * std::mem::size_of::<Cell>()) as u64;
        s.read_set_entries = self.read_sets.entries() as u64;
        s.sync_locations = self.sync.len() as u64;
        s
    }

    fn reset(&mut self, info: &LaunchInfo<'_>) {
        self.launch = LaunchMeta {
            kernel: info.kernel.to_string(),
            tpb: info.threads_per_cta.max(1),
        };
        let empty = VClock::default();
        self.threads.clear();
        self.threads.resize(
            info.threads as usize,
            ThreadState {
                epoch: 1,
                clock: empty.clone(),
                ..ThreadState::default()
            },
        );
        self.global.clear();
        self.last_region = 0;
        self.shared.clear();
        self.read_sets.clear();
        self.sync.clear();
        self.barriers.clear();
        self.deferred.clear();
        self.lock_pending.clear();
        self.sc_gpu = empty.clone();
        self.sc_cta = vec![empty.clone(); info.ctas as usize];
        self.sc_blind = empty;
        self.sc_blind_live = false;
        self.lock_table = LockTable::default();
        self.races.executions += 1;
        self.stats = ShadowStats::default();
    }

    fn rec(&self, a: &Access, strong: bool) -> Rec {
        let kind = match a.kind {
            AccessKind::Load => meta::LOAD,
            AccessKind::Store => meta::STORE,
            AccessKind::Atomic => meta::ATOMIC,
        };
        let sem = match a.sem {
            Sem::Weak => 0,
            Sem::Volatile => 1,
            Sem::Relaxed => 2,
            Sem::Acquire => 3,
            Sem::Release => 4,
            Sem::AcqRel => 5,
            Sem::Sc => 6,
        };
        let scope = match a.scope {
            Scope::Cta => 0,
            Scope::Cluster => 1,
            Scope::Gpu => 2,
            Scope::Sys => 3,
        };
        let g = a.thread.global;
        let t = self.threads.get(g as usize);
        Rec {
            g,
            epoch: t.map_or(1, |t| t.epoch),
            site: a.site,
            locks: t.map_or(0, |t| t.locks),
            meta: kind
                | sem << meta::SEM_SHIFT
                | scope << meta::SCOPE_SHIFT
                | if strong { meta::STRONG } else { 0 },
        }
    }

    /// Checks and records one access in shadow memory.
    fn check(&mut self, mem: &Memory, a: &Access, strong: bool) {
        self.stats.accesses += 1;
        let me = a.thread.global;
        if me as usize >= self.threads.len() {
            return;
        }
        let cur = self.rec(a, strong);
        let writes = a.kind != AccessKind::Load;
        let size = a.size as usize;
        let tpb = self.launch.tpb;
        // Split borrows: the region is in `self.global`/`self.shared`, the rest is read.
        let Some((region, addr)) = region(
            &mut self.global,
            &mut self.last_region,
            &mut self.shared,
            mem,
            a.loc,
        ) else {
            return;
        };
        let Some(cells) = region.cells(addr, size) else {
            return;
        };
        let ts = &self.threads[me as usize];
        let read_sets = &mut self.read_sets;
        let mut found: [(u32, u32, Conflict); 4] = [(0, 0, Conflict::Raw); 4];
        let mut nfound = 0usize;
        let mut seen = |p: &Rec, c: Conflict, out: &mut Vec<(Rec, Conflict)>| {
            let k = (p.site, p.g, c);
            if found[..nfound].contains(&k) {
                return;
            }
            if nfound < found.len() {
                found[nfound] = k;
                nfound += 1;
            }
            out.push((*p, c));
        };
        let mut races: Vec<(Rec, Conflict)> = Vec::new();
        let ordered =
            |p: &Rec| -> bool { p.g == me || ts.clock.get(p.g / tpb, p.g % tpb) >= p.epoch };
        let conflicts = |p: &Rec| -> bool {
            !ordered(p)
                && !(p.strong() && strong && (p.g / tpb == me / tpb || (p.wide() && cur.wide())))
        };
        let mut memo: Option<(Cell, Cell)> = None;
        for cell in cells.iter_mut() {
            if let Some((before, after)) = memo {
                if *cell == before {
                    *cell = after;
                    continue;
                }
            }
            let before = *cell;
            // Against the last write.
            if !cell.w.is_empty() && conflicts(&cell.w) {
                seen(
                    &cell.w,
                    if writes { Conflict::Waw } else { Conflict::Raw },
                    &mut races,
                );
            }
            if writes {
                // Against the reads since.
                if cell.r.kind() == meta::READ_SET {
                    for r in read_sets.get(cell.r.epoch) {
                        if conflicts(r) {
                            seen(r, Conflict::War, &mut races);
                        }
                    }
                    read_sets.release(cell.r.epoch);
                } else if !cell.r.is_empty() && conflicts(&cell.r) {
                    seen(&cell.r, Conflict::War, &mut races);
                }
                cell.w = cur;
                cell.r = Rec::default();
            } else if cell.r.is_empty() {
                cell.r = cur;
            } else if cell.r.kind() == meta::READ_SET {
                if let Some(set) = read_sets.get_mut(cell.r.epoch) {
                    if set.last().is_some_and(|l| l.g == me) {
                        if let Some(l) = set.last_mut() {
                            *l = cur;
                        }
                    } else {
                        set.push(cur);
                        // Amortized pruning: reads ordered before this one are implied.
                        if set.len() >= 64 && set.len().is_power_of_two() {
                            set.retain(|r| !ordered(r));
                            set.push(cur);
                        }
                    }
                }
            } else if ordered(&cell.r) {
                cell.r = cur;
            } else {
                let i = read_sets.alloc([cell.r, cur]);
                cell.r = Rec {
                    epoch: i,
                    meta: meta::READ_SET,
                    ..Rec::default()
                };
            }
            let shared_set = before.r.kind() == meta::READ_SET || cell.r.kind() == meta::READ_SET;
            memo = if shared_set {
                None
            } else {
                Some((before, *cell))
            };
        }
        for (p, c) in races {
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
                    .push((key, raw)),
                _ if raw.lock_ids != (0, 0) => self.lock_pending.push((key, raw)),
                _ => self.commit(key, raw),
            }
        }
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
        if lp.is_empty() && lc.is_empty() {
            return (key, raw);
        }
        raw.lock = Some(if lp.iter().any(|l| lc.contains(l)) {
            LockProblem::Unordered
        } else if !lp.is_empty() && !lc.is_empty() {
            LockProblem::DifferentLocks
        } else {
            LockProblem::Unprotected
        });
        raw.class = RaceClass::LockMisuse;
        key.class = RaceClass::LockMisuse;
        (key, raw)
    }

    fn commit(&mut self, key: RaceKey, raw: RawRace) {
        let execution = self.races.executions;
        match self.races.races.get_mut(&key) {
            Some(r) => {
                r.occurrences += 1;
                if r.last_execution != execution {
                    r.last_execution = execution;
                    r.executions += 1;
                }
            }
            None => {
                self.races.races.insert(key, raw);
            }
        }
    }

    fn race(
        &mut self,
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
                .threads
                .get(cur.g as usize)
                .is_some_and(|t| t.blind.as_ref().is_some_and(|b| b.get(pc, pt) >= p.epoch));
            if scope_only || blind_orders {
                RaceClass::InsufficientScope
            } else {
                RaceClass::InterBlock
            }
        };
        let key = RaceKey {
            kernel: self.launch.kernel.clone(),
            first_site: p.site,
            second_site: cur.site,
            class,
            conflict,
        };
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
            sem: match (r.meta >> meta::SEM_SHIFT) & 0b111 {
                0 => Sem::Weak,
                1 => Sem::Volatile,
                2 => Sem::Relaxed,
                3 => Sem::Acquire,
                4 => Sem::Release,
                5 => Sem::AcqRel,
                _ => Sem::Sc,
            },
            scope: match (r.meta >> meta::SCOPE_SHIFT) & 0b11 {
                0 => Scope::Cta,
                1 => Scope::Cluster,
                2 => Scope::Gpu,
                _ => Scope::Sys,
            },
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
                lock_ids: (p.locks, cur.locks),
                occurrences: 1,
                executions: 1,
                last_execution: execution,
            },
        )
    }

    /// The thread's clock with its own entry, as published by a release.
    fn snapshot(&mut self, t: ThreadRef) -> Option<VClock> {
        let tpb = self.launch.tpb;
        let ts = self.threads.get_mut(t.global as usize)?;
        let mut c = ts.clock.clone();
        c.raise(t.cta, t.tid, tpb, ts.epoch);
        ts.clock = c.clone();
        Some(c)
    }

    /// What a strong write by `t` publishes: (any scope, ≥ `.gpu`).
    fn publication(&mut self, a: &Access) -> (Option<VClock>, Option<VClock>) {
        let t = a.thread;
        if matches!(a.sem, Sem::Release | Sem::AcqRel | Sem::Sc) {
            let snap = self.snapshot(t);
            if let Some(ts) = self.threads.get_mut(t.global as usize) {
                ts.epoch += 1;
            }
            let w = if wide(a.scope) { snap.clone() } else { None };
            (snap, w)
        } else {
            let Some(ts) = self.threads.get(t.global as usize) else {
                return (None, None);
            };
            let w = if wide(a.scope) {
                ts.rel_fence[1].clone()
            } else {
                None
            };
            (ts.rel_fence[0].clone(), w)
        }
    }

    /// A strong read of `a.loc` by `a.thread` that observed `value`.
    fn observe(&mut self, a: &Access, value: u64, acquire_now: bool) {
        let Some(s) = self.sync.get(&loc_key(a.loc)) else {
            return;
        };
        if s.size == a.size && s.value != value {
            return;
        }
        let Some(ts) = self.threads.get_mut(a.thread.global as usize) else {
            return;
        };
        let same = s.cta == a.thread.cta;
        let none = None;
        // (reaches the reader for real, reaches it only if every scope were `.gpu`)
        let (real, blind): ([&Option<VClock>; 2], [&Option<VClock>; 2]) = if same {
            ([&s.narrow, &s.wide], [&none, &none])
        } else if wide(a.scope) {
            ([&s.wide, &none], [&s.narrow, &none])
        } else {
            ([&none, &none], [&s.narrow, &s.wide])
        };
        let from = usize::from(!same);
        for c in real.into_iter().flatten() {
            if acquire_now {
                ts.join(c);
            } else {
                join_opt(&mut ts.pending[from], &Some(c.clone()));
            }
        }
        for c in blind.into_iter().flatten() {
            if acquire_now {
                ts.join_blind(c);
            } else {
                join_opt(&mut ts.pending_blind, &Some(c.clone()));
            }
        }
    }

    fn on_load(&mut self, mem: &Memory, a: &Access, buf: &[u8]) {
        let strong = a.sem != Sem::Weak;
        self.check(mem, a, strong);
        if strong && !self.sync.is_empty() {
            let mut b = [0u8; 8];
            let n = buf.len().min(8);
            b[..n].copy_from_slice(&buf[..n]);
            let acquire = matches!(a.sem, Sem::Acquire | Sem::AcqRel | Sem::Sc);
            self.observe(a, u64::from_le_bytes(b), acquire);
        }
    }

    fn on_store(&mut self, mem: &Memory, a: &Access, data: &[u8]) {
        let g = a.thread.global as usize;
        let strong = match a.sem {
            Sem::Weak => false,
            Sem::Volatile => self.threads.get(g).is_some_and(|t| t.fenced),
            _ => true,
        };
        self.check(mem, a, strong);
        let mut b = [0u8; 8];
        let n = data.len().min(8);
        b[..n].copy_from_slice(&data[..n]);
        let value = u64::from_le_bytes(b);
        if strong {
            let (narrow, wide) = self.publication(a);
            let key = loc_key(a.loc);
            if narrow.is_none() && wide.is_none() {
                self.sync.remove(&key);
            } else {
                self.sync.insert(
                    key,
                    LocSync {
                        value,
                        size: a.size,
                        cta: a.thread.cta,
                        narrow,
                        wide,
                    },
                );
            }
        }
        if value == 0 {
            self.unlock(a);
        }
    }

    fn on_atomic(&mut self, mem: &Memory, a: &Access, old: u64, new: u64) {
        self.check(mem, a, true);
        // Lenient: a read-modify-write acquires what it reads (see the module docs).
        if !self.sync.is_empty() {
            self.observe(a, old, true);
        }
        let (narrow, wide) = self.publication(a);
        let key = loc_key(a.loc);
        let cta = a.thread.cta;
        match self.sync.get_mut(&key) {
            Some(s) => {
                if s.cta != cta {
                    s.narrow = None;
                    s.cta = cta;
                }
                join_opt(&mut s.narrow, &narrow);
                join_opt(&mut s.wide, &wide);
                s.value = new;
                s.size = a.size;
            }
            None if narrow.is_some() || wide.is_some() => {
                self.sync.insert(
                    key,
                    LocSync {
                        value: new,
                        size: a.size,
                        cta,
                        narrow,
                        wide,
                    },
                );
            }
            None => {}
        }
        let flags = self.site_flags.get(a.site as usize).copied().unwrap_or(0);
        if flags & SITE_CAS != 0 {
            // The thread's own earlier weak read of this address fed this CAS: validated.
            self.deferred.remove(&(a.thread.global, loc_key(a.loc)));
        }
        if flags & (SITE_CAS | SITE_EXCH) != 0 {
            if old == 0 && new != 0 {
                self.lock(a);
            } else if new == 0 {
                self.unlock(a);
            }
        }
    }

    fn lock(&mut self, a: &Access) {
        let Some(ts) = self.threads.get(a.thread.global as usize) else {
            return;
        };
        let mut set = self.lock_table.get(ts.locks).to_vec();
        let k = loc_key(a.loc);
        if set.len() >= 8 || set.contains(&k) {
            return;
        }
        set.push(k);
        set.sort_unstable();
        let id = self.lock_table.intern(set);
        if let Some(ts) = self.threads.get_mut(a.thread.global as usize) {
            ts.locks = id;
        }
    }

    fn unlock(&mut self, a: &Access) {
        let Some(ts) = self.threads.get(a.thread.global as usize) else {
            return;
        };
        if ts.locks == 0 {
            return;
        }
        let k = loc_key(a.loc);
        let set = self.lock_table.get(ts.locks);
        if !set.contains(&k) {
            return;
        }
        let set: Vec<u64> = set.iter().copied().filter(|l| *l != k).collect();
        self.lock_table.confirmed.insert(k);
        let id = self.lock_table.intern(set);
        if let Some(ts) = self.threads.get_mut(a.thread.global as usize) {
            ts.locks = id;
        }
    }

    fn on_fence(&mut self, f: &Fence) {
        let t = f.thread;
        let g = t.global as usize;
        let cta = t.cta as usize;
        let gpu = wide(f.scope);
        let acquire = matches!(
            f.kind,
            FenceKind::Sc | FenceKind::AcqRel | FenceKind::Acquire
        );
        let release = matches!(
            f.kind,
            FenceKind::Sc | FenceKind::AcqRel | FenceKind::Release
        );
        let Some(ts) = self.threads.get_mut(g) else {
            return;
        };
        if acquire {
            if let Some(c) = ts.pending[0].take() {
                ts.join(&c);
            }
            if let Some(c) = ts.pending[1].take() {
                if gpu {
                    ts.join(&c);
                } else {
                    ts.join_blind(&c);
                }
            }
            if let Some(c) = ts.pending_blind.take() {
                ts.join_blind(&c);
            }
        }
        if f.kind == FenceKind::Sc {
            if let Some(c) = self.sc_cta.get(cta) {
                ts.join(c);
            }
            if gpu {
                ts.join(&self.sc_gpu);
            } else {
                if !self.sc_blind_live {
                    // First `.cta` fence.sc: from now on keep the scope-blind SC clock.
                    self.sc_blind_live = true;
                    self.sc_blind = self.sc_gpu.clone();
                    for c in &self.sc_cta {
                        self.sc_blind.join(c);
                    }
                }
                ts.join_blind(&self.sc_blind);
            }
        }
        if !release {
            return;
        }
        let Some(snap) = self.snapshot(t) else { return };
        if f.kind == FenceKind::Sc {
            if let Some(c) = self.sc_cta.get_mut(cta) {
                c.join(&snap);
            }
            if gpu {
                self.sc_gpu.join(&snap);
            }
            if self.sc_blind_live {
                self.sc_blind.join(&snap);
            }
        }
        let ts = &mut self.threads[g];
        if gpu {
            ts.rel_fence[1] = Some(snap.clone());
        }
        ts.rel_fence[0] = Some(snap);
        ts.fenced = true;
        ts.epoch += 1;
    }

    fn barrier_key(b: &Barrier) -> (u8, u32, u32) {
        match b.kind {
            BarrierKind::Warp => (1, b.thread.warp, 0),
            BarrierKind::Sync | BarrierKind::Arrive => (0, b.thread.cta, b.id),
        }
    }

    fn on_arrive(&mut self, b: &Barrier) {
        let t = b.thread;
        let tpb = self.launch.tpb;
        let Some(ts) = self.threads.get_mut(t.global as usize) else {
            return;
        };
        let acc = self.barriers.entry(Self::barrier_key(b)).or_default();
        acc.fold(&ts.clock);
        acc.clock.raise(t.cta, t.tid, tpb, ts.epoch);
        if let Some(bl) = &ts.blind {
            acc.blind_parts.push(bl.clone());
        }
        ts.epoch += 1;
    }

    fn on_release(&mut self, b: &Barrier, threads: &[ThreadRef]) {
        let Some(acc) = self.barriers.remove(&Self::barrier_key(b)) else {
            return;
        };
        let blind = if acc.blind_parts.is_empty() {
            None
        } else {
            let mut bl = acc.clock.clone();
            for p in &acc.blind_parts {
                bl.join(p);
            }
            Some(bl)
        };
        for t in threads {
            if let Some(ts) = self.threads.get_mut(t.global as usize) {
                ts.clock = acc.clock.clone();
                ts.blind = blind.clone();
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

    #[inline]
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let mut new = 0;
        let mut f = |old: u64| {
            new = rmw(old);
            new
        };
        let old = self.inner.atomic(mem, a, &mut f)?;
        self.on_atomic(mem, a, old, new);
        Ok(old)
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
        self.inner.thread_exit(mem, t);
    }

    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.inner.stalled(mem)
    }

    fn launch_end(&mut self, mem: &mut Memory) {
        let mut held: Vec<_> = self.deferred.drain().flat_map(|(_, v)| v).collect();
        held.append(&mut self.lock_pending);
        for (key, raw) in held {
            let (key, raw) = self.finalize(key, raw);
            self.commit(key, raw);
        }
        self.inner.launch_end(mem);
    }
}
