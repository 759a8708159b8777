//! `fencehound litmus FILE...`: run PTX litmus tests under the write-buffer models and,
//! with `--expect`, judge them against the PTX memory model's verdicts.
use anyhow::{bail, Context, Result};
use fencehound_handlers::Model;
use fencehound_litmus::expect::Expectations;
use fencehound_litmus::suite::{expand, render_file, render_summary, run_suite};
use fencehound_litmus::RunConfig;
use std::io::Write as _;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Litmus files, or directories searched for `*.litmus`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Executions per test and model.
    #[arg(long, default_value_t = 1000)]
    runs: u64,
    /// Models to run (sc, bugaroo, scoped, weak).
    #[arg(long, value_delimiter = ',', default_value = "sc,bugaroo,scoped,weak")]
    models: Vec<String>,
    /// Store-buffering probabilities, cycled over executions.
    #[arg(long = "p", value_delimiter = ',', default_value = "0.5,1")]
    p: Vec<f64>,
    /// Master seed; execution i uses a seed derived from it and i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Model verdicts (`PATH,0|1` lines, e.g. expected-ptx-v7.5.csv): report unsound
    /// outcomes and power.
    #[arg(long)]
    expect: Option<PathBuf>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Print every final state of every test, not only of unsound ones.
    #[arg(long, short)]
    verbose: bool,
    /// Machine-readable report on stdout.
    #[arg(long)]
    json: bool,
}

/// Exits 1 when any forbidden outcome was produced, 2 on usage or input errors.
pub fn run(args: Args) -> Result<u8> {
    let mut models = Vec::new();
    for m in &args.models {
        match Model::parse(m.trim()) {
            Some(x) if !models.contains(&x) => models.push(x),
            Some(_) => {}
            None => bail!("unknown model `{m}` (expected sc, bugaroo, scoped, weak)"),
        }
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if let Some(p) = args.p.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        bail!("--p {p} is not a probability in [0, 1]");
    }
    let expect = match &args.expect {
        Some(p) => Some(Expectations::load(p).with_context(|| "cannot read --expect")?),
        None => None,
    };
    let files = expand(&args.files)?;
    if files.is_empty() {
        bail!("no .litmus files found");
    }
    let cfg = RunConfig {
        runs: args.runs,
        p_w: args.p.clone(),
        seed: args.seed,
        workers: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1),
        ..RunConfig::default()
    };
    let json = args.json;
    let verbose = args.verbose;
    let report = run_suite(&files, &models, &cfg, expect.as_ref(), |r| {
        if !json {
            // A closed pipe is not an error worth reporting.
            let _ = std::io::stdout()
                .lock()
                .write_all(render_file(r, verbose).as_bytes());
        }
    });
    if json {
        let s = serde_json::to_string_pretty(&report)?;
        let _ = writeln!(std::io::stdout().lock(), "{s}");
    } else {
        let _ = std::io::stdout()
            .lock()
            .write_all(render_summary(&report.summary).as_bytes());
    }
    Ok(if report.summary.unsound() > 0 {
        crate::exit::FOUND
    } else if !report.summary.errors.is_empty() {
        crate::exit::INPUT
    } else {
        crate::exit::OK
    })
}
