//! Running a campaign: every (variant, model, `p_w`, run) is one execution with its own id
//! and seed. Executions run in parallel — tokio orchestrates, each execution runs on a
//! blocking worker, as many at once as `jobs` — and are collected in completion order;
//! the report only depends on the *set* of finished executions (see `report.rs`), so it
//! is the same for any `jobs`, any split into shards, and any number of interruptions
//! and resumptions.
//!
//! Ctrl-C or SIGTERM stops dispatching, cancels running executions (they end within a
//! few thousand instructions) and leaves a valid report marked `interrupted`; a partial
//! report is also written every two seconds, so even a SIGKILL leaves one behind. Such a
//! report records exactly which executions it counts (`done`): `RunOptions::resume`
//! continues with the others.

use crate::backend::Backend;
use crate::campaign::Campaign;
use crate::execution::Prepared;
use crate::report::{
    CampaignInfo, ExecRecord, Report, Shard, SourceHash, VariantInfo, DEFAULT_KEEP_FAILURES,
    DEFAULT_KEEP_SIGNATURES,
};
use crate::seeds::exec_seed;
use crate::types::{sha256_hex, ExecResult, ExecSpec};
use crate::verdict::Verdict;
use fencehound_handlers::Model;
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Milliseconds a worker collects passing executions' results before it sends them to
/// the main loop (progress lags by at most this).
const BATCH_MS: u128 = 20;

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

/// What a run does besides its plan.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Run only this shard's executions.
    pub shard: Option<Shard>,
    /// Failures kept in full per cell.
    pub keep_failures: u32,
    /// Distinct failure signatures kept per cell.
    pub keep_signatures: u32,
    /// Where the report is written (at the end and every `checkpoint`).
    pub report_path: Option<PathBuf>,
    /// Continue this report: its done executions are not run again. Its plan, shard and
    /// `keep_failures` must be the ones given (the caller checks the inputs' hashes).
    pub resume: Option<Report>,
    pub checkpoint: Duration,
    /// Where executions run (default: the vgpu with native write buffers).
    pub backend: BackendHandle,
}

/// A backend shared by a run's executions (see [`crate::backend`]).
#[derive(Clone)]
pub struct BackendHandle(pub Arc<dyn Backend>);

impl std::fmt::Debug for BackendHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on {}", self.0.name(), self.0.device())
    }
}

impl Default for BackendHandle {
    fn default() -> Self {
        BackendHandle(Arc::new(crate::backend::Vgpu))
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            shard: None,
            keep_failures: DEFAULT_KEEP_FAILURES,
            keep_signatures: DEFAULT_KEEP_SIGNATURES,
            report_path: None,
            resume: None,
            checkpoint: Duration::from_secs(2),
            backend: BackendHandle::default(),
        }
    }
}

/// Progress as executions finish.
pub struct Event<'a> {
    pub record: &'a ExecRecord,
    /// Done so far in this report (resumed executions included).
    pub done: u64,
    /// Planned in this report (this shard's share).
    pub total: u64,
    pub failures: u64,
}

/// Files besides the campaign file whose contents decide the results: the kernel
/// source, buffers initialised from files, expected values read from files.
pub fn source_files(campaign: &Campaign) -> Vec<PathBuf> {
    let mut v = vec![campaign.source.clone()];
    for b in &campaign.buffers {
        if let fencehound_argspec::Init::File(p) = &b.init {
            v.push(p.clone());
        }
    }
    for o in &campaign.file.oracle {
        if let fencehound_oracle::OracleSpec::Expect { file: Some(f), .. } = o {
            v.push(campaign.dir.join(f));
        }
    }
    v.dedup();
    v
}

/// The campaign's identity: its text and the hashes of everything it reads.
pub fn campaign_info(campaign: &Campaign) -> CampaignInfo {
    let source = std::fs::read(&campaign.source).unwrap_or_default();
    let mut both = campaign.text.as_bytes().to_vec();
    both.extend_from_slice(&source);
    let sources = source_files(campaign)
        .iter()
        .map(|p| SourceHash {
            // Absolute, so that SARIF and HTML made elsewhere still find the file.
            path: std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            sha256: std::fs::read(p)
                .map(|b| sha256_hex(&b))
                .unwrap_or_else(|e| format!("unreadable: {e}")),
        })
        .collect();
    CampaignInfo {
        name: campaign.name.clone(),
        path: campaign.path.display().to_string(),
        abs_path: std::fs::canonicalize(&campaign.path)
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        sha256: sha256_hex(&both),
        campaign_sha256: sha256_hex(campaign.text.as_bytes()),
        sources,
        text: campaign.text.clone(),
    }
}

