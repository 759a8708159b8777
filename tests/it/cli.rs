//! End-to-end tests of the `fencehound` binary: exit codes (0 ok, 2 usage or input error),
//! what goes to stdout and stderr, and that no input makes it panic.
//!
//! These run the real NVRTC and ptxas and fail, never skip, when they are missing
//! (`scripts/setup-cuda.sh` installs them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::assert_exit;

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

const KERNEL: &str = r#"
extern "C" __global__ void publish(int *data, volatile int *flag, int value) {
    data[threadIdx.x] = value;
#ifdef WITH_FENCE
    __threadfence();
#endif
    if (threadIdx.x == 0) {
        *flag = 1;
    }
}
"#;

/// A command with its own empty PTX cache, so tests neither see nor leave stale entries.
fn fencehound(cache: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("FENCEHOUND_CACHE_DIR", cache)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null());
    c
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run fencehound");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // No input may reach a panic (the message would go to stderr).
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "panic in {cmd:?}:\n{stderr}"
    );
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    fn cache(&self) -> PathBuf {
        self.path("cache")
    }
    /// Runs in the package root (cargo's default for tests), like a user in the checkout:
    /// the project-local `.tools/cuda` is found from there even when the binary lives in a
    /// `CARGO_TARGET_DIR` outside the checkout. Files go to the scratch directory by
    /// absolute path.
    fn cmd(&self) -> Command {
        fencehound(&self.cache())
    }
    /// PTX for [`KERNEL`] via `fencehound compile`.
    fn ptx(&self, arch: &str) -> PathBuf {
        let cu = self.write("publish.cu", KERNEL);
        let out = self.path(&format!("publish.{arch}.ptx"));
        let o = run(self
            .cmd()
            .arg("compile")
            .arg(&cu)
            .args(["--arch", arch, "-o"])
            .arg(&out));
        assert_exit(&o, 0);
        out
    }
}

// ---------------------------------------------------------------- compile

#[test]
fn compile_to_stdout() {
    let s = Scratch::new();
    let cu = s.write("publish.cu", KERNEL);
    let o = run(s.cmd().arg("compile").arg(&cu));
    assert_exit(&o, 0);
    let ptx = stdout(&o);
    assert!(ptx.contains(".visible .entry publish"), "{ptx}");
    assert!(
        ptx.contains(".target sm_80"),
        "default arch is compute_80: {ptx}"
    );
    assert!(ptx.contains("\t.loc\t"), "always -lineinfo");
    fencehound_ptx::parse("stdout.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn compile_to_file_writes_nothing_to_stdout() {
    let s = Scratch::new();
    let cu = s.write("publish.cu", KERNEL);
    let out = s.path("sub.ptx");
    let o = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .args(["--arch", "compute_90", "-o"])
        .arg(&out));
    assert_exit(&o, 0);
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let ptx = std::fs::read_to_string(&out).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    // Written atomically: no temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn compile_define_changes_the_output() {
    let s = Scratch::new();
    let cu = s.write("publish.cu", KERNEL);
    let plain = run(s.cmd().arg("compile").arg(&cu));
    let fenced = run(s.cmd().arg("compile").arg(&cu).args(["-D", "WITH_FENCE"]));
    let fenced_eq = run(s.cmd().arg("compile").arg(&cu).arg("-DWITH_FENCE=1"));
    for o in [&plain, &fenced, &fenced_eq] {
        assert_exit(o, 0);
    }
    assert!(!stdout(&plain).contains("membar.gl"), "{}", stdout(&plain));
    assert!(stdout(&fenced).contains("membar.gl"), "{}", stdout(&fenced));
    assert!(stdout(&fenced_eq).contains("membar.gl"));
    // A bad macro name is a usage error.
    let o = run(s.cmd().arg("compile").arg(&cu).args(["-D", "1X"]));
    assert_exit(&o, 2);
}

