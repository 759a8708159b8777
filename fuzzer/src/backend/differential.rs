//! The differential test of the rewrite on campaigns: for a variant, model, `p_w` and
//! seed, the original PTX under the native handlers (device policy) and the lockstep
//! rewrite on plain memory run under the same lockstep scheduler seed
//! ([`fencehound_handlers::rewrite::lockstep`]); every write to memory in order, the
//! outputs, the statistics (buffered stores, flush-length histograms, drains by reason,
//! forwarded loads, peak occupancy), printf output and the way the execution ended must be
//! equal. A difference is reported with the first diverging write, naming the store (CUDA
//! line, thread, buffer and offset) it came from.

use super::instrumented::{alloc_buffers, launch_args, read_outputs};
use crate::execution::{judge_raw, Prepared};
use crate::types::Raw;
use crate::verdict::Verdict;
use fencehound_handlers::rewrite::lockstep::{self, End, LaunchDesc, Origin, Plan, Write};
use fencehound_handlers::rewrite::{self, layout, Flavor, RewriteOptions};
use fencehound_handlers::{BufferConfig, BufferStats, DrainPolicy, Model};
use fencehound_vgpu::{Device, Location, ModuleId};
use std::time::{Duration, Instant};

/// A variant's two modules.
pub struct Differential {
    reference: fencehound_ptx::Module,
    rewritten: fencehound_ptx::Module,
    /// The device policy both sides use.
    pub liveness_period: u32,
    pub overlay_capacity: u32,
}

/// What one comparison found.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The verdict of the native run (the rewritten one's when they differ is in
    /// `divergence`).
    pub verdict: Verdict,
    pub stats: BufferStats,
    /// Writes to user memory (equal in both runs unless diverged).
    pub writes: usize,
    pub lane_instructions: (u64, u64),
    /// None when the runs agree.
    pub divergence: Option<String>,
}

impl Differential {
    pub fn new(prep: &Prepared) -> Result<Differential, String> {
        if let Some(what) = prep.vgpu_only() {
            return Err(format!(
                "{what} are not compared (they run only on the vgpu)"
            ));
        }
        let reference = rewrite::normalize_reference(&prep.module).map_err(|e| e.to_string())?;
        let rewritten = rewrite::rewrite(
            &prep.module,
            &RewriteOptions {
                flavor: Flavor::Lockstep,
                ..Default::default()
            },
        )
        .map_err(|e| format!("instrumenting: {e}"))?
        .module;
        Ok(Differential {
            reference,
            rewritten,
            liveness_period: layout::DEFAULT_LIVENESS_PERIOD,
            overlay_capacity: layout::DEFAULT_OVERLAY_CAPACITY,
        })
    }

    /// The configuration both sides buffer with.
    pub fn config(&self, model: Model, p: f64, seed: u64) -> BufferConfig {
        let mut cfg = BufferConfig::new(model, p, seed);
        cfg.policy = DrainPolicy::Device {
            liveness_period: self.liveness_period,
            overlay_capacity: self.overlay_capacity,
        };
        cfg
    }

