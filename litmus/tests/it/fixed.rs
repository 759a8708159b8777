//! The soundness bugs the generator and the pattern forms found (`litmus/UNSOUND.md`),
//! fixed in wave 3: each minimal program (`tests/fixed/ID.litmus`) names, in `exists`, a
//! final state the PTX model forbids — the checker says so, the checker weakened in the
//! one way that bug weakened the model allows it (so the program exercises that bug), and
//! no operational model produces it any more. The allowlist of `src/known.rs` is empty.

use fencehound_handlers::Model;
use fencehound_litmus::axiom::{self, Forms, Options};
use fencehound_litmus::known::KNOWN;
use fencehound_litmus::suite::{expand, run_test, FileStatus};
use fencehound_litmus::RunConfig;
use std::path::PathBuf;

/// The weakening of the checker that each bug amounted to.
fn weakened(id: &str) -> Options {
    let mut o = Options::default();
    match id {
        "hb-pattern-forms" => {
            o.forms = Forms {
                release_then_write: false,
                read_then_acquire: false,
            }
        }
        "weak-late-insertion" => {
            o.co_transitive = false;
            o.sc_per_location = false;
        }
        "failed-cas-writes-back" => o.failed_cas_writes = true,
        "hb-rmw-publishes-acquired" => o.rmw_publishes_acquired = false,
        "hb-sc-fence-wide-to-cta" => o.sc_wide_to_cta = false,
        other => panic!("{other}: no weakening known for this program"),
    }
    o
}

#[test]
fn fixed_soundness_bugs_stay_fixed_under_every_model() {
    assert!(
        KNOWN.is_empty(),
        "known bugs: {:?}",
        KNOWN.iter().map(|k| k.id).collect::<Vec<_>>()
    );
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixed");
    let files = expand(&[dir]).unwrap();
    assert_eq!(files.len(), 5);
    let cfg = RunConfig {
        runs: 4000,
        ..RunConfig::default()
    };
    for f in &files {
        let id = f.file_stem().unwrap().to_string_lossy().to_string();
        let t = fencehound_litmus::load(f).unwrap();
        let v = axiom::verdict(&t, &Options::default()).unwrap();
        assert!(!v.target_allowed, "{id}: the PTX model allows its target");
        let w = axiom::verdict(&t, &weakened(&id)).unwrap();
        assert!(
            w.target_allowed,
            "{id}: the weakened checker forbids it too"
        );
        let models = [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak];
        match run_test(&id, &t, &models, &cfg, None) {
            FileStatus::Ran { models: ms, .. } => {
                for (m, r) in models.iter().zip(&ms) {
                    assert_eq!(r.faults, 0, "{id} under {}: {:?}", m.name(), r.first_fault);
                    assert_eq!(
                        r.satisfied,
                        0,
                        "{id}: {} produced the forbidden state",
                        m.name()
                    );
                }
            }
            other => panic!("{id}: {other:?}"),
        }
    }
}
