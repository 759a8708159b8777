//! Helpers of the minimizer's integration tests: apply a report's patch with `git apply`
//! in a copy of the campaign's folder, and fuzz the patched campaign.

#![allow(dead_code)]

use fencehound_fuzzer::{runner, Campaign, Plan};
use fencehound_handlers::Model;
use fencehound_minimizer::source::Patch;
use fencehound_minimizer::Options;
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn campaigns() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns")
}

pub fn load(rel: &str) -> Arc<Campaign> {
    Arc::new(
        Campaign::load(&campaigns().join(format!("{rel}.toml"))).unwrap_or_else(|e| panic!("{e}")),
    )
}

pub fn opts(model: Model) -> Options {
    Options {
        audit_runs: 50,
        ..Options::new(model)
    }
}

/// The 1-based line of the campaign's source that contains `needle`.
pub fn line_of(c: &Campaign, needle: &str) -> u32 {
    let src = std::fs::read_to_string(&c.source).unwrap();
    let hits: Vec<u32> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == needle || (needle.len() > 20 && l.contains(needle)))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "`{needle}` should occur once in {}",
        c.source.display()
    );
    hits[0]
}

/// Copies the campaign's folder (its files, not subfolders) to a temporary folder, applies
/// `patch` there with `git apply` from the folder the patch names, and returns the folder
/// with the copy of the campaign file. Fails without `git`: the tests that apply a patch
/// would otherwise pass having checked nothing (they returned early until 2026-12-06).
pub fn apply_in_copy(c: &Campaign, patch: &Patch) -> (tempfile::TempDir, PathBuf) {
    assert!(
        std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_ok(),
        "`git` is needed: the patch is applied with `git apply`, as a user would"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(&c.dir).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    assert_eq!(
        patch.apply_from, ".",
        "the patch should apply from the campaign's folder"
    );
    let diff = tmp.path().join("fix.patch");
    std::fs::write(&diff, &patch.diff).unwrap();
    let out = std::process::Command::new("git")
        .args(["apply", "-v", "fix.patch"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git apply failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        patch.diff
    );
    // The applied files are exactly what the minimizer verified.
    for f in &patch.files {
        let got = std::fs::read_to_string(tmp.path().join(&f.path)).unwrap();
        assert_eq!(got, f.new, "{} after git apply", f.path);
    }
    let toml = tmp.path().join(c.path.file_name().unwrap());
    (tmp, toml)
}

/// Fuzzes `variant` of the campaign at `toml` on `seeds` fresh seeds per model (half at
/// p_w = 0.5, half at 1); returns the number of failures.
pub fn fuzz(toml: &Path, variant: &str, models: &[Model], seeds: u32) -> u64 {
    let c = Arc::new(Campaign::load(toml).unwrap());
    let prep = Arc::new(fencehound_fuzzer::prepare(c.clone(), variant).unwrap());
    let plan = Plan {
        variants: vec![variant.into()],
        models: models.to_vec(),
        ps: vec![0.5, 1.0],
        runs: seeds / 2,
        master_seed: 4242,
        scheduler: SchedulerKind::Random,
        scheduler_name: "random".into(),
        jobs: 2,
        stop_at_first: false,
        race: false,
    };
    let rep = runner::run(
        &c,
        vec![prep],
        &plan,
        None,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .unwrap();
    assert_eq!(
        rep.executions_done,
        (seeds / 2 * 2) as u64 * models.len() as u64
    );
    rep.failures.len() as u64
}

/// Applies the patch in a copy and checks that the patched source passes `seeds` seeds
/// under every model given.
pub fn patched_passes(c: &Campaign, patch: &Patch, variant: &str, models: &[Model], seeds: u32) {
    let (_tmp, toml) = apply_in_copy(c, patch);
    let failures = fuzz(&toml, variant, models, seeds);
    assert_eq!(failures, 0, "the patched source fails:\n{}", patch.diff);
}
