//! `fencehound minimize` and `fencehound audit`.

use anyhow::{Context, Result};
use fencehound_fuzzer::{Campaign, Report};
use fencehound_handlers::Model;
use fencehound_minimizer::{
    model_strength, FenceVerdict, KnownFailure, Options, Site, Verification, DEFAULT_MODEL,
};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct MinimizeArgs {
    /// The campaign file (TOML), or with `--exec` a fuzz report (JSON).
    #[arg(value_name = "CAMPAIGN|REPORT")]
    pub campaign: PathBuf,
    /// The failing variant (with `--exec`: taken from the execution).
    #[arg(long, required_unless_present = "exec")]
    pub variant: Option<String>,
    /// Start from this failing execution of the fuzz report given instead of a campaign
    /// (the id `fuzz` prints as `replay: … --exec ID`): it is re-run from its seed, the
    /// search runs under its model and p_w, and its cell's failure rate sizes the checks.
    #[arg(long, value_name = "ID")]
    pub exec: Option<u64>,
    /// The largest number of seeds per p_w a check may run when the failure rate asks for
    /// more (95% power at the measured rate); above it the output says the checks are capped.
    #[arg(long, default_value_t = fencehound_minimizer::DEFAULT_MAX_BATCH)]
    pub max_batch: u32,
    /// Models of the run (sc, bugaroo, scoped, weak): the search runs under the strongest,
    /// cheaper fixes are judged and the patch is verified under all. Default: the
    /// strongest available.
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "0.5,1")]
    pub p: Vec<f64>,
    /// Seeds per p_w in each check: the first batch, and the least any check runs (once a
    /// failure is seen, raised to give 95% power at the measured failure rate).
    #[arg(long, default_value_t = 20)]
    pub batch: u32,
    /// Fresh seeds per p_w to confirm the result (at least the sized batch).
    #[arg(long, default_value_t = 50)]
    pub confirm: u32,
    /// Fresh seeds per p_w and model to verify the patched source.
    #[arg(long, default_value_t = 50)]
    pub verify_runs: u32,
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Run the PLDI'16 baseline instead: a fence after every access, then reduce.
    #[arg(long)]
    pub baseline: bool,
    #[arg(long)]
    pub json: bool,
    /// Also write the missing fences as SARIF 2.1.0 (CUDA lines, the insertion as a fix).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct AuditArgs {
    pub campaign: PathBuf,
    #[arg(long)]
    pub variant: String,
    /// Models of the run (sc, bugaroo, scoped, weak): fences are judged under the strongest,
    /// the removal patch is verified under all. Default: the strongest available.
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "0.5,1")]
    pub p: Vec<f64>,
    /// Seeds per p_w for each fence.
    #[arg(long, default_value_t = 100)]
    pub runs: u32,
    /// Fresh seeds per p_w and model to verify the removal patch.
    #[arg(long, default_value_t = 50)]
    pub verify_runs: u32,
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
    /// Also write likely redundant and too-wide fences as SARIF 2.1.0.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[allow(clippy::too_many_arguments)]
fn options(
    models: &[String],
    p: &[f64],
    batch: u32,
    confirm: u32,
    runs: u32,
    verify_runs: u32,
    jobs: Option<usize>,
    c: &Campaign,
) -> Result<Options> {
    let mut parsed = Vec::new();
    for m in models {
        let model = Model::parse(m)
            .with_context(|| format!("unknown model `{m}` (sc, bugaroo, scoped, weak)"))?;
        if !parsed.contains(&model) {
            parsed.push(model);
        }
    }
    if parsed.is_empty() {
        parsed.push(DEFAULT_MODEL);
    }
    let strongest = parsed
        .iter()
        .copied()
        .max_by_key(|m| model_strength(*m))
        .unwrap_or(DEFAULT_MODEL);
    if p.iter().any(|x| !(0.0..=1.0).contains(x)) {
        anyhow::bail!("--p values must be in [0, 1]");
    }
    std::fs::create_dir_all("fencehound-out").context("cannot create fencehound-out/")?;
    Ok(Options {
        model: strongest,
        models: parsed,
        ps: p.to_vec(),
        batch: batch.max(1),
        confirm: confirm.max(1),
        audit_runs: runs.max(1),
        verify_runs: verify_runs.max(1),
        master_seed: c.file.seed,
        scheduler: fencehound_vgpu::SchedulerKind::parse(&c.file.fuzz.scheduler)
            .unwrap_or(fencehound_vgpu::SchedulerKind::Random),
        jobs: crate::cmd::fuzz::jobs(jobs),
        cache: Some(
            PathBuf::from("fencehound-out").join(format!("{}.minimize-cache.json", c.name)),
        ),
        known: None,
        max_batch: fencehound_minimizer::DEFAULT_MAX_BATCH,
    })
}

