//! Running a campaign: every (variant, model, `p_w`, run) is one execution with its own id
//! and seed. Executions run in parallel — tokio orchestrates, each execution runs on a
//! blocking worker, as many at once as `jobs` — and are collected in completion order;
//! the report only depends on the set of results, so it is the same for any `jobs`.
//! Ctrl-C or SIGTERM stops dispatching, cancels running executions (they end within a
//! few thousand instructions) and leaves a valid report marked `interrupted`; a partial
//! report is also written every two seconds, so even a SIGKILL leaves one behind.

use crate::backend::Backend;
use crate::campaign::Campaign;
use crate::execution::{ExecSpec, Prepared};
use crate::report::{CampaignInfo, ExecRecord, Report, VariantInfo, FORMAT};
use crate::seeds::exec_seed;
use crate::verdict::Verdict;
use fencehound_handlers::{BufferStats, Model};
use fencehound_vgpu::SchedulerKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Plan {
    pub variants: Vec<String>,
    pub models: Vec<Model>,
    pub ps: Vec<f64>,
    pub runs: u32,
    pub master_seed: u64,
    pub scheduler: SchedulerKind,
    pub scheduler_name: String,
    pub jobs: usize,
    pub stop_at_first: bool,
    /// Run the race check alongside every execution.
    pub race: bool,
}

/// One cell of the execution grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: u64,
    pub variant: usize,
    pub model: Model,
    pub p: f64,
    pub run: u32,
    pub seed: u64,
}

impl Plan {
    pub fn total(&self) -> u64 {
        self.variants.len() as u64
            * self.models.len() as u64
            * self.ps.len() as u64
            * self.runs as u64
    }

    /// `id = ((variant * models + model) * ps + p) * runs + run`.
    pub fn job(&self, id: u64) -> Job {
        let r = self.runs.max(1) as u64;
        let np = self.ps.len().max(1) as u64;
        let nm = self.models.len().max(1) as u64;
        let run = (id % r) as u32;
        let k = ((id / r) % np) as usize;
        let m = ((id / r / np) % nm) as usize;
        let v = (id / r / np / nm) as usize;
        Job {
            id,
            variant: v,
            model: self.models[m],
            p: self.ps[k],
            run,
            seed: exec_seed(self.master_seed, id),
        }
    }
}

/// Progress as executions finish.
pub struct Event<'a> {
    pub record: &'a ExecRecord,
    pub done: u64,
    pub total: u64,
    pub failures: u64,
}

pub fn new_report(campaign: &Campaign, preps: &[Arc<Prepared>], plan: &Plan) -> Report {
    let source = std::fs::read(&campaign.source).unwrap_or_default();
    let mut both = campaign.text.as_bytes().to_vec();
    both.extend_from_slice(&source);
    let variants = preps
        .iter()
        .map(|p| {
            let v = campaign.variant(&p.variant);
            let expect = plan
                .models
                .iter()
                .filter_map(|m| {
                    v.and_then(|v| v.expect_for(m.name()))
                        .map(|e| (m.name().to_string(), format!("{e:?}").to_lowercase()))
                })
                .collect();
            VariantInfo {
                name: p.variant.clone(),
                defines: v.map(|v| v.defines.clone()).unwrap_or_default(),
                expect,
                ptx_sha256: p.ptx_sha256.clone(),
                ptx: p.ptx.clone(),
            }
        })
        .collect();
    Report {
        format: FORMAT,
        tool: format!("fencehound {}", env!("CARGO_PKG_VERSION")),
        campaign: CampaignInfo {
            name: campaign.name.clone(),
            path: campaign.path.display().to_string(),
            sha256: crate::execution::sha256_hex(&both),
            text: campaign.text.clone(),
        },
        master_seed: plan.master_seed,
        scheduler: plan.scheduler_name.clone(),
        models: plan.models.iter().map(|m| m.name().to_string()).collect(),
        p: plan.ps.clone(),
        runs: plan.runs,
        variants,
        failures: Vec::new(),
        summary: Vec::new(),
        stats: Default::default(),
        executions_planned: plan.total(),
        executions_done: 0,
        interrupted: false,
        wall_seconds: 0.0,
        races: Vec::new(),
        oracle_errors: Vec::new(),
        backend: "vgpu".into(),
        device: crate::backend::VGPU_DEVICE.into(),
    }
}

/// Runs the plan on the vgpu with the native write buffers. `preps[i]` is the prepared
/// `plan.variants[i]`.
pub fn run(
    campaign: &Campaign,
    preps: Vec<Arc<Prepared>>,
    plan: &Plan,
    report_path: Option<PathBuf>,
    cancel: Arc<AtomicBool>,
    on_event: impl FnMut(&Event),
) -> std::io::Result<Report> {
    let backend: Arc<dyn Backend> = Arc::new(crate::backend::Vgpu);
    run_with_backend(
        campaign,
        preps,
        plan,
        backend,
        report_path,
        cancel,
        on_event,
    )
}

