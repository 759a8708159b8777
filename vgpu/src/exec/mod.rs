//! The interpreter: runs one launch of a decoded [`Program`].
//!
//! Threads have independent program counters (sm_70+ independent thread scheduling). A
//! warp executes one instruction for all its ready lanes that share a program counter
//! (and call frame) at once: this is the fast path and what hardware does. Lanes that
//! diverge are scheduled as separate groups and reconverge when their program counters
//! meet again. The scheduler chooses a warp at every preemption point: before every
//! global/shared access, atomic, fence, barrier and warp-collective operation — except,
//! with [`crate::LaunchOptions::reduce_unwritten`], a load of memory no thread of the
//! launch writes and a generic access to a lane's own local memory, which cannot change
//! an outcome (`crate::unwritten` has the argument). With
//! [`crate::LaunchOptions::cta_local`], while every runnable warp of the CTA that ran
//! last is about to touch only that CTA, the pick is among its warps (`ctalocal` has
//! the argument). The runnable warps are a bit set (`runset`).
//!
//! Warp-collective operations (`shfl/vote/match/redux.sync`, `bar.warp.sync`) wait until
//! every non-exited lane of the member mask has reached the same instruction. CTA
//! barriers count arriving threads; without a thread count they expect every non-exited
//! thread of the CTA (exited threads no longer count, as on hardware). When no thread can
//! run and some have not exited, the launch is a deadlock; when the fuel (lane-instruction
//! budget) runs out, a timeout. Both come with a dump of where every unfinished warp is.

use crate::alu;
use crate::error::{FaultKind, MemError};
use crate::hooks::*;
use crate::memory::*;
use crate::program::*;
use crate::sched::Scheduler;

mod asynccopy;
mod ctalocal;
mod livelock;
mod matrix;
mod mbarrier;
mod memops;
mod outcome;
mod runset;
mod sync;
mod wmma;

use memops::read_generic;
pub use outcome::*;

pub const WARP: usize = 32;
/// Most instructions one warp runs before the scheduler is asked again.
const MAX_RUN: u32 = 256;
/// Lanes up to which a per-warp loop visits only the lanes of a mask instead of all 32
/// slots (a spinning thread whose warp's other lanes exited has one).
const SPARSE: u32 = 8;
/// The bound of a step that runs [`crate::Quiet`] code: a lane spinning on a lock inside a
/// quiet function lets other warps run after this many instructions.
const MAX_QUIET_RUN: u32 = 1 << 14;
/// Call depth limit.
const MAX_DEPTH: usize = 256;
/// Virtual SM count (for `%smid`, `%nsmid`).
pub const NUM_SMS: u32 = 80;

/// The lanes `l` with `pcs[l] == pc && bases[l] == base`, as a bit mask.
#[inline(always)]
fn lanes_at(pcs: &[u32; WARP], bases: &[u32; WARP], pc: u32, base: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128,
            _mm_movemask_ps, _mm_set1_epi32,
        };
        // SAFETY: SSE2 is part of every x86_64 CPU; the unaligned loads read 4 lanes
        // (16 bytes) at offsets 0, 4, ..., 28 of the 32-element arrays.
        unsafe {
            let (vp, vb) = (_mm_set1_epi32(pc as i32), _mm_set1_epi32(base as i32));
            let mut m = 0u32;
            for c in 0..WARP / 4 {
                let p = _mm_loadu_si128(pcs.as_ptr().add(4 * c).cast::<__m128i>());
                let b = _mm_loadu_si128(bases.as_ptr().add(4 * c).cast::<__m128i>());
                let eq = _mm_and_si128(_mm_cmpeq_epi32(p, vp), _mm_cmpeq_epi32(b, vb));
                m |= (_mm_movemask_ps(_mm_castsi128_ps(eq)) as u32) << (4 * c);
            }
            m
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = 0u32;
        for l in 0..WARP {
            m |= ((pcs[l] == pc && bases[l] == base) as u32) << l;
        }
        m
    }
}

/// A hint to bring the cache line holding `*x` into cache (no effect on results).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    // SAFETY: `prefetch` only needs SSE, which every x86_64 CPU has, and it does not
    // access memory architecturally: it cannot fault, and it reads through a valid
    // reference anyway.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast::<i8>(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ready,
    Exited,
    /// Waiting at CTA barrier `id`.
    Barrier(u32),
    /// Waiting at a warp-collective instruction with this member mask.
    Collective(u32),
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    func: u32,
    ret_pc: u32,
    reg_base: u32,
    local_base: u32,
    call_pc: u32,
}

#[derive(Debug, Clone)]
struct Lane {
    func: u32,
    local_base: u32,
    local: Vec<u8>,
    /// Call frames and `cp.async` state, which most lanes never have: boxed, so a lane
    /// record is 48 bytes instead of 120 (a launch of 1 M threads holds 1 M of them).
    rare: Option<Box<LaneRare>>,
}

// Issue 24: per-thread state at 1 M threads.
const _: () = assert!(std::mem::size_of::<Lane>() <= 48);

#[derive(Debug, Clone, Default)]
struct LaneRare {
    frames: Vec<Frame>,
    /// `cp.async` copies issued but not yet committed to a group.
    async_open: Vec<asynccopy::PendingCopy>,
    /// Committed `cp.async` groups, oldest first.
    async_groups: std::collections::VecDeque<Vec<asynccopy::PendingCopy>>,
}

impl Lane {
    /// The rare part, made on first use.
    fn rare(&mut self) -> &mut LaneRare {
        self.rare.get_or_insert_with(Default::default)
    }

    fn frames(&self) -> &[Frame] {
        self.rare.as_ref().map_or(&[], |r| &r.frames)
    }

    /// `cp.async` copies not yet committed to a group, and groups not yet waited for.
    fn async_counts(&self) -> (usize, usize) {
        self.rare
            .as_ref()
            .map_or((0, 0), |r| (r.async_open.len(), r.async_groups.len()))
    }
}

struct Warp {
    cta: u32,
    /// Linear thread index (in the CTA) of lane 0.
    first_tid: u32,
    lanes: Vec<Lane>,
    /// Each lane's program counter and first register slot of its frame, apart from the
    /// rest of its state: choosing a group (every step) reads only these two arrays.
    pc: [u32; WARP],
    reg_base: [u32; WARP],
    /// Each lane's status, apart from the rest of its record like `pc` (structure of
    /// arrays): a barrier's arrival and release, the collectives and the parking probes
    /// go through a warp's statuses lane by lane, and in the 48-byte lane records that
    /// walk touched 24 cache lines for 32 lanes instead of 4.
    status: [Status; WARP],
    regs: Vec<u64>,
    ready: u32,
    exited: u32,
    /// Lanes that exist.
    present: u32,
    /// Pending-wakeup program counter of lanes in `Collective` status.
    clock: u64,
}

impl Warp {
    /// How many lanes the warp has (its lane records exist only from its first step to
    /// its end: [`Machine::start_warp`]).
    #[inline]
    fn nlanes(&self) -> usize {
        (u32::BITS - self.present.leading_zeros()) as usize
    }
}

#[derive(Debug, Clone, Default)]
struct BarState {
    arrived: u32,
    expected: Option<u32>,
    popc: u32,
    all: bool,
    any: bool,
}

struct Cta {
    warps: std::ops::Range<u32>,
    live: u32,
    bars: Vec<BarState>,
    /// The barriers (bits by id) with an arrival since their last release: the ones an
    /// exit may complete. (A warp's exit asked all 16 through `bars`, a cache miss per
    /// exiting warp on a stencil of 4,096 CTAs: `perf`, 2.7% of its launch.)
    armed: u16,
    /// No thread of the CTA can write shared memory before its next barrier releases
    /// (`crate::unwritten::shared_quiet`); known once seen, forgotten at each release.
    quiet: bool,
}

/// Everything a launch needs besides the program.
pub struct LaunchSpec<'p> {
    pub prog: &'p Program,
    pub func: u32,
    pub grid: Dim3,
    pub block: Dim3,
    pub dyn_shared: u32,
    pub params: Vec<u8>,
    pub fuel: u64,
    pub launch_index: u32,
    pub deadline: Option<std::time::Instant>,
    pub cancel: Option<&'p std::sync::atomic::AtomicBool>,
    /// Address of a cooperative launch's grid workspace, 0 for other launches (see
    /// [`crate::device::GRID_WORKSPACE_BYTES`]).
    pub grid_workspace: u64,
    /// Per instruction: quiet code ([`crate::Quiet`]); empty when there is none.
    pub quiet_pc: &'p [bool],
    /// [`crate::LaunchOptions::reduce_unwritten`].
    pub reduce_unwritten: bool,
    /// [`crate::LaunchOptions::quick_stalls`].
    pub quick_stalls: bool,
    /// [`crate::LaunchOptions::cta_local`].
    pub cta_local: bool,
}

pub struct Machine<'p, 'm, H: Hooks, S: Scheduler> {
    prog: &'p Program,
    func: u32,
    mem: &'m mut Memory,
    hooks: &'m mut H,
    sched: &'m mut S,
    grid: Dim3,
    block: Dim3,
    tpb: u32,
    dyn_shared: u32,
    params: Vec<u8>,
    warps: Vec<Warp>,
    ctas: Vec<Cta>,
    runnable: runset::RunSet,
    stats: ExecStats,
    stdout: String,
    fuel: u64,
    launch: u32,
    since_progress: u64,
    /// With `quick_stalls` (and hooks that name their changes): the runnable warps that
    /// are not parked, which the scheduler picks from while there are any
    /// ([`Machine::live_pool`]); rebuilt when the runnable list changed or a warp's
    /// epoch moved (`live_moves` was [`livelock::Parking::moves`] then).
    live: Vec<u32>,
    live_dirty: bool,
    live_moves: u64,
    /// With `quick_stalls`: no step has made progress for 256 steps (or one just parked
    /// its warp); `live` is used until a step makes progress.
    spinning: bool,
    /// Interpreted steps since the last progress or stall.
    live_since: u64,
    clock: u64,
    deadline: Option<std::time::Instant>,
    cancel: Option<&'p std::sync::atomic::AtomicBool>,
    /// [`crate::LaunchOptions::reduce_unwritten`].
    reduce_unwritten: bool,
    /// [`crate::LaunchOptions::quick_stalls`].
    quick_stalls: bool,
    /// For a kernel whose barriers are all the whole CTA's, in a launch that keeps the
    /// write bound (`reduce_unwritten`, or hooks that are not transparent): where shared
    /// writes can still come before a barrier (`crate::unwritten`).
    shared_quiet: Option<&'p crate::unwritten::SharedQuiet>,
    /// A fault found while completing a collective that another warp's progress
    /// (a lane exiting) unblocked; reported before the next step.
    deferred: Option<LaunchOutcome>,
    /// Bulk copies issued and not yet performed, in issue order (`mbarrier`).
    bulk: Vec<mbarrier::PendingBulk>,
    livelock: livelock::Detector,
    grid_workspace: u64,
    /// Spin parking (see `livelock`), set up when the launch starts.
    park: livelock::Parking,
    /// Per instruction, for spin parking: `EVENT` when executing it is an event, `OWN`
    /// when it only keeps its own step from parking (a store or barrier under hooks
    /// that count what other threads can see: [`Hooks::shared_effects`]), 0 otherwise.
    events: Vec<u8>,
    /// An `OWN` instruction ran in the current step.
    step_own: bool,
    /// Per instruction: quiet code, inside a [`crate::Quiet`] function or generated (empty:
    /// none).
    quiet_pc: &'p [bool],
    /// Per instruction: a preemption point ([`Program::sync_points`]).
    sync_pc: &'p [bool],
    /// Per instruction: [`Op::is_cta_local`] ([`Program::cta_local_points`]).
    cta_local_pc: &'p [bool],
    /// CTA-local scheduling is on in this launch (`ctalocal`).
    cta_steps: bool,
    /// The running step was picked among one CTA's warps (`ctalocal`).
    cta_picked: bool,
    /// `ctalocal`: the CTA whose runnable warps other than the one picked last were all
    /// found CTA-local at that pick, and none of them changed since (`u32::MAX`: none).
    cta_clean: u32,
    /// The warp picked last (the scheduler's `last`).
    picked: Option<u32>,
    /// A clock special register was read since the step began.
    clock_read: std::cell::Cell<bool>,
    /// The last interpreted step: its first pc, whether its group held every ready lane,
    /// and the pc it ended at with its group together (`u32::MAX` otherwise).
    step_pc0: u32,
    step_single: bool,
    step_end: u32,
    /// Whether the running step's loads count for spin parking
    /// ([`livelock::Parking::begin_step`]), and a buffer for the blocks of changes.
    park_reads: bool,
    park_blocks: Vec<u64>,
    /// The threads a CTA barrier releases (`try_release`), kept for its room: one
    /// allocation per launch instead of one per barrier instance.
    released: Vec<ThreadRef>,
    /// Lane records of finished warps, for the next warps to start (their register files
    /// go back to [`REG_POOL`]); see [`Machine::start_warp`].
    free_lanes: Vec<Vec<Lane>>,
    /// A warp whose last lane exited in the step just run: its register file and lane
    /// records are given back at the start of the next step (the exiting step's livelock
    /// record still reads them).
    finished: Option<u32>,
}

