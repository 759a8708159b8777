//! Backends: where an execution runs.
//!
//! | backend | what runs | write buffers |
//! |---|---|---|
//! | `vgpu` | the variant's PTX on the virtual GPU | native hooks ([`fencehound_handlers::WriteBuffers`]) |
//! | `vgpu-instrumented` | the rewritten PTX ([`fencehound_handlers::rewrite`]) on the virtual GPU, plain memory | device-side, in the kernel |
//! | `gpu` | the rewritten PTX on an NVIDIA GPU (CUDA driver API through cudarc), in a watchdog'd worker process | device-side, in the kernel |
//!
//! Seeds, verdicts, reports and replay are the same for every backend; a report records
//! which backend and device ran its executions. The instrumented backends buffer with the
//! device policy of the drain table ([`fencehound_handlers::DrainPolicy::Device`]);
//! [`differential`] shows on the vgpu that the rewritten PTX and the native handlers under
//! that policy agree write for write.

pub mod differential;
pub mod gpu;
pub mod instrumented;
pub mod worker;

use crate::execution::Prepared;
use crate::types::{ExecResult, ExecSpec};
use std::sync::atomic::AtomicBool;

/// Runs and judges executions.
pub trait Backend: Send + Sync {
    fn execute(&self, prep: &Prepared, spec: &ExecSpec, cancel: Option<&AtomicBool>) -> ExecResult;
    /// `vgpu`, `vgpu-instrumented` or `gpu`.
    fn name(&self) -> &'static str;
    /// The device that runs executions (`virtual GPU (CPU)`, `NVIDIA ... (sm_80)`).
    fn device(&self) -> String;
}

/// The native backend: the variant's PTX under the native write buffers.
#[derive(Debug, Default, Clone, Copy)]
pub struct Vgpu;

impl Backend for Vgpu {
    fn execute(&self, prep: &Prepared, spec: &ExecSpec, cancel: Option<&AtomicBool>) -> ExecResult {
        crate::execution::execute(prep, spec, cancel)
    }
    fn name(&self) -> &'static str {
        "vgpu"
    }
    fn device(&self) -> String {
        VGPU_DEVICE.to_string()
    }
}

pub const VGPU_DEVICE: &str = "virtual GPU (CPU)";

/// `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    Vgpu,
    Gpu,
    /// `gpu` when a driver and a device are present, else `vgpu`.
    Auto,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        match s {
            "vgpu" => Some(BackendChoice::Vgpu),
            "gpu" => Some(BackendChoice::Gpu),
            "auto" => Some(BackendChoice::Auto),
            _ => None,
        }
    }
}
