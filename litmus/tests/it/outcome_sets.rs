//! The outcome sets each operational model produces on a fixed sample of generated
//! litmus programs, compared with a committed snapshot (`outcome_sets.json`): a change
//! that makes the vgpu or a model faster must not shrink what the models can produce
//! (issue 24, "nothing lost"). Executions are seeded, so the sets are a pure function of
//! the code: any difference fails the test, a lost outcome as a regression, a new one as
//! a change to look at (is it allowed? `fencehound litmus --generate` judges that).
//! After checking a difference is intended, re-record with
//! `FENCEHOUND_BLESS=1 cargo test -p fencehound-litmus --test it outcome_sets::`.

use fencehound_handlers::Model;
use fencehound_litmus::generate::{generate, program_seed};
use fencehound_litmus::{lower, run_model, RunConfig};
use std::collections::{BTreeMap, BTreeSet};

const SEED: u64 = 5;
const PROGRAMS: u64 = 80;
const RUNS: u64 = 150;

fn sets() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for i in 0..PROGRAMS {
        let t = generate(SEED, i);
        let low = lower("gen", &t).unwrap_or_else(|e| panic!("program {i}: {e}"));
        for m in [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak] {
            let cfg = RunConfig {
                runs: RUNS,
                seed: program_seed(SEED, i),
                workers: 2,
                ..RunConfig::default()
            };
            let h = run_model(&t, &low, m, &cfg);
            let mut s: BTreeSet<String> = h.states.keys().map(|v| format!("{v:?}")).collect();
            if h.hangs > 0 {
                s.insert("hang".into());
            }
            if h.faults > 0 {
                s.insert("fault".into());
            }
            out.insert(format!("{i:03} {}", m.name()), s);
        }
    }
    out
}

#[test]
fn models_produce_the_recorded_outcome_sets() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/outcome_sets.json");
    let now = sets();
    if std::env::var_os("FENCEHOUND_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&now).expect("serialize");
        std::fs::write(&path, text + "\n").expect("write snapshot");
        return;
    }
    let text = std::fs::read_to_string(&path).expect("tests/outcome_sets.json (bless it first)");
    let then: BTreeMap<String, BTreeSet<String>> = serde_json::from_str(&text).expect("parse");
    assert_eq!(then.len(), now.len(), "sample size changed");
    let mut lost = Vec::new();
    let mut new = Vec::new();
    for (k, before) in &then {
        let after = &now[k];
        for s in before.difference(after) {
            lost.push(format!("program/model {k}: {s}"));
        }
        for s in after.difference(before) {
            new.push(format!("program/model {k}: {s}"));
        }
    }
    let total: usize = then.values().map(|s| s.len()).sum();
    eprintln!(
        "{} (program, model) cells, {total} outcomes recorded",
        then.len()
    );
    assert!(lost.is_empty(), "outcomes lost:\n{}", lost.join("\n"));
    assert!(
        new.is_empty(),
        "outcomes new (bless if intended):\n{}",
        new.join("\n")
    );
}
