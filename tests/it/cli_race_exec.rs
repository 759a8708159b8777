//! `fencehound exec --race` on a whole program (issue 23.5): one report per (kernel, pair
//! of source lines, class) over every address and launch, under the kernel name the
//! launch lines use, the side that misses its half of release/acquire named, and a race
//! makes the verdict and the exit status say so.
//!
//! The program is tests/programs/reduce_single_pass.cu (the CUDA samples' single-pass
//! reduction, 101 launches), built with `fencehound nvcc`; it needs nvcc like the other
//! program tests and fails, never skips, without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{assert_exit, text};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");
const PROGRAM: &str = "reduce_single_pass";

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{PROGRAM}.cu"))
}

/// Builds the program (with `defines`) into `dir`.
fn build(dir: &Path, defines: &[&str]) -> PathBuf {
    let exe = dir.join(format!(
        "{PROGRAM}{}",
        defines.join("").replace(['=', '-'], "")
    ));
    let out = Command::new(BIN)
        .arg("nvcc")
        .arg("-o")
        .arg(&exe)
        .args(defines)
        .arg(source())
        .output()
        .expect("run fencehound nvcc");
    assert!(
        out.status.success() && exe.is_file(),
        "fencehound nvcc failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    exe
}

fn exec_race(exe: &Path) -> Output {
    let out = Command::new(BIN)
        .args(["exec", "--race", "--seed", "0", "--"])
        .arg(exe)
        .stdin(Stdio::null())
        .output()
        .expect("run fencehound exec");
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "panic:\n{err}");
    out
}

/// The 1-based line of the source that contains `needle` (exactly one).
fn line_of(needle: &str) -> u32 {
    let src = std::fs::read_to_string(source()).expect("read the program");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "`{needle}` in {PROGRAM}.cu: lines {hits:?}");
    hits[0] as u32
}

/// The kernel name the launch lines give (`  #0   NAME grid (…`).
fn launch_name(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("#0 "))
        .unwrap_or_else(|| panic!("no launch line:\n{stderr}"));
    let rest = line.trim_start().trim_start_matches("#0").trim_start();
    rest.split(" grid (").next().unwrap_or_default().to_string()
}

/// A number printed right before `word` in `text` (e.g. `101` in "in 101 launch(es)").
fn count_before(text: &str, word: &str) -> u64 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no `{word}` in:\n{text}"));
    let before = text[..at].trim_end();
    let digits: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no count before `{word}` in:\n{text}"))
}

#[test]
fn single_pass_reduction_is_one_race_with_the_reader_side_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = line_of("partial[blockIdx.x] = s[0];");
    let load = line_of("sum += partial[b];");
    let ticket = line_of("atomicInc(&retirementCount");

    // The SDK shape: the writer fences before its ticket, the last block does not after.
    let o = exec_race(&build(dir.path(), &[]));
    let err = text(&o.stderr);
    assert_exit(&o, 1);
    assert!(
        err.contains("verdict: race(s) found"),
        "verdict does not say races were found:\n{err}"
    );
    let name = launch_name(&err);
    assert!(
        !name.starts_with("_Z") && name.starts_with("reduceSinglePass<"),
        "launch name `{name}`"
    );
    // Reports start with "race: "; exactly one, for the (store, load) line pair.
    let reports: Vec<&str> = err.split("\nrace: ").skip(1).collect();
    assert_eq!(reports.len(), 1, "expected one race report:\n{err}");
    let r = reports[0]
        .split("\nverdict:")
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(r.starts_with("inter-block race"), "class:\n{r}");
    assert!(r.contains(&format!("in `{name}`")), "kernel name:\n{r}");
    assert!(!r.contains("_Z16reduceSinglePass"), "mangled name:\n{r}");
    let file = format!("{PROGRAM}.cu:");
    assert!(
        r.contains(&format!("{file}{store}:")) && r.contains(&format!("{file}{load}:")),
        "lines {store} and {load}:\n{r}"
    );
    assert!(
        r.contains(&format!(
            "reader side: an acquire after the `atomicInc` at line {ticket} (`__threadfence()` \
             after it, or `cuda::atomic_ref::fetch_add(…, memory_order_acq_rel)`)"
        )),
        "reader-side advice:\n{r}"
    );
    assert!(!r.contains("writer side"), "the writer does fence:\n{r}");
    // The counts: several addresses (partial sums of different blocks) and launches, of
    // one execution of the program.
    let addresses = count_before(&r, "address(es)");
    let launches = count_before(&r, "launch(es) of");
    let executions = count_before(&r, "execution(s)");
    assert!(addresses >= 2, "addresses {addresses}:\n{r}");
    assert!((1..=101).contains(&launches), "launches {launches}:\n{r}");
    assert_eq!(executions, 1, "{r}");
    let occurrences = count_before(&r, "times at");
    assert!(occurrences >= addresses, "{r}");

    // The fix: __threadfence() after the ticket in the last block.
    let o = exec_race(&build(dir.path(), &["-DACQUIRE_FENCE"]));
    let err = text(&o.stderr);
    assert_exit(&o, 0);
    assert!(err.contains("race check: no races"), "{err}");
    assert!(!err.contains("\nrace: "), "{err}");
    assert!(err.contains("verdict: pass"), "{err}");
}
