//! The differential test's machinery: the original under the native handlers and the
//! [`Flavor::Lockstep`](super::Flavor::Lockstep) rewrite on plain memory, run on the vgpu
//! under one scheduler so that both take the same interleaving, with every write to user
//! memory logged in order.
//!
//! [`LockstepScheduler`] is a random scheduler (seeded) that draws only at *original*
//! preemption points. The rewritten kernel marks its blocks (loads of `__fencehound_mark`
//! seen by [`LockstepHooks`]); while any lane of a warp is inside a block, the scheduler
//! keeps that warp and the group holding its lowest inside lane, and draws nothing.
//! Outside blocks both runs have the same steps (a block occupies exactly the place of the
//! one preemption point it replaces), the same runnable warps and the same groups (ordered
//! by lowest lane, not by program counter, which differs between the two modules), so the
//! draws, and therefore the interleavings, coincide.
//!
//! Equal interleavings make every write to user memory happen in the same order in both
//! runs: [`NativeLog`] reconstructs the native one from the handlers' trace (direct
//! stores, drained entries, atomics), [`LockstepHooks`] records the rewritten kernel's
//! (ignoring the runtime's own memory). [`compare_writes`] names the first difference.

use crate::buffers::{Level, TraceEvent};
use crate::hooks::WriteBuffers;
use crate::model::Model;
use crate::stats::BufferStats;
use fencehound_vgpu::hooks::RmwFn;
use fencehound_vgpu::{
    Access, Barrier, Fence, Hooks, LaunchInfo, Location, MemError, Memory, Scheduler, Scope,
    SiteId, ThreadRef,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// One write to user memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub loc: Location,
    pub size: u32,
    pub value: u64,
}

/// Where a native write came from (for the divergence report).
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// A store that was not buffered, at this site, by this thread.
    Store {
        thread: u32,
        site: SiteId,
    },
    /// A buffered entry drained: stored at `site` by `thread`, drained for `reason`.
    Drain {
        thread: u32,
        site: SiteId,
        reason: crate::DrainReason,
        at: Option<SiteId>,
    },
    Atomic {
        thread: u32,
        site: SiteId,
    },
}

/// SplitMix64: the scheduler's choices.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        crate::select::mix(self.0) % n.max(1)
    }
}

/// State shared by the scheduler and the hooks of one run.
#[derive(Debug)]
pub struct Lockstep {
    rng: Rng,
    seed: u64,
    /// Addresses of the markers (begin, end, end before a final instruction), if the
    /// module is instrumented.
    marks: Option<[u64; 3]>,
    /// Per warp: lanes inside a block; lanes waiting for their final instruction.
    inside: Vec<u32>,
    pending: Vec<u32>,
    /// The warp holding lanes inside a block.
    holder: Option<u32>,
    /// The warp of the current step, and its lanes that must run in it.
    stepping: u32,
    step_busy: u32,
    /// Broken assumptions (the runs are then not comparable).
    pub violations: Vec<String>,
    /// Memory the runtime owns: writes there are not logged.
    ignore: Vec<(u64, u64)>,
    pub writes: Vec<Write>,
    /// Every random choice outside blocks: (runnable warps or group masks, choice). Equal
    /// interleavings make equal lists; the first difference says where they parted.
    pub decisions: Vec<(Vec<u32>, u32)>,
    /// The thread that performed each write (the owner of a drained entry, or the
    /// thread draining another's: liveness, the last exit).
    pub writers: Vec<u32>,
}

/// A shared handle (the vgpu takes hooks and scheduler as two `&mut`).
pub type Shared = Rc<RefCell<Lockstep>>;

