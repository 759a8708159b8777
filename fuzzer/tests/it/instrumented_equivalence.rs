//! What the instrumented kernels compute on the vgpu, execution for execution:
//! - at `p_w = 0` (nothing buffered) the instrumented kernel meets the vgpu's scheduler
//!   where the original does (the runtime's calls and the code the rewrite adds are quiet,
//!   `fencehound_vgpu::Quiet`), so with the same seed it runs the same interleaving as the
//!   original under the native handlers: the same output bytes for every variant of every
//!   campaign, the spinning ones (look-back, work stealing, queues) included;
//! - the register-capped form (`fencehound instrument --max-extra-registers`: `.maxnreg`
//!   and indirect calls into the runtime) computes what the uncapped one does: the same
//!   verdict, output bytes and buffer statistics under `bugaroo` and `scoped`. Only the
//!   lane-instruction count differs (a `mov` of the callee's address per runtime call);
//! - a fast kernel keeps the header's changing words in registers from its entry to its
//!   exit, written back only before runtime calls (and calls of the module's functions)
//!   and its statistics at the exit: it computes what the form that writes them back
//!   after every block (`RewriteOptions::eager_header`, the header current between
//!   blocks, as the lockstep flavour the differential test checks keeps it) computes —
//!   the same verdict, output bytes and buffer statistics, execution for execution;
//! - a module for one model (`RewriteOptions::model`: what `fencehound instrument --model`
//!   writes and the instrumented backends run) computes what the module for both models
//!   (the launch's flag choosing at each site) computes, in fewer lane instructions in
//!   all (a few executions that spin or call the runtime differently run a few more).

use fencehound_fuzzer::backend::instrumented::Instrumented;
use fencehound_fuzzer::backend::{Backend, Vgpu};
use fencehound_fuzzer::{prepare, Campaign, ExecResult, ExecSpec, Prepared};
use fencehound_handlers::Model;
use std::path::Path;
use std::sync::Arc;

fn variants() -> Vec<(String, Prepared)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in &files {
        let c = Arc::new(Campaign::load(f).unwrap());
        for v in c.variant_names() {
            out.push((format!("{} {v}", c.name), prepare(c.clone(), v).unwrap()));
        }
    }
    assert!(out.len() >= 26, "{} variants", out.len());
    out
}

