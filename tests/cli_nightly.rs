//! End-to-end tests of nightly use: where reports go, concurrent runs of one campaign,
//! small reports, `--resume` after SIGKILL, `--shard` + `merge`, `diff`, SARIF, JUnit and
//! the HTML report.
//!
//! Every test works in its own temporary directory with campaign files written there and
//! `.cu` kernels copied from `campaigns/`; the PTX cache is one temporary directory shared
//! by the tests of this file. NVRTC is required (`scripts/setup-cuda.sh`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("campaigns")
        .join(name)
}

fn cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

#[track_caller]
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[track_caller]
fn read_json(p: &Path) -> Value {
    json(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn with(files: &[&str]) -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        for f in files {
            std::fs::copy(corpus(f), s.path(f)).unwrap();
        }
        s
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p
    }
    fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        let tools = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".tools")
            .join("cuda");
        if std::env::var_os("FENCEHOUND_TOOLS_DIR").is_none() && tools.exists() {
            c.env("FENCEHOUND_TOOLS_DIR", tools);
        }
        c.current_dir(self.dir.path())
            .env("FENCEHOUND_CACHE_DIR", cache())
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null());
        c
    }
    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fencehound")
    }
    /// Runs `fencehound ARGS` here; no input may reach a panic.
    fn run(&self, args: &[&str]) -> Output {
        let o = self.cmd().args(args).output().expect("run fencehound");
        let err = stderr(&o);
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "panic in {args:?}:\n{err}"
        );
        o
    }
}

/// The dot-product campaign, small: 8 blocks of 64 threads.
const CBE_DOT: &str = r#"
source = "cbe_dot.cu"
seed = 7
buffers = [
  "a:i32[2048] random(11,-8,8)",
  "b:i32[2048] random(12,-8,8)",
  "c:f32[1] zero",
  "mutex:i32[1] zero",
]

[[launch]]
kernel = "dot"
grid = [8]
block = [64]
args = ["a", "b", "c", "mutex", "n:i32=2048"]

[[oracle]]
type = "golden"
buffers = ["c", "mutex"]

[budget]
fuel = 2_000_000
wall_ms = 5_000

[fuzz]
models = ["bugaroo", "scoped"]
p = [0.5, 1.0]
runs = 4

[variants.two_fences]
expect = "pass"

[variants.no_fence]
defines = { LOCK_FENCE = "(void)0", UNLOCK_FENCE = "(void)0" }
expect = "fail"

[variants.block_fence]
defines = { LOCK_FENCE = "(void)0", UNLOCK_FENCE = "__threadfence_block()" }
expect = { bugaroo = "pass", scoped = "fail" }
"#;

fn cbe() -> Scratch {
    let s = Scratch::with(&["cbe_dot.cu"]);
    s.write("dot.toml", CBE_DOT);
    s
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
