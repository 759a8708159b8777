//! The memory models as one vgpu [`Hooks`] implementation: [`ModelHooks`].
//!
//! Every model belongs to one of three families, and each family is a `Hooks`
//! implementation of its own:
//!
//! | variant | models | state | hooks |
//! |---|---|---|---|
//! | [`ModelHooks::Sc`] | `sc` | none: plain memory, the golden reference | [`ScHooks`] |
//! | [`ModelHooks::Buffers`] | `bugaroo`, `scoped` | per-thread store buffers, CTA overlays | [`StoreBuffers`] ([`crate::buffers`]) |
//! | [`ModelHooks::Weak`] | `weak` | per-location store histories, happens-before | [`WeakHooks`] ([`crate::weak`]) |
//!
//! [`ModelHooks::new`] picks the family from [`BufferConfig::model`] once; every hook then
//! dispatches with one `match` to the family's own method, so no family's code asks which
//! model it is running, and no family allocates state another one needs. A new family (or
//! a faster path for an existing one, e.g. a specialised `sc` or a `bugaroo` without
//! traces) is a new variant here plus its `Hooks` implementation; the model names stay in
//! [`crate::model`].
//!
//! [`WriteBuffers`] is the name the rest of the workspace knows this type by.

use crate::buffers::{BufferConfig, StoreBuffers, TraceEvent};
use crate::model::Model;
use crate::stats::BufferStats;
use crate::weak::WeakHooks;
use fencehound_vgpu::hooks::RmwFn;
use fencehound_vgpu::{
    Access, Barrier, Fence, Hooks, LaunchInfo, MemError, Memory, NoHooks, ThreadRef,
};

/// The `sc` model: plain memory ([`NoHooks`]), with the (empty) statistics and trace every
/// model reports.
pub struct ScHooks {
    cfg: BufferConfig,
    stats: BufferStats,
    trace: Vec<TraceEvent>,
}

impl ScHooks {
    pub fn new(cfg: BufferConfig) -> Self {
        ScHooks {
            cfg,
            stats: BufferStats::default(),
            trace: Vec::new(),
        }
    }
}

impl Hooks for ScHooks {
    #[inline]
    fn transparent(&self) -> bool {
        NoHooks.transparent()
    }
    #[inline]
    fn load_effects(&self) -> Option<u64> {
        NoHooks.load_effects()
    }
}

/// One memory model's hooks: the family its [`Model`] belongs to (see the module docs).
// The variants' sizes differ (`sc` holds no state), but one value exists per execution and
// is called on every memory access: keeping the families inline saves that indirection.
#[allow(clippy::large_enum_variant)]
pub enum ModelHooks {
    /// `sc`.
    Sc(ScHooks),
    /// `bugaroo`, `scoped`.
    Buffers(StoreBuffers),
    /// `weak`.
    Weak(WeakHooks),
}

/// The hooks of any model, under the name they had when write buffers were the only
/// family.
pub type WriteBuffers = ModelHooks;

impl ModelHooks {
    /// The hooks of `cfg.model`.
    pub fn new(cfg: BufferConfig) -> Self {
        match cfg.model {
            Model::Sc => ModelHooks::Sc(ScHooks::new(cfg)),
            Model::Bugaroo | Model::Scoped => ModelHooks::Buffers(StoreBuffers::new(cfg)),
            Model::Weak => ModelHooks::Weak(WeakHooks::new(cfg)),
        }
    }

    pub fn model(&self) -> Model {
        self.config().model
    }

    pub fn config(&self) -> &BufferConfig {
        match self {
            ModelHooks::Sc(h) => &h.cfg,
            ModelHooks::Buffers(h) => h.config(),
            ModelHooks::Weak(h) => h.config(),
        }
    }

    /// This execution's statistics so far (`weak`'s own from the end of a launch on).
    pub fn stats(&self) -> &BufferStats {
        match self {
            ModelHooks::Sc(h) => &h.stats,
            ModelHooks::Buffers(h) => h.stats(),
            ModelHooks::Weak(h) => h.stats(),
        }
    }

