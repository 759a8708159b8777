//! `fencehound fuzz`, `fencehound run` and `fencehound replay`.

use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use fencehound_fuzzer::backend::gpu;
use fencehound_fuzzer::lock::{LockError, ReportLock};
use fencehound_fuzzer::runner::BackendHandle;
use fencehound_fuzzer::{runner, Campaign, ExecSpec, Plan, Report, RunOptions, Shard, Verdict};
use fencehound_handlers::{Level, Model, TraceEvent};
use fencehound_vgpu::{Location, SchedulerKind, SiteInfo};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Campaign files (TOML).
    #[arg(required_unless_present = "resume")]
    pub campaigns: Vec<PathBuf>,
    /// Continue the run whose report this is, exactly where it ended (same seeds; the
    /// campaign and its sources must be unchanged). Plan options come from the report.
    #[arg(long, value_name = "REPORT", conflicts_with_all = [
        "campaigns", "variants", "models", "p", "runs", "seed", "scheduler", "stop_at_first",
        "report", "out_dir", "race", "shard", "keep_failures", "keep_signatures",
    ])]
    pub resume: Option<PathBuf>,
    /// Run one deterministic share of the executions: those whose id ≡ I (mod N). Seeds
    /// are those of the unsharded run; `fencehound merge` combines the N reports.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Failures stored in full per variant × model × p_w (the lowest ids); the others
    /// are counted and grouped into signatures, and replay from their id.
    #[arg(long, value_name = "K", default_value_t = fencehound_fuzzer::report::DEFAULT_KEEP_FAILURES)]
    pub keep_failures: u32,
    /// Distinct failure signatures kept per variant × model × p_w; a cell with more
    /// keeps a deterministic sample (the same whatever the order, shards or resumption)
    /// and counts the rest.
    #[arg(long, value_name = "M", default_value_t = fencehound_fuzzer::report::DEFAULT_KEEP_SIGNATURES)]
    pub keep_signatures: u32,
    /// Seconds between rewrites of the partial report while running (what a SIGKILL
    /// leaves behind to resume from).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = parse_checkpoint)]
    pub checkpoint_secs: f64,
    /// Only these variants (repeatable; default: all).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// Memory models (repeatable or comma-separated: bugaroo, scoped, weak, sc).
    #[arg(long = "model", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Buffering probabilities, comma-separated (e.g. 0.25,0.5,1).
    #[arg(long, value_delimiter = ',')]
    pub p: Vec<f64>,
    /// Executions per variant × model × p.
    #[arg(long)]
    pub runs: Option<u32>,
    /// Parallel executions (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Master seed (default: the campaign's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Scheduler: random, pct[:depth], rr[:quantum].
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Stop at the first failing execution.
    #[arg(long)]
    pub stop_at_first: bool,
    /// Report path (one campaign only; default: OUT_DIR/NAME.report.json, or
    /// NAME.2.report.json, ... while another live run writes that one).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Where reports go (default: `fencehound-out/` next to each campaign file).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Also run the shadow-memory race check and report races (both accesses, CUDA lines).
    #[arg(long)]
    pub race: bool,
    /// Exit 0 when every variant behaves as its `expect` says, 1 otherwise (corpus checks).
    #[arg(long)]
    pub check_expect: bool,
    /// Print a JSON summary on standard output instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write failing variants and races as SARIF 2.1.0 (for code scanning).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write JUnit XML: one test case per variant × model.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// No progress bar and no messages on standard error (also the case when standard
    /// error is not a terminal, for the bar).
    #[arg(long, short)]
    pub quiet: bool,
    /// Where executions run: vgpu (the virtual GPU), gpu (an NVIDIA GPU through the CUDA
    /// driver, running the instrumented PTX in watchdog'd worker processes), auto (gpu
    /// when a driver and a device are present, else vgpu).
    #[arg(long, default_value = "vgpu")]
    pub backend: String,
    /// With the vgpu: run the instrumented PTX (`fencehound instrument`, what a GPU runs)
    /// on plain memory instead of buffering natively.
    #[arg(long)]
    pub instrumented: bool,
    /// With --instrumented or the gpu backend: cap each kernel at its original register
    /// count + N, or `none` (`fencehound instrument --max-extra-registers`; ptxas measures
    /// the original for sm_80). Default: 16 on the gpu backend when ptxas is found, none
    /// on the vgpu (which has no registers to save: the capped kernels compute exactly
    /// what the uncapped ones do). On a GPU the cap trades registers for spills inside
    /// the runtime's slow paths.
    #[arg(long, value_name = "N|none", value_parser = super::instrument::parse_extra_registers)]
    pub max_extra_registers: Option<super::instrument::ExtraRegisters>,
}

