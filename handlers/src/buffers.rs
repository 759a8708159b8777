//! Per-thread write buffers as a vgpu [`Hooks`] implementation.
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
//! Deliberately not modelled: delayed *loads* (load buffering), non-multi-copy-atomic
//! propagation between CTAs (IRIW), speculation. Such outcomes are allowed by PTX but we
//! never produce them; the litmus results file lists them.

use crate::select;
use crate::stats::{BufferStats, DrainReason};
use fencehound_vgpu::hooks::RmwFn;
use fencehound_vgpu::{
    Access, Barrier, BarrierKind, Fence, FenceKind, Hooks, LaunchInfo, Location, MemError, Memory,
    Scope, Sem, SiteId, ThreadRef,
};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, VecDeque};

/// The memory model the buffers implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// No buffering: sequential consistency (the golden reference).
    Sc,
    /// Flat per-thread buffers; every fence, release and barrier drains to memory.
    Bugaroo,
    /// Scope-aware: CTA-scope drains go to a per-CTA overlay.
    Scoped,
}

impl Model {
    pub fn parse(s: &str) -> Option<Model> {
        match s {
            "sc" => Some(Model::Sc),
            "bugaroo" => Some(Model::Bugaroo),
            "scoped" => Some(Model::Scoped),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Model::Sc => "sc",
            Model::Bugaroo => "bugaroo",
            Model::Scoped => "scoped",
        }
    }
}

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
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    loc: Location,
    value: u64,
    size: u8,
    site: SiteId,
    seq: u64,
    thread: u32,
}

impl Entry {
    fn overlaps(&self, loc: Location, size: u32) -> bool {
        same_space(self.loc, loc) && {
            let (a, b) = (self.loc.addr(), loc.addr());
            a < b + size as u64 && b < a + self.size as u64
        }
    }
}

fn same_space(a: Location, b: Location) -> bool {
    match (a, b) {
        (Location::Global(_), Location::Global(_)) => true,
        (Location::Shared { cta: x, .. }, Location::Shared { cta: y, .. }) => x == y,
        _ => false,
    }
}

/// Index key: the 8-byte block an access lies in (accesses are naturally aligned and at
/// most 8 bytes, so each lies in exactly one block).
fn key(loc: Location) -> u64 {
    match loc {
        Location::Global(a) => a & !7,
        Location::Shared { cta, offset } => (1 << 63) | ((cta as u64) << 32) | (offset & !7) as u64,
    }
}

#[derive(Debug, Default, Clone)]
struct ThreadBuf {
    /// [global, shared]
    q: [VecDeque<Entry>; 2],
    stores: u64,
}

pub struct WriteBuffers {
    cfg: BufferConfig,
    threshold: u64,
    launch: u32,
    active: bool,
    tpc: u32,
    threads: Vec<ThreadBuf>,
    overlays: Vec<VecDeque<Entry>>,
    /// Buffered entries (thread buffers and overlays) per 8-byte block.
    pending: HashMap<u64, u32>,
    liveness_drains: u64,
    /// Threads whose buffers are not empty, and each thread's index in it.
    holders: Vec<u32>,
    holder_pos: Vec<u32>,
    seq: u64,
    stats: BufferStats,
    trace: Vec<TraceEvent>,
}

fn sp(loc: Location) -> usize {
    loc.is_shared() as usize
}