/// [`run`] on the given backend (see [`crate::backend`]).
pub fn run_with_backend(
    campaign: &Campaign,
    preps: Vec<Arc<Prepared>>,
    plan: &Plan,
    backend: Arc<dyn Backend>,
    report_path: Option<PathBuf>,
    cancel: Arc<AtomicBool>,
    mut on_event: impl FnMut(&Event),
) -> std::io::Result<Report> {
    let start = Instant::now();
    let mut report = new_report(campaign, &preps, plan);
    report.backend = backend.name().to_string();
    report.device = backend.device();
    let jobs = plan.jobs.max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(jobs)
        .enable_all()
        .build()?;
    let total = plan.total();
    let plan2 = plan.clone();
    let result = rt.block_on(async {
        let sem = Arc::new(tokio::sync::Semaphore::new(jobs));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Job, crate::execution::ExecResult)>();
        let cancel_d = cancel.clone();
        let preps_d = preps.clone();
        let backend_d = backend.clone();
        tokio::spawn(async move {
            for id in 0..total {
                if cancel_d.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(permit) = sem.clone().acquire_owned().await else { break };
                if cancel_d.load(Ordering::Relaxed) {
                    break;
                }
                let job = plan2.job(id);
                let prep = preps_d[job.variant].clone();
                let tx = tx.clone();
                let cancel_e = cancel_d.clone();
                let scheduler = plan2.scheduler;
                let race = plan2.race;
                let backend = backend_d.clone();
                tokio::task::spawn_blocking(move || {
                    let spec = ExecSpec { id: job.id, model: job.model, p: job.p, seed: job.seed, scheduler, trace: false, filters: Default::default(), race };
                    let r = backend.execute(&prep, &spec, Some(&cancel_e));
                    drop(permit);
                    let _ = tx.send((job, r));
                });
            }
        });
        let cancel_s = cancel.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let mut term = match signal(SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(_) => return,
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
            cancel_s.store(true, Ordering::Relaxed);
        });
        let mut tick = tokio::time::interval(Duration::from_secs(2));
        tick.tick().await;
        let mut failures = 0u64;
        loop {
            tokio::select! {
                msg = rx.recv() => {
                    let Some((job, r)) = msg else { break };
                    let record = ExecRecord {
                        id: job.id,
                        variant: plan.variants[job.variant].clone(),
                        model: job.model.name().to_string(),
                        p: job.p,
                        seed: job.seed,
                        scheduler: plan.scheduler_name.clone(),
                        verdict: r.verdict.clone(),
                        output_hash: r.output_hash.clone(),
                        lane_instructions: r.lane_instructions,
                        wall_ms: r.wall_ms,
                        printf: r.printf.chars().take(4096).collect(),
                        backend: report.backend.clone(),
                        device: report.device.clone(),
                    };
                    if record.verdict.is_failure() {
                        failures += 1;
                        if plan.stop_at_first {
                            cancel.store(true, Ordering::Relaxed);
                        }
                    }
                    if let Verdict::OracleError { .. } = record.verdict {
                        // Every further execution would need the same broken judge.
                        cancel.store(true, Ordering::Relaxed);
                    }
                    let stats: BufferStats = r.stats.clone();
                    let interrupted = matches!(record.verdict, Verdict::Interrupted | Verdict::OracleError { .. });
                    report.add_races(&r.races);
                    report.add(record.clone(), &stats);
                    if !interrupted {
                        on_event(&Event { record: &record, done: report.executions_done, total, failures });
                    }
                }
                _ = tick.tick() => {
                    if let Some(p) = &report_path {
                        report.wall_seconds = start.elapsed().as_secs_f64();
                        report.interrupted = true;
                        let _ = report.write(p);
                        report.interrupted = false;
                    }
                }
            }
        }
        Ok::<(), std::io::Error>(())
    });
    rt.shutdown_background();
    result?;
    // Incomplete runs: `--stop-at-first` stops on purpose once something failed; anything
    // else that ends early was cancelled (Ctrl-C, SIGTERM).
    let incomplete = report.executions_done < total;
    report.interrupted = incomplete
        && if plan.stop_at_first {
            !report.failed()
        } else {
            cancel.load(Ordering::Relaxed)
        };
    report.failures.sort_by_key(|f| f.id);
    report.oracle_errors.sort_by_key(|f| f.id);
    report.summary.sort_by(|a, b| {
        (
            plan.variants.iter().position(|v| *v == a.variant),
            &a.model,
            a.p.to_bits(),
        )
            .cmp(&(
                plan.variants.iter().position(|v| *v == b.variant),
                &b.model,
                b.p.to_bits(),
            ))
    });
    for c in report.summary.iter_mut() {
        let exp = report
            .variants
            .iter()
            .find(|v| v.name == c.variant)
            .and_then(|v| v.expect.get(&c.model).cloned());
        c.expect = exp;
    }
    report.wall_seconds = start.elapsed().as_secs_f64();
    if let Some(p) = &report_path {
        report.write(p)?;
    }
    Ok(report)
}
