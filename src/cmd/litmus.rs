//! `fencehound litmus FILE...`: run PTX litmus tests under the operational models and judge
//! them with the axiomatic checker of the PTX memory model (`--expect CSV` cross-checks
//! the checker's verdicts). `fencehound litmus --generate N`: run N generated programs
//! under every model and report unsound outcomes and the coverage of weak outcomes.
use anyhow::{bail, Context, Result};
use fencehound_handlers::Model;
use fencehound_litmus::expect::Expectations;
use fencehound_litmus::soundness;
use fencehound_litmus::suite::{expand, render_file, render_summary, run_suite};
use fencehound_litmus::RunConfig;
use std::io::Write as _;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Litmus files, or directories searched for `*.litmus` (not with --generate).
    files: Vec<PathBuf>,
    /// Run N generated programs (2–4 threads × ≤ 3 operations) instead of files.
    #[arg(long, value_name = "N")]
    generate: Option<u64>,
    /// Executions per test and model [default: 1000 for files, 300 with --generate].
    #[arg(long)]
    runs: Option<u64>,
    /// Models to run (sc, bugaroo, scoped, weak).
    #[arg(long, value_delimiter = ',', default_value = "sc,bugaroo,scoped,weak")]
    models: Vec<String>,
    /// Store-buffering probabilities, cycled over executions.
    #[arg(long = "p", value_delimiter = ',', default_value = "0.5,1")]
    p: Vec<f64>,
    /// Master seed; execution i uses a seed derived from it and i (with --generate, also
    /// which programs are generated).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Model verdicts (`PATH,0|1` lines, e.g. expected-ptx-v7.5.csv): a cross-check of the
    /// checker's verdicts (disagreements are reported), and the verdict for files the
    /// checker does not take.
    #[arg(long)]
    expect: Option<PathBuf>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Print every final state of every test, not only of unsound ones.
    #[arg(long, short)]
    verbose: bool,
    /// With --generate: `weak` goes on, --runs executions at a time up to this many,
    /// while a plain weak outcome of the program is still missing [default: 20 × runs].
    #[arg(long)]
    weak_runs: Option<u64>,
    /// With --generate: leave out (and redraw) programs with more allowed final states.
    #[arg(long, default_value_t = 64)]
    max_states: usize,
    /// Rows per coverage table with --generate (the rest are summed as "other").
    #[arg(long, default_value_t = 30)]
    rows: usize,
    /// Machine-readable report on stdout.
    #[arg(long)]
    json: bool,
    /// Lay a file's locations out as consecutive 32-bit words (two to an 8-byte block,
    /// as a struct's fields) instead of one 8-byte block each. With --generate, every
    /// odd-numbered program is packed whatever this says.
    #[arg(long)]
    packed: bool,
    /// With --generate: judge the race check instead — every pair of conflicting
    /// accesses the axiomatic checker finds unordered in some consistent execution is
    /// compared with what the race check reports over --runs executions per model
    /// (false alarms, wrong classes, missed required reports).
    #[arg(long)]
    race: bool,
}

/// Exits 1 when any forbidden outcome was produced (or the checker and --expect disagree,
/// or with --generate the `sc` model produced a state the checker finds not sequentially
/// consistent), 2 on usage or input errors.
pub fn run(args: Args) -> Result<u8> {
    let mut models = Vec::new();
    for m in &args.models {
        match Model::parse(m.trim()) {
            Some(x) if !models.contains(&x) => models.push(x),
            Some(_) => {}
            None => bail!("unknown model `{m}` (expected sc, bugaroo, scoped, weak)"),
        }
    }
    if args.runs == Some(0) {
        bail!("--runs must be at least 1");
    }
    if let Some(p) = args.p.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        bail!("--p {p} is not a probability in [0, 1]");
    }
    let workers = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    if let Some(n) = args.generate {
        if !args.files.is_empty() {
            bail!("give litmus files or --generate N, not both");
        }
        if args.expect.is_some() {
            bail!("--expect applies to litmus files, not to --generate");
        }
        if n == 0 {
            bail!("--generate needs at least 1 program");
        }
        if args.race {
            return race(&args, n, models, workers);
        }
        return generate(&args, n, models, workers);
    }
    if args.files.is_empty() {
        bail!("no litmus files given (or use --generate N)");
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
        runs: args.runs.unwrap_or(1000),
        p_w: args.p.clone(),
        seed: args.seed,
        workers,
        layout: if args.packed {
            fencehound_litmus::lower::Layout::Packed
        } else {
            fencehound_litmus::lower::Layout::Spread
        },
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
    Ok(
        if report.summary.unsound() > 0 || !report.summary.disagreements.is_empty() {
            crate::exit::FOUND
        } else if !report.summary.errors.is_empty() {
            crate::exit::INPUT
        } else {
            crate::exit::OK
        },
    )
}

/// Progress on stderr over `n` generated programs (none with --json).
fn progress(args: &Args, n: u64) -> impl Fn(u64) + Sync {
    let quiet = args.json;
    let step = (n / 20).max(1);
    move |done| {
        if !quiet && (done % step == 0 || done == n) {
            eprint!("\r{done}/{n} programs");
            if done == n {
                eprintln!();
            }
        }
    }
}

/// The report on stdout: JSON with --json, else `text()`.
fn emit<R: serde::Serialize>(args: &Args, rep: &R, text: impl FnOnce() -> String) -> Result<()> {
    if args.json {
        let s = serde_json::to_string_pretty(rep)?;
        let _ = writeln!(std::io::stdout().lock(), "{s}");
    } else {
        let _ = std::io::stdout().lock().write_all(text().as_bytes());
    }
    Ok(())
}

/// `--generate N --race`: exits 1 on a false alarm, a wrong class or a missed report.
fn race(args: &Args, n: u64, models: Vec<Model>, workers: usize) -> Result<u8> {
    use fencehound_litmus::racejudge;
    let cfg = racejudge::Config {
        count: n,
        seed: args.seed,
        runs: args.runs.unwrap_or(200),
        models,
        p_w: args.p.clone(),
        workers,
    };
    let rep = racejudge::run(&cfg, progress(args, n));
    emit(args, &rep, || racejudge::render(&rep, args.rows))?;
    Ok(
        if rep.false_alarms.is_empty() && rep.wrong_class.is_empty() && rep.misses.is_empty() {
            crate::exit::OK
        } else {
            crate::exit::FOUND
        },
    )
}

fn generate(args: &Args, n: u64, models: Vec<Model>, workers: usize) -> Result<u8> {
    let runs = args.runs.unwrap_or(300);
    let cfg = soundness::Config {
        count: n,
        seed: args.seed,
        runs,
        weak_runs: args.weak_runs.unwrap_or(runs * 20).max(runs),
        models,
        workers,
        p_w: args.p.clone(),
        max_states: args.max_states,
    };
    let rep = soundness::run(&cfg, progress(args, n));
    emit(args, &rep, || soundness::render(&rep, args.rows))?;
    Ok(if !rep.unsound.is_empty() || !rep.sc_mismatch.is_empty() {
        crate::exit::FOUND
    } else {
        crate::exit::OK
    })
}
