//! Schedulers: which warp runs at each preemption point (before every global/shared
//! access, atomic, fence and barrier, and whenever a warp blocks).
//!
//! A scheduler is a small trait (as in shuttle's `Scheduler`): given the runnable warps it
//! returns one. All strategies are deterministic functions of their seed, so the same
//! module, inputs, seed and strategy give the same interleaving bit for bit.
//!
//! - [`RoundRobin`]: each warp runs `quantum` preemption points, then the next warp.
//! - [`RandomScheduler`]: a uniformly random runnable warp at every point; diverged
//!   groups inside a warp are also picked at random (independent thread scheduling).
//! - [`Pct`]: Probabilistic Concurrency Testing (Burckhardt et al., ASPLOS'10). Warps get
//!   random distinct priorities; the highest-priority runnable warp runs; at `depth - 1`
//!   change points chosen uniformly in `[0, k)` (k = expected steps, re-estimated by
//!   doubling when exceeded) the running warp drops to the lowest priority. A bug of depth
//!   d is found with probability at least 1/(n·k^(d-1)).

use crate::rng::Rng;

pub trait Scheduler {
    /// A launch with `warps` warps starts.
    fn launch_begin(&mut self, _warps: u32) {}
    /// Picks the next warp: returns an index into `runnable` (non-empty, ascending warp
    /// ids). `last` is the warp that ran at the previous point, if any.
    fn pick(&mut self, runnable: &[u32], last: Option<u32>) -> usize;
    /// A warp whose threads are at `n > 1` different instructions: which group runs
    /// (groups are ordered by program counter; 0 favours reconvergence).
    ///
    /// Independent thread scheduling guarantees every diverged group of a warp eventually
    /// makes progress (starvation freedom: an intra-warp spin lock must complete), so a
    /// scheduler must not pick the same index forever. The default always picks 0 and is
    /// only for schedulers that override it.
    fn pick_group(&mut self, _n: usize) -> usize {
        0
    }
    /// [`Scheduler::pick_group`] given each group's lane mask (same order). Schedulers that
    /// must recognise lanes (the rewrite's lockstep differential, which keeps running the
    /// lanes inside an instrumentation block) override this; the default ignores the masks.
    fn pick_group_of(&mut self, masks: &[u32]) -> usize {
        self.pick_group(masks.len())
    }
    /// A short description for reports (`random(seed=7)`).
    fn describe(&self) -> String;
    /// The index [`Scheduler::pick`] would return `ahead` picks from now (0: the next one)
    /// for a runnable list of `n` warps that does not change, if nothing else asks the
    /// scheduler in between, without changing its state; `None` when
    /// it cannot tell cheaply. Only a hint: the interpreter prefetches that warp's state
    /// while the current step runs (a launch of a million threads has 32,768 warps, and
    /// a random pick among them found each warp's state cold), so a wrong answer costs a
    /// wasted prefetch, never a different pick.
    fn peek(&self, _n: usize, _ahead: usize) -> Option<usize> {
        None
    }
    /// Whether the interpreter may hand [`Scheduler::pick`] only the runnable warps of one
    /// CTA while that CTA's warps touch nothing outside it (`exec/ctalocal.rs`): true
    /// for a scheduler whose pick among a subset is its pick among all conditioned on
    /// landing in the subset (the uniformly random one). Default false.
    fn cta_local(&self) -> bool {
        false
    }
    /// For a scheduler whose [`Scheduler::pick`] depends on nothing but the number of
    /// runnable warps (not which they are, nor `last`): the index `pick` would return for
    /// any list of `n` warps, advancing its state as `pick` does. The interpreter then
    /// need not list the runnable warps (`exec/runset.rs`). Default `None`: ask `pick`.
    fn pick_by_count(&mut self, _n: usize) -> Option<usize> {
        None
    }
}

/// Which scheduler, as chosen on a command line or in a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulerKind {
    RoundRobin { quantum: u32 },
    Random,
    Pct { depth: u32 },
}

impl SchedulerKind {
    pub fn build(self, seed: u64) -> Box<dyn Scheduler + Send> {
        match self {
            SchedulerKind::RoundRobin { quantum } => Box::new(RoundRobin::new(quantum)),
            SchedulerKind::Random => Box::new(RandomScheduler::new(seed)),
            SchedulerKind::Pct { depth } => Box::new(Pct::new(seed, depth)),
        }
    }
    pub fn parse(s: &str) -> Option<SchedulerKind> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let n = match arg {
            Some(a) => Some(a.parse::<u32>().ok()?),
            None => None,
        };
        match name {
            "rr" | "round-robin" => Some(SchedulerKind::RoundRobin {
                quantum: n.unwrap_or(1).max(1),
            }),
            "random" if n.is_none() => Some(SchedulerKind::Random),
            "pct" => Some(SchedulerKind::Pct {
                depth: n.unwrap_or(3).max(1),
            }),
            _ => None,
        }
    }
}

