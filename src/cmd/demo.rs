//! `fencehound demo`: the flagship demo. Fuzzes the CUDA-by-Example dot product
//! (`campaigns/cbe_dot.toml`: a global spin lock protecting `*c`) in all its fence
//! variants under the `bugaroo` and `scoped` write-buffer models, prints the failure table,
//! and replays one failing execution with its trace — bit for bit, from its seed.

use crate::cmd::fuzz::{self, TraceMode};
use anyhow::{Context, Result};
use fencehound_fuzzer::{runner, Plan};
use fencehound_handlers::Model;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// Executions per variant × model × p_w.
    #[arg(long, default_value_t = 25)]
    pub runs: u32,
    /// Parallel executions (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
}

fn campaign_path() -> Result<PathBuf> {
    let rel = PathBuf::from("campaigns").join("cbe_dot.toml");
    let candidates = [
        rel.clone(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&rel),
    ];
    candidates
        .into_iter()
        .find(|p| p.exists())
        .context("campaigns/cbe_dot.toml not found: run the demo from the fencehound repository")
}

pub fn run(args: Args) -> Result<u8> {
    let path = campaign_path()?;
    println!("fencehound demo — CUDA-by-Example dot product with a global spin lock");
    println!("campaign: {}", path.display());
    println!(
        "Each block adds its partial sum to *c while holding an atomicCAS lock. Without a\n\
         __threadfence() before the unlocking atomicExch, the update to *c may still sit in the\n\
         writer's store buffer when the next block takes the lock: a lost update. fencehound\n\
         delays stores in per-thread write buffers (p_w = probability a store is buffered) and\n\
         runs seeded executions on its CPU virtual GPU, judging each against the sc run.\n"
    );
    let (c, preps) = fuzz::load(&path, &[])?;
    let plan = Plan {
        variants: preps.iter().map(|p| p.variant.clone()).collect(),
        models: vec![Model::Bugaroo, Model::Scoped],
        ps: vec![0.5, 1.0],
        runs: args.runs.max(1),
        master_seed: c.file.seed,
        scheduler: fencehound_vgpu::SchedulerKind::Random,
        scheduler_name: "random".into(),
        jobs: fuzz::jobs(args.jobs),
        stop_at_first: false,
        race: false,
    };
    let report_path = PathBuf::from("fencehound-out").join("demo-cbe_dot.report.json");
    std::fs::create_dir_all("fencehound-out").context("cannot create fencehound-out/")?;
    eprintln!(
        "running {} executions on {} core(s)...",
        plan.total(),
        plan.jobs
    );
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(plan.total());
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let report = runner::run(
        &c,
        preps.clone(),
        &plan,
        Some(report_path.clone()),
        Arc::new(AtomicBool::new(false)),
        |e| {
            if let Some(b) = &bar {
                b.set_position(e.done);
                b.set_message(format!("{} failing", e.failures));
            }
        },
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mism = report.expectation_mismatches();
    fuzz::print_report(&report, &report_path, &mism);
    let Some(f) = report
        .failures
        .iter()
        .find(|f| f.variant == "no_fence")
        .or(report.failures.first())
    else {
        println!("\nno failing execution this time (try --runs 100)");
        return Ok(1);
    };
    println!(
        "\nreplaying execution {} (variant {}, model {}, p_w={}, seed {}):",
        f.id, f.variant, f.model, f.p, f.seed
    );
    let job = plan.job(f.id);
    let prep = &preps[job.variant];
    let spec = fencehound_fuzzer::ExecSpec {
        id: job.id,
        model: job.model,
        p: job.p,
        seed: job.seed,
        scheduler: plan.scheduler,
        trace: true,
        filters: Default::default(),
        race: false,
    };
    let r = fencehound_fuzzer::execute(prep, &spec, None);
    let _ = fuzz::show_exec(
        &r,
        prep,
        false,
        TraceMode::Global { limit: 16 },
        Some(&f.output_hash),
    );
    println!(
        "\nreproduce it yourself:\n  fencehound replay {} --exec {} --trace",
        report_path.display(),
        f.id
    );
    if mism.is_empty() {
        println!("\ndemo: every variant behaved as expected (fenced variants clean, underfenced ones caught).");
        Ok(0)
    } else {
        println!("\ndemo: some variants did not behave as expected (see above).");
        Ok(1)
    }
}