/// `Machine::events`: an event for spin parking, and an instruction that only keeps its
/// own step from parking.
const EVENT: u8 = 1;
const OWN: u8 = 2;

enum StepEnd {
    Continue,
    Ended(LaunchOutcome),
}

#[inline]
fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// Register files given back, with the words they hold.
struct RegPool {
    files: Vec<Vec<u64>>,
    words: usize,
}

thread_local! {
    /// Register files of finished warps — of this launch and of this thread's earlier
    /// ones — for the next warps to start (the last one given back first: it is still in
    /// cache). A program that launches a million-thread kernel again and again allocated
    /// (and glibc, trimming its heap, gave back) the same hundred megabytes of register
    /// files each time, and faulted them in again: a fifth of each launch's time (`perf`,
    /// ten launches of a stencil step). A reused file is cleared instead, which costs a
    /// memset, not a page fault per 4 KiB.
    static REG_POOL: std::cell::RefCell<RegPool> =
        const { std::cell::RefCell::new(RegPool { files: Vec::new(), words: 0 }) };
}

/// The most 8-byte words [`REG_POOL`] keeps (1 GiB).
const REG_POOL_WORDS: usize = 1 << 27;

/// A zeroed register file of `n` words, reused from [`REG_POOL`] when it has one.
fn zeroed_regs(n: usize) -> Vec<u64> {
    let reused = REG_POOL.with(|p| {
        let mut p = p.borrow_mut();
        let v = p.files.pop()?;
        p.words -= v.capacity();
        Some(v)
    });
    match reused {
        Some(mut v) => {
            v.clear();
            v.resize(n, 0);
            v
        }
        None => vec![0; n],
    }
}

/// Gives these warps' register files to [`REG_POOL`] (up to [`REG_POOL_WORDS`] in all).
fn pool_regs(warps: &mut [Warp]) {
    REG_POOL.with(|p| {
        let mut p = p.borrow_mut();
        for w in warps {
            let v = std::mem::take(&mut w.regs);
            if v.capacity() == 0 {
                continue;
            }
            if p.words + v.capacity() > REG_POOL_WORDS {
                break;
            }
            p.words += v.capacity();
            p.files.push(v);
        }
    });
}

#[inline]
fn row(base: u32, slot: Slot) -> usize {
    (base as usize + slot as usize) * WARP
}

