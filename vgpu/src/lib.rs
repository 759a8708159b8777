//! fencehound's virtual GPU: executes PTX on the CPU with exact PTX semantics,
//! independent thread scheduling, seeded schedulers, fuel, and a hook interface through
//! which write buffers and the race check observe and shape every memory operation.
//!
//! ```text
//! Device::load_module(ptx::Module) ── decode ──► Program (slots, pcs, addresses)
//! Device::launch_with(kernel, grid, block, args, hooks, scheduler) ── exec::Machine ──► LaunchResult
//! ```

pub mod alu;
pub mod arith;
pub mod decode;
pub mod device;
pub mod error;
pub mod exec;
pub mod hooks;
pub mod memory;
pub mod operand;
pub mod printf;
pub mod program;
mod regalloc;
pub mod rng;
pub mod sched;
pub mod texture;
mod unwritten;

pub use device::{Arg, Device, LaunchOptions, ModuleId, Quiet, Stop, DEFAULT_FUEL, MAX_THREADS};
pub use error::{DeviceError, FaultKind, LoadError, MemError};
pub use exec::{
    Dim3, ExecStats, Fault, HangCause, HangDump, LaunchOutcome, LaunchResult, TrapInfo,
};
pub use hooks::{
    Access, AccessKind, Barrier, BarrierKind, Fence, FenceKind, Hooks, LaunchInfo, NoHooks,
    Observed, Observer, Scope, Sem, SiteId, ThreadRef,
};
pub use memory::{Location, Memory};
pub use program::{AccessSpace, CudaLoc, SiteInfo, SiteOp};
pub use sched::{Pct, RandomScheduler, RoundRobin, Scheduler, SchedulerKind};
