//! `fencehound minimize` and `fencehound audit`.

use anyhow::{Context, Result};
use fencehound_fuzzer::Campaign;
use fencehound_handlers::Model;
use fencehound_minimizer::{FenceVerdict, Options};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct MinimizeArgs {
    pub campaign: PathBuf,
    /// The failing variant.
    #[arg(long)]
    pub variant: String,
    /// bugaroo or scoped.
    #[arg(long, default_value = "bugaroo")]
    pub model: String,
    #[arg(long, value_delimiter = ',', default_value = "0.5,1")]
    pub p: Vec<f64>,
    /// Seeds per p_w in each check.
    #[arg(long, default_value_t = 20)]
    pub batch: u32,
    /// Fresh seeds per p_w to confirm the result.
    #[arg(long, default_value_t = 50)]
    pub confirm: u32,
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
    #[arg(long, default_value = "bugaroo")]
    pub model: String,
    #[arg(long, value_delimiter = ',', default_value = "0.5,1")]
    pub p: Vec<f64>,
    /// Seeds per p_w for each fence.
    #[arg(long, default_value_t = 100)]
    pub runs: u32,
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
    /// Also write likely redundant and too-wide fences as SARIF 2.1.0.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

fn options(
    model: &str,
    p: &[f64],
    batch: u32,
    confirm: u32,
    runs: u32,
    jobs: Option<usize>,
    c: &Campaign,
) -> Result<Options> {
    let model = Model::parse(model)
        .with_context(|| format!("unknown model `{model}` (bugaroo, scoped)"))?;
    if p.iter().any(|x| !(0.0..=1.0).contains(x)) {
        anyhow::bail!("--p values must be in [0, 1]");
    }
    std::fs::create_dir_all("fencehound-out").context("cannot create fencehound-out/")?;
    Ok(Options {
        model,
        ps: p.to_vec(),
        batch: batch.max(1),
        confirm: confirm.max(1),
        audit_runs: runs.max(1),
        master_seed: c.file.seed,
        scheduler: fencehound_vgpu::SchedulerKind::parse(&c.file.fuzz.scheduler)
            .unwrap_or(fencehound_vgpu::SchedulerKind::Random),
        jobs: crate::cmd::fuzz::jobs(jobs),
        cache: Some(
            PathBuf::from("fencehound-out").join(format!("{}.minimize-cache.json", c.name)),
        ),
    })
}

fn where_(s: &fencehound_minimizer::Site) -> String {
    match (&s.cuda, &s.statement) {
        (Some(c), Some(st)) => format!("{}:{} `{}`", short(&c.file), c.line, st),
        (Some(c), None) => format!("{}:{}", short(&c.file), c.line),
        _ => format!("PTX line {} of `{}`", s.at.ptx_line, s.at.function),
    }
}

fn short(p: &str) -> String {
    std::path::Path::new(p)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string())
}

pub fn minimize(a: MinimizeArgs) -> Result<u8> {
    let c = Arc::new(Campaign::load(&a.campaign)?);
    let opts = options(&a.model, &a.p, a.batch, a.confirm, 0, a.jobs, &c)?;
    if a.baseline {
        let r = fencehound_minimizer::baseline_fence_all(c, &a.variant, opts)?;
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
    let r = fencehound_minimizer::minimize(c, &a.variant, opts)?;
    crate::cmd::write_sarif(a.sarif.as_deref(), |l| l.add_minimize(&r))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(if r.failure.is_some() { 1 } else { 0 });
    }
    let Some(f) = &r.failure else {
        println!(
            "{} / {}: no failure in the first batch ({} executions) — nothing to minimize",
            r.campaign, r.variant, r.executions
        );
        return Ok(0);
    };
    println!(
        "{} / {} under {}: fails (seed {}, p_w={}: {})",
        r.campaign, r.variant, r.model, f.seed, f.p, f.verdict
    );
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
    println!("stores whose buffering suffices to fail:");
    for s in &r.stores {
        println!("  {}  (PTX: `{}`)", where_(s), s.ptx);
    }
    println!("missing fence(s):");
    // One line per source location (a device function inlined in several places gives
    // several PTX sites for one CUDA line).
    let mut seen: Vec<(String, usize)> = Vec::new();
    for s in &r.fences {
        let line = format!("  insert `{}` after {}", s.insertion, where_(&s.after));
        match seen.iter_mut().find(|(l, _)| *l == line) {
            Some((_, n)) => *n += 1,
            None => seen.push((line, 1)),
        }
    }
    for (line, n) in seen {
        if n > 1 {
            println!("{line}  ({n} PTX sites)");
        } else {
            println!("{line}");
        }
    }
    if !r.ptx_change.is_empty() {
        println!(
            "PTX-level change:\n  {}",
            r.ptx_change.replace('\n', "\n  ")
        );
    }
    if !r.diff.is_empty() {
        println!("patch:\n{}", r.diff);
    }
    match (&r.remaining_failure, r.confirmed) {
        (_, true) => println!("confirmed: no failure on a fresh batch"),
        (Some(f), false) => println!(
            "NOT confirmed: still fails (seed {}, p_w={}: {})",
            f.seed, f.p, f.verdict
        ),
        (None, false) => println!("not confirmed"),
    }
    println!(
        "{} executions run, {} answered from the cache, in {:.1}s",
        r.executions, r.cached, r.wall_seconds
    );
    Ok(1)
}

pub fn audit(a: AuditArgs) -> Result<u8> {
    let c = Arc::new(Campaign::load(&a.campaign)?);
    let opts = options(&a.model, &a.p, 1, 1, a.runs, a.jobs, &c)?;
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
                FenceVerdict::LikelyRedundant { runs, failure_probability_below } => format!("likely redundant (0 failures in {runs} runs without it: p_fail < {failure_probability_below:.3} at 95%)"),
            };
            println!("  {} `{}`: {v}", where_(&fa.fence), fa.fence.ptx);
            match &fa.block_scope {
                Some(FenceVerdict::LikelyRedundant { runs, .. }) => println!("      block scope suffices under scoped (0 failures in {runs}): __threadfence_block()"),
                Some(FenceVerdict::Necessary { failing }) => println!("      device scope needed (block scope fails under scoped: seed {}, p_w={})", failing.seed, failing.p),
                None => {}
            }
        }
        if !r.diff.is_empty() {
            println!("patch removing the likely redundant fences:\n{}", r.diff);
        }
        println!(
            "{} executions run, {} answered from the cache, in {:.1}s",
            r.executions, r.cached, r.wall_seconds
        );
    }
    Ok(if r.base_failure.is_some() { 1 } else { 0 })
}