impl Lockstep {
    /// `marks`: address of `__fencehound_mark` in the rewritten module (none for the
    /// native run); `ignore`: the runtime's memory.
    pub fn new(seed: u64, marks: Option<u64>, ignore: Vec<(u64, u64)>) -> Shared {
        Rc::new(RefCell::new(Lockstep {
            rng: Rng(crate::select::mix(seed ^ 0x6c6f_636b)),
            seed,
            marks: marks.map(|a| [a, a + 4, a + 8]),
            inside: Vec::new(),
            pending: Vec::new(),
            holder: None,
            stepping: 0,
            step_busy: 0,
            violations: Vec::new(),
            ignore,
            writes: Vec::new(),
            writers: Vec::new(),
            decisions: Vec::new(),
        }))
    }

    fn ignored(&self, loc: Location) -> bool {
        match loc {
            Location::Global(a) => self.ignore.iter().any(|(s, n)| a >= *s && a < s + n),
            Location::Shared { .. } => false,
        }
    }

    fn set(&mut self, t: ThreadRef, inside: bool, pending: bool) {
        let w = t.warp as usize;
        if self.inside.len() <= w {
            self.inside.resize(w + 1, 0);
            self.pending.resize(w + 1, 0);
        }
        let bit = 1u32 << t.lane;
        if inside {
            self.inside[w] |= bit;
        } else {
            self.inside[w] &= !bit;
        }
        if pending {
            self.pending[w] |= bit;
        } else {
            self.pending[w] &= !bit;
        }
        let busy = self.inside[w] | self.pending[w] != 0;
        match self.holder {
            Some(h) if h != t.warp && busy => self.violations.push(format!(
                "warp {} entered a block while warp {h} was inside one",
                t.warp
            )),
            _ => {}
        }
        if busy {
            self.holder = Some(t.warp);
        } else if self.holder == Some(t.warp) {
            self.holder = None;
        }
    }

    /// A marker load by `t` at `a`: returns true if it was one.
    fn marker(&mut self, t: ThreadRef, loc: Location) -> bool {
        let (Some(m), Location::Global(a)) = (self.marks, loc) else {
            return false;
        };
        if a == m[0] {
            self.set(t, true, false);
        } else if a == m[1] {
            self.set(t, false, false);
        } else if a == m[2] {
            self.set(t, false, true);
        } else {
            return false;
        }
        true
    }
}

/// See the module documentation.
pub struct LockstepScheduler(pub Shared);

impl Scheduler for LockstepScheduler {
    fn pick(&mut self, runnable: &[u32], _last: Option<u32>) -> usize {
        let mut s = self.0.borrow_mut();
        if let Some(h) = s.holder {
            if let Ok(i) = runnable.binary_search(&h) {
                // Lanes past their end marker run their final instruction (fence, barrier,
                // exit) in this step: they are done with the block after it.
                let w = h as usize;
                s.stepping = h;
                s.step_busy = s.inside[w] | s.pending[w];
                s.pending[w] = 0;
                if s.inside[w] == 0 {
                    s.holder = None;
                }
                return i;
            }
            let v = format!(
                "warp {h} is inside a block (lanes {:#x}, pending {:#x}) but cannot run",
                s.inside[h as usize], s.pending[h as usize]
            );
            s.violations.push(v);
        }
        let i = s.rng.below(runnable.len() as u64) as usize;
        s.stepping = runnable.get(i).copied().unwrap_or(0);
        s.step_busy = 0;
        let d = (runnable.to_vec(), s.stepping);
        s.decisions.push(d);
        i
    }