#[test]
fn at_p_w_0_the_instrumented_kernel_runs_the_native_interleaving() {
    let instrumented = Instrumented::new();
    let mut diffs = Vec::new();
    for (name, prep) in variants() {
        for seed in 0..3 {
            let n = Vgpu.execute(&prep, &ExecSpec::random(Model::Sc, 0.0, seed), None);
            for model in [Model::Bugaroo, Model::Scoped] {
                let i = instrumented.execute(&prep, &ExecSpec::random(model, 0.0, seed), None);
                assert!(i.lane_instructions > 0, "{name}: {:?}", i.verdict);
                if i.output_hash != n.output_hash || i.verdict != n.verdict {
                    diffs.push(format!(
                        "{name} {} seed {seed}: native {:?}, instrumented {:?}",
                        model.name(),
                        n.verdict.name(),
                        i.verdict.name()
                    ));
                }
            }
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Each variant run by backends `a` and `b` with the same spec, for every (model, p_w)
/// of `cases` and every seed of `seeds`: its name and both results (`a`'s checked to
/// have run: an execution that could not run has no instructions).
fn both_runs(
    a: &Instrumented,
    b: &Instrumented,
    cases: &[(Model, f64)],
    seeds: std::ops::Range<u64>,
) -> Vec<(String, ExecResult, ExecResult)> {
    let mut out = Vec::new();
    for (name, prep) in variants() {
        for &(model, p) in cases {
            for seed in seeds.clone() {
                let ra = a.execute(&prep, &ExecSpec::random(model, p, seed), None);
                let rb = b.execute(&prep, &ExecSpec::random(model, p, seed), None);
                let what = format!("{name} {} p={p} seed {seed}", model.name());
                assert!(ra.lane_instructions > 0, "{what}: {:?}", ra.verdict);
                out.push((what, ra, rb));
            }
        }
    }
    out
}

/// Whether two executions computed the same: verdict, output bytes, buffer statistics.
fn same(a: &ExecResult, b: &ExecResult) -> bool {
    a.verdict == b.verdict && a.output_hash == b.output_hash && a.stats == b.stats
}

/// The pairs of `runs` that did not compute the same, with both verdicts and statistics.
fn differing(runs: &[(String, ExecResult, ExecResult)]) -> Vec<String> {
    runs.iter()
        .filter(|(_, a, b)| !same(a, b))
        .map(|(what, a, b)| {
            format!(
                "{what}: {:?} vs {:?}\n  {:?}\n  {:?}",
                a.verdict, b.verdict, a.stats, b.stats
            )
        })
        .collect()
}

/// How many of `runs` failed (first side).
fn failures(runs: &[(String, ExecResult, ExecResult)]) -> usize {
    runs.iter()
        .filter(|(_, a, _)| a.verdict.is_failure())
        .count()
}

#[test]
fn capped_and_uncapped_instrumented_kernels_agree_execution_for_execution() {
    let runs = both_runs(
        &Instrumented::new(),
        &Instrumented::with_register_caps(16),
        &[(Model::Bugaroo, 0.5), (Model::Scoped, 1.0)],
        0..2,
    );
    let mut diffs = Vec::new();
    for (what, a, b) in &runs {
        if !same(a, b) {
            diffs.push(format!("{what}: {:?} vs {:?}", a.verdict, b.verdict));
        }
        if b.lane_instructions <= a.lane_instructions {
            diffs.push(format!(
                "{what}: capped ran {} lane instructions, uncapped {}",
                b.lane_instructions, a.lane_instructions
            ));
        }
    }
    let compared = runs.len();
    let failing = failures(&runs);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    assert!(compared >= 26 * 4, "{compared} executions");
    // The comparison covers failing executions too, not only passing ones.
    assert!(failing > 0);
}

#[test]
fn registers_kept_to_the_exit_and_a_header_kept_current_agree_execution_for_execution() {
    let runs = both_runs(
        &Instrumented::new(),
        &Instrumented::with_eager_header(),
        &[
            (Model::Bugaroo, 0.5),
            (Model::Bugaroo, 1.0),
            (Model::Scoped, 0.25),
            (Model::Scoped, 1.0),
        ],
        0..2,
    );
    let diffs = differing(&runs);
    let compared = runs.len();
    let failing = failures(&runs);
    let buffered: u64 = runs
        .iter()
        .map(|(_, a, _)| a.stats.global.stores_buffered + a.stats.shared.stores_buffered)
        .sum();
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    assert!(compared >= 26 * 8, "{compared} executions");
    assert!(failing > 0);
    assert!(buffered > 0);
}

#[test]
fn a_module_for_one_model_and_the_module_for_both_agree_execution_for_execution() {
    // One seed: the variants, models and p_w cover the sites; the suite's time matters
    // (CI).
    let runs = both_runs(
        &Instrumented::new(),
        &Instrumented::generic(),
        &[
            (Model::Bugaroo, 0.5),
            (Model::Bugaroo, 1.0),
            (Model::Scoped, 0.5),
            (Model::Scoped, 1.0),
        ],
        0..1,
    );
    let diffs = differing(&runs);
    let compared = runs.len();
    let failing = failures(&runs);
    let fewer = runs
        .iter()
        .filter(|(_, a, b)| a.lane_instructions < b.lane_instructions)
        .count();
    let lanes = runs.iter().fold((0u64, 0u64), |(x, y), (_, a, b)| {
        (x + a.lane_instructions, y + b.lane_instructions)
    });
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    assert!(compared >= 26 * 4, "{compared} executions");
    assert!(failing > 0);
    // The specialisation removes work (no per-site model test) wherever a global access
    // or a drain runs in a full launch.
    assert!(
        fewer > compared / 2,
        "{fewer} of {compared} ran fewer instructions"
    );
    assert!(lanes.0 < lanes.1, "lane instructions in all: {lanes:?}");
}