impl WriteBuffers {
    pub fn new(cfg: BufferConfig) -> Self {
        WriteBuffers {
            threshold: select::threshold(cfg.p_w),
            cfg,
            launch: 0,
            active: false,
            tpc: 1,
            threads: Vec::new(),
            overlays: Vec::new(),
            pending: HashMap::new(),
            liveness_drains: 0,
            holders: Vec::new(),
            holder_pos: Vec::new(),
            seq: 0,
            stats: BufferStats::default(),
            trace: Vec::new(),
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
    }

    /// Approximate heap bytes held by the buffers (for the memory benchmark).
    pub fn heap_bytes(&self) -> usize {
        let e = std::mem::size_of::<Entry>();
        self.threads.len() * std::mem::size_of::<ThreadBuf>()
            + self
                .threads
                .iter()
                .map(|t| (t.q[0].capacity() + t.q[1].capacity()) * e)
                .sum::<usize>()
            + self
                .overlays
                .iter()
                .map(|o| o.capacity() * e)
                .sum::<usize>()
            + self.pending.capacity() * 16
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
    fn drain_one_random(&mut self, mem: &mut Memory, reason: DrainReason) -> bool {
        let overlays: Vec<usize> = if self.cfg.model == Model::Scoped {
            self.overlays
                .iter()
                .enumerate()
                .filter(|(_, o)| !o.is_empty())
                .map(|(c, _)| c)
                .collect()
        } else {
            Vec::new()
        };
        let n = self.holders.len() + overlays.len();
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
        let heads = |q: &VecDeque<Entry>| -> Vec<usize> {
            let mut seen: Vec<u64> = Vec::new();
            let mut out = Vec::new();
            for (i, e) in q.iter().enumerate() {
                let k = key(e.loc);
                if !seen.contains(&k) {
                    seen.push(k);
                    out.push(i);
                }
            }
            out
        };
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
            let h = heads(&tb.q[s]);
            let i = h[(r2 % h.len() as u64) as usize];
            if let Some(e) = self.threads[g as usize].q[s].remove(i) {
                self.commit_entry(mem, g / self.tpc, e, reason, None);
                let mut counts = [0, 0];
                counts[s] = 1;
                self.record_flush(counts, reason);
            }
            self.sync_holder(g);
        } else {
            let c = overlays[pick - self.holders.len()];
            let h = heads(&self.overlays[c]);
            let i = h[(r2 % h.len() as u64) as usize];
            if let Some(e) = self.overlays[c].remove(i) {
                Self::write_mem(mem, &e);
                self.pend(e.loc, -1);
                self.note_drain(&e, Level::Memory, reason, None);
                *self.stats.drains.entry(reason).or_default() += 1;
            }
        }
        true
    }

    fn buffering(&self) -> bool {
        self.active && self.cfg.model != Model::Sc
    }

    fn pend(&mut self, loc: Location, delta: i32) {
        let k = key(loc);
        let c = self.pending.entry(k).or_insert(0);
        *c = c.saturating_add_signed(delta);
        if *c == 0 {
            self.pending.remove(&k);
        }
    }

    fn write_mem(mem: &mut Memory, e: &Entry) {
        // Addresses were checked when the store was buffered; allocations do not move.
        let _ = mem.write(e.loc, &e.value.to_le_bytes()[..e.size as usize]);
    }

    fn note_drain(&mut self, e: &Entry, to: Level, reason: DrainReason, at: Option<SiteId>) {
        if self.cfg.trace {
            self.trace.push(TraceEvent::Drained {
                seq: e.seq,
                thread: e.thread,
                site: e.site,
                loc: e.loc,
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
        let Some(ov) = self.overlays.get_mut(cta as usize) else {
            return;
        };
        if ov.is_empty() || !self.pending.contains_key(&key(loc)) {
            return;
        }
        let mut i = 0;
        let mut drained = Vec::new();
        while i < ov.len() {
            if ov[i].overlaps(loc, size) {
                if let Some(e) = ov.remove(i) {
                    drained.push(e);
                }
            } else {
                i += 1;
            }
        }
        for e in drained {
            Self::write_mem(mem, &e);
            self.pend(e.loc, -1);
            self.note_drain(&e, Level::Memory, reason, at);
        }
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
        self.drain_overlay_addr(mem, cta, e.loc, e.size as u32, DrainReason::Coherence, at);
        Self::write_mem(mem, &e);
        self.pend(e.loc, -1);
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
        if tb.q[s].is_empty() {
            return;
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < tb.q[s].len() {
            if tb.q[s][i].overlaps(loc, size) {
                if let Some(e) = tb.q[s].remove(i) {
                    out.push(e);
                }
            } else {
                i += 1;
            }
        }
        let n = out.len() as u32;
        self.sync_holder(t.global);
        for e in out {
            self.place(mem, t.cta, e, level, reason, at);
        }
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
        if level == Level::Cta && self.cfg.model == Model::Scoped && !e.loc.is_shared() {
            self.note_drain(&e, Level::Cta, reason, at);
            if let Some(ov) = self.overlays.get_mut(cta as usize) {
                ov.push_back(e);
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
        let counts = [tb.q[0].len() as u32, tb.q[1].len() as u32];
        // Merge both spaces in store order.
        let [qg, qs] = &mut tb.q;
        let mut all: Vec<Entry> = qg.drain(..).chain(qs.drain(..)).collect();
        all.sort_by_key(|e| e.seq);
        self.sync_holder(t.global);
        for e in all {
            self.place(mem, t.cta, e, level, reason, at);
        }
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
        let entries: Vec<Entry> = ov.drain(..).collect();
        for e in entries {
            Self::write_mem(mem, &e);
            self.pend(e.loc, -1);
            self.note_drain(&e, Level::Memory, reason, at);
        }
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
    fn lookup(entries: &VecDeque<Entry>, loc: Location, size: u32) -> Result<Option<u64>, ()> {
        let mut covered = 0u64; // bit i: byte i known
        let mut value = 0u64;
        let full = if size >= 8 { 0xff } else { (1u64 << size) - 1 };
        let mut any = false;
        for e in entries.iter().rev() {
            if !e.overlaps(loc, size) {
                continue;
            }
            any = true;
            let (ea, la) = (e.loc.addr(), loc.addr());
            for i in 0..size as u64 {
                let addr = la + i;
                if addr >= ea && addr < ea + e.size as u64 && covered >> i & 1 == 0 {
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

impl Hooks for WriteBuffers {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.launch = info.launch;
        self.active = self
            .cfg
            .kernels
            .as_ref()
            .is_none_or(|k| k.contains(info.kernel));
        self.tpc = info.threads_per_cta.max(1);
        self.threads = vec![ThreadBuf::default(); info.threads as usize];
        self.overlays = vec![VecDeque::new(); info.ctas as usize];
        self.liveness_drains = 0;
        self.holders.clear();
        self.holder_pos = vec![u32::MAX; info.threads as usize];
        self.pending.clear();
    }

    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        if !self.buffering() {
            return mem.read(a.loc, buf);
        }
        let t = a.thread;
        let size = a.size;
        let s = sp(a.loc);
        if self.pending.contains_key(&key(a.loc)) {
            if let Some(tb) = self.threads.get(t.global as usize) {
                match Self::lookup(&tb.q[s], a.loc, size) {
                    Ok(Some(v)) => {
                        // Validate the address like a real load would.
                        mem.read(a.loc, buf)?;
                        buf.copy_from_slice(&v.to_le_bytes()[..size as usize]);
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
                    match Self::lookup(ov, a.loc, size) {
                        Ok(Some(v)) => {
                            mem.read(a.loc, buf)?;
                            buf.copy_from_slice(&v.to_le_bytes()[..size as usize]);
                            self.stats.overlay_loads += 1;
                            return Ok(());
                        }
                        Ok(None) => {}
                        Err(()) => self.drain_overlay_addr(
                            mem,
                            t.cta,
                            a.loc,
                            size,
                            DrainReason::PartialOverlap,
                            Some(a.site),
                        ),
                    }
                }
            }
        }
        mem.read(a.loc, buf)?;
        if self.cfg.trace && self.pending.contains_key(&key(a.loc)) {
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
        if self.pending.contains_key(&key(a.loc)) {
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
            return mem.write(a.loc, data);
        };
        let n = tb.stores;
        tb.stores += 1;
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
            .is_none_or(|set| set.contains(&a.site));
        let mut v = [0u8; 8];
        v[..data.len()].copy_from_slice(data);
        let value = u64::from_le_bytes(v);
        if eligible && select::selected(self.cfg.seed, self.launch, t.global, n, self.threshold) {
            if self.threads[t.global as usize].q[s].len() as u32 >= self.cfg.capacity {
                let entries: Vec<Entry> = self.threads[t.global as usize].q[s].drain(..).collect();
                let cnt = entries.len() as u32;
                for e in entries {
                    self.commit_entry(mem, t.cta, e, DrainReason::Full, Some(a.site));
                }
                let mut counts = [0, 0];
                counts[s] = cnt;
                self.record_flush(counts, DrainReason::Full);
            }
            self.seq += 1;
            let e = Entry {
                loc: a.loc,
                value,
                size: size as u8,
                site: a.site,
                seq: self.seq,
                thread: t.global,
            };
            let tb = &mut self.threads[t.global as usize];
            tb.q[s].push_back(e);
            let occ = (tb.q[0].len() + tb.q[1].len()) as u32;
            self.sync_holder(t.global);
            self.stats.peak_occupancy = self.stats.peak_occupancy.max(occ);
            self.stats.space(shared).stores_buffered += 1;
            self.pend(a.loc, 1);
            if self.cfg.trace {
                self.trace.push(TraceEvent::Buffered {
                    seq: e.seq,
                    thread: t.global,
                    site: a.site,
                    loc: a.loc,
                    size: e.size,
                    value,
                });
            }
            Ok(())
        } else {
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
            let t = a.thread;
            if matches!(a.sem, Sem::Release | Sem::AcqRel | Sem::Sc) {
                self.drain_thread(mem, t, a.scope, DrainReason::Release, Some(a.site));
            }
            if self.pending.contains_key(&key(a.loc)) {
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
        mem.write_u64(a.loc, a.size, rmw(old))?;
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

    fn thread_exit(&mut self, _mem: &mut Memory, _t: ThreadRef) {
        // An exited thread's buffered stores stay buffered: nothing obliges them to become
        // visible before kernel exit, and draining them at random moments (liveness, the
        // final drain) is what produces outcomes like 2+2W. Spinning waiters are served
        // by the liveness rule.
    }

    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.buffering() && self.drain_one_random(mem, DrainReason::Liveness)
    }

    fn launch_end(&mut self, mem: &mut Memory) {
        if self.buffering() {
            // Every thread has exited: what remains drains in a random order (per address
            // oldest first), which decides races between threads' stores (2+2W).
            while self.drain_one_random(mem, DrainReason::KernelExit) {}
            self.drain_all(mem);
        }
        self.active = false;
    }
}