    /// The trace recorded so far (empty unless [`BufferConfig::trace`]; always empty under
    /// `sc`).
    pub fn trace(&self) -> &[TraceEvent] {
        match self {
            ModelHooks::Sc(h) => &h.trace,
            ModelHooks::Buffers(h) => h.trace(),
            ModelHooks::Weak(h) => h.trace(),
        }
    }

    pub fn take_trace(&mut self) -> Vec<TraceEvent> {
        match self {
            ModelHooks::Sc(h) => std::mem::take(&mut h.trace),
            ModelHooks::Buffers(h) => h.take_trace(),
            ModelHooks::Weak(h) => h.take_trace(),
        }
    }

    /// Entries currently buffered (threads and overlays); 0 outside the buffer models.
    pub fn buffered(&self) -> usize {
        match self {
            ModelHooks::Buffers(h) => h.buffered(),
            ModelHooks::Sc(_) | ModelHooks::Weak(_) => 0,
        }
    }

    /// Approximate heap bytes the model holds now: the buffers
    /// ([`StoreBuffers::heap_bytes`]), or `weak`'s histories and synchronization state.
    pub fn heap_bytes(&self) -> usize {
        match self {
            ModelHooks::Sc(_) => 0,
            ModelHooks::Buffers(h) => h.heap_bytes(),
            ModelHooks::Weak(h) => h.memory().heap_bytes(),
        }
    }

    /// The most heap the model held: for the buffers, their peak over every launch so far
    /// ([`StoreBuffers::peak_heap_bytes`]); for `weak`, what it holds now.
    pub fn peak_heap_bytes(&self) -> usize {
        match self {
            ModelHooks::Sc(_) => 0,
            ModelHooks::Buffers(h) => h.peak_heap_bytes(),
            ModelHooks::Weak(h) => h.memory().heap_bytes(),
        }
    }
}

