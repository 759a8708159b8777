//! End-to-end tests of `fencehound fuzz`, `run`, `replay`, `minimize`, `audit`, `race` and
//! `demo`: exit codes as DESIGN.md gives them (0 no failure found, 1 failures found, 2 usage
//! or input error; 130 for a run interrupted before it found anything), clear messages for
//! bad campaign files that name the file and the line or key, no panics, reports that are
//! valid JSON or absent, Ctrl-C leaving a valid partial report, and bit-for-bit replay of
//! randomly chosen failing executions (outputs and traces).
//!
//! Every test works in its own temporary directory (the binary's working directory, so
//! `fencehound-out/` lands there) with campaign files written here and `.cu` kernels
//! copied from `campaigns/`. NVRTC is required (`scripts/setup-cuda.sh`); the PTX cache is
//! one temporary directory shared by the tests that use `common::Scratch`.

use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{assert_exit, cbe, json, Scratch, CBE_DOT};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn report(s: &Scratch, name: &str) -> Value {
    json(&std::fs::read_to_string(s.out_dir().join(format!("{name}.report.json"))).unwrap())
}

// ------------------------------------------------------------------- fuzz

#[test]
fn fuzz_exit_codes_reports_and_json() {
    let s = cbe();
    // Fenced: nothing found, exit 0, a report with only clean cells.
    let o = s.run(&["fuzz", "dot.toml", "--variant", "two_fences", "-q"]);
    assert_exit(&o, 0);
    let r = report(&s, "dot");
    assert_eq!(r["executions_done"], 16);
    assert_eq!(r["interrupted"], false);
    assert_eq!(r["failures"].as_array().unwrap().len(), 0);
    // Underfenced: exit 1; the report holds every failure in full and the summary counts.
    let o = s.run(&["fuzz", "dot.toml", "--variant", "no_fence", "-q"]);
    assert_exit(&o, 1);
    assert!(stdout(&o).contains("UNDERFENCED"), "{}", stdout(&o));
    assert!(stdout(&o).contains("fencehound replay"), "{}", stdout(&o));
    let r = report(&s, "dot");
    let failures = r["failures"].as_array().unwrap();
    let counted: u64 = r["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["failures"].as_u64().unwrap())
        .sum();
    assert!(!failures.is_empty());
    assert_eq!(failures.len() as u64, counted);
    assert_eq!(r["variants"][0]["name"], "no_fence");
    assert!(r["variants"][0]["ptx"]
        .as_str()
        .unwrap()
        .contains(".entry dot"));
    // block_fence: bugaroo cannot tell, scoped can.
    let o = s.run(&[
        "fuzz",
        "dot.toml",
        "--variant",
        "block_fence",
        "--model",
        "bugaroo",
    ]);
    assert_exit(&o, 0);
    let o = s.run(&[
        "fuzz",
        "dot.toml",
        "--variant",
        "block_fence",
        "--model",
        "scoped",
    ]);
    assert_exit(&o, 1);
    // --check-expect: 0 when every variant behaves as stated, although some fail.
    let o = s.run(&["fuzz", "dot.toml", "--check-expect", "-q"]);
    assert_exit(&o, 0);
    // ... and 1 when one does not: claim that no_fence passes.
    s.write(
        "wrong.toml",
        &CBE_DOT.replace(
            "UNLOCK_FENCE = \"(void)0\" }\nexpect = \"fail\"",
            "UNLOCK_FENCE = \"(void)0\" }\nexpect = \"pass\"",
        ),
    );
    let o = s.run(&["fuzz", "wrong.toml", "--check-expect", "-q"]);
    assert_exit(&o, 1);
    assert!(
        stdout(&o).contains("EXPECTATION NOT MET: no_fence under bugaroo"),
        "{}",
        stdout(&o)
    );
    // --json: one object per campaign on stdout, valid JSON, nothing else there.
    let o = s.run(&["fuzz", "dot.toml", "--json", "--report", "sub/dir/r.json"]);
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    let c = &v.as_array().unwrap()[0];
    assert_eq!(c["executions"], 48);
    assert_eq!(c["interrupted"], false);
    assert!(c["failures_total"].as_u64().unwrap() > 0);
    assert_eq!(c["expectation_mismatches"].as_array().unwrap().len(), 0);
    json(&std::fs::read_to_string(s.path("sub/dir/r.json")).unwrap());
    // --stop-at-first: exit 1 and fewer executions than planned.
    let o = s.run(&[
        "fuzz",
        "dot.toml",
        "--variant",
        "no_fence",
        "--runs",
        "200",
        "--stop-at-first",
        "--json",
    ]);
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    assert!(v[0]["executions"].as_u64().unwrap() < 1600);
    assert_eq!(v[0]["interrupted"], false);
    s.check_out_dir();
}

/// At p_w = 1 (or 0) alone no model delays one access and not the next: `fuzz` says so
/// before it runs, and not when a p_w between 0 and 1 is in the list.
#[test]
fn fuzz_notes_a_p_w_list_without_a_mixing_value() {
    let s = cbe();
    let note = "no p_w strictly between 0 and 1";
    let fuzz = |extra: &[&str]| {
        let mut args = vec!["fuzz", "dot.toml", "--variant", "two_fences"];
        args.extend_from_slice(extra);
        s.run(&args)
    };
    let o = fuzz(&["--p", "1"]);
    assert_exit(&o, 0);
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    let o = fuzz(&["--p", "0.5,1"]);
    assert_exit(&o, 0);
    assert!(!stderr(&o).contains(note), "{}", stderr(&o));
    let o = fuzz(&["--p", "1", "--model", "sc"]);
    assert!(!stderr(&o).contains(note), "{}", stderr(&o));
}

#[test]
fn fuzz_usage_errors_exit_2() {
    let s = cbe();
    for args in [
        &["fuzz", "dot.toml", "--p", "1.5"][..],
        &["fuzz", "dot.toml", "--model", "tso"],
        &["fuzz", "dot.toml", "--scheduler", "lottery"],
        &["fuzz", "dot.toml", "--variant", "nope"],
        &["fuzz", "dot.toml", "dot.toml", "--report", "x.json"],
        &["fuzz"],
        &["run", "dot.toml", "--p", "2"],
        &[
            "minimize",
            "dot.toml",
            "--variant",
            "no_fence",
            "--model",
            "tso",
        ],
        &["audit", "dot.toml", "--variant", "nope"],
        &["race", "dot.toml", "--variant", "nope"],
    ] {
        let o = s.run(args);
        assert_exit(&o, 2);
        assert!(!stderr(&o).trim().is_empty(), "{args:?}: no message");
    }
    let o = s.run(&["fuzz", "dot.toml", "--variant", "nope"]);
    assert!(
        stderr(&o).contains("dot.toml: no variant named `nope`"),
        "{}",
        stderr(&o)
    );
    // Nothing was written for runs that never started.
    assert!(!s.path("x.json").exists());
    assert!(!s.out_dir().join("dot.report.json").exists());
}

// -------------------------------------------------------- bad campaign files

/// Each bad campaign: (file name, text, words the message must contain).
fn bad_campaigns() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let mut extra_cu = CBE_DOT.replace("cbe_dot.cu", "broken.cu");
    extra_cu.push('\n');
    vec![
        (
            "syntax.toml",
            CBE_DOT.replace("args = [\"a\"", "args = [\"a\" \"b\""),
            vec!["syntax.toml", "line 15", "column 13"],
        ),
        (
            "unknown_key.toml",
            CBE_DOT.replace("seed = 7", "seed = 7\nmodel = \"bugaroo\""),
            vec!["unknown_key.toml", "line 4", "unknown field `model`"],
        ),
        (
            "unknown_launch_key.toml",
            CBE_DOT.replace("block = [64]", "block = [64]\nthreads = 3"),
            vec!["unknown_launch_key.toml", "unknown field `threads`"],
        ),
        (
            "unknown_buffer.toml",
            CBE_DOT.replace("\"mutex\", \"n:i32", "\"lock\", \"n:i32"),
            vec!["unknown_buffer.toml", "launch[0].args[3]", "`lock`"],
        ),
        (
            "oracle_buffer.toml",
            CBE_DOT.replace("buffers = [\"c\", \"mutex\"]", "buffers = [\"d\"]"),
            vec!["oracle_buffer.toml", "oracle[0]", "`d`"],
        ),
        (
            "missing_source.toml",
            CBE_DOT.replace("cbe_dot.cu", "gone.cu"),
            vec!["missing_source.toml", "source", "gone.cu"],
        ),
        (
            "nvrtc_error.toml",
            extra_cu,
            vec!["nvrtc_error.toml", "broken.cu(3)", "error"],
        ),
        (
            "no_kernel.toml",
            CBE_DOT.replace("kernel = \"dot\"", "kernel = \"dot_product\""),
            vec!["no_kernel.toml", "launch[0].kernel", "`dot_product`"],
        ),
        (
            "oracle_missing_command.toml",
            CBE_DOT.replace(
                "type = \"golden\"\nbuffers = [\"c\", \"mutex\"]",
                "type = \"command\"\nargv = [\"./no-such-judge\", \"{manifest}\"]",
            ),
            vec!["oracle_missing_command.toml", "oracle", "no-such-judge"],
        ),
        (
            "oracle_timeout.toml",
            CBE_DOT.replace(
                "type = \"golden\"\nbuffers = [\"c\", \"mutex\"]",
                "type = \"command\"\nargv = [\"sleep\", \"30\"]\ntimeout_ms = 200",
            ),
            vec!["oracle_timeout.toml", "oracle", "sleep", "200 ms"],
        ),
        (
            // n larger than the buffers: the reference run reads past the end of `a`.
            "reference_fault.toml",
            CBE_DOT.replace("n:i32=2048", "n:i32=4096"),
            vec![
                "reference_fault.toml",
                "reference",
                "fault",
                "cbe_dot.cu:",
                "`a`",
            ],
        ),
        (
            "bad_grid.toml",
            CBE_DOT.replace("grid = [8]", "grid = [8, 0]"),
            vec!["bad_grid.toml", "launch[0].grid"],
        ),
    ]
}