#[test]
fn compile_nvrtc_option_is_passed_through() {
    let s = Scratch::new();
    let cu = s.write(
        "sin.cu",
        "extern \"C\" __global__ void k(float *p) { p[0] = sinf(p[0]); }\n",
    );
    let precise = run(s.cmd().arg("compile").arg(&cu));
    let fast = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .arg("--nvrtc-option=-use_fast_math"));
    assert_exit(&precise, 0);
    assert_exit(&fast, 0);
    assert!(!stdout(&precise).contains("sin.approx"));
    assert!(stdout(&fast).contains("sin.approx"), "{}", stdout(&fast));
    // Separate-word form, with a value starting with `-`.
    let fast2 = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .args(["--nvrtc-option", "-use_fast_math"]));
    assert_exit(&fast2, 0);
    assert_eq!(stdout(&fast2), stdout(&fast));

    // NVRTC rejecting the option is an input error with NVRTC's words.
    let o = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .arg("--nvrtc-option=--no-such-option"));
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("no-such-option"), "{}", stderr(&o));
    // So is an unknown placeholder.
    let o = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .arg("--nvrtc-option=-I$NOPE"));
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("$NOPE"), "{}", stderr(&o));
}

#[test]
fn compile_with_bundled_headers_placeholder() {
    // The default cache (bundled headers are extracted once per NVRTC version there).
    let s = Scratch::new();
    let cu = s.write(
        "h.cu",
        "#include <cuda_fp16.h>\n\
         extern \"C\" __global__ void k(__half *p) { p[0] = __hadd(p[0], p[1]); }\n",
    );
    let mut cmd = Command::new(BIN);
    cmd.arg("compile")
        .arg(&cu)
        .arg("--nvrtc-option=--use-bundled-headers=$NVRTC_BUNDLED_HEADERS");
    let o = run(&mut cmd);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains(".entry k"), "{}", stdout(&o));
}

#[test]
fn compile_error_exits_2_with_nvrtcs_log() {
    let s = Scratch::new();
    let cu = s.write(
        "broken.cu",
        "extern \"C\" __global__ void k(int *p) {\n    *p = 1\n}\n",
    );
    let o = run(s.cmd().arg("compile").arg(&cu));
    assert_exit(&o, 2);
    assert!(stdout(&o).is_empty(), "no PTX on failure: {}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("broken.cu(3)"), "{err}");
    assert!(err.contains("expected a \";\""), "{err}");
    // No output file is created on failure.
    let out = s.path("broken.ptx");
    let o = run(s.cmd().arg("compile").arg(&cu).arg("-o").arg(&out));
    assert_exit(&o, 2);
    assert!(!out.exists());
}

#[test]
fn compile_missing_file_exits_2() {
    let s = Scratch::new();
    let o = run(s.cmd().args(["compile", "does-not-exist.cu"]));
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("does-not-exist.cu"), "{}", stderr(&o));
}

#[test]
fn compile_unsupported_arch_exits_2() {
    let s = Scratch::new();
    let cu = s.write("publish.cu", KERNEL);
    let o = run(s
        .cmd()
        .arg("compile")
        .arg(&cu)
        .args(["--arch", "compute_70"]));
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("compute_70") && err.contains("compute_75"),
        "{err}"
    );
    let o = run(s.cmd().arg("compile").arg(&cu).args(["--arch", "sm_80"]));
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("compute_80"), "{}", stderr(&o));
}

// ---------------------------------------------------------------- ptx fmt

#[test]
fn ptx_fmt_output_reparses_and_assembles() {
    let s = Scratch::new();
    for (arch, sm) in [("compute_75", "sm_75"), ("compute_90", "sm_90")] {
        let ptx = s.ptx(arch);
        let o = run(s.cmd().args(["ptx", "fmt"]).arg(&ptx));
        assert_exit(&o, 0);
        let printed = stdout(&o);
        let original =
            fencehound_ptx::parse("orig.ptx", &std::fs::read_to_string(&ptx).unwrap()).unwrap();
        let reparsed = fencehound_ptx::parse("fmt.ptx", &printed).unwrap_or_else(|e| panic!("{e}"));
        assert!(reparsed == original, "fmt changed the module");
        fencehound_toolchain::assemble(&printed, sm).unwrap_or_else(|e| panic!("{e}"));

        // -o writes the same text; stdin works too.
        let out = s.path("fmt.ptx");
        let o = run(s.cmd().args(["ptx", "fmt"]).arg(&ptx).arg("-o").arg(&out));
        assert_exit(&o, 0);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), printed);
        let o = run(s
            .cmd()
            .args(["ptx", "fmt", "-"])
            .stdin(std::fs::File::open(&ptx).unwrap()));
        assert_exit(&o, 0);
        assert_eq!(stdout(&o), printed);
        // Formatting is idempotent.
        let o = run(s.cmd().args(["ptx", "fmt"]).arg(&out));
        assert_eq!(stdout(&o), printed);
    }
}