/// The backend `--backend`/`--instrumented` ask for, and the models it can run (models
/// without a device-side implementation are dropped when they only came from the
/// campaign file, refused when asked for).
fn choose_backend(a: &FuzzArgs, models: Vec<Model>) -> Result<(BackendHandle, Vec<Model>)> {
    use fencehound_fuzzer::backend::{BackendChoice, Vgpu};
    let choice = BackendChoice::parse(&a.backend)
        .with_context(|| format!("unknown backend `{}` (vgpu, gpu, auto)", a.backend))?;
    let gpu_device = match choice {
        BackendChoice::Vgpu => None,
        BackendChoice::Gpu => Some(gpu::probe().map_err(|why| {
            anyhow::anyhow!(
                "--backend gpu: {why}. The virtual GPU runs every campaign without one: --backend vgpu (the default)"
            )
        })?),
        BackendChoice::Auto => match gpu::probe() {
            Ok(d) => Some(d),
            Err(why) => {
                if !a.quiet && !a.json {
                    eprintln!("--backend auto: {why}; running on the virtual GPU");
                }
                None
            }
        },
    };
    if !a.instrumented && gpu_device.is_none() {
        if matches!(
            a.max_extra_registers,
            Some(super::instrument::ExtraRegisters::Cap(_))
        ) {
            bail!("--max-extra-registers is for the instrumented kernels: add --instrumented (or --backend gpu)");
        }
        return Ok((BackendHandle(Arc::new(Vgpu)), models));
    }
    if a.race {
        bail!("--race needs the native vgpu backend (no --instrumented, no GPU)");
    }
    let mut kept = Vec::new();
    for m in models {
        if fencehound_handlers::rewrite::layout::has_device_model(m) {
            kept.push(m);
        } else if a.models.is_empty() {
            if !a.quiet && !a.json {
                eprintln!(
                    "note: the `{}` model has no device-side implementation; it runs on the vgpu only and is skipped here",
                    m.name()
                );
            }
        } else {
            bail!(
                "the `{}` model has no device-side implementation (its loads read older values, which needs per-location store histories on the device): it runs only with the native vgpu backend",
                m.name()
            );
        }
    }
    if kept.is_empty() {
        bail!("no model left to run on the instrumented backend");
    }
    Ok((
        backend_named(
            if gpu_device.is_some() {
                "gpu"
            } else {
                "vgpu-instrumented"
            },
            gpu_device,
            a.max_extra_registers,
            !a.quiet && !a.json,
        )?,
        kept,
    ))
}

/// The backend called `name` (`vgpu`, `vgpu-instrumented`, `gpu`); `gpu_device` is the
/// probed GPU for `gpu`.
fn backend_named(
    name: &str,
    gpu_device: Option<String>,
    max_extra_registers: Option<super::instrument::ExtraRegisters>,
    warn: bool,
) -> Result<BackendHandle> {
    use super::instrument::{resolve_extra_registers, ExtraRegisters};
    use fencehound_fuzzer::backend::{instrumented::Instrumented, Vgpu};
    Ok(BackendHandle(match name {
        "vgpu" => Arc::new(Vgpu),
        "vgpu-instrumented" => Arc::new(match max_extra_registers {
            Some(ExtraRegisters::Cap(n)) => Instrumented::with_register_caps(n),
            _ => Instrumented::new(),
        }),
        "gpu" => {
            let device = match gpu_device {
                Some(d) => d,
                None => gpu::probe().map_err(|why| anyhow::anyhow!("the gpu backend: {why}"))?,
            };
            let exe = std::env::current_exe()
                .context("cannot find the fencehound executable to start GPU workers")?;
            Arc::new(
                gpu::Gpu::new(vec![exe.into(), "gpu-worker".into()], device)
                    .with_register_caps(resolve_extra_registers(max_extra_registers, warn)),
            )
        }
        other => bail!("unknown backend `{other}`"),
    }))
}

fn parse_checkpoint(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.05..=86_400.0).contains(&x) => Ok(x),
        Ok(_) => Err("give between 0.05 and 86400 seconds".into()),
        Err(_) => Err(format!("`{s}` is not a number of seconds")),
    }
}

fn parse_models(v: &[String], default: &[String]) -> Result<Vec<Model>> {
    let names: Vec<String> = if v.is_empty() {
        default.to_vec()
    } else {
        v.to_vec()
    };
    names
        .iter()
        .map(|m| {
            Model::parse(m)
                .with_context(|| format!("unknown model `{m}` (bugaroo, scoped, weak, sc)"))
        })
        .collect()
}

pub fn parse_sched(s: &str) -> Result<SchedulerKind> {
    SchedulerKind::parse(s)
        .with_context(|| format!("unknown scheduler `{s}` (random, pct[:depth], rr[:quantum])"))
}

/// The default output directory of a campaign: `fencehound-out/` next to its file, so
/// a nightly job started from anywhere writes to the same place.
pub fn default_out_dir(campaign: &Path) -> PathBuf {
    match campaign.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.join("fencehound-out"),
        None => PathBuf::from("fencehound-out"),
    }
}

