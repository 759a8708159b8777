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

/// `_Z6reduceILi128EEvPf` → `reduce<128>`: a kernel's name as written at its launch (no
/// parameters, no return type); a name that does not demangle (`extern "C"`) stays.
pub fn demangle(name: &str) -> String {
    let opts = cpp_demangle::DemangleOptions::default()
        .no_params()
        .no_return_type();
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&opts).ok())
        .unwrap_or_else(|| name.to_string())
}