/// A failing execution of `variant` recorded in `r`: stored in full or the first of a
/// failure signature, under one of `models` (the first such model preferred), lowest id.
fn recorded_failure(r: &Report, variant: &str, models: &[Model]) -> Option<u64> {
    let mut ids: Vec<(usize, u64)> = Vec::new();
    for (k, m) in models.iter().enumerate() {
        for f in &r.failures {
            if f.variant == variant && f.model == m.name() {
                ids.push((k, f.id));
            }
        }
        for sg in &r.signatures {
            if sg.variant == variant && sg.model == m.name() {
                ids.push((k, sg.first_id));
            }
        }
    }
    ids.into_iter().min().map(|(_, id)| id)
}

/// The known failure `id` of report `r` (its variant, model, p_w, seed and its cell's
/// failure rate), with the campaign it ran.
fn known_failure(
    r: &Report,
    report_path: &std::path::Path,
    id: u64,
) -> Result<(
    Arc<Campaign>,
    String,
    KnownFailure,
    fencehound_vgpu::SchedulerKind,
)> {
    let plan = crate::cmd::fuzz::plan_of(r)?;
    if id >= plan.total() {
        anyhow::bail!(
            "--exec {id}: {} has executions 0..{}",
            report_path.display(),
            plan.total()
        );
    }
    let job = plan.job(id);
    let v = r
        .variants
        .get(job.variant)
        .with_context(|| format!("--exec {id}: no such variant in the report"))?;
    let recorded =
        r.failures.iter().any(|f| f.id == id) || r.signatures.iter().any(|sg| sg.first_id == id);
    if !recorded {
        eprintln!(
            "note: execution {id} is not recorded as failing in {} (it keeps the first failures of each cell and the first of each signature); re-running it anyway",
            report_path.display()
        );
    }
    // The campaign as the report ran it; its files are found where they were.
    let abs = std::path::Path::new(&r.campaign.abs_path);
    let path = if !r.campaign.abs_path.is_empty() && abs.exists() {
        abs.to_path_buf()
    } else {
        PathBuf::from(&r.campaign.path)
    };
    let c = Arc::new(Campaign::from_text(&path, r.campaign.text.clone())?);
    let (cell_failures, cell_runs) = r
        .summary
        .iter()
        .find(|cell| cell.variant == v.name && cell.model == job.model.name() && cell.p == job.p)
        .map(|cell| (cell.failures, cell.runs))
        .unwrap_or((1, 1));
    // The same PTX, up to where the compiler was told the source file is (`.file`
    // holds the path as given, which depends on the directory fuzz ran in).
    let code = |ptx: &str| -> Vec<String> {
        ptx.lines()
            .filter(|l| !l.trim_start().starts_with(".file"))
            .map(str::to_string)
            .collect()
    };
    let same = fencehound_fuzzer::prepare(c.clone(), &v.name)
        .map(|p| code(&p.ptx) == code(&v.ptx))
        .unwrap_or(false);
    let k = KnownFailure {
        origin: format!("{}, execution {id}", report_path.display()),
        model: job.model,
        p: job.p,
        seed: job.seed,
        cell_failures,
        cell_runs,
        ptx_changed: !same,
    };
    Ok((c, v.name.clone(), k, plan.scheduler))
}