/// Chooses the report path and locks it for this run. An explicit `--report` held by a
/// live run is an error; the default name steps aside to `NAME.2.report.json`, ... so
/// that two runs of one campaign at once each keep their own report.
fn claim_report(
    explicit: Option<&Path>,
    out_dir: Option<&Path>,
    c: &Campaign,
    shard: Option<Shard>,
) -> Result<(PathBuf, ReportLock)> {
    let mkdir = |p: &Path| -> Result<()> {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        Ok(())
    };
    if let Some(p) = explicit {
        mkdir(p)?;
        return match ReportLock::try_acquire(p) {
            Ok(l) => Ok((p.to_path_buf(), l)),
            Err(e @ LockError::Held { .. }) => {
                bail!("{e}; give another --report, or wait for it to finish")
            }
            Err(e) => Err(e.into()),
        };
    }
    let dir = out_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_out_dir(&c.path));
    let stem = match shard {
        Some(s) => format!("{}.shard-{}-of-{}", c.name, s.index, s.count),
        None => c.name.clone(),
    };
    for k in 1..=1000u32 {
        let name = if k == 1 {
            format!("{stem}.report.json")
        } else {
            format!("{stem}.{k}.report.json")
        };
        let p = dir.join(name);
        mkdir(&p)?;
        match ReportLock::try_acquire(&p) {
            Ok(l) => return Ok((p, l)),
            Err(LockError::Held { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    bail!(
        "{}: 1000 runs of {} are writing reports there at once",
        dir.display(),
        c.name
    )
}

/// The exit code of a run interrupted before it found a failure.
pub const INTERRUPTED: u8 = 130;

pub fn jobs(j: Option<usize>) -> usize {
    j.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
    .max(1)
}

/// Loads a campaign and prepares the chosen variants (compile + reference run).
pub fn load(
    path: &Path,
    variants: &[String],
) -> Result<(Arc<Campaign>, Vec<Arc<fencehound_fuzzer::Prepared>>)> {
    let (c, preps) = load_unjudged(path, variants)?;
    c.require_oracle()?;
    Ok((c, preps))
}

/// [`load`] for commands that do not judge outputs (the race check): no oracle needed.
pub fn load_unjudged(
    path: &Path,
    variants: &[String],
) -> Result<(Arc<Campaign>, Vec<Arc<fencehound_fuzzer::Prepared>>)> {
    let c = Arc::new(Campaign::load(path)?);
    let names: Vec<String> = if variants.is_empty() {
        c.variant_names().iter().map(|s| s.to_string()).collect()
    } else {
        variants.to_vec()
    };
    let mut preps = Vec::new();
    for v in &names {
        preps.push(Arc::new(fencehound_fuzzer::prepare(c.clone(), v)?));
    }
    Ok((c, preps))
}

/// One campaign run, ready to start.
struct CampaignRun {
    campaign: Arc<Campaign>,
    path: PathBuf,
    preps: Vec<Arc<fencehound_fuzzer::Prepared>>,
    plan: Plan,
    opts: RunOptions,
    report_path: PathBuf,
    lock: ReportLock,
}

/// A fresh run of one campaign.
fn fresh(a: &FuzzArgs, path: &Path) -> Result<CampaignRun> {
    let (c, preps) = load(path, &a.variants)?;
    let (backend, models) = choose_backend(a, parse_models(&a.models, &c.file.fuzz.models)?)?;
    if backend.0.name() != "vgpu" {
        if let Some(what) = preps.iter().find_map(|p| p.vgpu_only()) {
            bail!(
                "{}: {what} run only on the vgpu backend (no --instrumented, no GPU)",
                path.display()
            );
        }
    }
    let sched_name = a
        .scheduler
        .clone()
        .unwrap_or_else(|| c.file.fuzz.scheduler.clone());
    let plan = Plan {
        variants: preps.iter().map(|p| p.variant.clone()).collect(),
        models,
        ps: if a.p.is_empty() {
            c.file.fuzz.p.clone()
        } else {
            a.p.clone()
        },
        runs: a.runs.unwrap_or(c.file.fuzz.runs),
        master_seed: a.seed.unwrap_or(c.file.seed),
        scheduler: parse_sched(&sched_name)?,
        scheduler_name: sched_name,
        jobs: jobs(a.jobs),
        stop_at_first: a.stop_at_first,
        race: a.race,
    };
    let (report_path, lock) = claim_report(a.report.as_deref(), a.out_dir.as_deref(), &c, a.shard)?;
    Ok(CampaignRun {
        path: path.to_path_buf(),
        preps,
        plan,
        opts: RunOptions {
            shard: a.shard,
            keep_failures: a.keep_failures,
            keep_signatures: a.keep_signatures,
            report_path: Some(report_path.clone()),
            checkpoint: std::time::Duration::from_secs_f64(a.checkpoint_secs),
            backend,
            ..RunOptions::default()
        },
        report_path,
        lock,
        campaign: c,
    })
}

/// `--resume REPORT`: the same plan, shard and PTX as the report, on the campaign it
/// names, provided nothing the results depend on has changed.
fn resumed(a: &FuzzArgs, report_path: &Path) -> Result<CampaignRun> {
    let lock = match ReportLock::try_acquire(report_path) {
        Ok(l) => l,
        Err(e @ LockError::Held { .. }) => {
            bail!("cannot resume: {e}; wait for it to finish (or stop it) and resume then")
        }
        Err(e) => return Err(e.into()),
    };
    let r = Report::read(report_path).map_err(anyhow::Error::msg)?;
    let here = fencehound_fuzzer::report::tool_version();
    if r.tool != here {
        bail!(
            "cannot resume {}: it was written by {}, this is {here}; executions could differ, start a new run",
            report_path.display(),
            r.tool
        );
    }
    // The same version is not the same build: a seed names another execution after a
    // change to a model or the scheduler, and the report would mix the two builds' runs.
    let build = fencehound_fuzzer::report::build_identity();
    match (&r.build, &build) {
        (Some(theirs), Some(ours)) if theirs != ours => bail!(
            "cannot resume {}: it was written by another build of fencehound ({theirs}; this is {ours}); its seeds could name other executions here, start a new run",
            report_path.display()
        ),
        (None, _) => bail!(
            "cannot resume {}: it does not record which build of fencehound wrote it (an older version, or merged shards of different builds), so its seeds could name other executions here; start a new run",
            report_path.display()
        ),
        _ => {}
    }
    let path = [&r.campaign.abs_path, &r.campaign.path]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| !p.as_os_str().is_empty() && p.exists())
        .with_context(|| {
            format!(
                "cannot resume {}: its campaign file {} is gone",
                report_path.display(),
                r.campaign.path
            )
        })?;
    let c = Arc::new(Campaign::load(&path)?);
    c.require_oracle()?;
    let changes = runner::changes_since(&r.campaign, &c);
    if !changes.is_empty() {
        bail!(
            "cannot resume {}: since it was written, these changed:\n  {}\nits executions would not be those of the new files; start a new run (without --resume)",
            report_path.display(),
            changes.join("\n  ")
        );
    }
    let mut preps = Vec::new();
    for v in &r.variants {
        // The recorded PTX, so that the resumed executions run exactly the same code
        // (a newer NVRTC could compile the unchanged source differently).
        let p = fencehound_fuzzer::prepare_with_ptx(c.clone(), &v.name, v.ptx.clone())?;
        if p.ptx_sha256 != v.ptx_sha256 {
            bail!(
                "{}: variant {}: the recorded PTX does not match its hash",
                report_path.display(),
                v.name
            );
        }
        preps.push(Arc::new(p));
    }
    let models: Vec<Model> = r
        .models
        .iter()
        .map(|m| {
            Model::parse(m)
                .with_context(|| format!("{}: unknown model `{m}`", report_path.display()))
        })
        .collect::<Result<_>>()?;
    let plan = Plan {
        variants: r.variants.iter().map(|v| v.name.clone()).collect(),
        models,
        ps: r.p.clone(),
        runs: r.runs,
        master_seed: r.master_seed,
        scheduler: parse_sched(&r.scheduler)?,
        scheduler_name: r.scheduler.clone(),
        jobs: jobs(a.jobs),
        stop_at_first: r.stop_at_first,
        race: r.race,
    };
    if plan.total() != r.plan_total() {
        bail!("{}: inconsistent plan", report_path.display());
    }
    if !a.quiet && r.complete() {
        eprintln!(
            "note: {} is already complete ({} executions); nothing to resume",
            report_path.display(),
            r.executions_done
        );
    }
    Ok(CampaignRun {
        path,
        preps,
        plan,
        opts: RunOptions {
            shard: r.shard,
            keep_failures: r.keep_failures,
            keep_signatures: r.keep_signatures,
            report_path: Some(report_path.to_path_buf()),
            backend: backend_named(&r.backend, None, a.max_extra_registers, !a.quiet && !a.json)?,
            resume: Some(r),
            checkpoint: std::time::Duration::from_secs_f64(a.checkpoint_secs),
        },
        report_path: report_path.to_path_buf(),
        lock,
        campaign: c,
    })
}

pub fn fuzz(a: FuzzArgs) -> Result<u8> {
    if a.report.is_some() && a.campaigns.len() > 1 {
        bail!("--report names one file; with several campaigns, reports go to OUT_DIR/NAME.report.json (--out-dir)");
    }
    if a.runs == Some(0) {
        bail!("--runs 0: nothing to run (give at least 1)");
    }
    for p in &a.p {
        if !(0.0..=1.0).contains(p) {
            bail!("--p {p}: probabilities must be in [0, 1]");
        }
    }
    let mut any_failure = false;
    let mut mismatched = false;
    let mut interrupted = false;
    let mut json_out = Vec::new();
    let mut published: Vec<(Report, PathBuf)> = Vec::new();
    let interactive = !a.quiet && !a.json && std::io::stderr().is_terminal();
    let sources: Vec<(PathBuf, bool)> = match &a.resume {
        Some(r) => vec![(r.clone(), true)],
        None => a.campaigns.iter().map(|p| (p.clone(), false)).collect(),
    };
    for (source, resume) in &sources {
        let run = if *resume {
            resumed(&a, source)?
        } else {
            fresh(&a, source)?
        };
        let CampaignRun {
            campaign: c,
            path,
            preps,
            plan,
            opts,
            report_path,
            lock,
        } = run;
        if !a.quiet {
            if let Some(pid) = lock.stale_pid {
                eprintln!(
                    "note: {} was left by a run that is no longer alive (pid {pid}); taking it over",
                    lock.path().display()
                );
            }
        }
        let shard = opts.shard.unwrap_or(fencehound_fuzzer::Shard::WHOLE);
        let planned = shard.len(plan.total());
        let already = opts.resume.as_ref().map_or(0, |r| r.executions_done);
        if !a.json && !a.quiet {
            eprintln!(
                "{} {} ({} variant(s) × {} model(s) × {} p × {} runs = {} executions{}{}, {} jobs, backend {} on {})\nreport: {}",
                if *resume { "resuming" } else { "fuzzing" },
                c.name,
                plan.variants.len(),
                plan.models.len(),
                plan.ps.len(),
                plan.runs,
                plan.total(),
                opts.shard
                    .map(|s| format!("; shard {s}: {planned}"))
                    .unwrap_or_default(),
                if *resume { format!("; {already} done before") } else { String::new() },
                plan.jobs,
                opts.backend.0.name(),
                opts.backend.0.device(),
                report_path.display()
            );
            if plan.models.iter().any(|m| m.blind_at(&plan.ps)) {
                eprintln!(
                    "note: no p_w strictly between 0 and 1: at p_w = 1 every store is buffered and every load that may be stale is, at 0 none, never one access delayed and the next not — bugs that need both pass here (add e.g. --p 0.5)"
                );
            }
        }
        let bar = if interactive {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(planned),
                indicatif::ProgressDrawTarget::stderr(),
            );
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.set_position(already);
            Some(b)
        } else {
            None
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let report = runner::run_with(&c, preps, &plan, opts, cancel, |e| {
            if let Some(b) = &bar {
                b.set_position(e.done);
                b.set_message(format!("{} failing", e.failures));
            }
        })
        .with_context(|| format!("running {}", c.name))?;
        drop(lock);
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if let Some(e) = report.oracle_errors.first() {
            bail!(
                "{}: the oracle could not judge execution {} (variant {}, model {}, p_w={}, seed {}), so the campaign was stopped: {}\n(partial report: {})",
                path.display(),
                e.id,
                e.variant,
                e.model,
                e.p,
                e.seed,
                match &e.verdict {
                    Verdict::OracleError { message } => message.as_str(),
                    _ => "",
                },
                report_path.display()
            );
        }
        any_failure |= report.failed() || !report.races.is_empty();
        interrupted |= report.interrupted;
        let mism = report.expectation_mismatches();
        mismatched |= !mism.is_empty();
        if a.json {
            json_out.push(serde_json::json!({
                "campaign": c.name, "report": report_path, "summary": report.summary,
                "shard": report.shard.map(|s| s.to_string()),
                "failures": report.failures.iter().take(20).map(|f| serde_json::json!({
                    "id": f.id, "variant": f.variant, "model": f.model, "p": f.p, "seed": f.seed,
                    "verdict": f.verdict.name(), "message": f.verdict.summary(),
                })).collect::<Vec<_>>(),
                "failures_total": report.failure_count(),
                "signatures": report.signatures.len(),
                "expectation_mismatches": mism, "interrupted": report.interrupted,
                "races": report.races,
                "executions": report.executions_done, "executions_planned": report.executions_planned,
                "wall_seconds": report.wall_seconds,
            }));
        } else {
            print_report(&report, &report_path, &mism);
        }
        if a.sarif.is_some() || a.junit.is_some() {
            published.push((report, report_path));
        }
    }
    publish(&published, a.sarif.as_deref(), a.junit.as_deref())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json_out)?);
    }
    // A run stopped by Ctrl-C or SIGTERM before it found anything has not shown that there
    // is nothing to find: exit 130 (128 + SIGINT, the shell's convention), never 0, so an
    // interrupted nightly job does not look green. Failures found before the interrupt
    // are real and still exit 1.
    if a.check_expect {
        return Ok(match (mismatched, interrupted) {
            (true, _) => 1,
            (false, true) => INTERRUPTED,
            (false, false) => 0,
        });
    }
    Ok(match (any_failure, interrupted) {
        (true, _) => 1,
        (false, true) => INTERRUPTED,
        (false, false) => 0,
    })
}

