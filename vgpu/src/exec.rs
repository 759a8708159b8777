//! The interpreter: runs one launch of a decoded [`Program`].
//!
//! Threads have independent program counters (sm_70+ independent thread scheduling). A
//! warp executes one instruction for all its ready lanes that share a program counter
//! (and call frame) at once: this is the fast path and what hardware does. Lanes that
//! diverge are scheduled as separate groups and reconverge when their program counters
//! meet again. The scheduler chooses a warp at every preemption point: before every
//! global/shared access, atomic, fence, barrier and warp-collective operation.
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

pub const WARP: usize = 32;
/// Most instructions one warp runs before the scheduler is asked again.
const MAX_RUN: u32 = 256;
/// Call depth limit.
const MAX_DEPTH: usize = 256;
/// Virtual SM count (for `%smid`, `%nsmid`).
pub const NUM_SMS: u32 = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
    pub fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
    pub fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
    fn split(self, linear: u32) -> [u32; 3] {
        let x = linear % self.x;
        let y = (linear / self.x) % self.y;
        let z = linear / (self.x * self.y);
        [x, y, z]
    }
    fn get(self, d: u8) -> u32 {
        match d {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// Where a fault happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub thread: ThreadRef,
    pub block_idx: [u32; 3],
    pub thread_idx: [u32; 3],
    pub site: SiteInfo,
    pub message: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} by thread ({},{},{}) of block ({},{},{}) at {}: `{}`: {}",
            self.kind,
            self.thread_idx[0],
            self.thread_idx[1],
            self.thread_idx[2],
            self.block_idx[0],
            self.block_idx[1],
            self.block_idx[2],
            self.site.location(),
            self.site.text,
            self.message
        )
    }
}

/// A trap: `trap`, `brkpt` or a failed `assert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapInfo {
    pub message: String,
    pub thread: ThreadRef,
    pub site: SiteInfo,
}

/// Where unfinished warps are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HangDump {
    pub warps: Vec<WarpDump>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpDump {
    pub warp: u32,
    pub cta: u32,
    pub block_idx: [u32; 3],
    /// Per distinct position: lanes mask, what they are doing, where.
    pub groups: Vec<(u32, String, SiteInfo)>,
}