    fn pick_group_of(&mut self, masks: &[u32]) -> usize {
        let mut s = self.0.borrow_mut();
        let w = s.stepping as usize;
        let busy = s.step_busy;
        if busy != 0 {
            // The group with the lowest lane inside the block.
            let lowest = busy.trailing_zeros();
            let mut best: Option<(u32, usize)> = None;
            for (i, m) in masks.iter().enumerate() {
                let inside = m & busy;
                if inside != 0 {
                    let l = inside.trailing_zeros();
                    if best.is_none_or(|(b, _)| l < b) {
                        best = Some((l, i));
                    }
                }
            }
            if let Some((_, i)) = best {
                return i;
            }
            s.violations.push(format!(
                "warp {w}: no group holds its lanes inside a block (lowest {lowest})"
            ));
        }
        // Outside blocks: a random group, the groups ordered by their lowest lane.
        let mut order: Vec<usize> = (0..masks.len()).collect();
        order.sort_by_key(|i| masks[*i].trailing_zeros());
        let k = s.rng.below(masks.len() as u64) as usize;
        let i = order.get(k).copied().unwrap_or(0);
        let mut sorted: Vec<u32> = masks.to_vec();
        sorted.sort_by_key(|m| m.trailing_zeros());
        let d = (sorted, masks.get(i).copied().unwrap_or(0) | 1 << 31);
        s.decisions.push(d);
        i
    }

    fn pick_group(&mut self, n: usize) -> usize {
        // Only reached through a caller that does not pass masks.
        self.0.borrow_mut().rng.below(n as u64) as usize
    }

    fn describe(&self) -> String {
        format!("lockstep(seed={})", self.0.borrow().seed)
    }
}

/// Plain memory (the `sc` model) that follows the markers and logs user-memory writes:
/// the hooks of the rewritten run.
pub struct LockstepHooks(pub Shared);

impl Hooks for LockstepHooks {
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.0.borrow_mut().marker(a.thread, a.loc);
        mem.read(a.loc, buf)
    }

    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        mem.write(a.loc, data)?;
        let mut s = self.0.borrow_mut();
        if !s.ignored(a.loc) {
            let mut v = [0u8; 8];
            v[..data.len()].copy_from_slice(data);
            s.writes.push(Write {
                loc: a.loc,
                size: a.size,
                value: u64::from_le_bytes(v),
            });
            s.writers.push(a.thread.global);
        }
        Ok(())
    }

    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let old = mem.read_u64(a.loc, a.size)?;
        let Some(new) = rmw(old) else {
            return Ok(old);
        };
        mem.write_u64(a.loc, a.size, new)?;
        let mut s = self.0.borrow_mut();
        if !s.ignored(a.loc) {
            s.writes.push(Write {
                loc: a.loc,
                size: a.size,
                value: new & mask(a.size),
            });
            s.writers.push(a.thread.global);
        }
        Ok(old)
    }
}

fn mask(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}

/// The native handlers (with a trace) and the log of their writes to memory in order.
pub struct NativeLog {
    pub wb: WriteBuffers,
    pub writes: Vec<(Write, Origin)>,
    /// Value and size of every buffered entry, by sequence number.
    entries: HashMap<u64, (u64, u32)>,
    pos: usize,
    active: bool,
}

impl NativeLog {
    /// `wb` must record a trace.
    pub fn new(wb: WriteBuffers) -> NativeLog {
        NativeLog {
            wb,
            writes: Vec::new(),
            entries: HashMap::new(),
            pos: 0,
            active: false,
        }
    }

    /// Turns the trace events since the last call into writes; returns whether one of them
    /// buffered a store.
    fn collect(&mut self) -> bool {
        let mut buffered = false;
        let trace = self.wb.trace();
        for ev in &trace[self.pos.min(trace.len())..] {
            match ev {
                TraceEvent::Buffered {
                    seq, size, value, ..
                } => {
                    self.entries.insert(*seq, (*value, *size as u32));
                    buffered = true;
                }
                TraceEvent::Drained {
                    seq,
                    thread,
                    site,
                    loc,
                    to: Level::Memory,
                    reason,
                    at,
                } => {
                    let (value, size) = self.entries.get(seq).copied().unwrap_or((0, 0));
                    self.writes.push((
                        Write {
                            loc: *loc,
                            size,
                            value,
                        },
                        Origin::Drain {
                            thread: *thread,
                            site: *site,
                            reason: *reason,
                            at: *at,
                        },
                    ));
                }
                _ => {}
            }
        }
        self.pos = trace.len();
        buffered
    }
}

