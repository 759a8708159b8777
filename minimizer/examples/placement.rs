//! The issue-13 kernels (`campaigns/minimizer/`): what `minimize` and `audit` give for
//! each, under the default model — the fix, where it goes, how exactly the compiled patch
//! matches the tested PTX change, and the verification — with executions, compilations
//! and seconds.
//!
//! `cargo run --release -p fencehound-minimizer --example placement [-- jobs]`

use fencehound_fuzzer::Campaign;
use fencehound_minimizer::source::Fit;
use fencehound_minimizer::{audit, minimize, FenceVerdict, Options, DEFAULT_MODEL};
use std::path::Path;
use std::sync::Arc;

fn main() {
    let jobs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns/minimizer");
    let opts = Options {
        jobs,
        ..Options::new(DEFAULT_MODEL)
    };
    let load =
        |c: &str| Arc::new(Campaign::load(&dir.join(format!("{c}.toml"))).expect("campaign"));
    println!("minimize, model {}:\n", DEFAULT_MODEL.name());
    println!("| kernel / variant | fixes (side: kind at file:line) | fit | patch | executions | compiles | seconds |");
    println!("|---|---|---|---|---:|---:|---:|");
    for (c, v) in [
        ("oneline", "unfenced"),
        ("dowhile", "unfenced"),
        ("unrolled", "no_slot_fence"),
        ("loopexit", "unfenced"),
        ("helper", "unfenced"),
        ("library", "unfenced"),
        ("unbraced", "unfenced"),
        ("widen", "block_fence"),
        ("libcupp", "relaxed"),
        ("warpsync", "unsynced"),
        ("lock", "no_lock_fence"),
    ] {
        let r = minimize(load(c), v, opts.clone()).expect("minimize");
        let mut fixes: Vec<String> = r
            .fences
            .iter()
            .map(|f| {
                let at = f
                    .source
                    .as_ref()
                    .map(|s| format!("{}:{}", s.file, s.line))
                    .unwrap_or_else(|| f.after.location());
                format!("{:?}: {:?} at {at}", f.side, f.fix)
            })
            .collect();
        fixes.dedup();
        let mut fits: Vec<String> = r
            .fences
            .iter()
            .map(|f| match f.fit {
                Some(Fit::Exact) => "exact".to_string(),
                Some(Fit::Covers { extra }) => format!("covers (+{extra})"),
                Some(Fit::Unmatched) => "unmatched".into(),
                None => "-".into(),
            })
            .collect();
        fits.dedup();
        let patch = match &r.verification {
            Some(v) if v.verified => format!("verified, {} runs", v.runs),
            Some(v) => v.summary(),
            None => "none".into(),
        };
        println!(
            "| {c} / {v} | {} | {} | {patch} | {} | {} | {:.1} |",
            fixes.join("; "),
            fits.join(", "),
            r.executions,
            r.compiles,
            r.wall_seconds
        );
    }
    println!("\naudit, model {}:\n", DEFAULT_MODEL.name());
    println!("| kernel | verdicts (file:line: verdict) | patch | executions | seconds |");
    println!("|---|---|---|---:|---:|");
    for c in [
        "twofences",
        "unrolled",
        "lock",
        "seqlock",
        "queue",
        "nodrain",
    ] {
        let r = audit(load(c), "fenced", opts.clone()).expect("audit");
        let verdicts: Vec<String> = r
            .fences
            .iter()
            .map(|f| {
                let v = match &f.verdict {
                    FenceVerdict::Necessary { .. } => "necessary".to_string(),
                    FenceVerdict::LikelyRedundant {
                        given_that_stay, ..
                    } if given_that_stay.is_empty() => "likely redundant".into(),
                    FenceVerdict::LikelyRedundant {
                        given_that_stay, ..
                    } => format!(
                        "likely redundant given that {} stays",
                        given_that_stay.join(", ")
                    ),
                    FenceVerdict::NeededWithOthersRemoved { with, .. } => {
                        format!("redundant alone, not with {}", with.join(", "))
                    }
                    FenceVerdict::NotExercised { copies, unreached } => {
                        format!("not exercised ({unreached} of {copies} copies)")
                    }
                    FenceVerdict::CannotJudge { reason } if reason.contains("load buffering") => {
                        "cannot judge (load buffering)".into()
                    }
                    FenceVerdict::CannotJudge { reason } if reason.contains("never had") => {
                        "cannot judge (never drains)".into()
                    }
                    FenceVerdict::CannotJudge { .. } => "cannot judge (acquire side)".into(),
                };
                format!("{}: {v}", f.line())
            })
            .collect();
        let patch = match &r.verification {
            Some(v) if v.verified => format!("verified, {} runs", v.runs),
            Some(v) => v.summary(),
            None => "nothing removed".into(),
        };
        println!(
            "| {c} | {} | {patch} | {} | {:.1} |",
            verdicts.join("; "),
            r.executions,
            r.wall_seconds
        );
    }
}