#[test]
fn bad_campaigns_exit_2_with_a_clear_message_and_no_report() {
    let s = cbe();
    s.write(
        "broken.cu",
        "extern \"C\" __global__ void dot(int *a) {\n  int x = 1\n  a[0] = x;\n}\n",
    );
    for (name, text, words) in bad_campaigns() {
        s.write(name, &text);
        let o = s.run(&["fuzz", name, "--runs", "2"]);
        assert_exit(&o, 2);
        let err = stderr(&o);
        for w in &words {
            assert!(err.contains(w), "{name}: message lacks `{w}`:\n{err}");
        }
        assert!(stdout(&o).is_empty(), "{name}: {}", stdout(&o));
        let stem = name.trim_end_matches(".toml");
        assert!(
            !s.out_dir().join(format!("{stem}.report.json")).exists(),
            "{name}: a report was written"
        );
    }
    // The other commands load campaigns the same way.
    for args in [
        &["run", "unknown_key.toml"][..],
        &["minimize", "unknown_buffer.toml", "--variant", "no_fence"],
        &["audit", "missing_source.toml", "--variant", "two_fences"],
        &["race", "reference_fault.toml"],
        &["run", "nvrtc_error.toml", "--variant", "no_fence"],
    ] {
        let o = s.run(args);
        assert_exit(&o, 2);
        assert!(stderr(&o).contains(args[1]), "{args:?}: {}", stderr(&o));
    }
    // A kernel or a PTX file where a campaign goes (2026-12-06: "TOML parse error at
    // line 1, column 1 … invalid key"): named for what it is, with where to go instead.
    s.write("kernel.ptx", ".version 8.0\n.target sm_80\n");
    s.write("kernel_ptx.txt", "\n.version 8.0\n.target sm_80\n");
    for (args, what) in [
        (&["fuzz", "broken.cu"][..], "is CUDA source"),
        (&["race", "kernel.ptx"], "is PTX"),
        (&["minimize", "kernel_ptx.txt", "--variant", "x"], "is PTX"),
    ] {
        let o = s.run(args);
        assert_exit(&o, 2);
        let err = stderr(&o);
        for w in [args[1], what, "not a campaign file", "run-kernel", "exec"] {
            assert!(err.contains(w), "{args:?}: message lacks `{w}`:\n{err}");
        }
    }
    // A missing campaign file: one clear line, the OS error once.
    let o = s.run(&["fuzz", "nothing.toml"]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("nothing.toml"), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    s.check_out_dir();
}

#[test]
fn an_oracle_that_cannot_judge_a_fuzzed_execution_is_an_input_error() {
    // The judge passes the reference outputs and hangs on any others: its timeout says
    // nothing about the kernel, so it must not be counted as a failure (exit 1) — the
    // campaign stops with exit 2 and a valid partial report.
    let s = cbe();
    let judge = s.write(
        "judge.sh",
        "#!/bin/sh\ncmp -s \"$FENCEHOUND_ORACLE_DIR/outputs/c.npy\" \"$FENCEHOUND_ORACLE_DIR/golden/c.npy\" && exit 0\nexec sleep 30\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&judge, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    s.write(
        "judged.toml",
        &CBE_DOT.replace(
            "type = \"golden\"\nbuffers = [\"c\", \"mutex\"]",
            "type = \"command\"\nargv = [\"./judge.sh\"]\ntimeout_ms = 300",
        ),
    );
    let o = s.run(&["fuzz", "judged.toml", "--variant", "two_fences"]);
    assert_exit(&o, 0);
    let o = s.run(&["fuzz", "judged.toml", "--variant", "no_fence", "--p", "1"]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("judged.toml") && err.contains("did not finish within 300 ms"),
        "{err}"
    );
    let r = report(&s, "judged");
    assert_eq!(r["interrupted"], true);
    assert!(!r["oracle_errors"].as_array().unwrap().is_empty());
    assert_eq!(r["failures"].as_array().unwrap().len(), 0);
    s.check_out_dir();
}

// ---------------------------------------------------------------- interrupt

#[cfg(unix)]
#[test]
fn sigint_leaves_a_valid_report_marked_interrupted() {
    let s = cbe();
    let mut child = s
        .cmd()
        .args([
            "fuzz",
            "dot.toml",
            "--variant",
            "two_fences",
            "--runs",
            "1000000",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for it to be fuzzing (the partial report appears within ~2 s of the start),
    // then interrupt.
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let o = loop {
        if child.try_wait().unwrap().is_some() {
            break child.wait_with_output().unwrap();
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("fuzz did not exit within 10 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(3), "exit took {took:?}");
    // Interrupted before finding anything: neither 0 (nothing to find) nor a signal death.
    assert_exit(&o, 130);
    assert!(stdout(&o).contains("INTERRUPTED"), "{}", stdout(&o));
    let r = report(&s, "dot");
    assert_eq!(r["interrupted"], true);
    let done = r["executions_done"].as_u64().unwrap();
    assert!(done > 0 && done < r["executions_planned"].as_u64().unwrap());
    let cells = r["summary"].as_array().unwrap();
    let runs: u64 = cells.iter().map(|c| c["runs"].as_u64().unwrap()).sum();
    let fails: u64 = cells.iter().map(|c| c["failures"].as_u64().unwrap()).sum();
    assert_eq!(runs, done);
    assert_eq!(fails, r["failures"].as_array().unwrap().len() as u64);
    assert_eq!(fails, 0);
    s.check_out_dir();
}

// ------------------------------------------------------------ run and replay

/// A tiny deterministic generator for picking executions (splitmix64).
struct Pick(u64);
impl Pick {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn twenty_random_failures_replay_with_identical_outputs_and_traces() {
    let s = Scratch::with(&[
        "cbe_dot.cu",
        "cbe_dot.toml",
        "cub_scan.cu",
        "cub_scan.toml",
        "sdk_red.cu",
        "sdk_red.toml",
    ]);
    // Fuzz three underfenced corpus variants (corpus files as committed, fewer runs).
    let mut failing: Vec<(String, Value)> = Vec::new();
    for (campaign, variant) in [
        ("cbe_dot", "no_fence"),
        ("cub_scan", "no_fences"),
        ("sdk_red", "unfenced"),
    ] {
        let file = format!("{campaign}.toml");
        let rep = format!("{campaign}.json");
        let o = s.run(&[
            "fuzz",
            &file,
            "--variant",
            variant,
            "--runs",
            "6",
            "--model",
            "bugaroo",
            "--report",
            &rep,
            "-q",
        ]);
        assert_exit(&o, 1);
        let r = json(&std::fs::read_to_string(s.path(&rep)).unwrap());
        for f in r["failures"].as_array().unwrap() {
            failing.push((rep.clone(), f.clone()));
        }
    }
    assert!(failing.len() >= 20, "only {} failures", failing.len());
    let mut pick = Pick(2026);
    let mut chosen = Vec::new();
    while chosen.len() < 20 {
        let i = (pick.next() % failing.len() as u64) as usize;
        chosen.push(failing.swap_remove(i));
    }
    for (rep, f) in &chosen {
        let id = f["id"].as_u64().unwrap().to_string();
        let replay = || {
            let o = s.run(&["replay", rep, "--exec", &id, "--json", "--trace"]);
            // A failing execution replayed: exit 1, the same outputs.
            assert_exit(&o, 1);
            json(&stdout(&o))
        };
        let (a, b) = (replay(), replay());
        assert_eq!(a["reproduced"], true, "{rep} exec {id}");
        assert_eq!(a["output_hash"], f["output_hash"], "{rep} exec {id}");
        assert_eq!(a["verdict"], f["verdict"], "{rep} exec {id}");
        assert_eq!(
            a["lane_instructions"], f["lane_instructions"],
            "{rep} exec {id}"
        );
        let trace = a["trace"].as_array().unwrap();
        assert!(!trace.is_empty(), "{rep} exec {id}: empty trace");
        assert_eq!(a["trace"], b["trace"], "{rep} exec {id}: traces differ");
        assert_eq!(a["output_hash"], b["output_hash"]);
        assert_eq!(a["stats"], b["stats"]);
    }
    // `run` with the same variant, model, p_w and seed recompiles and gives the same run.
    for (rep, f) in chosen.iter().take(3) {
        let campaign = rep.replace(".json", ".toml");
        let seed = f["seed"].as_u64().unwrap().to_string();
        let p = f["p"].as_f64().unwrap().to_string();
        let variant = f["variant"].as_str().unwrap();
        let o = s.run(&[
            "run",
            &campaign,
            "--variant",
            variant,
            "--seed",
            &seed,
            "--p",
            &p,
            "--model",
            "bugaroo",
            "--json",
        ]);
        assert_exit(&o, 1);
        assert_eq!(json(&stdout(&o))["output_hash"], f["output_hash"]);
    }
}

#[test]
fn run_and_replay_exit_codes() {
    let s = cbe();
    let o = s.run(&["run", "dot.toml", "--variant", "two_fences", "--seed", "3"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("verdict: pass"), "{}", stdout(&o));
    let o = s.run(&[
        "run",
        "dot.toml",
        "--variant",
        "no_fence",
        "--seed",
        "3",
        "--trace",
    ]);
    assert_exit(&o, 1);
    assert!(stdout(&o).contains("cbe_dot.cu:49"), "{}", stdout(&o));
    let o = s.run(&[
        "fuzz",
        "dot.toml",
        "--variant",
        "no_fence",
        "--variant",
        "two_fences",
        "-q",
    ]);
    assert_exit(&o, 1);
    let r = report(&s, "dot");
    let fail = r["failures"][0]["id"].as_u64().unwrap().to_string();
    // ids of the second variant (two_fences) all pass.
    let pass = (r["executions_planned"].as_u64().unwrap() - 1).to_string();
    let rp = "fencehound-out/dot.report.json";
    let o = s.run(&["replay", rp, "--exec", &fail]);
    assert_exit(&o, 1);
    assert!(
        stdout(&o).contains("reproduced: identical outputs"),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["replay", rp, "--exec", &pass, "--json"]);
    assert_exit(&o, 0);
    assert_eq!(json(&stdout(&o))["verdict"]["kind"], "pass");
    let o = s.run(&["replay", rp, "--exec", "100000"]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("--exec 100000"), "{}", stderr(&o));
    let o = s.run(&["replay", "dot.toml", "--exec", "0"]);
    assert_exit(&o, 2);
    assert!(
        stderr(&o).contains("not a fencehound report"),
        "{}",
        stderr(&o)
    );
    let o = s.run(&["replay", "missing.json", "--exec", "0"]);
    assert_exit(&o, 2);
    // Replay does not need the source any more: the report holds the PTX.
    std::fs::remove_file(s.path("cbe_dot.cu")).unwrap();
    let o = s.run(&["replay", rp, "--exec", &fail, "--json"]);
    assert_exit(&o, 1);
    assert_eq!(json(&stdout(&o))["reproduced"], true);
}

// ------------------------------------------------- minimize, audit, race, demo

#[test]
fn minimize_audit_race_exit_codes() {
    let s = cbe();
    let o = s.run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "no_fence",
        "--batch",
        "5",
        "--confirm",
        "10",
    ]);
    assert_exit(&o, 1);
    let out = stdout(&o);
    assert!(
        out.contains("insert `__threadfence();` after cbe_dot.cu:"),
        "{out}"
    );
    assert!(out.contains("confirmed"), "{out}");
    let o = s.run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "no_fence",
        "--batch",
        "5",
        "--confirm",
        "10",
        "--json",
    ]);
    assert_exit(&o, 1);
    assert!(json(&stdout(&o))["fences"]
        .as_array()
        .is_some_and(|f| !f.is_empty()));
    let o = s.run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "two_fences",
        "--batch",
        "5",
        "--confirm",
        "5",
    ]);
    assert_exit(&o, 0);
    // audit: a correct variant exits 0 (whatever it finds redundant), a failing one 1.
    let o = s.run(&[
        "audit",
        "dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "10",
        "--json",
    ]);
    assert_exit(&o, 0);
    let v = json(&stdout(&o));
    assert_eq!(v["fences"].as_array().unwrap().len(), 2);
    let o = s.run(&["audit", "dot.toml", "--variant", "no_fence", "--runs", "10"]);
    assert_exit(&o, 1);
    // race: the fenced lock is race-free, the unfenced one races on *c.
    let o = s.run(&[
        "race",
        "dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "4",
        "--expose",
        "4",
    ]);
    assert_exit(&o, 0);
    let o = s.run(&[
        "race",
        "dot.toml",
        "--variant",
        "no_fence",
        "--runs",
        "4",
        "--expose",
        "4",
        "--json",
    ]);
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    assert!(!v.as_array().unwrap().is_empty());
    s.check_out_dir();
}

#[test]
fn demo_runs_anywhere_and_its_replay_command_works() {
    let s = Scratch::with(&[]);
    let o = s.run(&["demo", "--runs", "3"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("every variant behaved as expected"), "{out}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("fencehound replay"))
        .expect("a replay command");
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    let o = s.run(&args);
    assert_exit(&o, 1);
    assert!(
        stdout(&o).contains("reproduced: identical outputs"),
        "{}",
        stdout(&o)
    );
    s.check_out_dir();
}

/// `minimize --p 1` on a seqlock writer without the fence after its odd counter store:
/// at p_w = 1 alone no model delays one store and not the next, so the variant never
/// fails there (0 of 100 runs, 2026-12-07) and `minimize` said "nothing to minimize". The
/// search now runs at 0.5 as well and says so. And the patch has one fence: the PTX-level
/// search fenced copies of the unrolled writer loop after neighbouring stores too (three
/// source lines, one inside the record loop), which the source-level reduction drops
/// because the patch verifies without them.
#[test]
fn minimize_at_p_w_1_alone_also_searches_at_0_5_and_patches_one_line() {
    let s = Scratch::with(&["seqlock.toml", "seqlock.cu"]);
    let args = [
        "minimize",
        "seqlock.toml",
        "--variant",
        "no_writer_fence_1",
        "--model",
        "scoped",
        "--p",
        "1",
    ];
    let o = s.run(&[&args[..], &["--json"]].concat());
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    assert_eq!(v["added_ps"], serde_json::json!([0.5]), "{v:#}");
    assert_eq!(v["verification"]["verified"], true, "{v:#}");
    let diff = v["diff"].as_str().unwrap_or_default();
    let added: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(added, ["+            __threadfence();"], "{diff}");
    assert!(
        diff.contains(" *seq = 2 * v - 1;\n+            __threadfence();"),
        "{diff}"
    );
    let o = s.run(&args);
    assert_exit(&o, 1);
    assert!(
        stdout(&o).contains("the search also runs at p_w = 0.5"),
        "{}",
        stdout(&o)
    );
}

/// Under `weak` a lost update comes from a store placed before another thread's in
/// coherence order, not only from stale reads: the minimizer's store filter covers that
/// too, so the store is singled out (before, the list was empty: with no store allowed
/// to be delayed the variant still failed).
#[test]
fn minimize_under_weak_singles_out_the_store_of_a_lost_update() {
    let s = cbe();
    let o = s.run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "no_fence",
        "--model",
        "weak",
        "--json",
    ]);
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    let stores = v["stores"].as_array().cloned().unwrap_or_default();
    assert!(
        stores
            .iter()
            .any(|st| st.to_string().contains("cbe_dot.cu") && st.to_string().contains("49")),
        "{v:#}"
    );
}