impl Hooks for NativeLog {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.active = crate::rewrite::layout::launch_active(self.wb.config(), info.kernel);
        self.wb.launch_begin(info);
    }

    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.wb.load(mem, a, buf);
        self.collect();
        r
    }

    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        let r = self.wb.store(mem, a, data);
        let buffered = self.collect();
        if r.is_ok() && !buffered {
            let mut v = [0u8; 8];
            v[..data.len()].copy_from_slice(data);
            self.writes.push((
                Write {
                    loc: a.loc,
                    size: a.size,
                    value: u64::from_le_bytes(v),
                },
                Origin::Store {
                    thread: a.thread.global,
                    site: a.site,
                },
            ));
        }
        r
    }

    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        let mut new = None;
        let mut f = |old: u64| {
            let n = rmw(old);
            new = n;
            n
        };
        let r = self.wb.atomic(mem, a, &mut f);
        self.collect();
        // A .cta atomic on global memory under `scoped` leaves its result in the overlay.
        let overlay = self.active
            && self.wb.config().model == Model::Scoped
            && a.scope == Scope::Cta
            && !a.loc.is_shared();
        if let (Ok(_), Some(n), false) = (&r, new, overlay) {
            self.writes.push((
                Write {
                    loc: a.loc,
                    size: a.size,
                    value: n & mask(a.size),
                },
                Origin::Atomic {
                    thread: a.thread.global,
                    site: a.site,
                },
            ));
        }
        r
    }

    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.wb.fence(mem, f);
        self.collect();
    }

    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.wb.barrier_arrive(mem, b);
        self.collect();
    }

    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.wb.barrier_release(mem, b, threads);
        self.collect();
    }

    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.wb.thread_exit(mem, t);
        self.collect();
    }

    fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
        self.wb.cta_exit(mem, cta);
    }

    fn stalled(&mut self, mem: &mut Memory) -> bool {
        let r = self.wb.stalled(mem);
        self.collect();
        r
    }

    fn launch_end(&mut self, mem: &mut Memory) {
        self.wb.launch_end(mem);
        self.collect();
    }
}

/// The first difference between the native and the rewritten run's writes.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteDivergence {
    /// Index in both logs.
    pub index: usize,
    pub native: Option<(Write, Origin)>,
    pub rewritten: Option<Write>,
}

/// Compares the write logs.
pub fn compare_writes(native: &[(Write, Origin)], rewritten: &[Write]) -> Option<WriteDivergence> {
    let n = native.len().max(rewritten.len());
    (0..n).find_map(|i| {
        let a = native.get(i);
        let b = rewritten.get(i);
        if a.map(|x| x.0) == b.copied() {
            None
        } else {
            Some(WriteDivergence {
                index: i,
                native: a.cloned(),
                rewritten: b.copied(),
            })
        }
    })
}

/// Statistics the two implementations must agree on. (Everything in [`BufferStats`].)
pub fn stats_equal(a: &BufferStats, b: &BufferStats) -> bool {
    a == b
}

/// What to run: the launches, the scheduler seed, and the limits of each launch.
#[derive(Debug, Clone)]
pub struct Plan {
    pub launches: Vec<LaunchDesc>,
    pub sched_seed: u64,
    /// Lane-instruction budget per launch.
    pub fuel: u64,
    pub deadline: Option<std::time::Instant>,
}

/// One launch of an execution.
#[derive(Debug, Clone)]
pub struct LaunchDesc {
    pub kernel: String,
    pub grid: fencehound_vgpu::Dim3,
    pub block: fencehound_vgpu::Dim3,
    pub dynamic_shared: u32,
    pub args: Vec<fencehound_vgpu::Arg>,
}