#[test]
fn ptx_fmt_malformed_exits_2() {
    let s = Scratch::new();
    let bad = s.write("bad.ptx", ".version 8.5\n.target sm_80\nfrobnicate;\n");
    let o = run(s.cmd().args(["ptx", "fmt"]).arg(&bad));
    assert_exit(&o, 2);
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("bad.ptx:3:1"), "{}", stderr(&o));
}

// ---------------------------------------------------------------- ptx check

#[test]
fn ptx_check_ok() {
    let s = Scratch::new();
    let ptx = s.ptx("compute_80");
    let o = run(s.cmd().args(["ptx", "check"]).arg(&ptx));
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("ok") && out.contains("publish"), "{out}");
}

/// Valid PTX with constructs the vgpu cannot run: each is listed with its line, the
/// exit code stays 0 (the file is fine for a GPU), and `--json` has them per file.
#[test]
fn ptx_check_lists_what_the_vgpu_cannot_run() {
    let s = Scratch::new();
    let ptx = s.write(
        "partly.ptx",
        ".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
         .reg .b32 %r<8>;\n .reg .b64 %rd<2>;\n\
         vmad.s32.s32.s32 %r1, %r2, %r3, %r4;\n\
         add.u32 %r5, %r1, WARP_SZ;\n\
         mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, {%r0, %r1}, {%r2, %r3}, {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};\n\
         ret;\n}\n",
    );
    let o = run(s.cmd().args(["ptx", "check"]).arg(&ptx));
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("cannot run 2 construct(s)"), "{out}");
    assert!(out.contains("vmad") && out.contains("PTX line 8"), "{out}");
    assert!(
        out.contains("shape") && out.contains("PTX line 10"),
        "{out}"
    );
    let o = run(s.cmd().args(["ptx", "check", "--json"]).arg(&ptx));
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    assert_eq!(
        v[0]["vgpu_unsupported"].as_array().map(|a| a.len()),
        Some(2),
        "{v:#}"
    );
}

#[test]
fn ptx_check_json_has_one_result_per_file() {
    let s = Scratch::new();
    let good = s.ptx("compute_80");
    let bad = s.write("bad.ptx", ".version 8.5\n.target sm_80\nfrobnicate;\n");
    let o = run(s.cmd().args(["ptx", "check", "--json"]).arg(&good));
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let files = v.as_array().expect("an array of per-file results");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[0]["kernels"][0], "publish");
    assert!(files[0]["instructions"].as_u64().unwrap() > 0);
    assert_eq!(files[0]["vgpu_unsupported"], serde_json::json!([]));

    let missing = s.path("missing.ptx");
    let o = run(s
        .cmd()
        .args(["ptx", "check", "--json"])
        .arg(&good)
        .arg(&bad)
        .arg(&missing));
    assert_exit(&o, 2);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let files = v.as_array().unwrap();
    assert_eq!(files.len(), 3, "{v:#}");
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[1]["ok"], false);
    assert_eq!(files[1]["errors"][0]["line"], 3);
    assert_eq!(files[1]["errors"][0]["col"], 1);
    assert_eq!(files[1]["errors"][0]["found"], "frobnicate");
    assert_eq!(files[2]["ok"], false);
    assert!(files[2]["file"].as_str().unwrap().ends_with("missing.ptx"));
}

