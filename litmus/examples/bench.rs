//! Litmus executions per second, per test and model, on all cores.
//!
//! `cargo run --release -p fencehound-litmus --example bench [-- RUNS [DIR]]`
//! (DIR defaults to ../shared/litmus). Prints a table; results go in BENCHMARKS.md.

use fencehound_handlers::Model;
use fencehound_litmus::{load, lower, run_model, RunConfig};
use std::path::PathBuf;

const TESTS: &[&str] = &[
    "ptx/Manual/SB-weak.litmus",
    "ptx/Manual/MP-gpu.litmus",
    "ptx/Manual/MP-cta.litmus",
    "ptx/Manual/LB-dlb.litmus",
    "ptx/Manual/SB+bar-const-equal.litmus",
    "ptx/Manual/Ticketlock-same-gpu.litmus",
    "ptx/Manual/Cause-base-weak.litmus",
    "ptx/Manual/Co-Total-4-threads.litmus",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/litmus"));
    let cfg = RunConfig {
        runs,
        ..RunConfig::default()
    };
    println!("{runs} executions per row, {} worker threads", cfg.workers);
    println!(
        "{:<32} {:>7} {:>8} {:>10} {:>8}",
        "test", "threads", "model", "exec/s", "µs/exec"
    );
    for t in TESTS {
        let path = dir.join(t);
        let test = match load(&path) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let low = match lower(t, &test) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        for m in [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak] {
            let t0 = std::time::Instant::now();
            let h = run_model(&test, &low, m, &cfg);
            let s = t0.elapsed().as_secs_f64();
            assert_eq!(h.total(), runs);
            println!(
                "{:<32} {:>7} {:>8} {:>10.0} {:>8.1}",
                test.name,
                test.threads.len(),
                m.name(),
                runs as f64 / s,
                s * 1e6 / runs as f64 * cfg.workers as f64
            );
        }
    }
}