fn where_(s: &Site) -> String {
    match (&s.cuda, &s.statement) {
        (Some(_), Some(st)) => format!("{} `{}`", s.location(), st),
        _ => s.location(),
    }
}

/// The library frames when an instruction is inlined from a header: "in cccl/…:123".
fn inline_note(s: &Site) -> String {
    if s.stack.len() > 1 {
        format!(" (inlined: {})", s.inline_path())
    } else {
        String::new()
    }
}

fn print_patch(
    patch: &Option<fencehound_minimizer::source::Patch>,
    v: &Option<Verification>,
    what: &str,
) {
    let Some(v) = v else { return };
    match patch {
        Some(p) if !p.diff.is_empty() => {
            let from = if p.apply_from == "." {
                "the campaign's folder".to_string()
            } else {
                format!("`{}` (relative to the campaign's folder)", p.apply_from)
            };
            if v.verified {
                println!("{what} (apply with `git apply` from {from}):");
            } else {
                println!(
                    "{what} — NOT verified, shown for reference only, do not apply it blindly (`git apply` from {from}):"
                );
            }
            for s in &p.sites {
                println!("  {s}");
            }
            print!("{}", p.diff);
        }
        _ => {}
    }
    println!("{}", v.summary());
    if v.verified && !v.exact {
        println!(
            "  note: the compiled patch is not exactly the PTX change that was searched; it was verified as compiled"
        );
    }
}

