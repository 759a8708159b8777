//! End-to-end: the `weak` model through the CLI (issue 11) and the reworked race check
//! (issue 12) — `fuzz`/`run`/`replay` accept `--model weak`, a reader-side bug fails and
//! its replay trace names the stale read with both stores' CUDA lines; `race` runs on a
//! campaign without an oracle (which `fuzz` refuses with a clear message), names a lock
//! taken without acquire ordering, confirms it harmful under `weak`, and says plainly
//! when exposure was not tried.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{assert_exit, text};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("campaigns")
        .join(name)
}

struct Scratch {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Scratch {
    fn with(files: &[&str]) -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
            cache: tempfile::tempdir().expect("temp dir"),
        };
        for f in files {
            std::fs::copy(corpus(f), s.dir.path().join(f)).unwrap();
        }
        s
    }
    fn write(&self, name: &str, body: &str) {
        std::fs::write(self.dir.path().join(name), body).unwrap();
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
        assert!(!err.contains("panicked"), "panic in {args:?}:\n{err}");
        o
    }
}

#[test]
fn weak_finds_the_reader_side_bug_and_replay_names_the_stale_read() {
    let s = Scratch::with(&["mp_queue.cu", "mp_queue.toml"]);
    // Store buffering cannot show a missing consumer fence ...
    let o = s.run(&[
        "fuzz",
        "mp_queue.toml",
        "--variant",
        "no_consumer_fence",
        "--model",
        "bugaroo,scoped",
        "--runs",
        "30",
        "-q",
    ]);
    assert_exit(&o, 0);
    // ... loads that may read older values do.
    let o = s.run(&[
        "fuzz",
        "mp_queue.toml",
        "--variant",
        "no_consumer_fence",
        "--model",
        "weak",
        "--runs",
        "30",
        "--json",
        "-q",
    ]);
    assert_exit(&o, 1);
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let r = &all[0];
    let id = r["failures"][0]["id"].as_u64().expect("a failure id");
    let report = r["report"]
        .as_str()
        .map(PathBuf::from)
        .unwrap_or_else(|| s.dir.path().join("fencehound-out/mp_queue.report.json"));
    let o = s.run(&[
        "replay",
        &report.display().to_string(),
        "--exec",
        &id.to_string(),
        "--trace",
    ]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("reproduced"), "{out}");
    // "read the value before the launch / store #N (mp_queue.cu:25) although store #M
    // (mp_queue.cu:25) = 0x.. was visible", at the consumer's load (line 38).
    let stale = out
        .lines()
        .find(|l| l.contains("STALE") && l.contains("although") && l.contains("mp_queue.cu:38"))
        .unwrap_or_else(|| panic!("no stale read of an item in the trace:\n{out}"));
    assert!(
        stale.contains("store #") && stale.contains("mp_queue.cu:25"),
        "{stale}"
    );
    // The correct variant passes under weak, seeded runs of it too.
    let o = s.run(&[
        "run",
        "mp_queue.toml",
        "--variant",
        "fenced",
        "--model",
        "weak",
        "--seed",
        "5",
        "--p",
        "0.5",
    ]);
    assert_exit(&o, 0);
}

/// Message passing written only for the race check: no oracle.
const NO_ORACLE: &str = r#"
source = "mp_queue.cu"
seed = 3
buffers = ["items:i32[32] fill(-1)", "count:i32[1] zero", "errors:i32[4] zero", "sums:i32[4] zero"]

[[launch]]
kernel = "mp_queue"
grid = [4]
block = [32]
args = ["items", "count", "errors", "sums"]

[variants.no_consumer_fence]
defines = { CONSUMER_FENCE = "(void)0" }
"#;

#[test]
fn race_needs_no_oracle_and_fuzz_says_it_does() {
    let s = Scratch::with(&["mp_queue.cu"]);
    s.write("race_only.toml", NO_ORACLE);
    let o = s.run(&["race", "race_only.toml", "--runs", "4"]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("inter-block race"), "{out}");
    assert!(
        out.contains("not tried (the campaign has no oracle)"),
        "{out}"
    );
    let o = s.run(&["fuzz", "race_only.toml", "--runs", "2"]);
    assert_exit(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("race_only.toml") && err.contains("[[oracle]]") && err.contains("race"),
        "{err}"
    );
}

#[test]
fn race_names_a_lock_without_acquire_and_weak_confirms_it() {
    let s = Scratch::with(&["cbe_dot.cu", "cbe_dot.toml"]);
    let o = s.run(&[
        "race",
        "cbe_dot.toml",
        "--variant",
        "unlock_fence",
        "--runs",
        "6",
        "--expose",
        "30",
    ]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("lock-acquire race"), "{out}");
    // The fix goes after the atomicCAS that takes the lock (cbe_dot.cu:25).
    assert!(
        out.contains("relaxed RMW at") && out.contains("cbe_dot.cu:25"),
        "{out}"
    );
    assert!(
        out.contains("confirmed harmful") && out.contains("model weak"),
        "{out}"
    );
    // --expose 0: said plainly, not "not tried in 0 runs".
    let o = s.run(&[
        "race",
        "cbe_dot.toml",
        "--variant",
        "unlock_fence",
        "--runs",
        "2",
        "--expose",
        "0",
    ]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("not tried (--expose 0)"), "{out}");
    assert!(!out.contains("in 0 runs"), "{out}");
    // The correct variant: no race (the lock's fences order the critical sections).
    let o = s.run(&[
        "race",
        "cbe_dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "6",
    ]);
    assert_exit(&o, 0);
}
