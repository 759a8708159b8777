//! Helpers the CLI test modules share.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// Bytes as text, lossily (for messages and `contains` checks).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The process exited with `code`; otherwise fail showing its stdout and stderr.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

/// A file of `campaigns/`.
pub fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("campaigns")
        .join(name)
}

/// One PTX cache for the tests that run in a [`Scratch`]: the corpus kernels compile once.
pub fn cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

#[track_caller]
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// A temporary directory that is the binary's working directory (so `fencehound-out/`
/// lands here), with campaign files written here and `.cu` kernels copied from
/// `campaigns/`.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A temporary directory holding copies of the named corpus files.
    pub fn with(files: &[&str]) -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        for f in files {
            std::fs::copy(corpus(f), s.path(f)).unwrap();
        }
        s
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p
    }
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        // The working directory is outside the checkout: point the binary at the
        // project's `.tools/cuda` unless the caller chose tools already.
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
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fencehound")
    }
    /// Runs `fencehound ARGS` here; no input may reach a panic.
    pub fn run(&self, args: &[&str]) -> Output {
        let o = self.cmd().args(args).output().expect("run fencehound");
        let err = text(&o.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "panic in {args:?}:\n{err}"
        );
        o
    }
    pub fn out_dir(&self) -> PathBuf {
        self.path("fencehound-out")
    }
    /// Every file in `fencehound-out/`: no temporary leftovers, every report valid JSON.
    pub fn check_out_dir(&self) {
        let Ok(rd) = std::fs::read_dir(self.out_dir()) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!name.starts_with('.'), "leftover temporary file {name}");
            if name.ends_with(".json") {
                json(&std::fs::read_to_string(&p).unwrap());
            }
        }
    }
}

/// The dot-product campaign, small: 8 blocks of 64 threads, few runs.
pub const CBE_DOT: &str = r#"
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

/// A [`Scratch`] with `cbe_dot.cu` and [`CBE_DOT`] as `dot.toml`.
pub fn cbe() -> Scratch {
    let s = Scratch::with(&["cbe_dot.cu"]);
    s.write("dot.toml", CBE_DOT);
    s
}