/// `--sarif` and `--junit` of `fuzz` and `merge`.
pub fn publish(
    reports: &[(Report, PathBuf)],
    sarif: Option<&Path>,
    junit: Option<&Path>,
) -> Result<()> {
    crate::cmd::write_sarif(sarif, |l| {
        for (r, p) in reports {
            l.add_fuzz_report(r, p);
        }
    })?;
    if let Some(path) = junit {
        let mut j = fencehound_export::junit::JunitReport::default();
        for (r, p) in reports {
            j.add_fuzz_report(r, p);
        }
        crate::cmd::create_parent(path)?;
        crate::cmd::write_atomically(path, j.to_xml()?.as_bytes())?;
    }
    Ok(())
}

pub fn print_report(r: &Report, path: &Path, mism: &[String]) {
    println!(
        "\n{}  ({} executions in {:.1}s{})",
        r.campaign.name,
        r.executions_done,
        r.wall_seconds,
        if r.interrupted { ", INTERRUPTED" } else { "" }
    );
    print!("{}", r.table());
    if r.failed() {
        let unsigned: u64 = r.summary.iter().map(|c| c.failures_unsigned).sum();
        println!(
            "\n{} failing execution(s), {} distinct failure signature(s){}; the first {} per cell stored in full, every execution replays from its id",
            r.failure_count(),
            r.signatures.len(),
            if unsigned > 0 {
                format!(
                    " ({unsigned} more failures in cells with over {} distinct ones: a sample is kept)",
                    r.keep_signatures
                )
            } else {
                String::new()
            },
            r.keep_failures
        );
    }
    if !r.failures.is_empty() {
        println!("\nfirst failures:");
        let mut shown = std::collections::BTreeSet::new();
        for f in &r.failures {
            if !shown.insert(f.variant.clone()) || shown.len() > 6 {
                continue;
            }
            println!(
                "  [{}] variant {} model {} p_w={} seed {}: {}",
                f.id,
                f.variant,
                f.model,
                f.p,
                f.seed,
                f.verdict.summary()
            );
            if let Verdict::WrongOutput { diff, .. } = &f.verdict {
                for line in diff.lines().take(6) {
                    println!("      {line}");
                }
            }
            println!(
                "      replay: fencehound replay {} --exec {} --trace",
                path.display(),
                f.id
            );
        }
    }
    if !r.races.is_empty() {
        println!("\nraces ({} distinct):", r.races.len());
        for race in r.races.iter().take(20) {
            println!("  {}", race.race);
        }
    }
    for m in mism {
        println!("EXPECTATION NOT MET: {m}");
    }
    println!("report: {}", path.display());
}