/// What changed in the campaign or its sources since `recorded` was taken; empty when
/// nothing did.
pub fn changes_since(recorded: &CampaignInfo, campaign: &Campaign) -> Vec<String> {
    let now = campaign_info(campaign);
    let mut out = Vec::new();
    if now.campaign_sha256 != recorded.campaign_sha256 {
        out.push(format!(
            "the campaign file {} (sha256 {} then, {} now)",
            campaign.path.display(),
            short(&recorded.campaign_sha256),
            short(&now.campaign_sha256)
        ));
    }
    for s in &now.sources {
        let name = |p: &str| {
            Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.to_string())
        };
        match recorded
            .sources
            .iter()
            .find(|r| r.path == s.path || name(&r.path) == name(&s.path))
        {
            Some(r) if r.sha256 == s.sha256 => {}
            Some(r) => out.push(format!(
                "{} (sha256 {} then, {} now)",
                s.path,
                short(&r.sha256),
                short(&s.sha256)
            )),
            None => out.push(format!("{} (not read by the recorded run)", s.path)),
        }
    }
    if out.is_empty() && now.sha256 != recorded.sha256 {
        out.push(format!(
            "the campaign or its source (combined sha256 {} then, {} now)",
            short(&recorded.sha256),
            short(&now.sha256)
        ));
    }
    out
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

pub fn new_report(campaign: &Campaign, preps: &[Arc<Prepared>], plan: &Plan) -> Report {
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
    let mut r = Report::new(
        campaign_info(campaign),
        variants,
        plan.master_seed,
        plan.scheduler_name.clone(),
        plan.models.iter().map(|m| m.name().to_string()).collect(),
        plan.ps.clone(),
        plan.runs,
        plan.total(),
    );
    r.race = plan.race;
    r.stop_at_first = plan.stop_at_first;
    r
}

/// Runs the plan. `preps[i]` is the prepared `plan.variants[i]`.
pub fn run(
    campaign: &Campaign,
    preps: Vec<Arc<Prepared>>,
    plan: &Plan,
    report_path: Option<PathBuf>,
    cancel: Arc<AtomicBool>,
    on_event: impl FnMut(&Event),
) -> std::io::Result<Report> {
    let opts = RunOptions {
        report_path,
        ..RunOptions::default()
    };
    run_with(campaign, preps, plan, opts, cancel, on_event)
}