impl Hooks for ModelHooks {
    #[inline]
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        match self {
            ModelHooks::Sc(h) => h.launch_begin(info),
            ModelHooks::Buffers(h) => h.launch_begin(info),
            ModelHooks::Weak(h) => h.launch_begin(info),
        }
    }

    #[inline]
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        match self {
            ModelHooks::Sc(h) => h.load(mem, a, buf),
            ModelHooks::Buffers(h) => h.load(mem, a, buf),
            ModelHooks::Weak(h) => h.load(mem, a, buf),
        }
    }

    #[inline]
    fn load_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        match self {
            ModelHooks::Sc(h) => h.load_warp(mem, a, out),
            ModelHooks::Buffers(h) => h.load_warp(mem, a, out),
            ModelHooks::Weak(h) => h.load_warp(mem, a, out),
        }
    }

    #[inline]
    fn store_warp(
        &mut self,
        mem: &mut Memory,
        a: &[Access],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        match self {
            ModelHooks::Sc(h) => h.store_warp(mem, a, vals),
            ModelHooks::Buffers(h) => h.store_warp(mem, a, vals),
            ModelHooks::Weak(h) => h.store_warp(mem, a, vals),
        }
    }

    #[inline]
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        match self {
            ModelHooks::Sc(h) => h.store(mem, a, data),
            ModelHooks::Buffers(h) => h.store(mem, a, data),
            ModelHooks::Weak(h) => h.store(mem, a, data),
        }
    }

    #[inline]
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        match self {
            ModelHooks::Sc(h) => h.atomic(mem, a, rmw),
            ModelHooks::Buffers(h) => h.atomic(mem, a, rmw),
            ModelHooks::Weak(h) => h.atomic(mem, a, rmw),
        }
    }

    #[inline]
    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        match self {
            ModelHooks::Sc(h) => h.fence(mem, f),
            ModelHooks::Buffers(h) => h.fence(mem, f),
            ModelHooks::Weak(h) => h.fence(mem, f),
        }
    }

    #[inline]
    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        match self {
            ModelHooks::Sc(h) => h.barrier_arrive(mem, b),
            ModelHooks::Buffers(h) => h.barrier_arrive(mem, b),
            ModelHooks::Weak(h) => h.barrier_arrive(mem, b),
        }
    }

    #[inline]
    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        match self {
            ModelHooks::Sc(h) => h.barrier_release(mem, b, threads),
            ModelHooks::Buffers(h) => h.barrier_release(mem, b, threads),
            ModelHooks::Weak(h) => h.barrier_release(mem, b, threads),
        }
    }

    #[inline]
    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        match self {
            ModelHooks::Sc(h) => h.thread_exit(mem, t),
            ModelHooks::Buffers(h) => h.thread_exit(mem, t),
            ModelHooks::Weak(h) => h.thread_exit(mem, t),
        }
    }

    #[inline]
    fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
        match self {
            ModelHooks::Sc(h) => h.cta_exit(mem, cta),
            ModelHooks::Buffers(h) => h.cta_exit(mem, cta),
            ModelHooks::Weak(h) => h.cta_exit(mem, cta),
        }
    }

    #[inline]
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        match self {
            ModelHooks::Sc(h) => h.stalled(mem),
            ModelHooks::Buffers(h) => h.stalled(mem),
            ModelHooks::Weak(h) => h.stalled(mem),
        }
    }

    #[inline]
    fn launch_end(&mut self, mem: &mut Memory) {
        match self {
            ModelHooks::Sc(h) => h.launch_end(mem),
            ModelHooks::Buffers(h) => h.launch_end(mem),
            ModelHooks::Weak(h) => h.launch_end(mem),
        }
    }

    #[inline]
    fn load_effects(&self) -> Option<u64> {
        match self {
            ModelHooks::Sc(h) => h.load_effects(),
            ModelHooks::Buffers(h) => h.load_effects(),
            // Every `weak` load counts itself in the statistics and may advance its
            // thread's choice counter: not parked (see the vgpu's `livelock` module).
            ModelHooks::Weak(_) => None,
        }
    }

    #[inline]
    fn shared_effects(&self) -> Option<u64> {
        match self {
            ModelHooks::Sc(h) => h.shared_effects(),
            ModelHooks::Buffers(h) => h.shared_effects(),
            ModelHooks::Weak(_) => None,
        }
    }

    #[inline]
    fn changed_blocks(&mut self, out: &mut Vec<u64>) -> bool {
        match self {
            ModelHooks::Sc(h) => h.changed_blocks(out),
            ModelHooks::Buffers(h) => h.changed_blocks(out),
            ModelHooks::Weak(_) => false,
        }
    }

    #[inline]
    fn transparent(&self) -> bool {
        match self {
            ModelHooks::Sc(h) => h.transparent(),
            ModelHooks::Buffers(h) => h.transparent(),
            ModelHooks::Weak(h) => h.transparent(),
        }
    }

    #[inline]
    fn plain_loads(&self, cta: u32, first: u32, lanes: u32) -> bool {
        match self {
            ModelHooks::Sc(h) => h.plain_loads(cta, first, lanes),
            ModelHooks::Buffers(h) => h.plain_loads(cta, first, lanes),
            ModelHooks::Weak(h) => h.plain_loads(cta, first, lanes),
        }
    }
    #[inline]
    fn settled(&self, cta: u32, first: u32, lanes: u32) -> bool {
        match self {
            ModelHooks::Sc(h) => h.settled(cta, first, lanes),
            ModelHooks::Buffers(h) => h.settled(cta, first, lanes),
            ModelHooks::Weak(h) => h.settled(cta, first, lanes),
        }
    }
    #[inline]
    fn cta_steps_local(&self, cta: u32, first: u32, n: u32) -> bool {
        match self {
            ModelHooks::Sc(h) => h.cta_steps_local(cta, first, n),
            ModelHooks::Buffers(h) => h.cta_steps_local(cta, first, n),
            ModelHooks::Weak(h) => h.cta_steps_local(cta, first, n),
        }
    }
    #[inline]
    fn unwritten_loads(&mut self, first: u32, lanes: u32) -> bool {
        match self {
            ModelHooks::Sc(h) => h.unwritten_loads(first, lanes),
            ModelHooks::Buffers(h) => h.unwritten_loads(first, lanes),
            ModelHooks::Weak(h) => h.unwritten_loads(first, lanes),
        }
    }
}
