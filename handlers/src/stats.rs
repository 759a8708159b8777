//! Statistics of one execution: stores seen and buffered per space, forwarded loads,
//! flush lengths (the distribution Bugaroo plots in its Figures 3–4), peak occupancy.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why buffered entries became visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DrainReason {
    Fence,
    /// `st.release`, or an `atom`/`red` with release semantics.
    Release,
    Barrier,
    WarpSync,
    /// An atomic to the same address.
    Atomic,
    /// A store to an address already buffered (Bugaroo's write-after-write rule).
    WriteAfterWrite,
    /// A load that overlaps buffered entries only partly.
    PartialOverlap,
    /// The buffer reached its capacity.
    Full,
    ThreadExit,
    KernelExit,
    /// Another thread of the CTA wrote the address (coherence of the CTA overlay).
    Coherence,
    /// Nothing could make progress (spinning or blocked threads): the oldest entry drains.
    Liveness,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceStats {
    pub stores_seen: u64,
    pub stores_buffered: u64,
    /// Flush length (entries drained by one event) → number of such flushes.
    pub flush_lengths: BTreeMap<u32, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferStats {
    pub global: SpaceStats,
    pub shared: SpaceStats,
    /// Loads answered from the thread's own buffer.
    pub forwarded_loads: u64,
    /// Loads answered from the CTA overlay (`scoped` model).
    pub overlay_loads: u64,
    /// Most entries one thread held at once (both spaces).
    pub peak_occupancy: u32,
    pub drains: BTreeMap<DrainReason, u64>,
    /// The `weak` model's statistics (absent under the buffer models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak: Option<WeakStats>,
}

/// Statistics of the `weak` model (loads reading older stores).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeakStats {
    pub loads: u64,
    pub rmws: u64,
    /// Loads and RMWs that read an older store than the newest.
    pub stale_reads: u64,
    /// Of those, RMWs (possible only when the newer stores are not morally strong with
    /// the RMW, e.g. `.cta` atomics of another CTA).
    pub stale_rmws: u64,
    /// Stores that entered coherence order before later stores (not at the end).
    pub reordered_stores: u64,
    /// Times nothing made progress and loads were made to read the newest store.
    pub liveness: u64,
    /// Most 8-byte blocks with a history in one launch.
    pub histories_peak: u64,
    /// Most history entries alive at once.
    pub entries_peak: u64,
    /// Most heap bytes of histories and synchronization state at a launch's end.
    pub peak_heap: u64,
}

impl WeakStats {
    pub fn merge(&mut self, o: &WeakStats) {
        self.loads += o.loads;
        self.rmws += o.rmws;
        self.stale_reads += o.stale_reads;
        self.stale_rmws += o.stale_rmws;
        self.liveness += o.liveness;
        self.reordered_stores += o.reordered_stores;
        self.histories_peak = self.histories_peak.max(o.histories_peak);
        self.entries_peak = self.entries_peak.max(o.entries_peak);
        self.peak_heap = self.peak_heap.max(o.peak_heap);
    }
}

impl BufferStats {
    pub fn space(&mut self, shared: bool) -> &mut SpaceStats {
        if shared {
            &mut self.shared
        } else {
            &mut self.global
        }
    }

    /// Adds another execution's statistics.
    pub fn merge(&mut self, o: &BufferStats) {
        for (a, b) in [(&mut self.global, &o.global), (&mut self.shared, &o.shared)] {
            a.stores_seen += b.stores_seen;
            a.stores_buffered += b.stores_buffered;
            for (k, v) in &b.flush_lengths {
                *a.flush_lengths.entry(*k).or_default() += v;
            }
        }
        self.forwarded_loads += o.forwarded_loads;
        self.overlay_loads += o.overlay_loads;
        self.peak_occupancy = self.peak_occupancy.max(o.peak_occupancy);
        for (k, v) in &o.drains {
            *self.drains.entry(*k).or_default() += v;
        }
        if let Some(w) = &o.weak {
            self.weak.get_or_insert_with(Default::default).merge(w);
        }
    }
}
