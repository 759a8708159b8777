//! Executions and wall time per search: fencehound's minimizer (bisect space/kernel/stores,
//! delta-debug fences after the implicated stores, try cheaper fixes, place the patch in
//! the source and verify it by compiling and fuzzing it) versus the
//! fence-everything-then-reduce baseline of Sorensen & Donaldson (PLDI'16), on the
//! campaign corpus.
//!
//! `cargo run --release -p fencehound-minimizer --example compare [-- jobs]`

use fencehound_fuzzer::Campaign;
use fencehound_handlers::Model;
use fencehound_minimizer::{baseline_fence_all, minimize, Options};
use std::path::Path;
use std::sync::Arc;

fn main() {
    let jobs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns");
    let cases = [
        ("cbe_dot", "no_fence"),
        ("sdk_red", "unfenced"),
        ("cub_scan", "no_fence_1"),
        ("cub_scan", "no_fence_2"),
        ("cub_scan", "no_fence_3"),
        ("cub_scan", "no_fences"),
        ("ct_octree", "no_push_fence"),
    ];
    let opts = Options {
        jobs,
        audit_runs: 50,
        ..Options::new(Model::Bugaroo)
    };
    println!("| campaign / variant | fencehound: fences (CUDA lines) | executions (search + verification) | compiles | seconds | patch | baseline: candidates → fences | executions | seconds |");
    println!("|---|---|---:|---:|---:|---|---|---:|---:|");
    for (c, v) in cases {
        let camp = Arc::new(Campaign::load(&dir.join(format!("{c}.toml"))).expect("campaign"));
        let ours = minimize(camp.clone(), v, opts.clone()).expect("minimize");
        let mut lines: Vec<u32> = ours
            .fences
            .iter()
            .filter_map(|f| f.after.cuda.as_ref().map(|l| l.line))
            .collect();
        lines.sort();
        lines.dedup();
        let verify = ours.verification.as_ref().map_or(0, |v| v.runs);
        let patch = match &ours.verification {
            Some(v) if v.verified => format!("verified ({} runs)", v.runs),
            Some(_) => "NOT verified".into(),
            None => "none".into(),
        };
        let base = baseline_fence_all(camp, v, opts.clone()).expect("baseline");
        let mut blines: Vec<u32> = base
            .fences
            .iter()
            .filter_map(|f| f.after.cuda.as_ref().map(|l| l.line))
            .collect();
        blines.sort();
        blines.dedup();
        println!(
            "| {c} / {v} | {} PTX ({:?}){} | {} ({} + {verify}) | {} | {:.1} | {patch} | {} → {} PTX ({:?}){} | {} | {:.1} |",
            ours.fences.len(),
            lines,
            if ours.confirmed { "" } else { " unconfirmed" },
            ours.executions,
            ours.executions.saturating_sub(verify),
            ours.compiles,
            ours.wall_seconds,
            base.candidates,
            base.fences.len(),
            blines,
            if base.confirmed { "" } else { " unconfirmed" },
            base.executions,
            base.wall_seconds
        );
    }
}