impl<S: Scheduler + ?Sized> Scheduler for Box<S> {
    fn launch_begin(&mut self, warps: u32) {
        (**self).launch_begin(warps)
    }
    fn pick(&mut self, runnable: &[u32], last: Option<u32>) -> usize {
        (**self).pick(runnable, last)
    }
    fn pick_group(&mut self, n: usize) -> usize {
        (**self).pick_group(n)
    }
    fn pick_group_of(&mut self, masks: &[u32]) -> usize {
        (**self).pick_group_of(masks)
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn peek(&self, n: usize, ahead: usize) -> Option<usize> {
        (**self).peek(n, ahead)
    }
    fn cta_local(&self) -> bool {
        (**self).cta_local()
    }
    fn pick_by_count(&mut self, n: usize) -> Option<usize> {
        (**self).pick_by_count(n)
    }
}

#[derive(Debug, Clone)]
pub struct RoundRobin {
    quantum: u32,
    used: u32,
    /// Rotates through the diverged groups of a warp, so none starves.
    group_turn: u64,
}

impl RoundRobin {
    pub fn new(quantum: u32) -> Self {
        RoundRobin {
            quantum: quantum.max(1),
            used: 0,
            group_turn: 0,
        }
    }
}

impl Scheduler for RoundRobin {
    fn pick(&mut self, runnable: &[u32], last: Option<u32>) -> usize {
        if let Some(l) = last {
            if let Ok(i) = runnable.binary_search(&l) {
                if self.used < self.quantum {
                    self.used += 1;
                    return i;
                }
                self.used = 1;
                return (i + 1) % runnable.len();
            }
            self.used = 1;
            // The next warp after the one that blocked.
            return runnable.partition_point(|w| *w <= l) % runnable.len();
        }
        self.used = 1;
        0
    }
    fn pick_group(&mut self, n: usize) -> usize {
        // Alternate between the lowest-pc group (which favours reconvergence: lagging lanes
        // catch up) and a rotating one, so a group spinning at a lower pc cannot starve the
        // lane it waits for (intra-warp spin locks, ITS).
        self.group_turn = self.group_turn.wrapping_add(1);
        if self.group_turn % 2 == 1 {
            0
        } else {
            ((self.group_turn / 2) % n as u64) as usize
        }
    }
    fn describe(&self) -> String {
        format!("round-robin(quantum={})", self.quantum)
    }
}

#[derive(Debug, Clone)]
pub struct RandomScheduler {
    rng: Rng,
    seed: u64,
}

impl RandomScheduler {
    pub fn new(seed: u64) -> Self {
        RandomScheduler {
            rng: Rng::new(seed),
            seed,
        }
    }
}

impl Scheduler for RandomScheduler {
    fn pick(&mut self, runnable: &[u32], _last: Option<u32>) -> usize {
        self.rng.below(runnable.len() as u64) as usize
    }
    fn pick_group(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }
    fn describe(&self) -> String {
        format!("random(seed={})", self.seed)
    }
    fn peek(&self, n: usize, ahead: usize) -> Option<usize> {
        let mut rng = self.rng.clone();
        for _ in 0..ahead {
            rng.below(n as u64);
        }
        Some(rng.below(n as u64) as usize)
    }
    fn cta_local(&self) -> bool {
        true
    }
    fn pick_by_count(&mut self, n: usize) -> Option<usize> {
        Some(self.rng.below(n as u64) as usize)
    }
}

#[derive(Debug, Clone)]
pub struct Pct {
    rng: Rng,
    seed: u64,
    depth: u32,
    /// Priority per warp; higher runs first.
    prio: Vec<u64>,
    change_points: Vec<u64>,
    steps: u64,
    horizon: u64,
    changes_done: u64,
}

impl Pct {
    pub fn new(seed: u64, depth: u32) -> Self {
        Pct {
            rng: Rng::new(seed),
            seed,
            depth: depth.max(1),
            prio: Vec::new(),
            change_points: Vec::new(),
            steps: 0,
            horizon: 1024,
            changes_done: 0,
        }
    }

    fn plan_changes(&mut self) {
        self.change_points = (1..self.depth)
            .map(|_| self.steps + self.rng.below(self.horizon.max(1)))
            .collect();
        self.change_points.sort_unstable();
    }
}

impl Scheduler for Pct {
    fn launch_begin(&mut self, warps: u32) {
        let n = warps as usize;
        // Distinct random priorities above every value a change point assigns.
        let mut order: Vec<u64> = (0..n as u64).collect();
        for i in (1..n).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        self.prio = order
            .into_iter()
            .map(|p| p + self.depth as u64 + 1)
            .collect();
        self.steps = 0;
        self.changes_done = 0;
        self.horizon = 1024;
        self.plan_changes();
    }

    fn pick(&mut self, runnable: &[u32], last: Option<u32>) -> usize {
        self.steps += 1;
        if self.steps >= self.horizon && self.change_points.is_empty() {
            // Our estimate of the run length was too small: double it and re-plan.
            self.horizon *= 2;
            self.plan_changes();
        }
        while self.change_points.first().is_some_and(|c| *c <= self.steps) {
            self.change_points.remove(0);
            if let Some(l) = last {
                if let Some(p) = self.prio.get_mut(l as usize) {
                    self.changes_done += 1;
                    *p = self.depth as u64 - self.changes_done.min(self.depth as u64);
                }
            }
        }
        let prio = |w: &u32| self.prio.get(*w as usize).copied().unwrap_or(0);
        let top = runnable.iter().map(prio).max().unwrap_or(0);
        let ties = runnable.iter().filter(|w| prio(w) == top).count();
        // Initial priorities are distinct, but every warp demoted after the last planned
        // change point shares priority 0. Always taking the first of those would let a
        // warp spinning on a lock starve the equal-priority warp that holds it, so ties
        // are broken at random (seeded, hence still reproducible).
        let mut k = if ties > 1 {
            self.rng.below(ties as u64) as usize
        } else {
            0
        };
        for (i, w) in runnable.iter().enumerate() {
            if prio(w) == top {
                if k == 0 {
                    return i;
                }
                k -= 1;
            }
        }
        0
    }

    fn pick_group(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    fn describe(&self) -> String {
        format!("pct(depth={}, seed={})", self.depth, self.seed)
    }
}