pub fn minimize(a: MinimizeArgs) -> Result<u8> {
    let mut known = None;
    let (c, variant) = match a.exec {
        Some(id) => {
            let r = Report::read(&a.campaign).map_err(|e| {
                anyhow::anyhow!("--exec needs a fuzz report (JSON) as first argument: {e}")
            })?;
            let (c, variant, k, sched) = known_failure(&r, &a.campaign, id)?;
            if let Some(v) = &a.variant {
                if *v != variant {
                    anyhow::bail!("--exec {id} is an execution of variant `{variant}`, not `{v}`");
                }
            }
            known = Some((k, sched, r.master_seed));
            (c, variant)
        }
        None => (
            Arc::new(Campaign::load(&a.campaign)?),
            a.variant.clone().unwrap_or_default(),
        ),
    };
    c.require_oracle()?;
    let mut models = a.model.clone();
    if let Some((k, _, _)) = &known {
        models.insert(0, k.model.name().to_string());
    }
    let mut opts = options(
        &models,
        &a.p,
        a.batch,
        a.confirm,
        0,
        a.verify_runs,
        a.jobs,
        &c,
    )?;
    opts.max_batch = a.max_batch.max(1);
    if let Some((k, sched, master)) = known.take() {
        // The search runs where the recorded execution failed: its model, p_w, scheduler.
        opts.model = k.model;
        opts.ps = vec![k.p];
        opts.scheduler = sched;
        opts.master_seed = master;
        opts.known = Some(k);
    }
    let variant = variant.as_str();
    if a.baseline {
        let r = fencehound_minimizer::baseline_fence_all(c, variant, opts)?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            println!("baseline (fence after every access, then reduce): {} candidates → {} fence(s), {} executions, {:.1}s{}", r.candidates, r.fences.len(), r.executions, r.wall_seconds, if r.confirmed { "" } else { " (NOT confirmed)" });
            for f in &r.fences {
                println!("  {} after {}", f.insertion, where_(&f.after));
            }
        }
        return Ok(if r.fences.is_empty() { 0 } else { 1 });
    }
    let mut r = fencehound_minimizer::minimize(c.clone(), variant, opts.clone())?;
    // Nothing failed in the first batch, but the campaign's own fuzz report records a
    // failing execution of this variant: start from it instead of calling it clean.
    let mut fallback_note = None;
    if r.failure.is_none() && r.replay_failed.is_none() && opts.known.is_none() {
        let path =
            crate::cmd::fuzz::default_out_dir(&a.campaign).join(format!("{}.report.json", c.name));
        if let Ok(rep) = Report::read(&path) {
            if let Some(id) = recorded_failure(&rep, variant, &opts.run_models()) {
                let (_, _, k, sched) = known_failure(&rep, &path, id)?;
                if k.ptx_changed {
                    println!(
                        "note: {} records a failing execution of this variant, but for other PTX than the campaign compiles to now (the source changed): not used",
                        path.display()
                    );
                    return no_failure(&r, a.json);
                }
                fallback_note = Some(format!(
                    "no failure in the first batch ({} executions), but {} records a failing execution: starting from it",
                    r.executions + r.cached,
                    k.origin
                ));
                let mut o = opts.clone();
                o.model = k.model;
                if !o.models.contains(&k.model) {
                    o.models.push(k.model);
                }
                o.ps = vec![k.p];
                o.scheduler = sched;
                o.master_seed = rep.master_seed;
                o.known = Some(k);
                r = fencehound_minimizer::minimize(c, variant, o)?;
            }
        }
    }
    crate::cmd::write_sarif(a.sarif.as_deref(), |l| l.add_minimize(&r))?;
    if let Some(why) = &r.replay_failed {
        if a.json {
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            println!(
                "{} / {}: {why}; nothing was minimized",
                r.campaign, r.variant
            );
        }
        return Err(crate::exit::Exit(crate::exit::INPUT).into());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(if r.failure.is_some() { 1 } else { 0 });
    }
    if let Some(note) = &fallback_note {
        println!("{note}");
    }
    let Some(f) = &r.failure else {
        return no_failure(&r, false);
    };
    print_added_ps(&r);
    if let Some(start) = &r.start {
        println!("starting from {start} (re-run from its seed: it fails again)");
    }
    println!(
        "{} / {} under {}: fails (seed {}, p_w={}: {})",
        r.campaign, r.variant, r.model, f.seed, f.p, f.verdict
    );
    if let Some(sz) = &r.sizing {
        println!("batches: {}", sz.describe());
    }
    println!(
        "space:  {} (global alone {}, shared alone {})",
        r.spaces.join(" + "),
        if r.global_alone.is_some() {
            "fails"
        } else {
            "passes"
        },
        if r.shared_alone.is_some() {
            "fails"
        } else {
            "passes"
        }
    );
    println!("kernel: {}", r.kernels.join(", "));
    println!("stores whose delay (buffered, or read stale) suffices to fail:");
    for s in &r.stores {
        println!("  {}  (PTX: `{}`){}", where_(s), s.ptx, inline_note(s));
    }
    println!("missing fence(s):");
    // One entry per source location (a device function inlined in several places gives
    // several PTX sites for one CUDA line).
    let mut seen: Vec<(String, Vec<String>, usize)> = Vec::new();
    for s in &r.fences {
        let line = format!("  {}", s.headline());
        let mut detail = vec![format!("    {}", s.side.describe())];
        if let Some(src) = &s.source {
            detail.push(format!("    in your code: {src}"));
        }
        if s.after.stack.len() > 1 {
            detail.push(format!(
                "    the instruction is inlined: {}",
                s.after.inline_path()
            ));
        }
        detail.push(format!("    why: {}", s.reason));
        match seen.iter_mut().find(|(l, _, _)| *l == line) {
            Some((_, _, n)) => *n += 1,
            None => seen.push((line, detail, 1)),
        }
    }
    for (line, detail, n) in seen {
        if n > 1 {
            println!("{line}  ({n} PTX sites)");
        } else {
            println!("{line}");
        }
        for d in detail {
            println!("{d}");
        }
    }
    if let Some(note) = &r.scope_note {
        println!("{note}");
    }
    if !r.source_reduced.is_empty() {
        println!(
            "not in the patch: the PTX-level search also fenced these lines, but the patch \
             verifies without them (a fence on a source line covers all its PTX copies):"
        );
        for d in &r.source_reduced {
            println!("  {d}");
        }
    }
    if !r.ptx_change.is_empty() {
        println!(
            "PTX-level change:\n  {}",
            r.ptx_change.replace('\n', "\n  ")
        );
    }
    match (&r.remaining_failure, r.confirmed) {
        (_, true) => println!("confirmed: no failure on a fresh batch (PTX level)"),
        (Some(f), false) => println!(
            "NOT confirmed: still fails (seed {}, p_w={}: {})",
            f.seed, f.p, f.verdict
        ),
        (None, false) => println!("not confirmed"),
    }
    print_patch(&r.patch, &r.verification, "patch");
    println!(
        "{} executions run, {} answered from the cache, {} compilations, in {:.1}s",
        r.executions, r.cached, r.compiles, r.wall_seconds
    );
    Ok(1)
}

