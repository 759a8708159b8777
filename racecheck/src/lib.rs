//! fencehound's race check: shadow memory at byte precision over the vgpu's hook events,
//! with happens-before from barriers, warp syncs, kernel boundaries and the scoped
//! release/acquire patterns of the PTX memory model. See [`check`] for the model and what
//! it cannot see, [`clock`] for the clocks that scale to large grids.
//!
//! ```text
//! Device::launch_with(.., &mut RaceCheck::for_module(WriteBuffers::new(cfg), &dev, m), ..)
//!   └─ RaceCheck<H>: observes every access/fence/barrier, delegates to H
//! races().reports(&dev, m) ──► Vec<RaceReport> (class, RAW/WAR/WAW, both accesses with
//!                              CUDA file:line, allocation, missing synchronization)
//! ```

pub mod check;
pub use fencehound_hb::clock;
pub mod report;
pub mod shadow;

pub use check::{RaceCheck, ShadowStats};
pub use report::{
    AccessReport, Conflict, LockProblem, RaceClass, RaceKey, RaceReport, RaceSet, RaceSummary,
    RawAccess, RawRace, SourceLine,
};