#[derive(clap::Args)]
pub struct RunArgs {
    pub campaign: PathBuf,
    #[arg(long)]
    pub variant: Option<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Buffering probability p_w. Default 0.75 under a model that uses it, as `exec`: at
    /// p_w = 1 alone no model delays one access of a thread and not the next, which most
    /// missing fences need (`fencehound_handlers::Model::blind_at`).
    #[arg(long)]
    pub p: Option<f64>,
    #[arg(long, default_value = "bugaroo")]
    pub model: String,
    #[arg(long, default_value = "random")]
    pub scheduler: String,
    /// Show which stores were buffered, when each drained, and stale loads.
    #[arg(long)]
    pub trace: bool,
    /// With --trace: also show shared-memory events (hidden by default).
    #[arg(long)]
    pub trace_all: bool,
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: RunArgs) -> Result<u8> {
    if let Some(p) = a.p.filter(|p| !(0.0..=1.0).contains(p)) {
        bail!("--p {p}: must be in [0, 1]");
    }
    let variants: Vec<String> = a.variant.iter().cloned().collect();
    let (c, preps) = load(&a.campaign, &variants)?;
    let prep = preps
        .into_iter()
        .next()
        .context("campaign has no variants")?;
    if a.variant.is_none() && c.variants.len() > 1 {
        eprintln!(
            "note: running variant `{}` (use --variant: {})",
            prep.variant,
            c.variant_names().join(", ")
        );
    }
    let model = parse_models(std::slice::from_ref(&a.model), &[])?[0];
    let spec = ExecSpec {
        id: 0,
        model,
        p: a.p.unwrap_or_else(|| crate::cmd::exec::default_p(model)),
        seed: a.seed,
        scheduler: parse_sched(&a.scheduler)?,
        trace: a.trace,
        filters: Default::default(),
        race: false,
    };
    let r = fencehound_fuzzer::execute(&prep, &spec, None);
    show_exec(&r, &prep, a.json, TraceMode::of(a.trace, a.trace_all), None)
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    pub report: PathBuf,
    /// Execution id (from the report or the fuzz output).
    #[arg(long = "exec")]
    pub exec: u64,
    #[arg(long)]
    pub trace: bool,
    /// With --trace: also show shared-memory events (hidden by default).
    #[arg(long)]
    pub trace_all: bool,
    #[arg(long)]
    pub json: bool,
}

