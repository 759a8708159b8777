//! The `command` oracle with real programs.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::World;
use fencehound_oracle::{Buffer, Judgement, OracleError, OracleSpec, Outputs};

fn command(argv: &[&str], timeout_ms: Option<u64>) -> OracleSpec {
    OracleSpec::Command {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        timeout_ms,
    }
}

fn world(out: &[u32], input: &[u32]) -> World {
    World {
        outputs: Outputs::new(vec![
            Buffer::from_elems("c", out),
            Buffer::from_elems("n", &[out.len() as u64]),
        ]),
        inputs: Outputs::new(vec![Buffer::from_elems("c", input)]),
        golden: None,
    }
}

#[test]
fn exit_status_decides() {
    let w = world(&[1], &[1]);
    assert_eq!(
        w.judge(&[command(&["true"], None)]).unwrap(),
        Judgement::Pass
    );
    match w.judge(&[command(&["false"], None)]).unwrap() {
        Judgement::Fail(f) => {
            assert_eq!(f.oracle, "command(false)");
            assert_eq!(f.message, "`false` exited with status 1");
            assert_eq!(f.diff, "");
        }
        Judgement::Pass => panic!("false passed"),
    }
}

/// A judge that reads the manifest and the .npy files with plain file reads (no numpy).
const PERMUTATION_JUDGE: &str = r#"
import json, os, struct, sys
m = json.load(open(sys.argv[1]))
assert m["version"] == 1
assert m["dir"] == os.environ["FENCEHOUND_ORACLE_DIR"] == sys.argv[2]
assert sys.argv[1] == os.environ["FENCEHOUND_ORACLE_MANIFEST"]
assert m["golden"] is None
def load(entry):
    raw = open(os.path.join(m["dir"], entry["file"]), "rb").read()
    assert raw[:6] == b"\x93NUMPY" and raw[6] == 1, raw[:8]
    hlen = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + hlen].decode("latin1")
    assert (10 + hlen) % 64 == 0
    code = {"u32": "I", "u64": "Q"}[entry["type"]]
    assert "'shape': (%d,)" % entry["len"] in header, header
    data = raw[10 + hlen:]
    return list(struct.unpack("<%d%s" % (entry["len"], code), data))
out = {e["name"]: load(e) for e in m["outputs"]}
inp = {e["name"]: load(e) for e in m["inputs"]}
assert [e["file"] for e in m["outputs"]] == ["outputs/c.npy", "outputs/n.npy"]
assert out["n"] == [len(out["c"])]
if sorted(out["c"]) != sorted(inp["c"]):
    print("checked", len(out["c"]), "elements")
    print("c is not a permutation of the input:", out["c"], file=sys.stderr)
    sys.exit(3)
"#;

#[test]
fn python_judge_reads_manifest_and_npy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("judge.py"), PERMUTATION_JUDGE).unwrap();
    // Relative program arguments resolve in the campaign directory.
    let spec = command(&["python3", "judge.py", "{manifest}", "{dir}"], None);

    let good = world(&[3, 1, 2], &[1, 2, 3]);
    assert_eq!(
        good.judge_in(std::slice::from_ref(&spec), dir.path())
            .unwrap(),
        Judgement::Pass
    );

    let bad = world(&[3, 3, 2], &[1, 2, 3]);
    match bad.judge_in(&[spec], dir.path()).unwrap() {
        Judgement::Fail(f) => {
            assert_eq!(f.oracle, "command(python3)");
            assert_eq!(f.message, "`python3` exited with status 3");
            assert_eq!(
                f.diff,
                "stdout:\nchecked 3 elements\nstderr:\nc is not a permutation of the input: [3, 3, 2]\n"
            );
        }
        Judgement::Pass => panic!("a wrong output passed"),
    }
}

#[test]
fn golden_outputs_are_passed_when_present() {
    let mut w = world(&[5], &[5]);
    w.golden = Some(Outputs::new(vec![Buffer::from_elems("c", &[5u32])]));
    let script = r#"
import json, sys
m = json.load(open(sys.argv[1]))
sys.exit(0 if [g["file"] for g in m["golden"]] == ["golden/c.npy"] else 1)
"#;
    let spec = command(&["python3", "-c", script, "{manifest}"], None);
    assert_eq!(w.judge(&[spec]).unwrap(), Judgement::Pass);
}

#[test]
fn long_output_keeps_the_tail() {
    let w = world(&[1], &[1]);
    let script = "import sys\nprint('x' * 5000 + 'END')\nsys.exit(1)";
    match w
        .judge(&[command(&["python3", "-c", script], None)])
        .unwrap()
    {
        Judgement::Fail(f) => {
            assert!(
                f.diff.starts_with("stdout:\n[... 3004 bytes before]\n"),
                "{}",
                &f.diff[..60]
            );
            assert!(f.diff.ends_with("xxxEND\n"));
            assert!(f.diff.len() < 2100);
        }
        Judgement::Pass => panic!("exit 1 passed"),
    }
}

#[test]
fn timeout_is_an_error_and_kills_the_judge() {
    let w = world(&[1], &[1]);
    let start = Instant::now();
    let e = w
        .judge(&[command(&["sleep", "10"], Some(200))])
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        e.to_string(),
        "command(sleep): `sleep` did not finish within 200 ms and was killed"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn timeout_kills_the_judges_children_too() {
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("pid");
    let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
    let w = world(&[1], &[1]);
    let start = Instant::now();
    let e = w
        .judge(&[command(&["sh", "-c", &script], Some(300))])
        .unwrap_err();
    assert!(matches!(e, OracleError::CommandTimeout { .. }), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    // Gone, or a zombie waiting for init to reap it.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match std::fs::read_to_string(&stat) {
            Err(_) => break,
            Ok(s) if s.contains(") Z") => break,
            Ok(s) if Instant::now() > deadline => panic!("grandchild still running: {s}"),
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[cfg(unix)]
#[test]
fn death_by_signal_is_a_failure() {
    let w = world(&[1], &[1]);
    match w
        .judge(&[command(&["sh", "-c", "kill -9 $$"], None)])
        .unwrap()
    {
        Judgement::Fail(f) => assert_eq!(f.message, "`sh` was killed by signal 9"),
        Judgement::Pass => panic!("a killed judge passed"),
    }
}

#[test]
fn missing_program_is_an_error() {
    let w = world(&[1], &[1]);
    let e = w
        .judge(&[command(&["/nonexistent/fencehound-judge"], None)])
        .unwrap_err();
    assert!(matches!(e, OracleError::Spawn { .. }), "{e}");
    assert!(
        e.to_string().starts_with(
            "command(/nonexistent/fencehound-judge): cannot run `/nonexistent/fencehound-judge`: "
        ),
        "{e}"
    );
}

#[test]
fn huge_timeout_means_no_timeout() {
    let w = world(&[1], &[1]);
    assert_eq!(
        w.judge(&[command(&["true"], Some(u64::MAX))]).unwrap(),
        Judgement::Pass
    );
}
