//! The types every kind of subject ([`crate::kernel_campaign`], [`crate::program_campaign`])
//! and every backend ([`crate::backend`]) share: why a variant could not be prepared, what
//! one execution runs ([`ExecSpec`]) and what it produced ([`ExecResult`]), the unjudged
//! product of a kernel run ([`Raw`]), the [`Observer`] the minimizer watches executions
//! with, and [`sha256_hex`]. This module imports nothing else of the crate but
//! [`crate::verdict`], so both kinds of subject can sit on top of it.

use crate::verdict::Verdict;
use fencehound_handlers::{BufferStats, Model, TraceEvent};
use fencehound_oracle::Outputs;
use fencehound_vgpu::{SchedulerKind, SiteInfo};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// Why a variant could not be prepared. Every message starts with the campaign file and
/// names the key (`source`, `launch[0].kernel`, `oracle`) or variant involved.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("{campaign}: {message}")]
    Compile { campaign: String, message: String },
    #[error("{campaign}: {path}: {message}")]
    Parse {
        campaign: String,
        path: String,
        message: String,
    },
    #[error("{campaign}: variant `{variant}`: {message}")]
    Load {
        campaign: String,
        variant: String,
        message: String,
    },
    #[error(
        "{campaign}: variant `{variant}`: the reference (sc) run does not complete: {message}"
    )]
    Golden {
        campaign: String,
        variant: String,
        message: String,
    },
    #[error("{campaign}: no variant named `{variant}` (variants: {known})")]
    NoVariant {
        campaign: String,
        variant: String,
        known: String,
    },
    #[error("{campaign}: {message}")]
    Input { campaign: String, message: String },
}

/// Lowercase hex SHA-256 of `bytes` (PTX, campaign files, sources).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Which stores may be buffered (the minimizer narrows these down).
#[derive(Debug, Clone, PartialEq)]
pub struct Filters {
    pub global: bool,
    pub shared: bool,
    /// Only launches of these kernels buffer.
    pub kernels: Option<std::collections::BTreeSet<String>>,
    /// Only stores at these vgpu sites are buffered.
    pub sites: Option<std::collections::BTreeSet<u32>>,
}

impl Default for Filters {
    fn default() -> Self {
        Filters {
            global: true,
            shared: true,
            kernels: None,
            sites: None,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecSpec {
    pub id: u64,
    pub model: Model,
    pub p: f64,
    pub seed: u64,
    pub scheduler: SchedulerKind,
    pub trace: bool,
    pub filters: Filters,
    /// Run the shadow-memory race check alongside.
    pub race: bool,
}

impl ExecSpec {
    /// Execution `seed` (also its id) of `model` at `p_w = p` under the random scheduler,
    /// no filters, trace or race check.
    pub fn random(model: Model, p: f64, seed: u64) -> ExecSpec {
        ExecSpec {
            id: seed,
            model,
            p,
            seed,
            scheduler: SchedulerKind::Random,
            trace: false,
            filters: Filters::default(),
            race: false,
        }
    }

    /// The reference run: no buffering, round-robin scheduling.
    pub(crate) fn reference() -> ExecSpec {
        ExecSpec {
            id: u64::MAX,
            model: Model::Sc,
            p: 0.0,
            seed: 0,
            scheduler: SchedulerKind::RoundRobin { quantum: 1 },
            trace: false,
            filters: Filters::default(),
            race: false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ExecResult {
    pub verdict: Verdict,
    /// SHA-256 of every output buffer's bytes, in declaration order.
    pub output_hash: String,
    #[serde(skip)]
    pub outputs: Outputs,
    pub stats: BufferStats,
    pub lane_instructions: u64,
    pub wall_ms: u64,
    pub printf: String,
    #[serde(skip)]
    pub trace: Vec<TraceEvent>,
    #[serde(skip)]
    pub sites: Vec<SiteInfo>,
    /// Races found by the race check (empty unless requested).
    pub races: Vec<fencehound_racecheck::RaceReport>,
    /// Programs: the buffering trace as text, per launch (with `trace`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub program_trace: Vec<String>,
    /// Programs observed with `trace`: buffered stores each fence site drained (a kernel
    /// campaign's are in `trace`, as `Drained { reason: Fence }` events).
    #[serde(skip)]
    pub fence_drains: std::collections::BTreeMap<fencehound_vgpu::SiteId, u64>,
}

impl ExecResult {
    /// An execution that could not run at all.
    pub(crate) fn failed(verdict: Verdict, start: Instant) -> ExecResult {
        ExecResult {
            verdict,
            output_hash: String::new(),
            outputs: Outputs {
                buffers: Vec::new(),
            },
            stats: BufferStats::default(),
            lane_instructions: 0,
            wall_ms: start.elapsed().as_millis() as u64,
            printf: String::new(),
            trace: Vec::new(),
            sites: Vec::new(),
            races: Vec::new(),
            program_trace: Vec::new(),
            fence_drains: Default::default(),
        }
    }
}

/// What running a kernel campaign's launches produced, before judging (the kernel
/// backends fill it; [`crate::execution::judge_raw`] judges it).
pub(crate) struct Raw {
    pub(crate) outputs: Outputs,
    /// A launch that did not complete.
    pub(crate) outcome_verdict: Option<Verdict>,
    pub(crate) stats: BufferStats,
    pub(crate) lane_instructions: u64,
    pub(crate) printf: String,
    pub(crate) trace: Vec<TraceEvent>,
    pub(crate) sites: Vec<SiteInfo>,
    pub(crate) races: Vec<fencehound_racecheck::RaceReport>,
}

/// Sees every global/shared access, fence, barrier and launch of an execution before the
/// write buffers do (the vgpu's observer, for kernel campaigns and, through the event log,
/// for programs). The minimizer uses it for coverage (which fence copies ran) and for
/// which loads read what other threads write; it cannot change the execution.
pub use fencehound_vgpu::Observer;
