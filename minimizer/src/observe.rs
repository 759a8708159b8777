//! What executions show about each fence and store, for judging them honestly:
//!
//! - **coverage**: how often each fence copy ran. A copy no execution reached (the tail of
//!   an unrolled loop the campaign's sizes never enter) says nothing: "not exercised".
//! - **drains**: whether a fence ever made buffered stores visible (from the write
//!   buffers' trace, `Drained { reason: Fence, at }`). Under store buffering a fence that
//!   never had anything to drain cannot change any execution when removed.
//! - **acquire side**: which loads a fence orders before later accesses: the global/shared
//!   loads and atomics the same thread executed since its previous fence of at least the
//!   same scope (a `__syncthreads()` ends the window for CTA-scope fences, and for shared
//!   memory loads, which only the CTA's own threads write), restricted to loads of
//!   locations that another thread of the launch writes (*communicating* loads; a read of
//!   input no one writes needs no ordering). Store-buffering models never delay loads, so
//!   they cannot observe this side of a fence.
//! - **load-to-store ordering**: the stores a thread executes after a fence, up to its next
//!   fence, restricted to stores of locations another thread reads. A fence with a
//!   communicating load before it and such a store after it orders a load before a store
//!   (the load-buffering shape), which the `weak` model cannot produce: its reads only see
//!   stores that already executed.
//! - **warp locality**: per store site, whether every load of its values by another
//!   thread came from the writer's warp — the evidence for suggesting `__syncwarp()`.

//!
//! A whole program runs in its own process: there, fencehound's CUDA runtime writes the
//! main module's events to a log (`fencehound_cudart_protocol::events`) that the runner
//! replays into this observer, and a log cut short (too large, or a process killed
//! mid-launch) marks the observation [`FenceObserver::incomplete`], after which the audit
//! says "cannot judge" rather than conclude anything from what it did not see.

use fencehound_fuzzer::Observer;
use fencehound_vgpu::{
    Access, AccessKind, Barrier, BarrierKind, Fence, LaunchInfo, Location, Scope, SiteId,
};
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Debug, Clone, Default)]
struct ThreadWindow {
    /// Load sites since the last fence of any scope or CTA barrier.
    since_cta: Vec<SiteId>,
    /// Load sites since the last device-or-wider fence, and whether the load was of
    /// shared memory (a CTA barrier orders those for every observer there is).
    since_gpu: Vec<(SiteId, bool)>,
    /// The thread's last fence, until its next one: the stores after it are its later
    /// stores.
    last_fence: Option<SiteId>,
}

#[derive(Debug, Clone)]
struct Word {
    writer: u32,
    multi_writer: bool,
    reader: u32,
    multi_reader: bool,
    reader_sites: Vec<SiteId>,
    writer_sites: Vec<SiteId>,
    /// The last store's thread, warp and site.
    last_store: Option<(u32, u32, SiteId)>,
}

const NONE: u32 = u32::MAX;

/// Accumulates over every launch of every execution it observes.
#[derive(Debug, Default)]
pub struct FenceObserver {
    threads: Vec<ThreadWindow>,
    words: HashMap<(bool, u32, u64), Word>,
    /// Executions of each fence site.
    pub reached: HashMap<SiteId, u64>,
    /// Load sites executed before each fence site in its ordering window.
    prior_loads: HashMap<SiteId, BTreeSet<SiteId>>,
    /// Load sites that read a location another thread writes in the same launch.
    communicating: HashSet<SiteId>,
    /// Store sites after each fence site, up to the thread's next fence.
    later_stores: HashMap<SiteId, BTreeSet<SiteId>>,
    /// Store sites that wrote a location another thread reads in the same launch.
    communicating_stores: HashSet<SiteId>,
    /// Per store site: loads of its value by another thread in the same warp / another warp.
    pub store_readers: HashMap<SiteId, (u64, u64)>,
    /// Why some execution was not seen whole (a program's event log cut short): then no
    /// conclusion may rest on something not having been seen.
    pub incomplete: Option<String>,
}

fn key(loc: Location) -> (bool, u32, u64) {
    match loc {
        Location::Global(a) => (false, 0, a >> 2),
        Location::Shared { cta, offset } => (true, cta, offset as u64 >> 2),
    }
}

impl FenceObserver {
    /// Ends the current launch: decides which loads communicated.
    pub fn finish_launch(&mut self) {
        for w in self.words.values() {
            let written = w.writer != NONE;
            let read = w.reader != NONE;
            let private = !w.multi_writer && !w.multi_reader && w.writer == w.reader;
            if written && read && !private {
                self.communicating.extend(w.reader_sites.iter().copied());
                self.communicating_stores
                    .extend(w.writer_sites.iter().copied());
            }
        }
        self.words.clear();
        self.threads.clear();
    }

    /// Adds what another observer saw (each must have finished its last launch).
    pub fn merge(&mut self, o: FenceObserver) {
        if self.incomplete.is_none() {
            self.incomplete = o.incomplete;
        }
        for (k, v) in o.reached {
            *self.reached.entry(k).or_default() += v;
        }
        for (k, v) in o.prior_loads {
            self.prior_loads.entry(k).or_default().extend(v);
        }
        self.communicating.extend(o.communicating);
        for (k, v) in o.later_stores {
            self.later_stores.entry(k).or_default().extend(v);
        }
        self.communicating_stores.extend(o.communicating_stores);
        for (k, (a, b)) in o.store_readers {
            let e = self.store_readers.entry(k).or_default();
            e.0 += a;
            e.1 += b;
        }
    }

