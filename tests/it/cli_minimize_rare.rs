//! Issue 23, rare failures: `minimize REPORT --exec ID` starts from a failing execution a
//! fuzz run recorded, sizes each check's batch from the failure rate (95% power), and a
//! variant with a recorded failing execution is never "nothing to minimize".
//!
//! The campaign (`campaigns/minimizer/rare.toml`) is a seqlock writer with a missing fence
//! fuzzed at p_w = 0.05 under bugaroo, where it fails in a few percent of executions.

use crate::common;

use common::assert_exit;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

struct Scratch {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
            cache: tempfile::tempdir().expect("temp dir"),
        };
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/minimizer");
        for f in ["rare.toml", "seqwriter.cu"] {
            std::fs::copy(src.join(f), s.path(f)).unwrap();
        }
        s
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn run(&self, args: &[&str]) -> Output {
        let mut c = Command::new(BIN);
        let tools = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".tools")
            .join("cuda");
        if std::env::var_os("FENCEHOUND_TOOLS_DIR").is_none() && tools.exists() {
            c.env("FENCEHOUND_TOOLS_DIR", tools);
        }
        let o = c
            .args(args)
            .current_dir(self.dir.path())
            .env("FENCEHOUND_CACHE_DIR", self.cache.path())
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .output()
            .expect("run fencehound");
        let err = text(&o.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "panic in {args:?}:\n{err}"
        );
        o
    }
    /// Fuzzes the campaign into `report` and returns the report.
    fn fuzz(&self, report: Option<&str>) -> Value {
        let mut args = vec!["fuzz", "rare.toml", "-q"];
        if let Some(r) = report {
            args.extend(["--report", r]);
        }
        let o = self.run(&args);
        assert_exit(&o, 1);
        let path = match report {
            Some(r) => self.path(r),
            None => self.path("fencehound-out/min_rare.report.json"),
        };
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (failures, runs) of the report's only cell, and its first failing execution (id, seed).
fn cell_and_first_failure(r: &Value) -> ((u64, u64), (u64, u64)) {
    let cell = &r["summary"][0];
    let f = &r["failures"][0];
    (
        (
            cell["failures"].as_u64().unwrap(),
            cell["runs"].as_u64().unwrap(),
        ),
        (f["id"].as_u64().unwrap(), f["seed"].as_u64().unwrap()),
    )
}

/// Seeds for 95% power at rate f: the least n with 1 - (1 - f)^n >= 0.95.
fn seeds_for(f: f64) -> u64 {
    let mut n = 1u64;
    while 1.0 - (1.0 - f).powi(n as i32) < 0.95 {
        n += 1;
    }
    n
}

/// The lines a diff adds, without the file header.
fn added(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect()
}

#[test]
fn minimize_starts_from_a_recorded_rare_failure() {
    let s = Scratch::new();
    let r = s.fuzz(Some("rep.json"));
    let ((fails, runs), (id, seed)) = cell_and_first_failure(&r);
    let rate = fails as f64 / runs as f64;
    assert!(fails > 0 && rate < 0.1, "not rare: {fails} of {runs}");
    let id_s = id.to_string();
    let o = s.run(&["minimize", "rep.json", "--exec", &id_s]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(!out.contains("nothing to minimize"), "{out}");
    assert!(
        out.contains(&format!(
            "starting from rep.json, execution {id} (re-run from its seed: it fails again)"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("fails (seed {seed}, p_w=0.05")),
        "{out}"
    );
    // The checks are sized from the recorded rate, above the default batch of 20.
    let n = seeds_for(rate);
    assert!(n > 20, "{n}");
    assert!(
        out.contains(&format!(
            "batches: failure rate {rate:.3} ({fails} of {runs} on the report's cell): {n} seed(s) per p_w give a check 95% power"
        )),
        "{out}"
    );
    assert!(
        out.contains("confirmed: no failure on a fresh batch"),
        "{out}"
    );
    // Verification: the recorded execution's seed, then n fresh seeds.
    assert!(
        out.contains(&format!("patch verified: 0 failures in {} runs", n + 1)),
        "{out}"
    );
    // One fence for the unrolled line, device scope, with the scope caveat (bugaroo).
    assert_eq!(
        added(&out),
        vec!["+                __threadfence();"],
        "{out}"
    );
    assert!(out.contains("scope not judged: under bugaroo"), "{out}");

    // The same as JSON.
    let o = s.run(&["minimize", "rep.json", "--exec", &id_s, "--json"]);
    assert_exit(&o, 1);
    let j: Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(j["failure"]["seed"].as_u64(), Some(seed));
    assert_eq!(j["sizing"]["batch"].as_u64(), Some(n));
    assert_eq!(j["sizing"]["capped"], false);
    assert!(j["sizing"]["power"].as_f64().unwrap() >= 0.95);
    assert_eq!(j["verification"]["verified"], true);

    // A cap below what the rate needs is said, not hidden.
    let o = s.run(&["minimize", "rep.json", "--exec", &id_s, "--max-batch", "30"]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "30 seed(s) per p_w give a check {:.0}% power to see it — CAPPED: 95% power would need {n} seeds",
            (1.0 - (1.0 - rate).powi(30)) * 100.0
        )),
        "{out}"
    );
}

#[test]
fn a_variant_with_a_recorded_failure_is_never_nothing_to_minimize() {
    let s = Scratch::new();
    // The campaign's own report, where `fuzz` puts it by default.
    s.fuzz(None);
    // A first batch of one seed at p_w = 0.05 (it passes): the recorded failure is used.
    let o = s.run(&[
        "minimize",
        "rare.toml",
        "--variant",
        "unfenced",
        "--model",
        "bugaroo",
        "--p",
        "0.05",
        "--batch",
        "1",
    ]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(!out.contains("nothing to minimize"), "{out}");
    assert!(
        out.contains("records a failing execution: starting from it"),
        "{out}"
    );
    assert!(out.contains("patch verified: 0 failures in"), "{out}");
}

#[test]
fn a_recorded_failure_that_no_longer_reproduces_is_said_so() {
    let s = Scratch::new();
    let r = s.fuzz(Some("rep.json"));
    let (_, (id, _)) = cell_and_first_failure(&r);
    // The user fixed the line since the fuzz run.
    let cu = s.path("seqwriter.cu");
    let src = std::fs::read_to_string(&cu).unwrap();
    let fixed = src.replace(
        "((volatile int *)d)[1] = v;\n",
        "((volatile int *)d)[1] = v;\n                __threadfence();\n",
    );
    assert_ne!(src, fixed);
    std::fs::write(&cu, fixed).unwrap();
    let o = s.run(&["minimize", "rep.json", "--exec", &id.to_string()]);
    assert_exit(&o, 2);
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "rep.json, execution {id} did not fail when re-run from its seed: the campaign now compiles to other PTX"
        )),
        "{out}"
    );
    assert!(!out.contains("patch"), "{out}");
}

