//! fencehound's campaign runner: campaign files, seeded executions under write buffers on
//! the vgpu backend, verdicts judged by oracles, reports, and replay.
//!
//! ```text
//! Campaign::load ─► prepare (NVRTC, sc reference run) ─► runner::run (tokio, jobs)
//!     ─► execution::execute (Device + WriteBuffers + Scheduler) ─► oracle ─► Verdict
//!     ─► Report (JSON, atomic, Table IV summary) ─► replay (same PTX, seed, p, model)
//! ```
//!
//! Backends: the vgpu (CPU) is the one implemented. A CUDA backend (cudarc, with the
//! device-side rewrite of the write buffers) is future work; the selection function in
//! `fencehound_handlers::select` is specified so that it can make the same choices.

pub mod backend;
pub mod campaign;
pub mod execution;
pub mod report;
pub mod runner;
pub mod seeds;
pub mod verdict;

pub use campaign::{Campaign, CampaignError, Expect};
pub use execution::{
    execute, prepare, prepare_with_ptx, ExecResult, ExecSpec, Filters, PrepareError, Prepared,
};
pub use report::{Cell, ExecRecord, Report};
pub use runner::{Event, Job, Plan};
pub use verdict::Verdict;