/// The variant passed the first batch and no failing execution of it is on record.
/// The p_w values the search added to the user's (none strictly between 0 and 1).
fn print_added_ps(r: &fencehound_minimizer::MinimizeReport) {
    if !r.added_ps.is_empty() {
        let ps: Vec<String> = r.added_ps.iter().map(|p| p.to_string()).collect();
        println!(
            "note: no p_w strictly between 0 and 1 was given; at 0 or 1 alone {} delays every \
             access or none, never one access and not the next, which most missing fences \
             need: the search also runs at p_w = {}",
            r.model,
            ps.join(", ")
        );
    }
}

fn no_failure(r: &fencehound_minimizer::MinimizeReport, json: bool) -> Result<u8> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(0);
    }
    print_added_ps(r);
    let n = r.executions + r.cached;
    println!(
        "{} / {}: no failure in the first batch ({n} executions; p_fail < {:.3} at 95%) and no failing execution of it recorded under {} in the campaign's fuzz report — nothing to minimize (a rare failure a fuzz run found elsewhere: `fencehound minimize REPORT.json --exec ID`)",
        r.campaign,
        r.variant,
        3.0 / n.max(1) as f64,
        r.models.join(", ")
    );
    Ok(0)
}

pub fn audit(a: AuditArgs) -> Result<u8> {
    let c = Arc::new(Campaign::load(&a.campaign)?);
    c.require_oracle()?;
    let opts = options(&a.model, &a.p, 1, 1, a.runs, a.verify_runs, a.jobs, &c)?;
    let r = fencehound_minimizer::audit(c, &a.variant, opts)?;
    crate::cmd::write_sarif(a.sarif.as_deref(), |l| l.add_audit(&r))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "{} / {} under {}: {} fence(s)",
            r.campaign,
            r.variant,
            r.model,
            r.fences.len()
        );
        if let Some(f) = &r.base_failure {
            println!(
                "note: the variant already fails as is (seed {}, p_w={})",
                f.seed, f.p
            );
        }
        for fa in &r.fences {
            let v = match &fa.verdict {
                FenceVerdict::Necessary { failing } => format!("NECESSARY (removing it fails: seed {}, p_w={})", failing.seed, failing.p),
                FenceVerdict::LikelyRedundant { runs, failure_probability_below, given_that_stay } => {
                    let mut s = format!("likely redundant (0 failures in {runs} runs without it: p_fail < {failure_probability_below:.3} at 95%)");
                    if !given_that_stay.is_empty() {
                        s.push_str(&format!(", given that {} stays", given_that_stay.join(" and ")));
                    }
                    s
                }
                FenceVerdict::NeededWithOthersRemoved { failing, with } => format!("redundant alone, but not together with {} (removing both fails: seed {}, p_w={}): keep it", with.join(", "), failing.seed, failing.p),
                FenceVerdict::NotExercised { copies, unreached } => format!("not exercised by this campaign ({unreached} of its {copies} PTX copies never ran): cannot say it is redundant"),
                FenceVerdict::CannotJudge { reason } => reason.clone(),
            };
            let at = match &fa.source {
                Some(s) => format!("{}:{} `{}`", s.file, s.line, s.text),
                None => where_(&fa.fence),
            };
            println!("  {at} `{}`: {v}", fa.fence.ptx);
            if fa.copies.len() > 1 {
                for line in copy_lines(&fa.copies) {
                    println!("      {line}");
                }
            }
            let m = fa.block_scope_model.as_deref().unwrap_or("scoped");
            match &fa.block_scope {
                Some(FenceVerdict::LikelyRedundant { runs, .. }) => println!("      block scope suffices under {m} (0 failures in {runs}): __threadfence_block()"),
                Some(FenceVerdict::Necessary { failing }) => println!("      device scope needed (block scope fails under {m}: seed {}, p_w={})", failing.seed, failing.p),
                Some(FenceVerdict::CannotJudge { reason }) => println!("      block scope: {reason}"),
                _ => {}
            }
        }
        print_patch(
            &r.patch,
            &r.verification,
            "patch removing the likely redundant fences",
        );
        println!(
            "{} executions run ({} observed), {} answered from the cache, {} compilations, in {:.1}s",
            r.executions, r.observed_runs, r.cached, r.compiles, r.wall_seconds
        );
    }
    Ok(if r.base_failure.is_some() { 1 } else { 0 })
}