    /// Runs both sides of one execution and compares them.
    pub fn compare(
        &self,
        prep: &Prepared,
        model: Model,
        p: f64,
        seed: u64,
    ) -> Result<Comparison, String> {
        let cfg = self.config(model, p, seed);
        let budget = &prep.campaign.file.budget;
        let plan = |ptrs: &[u64]| Plan {
            launches: (0..prep.campaign.launches.len())
                .map(|i| {
                    let l = &prep.campaign.launches[i];
                    LaunchDesc {
                        kernel: super::instrumented::kernel_of(prep, i),
                        grid: l.grid,
                        block: l.block,
                        dynamic_shared: l.dynamic_shared,
                        args: launch_args(prep, ptrs, i),
                    }
                })
                .collect(),
            sched_seed: seed,
            fuel: budget.fuel,
            // A safety net only: the fuel decides timeouts, identically on both sides.
            deadline: Some(
                Instant::now() + Duration::from_millis(budget.wall_ms.saturating_mul(200)),
            ),
        };
        let load = |m: &fencehound_ptx::Module| -> Result<(Device, ModuleId, Vec<u64>), String> {
            let mut dev = Device::new();
            let id = dev.load_module(m).map_err(|e| e.to_string())?;
            let ptrs = alloc_buffers(&mut dev, prep)?;
            Ok((dev, id, ptrs))
        };
        let (mut da, ma, pa) = load(&self.reference)?;
        let (mut db, mb, pb) = load(&self.rewritten)?;
        if pa != pb {
            return Err("the buffers got different addresses in the two runs".into());
        }
        let n = lockstep::run_native(&mut da, ma, &plan(&pa), cfg.clone())?;
        let r = lockstep::run_rewritten(&mut db, mb, &plan(&pb), &cfg)?;
        let oa = read_outputs(&da, prep, &pa)?;
        let ob = read_outputs(&db, prep, &pb)?;
        let verdict_of = |end: &End, outputs: fencehound_oracle::Outputs, stats: &BufferStats| {
            let outcome_verdict = match end {
                End::Completed => None,
                End::Fault { .. } => Some(Verdict::Fault {
                    message: format!("{end:?}"),
                }),
                End::Trap { message, .. } => Some(Verdict::Trap {
                    message: message.clone(),
                }),
                End::Deadlock => Some(Verdict::Deadlock {
                    dump: String::new(),
                }),
                End::Timeout => Some(Verdict::Timeout {
                    dump: String::new(),
                    wall: false,
                }),
            };
            judge_raw(
                prep,
                Ok(Raw {
                    outputs,
                    outcome_verdict,
                    stats: stats.clone(),
                    lane_instructions: 0,
                    printf: String::new(),
                    trace: Vec::new(),
                    sites: Vec::new(),
                    races: Vec::new(),
                }),
                Instant::now(),
            )
            .verdict
        };
        let va = verdict_of(&n.run.end, oa.clone(), &n.run.stats);
        let vb = verdict_of(&r.run.end, ob.clone(), &r.run.stats);
        let mut problems = Vec::new();
        if !r.run.violations.is_empty() {
            problems.push(format!(
                "the lockstep scheduler lost track of the blocks: {}",
                r.run.violations.join("; ")
            ));
        }
        if n.run.end != r.run.end {
            problems.push(format!(
                "native run ended {:?}, rewritten {:?}",
                n.run.end, r.run.end
            ));
        }
        if let Some(d) = lockstep::compare_writes(&n.writes, &r.writes) {
            let names = |loc: Location| name_location(prep, &pa, loc);
            let native = match &d.native {
                Some((w, o)) => format!(
                    "{} ← {:#x} ({} bytes), {}",
                    names(w.loc),
                    w.value,
                    w.size,
                    describe_origin(&da, ma, o)
                ),
                None => "nothing".into(),
            };
            let rewritten = match d.rewritten {
                Some(Write { loc, size, value }) => {
                    format!("{} ← {value:#x} ({size} bytes)", names(loc))
                }
                None => "nothing".into(),
            };
            problems.push(format!(
                "first diverging write (#{} of {}/{}): native {native}; rewritten {rewritten}",
                d.index,
                n.writes.len(),
                r.writes.len()
            ));
        }
        if n.run.stats != r.run.stats {
            problems.push(format!(
                "statistics differ: native {:?}; rewritten {:?}",
                n.run.stats, r.run.stats
            ));
        }
        if oa
            .buffers
            .iter()
            .map(|b| &b.data)
            .ne(ob.buffers.iter().map(|b| &b.data))
        {
            let first = oa
                .buffers
                .iter()
                .zip(&ob.buffers)
                .find(|(a, b)| a.data != b.data)
                .map_or(String::new(), |(a, _)| a.name.clone());
            problems.push(format!("outputs differ (first in `{first}`)"));
        }
        if va.name() != vb.name() {
            problems.push(format!(
                "verdicts differ: {} vs {}",
                va.summary(),
                vb.summary()
            ));
        }
        if n.run.stdout != r.run.stdout {
            problems.push("printf output differs".into());
        }
        if n.run.end == End::Completed && r.left_buffered != 0 {
            problems.push(format!(
                "{} entries still buffered after the last launch",
                r.left_buffered
            ));
        }
        Ok(Comparison {
            verdict: va,
            stats: n.run.stats,
            writes: n.writes.len(),
            lane_instructions: (n.run.lane_instructions, r.run.lane_instructions),
            divergence: (!problems.is_empty()).then(|| problems.join("\n")),
        })
    }
}

/// `buffer[index]` for an address inside a campaign buffer, else the raw location.
fn name_location(prep: &Prepared, ptrs: &[u64], loc: Location) -> String {
    if let Location::Global(a) = loc {
        for ((b, init), p) in prep
            .campaign
            .buffers
            .iter()
            .zip(&prep.inputs.buffers)
            .zip(ptrs)
        {
            if a >= *p && a < p + init.data.len() as u64 {
                return format!("{}+{}", b.name, a - p);
            }
        }
    }
    format!("{loc:?}")
}

fn site_text(dev: &Device, m: ModuleId, site: u32) -> String {
    match dev.site(m, site) {
        Some(s) => format!("`{}` at {}", s.text, s.location()),
        None => format!("site {site}"),
    }
}

fn describe_origin(dev: &Device, m: ModuleId, o: &Origin) -> String {
    match o {
        Origin::Store { thread, site } => {
            format!(
                "unbuffered store by thread {thread}: {}",
                site_text(dev, m, *site)
            )
        }
        Origin::Atomic { thread, site } => {
            format!("atomic by thread {thread}: {}", site_text(dev, m, *site))
        }
        Origin::Drain {
            thread,
            site,
            reason,
            at,
        } => format!(
            "drain ({reason:?}{}) of the store by thread {thread}: {}",
            at.map_or(String::new(), |a| format!(" at {}", site_text(dev, m, a))),
            site_text(dev, m, *site)
        ),
    }
}