/// Every malformed input: exit 2, `file:line:col` in the message, no panic.
#[test]
fn ptx_check_malformed_inputs() {
    let s = Scratch::new();
    let good = std::fs::read_to_string(s.ptx("compute_80")).unwrap();
    let cut = good.find("ret;").expect("a ret");
    let mut non_utf8 = b".version 8.5\n.target sm_80\n// caf".to_vec();
    non_utf8.extend_from_slice(&[0xe9, b'\n']);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.ptx", good.as_bytes()[..cut].to_vec(), ""),
        (
            "unknown-opcode.ptx",
            good.replacen("mov.u32", "frobnicate.u32", 1).into_bytes(),
            "unknown instruction",
        ),
        (
            "operand-count.ptx",
            good.replacen("ret;", "ret %r1, %r2;", 1).into_bytes(),
            "operands",
        ),
        (
            "garbage.ptx",
            b"\x00\x01\x02\x7fELF\x02\x01\x01 garbage \xc3\xa9".to_vec(),
            "",
        ),
        (
            "binary.ptx",
            (0u8..=255).rev().cycle().take(4096).collect(),
            "",
        ),
        ("non-utf8.ptx", non_utf8, "UTF-8"),
        (
            "empty-entry.ptx",
            b".version 8.5\n.target sm_80\n.entry".to_vec(),
            "",
        ),
    ];
    for (name, bytes, what) in &cases {
        let path = s.write(name, bytes);
        for json in [false, true] {
            let mut cmd = s.cmd();
            cmd.args(["ptx", "check"]).arg(&path);
            if json {
                cmd.arg("--json");
            }
            let o = run(&mut cmd);
            assert_exit(&o, 2);
            let text = if json { stdout(&o) } else { stderr(&o) };
            assert!(text.contains(what), "{name}: expected `{what}` in:\n{text}");
            if json {
                let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
                let e = &v[0]["errors"][0];
                assert!(e["line"].as_u64().unwrap() >= 1, "{name}: {v:#}");
                assert!(e["col"].as_u64().unwrap() >= 1, "{name}: {v:#}");
            } else {
                // `path:line:col:` with numbers, at the start of a line.
                let prefix = format!("{}:", path.display());
                let at = text
                    .find(&prefix)
                    .unwrap_or_else(|| panic!("{name}: no `{prefix}` in:\n{text}"));
                let mut rest = text[at + prefix.len()..].splitn(3, ':');
                for part in ["line", "col"] {
                    let n = rest.next().unwrap_or("");
                    assert!(
                        n.parse::<u32>().is_ok_and(|n| n >= 1),
                        "{name}: {part} `{n}` in:\n{text}"
                    );
                }
                assert!(
                    !text.contains('\0'),
                    "{name}: raw NUL written to stderr: {text:?}"
                );
            }
        }
    }
}

#[test]
fn ptx_check_stdin_and_missing_file() {
    let s = Scratch::new();
    let ptx = s.ptx("compute_80");
    let o = run(s
        .cmd()
        .args(["ptx", "check", "-"])
        .stdin(std::fs::File::open(&ptx).unwrap()));
    assert_exit(&o, 0);
    let o = run(s.cmd().args(["ptx", "check", "nope.ptx"]));
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("nope.ptx"), "{}", stderr(&o));
    // At least one input is required.
    assert_exit(&run(s.cmd().args(["ptx", "check"])), 2);
}

// ---------------------------------------------------------------- toolchain, usage

#[test]
fn toolchain_reports_the_tools() {
    let s = Scratch::new();
    let o = run(s.cmd().arg("toolchain"));
    assert_exit(&o, 0);
    let out = stdout(&o);
    for what in ["nvrtc", "ptxas", "cache"] {
        assert!(out.lines().any(|l| l.starts_with(what)), "{what}: {out}");
    }
    assert!(!out.contains("MISSING"), "{out}");
    assert!(out.contains(&s.cache().display().to_string()), "{out}");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let s = Scratch::new();
    for args in [
        &["frobnicate"][..],
        &["--no-such-flag"],
        &["compile", "--no-such-flag", "x.cu"],
        &["ptx", "fmt"],
        &["ptx", "frobnicate"],
        &[],
    ] {
        let o = run(s.cmd().args(args));
        assert_exit(&o, 2);
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        assert!(
            !stderr(&o).is_empty(),
            "{args:?}: usage error without a message"
        );
    }
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["compile", "--help"],
        &["ptx", "check", "--help"],
    ] {
        let o = run(s.cmd().args(args));
        assert_exit(&o, 0);
        assert!(stdout(&o).contains("Usage"), "{args:?}: {}", stdout(&o));
    }
    let o = run(s.cmd().arg("--version"));
    assert_exit(&o, 0);
    assert!(stdout(&o).starts_with("fencehound "), "{}", stdout(&o));
    // --help lists the subcommands.
    let help = stdout(&run(s.cmd().arg("--help")));
    for sub in ["compile", "ptx", "toolchain"] {
        assert!(help.contains(sub), "{help}");
    }
}