/// The PTX copies of one audited fence, for a person: each copy that ran on a line of its
/// own; the copies that never ran said once, by the kernels (template instances) they are
/// in, when there are more than two of them — a templated kernel has one copy per
/// instance, and a program launches few (issue 26: twenty lines of "ran 0 times" per
/// fence). `--json` keeps every copy.
fn copy_lines(copies: &[fencehound_minimizer::FenceCopy]) -> Vec<String> {
    let ran: Vec<_> = copies.iter().filter(|c| c.reached > 0).collect();
    let never: Vec<_> = copies.iter().filter(|c| c.reached == 0).collect();
    let mut out: Vec<String> = ran
        .iter()
        .map(|c| {
            format!(
                "copy at PTX line {} (in `{}`): ran {} times",
                c.fence.at.ptx_line,
                fencehound_fuzzer::demangle(&c.fence.at.function),
                c.reached
            )
        })
        .collect();
    if never.len() <= 2 {
        out.extend(never.iter().map(|c| {
            format!(
                "copy at PTX line {} (in `{}`): ran 0 times (never: not exercised)",
                c.fence.at.ptx_line,
                fencehound_fuzzer::demangle(&c.fence.at.function)
            )
        }));
        return out;
    }
    let mut kernels: Vec<String> = Vec::new();
    for c in &never {
        let k = fencehound_fuzzer::demangle(&c.fence.at.function);
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    const SHOWN: usize = 3;
    let mut names = kernels
        .iter()
        .take(SHOWN)
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if kernels.len() > SHOWN {
        names.push_str(&format!(
            " and {} more (all in --json)",
            kernels.len() - SHOWN
        ));
    }
    out.push(format!(
        "{} {}copies never ran (not exercised), in {} kernel instance(s): {names}",
        never.len(),
        if ran.is_empty() { "" } else { "other " },
        kernels.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencehound_minimizer::edit::InstRef;
    use fencehound_minimizer::{FenceCopy, Site};

    fn copy(function: &str, line: u32, reached: u64) -> FenceCopy {
        FenceCopy {
            fence: Site {
                at: InstRef {
                    function: function.into(),
                    ptx_line: line,
                },
                ptx: "membar.gl;".into(),
                cuda: None,
                statement: None,
                stack: Vec::new(),
            },
            reached,
            drained: 0,
            acquire_after: None,
            store_before: None,
        }
    }

    #[test]
    fn copies_that_never_ran_are_said_once_by_kernel() {
        let mut copies = vec![copy("_Z6reduceILi128EEvPf", 10, 7)];
        for i in 0..20 {
            copies.push(copy(
                &format!("_Z6reduceILi{}EEvPf", 1 << (i % 6)),
                100 + i,
                0,
            ));
        }
        let lines = copy_lines(&copies);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            "copy at PTX line 10 (in `reduce<128>`): ran 7 times"
        );
        assert!(
            lines[1].starts_with("20 other copies never ran (not exercised), in 6 kernel instance(s): `reduce<1>`, `reduce<2>`, `reduce<4>` and 3 more (all in --json)"),
            "{}",
            lines[1]
        );
        // Two or fewer are listed one by one.
        let lines = copy_lines(&copies[..3]);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[2].ends_with("ran 0 times (never: not exercised)"));
    }
}
