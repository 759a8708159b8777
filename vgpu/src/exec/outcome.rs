//! What a launch returns: its outcome (completed, fault, trap, deadlock, timeout), the
//! hang dump of unfinished warps, and execution statistics.

use crate::error::FaultKind;
use crate::hooks::ThreadRef;
use crate::program::SiteInfo;

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
    pub(super) fn split(self, linear: u32) -> [u32; 3] {
        let x = linear % self.x;
        let y = (linear / self.x) % self.y;
        let z = linear / (self.x * self.y);
        [x, y, z]
    }
    /// `self.split(linear)[d % 3]`, computing only that component.
    #[inline]
    pub(super) fn component(self, linear: u32, d: u8) -> u32 {
        match d % 3 {
            0 => linear % self.x,
            1 => (linear / self.x) % self.y,
            _ => linear / (self.x * self.y),
        }
    }
    pub(super) fn get(self, d: u8) -> u32 {
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

/// Where unfinished warps are, and why the launch was stopped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HangDump {
    pub warps: Vec<WarpDump>,
    pub cause: HangCause,
}

/// Why a launch that did not complete was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HangCause {
    /// No thread can run (a deadlock): every unfinished thread waits at a barrier or
    /// collective that can no longer complete.
    #[default]
    Blocked,
    /// Every warp that can run repeats a state it had, reading values nothing can change
    /// any more (a livelock; see the interpreter's `livelock` module). Also a deadlock.
    Livelock,
    /// The launch's lane-instruction budget (fuel) ran out: a timeout.
    Fuel,
    /// The launch's wall-clock budget ran out, or it was cancelled: a timeout.
    WallClock,
}

impl HangCause {
    /// One line for users: what was decided.
    pub fn describe(self) -> &'static str {
        match self {
            HangCause::Blocked => "no thread can proceed",
            HangCause::Livelock => {
                "no thread can make progress: every running warp repeats a state it had, spinning on values that nothing can change"
            }
            HangCause::Fuel => "the lane-instruction budget (fuel) ran out",
            HangCause::WallClock => "the wall-clock budget ran out",
        }
    }
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
        if self.cause == HangCause::Livelock {
            writeln!(f, "  {}:", self.cause.describe())?;
        }
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
    /// Scheduler decisions that gave a parked warp a step, applied without interpreting
    /// it (spin parking, see the interpreter's `livelock` module).
    pub parked_steps: u64,
    /// Liveness drains made at once after one that woke no parked warp while every
    /// runnable warp was parked ([`crate::LaunchOptions::quick_stalls`]).
    pub stall_repeats: u64,
    /// Stalls declared as soon as every runnable warp was parked
    /// ([`crate::LaunchOptions::quick_stalls`]).
    pub quick_stalls: u64,
    /// Loads that ran without a scheduler decision: every byte they read is one no
    /// thread of the launch writes (`crate::unwritten`).
    pub unwritten_loads: u64,
    /// Global writes outside the launch's bound on what it writes (pointer arithmetic
    /// past its allocation): the bound grew (`crate::unwritten`).
    pub unwritten_escapes: u64,
    /// Scheduler decisions made among one CTA's warps
    /// ([`crate::LaunchOptions::cta_local`]).
    pub cta_local_picks: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchResult {
    pub outcome: LaunchOutcome,
    /// `printf` output, in execution order.
    pub stdout: String,
    pub stats: ExecStats,
}
