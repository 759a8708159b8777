//! End-to-end tests of `fencehound litmus`: the axiomatic checker as verdict source, the
//! `--expect` cross-check, `--generate`, and usage errors (exit 2).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{assert_exit, text};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

fn litmus(args: &[&str]) -> Output {
    let out = Command::new(BIN)
        .arg("litmus")
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("run fencehound");
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    out
}

fn patterns(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("litmus/tests/patterns")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn the_checker_gives_the_verdict_and_expect_cross_checks_it() {
    let f = patterns("rel-a_acq-a.litmus");
    let o = litmus(&[&f, "--models", "sc,bugaroo", "--runs", "50", "--jobs", "1"]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("target forbidden by the PTX model (the checker); every state judged"),
        "{out}"
    );
    // A CSV that disagrees with the checker: reported, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("wrong.csv");
    std::fs::write(&csv, "rel-a_acq-a.litmus,1\n").unwrap();
    let o = litmus(&[
        &f,
        "--models",
        "sc",
        "--runs",
        "20",
        "--expect",
        csv.to_str().unwrap(),
    ]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("DISAGREEMENT"), "{out}");
    // One that agrees: exit 0, nothing reported.
    std::fs::write(&csv, "rel-a_acq-a.litmus,0\n").unwrap();
    let o = litmus(&[
        &f,
        "--models",
        "sc",
        "--runs",
        "20",
        "--expect",
        csv.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    assert!(!text(&o.stdout).contains("DISAGREEMENT"));
}

#[test]
fn generate_reports_programs_unsound_outcomes_and_coverage() {
    let o = litmus(&[
        "--generate",
        "6",
        "--runs",
        "30",
        "--seed",
        "5",
        "--jobs",
        "2",
    ]);
    let out = text(&o.stdout);
    assert!(
        out.contains("generated 6 programs (seed 5, 30 runs per model"),
        "{out}"
    );
    assert!(out.contains("| shape | tests | weak outcomes |"), "{out}");
    // Exit 1 exactly when some model produced a forbidden state.
    let unsound = out.contains("\nUNSOUND under ");
    assert_exit(&o, if unsound { 1 } else { 0 });
    let o = litmus(&["--generate", "3", "--runs", "10", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["tests"], 3);
    assert!(v["by_shape"].is_object() && v["unsound"].is_array());
}

#[test]
fn usage_errors_exit_2() {
    let f = patterns("rel-a_acq-a.litmus");
    for args in [
        vec!["--generate", "3", f.as_str()],
        vec!["--generate", "0"],
        vec![],
        vec![f.as_str(), "--models", "tso"],
        vec![f.as_str(), "--runs", "0"],
        vec!["--generate", "3", "--expect", "x.csv"],
    ] {
        let o = litmus(&args);
        assert_exit(&o, 2);
        assert!(!text(&o.stderr).is_empty(), "{args:?}");
    }
}
