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
    }
}
