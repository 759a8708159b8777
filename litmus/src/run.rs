//! Running a lowered litmus test many times under a write-buffer model and collecting
//! the outcome histogram.
//!
//! Execution `i` of a (test, model) pair is a pure function of `(master seed, i)`: its
//! seed is `mix(master ^ mix(i))`, even executions use the random scheduler and odd ones
//! PCT with depth 2–4 (depth 1 never preempts, so a spinning
//! thread would starve the one it waits for), and `p_w` cycles through the given list. Work is split into fixed
//! chunks over `workers` threads and merged in order, so results do not depend on the
//! number of threads or on timing.

use crate::ast::{LitmusTest, Var};
use crate::lower::{Lowered, KERNEL, OUT};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model, WriteBuffers};
use fencehound_vgpu::{
    Device, Dim3, Hooks, LaunchOptions, LaunchOutcome, ModuleId, Pct, RandomScheduler, Scheduler,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// Lane-instruction budget per execution: litmus kernels are tiny, so running out means a
/// spin loop that cannot exit (a hang).
pub const FUEL: u64 = 60_000;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub runs: u64,
    pub p_w: Vec<f64>,
    pub seed: u64,
    pub workers: usize,
    pub fuel: u64,
    /// What forces buffered entries out (the native handlers' own rules by default; the
    /// device policy is what the GPU rewrite implements).
    pub policy: DrainPolicy,
    /// Where the locations of a test lowered from a file go ([`crate::suite::run_test`];
    /// a caller that lowers the test itself chooses there).
    pub layout: crate::lower::Layout,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            runs: 1000,
            p_w: vec![0.5, 1.0],
            seed: 0,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            fuel: FUEL,
            policy: DrainPolicy::Native,
            layout: crate::lower::Layout::Spread,
        }
    }
}

/// How one execution was set up (enough to replay it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecParams {
    pub index: u64,
    pub seed: u64,
    pub scheduler: String,
    pub p_w: f64,
}

fn mix(mut z: u64) -> u64 {
    // splitmix64's finaliser.
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn exec_params(cfg: &RunConfig, i: u64) -> ExecParams {
    let seed = mix(cfg.seed ^ mix(i));
    let scheduler = if i.is_multiple_of(2) {
        format!("random(seed={seed})")
    } else {
        format!("pct(depth={}, seed={seed})", 2 + (i / 2) % 3)
    };
    let p_w = if cfg.p_w.is_empty() {
        1.0
    } else {
        cfg.p_w[((i / 2) % cfg.p_w.len() as u64) as usize]
    };
    ExecParams {
        index: i,
        seed,
        scheduler,
        p_w,
    }
}

/// What one execution ended with.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecOutcome {
    /// Values of [`LitmusTest::observed`], in order.
    Final(Vec<i64>),
    /// Deadlock or a spin that never ends: no final state.
    Hang,
    /// The kernel faulted (a lowering problem, or e.g. a register barrier id ≥ 16).
    Fault(String),
}

/// Runs execution `i`.
pub fn execute(
    test: &LitmusTest,
    low: &Lowered,
    model: Model,
    cfg: &RunConfig,
    i: u64,
) -> ExecOutcome {
    execute_with(test, low, cfg, i, |ep, _, _| {
        let mut bc = BufferConfig::new(model, ep.p_w, ep.seed);
        bc.policy = cfg.policy;
        WriteBuffers::new(bc)
    })
    .0
}

/// Runs execution `i` (its seed, scheduler and `p_w` as [`exec_params`] says) with the
/// hooks `make` builds from those parameters and the loaded module; returns the outcome
/// and the hooks (`None` if the module did not load).
pub fn execute_with<H: Hooks>(
    test: &LitmusTest,
    low: &Lowered,
    cfg: &RunConfig,
    i: u64,
    make: impl FnOnce(&ExecParams, &Device, ModuleId) -> H,
) -> (ExecOutcome, Option<H>) {
    let ep = exec_params(cfg, i);
    let make = |dev: &Device, id| make(&ep, dev, id);
    if i.is_multiple_of(2) {
        run_hooked(test, low, cfg, &mut RandomScheduler::new(ep.seed), make)
    } else {
        let depth = 2 + ((i / 2) % 3) as u32;
        run_hooked(test, low, cfg, &mut Pct::new(ep.seed, depth), make)
    }
}

/// Runs `test` once with the hooks `make` builds for the loaded module; returns the
/// outcome and the hooks (`None` if the module did not load).
fn run_hooked<S: Scheduler, H: Hooks>(
    test: &LitmusTest,
    low: &Lowered,
    cfg: &RunConfig,
    sched: &mut S,
    make: impl FnOnce(&Device, ModuleId) -> H,
) -> (ExecOutcome, Option<H>) {
    let fuel = cfg.fuel;
    let mut dev = Device::new();
    let id = match dev.load_module(&low.module) {
        Ok(id) => id,
        Err(e) => return (ExecOutcome::Fault(format!("load: {e}")), None),
    };
    let mut wb = make(&dev, id);
    let o = launch_and_read(test, low, cfg, sched, &mut dev, id, &mut wb, fuel);
    (o, Some(wb))
}