/// How a run ended, in terms both modules share (PTX lines differ between them; CUDA
/// lines, threads and messages do not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Completed,
    Fault {
        kind: String,
        thread: u32,
        cuda: Option<(String, u32)>,
    },
    Trap {
        message: String,
        thread: u32,
    },
    Deadlock,
    Timeout,
}

impl End {
    /// Whether the writes and statistics of two runs that both ended like this must be
    /// equal. Not after a fault: a native store validates its address before draining
    /// anything, a rewritten unbuffered store drains first and then faults (probing every
    /// store would cost an extra load per store on a GPU), so the drains just before the
    /// faulting store may differ; the fault itself (kind, thread, CUDA line) must not.
    pub fn compares_writes(&self) -> bool {
        !matches!(self, End::Fault { .. })
    }

    fn of(o: &fencehound_vgpu::LaunchOutcome) -> End {
        use fencehound_vgpu::LaunchOutcome as O;
        match o {
            O::Completed => End::Completed,
            O::Fault(f) => End::Fault {
                kind: f.kind.to_string(),
                thread: f.thread.global,
                cuda: f.site.cuda.as_ref().map(|c| (c.file.clone(), c.line)),
            },
            O::Trap(t) => End::Trap {
                message: t.message.clone(),
                thread: t.thread.global,
            },
            O::Deadlock(_) => End::Deadlock,
            O::Timeout(_) => End::Timeout,
        }
    }
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct Run {
    pub end: End,
    /// The scheduler's random choices, in order.
    pub decisions: Vec<(Vec<u32>, u32)>,
    /// Index of the launch that did not complete.
    pub failed_launch: Option<usize>,
    pub stats: BufferStats,
    pub stdout: String,
    pub lane_instructions: u64,
    pub violations: Vec<String>,
}

/// How much more fuel the lockstep rewrite gets than the original.
pub const FUEL_FACTOR: u64 = 400;

/// The native run's result with its write log.
pub struct NativeRun {
    pub run: Run,
    pub writes: Vec<(Write, Origin)>,
}

/// The rewritten run's result with its write log.
pub struct RewrittenRun {
    pub run: Run,
    pub writes: Vec<Write>,
    /// Which thread performed each write.
    pub writers: Vec<u32>,
    /// Entries left in the device buffers after the last launch (0 when all completed).
    pub left_buffered: u64,
}

fn launch_all<H: Hooks>(
    dev: &mut fencehound_vgpu::Device,
    module: fencehound_vgpu::ModuleId,
    plan: &Plan,
    fuel: u64,
    hooks: &mut H,
    sched: &mut LockstepScheduler,
    mut before: impl FnMut(
        &mut fencehound_vgpu::Device,
        u32,
        &str,
        super::layout::LaunchShape,
    ) -> Result<(), String>,
) -> Result<(End, Option<usize>, String, u64), String> {
    let mut stdout = String::new();
    let mut lanes = 0;
    for (i, l) in plan.launches.iter().enumerate() {
        let index = dev.launch_count();
        before(
            dev,
            index,
            &l.kernel,
            super::layout::LaunchShape::of(l.grid, l.block),
        )?;
        let r = dev
            .launch_with_stop(
                module,
                &l.kernel,
                l.grid,
                l.block,
                l.dynamic_shared,
                &l.args,
                fencehound_vgpu::LaunchOptions {
                    fuel,
                    ..Default::default()
                },
                fencehound_vgpu::Stop {
                    deadline: plan.deadline,
                    cancel: None,
                },
                hooks,
                sched,
            )
            .map_err(|e| format!("launch of `{}`: {e}", l.kernel))?;
        stdout.push_str(&r.stdout);
        lanes += r.stats.lane_instructions;
        if !r.outcome.is_completed() {
            return Ok((End::of(&r.outcome), Some(i), stdout, lanes));
        }
    }
    Ok((End::Completed, None, stdout, lanes))
}

/// Runs `launches` of the (normalized) original on `dev` under the native handlers with
/// `cfg` (its trace is switched on; use the device policy to compare with the rewrite).
pub fn run_native(
    dev: &mut fencehound_vgpu::Device,
    module: fencehound_vgpu::ModuleId,
    plan: &Plan,
    mut cfg: crate::BufferConfig,
) -> Result<NativeRun, String> {
    cfg.trace = true;
    let shared = Lockstep::new(plan.sched_seed, None, Vec::new());
    let mut log = NativeLog::new(WriteBuffers::new(cfg));
    let mut sched = LockstepScheduler(shared.clone());
    let (end, failed_launch, stdout, lane_instructions) = launch_all(
        dev,
        module,
        plan,
        plan.fuel,
        &mut log,
        &mut sched,
        |_, _, _, _| Ok(()),
    )?;
    let violations = shared.borrow().violations.clone();
    let decisions = std::mem::take(&mut shared.borrow_mut().decisions);
    Ok(NativeRun {
        run: Run {
            end,
            decisions,
            failed_launch,
            stats: log.wb.stats().clone(),
            stdout,
            lane_instructions,
            violations,
        },
        writes: log.writes,
    })
}

/// Runs `launches` of the lockstep-flavoured rewrite on `dev` on plain memory, with the
/// device buffers configured by `cfg` (which must use the device policy), allocated after
/// everything the caller allocated. Its fuel is [`FUEL_FACTOR`] times the plan's: a
/// lockstep block runs its lanes one at a time.
pub fn run_rewritten(
    dev: &mut fencehound_vgpu::Device,
    module: fencehound_vgpu::ModuleId,
    plan: &Plan,
    cfg: &crate::BufferConfig,
) -> Result<RewrittenRun, String> {
    let launches = &plan.launches;
    use super::layout;
    let sizes = layout::Sizes {
        threads: launches
            .iter()
            .map(|l| (l.grid.count() * l.block.count()) as u32)
            .max()
            .unwrap_or(0),
        ctas: launches
            .iter()
            .map(|l| l.grid.count() as u32)
            .max()
            .unwrap_or(0),
    };
    let area = layout::allocate(dev, cfg, sizes).map_err(|e| e.to_string())?;
    let (ctl, ctl_size) = dev
        .global_by_name(module, super::CTL)
        .map_err(|e| e.to_string())?;
    let (mark, mark_size) = dev
        .global_by_name(module, super::MARK)
        .map_err(|e| e.to_string())?;
    dev.copy_to(ctl, &area.ctl.to_le_bytes())
        .map_err(|e| e.to_string())?;
    let mut ignore = area.allocations.clone();
    ignore.push((ctl, ctl_size));
    ignore.push((mark, mark_size));
    let shared = Lockstep::new(plan.sched_seed, Some(mark), ignore);
    let mut hooks = LockstepHooks(shared.clone());
    let mut sched = LockstepScheduler(shared.clone());
    let (end, failed_launch, stdout, lane_instructions) = launch_all(
        dev,
        module,
        plan,
        plan.fuel.saturating_mul(FUEL_FACTOR),
        &mut hooks,
        &mut sched,
        |dev, index, kernel, shape| {
            let active = layout::launch_active(cfg, kernel);
            layout::begin_launch(dev, cfg, &area, index, shape, active).map_err(|e| e.to_string())
        },
    )?;
    let stats = layout::read_stats(dev, &area).map_err(|e| e.to_string())?;
    let left_buffered = layout::buffered(dev, &area).map_err(|e| e.to_string())?;
    let s = shared.borrow();
    Ok(RewrittenRun {
        run: Run {
            end,
            decisions: s.decisions.clone(),
            failed_launch,
            stats,
            stdout,
            lane_instructions,
            violations: s.violations.clone(),
        },
        writes: s.writes.clone(),
        writers: s.writers.clone(),
        left_buffered,
    })
}