    /// A communicating load this fence orders (its acquire side), if any.
    pub fn acquire_side(&self, fence: SiteId) -> Option<SiteId> {
        self.prior_loads
            .get(&fence)?
            .iter()
            .copied()
            .find(|l| self.communicating.contains(l))
    }

    /// A store of memory another thread reads that this fence orders after its earlier
    /// loads (the store side of a load-to-store ordering), if any.
    pub fn later_store(&self, fence: SiteId) -> Option<SiteId> {
        self.later_stores
            .get(&fence)?
            .iter()
            .copied()
            .find(|s| self.communicating_stores.contains(s))
    }

    /// Whether every load of the given stores' values by another thread came from the
    /// writer's warp, and there was at least one.
    pub fn warp_local(&self, stores: &[SiteId]) -> bool {
        if self.incomplete.is_some() {
            return false;
        }
        let (mut same, mut other) = (0, 0);
        for s in stores {
            if let Some((a, b)) = self.store_readers.get(s) {
                same += a;
                other += b;
            }
        }
        same > 0 && other == 0
    }

    fn window(&mut self, t: u32) -> Option<&mut ThreadWindow> {
        let t = t as usize;
        if t >= self.threads.len() {
            // Launch info gives the size; stay safe if it did not.
            self.threads.resize(t + 1, ThreadWindow::default());
        }
        self.threads.get_mut(t)
    }

    fn load(&mut self, a: &Access) {
        let t = a.thread.global;
        let warp = a.thread.warp;
        if let Some(w) = self.window(t) {
            if !w.since_cta.contains(&a.site) {
                w.since_cta.push(a.site);
            }
            let e = (a.site, a.loc.is_shared());
            if !w.since_gpu.contains(&e) {
                w.since_gpu.push(e);
            }
        }
        for k in words(a) {
            let w = self.words.entry(k).or_insert_with(new_word);
            if w.reader == NONE {
                w.reader = t;
            } else if w.reader != t {
                w.multi_reader = true;
            }
            if !w.reader_sites.contains(&a.site) {
                w.reader_sites.push(a.site);
            }
            if let Some((wt, ww, site)) = w.last_store {
                if wt != t {
                    let e = self.store_readers.entry(site).or_default();
                    if ww == warp {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                    }
                }
            }
        }
    }

    fn store(&mut self, a: &Access) {
        let t = a.thread.global;
        if let Some(f) = self.window(t).and_then(|w| w.last_fence) {
            let e = self.later_stores.entry(f).or_default();
            if e.len() < 64 {
                e.insert(a.site);
            }
        }
        for k in words(a) {
            let w = self.words.entry(k).or_insert_with(new_word);
            if w.writer == NONE {
                w.writer = t;
            } else if w.writer != t {
                w.multi_writer = true;
            }
            w.last_store = Some((t, a.thread.warp, a.site));
            if !w.writer_sites.contains(&a.site) {
                w.writer_sites.push(a.site);
            }
        }
    }
}

fn new_word() -> Word {
    Word {
        writer: NONE,
        multi_writer: false,
        reader: NONE,
        multi_reader: false,
        reader_sites: Vec::new(),
        writer_sites: Vec::new(),
        last_store: None,
    }
}

/// The 4-byte words an access touches.
fn words(a: &Access) -> impl Iterator<Item = (bool, u32, u64)> {
    let (s, c, w0) = key(a.loc);
    let n = (a.loc.addr() % 4 + a.size as u64).div_ceil(4).max(1);
    (0..n).map(move |i| (s, c, w0 + i))
}

impl Observer for FenceObserver {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.finish_launch();
        self.threads = vec![ThreadWindow::default(); info.threads as usize];
    }

    fn access(&mut self, a: &Access) {
        match a.kind {
            AccessKind::Load => self.load(a),
            AccessKind::Store => self.store(a),
            AccessKind::Atomic => {
                self.load(a);
                self.store(a);
            }
        }
    }

    fn fence(&mut self, f: &Fence) {
        *self.reached.entry(f.site).or_default() += 1;
        let gpu = f.scope >= Scope::Gpu;
        let Some(w) = self.window(f.thread.global) else {
            return;
        };
        let window: Vec<SiteId> = if gpu {
            std::mem::take(&mut w.since_gpu)
                .into_iter()
                .map(|(s, _)| s)
                .collect()
        } else {
            w.since_cta.clone()
        };
        w.since_cta.clear();
        w.last_fence = Some(f.site);
        self.prior_loads.entry(f.site).or_default().extend(window);
    }

    fn incomplete(&mut self, why: &str) {
        self.incomplete.get_or_insert_with(|| why.to_string());
    }

    fn barrier(&mut self, b: &Barrier) {
        *self.reached.entry(b.site).or_default() += 1;
        if b.kind != BarrierKind::Warp {
            if let Some(w) = self.window(b.thread.global) {
                w.since_cta.clear();
                w.since_gpu.retain(|(_, shared)| !shared);
            }
        }
    }
}