#[allow(clippy::too_many_arguments)]
fn launch_and_read<S: Scheduler, H: Hooks>(
    test: &LitmusTest,
    low: &Lowered,
    cfg: &RunConfig,
    sched: &mut S,
    dev: &mut Device,
    id: ModuleId,
    wb: &mut H,
    fuel: u64,
) -> ExecOutcome {
    let r = match dev.launch_with(
        id,
        KERNEL,
        Dim3::x(low.grid),
        Dim3::x(low.block),
        0,
        &[],
        LaunchOptions {
            fuel,
            ..Default::default()
        },
        wb,
        sched,
    ) {
        Ok(r) => r,
        Err(e) => return ExecOutcome::Fault(format!("launch: {e}")),
    };
    match r.outcome {
        LaunchOutcome::Completed => {}
        // Every unfinished thread waits at its last instruction, a `bar.sync`: everything
        // else has executed, so the state is final. Not under the device policy: there
        // the entries of exited threads wait for the last thread's exit, which never
        // comes; a GPU kernel in that state does not finish either.
        LaunchOutcome::Deadlock(d)
            if cfg.policy == DrainPolicy::Native
                && d.warps.iter().all(|w| {
                    w.groups.iter().all(|(_, what, site)| {
                        what.starts_with("waiting at barrier")
                            && low.trailing_barriers.contains(&site.ptx_line)
                    })
                }) => {}
        LaunchOutcome::Deadlock(_) | LaunchOutcome::Timeout(_) => return ExecOutcome::Hang,
        LaunchOutcome::Fault(f) => return ExecOutcome::Fault(format!("{f:?}")),
        LaunchOutcome::Trap(t) => return ExecOutcome::Fault(format!("{t:?}")),
    }
    let read = |var: &str, index: usize| -> Option<i64> {
        let (addr, _) = dev.global_by_name(id, var).ok()?;
        let mut b = [0u8; 4];
        dev.copy_from(addr + 4 * index as u64, &mut b).ok()?;
        Some(i32::from_le_bytes(b) as i64)
    };
    let mut vals = Vec::new();
    for v in test.observed() {
        let x = match &v {
            Var::Reg { thread, name } => low
                .out_slots
                .iter()
                .position(|(t, r)| t == thread && r == name)
                .and_then(|k| read(OUT, k)),
            Var::Loc(l) => low
                .locations
                .iter()
                .find(|(n, _, _)| n == l)
                .and_then(|(_, pv, i)| read(pv, *i)),
        };
        match x {
            Some(x) => vals.push(x),
            None => return ExecOutcome::Fault(format!("cannot read back `{v}`")),
        }
    }
    ExecOutcome::Final(vals)
}

/// The outcomes of `runs` executions under one model.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Histogram {
    /// Final state → (count, first execution that produced it).
    pub states: BTreeMap<Vec<i64>, (u64, ExecParams)>,
    pub hangs: u64,
    pub faults: u64,
    pub first_fault: Option<(String, ExecParams)>,
}

impl Default for ExecParams {
    fn default() -> Self {
        ExecParams {
            index: 0,
            seed: 0,
            scheduler: String::new(),
            p_w: 0.0,
        }
    }
}

impl Histogram {
    fn add(&mut self, o: ExecOutcome, ep: impl FnOnce() -> ExecParams) {
        match o {
            ExecOutcome::Final(v) => {
                let e = self.states.entry(v).or_insert_with(|| (0, ep()));
                e.0 += 1;
            }
            ExecOutcome::Hang => self.hangs += 1,
            ExecOutcome::Fault(m) => {
                self.faults += 1;
                if self.first_fault.is_none() {
                    self.first_fault = Some((m, ep()));
                }
            }
        }
    }

    /// Adds another histogram's executions (the earliest execution of a state is kept).
    pub fn merge(&mut self, other: Histogram) {
        for (k, (n, ep)) in other.states {
            match self.states.get_mut(&k) {
                Some(e) => {
                    e.0 += n;
                    if ep.index < e.1.index {
                        e.1 = ep;
                    }
                }
                None => {
                    self.states.insert(k, (n, ep));
                }
            }
        }
        self.hangs += other.hangs;
        self.faults += other.faults;
        match (&self.first_fault, other.first_fault) {
            (None, Some(f)) => self.first_fault = Some(f),
            (Some(a), Some(b)) if b.1.index < a.1.index => self.first_fault = Some(b),
            _ => {}
        }
    }

    pub fn total(&self) -> u64 {
        self.states.values().map(|x| x.0).sum::<u64>() + self.hangs + self.faults
    }
}

/// Runs executions `0..cfg.runs` of `test` under `model` on `cfg.workers` threads.
pub fn run_model(test: &LitmusTest, low: &Lowered, model: Model, cfg: &RunConfig) -> Histogram {
    run_range(test, low, model, cfg, 0..cfg.runs)
}

/// Runs executions `range` (`cfg.runs` is ignored): a later range continues where an
/// earlier one stopped, with the same per-execution seeds as one longer run.
pub fn run_range(
    test: &LitmusTest,
    low: &Lowered,
    model: Model,
    cfg: &RunConfig,
    range: std::ops::Range<u64>,
) -> Histogram {
    const CHUNK: u64 = 256;
    let (a, b) = (range.start, range.end.max(range.start));
    let chunks: Vec<std::ops::Range<u64>> = (0..(b - a).div_ceil(CHUNK))
        .map(|c| a + c * CHUNK..(a + (c + 1) * CHUNK).min(b))
        .collect();
    let run_chunk = |r: std::ops::Range<u64>| {
        let mut h = Histogram::default();
        for i in r {
            let o = execute(test, low, model, cfg, i);
            h.add(o, || exec_params(cfg, i));
        }
        h
    };
    let workers = cfg.workers.max(1).min(chunks.len().max(1));
    let mut parts: Vec<(usize, Histogram)> = if workers <= 1 {
        chunks
            .into_iter()
            .enumerate()
            .map(|(k, r)| (k, run_chunk(r)))
            .collect()
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(r) = chunks.get(k) else { break };
                            mine.push((k, run_chunk(r.clone())));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    };
    parts.sort_by_key(|p| p.0);
    let mut h = Histogram::default();
    for (_, p) in parts {
        h.merge(p);
    }
    h
}