/// The plan a report ran: execution ids map to (variant, model, p_w, seed) through it.
pub fn plan_of(r: &Report) -> Result<Plan> {
    let models: Vec<Model> = r.models.iter().filter_map(|m| Model::parse(m)).collect();
    Ok(Plan {
        variants: r.variants.iter().map(|v| v.name.clone()).collect(),
        models,
        ps: r.p.clone(),
        runs: r.runs,
        master_seed: r.master_seed,
        scheduler: parse_sched(&r.scheduler)?,
        scheduler_name: r.scheduler.clone(),
        jobs: 1,
        stop_at_first: false,
        race: false,
    })
}

pub fn replay(a: ReplayArgs) -> Result<u8> {
    let r = Report::read(&a.report).map_err(anyhow::Error::msg)?;
    let c = Arc::new(Campaign::from_text(
        Path::new(&r.campaign.path),
        r.campaign.text.clone(),
    )?);
    let plan = plan_of(&r)?;
    if a.exec >= plan.total() {
        bail!(
            "--exec {}: the report has executions 0..{}",
            a.exec,
            plan.total()
        );
    }
    let job = plan.job(a.exec);
    let v = &r.variants[job.variant];
    let prep = fencehound_fuzzer::prepare_with_ptx(c, &v.name, v.ptx.clone())?;
    let spec = ExecSpec {
        id: job.id,
        model: job.model,
        p: job.p,
        seed: job.seed,
        scheduler: plan.scheduler,
        trace: a.trace,
        filters: Default::default(),
        race: false,
    };
    // Instrumented executions replay on the instrumented vgpu backend (bit for bit); a
    // GPU's replay there too: same seed, same selected stores, the vgpu's interleaving.
    let instrumented = r.backend != "vgpu";
    if r.backend == "gpu" && !a.json {
        eprintln!("note: execution {} ran on {}; replaying it on the virtual GPU with the instrumented PTX (same seed and selected stores; the interleaving is the vgpu's)", a.exec, r.device);
    }
    let res = if instrumented && !a.trace {
        use fencehound_fuzzer::backend::Backend;
        fencehound_fuzzer::backend::instrumented::Instrumented::new().execute(&prep, &spec, None)
    } else {
        if instrumented && !a.json {
            eprintln!("note: the instrumented backends keep no trace; --trace replays with the native write buffers, whose interleaving and drain policy differ");
        }
        fencehound_fuzzer::execute(&prep, &spec, None)
    };
    // Stored in full, or the first execution of a failure signature: its outputs are
    // known and the replay is checked against them.
    let recorded = r
        .failures
        .iter()
        .find(|f| f.id == a.exec)
        .map(|f| f.output_hash.as_str())
        .or_else(|| {
            r.signatures
                .iter()
                .find(|s| s.first_id == a.exec)
                .map(|s| s.output_hash.as_str())
        });
    if !a.json {
        println!(
            "execution {}: variant {} model {} p_w={} seed {} scheduler {}",
            job.id,
            v.name,
            job.model.name(),
            job.p,
            job.seed,
            r.scheduler
        );
    }
    show_exec(
        &res,
        &prep,
        a.json,
        TraceMode::of(a.trace, a.trace_all),
        recorded,
    )
}

