//! fencehound's campaign runner: campaign files, seeded executions under write buffers on
//! the vgpu backend, verdicts judged by oracles, reports, and replay.
//!
//! ```text
//! Campaign::load ─► prepare (NVRTC, sc reference run) ─► runner::run (tokio, jobs)
//!     ─► execution::execute (Device + WriteBuffers + Scheduler) ─► oracle ─► Verdict
//!     ─► Report (JSON, atomic, Table IV summary) ─► replay (same PTX, seed, p, model)
//! ```
//!
//! A campaign's subject is kernels and buffers ([`kernel_campaign`]) or a whole program
//! ([`program_campaign`], run as a child process by [`program`], as `fencehound exec`
//! does); [`execution::Subject`] is the one place that tells them apart. What both kinds
//! and every backend share is in [`types`].
//!
//! Backends ([`backend`]): the vgpu with native write buffers (the default), the vgpu
//! running the instrumented PTX (`fencehound_handlers::rewrite`), and NVIDIA GPUs through
//! the CUDA driver API in watchdog'd worker processes. [`backend::differential`] shows on
//! the vgpu that the instrumented PTX and the native handlers agree write for write.

pub mod backend;
pub mod campaign;
pub mod diff;
pub mod execution;
pub mod kernel_campaign;
pub mod lock;
pub mod program;
pub mod program_campaign;
pub mod report;
pub mod runner;
pub mod seeds;
pub mod types;
pub mod verdict;

pub use campaign::{Campaign, CampaignError, Expect};
pub use execution::{execute, execute_observed, prepare, prepare_with_ptx, Prepared, Subject};
pub use report::{Cell, ExecRecord, Report, Shard, Signature};
pub use runner::{Event, Job, Plan, RunOptions};
pub use types::{sha256_hex, ExecResult, ExecSpec, Filters, Observer, PrepareError};
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
