//! End-to-end tests of nightly use: where reports go, concurrent runs of one campaign,
//! small reports, `--resume` after SIGKILL, `--shard` + `merge`, `diff`, SARIF, JUnit and
//! the HTML report.
//!
//! Every test works in its own temporary directory with campaign files written there and
//! `.cu` kernels copied from `campaigns/`; the PTX cache is one temporary directory shared
//! by the tests that use `common::Scratch`. NVRTC is required (`scripts/setup-cuda.sh`).

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::common;
use common::{assert_exit, cbe, json, Scratch, CBE_DOT};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn read_json(p: &Path) -> Value {
    json(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

fn wait(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "fencehound did not finish within {limit:?}\nstderr:\n{}",
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_for(p: &Path, limit: Duration) {
    let start = Instant::now();
    while !p.exists() {
        assert!(
            start.elapsed() < limit,
            "{} did not appear within {limit:?}",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

// ---------------------------------------------------------- output location

#[test]
fn reports_go_next_to_the_campaign_and_out_dir_moves_them() {
    let s = cbe();
    std::fs::create_dir_all(s.path("nightly")).unwrap();
    std::fs::copy(s.path("cbe_dot.cu"), s.path("nightly/cbe_dot.cu")).unwrap();
    s.write("nightly/dot.toml", CBE_DOT);
    // Started from the scratch directory, the campaign in a subfolder: the report lands
    // in the subfolder's fencehound-out/, and the path is printed.
    let args = [
        "fuzz",
        "nightly/dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "2",
    ];
    let o = s.run(&args);
    assert_exit(&o, 0);
    let expected = Path::new("nightly")
        .join("fencehound-out")
        .join("dot.report.json");
    assert!(s.path("nightly/fencehound-out/dot.report.json").exists());
    assert!(!s.path("fencehound-out").exists());
    assert!(
        stdout(&o).contains(&format!("report: {}", expected.display())),
        "{}",
        stdout(&o)
    );
    // --out-dir puts it elsewhere; -q says nothing on stderr; --json is pure JSON.
    let o = s.run(&[&args[..], &["--out-dir", "elsewhere", "-q", "--json"]].concat());
    assert_exit(&o, 0);
    assert_eq!(stderr(&o), "");
    let v = json(&stdout(&o));
    assert_eq!(v[0]["report"], "elsewhere/dot.report.json");
    read_json(&s.path("elsewhere/dot.report.json"));
    assert!(!s.path("elsewhere/dot.report.json.lock").exists());
}

#[test]
fn two_concurrent_runs_of_one_campaign_leave_two_valid_reports() {
    let s = cbe();
    let args = [
        "fuzz",
        "dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "800",
        "-j",
        "1",
        "--json",
    ];
    let a = s.spawn(&args);
    // B starts once A holds its report.
    wait_for(
        &s.path("fencehound-out/dot.report.json.lock"),
        Duration::from_secs(60),
    );
    let b = s.spawn(&args);
    let (oa, ob) = (
        wait(a, Duration::from_secs(120)),
        wait(b, Duration::from_secs(120)),
    );
    assert_exit(&oa, 0);
    assert_exit(&ob, 0);
    let (ja, jb) = (json(&stdout(&oa)), json(&stdout(&ob)));
    let (ra, rb) = (
        ja[0]["report"].as_str().unwrap().to_string(),
        jb[0]["report"].as_str().unwrap().to_string(),
    );
    assert_eq!(ra, "fencehound-out/dot.report.json");
    assert_eq!(rb, "fencehound-out/dot.2.report.json");
    let (ra, rb) = (read_json(&s.path(&ra)), read_json(&s.path(&rb)));
    for r in [&ra, &rb] {
        assert_eq!(r["interrupted"], false);
        assert_eq!(r["executions_done"], 3200);
        assert_eq!(r["executions_done"], r["executions_planned"]);
    }
    // Same campaign, same seeds: the same results, each in its own file.
    assert_eq!(ra["summary"], rb["summary"]);
    let left: Vec<String> = std::fs::read_dir(s.path("fencehound-out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

// ------------------------------------------------------------ small reports

/// Message passing between two blocks: the consumer reads 0 (stale data) or 42. Its
/// failures all look alike, whatever the number of executions.
const MP_CU: &str = r#"
#ifndef MP_FENCE
#define MP_FENCE __threadfence()
#endif
extern "C" __global__ void mp(int *data, volatile int *flag, int *out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        MP_FENCE;
        *flag = 1;
    } else {
        while (*flag == 0) {}
        __threadfence();
        out[0] = data[0];
    }
}
"#;

const MP_TOML: &str = r#"
name = "mp"
source = "mp.cu"
seed = 3
buffers = ["data:i32[1] zero", "flag:i32[1] zero", "out:i32[1] zero"]

[[launch]]
kernel = "mp"
grid = [2]
block = [1]
args = ["data", "flag", "out"]

[[oracle]]
type = "expect"
buffer = "out"
values = [42]

[budget]
fuel = 100_000
wall_ms = 5_000

[fuzz]
models = ["bugaroo", "scoped"]
p = [0.5, 1.0]

[variants.fenced]
expect = "pass"

[variants.unfenced]
defines = { MP_FENCE = "(void)0" }
expect = "fail"
"#;

fn mp() -> Scratch {
    let s = Scratch::with(&[]);
    s.write("mp.cu", MP_CU);
    s.write("mp.toml", MP_TOML);
    s
}

#[test]
fn report_size_grows_with_distinct_failures_not_executions() {
    let s = mp();
    let size = |runs: &str, name: &str| {
        let o = s.run(&["fuzz", "mp.toml", "--runs", runs, "--report", name, "-q"]);
        assert_exit(&o, 1);
        let r = read_json(&s.path(name));
        (std::fs::metadata(s.path(name)).unwrap().len(), r)
    };
    let (small, a) = size("40", "small.json");
    let (big, b) = size("400", "big.json");
    let failures = |r: &Value| {
        r["summary"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["failures"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert!(failures(&b) >= 10 * 20, "too few failures to test: {b}");
    // Every failure counted, 20 per cell stored, each distinct failure once.
    assert_eq!(
        b["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["count"].as_u64().unwrap())
            .sum::<u64>(),
        failures(&b)
    );
    assert_eq!(a["signatures"], {
        // Same distinct failures (counts and first ids may differ).
        let mut v = b["signatures"].clone();
        for (x, y) in v
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(a["signatures"].as_array().unwrap())
        {
            for k in ["count", "first_id", "first_seed"] {
                x[k] = y[k].clone();
            }
        }
        v
    });
    for cell in b["summary"].as_array().unwrap() {
        let stored = b["failures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["variant"] == cell["variant"]
                    && f["model"] == cell["model"]
                    && f["p"] == cell["p"]
            })
            .count() as u64;
        assert_eq!(stored, cell["failures"].as_u64().unwrap().min(20), "{cell}");
    }
    eprintln!("report sizes: 40 runs {small} bytes, 400 runs {big} bytes");
    assert!(
        (big as f64) < 1.5 * small as f64,
        "10x the runs made the report {big} bytes, from {small}"
    );
}

#[test]
fn executions_not_stored_in_full_still_replay() {
    let s = mp();
    let o = s.run(&[
        "fuzz",
        "mp.toml",
        "--variant",
        "unfenced",
        "--model",
        "bugaroo",
        "--p",
        "1",
        "--runs",
        "30",
        "--keep-failures",
        "2",
        "--report",
        "r.json",
        "-q",
    ]);
    assert_exit(&o, 1);
    let r = read_json(&s.path("r.json"));
    let stored: Vec<u64> = r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_u64().unwrap())
        .collect();
    assert_eq!(stored.len(), 2);
    assert!(r["summary"][0]["failures"].as_u64().unwrap() > 2, "{r}");
    // Replay every id: exactly the counted number fail, including ids not stored.
    let mut failing = 0;
    for id in 0..30u64 {
        let o = s.run(&["replay", "r.json", "--exec", &id.to_string(), "--json"]);
        match o.status.code() {
            Some(1) => failing += 1,
            Some(0) => {}
            _ => panic!("replay {id}: {}", stderr(&o)),
        }
        if stored.contains(&id) {
            assert_eq!(json(&stdout(&o))["reproduced"], true);
        }
    }
    assert_eq!(failing, r["summary"][0]["failures"].as_u64().unwrap());
}

// ------------------------------------------------------------------- resume

/// A tiny deterministic generator (splitmix64) for kill times.
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

/// The parts of a report that must not depend on how the run was split, interrupted or
/// parallelised: everything but wall-clock times.
fn deterministic(r: &Value) -> Value {
    let mut r = r.clone();
    let o = r.as_object_mut().unwrap();
    o.remove("wall_seconds");
    for f in o.get_mut("failures").unwrap().as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("wall_ms");
    }
    r
}

#[cfg(unix)]
#[test]
fn sigkill_at_random_moments_then_resume_equals_an_uninterrupted_run() {
    let s = cbe();
    let plan = ["fuzz", "dot.toml", "--runs", "500", "-j", "2", "-q"];
    let o = s.run(&[&plan[..], &["--report", "full.json"]].concat());
    assert_exit(&o, 1);
    let full = read_json(&s.path("full.json"));
    assert_eq!(full["executions_done"], 6000);

    let mut pick = Pick(17);
    let part = s.path("part.json");
    let mut kills = 0;
    let mut resumes = 0;
    let last = loop {
        let args: Vec<&str> = if part.exists() {
            resumes += 1;
            vec![
                "fuzz",
                "--resume",
                "part.json",
                "-j",
                "2",
                "-q",
                "--checkpoint-secs",
                "0.1",
            ]
        } else {
            [
                &plan[..],
                &["--report", "part.json", "--checkpoint-secs", "0.1"],
            ]
            .concat()
        };
        let mut child = s.spawn(&args);
        if kills < 5 {
            let ms = 150 + pick.next() % 500;
            std::thread::sleep(Duration::from_millis(ms));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
                let _ = child.wait();
                kills += 1;
                if part.exists() {
                    // What a SIGKILL leaves: a valid partial report, or, when the kill
                    // lands between the final report's write and the exit, the complete
                    // one (which the next `--resume` finds nothing left to run in).
                    let r = read_json(&part);
                    assert!(
                        r["interrupted"] == true || r["executions_done"] == 6000,
                        "a killed run left interrupted {} with {} executions done",
                        r["interrupted"],
                        r["executions_done"]
                    );
                }
                continue;
            }
        }
        break wait(child, Duration::from_secs(120));
    };
    assert_exit(&last, 1);
    eprintln!("{kills} SIGKILLs, {resumes} resumes");
    assert!(
        kills >= 2 && resumes >= 1,
        "kills {kills}, resumes {resumes}"
    );
    let resumed = read_json(&part);
    assert_eq!(resumed["interrupted"], false);
    assert_eq!(
        serde_json::to_string(&resumed["summary"]).unwrap(),
        serde_json::to_string(&full["summary"]).unwrap()
    );
    assert_eq!(deterministic(&resumed), deterministic(&full));
    assert!(!s.path("part.json.lock").exists());
}

#[test]
fn resume_refuses_a_live_run_and_changed_sources() {
    let s = cbe();
    let mut child = s.spawn(&[
        "fuzz",
        "dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "1000000",
        "--report",
        "r.json",
        "-q",
        "--checkpoint-secs",
        "0.1",
    ]);
    wait_for(&s.path("r.json"), Duration::from_secs(60));
    let o = s.run(&["fuzz", "--resume", "r.json"]);
    let _ = child.kill();
    let _ = child.wait();
    assert_exit(&o, 2);
    assert!(
        stderr(&o).contains("being written by another run that is still alive")
            && stderr(&o).contains(&format!("pid {}", child.id())),
        "{}",
        stderr(&o)
    );
    // Killed: its lock is stale now; resuming needs the same sources.
    let cu = std::fs::read_to_string(s.path("cbe_dot.cu")).unwrap();
    s.write("cbe_dot.cu", &format!("{cu}\n// edited\n"));
    let o = s.run(&["fuzz", "--resume", "r.json"]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("cbe_dot.cu (sha256"), "{}", stderr(&o));
    s.write("cbe_dot.cu", &cu);
    s.write("dot.toml", &CBE_DOT.replace("runs = 4", "runs = 5"));
    let o = s.run(&["fuzz", "--resume", "r.json"]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("the campaign file"), "{}", stderr(&o));
    // Plan options come from the report.
    let o = s.run(&["fuzz", "--resume", "r.json", "--runs", "3"]);
    assert_exit(&o, 2);
    let o = s.run(&["fuzz", "--resume", "missing.json"]);
    assert_exit(&o, 2);
    // Another build of the same version: its seeds may name other executions.
    s.write("dot.toml", CBE_DOT);
    let text = std::fs::read_to_string(s.path("r.json")).unwrap();
    let mut v = json(&text);
    assert!(
        v["build"]
            .as_str()
            .is_some_and(|b| b.starts_with("fencehound ") && b.contains("(executable ")),
        "{}",
        v["build"]
    );
    // Resuming `report` is refused with `why`.
    let refused = |report: &Value, why: &str| {
        s.write("r.json", &report.to_string());
        let o = s.run(&["fuzz", "--resume", "r.json"]);
        assert_exit(&o, 2);
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    };
    v["build"] = "fencehound 0.1.0 (executable 00000000000000000000000000000000)".into();
    refused(&v, "written by another build of fencehound");
    // A report that does not say which build wrote it (older versions).
    v.as_object_mut().unwrap().remove("build");
    refused(&v, "does not record which build");
}

// ------------------------------------------------------------- shards, merge

#[test]
fn four_shards_merged_equal_the_unsharded_run_on_two_corpus_campaigns() {
    let s = Scratch::with(&["cbe_dot.cu", "cbe_dot.toml", "sdk_red.cu", "sdk_red.toml"]);
    for name in ["cbe_dot", "sdk_red"] {
        let toml = format!("{name}.toml");
        let common = ["fuzz", &toml, "--runs", "6", "--keep-failures", "3", "-q"];
        let full = format!("{name}.full.json");
        let o = s.run(&[&common[..], &["--report", &full]].concat());
        assert_exit(&o, 1);
        let mut shards = Vec::new();
        for i in [2, 0, 3, 1] {
            let shard = format!("{i}/4");
            let o = s.run(&[&common[..], &["--shard", &shard, "--json"]].concat());
            assert_exit(&o, 1);
            let v = json(&stdout(&o));
            let path = v[0]["report"].as_str().unwrap().to_string();
            assert_eq!(
                path,
                format!("fencehound-out/{name}.shard-{i}-of-4.report.json")
            );
            let r = read_json(&s.path(&path));
            assert_eq!(r["shard"]["index"], i);
            // Shard seeds are the unsharded run's: every stored failure matches its id.
            let f = read_json(&s.path(&full));
            for x in r["failures"].as_array().unwrap() {
                let id = x["id"].as_u64().unwrap();
                assert_eq!(id % 4, i);
                if let Some(y) = f["failures"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|y| y["id"] == x["id"])
                {
                    assert_eq!(x["seed"], y["seed"]);
                    assert_eq!(x["output_hash"], y["output_hash"]);
                }
            }
            shards.push(path);
        }
        let all = format!("{name}.all.json");
        let o = s.run(
            &[
                &["merge"][..],
                &shards.iter().map(String::as_str).collect::<Vec<_>>(),
                &["-o", &all],
            ]
            .concat(),
        );
        assert_exit(&o, 1);
        assert!(stdout(&o).contains("UNDERFENCED"), "{}", stdout(&o));
        // The summary section byte for byte, as the files have it.
        let section = |p: &str| {
            let text = std::fs::read_to_string(s.path(p)).unwrap();
            let start = text.find("\n  \"summary\": [").unwrap();
            let end = start + text[start..].find("\n  ],").unwrap();
            text[start..end].to_string()
        };
        assert_eq!(section(&all), section(&full), "{name}");
        let (m, f) = (read_json(&s.path(&all)), read_json(&s.path(&full)));
        assert_eq!(deterministic(&m), deterministic(&f), "{name}");
    }
    // Shards of different campaigns, a missing shard, a shard twice, a whole report.
    let shard = |name: &str, i: u32| format!("fencehound-out/{name}.shard-{i}-of-4.report.json");
    for (args, why) in [
        (
            vec![
                shard("cbe_dot", 0),
                shard("sdk_red", 1),
                shard("cbe_dot", 2),
                shard("cbe_dot", 3),
            ],
            "differs between the reports",
        ),
        (
            vec![
                shard("cbe_dot", 0),
                shard("cbe_dot", 1),
                shard("cbe_dot", 3),
            ],
            "shards 2 of 4 are missing",
        ),
        (
            vec![
                shard("cbe_dot", 0),
                shard("cbe_dot", 0),
                shard("cbe_dot", 2),
                shard("cbe_dot", 3),
            ],
            "shard 0/4 is given twice",
        ),
        (
            vec!["cbe_dot.full.json".to_string(), shard("cbe_dot", 1)],
            "whole (unsharded) report",
        ),
    ] {
        let mut a = vec!["merge".to_string()];
        a.extend(args);
        a.extend(["-o".to_string(), "x.json".to_string()]);
        let o = s.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_exit(&o, 2);
        assert!(stderr(&o).contains(why), "{a:?}: {}", stderr(&o));
    }
    assert!(!s.path("x.json").exists());
    // An out-of-range shard is a usage error.
    for bad in ["4/4", "1/0", "x/4", "3"] {
        let o = s.run(&["fuzz", "cbe_dot.toml", "--shard", bad]);
        assert_exit(&o, 2);
    }
}

// --------------------------------------------------------------------- diff

#[test]
fn diff_names_a_planted_regression_and_exits_1() {
    let s = cbe();
    let args = |report: &str| {
        [
            "fuzz",
            "dot.toml",
            "--variant",
            "two_fences",
            "--race",
            "--runs",
            "3",
            "--report",
            report,
            "-q",
        ]
        .map(str::to_string)
    };
    let run = |a: [String; 10]| s.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_exit(&run(args("old.json")), 0);
    // Tonight someone removed the fences of `two_fences`.
    s.write(
        "dot.toml",
        &CBE_DOT.replace(
            "[variants.two_fences]\n",
            "[variants.two_fences]\ndefines = { LOCK_FENCE = \"(void)0\", UNLOCK_FENCE = \"(void)0\" }\n",
        ),
    );
    assert_exit(&run(args("new.json")), 1);
    let o = s.run(&["diff", "old.json", "new.json"]);
    assert_exit(&o, 1);
    let out = stdout(&o);
    for want in [
        "did not test the same inputs",
        "campaign file dot.toml: sha256",
        "variant two_fences: PTX sha256",
        "new failures:\n  two_fences bugaroo p_w=0.5: 0/3",
        "(expected to pass)  WORSE",
        "new races:\n  two_fences: lock-misuse race",
        "cbe_dot.cu:49",
        "verdict: WORSE",
    ] {
        assert!(out.contains(want), "missing `{want}` in:\n{out}");
    }
    let o = s.run(&["diff", "old.json", "new.json", "--json"]);
    assert_exit(&o, 1);
    let v = json(&stdout(&o));
    assert_eq!(v["worse"], true);
    assert_eq!(v["new_failures"].as_array().unwrap().len(), 4);
    // Backwards it is a fix; a report against itself is no change.
    let o = s.run(&["diff", "new.json", "old.json"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("fixed:"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("races no longer seen:"),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["diff", "old.json", "old.json"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("no change"), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains("did not test the same"),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["diff", "old.json", "dot.toml"]);
    assert_exit(&o, 2);
}

// -------------------------------------------------------------- SARIF, JUnit

/// Validates a SARIF file against the SARIF 2.1.0 schema shipped in `tests/data`.
#[track_caller]
fn valid_sarif(p: &Path) -> Value {
    let schema = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json"),
    );
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    let doc = read_json(p);
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:#?}", p.display());
    assert_eq!(doc["version"], "2.1.0");
    // The validator does reject what the schema forbids (a control for the check).
    let mut bad = doc.clone();
    bad["runs"][0]["results"] = serde_json::json!([{ "level": "fatal", "message": {} }]);
    assert!(!validator.is_valid(&bad));
    doc
}

fn results<'a>(doc: &'a Value, rule: &str) -> Vec<&'a Value> {
    doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == rule)
        .collect()
}

#[test]
fn sarif_validates_and_junit_has_one_case_per_variant_and_model() {
    let s = cbe();
    // Without expectations, so that failing variants are failing test cases.
    let plain: String = CBE_DOT
        .lines()
        .filter(|l| !l.starts_with("expect"))
        .map(|l| format!("{l}\n"))
        .collect();
    s.write("plain.toml", &plain);
    let o = s.run(&[
        "fuzz",
        "plain.toml",
        "--race",
        "--runs",
        "3",
        "--sarif",
        "out/fuzz.sarif",
        "--junit",
        "out/fuzz.xml",
        "-q",
    ]);
    assert_exit(&o, 1);
    let doc = valid_sarif(&s.path("out/fuzz.sarif"));
    let rules: Vec<&str> = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules.len(), 5);
    let failing = results(&doc, "fencehound/underfenced-variant");
    let names: Vec<String> = failing
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["properties"]["variant"].as_str().unwrap(),
                r["properties"]["model"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        ["no_fence bugaroo", "no_fence scoped", "block_fence scoped"]
    );
    let loc = &failing[0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "plain.toml");
    let line = plain
        .lines()
        .position(|l| l == "[variants.no_fence]")
        .unwrap()
        + 1;
    assert_eq!(loc["region"]["startLine"], line);
    assert!(failing[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("fencehound replay"));
    let races = results(&doc, "fencehound/race");
    assert!(!races.is_empty());
    for r in &races {
        let l = &r["locations"][0]["physicalLocation"];
        assert_eq!(l["artifactLocation"]["uri"], "cbe_dot.cu", "{r}");
        assert_eq!(l["region"]["startLine"], 49, "{r}");
    }

    // JUnit: parses, one case per variant × model, failures carry seed and replay.
    let xml = std::fs::read_to_string(s.path("out/fuzz.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let cases: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    assert_eq!(
        names,
        [
            "two_fences [bugaroo]",
            "two_fences [scoped]",
            "no_fence [bugaroo]",
            "no_fence [scoped]",
            "block_fence [bugaroo]",
            "block_fence [scoped]"
        ]
    );
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.children().any(|x| x.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(
        failed,
        [
            "no_fence [bugaroo]",
            "no_fence [scoped]",
            "block_fence [scoped]"
        ]
    );
    let msg = cases[2]
        .children()
        .find(|x| x.has_tag_name("failure"))
        .and_then(|f| f.attribute("message"))
        .unwrap();
    assert!(
        msg.contains(" seed ") && msg.contains("fencehound replay"),
        "{msg}"
    );
    // The replay command in the message works as written.
    let cmd = msg.split("replay: ").nth(1).unwrap();
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    assert_exit(&s.run(&args), 1);
    // With expectations, a variant that fails as expected is a passing case.
    let o = s.run(&["fuzz", "dot.toml", "--runs", "3", "--junit", "x.xml", "-q"]);
    assert_exit(&o, 1);
    let xml = std::fs::read_to_string(s.path("x.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        6
    );
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        0
    );

    // minimize: the missing fence after line 49, with the insertion as a fix.
    let o = s.run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "no_fence",
        "--batch",
        "5",
        "--confirm",
        "10",
        "--sarif",
        "min.sarif",
    ]);
    assert_exit(&o, 1);
    let doc = valid_sarif(&s.path("min.sarif"));
    let missing = results(&doc, "fencehound/missing-fence");
    // Under the default model (`weak`) both sides of the lock need a fence: the one
    // after the critical section's store (line 49) is among them.
    let m = missing
        .iter()
        .find(|m| m["locations"][0]["physicalLocation"]["region"]["startLine"] == 49)
        .unwrap_or_else(|| panic!("no missing fence after line 49: {missing:?}"));
    let rep = &m["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(rep["deletedRegion"]["startLine"], 50);
    assert_eq!(
        rep["deletedRegion"]["startColumn"],
        rep["deletedRegion"]["endColumn"]
    );
    assert!(rep["insertedContent"]["text"]
        .as_str()
        .unwrap()
        .contains("__threadfence();"));

    // audit: under the default model (`weak`, loads may read older values) the fence
    // after taking the lock (line 27) is needed: it must not come out redundant.
    let o = s.run(&[
        "audit",
        "dot.toml",
        "--variant",
        "two_fences",
        "--runs",
        "10",
        "--sarif",
        "audit.sarif",
    ]);
    assert_exit(&o, 0);
    let doc = valid_sarif(&s.path("audit.sarif"));
    let redundant = results(&doc, "fencehound/redundant-fence");
    assert!(
        !redundant
            .iter()
            .any(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == 27),
        "{doc}"
    );

    // race: the same races as fuzz --race found.
    let o = s.run(&[
        "race",
        "dot.toml",
        "--variant",
        "no_fence",
        "--runs",
        "3",
        "--expose",
        "3",
        "--sarif",
        "race.sarif",
    ]);
    assert_exit(&o, 1);
    let doc = valid_sarif(&s.path("race.sarif"));
    assert!(!results(&doc, "fencehound/race").is_empty());
}
