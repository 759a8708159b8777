//! The campaign corpus (`campaigns/*.toml`): every variant behaves as its `expect` says.
//!
//! Each campaign runs through the library exactly as `fencehound fuzz --check-expect` does
//! (same master seed, models, `p_w` values and scheduler as the file), with fewer runs per
//! (variant, model, `p_w`) cell: `FENCEHOUND_CORPUS_RUNS` (default below), never more than
//! the file's own `runs`. Seeds are fixed, so the outcome is deterministic; the default is
//! chosen so that every underfenced variant fails many times over (see campaigns/README.md
//! for the measured failure rates), which keeps the test robust to small changes in the
//! scheduler or the buffers.
//!
//! Beyond `expect`, the corpus must hold to a few rules: every `.toml` names an existing
//! `.cu`, every variant states an expectation for every model it is fuzzed under, and no
//! execution may hit the wall-clock limit (that would make results machine-dependent).

use fencehound_fuzzer::{prepare, runner, Campaign, Plan, Verdict};
use fencehound_handlers::Model;
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

const DEFAULT_RUNS: u32 = 50;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns")
}

fn campaign_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("campaigns/ exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn runs() -> u32 {
    std::env::var("FENCEHOUND_CORPUS_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_RUNS)
}

/// Runs one campaign; returns the problems found (empty: as expected).
fn check(path: &Path, runs: u32, jobs: usize) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let c = match Campaign::load(path) {
        Ok(c) => Arc::new(c),
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let mut problems = Vec::new();
    if !c.source.exists() {
        problems.push(format!(
            "{name}: source {} does not exist",
            c.source.display()
        ));
        return problems;
    }
    let models: Vec<Model> = c
        .file
        .fuzz
        .models
        .iter()
        .map(|m| Model::parse(m).expect("validated by Campaign::load"))
        .collect();
    for (v, spec) in &c.variants {
        for m in &models {
            if spec.expect_for(m.name()).is_none() {
                problems.push(format!(
                    "{name}: variant `{v}` states no expectation under {}",
                    m.name()
                ));
            }
        }
    }
    let mut preps = Vec::new();
    for v in c.variant_names() {
        match prepare(c.clone(), v) {
            Ok(p) => preps.push(Arc::new(p)),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let plan = Plan {
        variants: preps.iter().map(|p| p.variant.clone()).collect(),
        models,
        ps: c.file.fuzz.p.clone(),
        runs: runs.min(c.file.fuzz.runs).max(1),
        master_seed: c.file.seed,
        scheduler: SchedulerKind::parse(&c.file.fuzz.scheduler)
            .expect("validated by Campaign::load"),
        scheduler_name: c.file.fuzz.scheduler.clone(),
        jobs,
        stop_at_first: false,
        race: false,
    };
    let start = Instant::now();
    let report = match runner::run(
        &c,
        preps,
        &plan,
        None,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    ) {
        Ok(r) => r,
        Err(e) => return vec![format!("{name}: runner: {e}")],
    };
    eprintln!(
        "{name}: {} executions in {:.1}s",
        report.executions_done,
        start.elapsed().as_secs_f64()
    );
    for cell in &report.summary {
        eprintln!(
            "  {:<16} {:<8} p_w={:<5} {:>3}/{:<3} failing (expect {})",
            cell.variant,
            cell.model,
            cell.p,
            cell.failures,
            cell.runs,
            cell.expect.as_deref().unwrap_or("-")
        );
    }
    if report.executions_done != plan.total() {
        problems.push(format!(
            "{name}: {} of {} executions done",
            report.executions_done,
            plan.total()
        ));
    }
    for m in report.expectation_mismatches() {
        problems.push(format!("{name}: {m}"));
    }
    // Signatures cover every failure (only the first few per cell are stored in full).
    let wall = Verdict::Timeout {
        dump: String::new(),
        wall: true,
    }
    .summary();
    for s in &report.signatures {
        if s.detail == wall {
            problems.push(format!(
                "{name}: execution {} (variant {} model {} p_w={}) hit the wall-clock limit: raise [budget] wall_ms or shrink the campaign",
                s.first_id, s.variant, s.model, s.p
            ));
        }
    }
    // Show one failure of each expected-pass variant that failed, to make the message useful.
    for f in &report.failures {
        let expected_pass = report
            .variants
            .iter()
            .find(|v| v.name == f.variant)
            .and_then(|v| v.expect.get(&f.model))
            .is_some_and(|e| e == "pass");
        if expected_pass {
            problems.push(format!(
                "{name}: e.g. execution {} (variant {} model {} p_w={} seed {}): {}",
                f.id,
                f.variant,
                f.model,
                f.p,
                f.seed,
                f.verdict.summary()
            ));
            break;
        }
    }
    problems
}

#[test]
fn every_campaign_meets_its_expectations() {
    let files = campaign_files();
    assert!(
        !files.is_empty(),
        "no campaigns in {}",
        corpus_dir().display()
    );
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let runs = runs();
    let start = Instant::now();
    let mut problems = Vec::new();
    for f in &files {
        problems.extend(check(f, runs, jobs));
    }
    eprintln!(
        "corpus: {} campaigns in {:.1}s",
        files.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "corpus problems:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_kernel_file_belongs_to_a_campaign() {
    let dir = corpus_dir();
    let sources: Vec<PathBuf> = campaign_files()
        .iter()
        .map(|f| Campaign::load(f).unwrap_or_else(|e| panic!("{e}")).source)
        .map(|s| s.canonicalize().unwrap_or(s))
        .collect();
    for e in std::fs::read_dir(&dir).expect("campaigns/ exists") {
        let p = e.expect("readable directory entry").path();
        if p.extension().is_some_and(|e| e == "cu") {
            let p = p.canonicalize().unwrap_or(p);
            assert!(
                sources.contains(&p),
                "{} is not the source of any campaign",
                p.display()
            );
        }
    }
}