fn read_cstr(mem: &Memory, lane: &Lane, addr: u64, max: usize) -> String {
    let mut out = Vec::new();
    for i in 0..max as u64 {
        let b = match window_of(addr + i) {
            Some((Window::Global, a)) => mem.global.slice(a, 1).map(|s| s[0]).ok(),
            Some((Window::Const, _)) => mem.constant.slice(addr + i, 1).map(|s| s[0]).ok(),
            Some((Window::Local, a)) => lane.local.get(a as usize).copied(),
            _ => None,
        };
        match b {
            Some(0) | None => break,
            Some(c) => out.push(c),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    pub fn new(
        spec: LaunchSpec<'p>,
        mem: &'m mut Memory,
        hooks: &'m mut H,
        sched: &'m mut S,
    ) -> Self {
        let prog = spec.prog;
        let func = &prog.funcs[spec.func as usize];
        let tpb = spec.block.count() as u32;
        let nctas = spec.grid.count() as u32;
        let wpc = tpb.div_ceil(WARP as u32);
        let shared_size = prog.shared_static.div_ceil(16) * 16 + spec.dyn_shared;
        mem.shared = (0..nctas)
            .map(|_| vec![0u8; shared_size as usize])
            .collect();
        let mut warps = Vec::with_capacity((nctas * wpc) as usize);
        let mut ctas = Vec::with_capacity(nctas as usize);
        for c in 0..nctas {
            let start = warps.len() as u32;
            for w in 0..wpc {
                let first = w * WARP as u32;
                let n = (tpb - first).min(WARP as u32);
                let present = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                warps.push(Warp {
                    cta: c,
                    first_tid: first,
                    // Made at the warp's first step, as its registers (`start_warp`).
                    lanes: Vec::new(),
                    pc: [func.entry; WARP],
                    reg_base: [0; WARP],
                    status: [Status::Ready; WARP],
                    regs: Vec::new(),
                    ready: present,
                    exited: 0,
                    present,
                    clock: 0,
                });
            }
            ctas.push(Cta {
                warps: start..warps.len() as u32,
                live: tpb,
                bars: vec![BarState::default(); 16],
                armed: 0,
                quiet: false,
            });
        }
        let runnable = runset::RunSet::full(warps.len());
        let nwarps = warps.len();
        Machine {
            prog,
            func: spec.func,
            mem,
            hooks,
            sched,
            grid: spec.grid,
            block: spec.block,
            tpb,
            dyn_shared: spec.dyn_shared,
            params: spec.params,
            warps,
            ctas,
            runnable,
            stats: ExecStats::default(),
            stdout: String::new(),
            fuel: spec.fuel,
            launch: spec.launch_index,
            since_progress: 0,
            live: Vec::new(),
            live_dirty: true,
            live_moves: 0,
            spinning: false,
            live_since: 0,
            clock: 0,
            deadline: spec.deadline,
            cancel: spec.cancel,
            deferred: None,
            bulk: Vec::new(),
            livelock: livelock::Detector::new(nwarps),
            grid_workspace: spec.grid_workspace,
            park: livelock::Parking::new(0, None, None),
            events: Vec::new(),
            step_own: false,
            quiet_pc: spec.quiet_pc,
            sync_pc: prog.sync_points(),
            cta_local_pc: prog.cta_local_points(),
            cta_steps: spec.cta_local,
            cta_picked: false,
            cta_clean: u32::MAX,
            picked: None,
            reduce_unwritten: spec.reduce_unwritten,
            quick_stalls: spec.quick_stalls,
            shared_quiet: Some(prog.shared_quiet())
                .filter(|q| q.eligible.get(spec.func as usize) == Some(&true)),
            clock_read: std::cell::Cell::new(false),
            step_pc0: 0,
            step_single: false,
            step_end: u32::MAX,
            park_reads: false,
            park_blocks: Vec::new(),
            released: Vec::new(),
            free_lanes: Vec::new(),
            finished: None,
        }
    }

    fn thread_ref(&self, w: u32, lane: usize) -> ThreadRef {
        let warp = &self.warps[w as usize];
        let tid = warp.first_tid + lane as u32;
        ThreadRef {
            cta: warp.cta,
            tid,
            global: warp.cta * self.tpb + tid,
            lane: lane as u32,
            warp: w,
        }
    }

    fn set_runnable(&mut self, w: u32) {
        self.live_dirty = true;
        if Some(w) != self.picked {
            self.cta_clean = u32::MAX;
        }
        let ready = self.warps[w as usize].ready != 0;
        self.runnable.set(w, ready);
    }

    pub fn run(mut self) -> LaunchResult {
        let nthreads = self.tpb * self.ctas.len() as u32;
        let info = LaunchInfo {
            launch: self.launch,
            kernel: &self.prog.funcs[self.func as usize].name,
            threads: nthreads,
            ctas: self.ctas.len() as u32,
            threads_per_cta: self.tpb,
        };
        self.hooks.launch_begin(&info);
        self.sched.launch_begin(self.warps.len() as u32);
        // (Hooks that are transparent write memory without being asked: only their
        // load-effect count says anything.)
        let shared = self
            .hooks
            .shared_effects()
            .filter(|_| !self.hooks.transparent());
        self.park = livelock::Parking::new(self.warps.len(), self.hooks.load_effects(), shared);
        // (The hooks are asked per CTA: `Hooks::cta_steps_local`.)
        self.cta_steps &= self.sched.cta_local() && self.ctas.len() > 1;
        // Changes by address (see `livelock::Parking::addressed`): memory writes are
        // logged; the first answer of `changed_blocks` only empties the hooks' log.
        // Loads of memory no thread writes skip their scheduling decision, and the hooks
        // when they agree (`crate::unwritten`): the bound on what this launch writes.
        // (Plain memory without the reduction has no use for it.)
        if !self.reduce_unwritten && self.hooks.transparent() {
            self.shared_quiet = None;
        } else {
            // A kernel that may write anywhere still gets a guard (bounding nothing): its
            // CTAs' shared intervals are tracked through it.
            let mut bound = crate::unwritten::written_ranges(
                self.prog.kernel_writes(self.func),
                &self.params,
                &self.mem.global,
                &self.prog.globals,
            )
            .unwrap_or_else(|| vec![(0, u64::MAX)]);
            // A cooperative launch's grid workspace, found through `%envreg1`/`2` (which
            // the analysis takes for constants): `grid.sync()` writes it.
            if let Some(a) = self.mem.global.holding(self.grid_workspace) {
                bound.push(a.range());
                bound.sort_unstable();
            }
            self.mem.set_write_guard(Some(bound));
        }
        self.mem.log_writes(self.park.fine);
        if self.park.fine {
            self.take_changes();
        }
        if self.park.on {
            // With hooks that count what others can see, a fence is no event (one that
            // drains moves that count) and a store keeps only its own step from parking.
            let fences = !self.park.fine;
            let stores = self.park.fine;
            self.events = self
                .prog
                .insts
                .iter()
                .map(|i| match i.op {
                    Op::Fence { .. } => fences as u8 * EVENT,
                    // A CTA barrier's release wakes the CTA's warps (`try_release`); a
                    // warp barrier completes in its own warp.
                    // An exit's effects on others are named (`exit_lanes`).
                    ref op @ (Op::St { .. } | Op::Bar { .. } | Op::WarpSync { .. } | Op::Exit)
                        if livelock::is_event(op) =>
                    {
                        if stores {
                            OWN
                        } else {
                            EVENT
                        }
                    }
                    ref op => livelock::is_event(op) as u8 * EVENT,
                })
                .collect();
        }
        let mut refills = 0;
        let outcome = loop {
            if let Some(o) = self.deferred.take() {
                break o;
            }
            if self.runnable.is_empty() {
                if self.warps.iter().all(|w| w.exited == w.present) {
                    break LaunchOutcome::Completed;
                }
                if self.stalled() {
                    continue;
                }
                break LaunchOutcome::Deadlock(self.dump(HangCause::Blocked));
            }
            if self.stats.steps & 1023 == 0 && self.stopped() {
                break LaunchOutcome::Timeout(self.dump(HangCause::WallClock));
            }
            if self.stats.lane_instructions >= self.fuel {
                // Only a state with nothing left to drain is a timeout.
                if refills < 64 && self.stalled() {
                    refills += 1;
                    self.fuel = self.fuel.saturating_add(self.fuel / 16 + 1024);
                    continue;
                }
                break LaunchOutcome::Timeout(self.dump(HangCause::Fuel));
            }
            let quick = self.quick();
            // Quick stalls act once 256 steps made no progress (a spin), until a step
            // makes progress: working code pays nothing for them.
            if quick && !self.spinning && self.since_progress >= 256 {
                self.spinning = true;
                self.live_dirty = true;
            }
            if self.spinning {
                self.live_pool();
            }
            // The stall rule's period: `256 + 8` steps per runnable warp; while quick
            // stalls pick among the unparked warps only, their share of it in their own
            // steps (each gets the steps it got before, in expectation).
            let r = self.runnable.len() as u64;
            let share = self.spinning
                && !self.live.is_empty()
                && self.live_since > (256 + 8 * r) * self.live.len() as u64 / r;
            if self.since_progress > 256 + 8 * r || share {
                self.since_progress = 0;
                self.live_since = 0;
                self.stalled();
                if self.spinning {
                    self.live_pool();
                }
            }
            let local = self.cta_pool();
            self.cta_picked = local.is_some();
            self.stats.cta_local_picks += self.cta_picked as u64;
            let (sched, last) = (&mut *self.sched, self.picked);
            let w = if let Some((ws, k)) = local {
                match sched.pick_by_count(k) {
                    Some(i) => self.runnable.nth_in(ws.start, ws.end, i.min(k - 1)),
                    None => {
                        let mut pool = [0u32; 64];
                        let k = self.runnable.members_in(ws.start, ws.end, &mut pool);
                        pick_in(sched, &pool[..k], last)
                    }
                }
            } else if self.spinning && !self.live.is_empty() {
                pick_in(sched, &self.live, last)
            } else {
                let n = self.runnable.len();
                match sched.pick_by_count(n) {
                    Some(i) => self.runnable.select(i.min(n - 1)),
                    None => {
                        self.runnable.refresh();
                        pick_in(sched, self.runnable.list(), last)
                    }
                }
            };
            // (Never `None`: every pool here holds a warp, and the index is clamped into
            // it as the list's was.)
            let Some(w) = w else {
                break LaunchOutcome::Deadlock(self.dump(HangCause::Blocked));
            };
            self.picked = Some(w);
            self.stats.steps += 1;
            self.since_progress += 1;
            // The warp's lowest live pc before the step, while detection runs.
            let pc_before = self.livelock.active().then(|| self.lowest_pc(w));
            if let Some((lanes, insts, writes)) = self.park.parked(w) {
                // Parked (see `livelock`): the step it would run is the one it ran the
                // last time round its cycle, from and to the same states; its counts
                // and, in a cycle of several steps, the words it changes in the warp
                // are all it does.
                self.stats.lane_instructions += lanes;
                self.stats.warp_instructions += insts;
                self.stats.parked_steps += 1;
                self.clock += insts;
                let warp = &mut self.warps[w as usize];
                warp.clock += lanes;
                let mut vals = writes.reg_vals.as_slice();
                for &(start, len) in &writes.reg_runs {
                    // (The runs' lengths add up to the values' count.)
                    let Some((run, rest)) = vals.split_at_checked(len as usize) else {
                        break;
                    };
                    vals = rest;
                    let at = start as usize;
                    if let Some(r) = warp.regs.get_mut(at..at + len as usize) {
                        r.copy_from_slice(run);
                    }
                }
                for &(m, v) in &writes.pcs {
                    // (Branch-free over the warp's 32 pcs: vectorized.)
                    for (l, pc) in warp.pc.iter_mut().enumerate() {
                        if m >> l & 1 != 0 {
                            *pc = v;
                        }
                    }
                }
                for &(word, v) in &writes.other {
                    match word {
                        livelock::Word::Ready => warp.ready = v as u32,
                        livelock::Word::Status(l) => {
                            if (l as usize) < warp.nlanes() {
                                warp.status[l as usize] = match v & 0xffff_ffff {
                                    0 => Status::Ready,
                                    _ => Status::Collective((v >> 32) as u32),
                                };
                            }
                        }
                        // (Registers and pcs are in their own lists; nothing else is
                        // written.)
                        livelock::Word::Pc(_) | livelock::Word::Reg(_) | livelock::Word::Fixed => {}
                    }
                }
            } else {
                // One call site of `step`, so that it stays inlined here (with two, perf
                // showed it as a separate function called every step).
                let before = self.park.on.then(|| {
                    self.park.woken(w);
                    self.park_reads = self.park.fine && self.park.begin_step(w);
                    (
                        self.stats.lane_instructions,
                        self.stats.warp_instructions,
                        self.park.epoch_of(w),
                    )
                });
                match self.step(w) {
                    StepEnd::Continue => {}
                    StepEnd::Ended(o) => break o,
                }
                // (A step that made progress set `since_progress` to 0.)
                if self.since_progress == 0 {
                    self.spinning = false;
                    self.live_since = 0;
                } else {
                    self.live_since += 1;
                }
                if let Some(before) = before {
                    self.after_step(w, before);
                    if quick && self.park.is_parked(w) {
                        // (Not picked while parked.)
                        if let Ok(i) = self.live.binary_search(&w) {
                            self.live.remove(i);
                        }
                        if !self.spinning {
                            self.spinning = true;
                            self.live_dirty = true;
                        }
                        // Every runnable warp is parked: the stall rule would fire after
                        // parked steps only.
                        if self.all_parked() {
                            self.since_progress = 0;
                            self.live_since = 0;
                            self.stats.quick_stalls += 1;
                            self.stalled();
                        }
                    }
                }
            }
            if self
                .livelock
                .watching(self.stats.lane_instructions, nthreads as u64)
            {
                // A warp already cycling keeps cycling until a change restarts detection:
                // `record` does not look at its state, so it is not hashed. Otherwise the
                // state is hashed only after a step that did not move the warp's lowest
                // live pc forward (see `livelock`: every cycle has such a step, so every
                // cycle is still seen, within one more turn of it).
                // With quick stalls, parked warps are not picked: they cycle (their
                // states repeat under memory nothing has changed since detection
                // started, or it would have started over), and the verdict needs the
                // warps that run to cycle too.
                self.runnable.refresh();
                let watched = picked_from(self.spinning, &self.live, self.runnable.list());
                let all = if self.livelock.cycling(w) {
                    self.livelock.record(w, 0, watched)
                } else if pc_before.is_none_or(|b| self.lowest_pc(w) <= b) {
                    // A sample first; the whole state once a sample repeats (`livelock`,
                    // "Samples first").
                    let exact = self.livelock.exact(w) || {
                        let sample = self.state_sample(w);
                        self.livelock.record_sample(w, sample)
                    };
                    if exact {
                        let state = self.state_hash(w);
                        self.livelock.record(w, state, watched)
                    } else {
                        self.livelock.all_cycling(watched)
                    }
                } else {
                    self.livelock.all_cycling(watched)
                };
                if all && !self.stalled() {
                    break LaunchOutcome::Deadlock(self.dump(HangCause::Livelock));
                }
            }
        };
        self.park_reads = false;
        self.mem.log_writes(false);
        self.stats.unwritten_escapes = self.mem.set_write_guard(None);
        self.hooks.launch_end(self.mem);
        pool_regs(&mut self.warps);
        LaunchResult {
            outcome,
            stdout: self.stdout,
            stats: self.stats,
        }
    }

    /// The 8 bytes at offset `off` of lane `l`'s call frame (a `.param` argument of a
    /// built-in call), 0 outside it.
    fn frame_u64(&self, w: u32, l: usize, off: u32) -> u64 {
        let lane = &self.warps[w as usize].lanes[l];
        let s = (lane.local_base + off) as usize;
        lane.local
            .get(s..s + 8)
            .and_then(|x| x.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }

    /// Whether the instruction at `pc` is quiet code ([`crate::Quiet`]).
    #[inline]
    fn quiet(&self, pc: u32) -> bool {
        self.quiet_pc.get(pc as usize).copied().unwrap_or(false)
    }

    /// Whether quick stalls act in this launch: asked for, and hooks that name their
    /// changes (a drain then wakes only the parked warps that read its blocks).
    #[inline]
    fn quick(&self) -> bool {
        self.quick_stalls && self.park.fine
    }

    /// Whether every runnable warp is parked.
    fn all_parked(&self) -> bool {
        self.runnable.iter().all(|r| self.park.is_parked(r))
    }

    /// With `quick_stalls`: brings `live`, the runnable warps that are not parked, up to
    /// date. A parked warp's steps are applied counts that change nothing anyone reads
    /// (`livelock`), so not picking it while it stays parked leaves out only steps that
    /// make no difference: every interleaving of the other warps' steps is still one the
    /// scheduler can pick, and the warp runs again as soon as its epoch moves.
    fn live_pool(&mut self) {
        let moves = self.park.moves();
        if !self.live_dirty && moves == self.live_moves {
            return;
        }
        self.live_dirty = false;
        self.live_moves = moves;
        self.live.clear();
        let park = &self.park;
        self.live
            .extend(self.runnable.iter().filter(|&r| !park.is_parked(r)));
    }

    /// Asks the model to make progress possible (drain a buffered store, read newest
    /// values); true if it changed something.
    ///
    /// When every runnable warp is parked after the change and it woke none of them, the
    /// model is asked again at once, until a change wakes a warp or nothing is left to
    /// change (`livelock`, "Stalls with every warp parked"): the steps the old rule ran
    /// in between were parked steps, which change nothing anyone can see.
    fn stalled(&mut self) -> bool {
        if !self.stalled_once() {
            return false;
        }
        if self.quick() && !self.runnable.is_empty() && self.all_parked() {
            loop {
                let moves = self.park.moves();
                if !self.stalled_once() || self.park.moves() != moves {
                    break;
                }
                self.stats.stall_repeats += 1;
            }
        }
        true
    }

    /// One request of [`Machine::stalled`].
    fn stalled_once(&mut self) -> bool {
        let changed = self.hooks.stalled(self.mem);
        // What the hooks said of a CTA's steps (`ctalocal`) may not hold after a stall
        // (`weak`'s liveness rule): asked again at the next pick. (A stall that the
        // stall rule's period calls comes after 256 steps without progress, when picks
        // are global anyway; one at the end of the fuel or with no warp runnable may not.)
        self.cta_clean = u32::MAX;
        if changed {
            self.livelock.change(self.stats.lane_instructions);
            // With hooks that name what changed, a stall's drain wakes the warps that
            // read its blocks (one drained entry of thousands woke every parked
            // look-back warp of a CUB scan, each of which then compared its registers).
            if self.park.fine {
                self.park.sync_shared(self.hooks.shared_effects());
                self.park_changes(None);
            } else {
                self.park.event();
            }
        }
        changed
    }

    /// The changes the hooks counted, made in a step of warp `own` or (`None`) between
    /// steps: an event by address for the warps that read their blocks when the hooks
    /// and the memory's log name them all, an event for every warp otherwise.
    fn park_changes(&mut self, own: Option<u32>) {
        if self.take_changes() {
            self.park.addressed(&self.park_blocks, own);
        } else {
            self.park.event();
        }
    }

    /// Empties the hooks' and the memory's logs of changed blocks into `park_blocks`;
    /// whether the two named every change.
    fn take_changes(&mut self) -> bool {
        self.park_blocks.clear();
        let named = self.hooks.changed_blocks(&mut self.park_blocks);
        let logged = self.mem.take_written(&mut self.park_blocks);
        named && logged
    }

    /// Something other warps may observe changed (see `livelock`). An event for spin
    /// parking too, unless the hooks count what other threads can see
    /// ([`Hooks::shared_effects`]): then the instruction table and that count decide,
    /// and the callers that change other warps' state (a barrier's release, an exit,
    /// `stalled`) say so themselves.
    #[inline]
    fn changed(&mut self) {
        self.livelock.change(self.stats.lane_instructions);
        if !self.park.fine {
            self.park.event();
        }
    }

    /// Something changed that other warps may observe and whose change is an event for
    /// spin parking in either mode: the model's progress at a stall, threads' exit.
    #[inline]
    fn changed_for_all(&mut self) {
        self.livelock.change(self.stats.lane_instructions);
        self.park.event();
        if self.park.fine {
            // (The event covers whatever the hooks changed: their count and logs start
            // over from here.)
            self.park.sync_shared(self.hooks.shared_effects());
            self.take_changes();
        }
    }

    /// Spin parking after an interpreted step of warp `w` (see `livelock`); `before`:
    /// the lane and warp instruction counts and the epoch before it.
    fn after_step(&mut self, w: u32, before: (u64, u64, u64)) {
        let (own_effects, shared_moved) = self
            .park
            .effects(self.hooks.load_effects(), self.hooks.shared_effects());
        if shared_moved {
            self.park_changes(Some(w));
        }
        // (`effects` ignores `shared` unless the launch began with it.)
        let clock = self.clock_read.replace(false);
        let warp = &self.warps[w as usize];
        // Every live lane ready: no lane waits at a barrier, whose release (by another
        // warp, an event) is the only way the warp's state changes without it running;
        // an unsettled warp's hash holds only until the next event (see `livelock`).
        let settled = warp.ready == warp.present & !warp.exited;
        let own = std::mem::replace(&mut self.step_own, false) || own_effects;
        if !self.step_single
            || own
            || self.step_end == u32::MAX
            || clock
            || self.park.epoch_of(w) != before.2
        {
            self.park.forget(w);
            return;
        }
        let lanes = self.stats.lane_instructions - before.0;
        let insts = self.stats.warp_instructions - before.1;
        if let Some((expected, l, i)) = self.park.verifying(w) {
            // Woken from a cycle of several steps: does this step still do what the
            // cycle's step did (see `livelock::Parking::verify`)?
            let same = lanes == l && insts == i && self.park_state_is(w, expected);
            self.park.verify(w, same);
            return;
        }
        match self.park.wants_probe(w, self.step_pc0, self.step_end) {
            livelock::ProbeAt::No | livelock::ProbeAt::Count => return,
            livelock::ProbeAt::Screen => {
                let same = self.park_state_is(w, self.park.first_state(w));
                self.park.screened(w, same);
                return;
            }
            livelock::ProbeAt::Record => {}
        }
        {
            let mut state = self.park.buffer();
            self.park_state(w, &mut state);
            let warp = &self.warps[w as usize];
            self.park.probe(w, state, settled, lanes, insts, |s| {
                Self::park_layout(warp, s)
            });
        }
    }

    /// Warp `w`'s whole state, as [`Self::state_hash`] covers it, for the lanes that have
    /// not exited (an exited lane's state never changes), written into `out` as words
    /// (compared word for word by [`livelock::Parking::probe`]; see
    /// [`visit_park_state`]).
    fn park_state(&self, w: u32, out: &mut Vec<u64>) {
        out.clear();
        visit_park_state(&self.warps[w as usize], out);
    }

    /// What each word of [`Self::park_state`]'s state of `warp` is, for the parked
    /// cycles of several steps (see `livelock::Parking::probe`), given `state`, the
    /// warp's state now: checked against it (each pc, register and the ready mask is
    /// where the layout says), empty if it does not agree — which would be a bug, and
    /// then the cycle is not parked.
    fn park_layout(warp: &Warp, state: &[u64]) -> Vec<livelock::Word> {
        use livelock::Word;
        let mut out = Layout(Vec::new());
        visit_park_state(warp, &mut out);
        let agrees = out.0.len() == state.len()
            && out.0.iter().zip(state).all(|(w, &x)| match *w {
                Word::Ready => x as u32 == warp.ready,
                Word::Pc(l) => x as u32 == warp.pc[l as usize % WARP],
                Word::Reg(i) => warp.regs.get(i as usize) == Some(&x),
                Word::Status(_) | Word::Fixed => true,
            });
        debug_assert!(agrees, "park_layout disagrees with park_state");
        if agrees {
            out.0
        } else {
            Vec::new()
        }
    }

    /// Whether warp `w`'s state is `expected` (as [`Self::park_state`] would write it),
    /// found without writing it.
    fn park_state_is(&self, w: u32, expected: &[u64]) -> bool {
        let mut c = Compare {
            expected,
            at: 0,
            same: true,
        };
        visit_park_state(&self.warps[w as usize], &mut c);
        c.same && c.at == expected.len()
    }

    /// The lowest pc among warp `w`'s lanes that have not exited (`u32::MAX` when all
    /// have): a function of the warp's state, as the livelock detector's sampling needs.
    #[inline]
    fn lowest_pc(&self, w: u32) -> u32 {
        let warp = &self.warps[w as usize];
        // (Branch-free, so that it vectorizes: it runs twice per step while the livelock
        // detector watches.)
        let mut lo = u32::MAX;
        for (l, &pc) in warp.pc.iter().enumerate() {
            let live = warp.exited >> l & 1 == 0;
            lo = lo.min(if live { pc } else { u32::MAX });
        }
        lo
    }

    /// A function of warp `w`'s state that [`Machine::state_hash`] covers: every lane's
    /// pc, the ready and exited masks, and every register of its first and last ready
    /// lanes (see `livelock`, "Samples first").
    fn state_sample(&self, w: u32) -> u64 {
        use std::hash::Hasher;
        let warp = &self.warps[w as usize];
        let mut h = livelock::StateHasher::default();
        h.write_u32(warp.ready);
        h.write_u32(warp.exited);
        for pc in &warp.pc {
            h.write_u32(*pc);
        }
        let first = (warp.ready.trailing_zeros() as usize).min(WARP - 1);
        let last = WARP - 1 - (warp.ready.leading_zeros() as usize).min(WARP - 1);
        for r in warp.regs.chunks_exact(WARP) {
            h.write_u64(r[first]);
            h.write_u64(r[last]);
        }
        h.finish()
    }

    /// Everything about warp `w` that decides what it does next, besides memory.
    fn state_hash(&self, w: u32) -> u64 {
        use std::hash::Hasher;
        let warp = &self.warps[w as usize];
        let mut h = livelock::StateHasher::default();
        h.write_u32(warp.ready);
        h.write_u32(warp.exited);
        for (l, lane) in warp.lanes.iter().enumerate() {
            h.write_u32(warp.pc[l]);
            h.write_u32(lane.func);
            let (tag, v) = match warp.status[l] {
                Status::Ready => (0, 0),
                Status::Exited => (1, 0),
                Status::Barrier(id) => (2, id),
                Status::Collective(m) => (3, m),
            };
            h.write_u32(tag);
            h.write_u32(v);
            h.write_u32(warp.reg_base[l]);
            h.write_u32(lane.local_base);
            h.write_u32(lane.frames().len() as u32);
            for f in lane.frames() {
                h.write_u32(f.func);
                h.write_u32(f.ret_pc);
                h.write_u32(f.reg_base);
                h.write_u32(f.local_base);
                h.write_u32(f.call_pc);
            }
            let (open, groups) = lane.async_counts();
            h.write_u32(open as u32);
            h.write_u32(groups as u32);
            h.write(&lane.local);
        }
        for r in &warp.regs {
            h.write_u64(*r);
        }
        h.finish()
    }

    fn stopped(&self) -> bool {
        self.cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            || self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }

    fn dump(&self, cause: HangCause) -> HangDump {
        let mut warps = Vec::new();
        for (wi, w) in self.warps.iter().enumerate() {
            if w.exited == w.present {
                continue;
            }
            let mut groups: Vec<(u32, String, SiteInfo)> = Vec::new();
            for l in 0..w.nlanes() {
                let what = match w.status[l] {
                    Status::Exited => continue,
                    Status::Ready => "running".to_string(),
                    Status::Barrier(id) => format!("waiting at barrier {id}"),
                    Status::Collective(m) => format!("waiting for lanes {m:#010x}"),
                };
                let site_id = self.prog.insts.get(w.pc[l] as usize).map_or(0, |i| i.site);
                let site = self
                    .prog
                    .sites
                    .get(site_id as usize)
                    .cloned()
                    .unwrap_or(SiteInfo {
                        text: "?".into(),
                        function: String::new(),
                        ptx_line: 0,
                        cuda: None,
                    });
                match groups.iter_mut().find(|g| g.1 == what && g.2 == site) {
                    Some(g) => g.0 |= 1 << l,
                    None => groups.push((1 << l, what, site)),
                }
            }
            warps.push(WarpDump {
                warp: wi as u32,
                cta: w.cta,
                block_idx: self.grid.split(w.cta),
                groups,
            });
        }
        HangDump { warps, cause }
    }

    fn site(&self, pc: u32) -> SiteInfo {
        let id = self.prog.insts.get(pc as usize).map_or(0, |i| i.site);
        self.prog
            .sites
            .get(id as usize)
            .cloned()
            .unwrap_or(SiteInfo {
                text: "?".into(),
                function: String::new(),
                ptx_line: 0,
                cuda: None,
            })
    }

    fn fault(
        &self,
        w: u32,
        lane: usize,
        pc: u32,
        kind: FaultKind,
        message: String,
    ) -> LaunchOutcome {
        let t = self.thread_ref(w, lane);
        LaunchOutcome::Fault(Box::new(Fault {
            kind,
            thread: t,
            block_idx: self.grid.split(t.cta),
            thread_idx: self.block.split(t.tid),
            site: self.site(pc),
            message,
        }))
    }

    fn mem_fault(&self, w: u32, lane: usize, pc: u32, e: MemError) -> LaunchOutcome {
        self.fault(w, lane, pc, e.kind, e.to_string())
    }

    /// The address of lane `l`'s surface access of `bytes` bytes through the surface in
    /// `surf` at `coords` (`crate::texture::surface_address`), or the fault it makes.
    #[allow(clippy::too_many_arguments)]
    fn surface_at(
        &self,
        w: u32,
        l: usize,
        pc: u32,
        surf: Src,
        coords: &[Src],
        bytes: usize,
        mode: crate::texture::Boundary,
    ) -> Result<Option<u64>, LaunchOutcome> {
        use crate::texture::SurfaceError;
        let mut c = [0u32; 3];
        for (x, s) in c.iter_mut().zip(coords) {
            *x = self.src(w, l, *s) as u32;
        }
        let handle = self.src(w, l, surf);
        let c = &c[..coords.len().min(3)];
        crate::texture::surface_address(&self.mem.textures, handle, c, bytes as u32, mode).map_err(
            |e| match e {
                SurfaceError::NoSurface(h) => self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    format!("surface access through {h:#x}, which is no live surface object"),
                ),
                SurfaceError::OutOfRange(at) => self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::OutOfBounds,
                    format!(
                        "surface access of {bytes} byte(s) at {at:?} (x in bytes) outside the surface (.trap)"
                    ),
                ),
            },
        )
    }

    /// Reads any source operand for one lane: registers and immediates inline, the rest
    /// out of line.
    #[inline(always)]
    fn src(&self, w: u32, lane: usize, s: Src) -> u64 {
        let warp = &self.warps[w as usize];
        match s {
            Src::Reg(r) => warp.regs[row(warp.reg_base[lane], r) + lane],
            Src::Imm(v) => v,
            _ => self.src_rare(w, lane, s),
        }
    }

    #[inline(never)]
    fn src_rare(&self, w: u32, lane: usize, s: Src) -> u64 {
        let warp = &self.warps[w as usize];
        match s {
            Src::Reg(r) => warp.regs[row(warp.reg_base[lane], r) + lane],
            Src::NotReg(r) => (warp.regs[row(warp.reg_base[lane], r) + lane] == 0) as u64,
            Src::Imm(v) => v,
            Src::LocalAddr(o) => (warp.lanes[lane].local_base + o) as u64,
            Src::Special(sp, d) => self.special(w, lane, sp, d),
        }
    }

    fn special(&self, w: u32, lane: usize, sp: fencehound_ptx::Special, d: u8) -> u64 {
        use fencehound_ptx::Special as S;
        let warp = &self.warps[w as usize];
        let tid = warp.first_tid + lane as u32;
        let lane32 = lane as u32;
        if matches!(
            sp,
            S::Clock
                | S::ClockHi
                | S::Clock64
                | S::Globaltimer
                | S::GlobaltimerLo
                | S::GlobaltimerHi
        ) {
            // A step that reads the time is never parked (see `livelock`).
            self.clock_read.set(true);
        }
        match sp {
            S::Tid => self.block.component(tid, d) as u64,
            S::Ntid => self.block.get(d) as u64,
            S::Ctaid => self.grid.component(warp.cta, d) as u64,
            S::Nctaid => self.grid.get(d) as u64,
            S::Laneid => lane32 as u64,
            S::Warpid => (warp.first_tid / WARP as u32) as u64,
            S::Nwarpid => 64,
            S::Smid => (warp.cta % NUM_SMS) as u64,
            S::Nsmid => NUM_SMS as u64,
            S::Gridid => self.launch as u64 + 1,
            S::LanemaskEq => 1u64 << lane32,
            S::LanemaskLe => ((2u64 << lane32) - 1) & 0xffff_ffff,
            S::LanemaskLt => (1u64 << lane32) - 1,
            S::LanemaskGe => (!((1u64 << lane32) - 1)) & 0xffff_ffff,
            S::LanemaskGt => (!((2u64 << lane32) - 1)) & 0xffff_ffff,
            // Virtual clocks: deterministic functions of the work done so far.
            S::Clock => (self.clock + warp.clock) & 0xffff_ffff,
            S::ClockHi => (self.clock + warp.clock) >> 32,
            S::Clock64 => self.clock + warp.clock,
            S::Globaltimer => self.clock * 32,
            S::GlobaltimerLo => (self.clock * 32) & 0xffff_ffff,
            S::GlobaltimerHi => (self.clock * 32) >> 32,
            S::DynamicSmemSize => self.dyn_shared as u64,
            S::TotalSmemSize | S::AggrSmemSize => {
                self.mem.shared.first().map_or(0, |s| s.len()) as u64
            }
            // The driver ABI of cooperative launches (`GRID_WORKSPACE_BYTES`).
            S::Envreg(1) => self.grid_workspace >> 32,
            S::Envreg(2) => self.grid_workspace & 0xffff_ffff,
            // Performance counters and other environment registers read as 0; the cluster
            // registers are refused when the module is loaded.
            _ => 0,
        }
    }

    #[inline]
    fn set(&mut self, w: u32, lane: usize, d: Slot, v: u64) {
        let warp = &mut self.warps[w as usize];
        let base = warp.reg_base[lane];
        warp.regs[row(base, d) + lane] = v;
    }

    /// Hints the CPU to fetch warp `w`'s scheduling state (what the next step reads
    /// first: its ready mask, program counters and frames, its parking record).
    #[inline(always)]
    fn prefetch_warp(&self, w: u32) {
        let Some(warp) = self.warps.get(w as usize) else {
            return;
        };
        prefetch(&warp.ready);
        prefetch(&warp.pc[0]);
        prefetch(&warp.pc[WARP - 1]);
        prefetch(&warp.reg_base[0]);
        prefetch(&warp.reg_base[WARP - 1]);
        prefetch(&warp.regs);
        self.park.prefetch(w);
    }

    /// Hints the CPU to fetch the register row that warp `w`'s next instruction, if a
    /// memory access, takes its address from (for its first ready lane's group).
    #[inline(always)]
    fn prefetch_operands(&self, w: u32) {
        let Some(warp) = self.warps.get(w as usize) else {
            return;
        };
        let first = warp.ready.trailing_zeros() as usize;
        if first >= WARP {
            return;
        }
        let (pc, base) = (warp.pc[first], warp.reg_base[first]);
        let addr = match self.prog.insts.get(pc as usize).map(|i| &i.op) {
            Some(Op::Ld { addr, .. } | Op::St { addr, .. } | Op::Atom { addr, .. }) => addr,
            _ => return,
        };
        if let AddrBase::Reg(slot) = addr.base {
            let at = row(base, slot);
            if let Some(r) = warp.regs.get(at..at + WARP) {
                for l in (0..WARP).step_by(8) {
                    prefetch(&r[l]);
                }
            }
        }
    }

    fn step(&mut self, w: u32) -> StepEnd {
        self.step_end = u32::MAX;
        self.step_single = false;
        if let Some(f) = self.finished.take() {
            let warp = &mut self.warps[f as usize];
            self.free_lanes.push(std::mem::take(&mut warp.lanes));
            pool_regs(std::slice::from_mut(warp));
        }
        let warp = &self.warps[w as usize];
        if warp.lanes.is_empty() && warp.ready != 0 {
            self.start_warp(w);
        }
        // Choose the group: ready lanes sharing (pc, frame).
        let (mask, pc0) = {
            let warp = &self.warps[w as usize];
            let ready = warp.ready;
            if ready == 0 {
                return StepEnd::Continue;
            }
            // The common case, a converged warp: one group, found without building a list.
            let first = ready.trailing_zeros() as usize;
            let (pc, base) = (warp.pc[first], warp.reg_base[first]);
            // The ready lanes at (pc, frame): one pass of whole-array compares, four
            // lanes at a time, whatever the divergence (a converged warp's test and a
            // divergent warp's lane-by-lane loop were two passes, a quarter of
            // `Machine::run` on a bitonic sort).
            let same = lanes_at(&warp.pc, &warp.reg_base, pc, base) & ready;
            if same == ready {
                self.step_single = true;
                (ready, pc)
            } else {
                self.step_single = false;
                // (pc, reg_base, mask) per group, ordered by program counter.
                // One whole-warp compare per group (the first group is `same`).
                let mut groups = [(0u32, 0u32, 0u32); WARP];
                groups[0] = (pc, base, same);
                let mut n = 1;
                let mut rest = ready & !same;
                while rest != 0 {
                    let l = rest.trailing_zeros() as usize;
                    let (lpc, lbase) = (warp.pc[l], warp.reg_base[l]);
                    let m = lanes_at(&warp.pc, &warp.reg_base, lpc, lbase) & rest;
                    groups[n] = (lpc, lbase, m);
                    n += 1;
                    rest &= !m;
                }
                let groups = &mut groups[..n];
                groups.sort_unstable();
                let mut masks = [0u32; WARP];
                for (m, g) in masks.iter_mut().zip(groups.iter()) {
                    *m = g.2;
                }
                let k = self.sched.pick_group_of(&masks[..n]).min(n - 1);
                (groups[k].2, groups[k].0)
            }
        };
        self.step_pc0 = pc0;
        self.step_end = u32::MAX;
        // The warps the scheduler will most likely pick next (their state is cold in a
        // launch of thousands of warps) are fetched into cache while this step runs, in
        // two stages: the one after next, its scheduling state; the next one (whose
        // scheduling state the previous step fetched), the register row its first
        // instruction addresses memory with.
        // (Not after a pick among one CTA's warps: the next pick most likely is one
        // too, among warps whose state that CTA's steps keep in cache.)
        let n = self.runnable.len();
        if n > 64 && !self.cta_picked {
            if let Some(v) = self.sched.peek(n, 1).and_then(|j| self.runnable.select(j)) {
                self.prefetch_warp(v);
            }
            if let Some(v) = self.sched.peek(n, 0).and_then(|j| self.runnable.select(j)) {
                self.prefetch_operands(v);
            }
        }
        let mut pc = pc0;
        let mut run = 0u32;
        let mut counted = 0u32;
        loop {
            let Some(inst) = self.prog.insts.get(pc as usize) else {
                let l = mask.trailing_zeros() as usize;
                return StepEnd::Ended(self.fault(
                    w,
                    l,
                    pc.saturating_sub(1),
                    FaultKind::InvalidAddress,
                    "ran past the end of the function".into(),
                ));
            };
            // `counted`: the step's instructions that are not quiet code. Quiet code does
            // not end a step, nor count towards its bound (up to MAX_QUIET_RUN in all), and
            // a step that has run only quiet code so far runs the next instruction even
            // when it is a preemption point: the instrumentation before an original
            // instruction belongs to that instruction's step, as a native hook does.
            // A `nanosleep` is a preemption point even in quiet code (the runtime's lock
            // backs off with one, so a lane waiting for another lane of its warp yields).
            let quiet = self.quiet(pc);
            if run > 0
                && ((self.sync_pc[pc as usize]
                    && ((counted > 0 && !quiet) || matches!(inst.op, Op::Nanosleep))
                    && !self.reads_unwritten(w, mask, inst))
                    || counted >= MAX_RUN
                    || run >= MAX_QUIET_RUN)
            {
                break;
            }
            run += 1;
            counted += !quiet as u32;
            if self.park.on && self.events[pc as usize] != 0 {
                if self.events[pc as usize] == EVENT {
                    self.park.event();
                } else {
                    self.step_own = true;
                }
            }
            let n = mask.count_ones() as u64;
            self.stats.lane_instructions += n;
            self.stats.warp_instructions += 1;
            self.clock += 1;
            self.warps[w as usize].clock += n;
            // Guard.
            let active = match inst.guard {
                None => mask,
                Some((p, neg)) => {
                    // The group shares its frame: the predicate is one row.
                    let warp = &self.warps[w as usize];
                    let base = warp.reg_base[mask.trailing_zeros() as usize];
                    let at = row(base, p);
                    match warp.regs.get(at..at + WARP) {
                        Some(r) if mask.count_ones() <= SPARSE => {
                            let mut m = 0u32;
                            for l in lanes(mask) {
                                m |= (((r[l] != 0) != neg) as u32) << l;
                            }
                            m
                        }
                        Some(r) => {
                            let mut m = 0u32;
                            for (l, v) in r.iter().enumerate() {
                                m |= (((*v != 0) != neg) as u32) << l;
                            }
                            m & mask
                        }
                        None => {
                            let mut m = 0;
                            for l in lanes(mask) {
                                let v = warp.regs[row(warp.reg_base[l], p) + l] != 0;
                                if v != neg {
                                    m |= 1 << l;
                                }
                            }
                            m
                        }
                    }
                }
            };
            let res = if active == 0 {
                Flow::Next
            } else {
                match self.exec(w, active, mask, pc, inst) {
                    Ok(f) => f,
                    Err(o) => return StepEnd::Ended(o),
                }
            };
            match res {
                Flow::Next => pc += 1,
                Flow::Jump(t) => {
                    if active == mask {
                        pc = t;
                    } else {
                        let warp = &mut self.warps[w as usize];
                        for l in lanes(mask) {
                            warp.pc[l] = if active >> l & 1 == 1 { t } else { pc + 1 };
                        }
                        return StepEnd::Continue;
                    }
                }
                Flow::PerLane => {
                    // exec already set each active lane's pc/status; inactive lanes
                    // move on.
                    let warp = &mut self.warps[w as usize];
                    for l in lanes(mask & !active) {
                        warp.pc[l] = pc + 1;
                    }
                    let ready = warp.ready;
                    if ready & mask == mask {
                        // Everyone still ready: continue as one group if still together.
                        let p = warp.pc[mask.trailing_zeros() as usize];
                        let b = warp.reg_base[mask.trailing_zeros() as usize];
                        if lanes(mask).all(|l| warp.pc[l] == p && warp.reg_base[l] == b) {
                            pc = p;
                            continue;
                        }
                    }
                    self.set_runnable(w);
                    return StepEnd::Continue;
                }
            }
        }
        let warp = &mut self.warps[w as usize];
        for l in lanes(mask) {
            warp.pc[l] = pc;
        }
        self.step_end = pc;
        StepEnd::Continue
    }
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    /// Whether `inst` needs no scheduling decision (`crate::unwritten`): a load by the
    /// lanes of `mask` of bytes that no thread of the launch writes, or a generic access
    /// that every lane makes to its own local memory. Counts the loads.
    #[inline]
    fn reads_unwritten(&mut self, w: u32, mask: u32, inst: &Inst) -> bool {
        if !self.reduce_unwritten {
            return false;
        }
        let (space, addr, len, load) = match inst.op {
            Op::Ld {
                space: space @ (MemSpace::Global | MemSpace::Generic),
                ref ds,
                addr,
                size,
                ..
            } => (space, addr, size as u64 * ds.len() as u64, true),
            Op::St {
                space: MemSpace::Generic,
                addr,
                ..
            } => (MemSpace::Generic, addr, 0, false),
            Op::Ld {
                space: MemSpace::Shared,
                ..
            } => {
                let ok = self.shared_settled(w);
                self.stats.unwritten_loads += ok as u64;
                return ok;
            }
            _ => return false,
        };
        if space == MemSpace::Global && !self.mem.guarded() {
            return false;
        }
        let mem = &*self.mem;
        // Per lane: clear (no decision needed), not clear, or in shared memory (clear when
        // the CTA's shared memory is settled, asked once after the lanes).
        let mut in_shared = false;
        let mut clear = |raw: u64| match (space, window_of(raw)) {
            (_, Some((Window::Local, _))) if space == MemSpace::Generic => true,
            _ if !load => false,
            (MemSpace::Global, _) | (_, Some((Window::Global, _))) => mem.unwritten(raw, len),
            (_, Some((Window::Const, _))) => true,
            (_, Some((Window::Shared, _))) => {
                in_shared = true;
                true
            }
            _ => false,
        };
        let off = addr.offset as u64;
        let ok = match addr.base {
            AddrBase::Reg(r) => {
                let warp = &self.warps[w as usize];
                let at = row(warp.reg_base[mask.trailing_zeros() as usize], r);
                match warp.regs.get(at..at + WARP) {
                    Some(regs) => lanes(mask).all(|l| clear(regs[l].wrapping_add(off))),
                    None => false,
                }
            }
            AddrBase::Abs(a) => clear(a.wrapping_add(off)),
            AddrBase::Frame(_) => false,
        };
        let ok = ok && (!in_shared || self.shared_settled(w));
        self.stats.unwritten_loads += (ok && load) as u64;
        ok
    }

    /// Whether no thread of warp `w`'s CTA can write shared memory before the CTA's next
    /// barrier releases, nor has a store that could still become visible (the hooks say
    /// its threads are settled): `crate::unwritten::shared_quiet`.
    fn shared_settled(&mut self, w: u32) -> bool {
        let Some(q) = self.shared_quiet else {
            return false;
        };
        let cta = self.warps[w as usize].cta as usize;
        if self.ctas[cta].quiet {
            return true;
        }
        for v in self.ctas[cta].warps.clone() {
            let warp = &self.warps[v as usize];
            let live = warp.present & !warp.exited;
            if !self
                .hooks
                .settled(warp.cta, warp.cta * self.tpb + warp.first_tid, live)
            {
                return false;
            }
            for l in lanes(live) {
                if matches!(warp.status[l], Status::Barrier(_) | Status::Exited) {
                    continue;
                }
                if q.may_write.get(warp.pc[l] as usize) != Some(&false) {
                    return false;
                }
            }
        }
        self.ctas[cta].quiet = true;
        true
    }
}

/// Control-flow result of one instruction for the active lanes.
enum Flow {
    Next,
    Jump(u32),
    /// Lanes' pcs/statuses were updated individually.
    PerLane,
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    fn exec(
        &mut self,
        w: u32,
        active: u32,
        group: u32,
        pc: u32,
        inst: &'p Inst,
    ) -> Result<Flow, LaunchOutcome> {
        match &inst.op {
            Op::Alu(a) => {
                let warp = &mut self.warps[w as usize];
                let base = warp.reg_base[active.trailing_zeros() as usize];
                alu::exec(a, &mut warp.regs, base as usize, active);
                Ok(Flow::Next)
            }
            Op::Mov { d, a } => {
                use fencehound_ptx::Special as S;
                match *a {
                    // `%tid.x`: (first_tid + lane) % ntid.x, stepped lane to lane instead
                    // of divided for each.
                    Src::Special(S::Tid, k) if k % 3 == 0 => {
                        let x = self.block.x;
                        let mut r = self.warps[w as usize].first_tid % x;
                        let mut vals = [0u64; WARP];
                        for v in vals.iter_mut() {
                            *v = r as u64;
                            r += 1;
                            if r == x {
                                r = 0;
                            }
                        }
                        for l in lanes(active) {
                            self.set(w, l, *d, vals[l]);
                        }
                        return Ok(Flow::Next);
                    }
                    // The same for every lane of the warp: read once.
                    Src::Special(S::Ctaid | S::Ntid | S::Nctaid, _) => {
                        let v = self.src(w, active.trailing_zeros() as usize, *a);
                        for l in lanes(active) {
                            self.set(w, l, *d, v);
                        }
                        return Ok(Flow::Next);
                    }
                    _ => {}
                }
                for l in lanes(active) {
                    let v = self.src(w, l, *a);
                    self.set(w, l, *d, v);
                }
                Ok(Flow::Next)
            }
            Op::Movs { pairs } => {
                let mut vals = [0u64; 8];
                for l in lanes(active) {
                    for (k, (_, a)) in pairs.iter().enumerate().take(8) {
                        vals[k] = self.src(w, l, *a);
                    }
                    for (k, (d, _)) in pairs.iter().enumerate().take(8) {
                        self.set(w, l, *d, vals[k]);
                    }
                }
                Ok(Flow::Next)
            }
            Op::Pack { d, parts, bits } => {
                for l in lanes(active) {
                    let mut v = 0u64;
                    for (k, p) in parts.iter().enumerate() {
                        let part = self.src(w, l, *p) & mask_bits(*bits);
                        v |= part << (k as u32 * bits);
                    }
                    self.set(w, l, *d, v);
                }
                Ok(Flow::Next)
            }
            Op::Unpack { ds, a, bits } => {
                for l in lanes(active) {
                    let v = self.src(w, l, *a);
                    for (k, d) in ds.iter().enumerate() {
                        if let Some(d) = d {
                            self.set(w, l, *d, (v >> (k as u32 * bits)) & mask_bits(*bits));
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Op::Ld { .. } => {
                self.exec_ld(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::St { .. } => {
                self.exec_st(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::Atom { .. } => {
                self.exec_atom(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::AtomVec { .. } => {
                self.exec_atom_vec(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::Mbar { .. } => {
                self.exec_mbar(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::Cvta {
                to_generic,
                space,
                d,
                a,
                bits,
            } => {
                for l in lanes(active) {
                    let v = self.src(w, l, *a);
                    let win = match space {
                        MemSpace::Shared => SHARED_WINDOW,
                        MemSpace::Local => LOCAL_WINDOW,
                        MemSpace::Const => 0,
                        MemSpace::KernelParam => PARAM_WINDOW,
                        _ => 0,
                    };
                    let r = if *to_generic {
                        v.wrapping_add(win)
                    } else if *space == MemSpace::Const || win == 0 {
                        v
                    } else {
                        v.wrapping_sub(win)
                    };
                    self.set(w, l, *d, r & mask_bits(*bits));
                }
                Ok(Flow::Next)
            }
            Op::Isspacep { space, d, a } => {
                for l in lanes(active) {
                    let v = self.src(w, l, *a);
                    let want = match space {
                        MemSpace::Global => Window::Global,
                        MemSpace::Shared => Window::Shared,
                        MemSpace::Local => Window::Local,
                        MemSpace::Const => Window::Const,
                        _ => Window::Param,
                    };
                    let r = window_of(v).is_some_and(|(wn, _)| wn == want);
                    self.set(w, l, *d, r as u64);
                }
                Ok(Flow::Next)
            }
            Op::Bra { target } => Ok(Flow::Jump(*target)),
            Op::Brx { index, targets } => {
                let warp_lanes: Vec<usize> = lanes(active).collect();
                for l in warp_lanes {
                    let i = self.src(w, l, *index) as usize;
                    let Some(t) = targets.get(i) else {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::Undefined,
                            format!("brx.idx index {i} out of range"),
                        ));
                    };
                    self.warps[w as usize].pc[l] = *t;
                }
                Ok(Flow::PerLane)
            }
            Op::Call {
                callee,
                args,
                rets: _,
            } => {
                let mut frame_args = Vec::new();
                let mut reg_args = Vec::new();
                for l in lanes(active) {
                    frame_args.clear();
                    reg_args.clear();
                    for a in args {
                        match *a {
                            CallArg::Frame { from, to, bytes } => {
                                frame_args.push((from, to, bytes))
                            }
                            CallArg::Reg { value, to } => {
                                reg_args.push((self.src(w, l, value), to))
                            }
                        }
                    }
                    self.enter_call(w, l, pc, *callee, &frame_args, &reg_args)?;
                }
                Ok(Flow::PerLane)
            }
            Op::CallIndirect { target, args, rets } => {
                for l in lanes(active) {
                    let v = self.src(w, l, *target);
                    let idx = v.wrapping_sub(FUNC_WINDOW) / 16;
                    let f = (v >= FUNC_WINDOW && (v - FUNC_WINDOW).is_multiple_of(16))
                        .then(|| self.prog.funcs.get(idx as usize))
                        .flatten()
                        .filter(|f| !f.is_kernel);
                    let Some(f) = f else {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::Undefined,
                            format!("indirect call to {v:#x}, which is not a device function"),
                        ));
                    };
                    let reg_params = f
                        .params
                        .iter()
                        .chain(&f.rets)
                        .any(|p| matches!(p, ParamLoc::Reg(_)));
                    if reg_params {
                        let msg = format!(
                            "indirect call to `{}`, which has `.reg` parameters (not supported)",
                            f.name
                        );
                        return Err(self.fault(w, l, pc, FaultKind::Undefined, msg));
                    }
                    if f.params.len() != args.len() || f.rets.len() != rets.len() {
                        let msg = format!(
                            "indirect call passes {} argument(s) and {} return value(s) to `{}`, which takes {} and {}",
                            args.len(),
                            rets.len(),
                            f.name,
                            f.params.len(),
                            f.rets.len()
                        );
                        return Err(self.fault(w, l, pc, FaultKind::Undefined, msg));
                    }
                    let triples: Vec<(u32, u32, u32)> = args
                        .iter()
                        .zip(&f.params)
                        .filter_map(|(from, p)| match p {
                            ParamLoc::Frame(to, n) => Some((*from, *to, *n)),
                            ParamLoc::Reg(_) => None,
                        })
                        .collect();
                    self.enter_call(w, l, pc, idx as u32, &triples, &[])?;
                }
                Ok(Flow::PerLane)
            }
            Op::Ret => {
                let mut exits = 0u32;
                for l in lanes(active) {
                    let warp = &mut self.warps[w as usize];
                    let lane = &mut warp.lanes[l];
                    match lane.rare.as_mut().and_then(|r| r.frames.pop()) {
                        None => exits |= 1 << l,
                        Some(fr) => {
                            let indirect: Vec<CallRet>;
                            let rets: &[CallRet] = match &self.prog.insts[fr.call_pc as usize].op {
                                Op::Call { rets, .. } => rets,
                                Op::CallIndirect { rets, .. } => {
                                    // Callee offsets from the function returning now.
                                    let f = &self.prog.funcs[lane.func as usize];
                                    indirect = f
                                        .rets
                                        .iter()
                                        .zip(rets)
                                        .filter_map(|(p, to)| match p {
                                            ParamLoc::Frame(from, n) => Some(CallRet::Frame {
                                                from: *from,
                                                to: *to,
                                                bytes: *n,
                                            }),
                                            ParamLoc::Reg(_) => None,
                                        })
                                        .collect();
                                    &indirect
                                }
                                _ => &[],
                            };
                            for r in rets {
                                match *r {
                                    CallRet::Frame { from, to, bytes } => {
                                        let src = (lane.local_base + from) as usize;
                                        let dst = (fr.local_base + to) as usize;
                                        lane.local.copy_within(src..src + bytes as usize, dst);
                                    }
                                    CallRet::Reg { from, to } => {
                                        let v = warp.regs[row(warp.reg_base[l], from) + l];
                                        warp.regs[row(fr.reg_base, to) + l] = v;
                                    }
                                }
                            }
                            warp.reg_base[l] = fr.reg_base;
                            lane.local_base = fr.local_base;
                            lane.func = fr.func;
                            warp.pc[l] = fr.ret_pc;
                        }
                    }
                }
                if exits != 0 {
                    self.finish_async_copies(w, exits, pc)?;
                    self.exit_lanes(w, exits);
                }
                Ok(Flow::PerLane)
            }
            Op::Exit => {
                self.finish_async_copies(w, active, pc)?;
                self.exit_lanes(w, active);
                Ok(Flow::PerLane)
            }
            Op::Trap | Op::Brkpt => {
                let l = active.trailing_zeros() as usize;
                let msg = if matches!(inst.op, Op::Trap) {
                    "trap instruction executed"
                } else {
                    "brkpt instruction executed"
                };
                Err(LaunchOutcome::Trap(Box::new(TrapInfo {
                    message: msg.into(),
                    thread: self.thread_ref(w, l),
                    site: self.site(pc),
                })))
            }
            Op::AssertFail { args } => {
                let l = active.trailing_zeros() as usize;
                let lane = &self.warps[w as usize].lanes[l];
                let rd = |o: u32, n: usize| -> u64 {
                    let s = (lane.local_base + o) as usize;
                    let mut b = [0u8; 8];
                    if let Some(x) = lane.local.get(s..s + n) {
                        b[..n].copy_from_slice(x);
                    }
                    u64::from_le_bytes(b)
                };
                let msg = read_cstr(self.mem, lane, rd(args[0], 8), 1024);
                let file = read_cstr(self.mem, lane, rd(args[1], 8), 1024);
                let line = rd(args[2], 4);
                let func = read_cstr(self.mem, lane, rd(args[3], 8), 1024);
                let t = self.thread_ref(w, l);
                let b = self.grid.split(t.cta);
                let th = self.block.split(t.tid);
                Err(LaunchOutcome::Trap(Box::new(TrapInfo {
                    message: format!(
                        "{file}:{line}: {func}: block [{},{},{}], thread [{},{},{}] Assertion `{msg}` failed.",
                        b[0], b[1], b[2], th[0], th[1], th[2]
                    ),
                    thread: t,
                    site: self.site(pc),
                })))
            }
            Op::DevMalloc { size, ret } => {
                for l in lanes(active) {
                    let len = self.frame_u64(w, l, *size);
                    let p = self.mem.device_malloc(len);
                    let lane = &mut self.warps[w as usize].lanes[l];
                    let r = (lane.local_base + ret) as usize;
                    if let Some(x) = lane.local.get_mut(r..r + 8) {
                        x.copy_from_slice(&p.to_le_bytes());
                    }
                }
                Ok(Flow::Next)
            }
            Op::DevFree { ptr } => {
                for l in lanes(active) {
                    let p = self.frame_u64(w, l, *ptr);
                    if !self.mem.device_free(p) {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::Undefined,
                            format!(
                                "free({p:#x}): not a pointer device-side malloc returned, or \
                                 freed already"
                            ),
                        ));
                    }
                }
                Ok(Flow::Next)
            }
            Op::Vprintf { args, ret } => {
                for l in lanes(active) {
                    let lane = &self.warps[w as usize].lanes[l];
                    let rd = |o: u32| -> u64 {
                        let s = (lane.local_base + o) as usize;
                        let mut b = [0u8; 8];
                        if let Some(x) = lane.local.get(s..s + 8) {
                            b.copy_from_slice(x);
                        }
                        u64::from_le_bytes(b)
                    };
                    let fmt = read_cstr(self.mem, lane, rd(args[0]), 4096);
                    let text = crate::printf::format(
                        &fmt,
                        rd(args[1]),
                        |addr, n| read_generic(self.mem, lane, addr, n),
                        |addr| read_cstr(self.mem, lane, addr, 4096),
                    );
                    let len = text.len();
                    self.stdout.push_str(&text);
                    if let Some(r) = ret {
                        let lane = &mut self.warps[w as usize].lanes[l];
                        let s = (lane.local_base + r) as usize;
                        if let Some(x) = lane.local.get_mut(s..s + 4) {
                            x.copy_from_slice(&(len as u32).to_le_bytes());
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Op::Fence { kind, scope } => {
                for l in lanes(active) {
                    let f = Fence {
                        thread: self.thread_ref(w, l),
                        kind: *kind,
                        scope: *scope,
                        site: inst.site,
                    };
                    self.hooks.fence(self.mem, &f);
                }
                Ok(Flow::Next)
            }
            Op::Bar {
                kind,
                id,
                count,
                d,
                pred,
            } => self.exec_bar(w, active, pc, inst.site, *kind, *id, *count, *d, *pred),
            Op::WarpSync { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::Elect { .. }
            | Op::Redux { .. }
            | Op::Ldmatrix { .. }
            | Op::Mma { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. }
            | Op::WmmaMma { .. } => self.exec_collective(w, active, group, pc, inst),
            Op::BulkCopy { .. } => {
                self.exec_bulk_copy(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::CpAsync { .. } => {
                self.exec_cp_async(w, active, pc, inst)?;
                Ok(Flow::Next)
            }
            Op::CpAsyncCommit => {
                for l in lanes(active) {
                    let rare = self.warps[w as usize].lanes[l].rare();
                    let group = std::mem::take(&mut rare.async_open);
                    rare.async_groups.push_back(group);
                }
                Ok(Flow::Next)
            }
            Op::CpAsyncWait { pending, all } => {
                for l in lanes(active) {
                    let rare = self.warps[w as usize].lanes[l].rare();
                    if *all {
                        let group = std::mem::take(&mut rare.async_open);
                        rare.async_groups.push_back(group);
                    }
                    loop {
                        let rare = self.warps[w as usize].lanes[l].rare();
                        if rare.async_groups.len() <= *pending as usize {
                            break;
                        }
                        let group = rare.async_groups.pop_front().unwrap_or_default();
                        self.complete_copies(w, l, &group)?;
                    }
                }
                Ok(Flow::Next)
            }
            Op::Activemask { d } => {
                for l in lanes(active) {
                    self.set(w, l, *d, group as u64);
                }
                Ok(Flow::Next)
            }
            Op::Suld {
                ds,
                surf,
                coords,
                size,
                mode,
            } => {
                let (n, size) = (ds.len(), *size as usize);
                for l in lanes(active) {
                    let at = self.surface_at(w, l, pc, *surf, coords, size * n, *mode)?;
                    // Zeros outside under `.zero` (`at` is None).
                    let mut buf = [0u8; 32];
                    if let Some(a) = at {
                        if let Err(e) = self.mem.read(Location::Global(a), &mut buf[..size * n]) {
                            return Err(self.mem_fault(w, l, pc, e));
                        }
                    }
                    for (d, bytes) in ds.iter().zip(buf.chunks(size)) {
                        if let Some(d) = d {
                            let mut v = [0u8; 8];
                            v[..size].copy_from_slice(bytes);
                            self.set(w, l, *d, u64::from_le_bytes(v));
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Op::Sust {
                surf,
                coords,
                vals,
                size,
                mode,
            } => {
                let (n, size) = (vals.len(), *size as usize);
                for l in lanes(active) {
                    // Dropped outside under `.zero`.
                    let Some(a) = self.surface_at(w, l, pc, *surf, coords, size * n, *mode)? else {
                        continue;
                    };
                    let mut buf = [0u8; 32];
                    for (v, bytes) in vals.iter().zip(buf.chunks_mut(size)) {
                        bytes.copy_from_slice(&self.src(w, l, *v).to_le_bytes()[..size]);
                    }
                    if let Err(e) = self.mem.write(Location::Global(a), &buf[..size * n]) {
                        return Err(self.mem_fault(w, l, pc, e));
                    }
                }
                Ok(Flow::Next)
            }
            Op::Tex {
                ds,
                tex,
                coords,
                int_coords,
                ty,
            } => {
                let mut c = [0u32; 3];
                for l in lanes(active) {
                    let handle = self.src(w, l, *tex);
                    for (k, s) in coords.iter().enumerate().take(3) {
                        c[k] = self.src(w, l, *s) as u32;
                    }
                    let got = crate::texture::fetch(
                        self.mem,
                        &self.mem.textures,
                        handle,
                        &c[..coords.len().min(3)],
                        *int_coords,
                        *ty,
                    );
                    let v = match got {
                        Ok(v) => v,
                        Err(crate::texture::FetchError::Memory(e)) => {
                            return Err(self.mem_fault(w, l, pc, e))
                        }
                        Err(crate::texture::FetchError::NoTexture(h)) => {
                            return Err(self.fault(
                                w,
                                l,
                                pc,
                                FaultKind::InvalidAddress,
                                format!(
                                    "texture fetch from {h:#x}, which is no live texture object"
                                ),
                            ))
                        }
                    };
                    for (d, x) in ds.iter().zip(v) {
                        if let Some(d) = d {
                            self.set(w, l, *d, x as u64);
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Op::Nanosleep | Op::Nop => Ok(Flow::Next),
        }
    }

    /// Pushes a frame for lane `l` calling function `callee`, copying arguments
    /// (caller frame offset, callee frame offset, bytes).
    fn enter_call(
        &mut self,
        w: u32,
        l: usize,
        pc: u32,
        callee: u32,
        args: &[(u32, u32, u32)],
        reg_args: &[(u64, Slot)],
    ) -> Result<(), LaunchOutcome> {
        let callee_f = &self.prog.funcs[callee as usize];
        let warp = &mut self.warps[w as usize];
        let cur = warp.lanes[l].func;
        let cur_f = &self.prog.funcs[cur as usize];
        let lane = &mut warp.lanes[l];
        if lane.frames().len() >= MAX_DEPTH {
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::StackOverflow,
                format!("call depth exceeds {MAX_DEPTH}"),
            ));
        }
        let new_reg = warp.reg_base[l] + cur_f.nregs;
        let new_local = lane.local_base + cur_f.frame_size;
        let reg_base = warp.reg_base[l];
        let local_base = lane.local_base;
        lane.rare().frames.push(Frame {
            func: cur,
            ret_pc: pc + 1,
            reg_base,
            local_base,
            call_pc: pc,
        });
        let need_local = (new_local + callee_f.frame_size) as usize;
        if lane.local.len() < need_local {
            lane.local.resize(need_local, 0);
        }
        for (from, to, n) in args {
            let src = (lane.local_base + from) as usize;
            let dst = (new_local + to) as usize;
            lane.local.copy_within(src..src + *n as usize, dst);
        }
        warp.reg_base[l] = new_reg;
        lane.local_base = new_local;
        lane.func = callee;
        warp.pc[l] = callee_f.entry;
        let need_regs = (new_reg + callee_f.nregs) as usize * WARP;
        if warp.regs.len() < need_regs {
            warp.regs.resize(need_regs, 0);
        }
        for (v, to) in reg_args {
            warp.regs[row(new_reg, *to) + l] = *v;
        }
        Ok(())
    }

    /// Warp `w`'s first step: its register file, zeroed, and its lane records. A warp
    /// gets them here, not at launch, and gives them back when its last lane has exited
    /// ([`Machine::finished`]), so a launch holds them only for the warps that have
    /// started and not finished. A million-thread stencil allocated and faulted in
    /// 32,768 files (100 MB) and their lane records before its first instruction: a
    /// fifth of the launch in `Machine::new` and page faults (`perf`, `exec --model sc`
    /// of `bench/programs/stencil.cu`).
    #[cold]
    fn start_warp(&mut self, w: u32) {
        let f = &self.prog.funcs[self.func as usize];
        let (func, frame) = (self.func, f.frame_size as usize);
        let regs = zeroed_regs(f.nregs as usize * WARP);
        let mut lanes = self.free_lanes.pop().unwrap_or_default();
        let warp = &mut self.warps[w as usize];
        let n = warp.nlanes();
        lanes.truncate(n);
        for lane in &mut lanes {
            lane.func = func;
            lane.local_base = 0;
            lane.local.clear();
            lane.local.resize(frame, 0);
            lane.rare = None;
        }
        // Each lane built, not cloned: cloning the empty collections costs more.
        lanes.extend((lanes.len()..n).map(|_| Lane {
            func,
            local_base: 0,
            local: vec![0u8; frame],
            rare: None,
        }));
        warp.lanes = lanes;
        warp.regs = regs;
    }

    fn exit_lanes(&mut self, w: u32, m: u32) {
        let cta = self.warps[w as usize].cta;
        for l in lanes(m) {
            let t = self.thread_ref(w, l);
            self.hooks.thread_exit(self.mem, t);
            let warp = &mut self.warps[w as usize];
            warp.status[l] = Status::Exited;
            warp.ready &= !(1 << l);
            warp.exited |= 1 << l;
        }
        self.since_progress = 0;
        if self.park.fine {
            // With hooks that count and name what others can see, an exit is no event
            // for the other warps' parking: what it changes that another warp can read
            // is the hooks' drain of the exiting threads' buffers (counted and named
            // like any drain: `after_step` wakes the warps that read those blocks), a
            // barrier it completes (`try_release` below wakes that CTA's warps) and the
            // warp's own collectives (this warp, which is running). Every exit woke every
            // parked warp: on CUB's single-pass scan (547 CTAs) under `bugaroo`, each
            // tile's exit woke every look-back warp waiting for a predecessor's buffered
            // status, and re-parking them was 1.9 M of the launch's 2.1 M steps.
            self.livelock.change(self.stats.lane_instructions);
            self.step_own = true;
        } else {
            self.changed_for_all();
        }
        let warp = &self.warps[w as usize];
        if warp.exited == warp.present {
            self.finished = Some(w);
        }
        self.ctas[cta as usize].live -= m.count_ones();
        if self.ctas[cta as usize].live == 0 {
            self.hooks.cta_exit(self.mem, cta);
        }
        self.set_runnable(w);
        // Exited threads no longer count for CTA-wide barriers, and a collective that
        // waited for them may now complete.
        let mut armed = self.ctas[cta as usize].armed;
        while armed != 0 {
            let id = armed.trailing_zeros();
            armed &= armed - 1;
            self.try_release(cta, id);
        }
        self.try_collectives(w);
    }
}

pub(crate) fn mask_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Where [`visit_park_state`] puts a warp's state: the words themselves (a `Vec`), what
/// each word is ([`Layout`]), or a comparison with a state taken before ([`Compare`]).
/// One walk for the three, so that they cannot disagree on the layout.
trait StateSink {
    /// A word of kind `kind`.
    fn word(&mut self, kind: livelock::Word, x: u64);
    /// Room for `n` more words (a hint).
    fn reserve(&mut self, _n: usize) {}
    /// The registers of the lanes in `running` (`regs` holds rows of `WARP` words, one
    /// per lane): the whole file when every lane runs, else lane by lane, each lane's
    /// column (a spinning warp often has one running lane).
    fn regs(&mut self, regs: &[u64], running: u32);
    /// Local memory, as little-endian words.
    fn bytes(&mut self, b: &[u8]);
}

impl StateSink for Vec<u64> {
    #[inline]
    fn word(&mut self, _: livelock::Word, x: u64) {
        self.push(x);
    }
    fn reserve(&mut self, n: usize) {
        Vec::reserve(self, n);
    }
    #[inline]
    fn regs(&mut self, regs: &[u64], running: u32) {
        if running == u32::MAX {
            self.extend_from_slice(regs);
            return;
        }
        // (Into room made first, without a bounds or capacity check per word — a
        // strided iterator pushed into the vector was a tenth of a spinning ring
        // buffer's fuzz time.)
        let rows = regs.len() / WARP;
        for l in lanes(running) {
            let start = self.len();
            self.resize(start + rows, 0);
            for (o, row) in self[start..].iter_mut().zip(regs.chunks_exact(WARP)) {
                *o = row[l];
            }
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        livelock::le_words(b, |x| self.push(x));
    }
}

/// What each word is (see [`livelock::Word`]).
struct Layout(Vec<livelock::Word>);

impl StateSink for Layout {
    fn word(&mut self, kind: livelock::Word, _: u64) {
        self.0.push(kind);
    }
    fn regs(&mut self, regs: &[u64], running: u32) {
        let rows = regs.len() / WARP;
        if running == u32::MAX {
            self.0
                .extend((0..regs.len()).map(|i| livelock::Word::Reg(i as u32)));
            return;
        }
        for l in lanes(running) {
            self.0
                .extend((0..rows).map(|r| livelock::Word::Reg((r * WARP + l) as u32)));
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend(std::iter::repeat_n(
            livelock::Word::Fixed,
            b.len().div_ceil(8),
        ));
    }
}

/// Whether the words would be `expected`: `same` while they agree, `at` words in.
struct Compare<'a> {
    expected: &'a [u64],
    at: usize,
    same: bool,
}

impl StateSink for Compare<'_> {
    #[inline]
    fn word(&mut self, _: livelock::Word, x: u64) {
        self.same &= self.expected.get(self.at) == Some(&x);
        self.at += 1;
    }
    #[inline]
    fn regs(&mut self, regs: &[u64], running: u32) {
        let rows = regs.len() / WARP;
        let len = rows * running.count_ones() as usize;
        match self.expected.get(self.at..self.at + len) {
            Some(e) if self.same && running == u32::MAX => self.same = e == regs,
            Some(e) if self.same && rows > 0 => {
                self.same = lanes(running).zip(e.chunks_exact(rows)).all(|(l, e)| {
                    e.iter()
                        .zip(regs.chunks_exact(WARP))
                        .all(|(x, row)| *x == row[l])
                });
            }
            Some(_) if self.same => {}
            _ => self.same = false,
        }
        self.at += len;
    }
    fn bytes(&mut self, b: &[u8]) {
        livelock::le_words(b, |x| self.word(livelock::Word::Fixed, x));
    }
}

/// Walks `warp`'s whole state for spin parking: every lane that has not exited, in words.
/// The registers and local memory of a lane waiting at a CTA barrier are left out:
/// nothing changes them before the barrier's release, an event, and a state taken while
/// a lane waits at a barrier stands only until the next event (see `livelock`). A CUB
/// look-back spin runs one lane while the other 31 wait: its state holds one lane's
/// registers. Every part is delimited by what precedes it (the ready and exited masks,
/// which with the lanes' statuses decide whose registers follow; frame and byte counts),
/// so equal words are equal states.
#[inline]
fn visit_park_state<S: StateSink>(warp: &Warp, out: &mut S) {
    use livelock::Word;
    let live = warp.present & !warp.exited;
    let mut waiting = 0u32;
    for l in lanes(live) {
        if matches!(warp.status[l], Status::Barrier(_)) {
            waiting |= 1 << l;
        }
    }
    let running = live & !waiting;
    out.word(Word::Ready, warp.ready as u64 | (warp.exited as u64) << 32);
    // Five words per lane without call frames or `cp.async` state (nearly every
    // lane: written without looking into the boxed part, which was a fifth of the
    // probes' time on cub_scan once the registers shrank), more for the others.
    out.reserve(5 * live.count_ones() as usize);
    for l in lanes(live) {
        let lane = &warp.lanes[l];
        let (tag, v) = match warp.status[l] {
            Status::Ready => (0, 0),
            Status::Exited => (1, 0),
            Status::Barrier(id) => (2, id),
            Status::Collective(m) => (3, m),
        };
        let lw = l as u32;
        out.word(Word::Pc(lw), warp.pc[l] as u64 | (lane.func as u64) << 32);
        out.word(Word::Status(lw), tag | (v as u64) << 32);
        out.word(
            Word::Fixed,
            warp.reg_base[l] as u64 | (lane.local_base as u64) << 32,
        );
        let Some(rare) = &lane.rare else {
            // No frames; no open copies, no groups.
            out.word(Word::Fixed, 0);
            out.word(Word::Fixed, 0);
            continue;
        };
        out.word(Word::Fixed, rare.frames.len() as u64);
        for f in &rare.frames {
            out.word(Word::Fixed, f.func as u64 | (f.ret_pc as u64) << 32);
            out.word(Word::Fixed, f.reg_base as u64 | (f.local_base as u64) << 32);
            out.word(Word::Fixed, f.call_pc as u64);
        }
        let (open, groups) = (rare.async_open.len(), rare.async_groups.len());
        out.word(Word::Fixed, open as u64 | (groups as u64) << 32);
    }
    // The running lanes' registers (the whole file when every lane runs, as in CUB's
    // look-back poll; else lane by lane).
    out.regs(&warp.regs, running);
    for l in lanes(running) {
        let local = &warp.lanes[l].local;
        out.word(Word::Fixed, local.len() as u64);
        out.bytes(local);
    }
}

/// `sched`'s pick among `pool`, its index clamped into it; `None` when it is empty.
#[inline]
fn pick_in<S: Scheduler>(sched: &mut S, pool: &[u32], last: Option<u32>) -> Option<u32> {
    let i = sched.pick(pool, last);
    pool.get(i.min(pool.len().saturating_sub(1))).copied()
}

/// The warps the scheduler picks from: with quick stalls in a spin, the unparked ones
/// (`live`) while there are any; the runnable ones otherwise.
#[inline]
fn picked_from<'a>(spinning: bool, live: &'a [u32], runnable: &'a [u32]) -> &'a [u32] {
    if spinning && !live.is_empty() {
        live
    } else {
        runnable
    }
}
