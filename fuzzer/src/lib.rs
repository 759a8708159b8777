//! fencehound's campaign runner: campaign files, seeded executions under write buffers on
//! the vgpu backend, verdicts judged by oracles, reports, and replay.
//!
//! ```text
//! Campaign::load ─► prepare (NVRTC, sc reference run) ─► runner::run (tokio, jobs)
//!     ─► execution::execute (Device + WriteBuffers + Scheduler) ─► oracle ─► Verdict
//!     ─► Report (JSON, atomic, Table IV summary) ─► replay (same PTX, seed, p, model)
//! ```
//!
//! Backends ([`backend`]): the vgpu with native write buffers (the default), the vgpu
//! running the instrumented PTX (`fencehound_handlers::rewrite`), and NVIDIA GPUs through
//! the CUDA driver API in watchdog'd worker processes. [`backend::differential`] shows on
//! the vgpu that the instrumented PTX and the native handlers agree write for write.

pub mod backend;
pub mod campaign;
pub mod diff;
pub mod execution;
pub mod lock;
pub mod program;
pub mod report;
pub mod runner;
pub mod seeds;
pub mod verdict;

pub use campaign::{Campaign, CampaignError, Expect};
pub use execution::{
    execute, execute_observed, prepare, prepare_with_ptx, ExecResult, ExecSpec, Filters, Observer,
    PrepareError, Prepared,
};
pub use report::{Cell, ExecRecord, Report, Shard, Signature};
pub use runner::{Event, Job, Plan, RunOptions};
pub use verdict::Verdict;
