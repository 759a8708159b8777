//! The tests that run the Dat3M PTX litmus suite (`../shared/litmus` beside the workspace,
//! or `$FENCEHOUND_LITMUS_DIR`): the axiomatic checker against its verdicts
//! ([`axiom`]), every operational model on it ([`suite`]), and the device-side rewrite on
//! it ([`rewrite`]).
//!
//! Those files are not in the repository, so this binary has its own harness
//! (`harness = false`, like `tests/html_browser.rs`): where the directory is missing (a
//! clone outside the team's tree) each test prints that it was SKIPPED and no `test
//! result:` line is printed, so nothing counts it as passed. Until 2026-12-06 five of these
//! were ordinary `#[test]`s that returned early without the suite — passed, having checked
//! nothing. Likewise a test that needs ptxas is SKIPPED, not passed, where there is none.
//!
//! Tests run on two threads (as libtest does on this team's 2-core machines), longest
//! first; arguments that do not start with `-` filter by substring, as libtest's do.

mod axiom;
mod rewrite;
mod suite;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

struct Test {
    name: &'static str,
    run: fn(&Path),
    /// Assembles with ptxas.
    needs_ptxas: bool,
}

/// Longest first (seconds on the team VM, 2026-12-06: 109, 53, 9, 6, 2.4, 0.3).
const TESTS: &[Test] = &[
    Test {
        name: "rewrite::every_rewritten_litmus_test_assembles",
        run: rewrite::every_rewritten_litmus_test_assembles,
        needs_ptxas: true,
    },
    Test {
        name: "rewrite::every_litmus_test_matches_native",
        run: rewrite::every_litmus_test_matches_native,
        needs_ptxas: false,
    },
    Test {
        name: "suite::whole_suite_is_sound_under_every_model",
        run: suite::whole_suite_is_sound_under_every_model,
        needs_ptxas: false,
    },
    Test {
        name: "rewrite::device_policy_is_sound_on_the_suite",
        run: rewrite::device_policy_is_sound_on_the_suite,
        needs_ptxas: false,
    },
    Test {
        name: "suite::generated_ptx_assembles_with_ptxas",
        run: suite::generated_ptx_assembles_with_ptxas,
        needs_ptxas: true,
    },
    Test {
        name: "axiom::axiomatic_checker_agrees_with_every_dat3m_verdict",
        run: axiom::axiomatic_checker_agrees_with_every_dat3m_verdict,
        needs_ptxas: false,
    },
];

/// How many tests' weak targets (allowed by PTX, never produced under `sc`) `model`
/// reached in a suite run.
fn weak_power(summary: &fencehound_litmus::suite::Summary, model: &str) -> usize {
    summary
        .models
        .iter()
        .find(|x| x.model == model)
        .map_or(0, |x| x.weak_targets_reached.len())
}

fn suite_dir() -> PathBuf {
    std::env::var_os("FENCEHOUND_LITMUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/litmus"))
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected: Vec<&Test> = TESTS
        .iter()
        .filter(|t| filters.is_empty() || filters.iter().any(|f| t.name.contains(f.as_str())))
        .collect();
    let dir = suite_dir();
    let have_suite = dir.join("expected-ptx-v7.5.csv").exists() && dir.join("ptx").is_dir();
    let have_ptxas = fencehound_toolchain::find_ptxas().is_ok();
    let (runnable, skipped): (Vec<&Test>, Vec<&Test>) = selected
        .into_iter()
        .partition(|t| have_suite && (have_ptxas || !t.needs_ptxas));
    let why = if !have_suite {
        format!("{} not found (set FENCEHOUND_LITMUS_DIR)", dir.display())
    } else {
        "no ptxas (run scripts/setup-cuda.sh)".to_string()
    };
    for t in &skipped {
        println!("test {} ... SKIPPED: {why}; not counted as passed", t.name);
    }
    if runnable.is_empty() {
        return;
    }
    println!("\nrunning {} tests", runnable.len());
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(t) = runnable.get(i) else { break };
                let t0 = Instant::now();
                // A thread named after the test, so that its panic message names it.
                let ok = std::thread::Builder::new()
                    .name(t.name.to_string())
                    .spawn_scoped(sc, || (t.run)(&dir))
                    .expect("spawn a test thread")
                    .join()
                    .is_ok();
                let secs = t0.elapsed().as_secs_f64();
                if ok {
                    println!("test {} ... ok <{secs:.1}s>", t.name);
                } else {
                    println!("test {} ... FAILED <{secs:.1}s>", t.name);
                    failed
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(t.name);
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap_or_else(|p| p.into_inner());
    let secs = start.elapsed().as_secs_f64();
    let passed = runnable.len() - failed.len();
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    if !failed.is_empty() {
        println!("\nfailures:");
        for f in &failed {
            println!("    {f}");
        }
    }
    println!(
        "\ntest result: {verdict}. {passed} passed; {} failed; 0 ignored; 0 measured; \
         {} filtered out; finished in {secs:.2}s\n",
        failed.len(),
        TESTS.len() - runnable.len() - skipped.len()
    );
    if !failed.is_empty() {
        std::process::exit(101);
    }
}