impl std::fmt::Display for HangDump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MAX: usize = 16;
        for w in self.warps.iter().take(MAX) {
            writeln!(
                f,
                "  warp {} of block ({},{},{}):",
                w.warp % 1024,
                w.block_idx[0],
                w.block_idx[1],
                w.block_idx[2]
            )?;
            for (mask, what, site) in &w.groups {
                writeln!(
                    f,
                    "    lanes {mask:#010x} {what} at {}: `{}`",
                    site.location(),
                    site.text
                )?;
            }
        }
        if self.warps.len() > MAX {
            writeln!(f, "  ... and {} more warps", self.warps.len() - MAX)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchOutcome {
    Completed,
    Fault(Box<Fault>),
    Trap(Box<TrapInfo>),
    Deadlock(HangDump),
    Timeout(HangDump),
}

impl LaunchOutcome {
    pub fn is_completed(&self) -> bool {
        matches!(self, LaunchOutcome::Completed)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecStats {
    /// Instructions executed, counted per thread.
    pub lane_instructions: u64,
    /// Instructions executed, counted per warp group.
    pub warp_instructions: u64,
    /// Scheduler decisions.
    pub steps: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchResult {
    pub outcome: LaunchOutcome,
    /// `printf` output, in execution order.
    pub stdout: String,
    pub stats: ExecStats,
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
    pc: u32,
    func: u32,
    status: Status,
    reg_base: u32,
    local_base: u32,
    frames: Vec<Frame>,
    local: Vec<u8>,
}

struct Warp {
    cta: u32,
    /// Linear thread index (in the CTA) of lane 0.
    first_tid: u32,
    lanes: Vec<Lane>,
    regs: Vec<u64>,
    ready: u32,
    exited: u32,
    /// Lanes that exist.
    present: u32,
    /// Pending-wakeup program counter of lanes in `Collective` status.
    clock: u64,
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
    runnable: Vec<u32>,
    stats: ExecStats,
    stdout: String,
    fuel: u64,
    launch: u32,
    since_progress: u64,
    clock: u64,
    deadline: Option<std::time::Instant>,
    cancel: Option<&'p std::sync::atomic::AtomicBool>,
}

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
                let lane = Lane {
                    pc: func.entry,
                    func: spec.func,
                    status: Status::Ready,
                    reg_base: 0,
                    local_base: 0,
                    frames: Vec::new(),
                    local: vec![0u8; func.frame_size as usize],
                };
                warps.push(Warp {
                    cta: c,
                    first_tid: first,
                    lanes: vec![lane; n as usize],
                    regs: vec![0u64; func.nregs as usize * WARP],
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
            });
        }
        let runnable = (0..warps.len() as u32).collect();
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
            clock: 0,
            deadline: spec.deadline,
            cancel: spec.cancel,
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
        let ready = self.warps[w as usize].ready != 0;
        match self.runnable.binary_search(&w) {
            Ok(i) if !ready => {
                self.runnable.remove(i);
            }
            Err(i) if ready => self.runnable.insert(i, w),
            _ => {}
        }
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
        let mut last: Option<u32> = None;
        let mut refills = 0;
        let outcome = loop {
            if self.runnable.is_empty() {
                if self.warps.iter().all(|w| w.exited == w.present) {
                    break LaunchOutcome::Completed;
                }
                if self.hooks.stalled(self.mem) {
                    continue;
                }
                break LaunchOutcome::Deadlock(self.dump());
            }
            if self.stats.steps & 1023 == 0 && self.stopped() {
                break LaunchOutcome::Timeout(self.dump());
            }
            if self.stats.lane_instructions >= self.fuel {
                // Only a state with nothing left to drain is a timeout.
                if refills < 64 && self.hooks.stalled(self.mem) {
                    refills += 1;
                    self.fuel = self.fuel.saturating_add(self.fuel / 16 + 1024);
                    continue;
                }
                break LaunchOutcome::Timeout(self.dump());
            }
            if self.since_progress > 256 + 8 * self.runnable.len() as u64 {
                self.since_progress = 0;
                self.hooks.stalled(self.mem);
            }
            let i = self.sched.pick(&self.runnable, last);
            let w = self.runnable[i.min(self.runnable.len() - 1)];
            last = Some(w);
            self.stats.steps += 1;
            self.since_progress += 1;
            match self.step(w) {
                StepEnd::Continue => {}
                StepEnd::Ended(o) => break o,
            }
        };
        self.hooks.launch_end(self.mem);
        LaunchResult {
            outcome,
            stdout: self.stdout,
            stats: self.stats,
        }
    }

    fn stopped(&self) -> bool {
        self.cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            || self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }

    fn dump(&self) -> HangDump {
        let mut warps = Vec::new();
        for (wi, w) in self.warps.iter().enumerate() {
            if w.exited == w.present {
                continue;
            }
            let mut groups: Vec<(u32, String, SiteInfo)> = Vec::new();
            for (l, lane) in w.lanes.iter().enumerate() {
                let what = match lane.status {
                    Status::Exited => continue,
                    Status::Ready => "running".to_string(),
                    Status::Barrier(id) => format!("waiting at barrier {id}"),
                    Status::Collective(m) => format!("waiting for lanes {m:#010x}"),
                };
                let site_id = self.prog.insts.get(lane.pc as usize).map_or(0, |i| i.site);
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
        HangDump { warps }
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

    /// Reads any source operand for one lane.
    #[inline]
    fn src(&self, w: u32, lane: usize, s: Src) -> u64 {
        let warp = &self.warps[w as usize];
        let l = &warp.lanes[lane];
        match s {
            Src::Reg(r) => warp.regs[row(l.reg_base, r) + lane],
            Src::NotReg(r) => (warp.regs[row(l.reg_base, r) + lane] == 0) as u64,
            Src::Imm(v) => v,
            Src::LocalAddr(o) => (l.local_base + o) as u64,
            Src::Special(sp, d) => self.special(w, lane, sp, d),
        }
    }

    fn special(&self, w: u32, lane: usize, sp: fencehound_ptx::Special, d: u8) -> u64 {
        use fencehound_ptx::Special as S;
        let warp = &self.warps[w as usize];
        let tid = warp.first_tid + lane as u32;
        let lane32 = lane as u32;
        match sp {
            S::Tid => self.block.split(tid)[d as usize % 3] as u64,
            S::Ntid => self.block.get(d) as u64,
            S::Ctaid => self.grid.split(warp.cta)[d as usize % 3] as u64,
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
            // Performance counters and environment registers read as 0; the cluster
            // registers are refused when the module is loaded.
            _ => 0,
        }
    }

    #[inline]
    fn set(&mut self, w: u32, lane: usize, d: Slot, v: u64) {
        let warp = &mut self.warps[w as usize];
        let base = warp.lanes[lane].reg_base;
        warp.regs[row(base, d) + lane] = v;
    }

    /// Resolves an address for one lane into a concrete place.
    fn place(&self, w: u32, lane: usize, space: MemSpace, a: Addr) -> Place {
        let l = &self.warps[w as usize].lanes[lane];
        let raw = match a.base {
            AddrBase::Reg(_) | AddrBase::Abs(_) => {
                let b = match a.base {
                    AddrBase::Reg(r) => self.src(w, lane, Src::Reg(r)),
                    AddrBase::Abs(v) => v,
                    AddrBase::Frame(_) => 0,
                };
                b.wrapping_add(a.offset as u64)
            }
            AddrBase::Frame(o) => {
                return Place::Local((l.local_base as u64 + o as u64).wrapping_add(a.offset as u64))
            }
        };
        let cta = self.warps[w as usize].cta;
        match space {
            MemSpace::Global => Place::Mem(Location::Global(raw)),
            MemSpace::Shared => {
                if raw >= WINDOW_SIZE {
                    Place::Invalid(raw, "shared")
                } else {
                    Place::Mem(Location::Shared {
                        cta,
                        offset: raw as u32,
                    })
                }
            }
            MemSpace::Local | MemSpace::FrameParam => Place::Local(raw),
            MemSpace::Const => Place::Const(raw),
            MemSpace::KernelParam => Place::Param(raw),
            MemSpace::Generic => match window_of(raw) {
                Some((Window::Global, a)) => Place::Mem(Location::Global(a)),
                Some((Window::Shared, off)) => Place::Mem(Location::Shared {
                    cta,
                    offset: off as u32,
                }),
                Some((Window::Local, off)) => Place::Local(off),
                Some((Window::Const, _)) => Place::Const(raw),
                Some((Window::Param, off)) => Place::Param(off),
                None => Place::Invalid(raw, "generic"),
            },
        }
    }

    fn step(&mut self, w: u32) -> StepEnd {
        // Choose the group: ready lanes sharing (pc, frame).
        let (mask, pc0) = {
            let warp = &self.warps[w as usize];
            let mut groups: Vec<(u32, u32, u32)> = Vec::new(); // (pc, reg_base, mask)
            for l in lanes(warp.ready) {
                let lane = &warp.lanes[l];
                match groups
                    .iter_mut()
                    .find(|g| g.0 == lane.pc && g.1 == lane.reg_base)
                {
                    Some(g) => g.2 |= 1 << l,
                    None => groups.push((lane.pc, lane.reg_base, 1 << l)),
                }
            }
            if groups.is_empty() {
                return StepEnd::Continue;
            }
            let k = if groups.len() == 1 {
                0
            } else {
                groups.sort_unstable();
                let mut masks = [0u32; WARP];
                for (m, g) in masks.iter_mut().zip(&groups) {
                    *m = g.2;
                }
                let n = groups.len().min(WARP);
                self.sched.pick_group_of(&masks[..n]).min(groups.len() - 1)
            };
            (groups[k].2, groups[k].0)
        };
        let mut pc = pc0;
        let mut run = 0u32;
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
            if run > 0 && (inst.op.is_sync_point() || run >= MAX_RUN) {
                break;
            }
            run += 1;
            let n = mask.count_ones() as u64;
            self.stats.lane_instructions += n;
            self.stats.warp_instructions += 1;
            self.clock += 1;
            self.warps[w as usize].clock += n;
            // Guard.
            let active = match inst.guard {
                None => mask,
                Some((p, neg)) => {
                    let warp = &self.warps[w as usize];
                    let mut m = 0;
                    for l in lanes(mask) {
                        let v = warp.regs[row(warp.lanes[l].reg_base, p) + l] != 0;
                        if v != neg {
                            m |= 1 << l;
                        }
                    }
                    m
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
                            warp.lanes[l].pc = if active >> l & 1 == 1 { t } else { pc + 1 };
                        }
                        return StepEnd::Continue;
                    }
                }
                Flow::PerLane => {
                    // exec already set each active lane's pc/status; inactive lanes
                    // move on.
                    let warp = &mut self.warps[w as usize];
                    for l in lanes(mask & !active) {
                        warp.lanes[l].pc = pc + 1;
                    }
                    let ready = warp.ready;
                    if ready & mask == mask {
                        // Everyone still ready: continue as one group if still together.
                        let p = warp.lanes[mask.trailing_zeros() as usize].pc;
                        let b = warp.lanes[mask.trailing_zeros() as usize].reg_base;
                        if lanes(mask).all(|l| warp.lanes[l].pc == p && warp.lanes[l].reg_base == b)
                        {
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
            warp.lanes[l].pc = pc;
        }
        StepEnd::Continue
    }
}

/// A resolved memory place for one lane.
#[derive(Debug, Clone, Copy)]
enum Place {
    Mem(Location),
    Local(u64),
    Const(u64),
    Param(u64),
    Invalid(u64, &'static str),
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
                let base = warp.lanes[active.trailing_zeros() as usize].reg_base;
                alu::exec(a, &mut warp.regs, base as usize, active);
                Ok(Flow::Next)
            }
            Op::Mov { d, a } => {
                for l in lanes(active) {
                    let v = self.src(w, l, *a);
                    self.set(w, l, *d, v);
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
                    self.warps[w as usize].lanes[l].pc = *t;
                }
                Ok(Flow::PerLane)
            }
            Op::Call {
                callee,
                args,
                rets: _,
            } => {
                for l in lanes(active) {
                    self.enter_call(w, l, pc, *callee, args)?;
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
                        .map(|(from, (to, n))| (*from, *to, *n))
                        .collect();
                    self.enter_call(w, l, pc, idx as u32, &triples)?;
                }
                Ok(Flow::PerLane)
            }
            Op::Ret => {
                let mut exits = 0u32;
                for l in lanes(active) {
                    let warp = &mut self.warps[w as usize];
                    let lane = &mut warp.lanes[l];
                    match lane.frames.pop() {
                        None => exits |= 1 << l,
                        Some(fr) => {
                            let indirect: Vec<(u32, u32, u32)>;
                            let rets: &[(u32, u32, u32)] =
                                match &self.prog.insts[fr.call_pc as usize].op {
                                    Op::Call { rets, .. } => rets,
                                    Op::CallIndirect { rets, .. } => {
                                        // Callee offsets from the function returning now.
                                        let f = &self.prog.funcs[lane.func as usize];
                                        indirect = f
                                            .rets
                                            .iter()
                                            .zip(rets)
                                            .map(|((from, n), to)| (*from, *to, *n))
                                            .collect();
                                        &indirect
                                    }
                                    _ => &[],
                                };
                            for (from, to, n) in rets {
                                let src = (lane.local_base + from) as usize;
                                let dst = (fr.local_base + to) as usize;
                                lane.local.copy_within(src..src + *n as usize, dst);
                            }
                            lane.reg_base = fr.reg_base;
                            lane.local_base = fr.local_base;
                            lane.func = fr.func;
                            lane.pc = fr.ret_pc;
                        }
                    }
                }
                if exits != 0 {
                    self.exit_lanes(w, exits);
                }
                Ok(Flow::PerLane)
            }
            Op::Exit => {
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
            | Op::Redux { .. } => self.exec_collective(w, active, group, pc, inst),
            Op::Activemask { d } => {
                for l in lanes(active) {
                    self.set(w, l, *d, group as u64);
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
    ) -> Result<(), LaunchOutcome> {
        let callee_f = &self.prog.funcs[callee as usize];
        let warp = &mut self.warps[w as usize];
        let cur = warp.lanes[l].func;
        let cur_f = &self.prog.funcs[cur as usize];
        let lane = &mut warp.lanes[l];
        if lane.frames.len() >= MAX_DEPTH {
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::StackOverflow,
                format!("call depth exceeds {MAX_DEPTH}"),
            ));
        }
        let new_reg = lane.reg_base + cur_f.nregs;
        let new_local = lane.local_base + cur_f.frame_size;
        lane.frames.push(Frame {
            func: cur,
            ret_pc: pc + 1,
            reg_base: lane.reg_base,
            local_base: lane.local_base,
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
        lane.reg_base = new_reg;
        lane.local_base = new_local;
        lane.func = callee;
        lane.pc = callee_f.entry;
        let need_regs = (new_reg + callee_f.nregs) as usize * WARP;
        if warp.regs.len() < need_regs {
            warp.regs.resize(need_regs, 0);
        }
        Ok(())
    }

    fn exit_lanes(&mut self, w: u32, m: u32) {
        let cta = self.warps[w as usize].cta;
        for l in lanes(m) {
            let t = self.thread_ref(w, l);
            self.hooks.thread_exit(self.mem, t);
            let warp = &mut self.warps[w as usize];
            warp.lanes[l].status = Status::Exited;
            warp.ready &= !(1 << l);
            warp.exited |= 1 << l;
        }
        self.since_progress = 0;
        self.ctas[cta as usize].live -= m.count_ones();
        self.set_runnable(w);
        // Exited threads no longer count for CTA-wide barriers, and a collective that
        // waited for them may now complete.
        for id in 0..16 {
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

/// Reads `n` bytes at a generic address from global, const or the lane's local memory.
fn read_generic(mem: &Memory, lane: &Lane, addr: u64, n: usize) -> Option<u64> {
    let mut b = [0u8; 8];
    let n = n.min(8);
    match window_of(addr)? {
        (Window::Global, a) => b[..n].copy_from_slice(mem.global.slice(a, n as u32).ok()?),
        (Window::Const, _) => b[..n].copy_from_slice(mem.constant.slice(addr, n as u32).ok()?),
        (Window::Local, a) => b[..n].copy_from_slice(lane.local.get(a as usize..a as usize + n)?),
        _ => return None,
    }
    Some(u64::from_le_bytes(b))
}

fn sign_extend(v: u64, bytes: u32) -> u64 {
    let sh = 64 - bytes * 8;
    if sh == 0 {
        v
    } else {
        (((v << sh) as i64) >> sh) as u64
    }
}

/// The read-modify-write function of an atomic, as PTX ISA §9.7.13.4 defines each op.
fn rmw(op: AtomOp, size: u32, b: u64, c: u64) -> impl FnMut(u64) -> u64 {
    let m = mask_bits(size * 8);
    move |old: u64| -> u64 {
        let r = match op {
            AtomOp::And => old & b,
            AtomOp::Or => old | b,
            AtomOp::Xor => old ^ b,
            AtomOp::Exch => b,
            AtomOp::Cas => {
                if old & m == b & m {
                    c
                } else {
                    old
                }
            }
            AtomOp::AddInt => old.wrapping_add(b),
            AtomOp::AddF32 => {
                // atom.add.f32 rounds to nearest even and flushes subnormal inputs and
                // results to sign-preserving zero (PTX ISA, atom).
                let ftz = |x: f32| {
                    if x.is_subnormal() {
                        0.0f32.copysign(x)
                    } else {
                        x
                    }
                };
                let r = ftz(ftz(f32::from_bits(old as u32)) + ftz(f32::from_bits(b as u32)));
                r.to_bits() as u64
            }
            AtomOp::AddF64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            AtomOp::AddF16 => add_f16(old as u16, b as u16) as u64,
            AtomOp::AddBf16 => add_bf16(old as u16, b as u16) as u64,
            AtomOp::AddF16x2 => {
                let lo = add_f16(old as u16, b as u16) as u64;
                let hi = add_f16((old >> 16) as u16, (b >> 16) as u16) as u64;
                lo | hi << 16
            }
            AtomOp::AddBf16x2 => {
                let lo = add_bf16(old as u16, b as u16) as u64;
                let hi = add_bf16((old >> 16) as u16, (b >> 16) as u16) as u64;
                lo | hi << 16
            }
            AtomOp::Inc => {
                if (old & m) >= (b & m) {
                    0
                } else {
                    old + 1
                }
            }
            AtomOp::Dec => {
                if old & m == 0 || (old & m) > (b & m) {
                    b
                } else {
                    old - 1
                }
            }
            AtomOp::MinS => {
                if (sign_extend(old, size) as i64) < (sign_extend(b, size) as i64) {
                    old
                } else {
                    b
                }
            }
            AtomOp::MaxS => {
                if (sign_extend(old, size) as i64) > (sign_extend(b, size) as i64) {
                    old
                } else {
                    b
                }
            }
            AtomOp::MinU => (old & m).min(b & m),
            AtomOp::MaxU => (old & m).max(b & m),
            AtomOp::MinF | AtomOp::MaxF => {
                let min = op == AtomOp::MinF;
                if size == 4 {
                    let (x, y) = (f32::from_bits(old as u32), f32::from_bits(b as u32));
                    (if min { x.min(y) } else { x.max(y) }).to_bits() as u64
                } else {
                    let (x, y) = (f64::from_bits(old), f64::from_bits(b));
                    (if min { x.min(y) } else { x.max(y) }).to_bits()
                }
            }
        };
        r & m
    }
}

fn add_f16(a: u16, b: u16) -> u16 {
    // Sums of two halves are exact in f64, so one rounding to f16 is correct.
    let s = half::f16::from_bits(a).to_f64() + half::f16::from_bits(b).to_f64();
    half::f16::from_f64(s).to_bits()
}

fn add_bf16(a: u16, b: u16) -> u16 {
    let s = half::bf16::from_bits(a).to_f64() + half::bf16::from_bits(b).to_f64();
    half::bf16::from_f64(s).to_bits()
}

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    #[allow(clippy::too_many_arguments)]
    fn access(
        &self,
        w: u32,
        l: usize,
        loc: Location,
        size: u32,
        kind: AccessKind,
        sem: Sem,
        scope: Scope,
        site: SiteId,
    ) -> Access {
        Access {
            thread: self.thread_ref(w, l),
            loc,
            size,
            kind,
            sem,
            scope,
            site,
            launch: self.launch,
        }
    }

    fn check_align(
        &self,
        w: u32,
        l: usize,
        pc: u32,
        p: Place,
        align: u32,
    ) -> Result<(), LaunchOutcome> {
        let a = match p {
            Place::Mem(loc) => loc.addr(),
            Place::Local(a) | Place::Const(a) | Place::Param(a) => a,
            Place::Invalid(a, space) => {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    format!("{space} address {a:#x} is in no state space"),
                ))
            }
        };
        if align > 1 && a % align as u64 != 0 {
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::Misaligned,
                format!("address {a:#x} is not aligned to {align} bytes"),
            ));
        }
        Ok(())
    }

    fn private_read(&self, w: u32, l: usize, p: Place, size: u32) -> Result<u64, MemError> {
        let mut b = [0u8; 8];
        let n = size as usize;
        let oob = |space: &'static str, addr: u64, len: u64| MemError {
            kind: FaultKind::OutOfBounds,
            space,
            addr,
            size,
            nearest: Some((format!("{space} memory"), 0, len)),
        };
        match p {
            Place::Local(a) => {
                let local = &self.warps[w as usize].lanes[l].local;
                let s = local
                    .get(a as usize..a as usize + n)
                    .ok_or_else(|| oob("local", a, local.len() as u64))?;
                b[..n].copy_from_slice(s);
            }
            Place::Param(a) => {
                let s = self
                    .params
                    .get(a as usize..a as usize + n)
                    .ok_or_else(|| oob("param", a, self.params.len() as u64))?;
                b[..n].copy_from_slice(s);
            }
            Place::Const(a) => b[..n].copy_from_slice(self.mem.constant.slice(a, size)?),
            Place::Mem(_) | Place::Invalid(..) => {}
        }
        Ok(u64::from_le_bytes(b))
    }

    /// `inst` is an `Op::Ld`.
    fn exec_ld(&mut self, w: u32, active: u32, pc: u32, inst: &Inst) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::Ld {
            space,
            ref ds,
            addr,
            size,
            signed,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let total = size * ds.len() as u32;
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, total.next_power_of_two())?;
            for (k, d) in ds.iter().enumerate() {
                let off = k as u64 * size as u64;
                let v = match p {
                    Place::Mem(loc) => {
                        let a = self.access(
                            w,
                            l,
                            loc.offset(off),
                            size,
                            AccessKind::Load,
                            sem,
                            scope,
                            site,
                        );
                        let mut b = [0u8; 8];
                        if let Err(e) = self.hooks.load(self.mem, &a, &mut b[..size as usize]) {
                            return Err(self.mem_fault(w, l, pc, e));
                        }
                        Ok(u64::from_le_bytes(b))
                    }
                    Place::Local(a) => self.private_read(w, l, Place::Local(a + off), size),
                    Place::Const(a) => self.private_read(w, l, Place::Const(a + off), size),
                    Place::Param(a) => self.private_read(w, l, Place::Param(a + off), size),
                    Place::Invalid(..) => Ok(0),
                }
                .map_err(|e| self.mem_fault(w, l, pc, e))?;
                let v = if signed { sign_extend(v, size) } else { v };
                if let Some(d) = d {
                    self.set(w, l, *d, v);
                }
            }
        }
        Ok(())
    }

    /// `inst` is an `Op::St`.
    fn exec_st(&mut self, w: u32, active: u32, pc: u32, inst: &Inst) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::St {
            space,
            addr,
            ref vals,
            size,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        let total = size * vals.len() as u32;
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, total.next_power_of_two())?;
            for (k, s) in vals.iter().enumerate() {
                let off = k as u64 * size as u64;
                let v = self.src(w, l, *s);
                let bytes = v.to_le_bytes();
                let data = &bytes[..size as usize];
                match p {
                    Place::Mem(loc) => {
                        let a = self.access(
                            w,
                            l,
                            loc.offset(off),
                            size,
                            AccessKind::Store,
                            sem,
                            scope,
                            site,
                        );
                        if let Err(e) = self.hooks.store(self.mem, &a, data) {
                            return Err(self.mem_fault(w, l, pc, e));
                        }
                        self.since_progress = 0;
                    }
                    Place::Local(a) => {
                        let local = &mut self.warps[w as usize].lanes[l].local;
                        let len = local.len() as u64;
                        match local.get_mut((a + off) as usize..(a + off) as usize + size as usize)
                        {
                            Some(dst) => dst.copy_from_slice(data),
                            None => {
                                let e = MemError {
                                    kind: FaultKind::OutOfBounds,
                                    space: "local",
                                    addr: a + off,
                                    size,
                                    nearest: Some(("local memory".into(), 0, len)),
                                };
                                return Err(self.mem_fault(w, l, pc, e));
                            }
                        }
                    }
                    Place::Const(a) | Place::Param(a) => {
                        return Err(self.fault(
                            w,
                            l,
                            pc,
                            FaultKind::ReadOnly,
                            format!("store to read-only address {a:#x}"),
                        ));
                    }
                    Place::Invalid(..) => {}
                }
            }
        }
        Ok(())
    }

    /// `inst` is an `Op::Atom`.
    fn exec_atom(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), LaunchOutcome> {
        let site = inst.site;
        let &Op::Atom {
            space,
            op,
            size,
            d,
            addr,
            b,
            c,
            sem,
            scope,
        } = &inst.op
        else {
            return Ok(());
        };
        for l in lanes(active) {
            let p = self.place(w, l, space, addr);
            self.check_align(w, l, pc, p, size)?;
            let Place::Mem(loc) = p else {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::InvalidAddress,
                    "atomic on memory that is neither global nor shared".into(),
                ));
            };
            let bv = self.src(w, l, b);
            let cv = c.map_or(0, |c| self.src(w, l, c));
            let a = self.access(w, l, loc, size, AccessKind::Atomic, sem, scope, site);
            let mut f = rmw(op, size, bv, cv);
            let old = match self.hooks.atomic(self.mem, &a, &mut f) {
                Ok(v) => v,
                Err(e) => return Err(self.mem_fault(w, l, pc, e)),
            };
            self.since_progress = 0;
            if let Some(d) = d {
                self.set(w, l, d, old);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_bar(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        site: SiteId,
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        _d: Option<Slot>,
        pred: Option<Src>,
    ) -> Result<Flow, LaunchOutcome> {
        let l0 = active.trailing_zeros() as usize;
        let bid = self.src(w, l0, id);
        if bid >= 16 {
            return Err(self.fault(
                w,
                l0,
                pc,
                FaultKind::Undefined,
                format!("barrier id {bid} is not in 0..16"),
            ));
        }
        let bid = bid as u32;
        let cnt = count.map(|c| self.src(w, l0, c) as u32);
        if let Some(c) = cnt {
            if c == 0 || c % WARP as u32 != 0 && c != self.tpb {
                // PTX: the count must be a multiple of the warp size.
                return Err(self.fault(
                    w,
                    l0,
                    pc,
                    FaultKind::Undefined,
                    format!("barrier thread count {c} is not a multiple of the warp size"),
                ));
            }
        }
        let cta = self.warps[w as usize].cta;
        for l in lanes(active) {
            let pv = pred.map(|p| self.src(w, l, p) != 0).unwrap_or(false);
            let t = self.thread_ref(w, l);
            let ev = Barrier {
                thread: t,
                kind: if kind == BarKind::Arrive {
                    BarrierKind::Arrive
                } else {
                    BarrierKind::Sync
                },
                id: bid,
                site,
            };
            self.hooks.barrier_arrive(self.mem, &ev);
            let bs = &mut self.ctas[cta as usize].bars[bid as usize];
            if bs.arrived == 0 {
                bs.expected = cnt;
                bs.popc = 0;
                bs.all = true;
                bs.any = false;
            }
            bs.arrived += 1;
            if cnt.is_some() {
                // PTX counts a counted barrier's arrivals per warp ("marks warps' arrival"):
                // a warp whose other lanes exited still arrives as a whole warp, so its
                // lowest live lane also counts the exited lanes.
                let warp = &self.warps[w as usize];
                let live = warp.present & !warp.exited;
                if live.trailing_zeros() as usize == l {
                    bs.arrived += (warp.present & warp.exited).count_ones();
                }
            }
            bs.popc += pv as u32;
            bs.all &= pv;
            bs.any |= pv;
            let warp = &mut self.warps[w as usize];
            let lane = &mut warp.lanes[l];
            if kind == BarKind::Arrive {
                lane.pc = pc + 1;
            } else {
                lane.status = Status::Barrier(bid);
                lane.pc = pc;
                warp.ready &= !(1 << l);
            }
        }
        self.set_runnable(w);
        self.try_release(cta, bid);
        Ok(Flow::PerLane)
    }

    fn try_release(&mut self, cta: u32, bid: u32) {
        let c = &self.ctas[cta as usize];
        let bs = &c.bars[bid as usize];
        if bs.arrived == 0 || bs.arrived < bs.expected.unwrap_or(c.live) {
            return;
        }
        let (popc, all, any) = (bs.popc, bs.all, bs.any);
        let range = c.warps.clone();
        self.ctas[cta as usize].bars[bid as usize] = BarState::default();
        let mut released = Vec::new();
        let mut first_site = 0;
        for w in range {
            let mut woke = false;
            for l in 0..self.warps[w as usize].lanes.len() {
                if self.warps[w as usize].lanes[l].status != Status::Barrier(bid) {
                    continue;
                }
                let pc = self.warps[w as usize].lanes[l].pc;
                let inst = &self.prog.insts[pc as usize];
                first_site = inst.site;
                if let Op::Bar {
                    kind, d: Some(d), ..
                } = &inst.op
                {
                    let v = match kind {
                        BarKind::RedPopc => popc as u64,
                        BarKind::RedAnd => all as u64,
                        BarKind::RedOr => any as u64,
                        _ => 0,
                    };
                    self.set(w, l, *d, v);
                }
                let warp = &mut self.warps[w as usize];
                warp.lanes[l].status = Status::Ready;
                warp.lanes[l].pc = pc + 1;
                warp.ready |= 1 << l;
                woke = true;
                released.push(self.thread_ref(w, l));
            }
            if woke {
                self.set_runnable(w);
            }
        }
        if let Some(t) = released.first() {
            let ev = Barrier {
                thread: *t,
                kind: BarrierKind::Sync,
                id: bid,
                site: first_site,
            };
            self.hooks.barrier_release(self.mem, &ev, &released);
        }
        self.since_progress = 0;
    }

    fn member_mask(&self, w: u32, l: usize, op: &Op) -> u32 {
        let m = match op {
            Op::WarpSync { mask }
            | Op::Shfl { mask, .. }
            | Op::Vote { mask, .. }
            | Op::Match { mask, .. }
            | Op::Redux { mask, .. } => *mask,
            _ => return 0,
        };
        self.src(w, l, m) as u32
    }

    fn exec_collective(
        &mut self,
        w: u32,
        active: u32,
        _group: u32,
        pc: u32,
        inst: &'p Inst,
    ) -> Result<Flow, LaunchOutcome> {
        let l0 = active.trailing_zeros() as usize;
        let member = self.member_mask(w, l0, &inst.op);
        if active & !member != 0 {
            let l = (active & !member).trailing_zeros() as usize;
            return Err(self.fault(
                w,
                l,
                pc,
                FaultKind::Undefined,
                format!(
                    "thread executes `{}` but is not in its member mask {member:#010x}",
                    self.site(pc).text
                ),
            ));
        }
        {
            let warp = &mut self.warps[w as usize];
            for l in lanes(active) {
                warp.lanes[l].status = Status::Collective(member);
                warp.lanes[l].pc = pc;
                warp.ready &= !(1 << l);
            }
        }
        self.set_runnable(w);
        self.complete_collective(w, pc)?;
        Ok(Flow::PerLane)
    }

    /// Lanes waiting at `pc` (or, for `bar.warp.sync`, at any `bar.warp.sync`) proceed if
    /// every live lane of their member mask is waiting too.
    fn complete_collective(&mut self, w: u32, pc: u32) -> Result<(), LaunchOutcome> {
        let inst = &self.prog.insts[pc as usize];
        let is_warpsync = matches!(inst.op, Op::WarpSync { .. });
        let warp = &self.warps[w as usize];
        let mut waiting = 0u32;
        let mut member = 0u32;
        for (l, lane) in warp.lanes.iter().enumerate() {
            if let Status::Collective(m) = lane.status {
                let same = lane.pc == pc
                    || (is_warpsync
                        && matches!(self.prog.insts[lane.pc as usize].op, Op::WarpSync { .. }));
                if same {
                    waiting |= 1 << l;
                    member |= m;
                }
            }
        }
        if waiting == 0 {
            return Ok(());
        }
        let required = member & warp.present & !warp.exited;
        if required & !waiting != 0 {
            return Ok(());
        }
        let have = waiting;
        let site = inst.site;
        match &inst.op {
            Op::WarpSync { .. } => {
                let ev_threads: Vec<ThreadRef> =
                    lanes(have).map(|l| self.thread_ref(w, l)).collect();
                for t in &ev_threads {
                    let ev = Barrier {
                        thread: *t,
                        kind: BarrierKind::Warp,
                        id: member,
                        site,
                    };
                    self.hooks.barrier_arrive(self.mem, &ev);
                }
                if let Some(t) = ev_threads.first() {
                    let ev = Barrier {
                        thread: *t,
                        kind: BarrierKind::Warp,
                        id: member,
                        site,
                    };
                    self.hooks.barrier_release(self.mem, &ev, &ev_threads);
                }
            }
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
                ..
            } => {
                let vals: Vec<u64> = (0..WARP)
                    .map(|l| {
                        if l < self.warps[w as usize].lanes.len() {
                            self.src(w, l, *a)
                        } else {
                            0
                        }
                    })
                    .collect();
                let mut out = Vec::new();
                for l in lanes(have) {
                    let bv = self.src(w, l, *b) as u32;
                    let cv = self.src(w, l, *c) as u32;
                    let segmask = (cv >> 8) & 0x1f;
                    let clamp = cv & 0x1f;
                    let lane = l as i32;
                    let max_lane = ((lane as u32 & segmask) | (clamp & !segmask)) as i32;
                    let min_lane = (lane as u32 & segmask) as i32;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = lane - bv as i32;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = lane + bv as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = lane ^ bv as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = min_lane | (bv & 0x1f & !segmask) as i32;
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval && (0..WARP as i32).contains(&j) {
                        j as usize
                    } else {
                        l
                    };
                    out.push((l, vals[j], pval));
                }
                for (l, v, pv) in out {
                    self.set(w, l, *d, v & 0xffff_ffff);
                    if let Some(p) = p {
                        self.set(w, l, *p, pv as u64);
                    }
                }
            }
            Op::Vote { mode, d, a, .. } => {
                let mut ballot = 0u32;
                for l in lanes(have) {
                    if self.src(w, l, *a) != 0 {
                        ballot |= 1 << l;
                    }
                }
                let v = match mode {
                    VoteMode::All => (ballot == have) as u64,
                    VoteMode::Any => (ballot != 0) as u64,
                    VoteMode::Uni => (ballot == have || ballot == 0) as u64,
                    VoteMode::Ballot => ballot as u64,
                };
                for l in lanes(have) {
                    self.set(w, l, *d, v);
                }
            }
            Op::Match {
                all, bits, d, p, a, ..
            } => {
                let m = mask_bits(*bits);
                let vals: Vec<(usize, u64)> =
                    lanes(have).map(|l| (l, self.src(w, l, *a) & m)).collect();
                let all_eq = vals.iter().all(|v| v.1 == vals[0].1);
                for (l, v) in &vals {
                    let r = if *all {
                        if all_eq {
                            have
                        } else {
                            0
                        }
                    } else {
                        vals.iter()
                            .filter(|x| x.1 == *v)
                            .fold(0u32, |acc, x| acc | 1 << x.0)
                    };
                    self.set(w, *l, *d, r as u64);
                    if let Some(p) = p {
                        self.set(w, *l, *p, all_eq as u64);
                    }
                }
            }
            Op::Redux { op, d, a, .. } => {
                let vals: Vec<u32> = lanes(have).map(|l| self.src(w, l, *a) as u32).collect();
                let r = match op {
                    ReduxOp::Add => vals.iter().fold(0u32, |x, y| x.wrapping_add(*y)),
                    ReduxOp::MinU => vals.iter().copied().min().unwrap_or(0),
                    ReduxOp::MaxU => vals.iter().copied().max().unwrap_or(0),
                    ReduxOp::MinS => vals.iter().map(|v| *v as i32).min().unwrap_or(0) as u32,
                    ReduxOp::MaxS => vals.iter().map(|v| *v as i32).max().unwrap_or(0) as u32,
                    ReduxOp::And => vals.iter().fold(u32::MAX, |x, y| x & y),
                    ReduxOp::Or => vals.iter().fold(0, |x, y| x | y),
                    ReduxOp::Xor => vals.iter().fold(0, |x, y| x ^ y),
                };
                for l in lanes(have) {
                    self.set(w, l, *d, r as u64);
                }
            }
            _ => {}
        }
        let warp = &mut self.warps[w as usize];
        for l in lanes(have) {
            warp.lanes[l].status = Status::Ready;
            warp.lanes[l].pc += 1;
            warp.ready |= 1 << l;
        }
        self.set_runnable(w);
        Ok(())
    }

    fn try_collectives(&mut self, w: u32) {
        let pcs: Vec<u32> = self.warps[w as usize]
            .lanes
            .iter()
            .filter(|l| matches!(l.status, Status::Collective(_)))
            .map(|l| l.pc)
            .collect();
        for pc in pcs {
            let _ = self.complete_collective(w, pc);
        }
    }
}