/// Runs the plan with options (a shard, a report to resume, how many failures to keep).
pub fn run_with(
    campaign: &Campaign,
    preps: Vec<Arc<Prepared>>,
    plan: &Plan,
    opts: RunOptions,
    cancel: Arc<AtomicBool>,
    mut on_event: impl FnMut(&Event),
) -> std::io::Result<Report> {
    let start = Instant::now();
    let shard = opts.shard.unwrap_or(Shard::WHOLE);
    let total = plan.total();
    let planned = shard.len(total);
    let mut report = match opts.resume {
        Some(r) => {
            if r.backend != opts.backend.0.name() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "the report to resume ran on the {} backend, not {}",
                        r.backend,
                        opts.backend.0.name()
                    ),
                ));
            }
            if r.shard_or_whole() != shard
                || r.plan_total() != total
                || r.keep_failures != opts.keep_failures
                || r.keep_signatures != opts.keep_signatures
            {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the report to resume was written for another plan, shard, --keep-failures or --keep-signatures",
                ));
            }
            r
        }
        None => {
            let mut r = new_report(campaign, &preps, plan);
            r.backend = opts.backend.0.name().to_string();
            r.device = opts.backend.0.device();
            r.shard = opts.shard;
            r.keep_failures = opts.keep_failures;
            r.keep_signatures = opts.keep_signatures;
            r.executions_planned = planned;
            r
        }
    };
    // A resumed run tries the executions the oracle could not judge again.
    report.oracle_errors.clear();
    report.interrupted = false;
    let wall_before = report.wall_seconds;
    let report_path = opts.report_path;
    let done_before = report.done.clone();
    let jobs = plan.jobs.max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(jobs)
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<(Job, ExecResult)>>();
        // In id order, skipping what a resumed report already counts: `jobs` workers, each
        // a blocking thread for the whole run, take the next position in turn. (A task
        // per execution, started when a semaphore let it, cost three thread hand-offs per
        // execution: about a sixth of a 1-job run of a small campaign, in the kernel's
        // scheduler, `perf`.)
        let done_before = Arc::new(done_before);
        let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let plan2 = Arc::new(plan.clone());
        for _ in 0..jobs {
            let (done_before, next, plan2, tx) = (done_before.clone(), next.clone(), plan2.clone(), tx.clone());
            let cancel_e = cancel.clone();
            let preps_d = preps.clone();
            let backend = opts.backend.0.clone();
            // Results go to the main loop in batches (a wake-up of the main thread per
            // execution was most of the remaining hand-off cost): sent when `BATCH_MS`
            // have passed since the last send, at once when an execution did not pass
            // (so `--stop-at-first` and an oracle error stop the others as soon as
            // before), and at the end.
            tokio::task::spawn_blocking(move || {
                let mut batch = Vec::new();
                let mut sent = Instant::now();
                loop {
                    if cancel_e.load(Ordering::Relaxed) {
                        break;
                    }
                    let pos = next.fetch_add(1, Ordering::Relaxed);
                    if pos >= planned {
                        break;
                    }
                    if done_before.contains(pos) {
                        continue;
                    }
                    let job = plan2.job(shard.id(pos));
                    let prep = &preps_d[job.variant];
                    let spec = ExecSpec { id: job.id, model: job.model, p: job.p, seed: job.seed, scheduler: plan2.scheduler, trace: false, filters: Default::default(), race: plan2.race };
                    let r = backend.execute(prep, &spec, Some(&cancel_e));
                    let now = !matches!(r.verdict, Verdict::Pass)
                        || sent.elapsed().as_millis() >= BATCH_MS;
                    batch.push((job, r));
                    if now {
                        if tx.send(std::mem::take(&mut batch)).is_err() {
                            return;
                        }
                        sent = Instant::now();
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
        }
        drop(tx);
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
        let mut tick = tokio::time::interval(opts.checkpoint);
        tick.tick().await;
        loop {
            tokio::select! {
                msg = rx.recv() => {
                    let Some(batch) = msg else { break };
                    for (job, r) in batch {
                        let record = ExecRecord {
                            id: job.id,
                            variant: plan.variants[job.variant].clone(),
                            model: job.model.name().to_string(),
                            p: job.p,
                            seed: job.seed,
                            scheduler: plan.scheduler_name.clone(),
                            verdict: r.verdict,
                            output_hash: r.output_hash,
                            lane_instructions: r.lane_instructions,
                            wall_ms: r.wall_ms,
                            printf: r.printf.chars().take(4096).collect(),
                            backend: report.backend.clone(),
                            device: report.device.clone(),
                        };
                        match record.verdict {
                            Verdict::Interrupted => continue,
                            // Every further execution would need the same broken judge.
                            Verdict::OracleError { .. } => {
                                cancel.store(true, Ordering::Relaxed);
                                report.add(record, job.run, &r.stats);
                                continue;
                            }
                            _ => {}
                        }
                        if record.verdict.is_failure() && plan.stop_at_first {
                            cancel.store(true, Ordering::Relaxed);
                        }
                        report.add_races(&record.variant, job.id, &r.races);
                        report.add(record.clone(), job.run, &r.stats);
                        on_event(&Event { record: &record, done: report.executions_done, total: planned, failures: report.failure_count() });
                    }
                }
                _ = tick.tick() => {
                    if let Some(p) = &report_path {
                        report.wall_seconds = wall_before + start.elapsed().as_secs_f64();
                        report.interrupted = true;
                        report.finish();
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
    // else that ends early was cancelled (Ctrl-C, SIGTERM, an oracle error).
    report.interrupted = !report.complete()
        && if plan.stop_at_first {
            !report.failed()
        } else {
            cancel.load(Ordering::Relaxed)
        };
    report.finish();
    report.wall_seconds = wall_before + start.elapsed().as_secs_f64();
    if let Some(p) = &report_path {
        report.write(p)?;
    }
    Ok(report)
}
