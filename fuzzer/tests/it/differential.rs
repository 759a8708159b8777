//! The rewrite against the native handlers on the campaign corpus: for every variant of
//! every campaign, under `bugaroo` and `scoped`, the rewritten PTX (lockstep flavour) on
//! plain memory and the original under the native handlers (device policy) must give, for
//! the same seeds, the same writes to memory in the same order, outputs, verdict and
//! statistics (see `fencehound_fuzzer::backend::differential`). Here a few seeds per cell;
//! the 100-seed sweep over every `p_w` is `cargo run --release -p fencehound-fuzzer
//! --example differential` (results in fuzzer/DIFFERENTIAL.md).

use fencehound_fuzzer::backend::differential::Differential;
use fencehound_fuzzer::{prepare, Campaign};
use fencehound_handlers::Model;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn campaign_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_campaign_variant_matches_native() {
    let mut fails = Vec::new();
    let mut runs = 0;
    let mut failing = 0;
    let mut buffered = 0u64;
    for path in campaign_files() {
        let c = Arc::new(Campaign::load(&path).unwrap());
        for v in c.variant_names() {
            let prep = prepare(c.clone(), v).unwrap_or_else(|e| panic!("{e}"));
            let d = Differential::new(&prep).unwrap_or_else(|e| panic!("{}: {v}: {e}", c.name));
            for model in [Model::Bugaroo, Model::Scoped] {
                for (k, p) in [0.5, 1.0].into_iter().enumerate() {
                    {
                        let seed = k as u64 + 7 * model as u64;
                        let r = d
                            .compare(&prep, model, p, seed)
                            .unwrap_or_else(|e| panic!("{} {v}: {e}", c.name));
                        runs += 1;
                        failing += r.verdict.is_failure() as u32;
                        buffered += r.stats.global.stores_buffered + r.stats.shared.stores_buffered;
                        if let Some(div) = r.divergence {
                            fails.push(format!(
                                "{} variant {v} {} p={p} seed={seed}:\n{div}",
                                c.name,
                                model.name()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n\n"));
    eprintln!("{runs} executions equal ({failing} failing, {buffered} stores buffered)");
    // The sweep must see both outcomes, or it would not show the bugs are found the same.
    assert!(failing > 0 && failing < runs, "{failing}/{runs} failing");
}