fn loc_str(l: &Location) -> String {
    match l {
        Location::Global(a) => format!("global {a:#x}"),
        Location::Shared { cta, offset } => format!("shared[cta {cta}] +{offset:#x}"),
    }
}

fn site_str(sites: &[SiteInfo], s: u32) -> String {
    match sites.get(s as usize) {
        Some(i) => format!("{} `{}`", i.location(), i.text),
        None => format!("site {s}"),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TraceMode {
    Off,
    /// Global memory events and stale loads, at most `limit` lines.
    Global {
        limit: usize,
    },
    All,
}

impl TraceMode {
    fn of(trace: bool, all: bool) -> TraceMode {
        match (trace, all) {
            (_, true) => TraceMode::All,
            (true, false) => TraceMode::Global { limit: usize::MAX },
            _ => TraceMode::Off,
        }
    }
}

fn event_loc(e: &TraceEvent) -> Option<Location> {
    match e {
        TraceEvent::Buffered { loc, .. }
        | TraceEvent::Drained { loc, .. }
        | TraceEvent::Forwarded { loc, .. }
        | TraceEvent::StaleLoad { loc, .. }
        | TraceEvent::StaleRead { loc, .. } => Some(*loc),
    }
}

pub fn show_exec(
    r: &fencehound_fuzzer::ExecResult,
    prep: &fencehound_fuzzer::Prepared,
    json: bool,
    mode: TraceMode,
    recorded_hash: Option<&str>,
) -> Result<u8> {
    let trace = mode != TraceMode::Off;
    let same = recorded_hash.map(|h| h == r.output_hash);
    if json {
        let mut v = serde_json::to_value(r)?;
        v["reproduced"] = serde_json::json!(same);
        if trace {
            v["trace"] = serde_json::to_value(&r.trace)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("verdict: {}", r.verdict.summary());
        match &r.verdict {
            Verdict::WrongOutput { diff, .. } if !diff.is_empty() => println!("{diff}"),
            Verdict::Deadlock { dump } | Verdict::Timeout { dump, .. } => print!("{dump}"),
            _ => {}
        }
        if !r.printf.is_empty() {
            // A program's printf output is its standard output.
            println!("printf output:\n{}", r.printf);
        }
        let s = &r.stats;
        println!(
            "stores: global {}/{} buffered, shared {}/{}; forwarded loads {}; peak occupancy {}; {} lane instructions",
            s.global.stores_buffered, s.global.stores_seen, s.shared.stores_buffered, s.shared.stores_seen, s.forwarded_loads, s.peak_occupancy, r.lane_instructions
        );
        println!("outputs sha256: {}", r.output_hash);
        match same {
            Some(true) => println!("reproduced: identical outputs to the recorded execution"),
            Some(false) => println!("NOT reproduced: outputs differ from the recorded execution"),
            None => {}
        }
        if trace {
            let shown: Vec<&TraceEvent> = r
                .trace
                .iter()
                .filter(|e| mode == TraceMode::All || !event_loc(e).is_some_and(|l| l.is_shared()))
                .collect();
            let limit = match mode {
                TraceMode::Global { limit } => limit,
                _ => usize::MAX,
            };
            println!(
                "trace ({} of {} events{}):",
                shown.len().min(limit),
                r.trace.len(),
                if mode == TraceMode::All {
                    ""
                } else {
                    "; shared-memory events hidden, --trace-all shows them"
                }
            );
            let t = |g: u32| {
                let tpc = prep
                    .campaign
                    .launches
                    .first()
                    .map(|l| l.block.count() as u32)
                    .unwrap_or(1)
                    .max(1);
                format!("thread {} of block {}", g % tpc, g / tpc)
            };
            // Programs: the runtime rendered the trace per launch.
            for line in &r.program_trace {
                println!("  {line}");
            }
            for e in shown.into_iter().take(limit) {
                match e {
                    TraceEvent::Buffered { seq, thread, site, loc, value, .. } => println!("  #{seq:<5} buffered  {:<24} {} <- {value:#x}  at {}", t(*thread), loc_str(loc), site_str(&r.sites, *site)),
                    TraceEvent::Drained { seq, to, reason, at, .. } => println!(
                        "  #{seq:<5} drained   to {:<6} ({:?}{})",
                        if *to == Level::Cta { "CTA" } else { "memory" },
                        reason,
                        at.map(|s| format!(" at {}", site_str(&r.sites, s))).unwrap_or_default()
                    ),
                    TraceEvent::Forwarded { thread, site, loc, value } => println!("  forwarded {:<24} {} = {value:#x} at {}", t(*thread), loc_str(loc), site_str(&r.sites, *site)),
                    TraceEvent::StaleLoad { thread, site, loc, value } => println!("  STALE     {:<24} {} read {value:#x} (a newer store is still buffered) at {}", t(*thread), loc_str(loc), site_str(&r.sites, *site)),
                    TraceEvent::StaleRead { thread, site, loc, value, read_seq, read_site, newest_seq, newest_site, newest_value } => {
                        let store = |seq: u64, s: &Option<u32>| match s {
                            Some(s) => format!("store #{seq} ({})", site_str(&r.sites, *s)),
                            None => "the value before the launch".to_string(),
                        };
                        println!(
                            "  STALE     {:<24} {} read {value:#x} at {}: read {} although {} = {newest_value:#x} was visible",
                            t(*thread),
                            loc_str(loc),
                            site_str(&r.sites, *site),
                            store(*read_seq, read_site),
                            store(*newest_seq, newest_site)
                        )
                    }
                }
            }
        }
    }
    if let Verdict::OracleError { message } = &r.verdict {
        bail!(
            "{}: the oracle could not judge this execution: {message}",
            prep.campaign.path.display()
        );
    }
    if same == Some(false) {
        return Err(Exit(1).into());
    }
    Ok(if r.verdict.is_failure() { 1 } else { 0 })
}