#[test]
fn a_recorded_failure_of_older_code_is_not_used() {
    let s = Scratch::new();
    s.fuzz(None);
    let cu = s.path("seqwriter.cu");
    let src = std::fs::read_to_string(&cu).unwrap();
    let fixed = src.replace(
        "((volatile int *)d)[1] = v;\n",
        "((volatile int *)d)[1] = v;\n                __threadfence();\n",
    );
    assert_ne!(src, fixed);
    std::fs::write(&cu, fixed).unwrap();
    let o = s.run(&[
        "minimize",
        "rare.toml",
        "--variant",
        "unfenced",
        "--model",
        "bugaroo",
        "--batch",
        "5",
    ]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("records a failing execution of this variant, but for other PTX than the campaign compiles to now (the source changed): not used"),
        "{out}"
    );
    assert!(out.contains("nothing to minimize"), "{out}");
}

#[test]
fn exec_input_errors_exit_2() {
    let s = Scratch::new();
    s.fuzz(Some("rep.json"));
    let o = s.run(&["minimize", "rep.json", "--exec", "99999"]);
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("has executions 0..200"),
        "{}",
        text(&o.stderr)
    );
    let o = s.run(&["minimize", "rare.toml", "--exec", "3"]);
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("--exec needs a fuzz report"),
        "{}",
        text(&o.stderr)
    );
    let o = s.run(&["minimize", "rep.json", "--exec", "3", "--variant", "other"]);
    assert_exit(&o, 2);
    // Without --exec a variant is required.
    let o = s.run(&["minimize", "rare.toml"]);
    assert_exit(&o, 2);
}

/// The same kernel's store line is unrolled into four PTX copies: under bugaroo one
/// `__threadfence();` for the line and the scope caveat (block scope is not judged);
/// under scoped the block-scope fence is tried and refuted.
#[test]
fn unrolled_store_line_gets_one_fence_and_scope_advice_only_where_scope_is_seen() {
    let s = Scratch::new();
    let args = |model: &'static str| {
        [
            "minimize",
            "rare.toml",
            "--variant",
            "unfenced",
            "--model",
            model,
            "--p",
            "0.5,1",
        ]
    };
    let mut bugaroo = args("bugaroo").to_vec();
    bugaroo.extend(["--sarif", "min.sarif"]);
    let o = s.run(&bugaroo);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    // SARIF: one missing-fence result for the line, with the scope caveat.
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("min.sarif")).unwrap()).unwrap();
    let results: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "fencehound/missing-fence")
        .collect();
    assert_eq!(results.len(), 1, "{sarif:#}");
    let msg = results[0]["message"]["text"].as_str().unwrap();
    assert!(
        msg.contains("insert `__threadfence();` after seqwriter.cu:17"),
        "{msg}"
    );
    assert!(msg.contains("scope not judged: under bugaroo"), "{msg}");
    assert_eq!(
        added(&out),
        vec!["+                __threadfence();"],
        "{out}"
    );
    assert!(!out.contains("__threadfence_block();"), "{out}");
    assert!(
        out.contains("__threadfence_block() cannot be judged under this model"),
        "{out}"
    );
    assert!(
        out.contains(
            "scope not judged: under bugaroo every fence scope drains the same write buffer"
        ),
        "{out}"
    );
    assert!(
        out.contains("run `minimize --model scoped` (or `weak`)"),
        "{out}"
    );
    assert!(out.contains("patch verified: 0 failures in"), "{out}");
    let o = s.run(&args("scoped"));
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert_eq!(
        added(&out),
        vec!["+                __threadfence();"],
        "{out}"
    );
    assert!(out.contains("__threadfence_block() fails (seed"), "{out}");
    assert!(!out.contains("scope not judged"), "{out}");
    assert!(out.contains("patch verified: 0 failures in"), "{out}");
}
