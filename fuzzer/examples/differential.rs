//! The full differential sweep of the rewrite on the campaign corpus: every campaign ×
//! variant × {bugaroo, scoped} × `p_w` ∈ {0, campaign's list} × 100 seeds, the rewritten
//! PTX (lockstep flavour) on plain memory against the original under the native handlers
//! (device policy), compared write for write (`fencehound_fuzzer::backend::differential`).
//! Prints a markdown table (one row per campaign × variant × model) and every divergence;
//! exit status 1 if any.
//!
//! ```sh
//! cargo run --release -p fencehound-fuzzer --example differential -- [--seeds N] [--jobs J] [CAMPAIGN.toml...]
//! ```

use fencehound_fuzzer::backend::differential::Differential;
use fencehound_fuzzer::{prepare, Campaign, Prepared};
use fencehound_handlers::Model;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// (campaign, variant, prepared variant, its differential, the `p_w` values to sweep)
type Variant = (String, String, Arc<Prepared>, Arc<Differential>, Vec<f64>);

struct Cell {
    runs: u64,
    equal: u64,
    failing: u64,
    buffered: u64,
    flushes: u64,
    writes: u64,
    lanes: (u64, u64),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut seeds = 100u64;
    let mut jobs = 2usize;
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--seeds" => {
                i += 1;
                seeds = args.get(i).and_then(|s| s.parse().ok()).unwrap_or(seeds);
            }
            "--jobs" => {
                i += 1;
                jobs = args.get(i).and_then(|s| s.parse().ok()).unwrap_or(jobs);
            }
            f => files.push(PathBuf::from(f)),
        }
        i += 1;
    }
    if files.is_empty() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            eprintln!("differential: cannot read {}", dir.display());
            std::process::exit(2);
        };
        files = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
    }
    let start = Instant::now();
    // (campaign, variant, prep, differential)
    let mut variants: Vec<Variant> = Vec::new();
    for f in &files {
        let c = match Campaign::load(f) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                eprintln!("differential: {e}");
                std::process::exit(2);
            }
        };
        let mut ps = vec![0.0];
        ps.extend(c.file.fuzz.p.iter().copied().filter(|p| *p != 0.0));
        for v in c.variant_names() {
            let prep = match prepare(c.clone(), v) {
                Ok(p) => Arc::new(p),
                Err(e) => {
                    eprintln!("differential: {e}");
                    std::process::exit(2);
                }
            };
            let d = match Differential::new(&prep) {
                Ok(d) => Arc::new(d),
                Err(e) => {
                    eprintln!("differential: {} {v}: {e}", c.name);
                    std::process::exit(2);
                }
            };
            variants.push((c.name.clone(), v.to_string(), prep, d, ps.clone()));
        }
    }
    let models = [Model::Bugaroo, Model::Scoped];
    let mut work = Vec::new();
    for (vi, (_, _, _, _, ps)) in variants.iter().enumerate() {
        for m in models {
            for p in ps {
                for s in 0..seeds {
                    work.push((vi, m, *p, s));
                }
            }
        }
    }
    let next = AtomicUsize::new(0);
    let cells: Mutex<BTreeMap<(usize, Model), Cell>> = Mutex::new(BTreeMap::new());
    let divergences: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..jobs.max(1) {
            sc.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(vi, m, p, s)) = work.get(k) else {
                    break;
                };
                let (cname, vname, prep, d, _) = &variants[vi];
                // Seeds as the fuzzer derives them would also do; any fixed function works.
                let seed = s
                    .wrapping_mul(0x9E37_79B9)
                    .wrapping_add((p * 1000.0) as u64);
                match d.compare(prep, m, p, seed) {
                    Ok(r) => {
                        let mut cs = cells.lock().unwrap_or_else(|e| e.into_inner());
                        let c = cs.entry((vi, m)).or_insert(Cell {
                            runs: 0,
                            equal: 0,
                            failing: 0,
                            buffered: 0,
                            flushes: 0,
                            writes: 0,
                            lanes: (0, 0),
                        });
                        c.runs += 1;
                        c.equal += r.divergence.is_none() as u64;
                        c.failing += r.verdict.is_failure() as u64;
                        c.buffered +=
                            r.stats.global.stores_buffered + r.stats.shared.stores_buffered;
                        c.flushes += r.stats.global.flush_lengths.values().sum::<u64>()
                            + r.stats.shared.flush_lengths.values().sum::<u64>();
                        c.writes += r.writes as u64;
                        c.lanes.0 += r.lane_instructions.0;
                        c.lanes.1 += r.lane_instructions.1;
                        drop(cs);
                        if let Some(div) = r.divergence {
                            divergences
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(format!(
                                    "{cname} {vname} {} p={p} seed={seed}:\n{div}",
                                    m.name()
                                ));
                        }
                    }
                    Err(e) => errors
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!(
                            "{cname} {vname} {} p={p} seed={seed}: {e}",
                            m.name()
                        )),
                }
            });
        }
    });
    let cells = cells.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "| campaign | variant | model | executions | equal | failing (both) | stores buffered | flushes | writes compared |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut total = (0u64, 0u64, 0u64);
    for ((vi, m), c) in &cells {
        let (cname, vname, _, _, _) = &variants[*vi];
        println!(
            "| {cname} | {vname} | {} | {} | {} | {} | {} | {} | {} |",
            m.name(),
            c.runs,
            c.equal,
            c.failing,
            c.buffered,
            c.flushes,
            c.writes
        );
        total.0 += c.runs;
        total.1 += c.equal;
        total.2 += c.failing;
    }
    println!(
        "\n{} executions, {} equal, {} failing under both; p_w per campaign: 0 and its [fuzz] p list; {seeds} seeds each; {:.0} s with {jobs} jobs",
        total.0,
        total.1,
        total.2,
        start.elapsed().as_secs_f64()
    );
    let divergences = divergences.into_inner().unwrap_or_else(|e| e.into_inner());
    let errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    for d in divergences.iter().take(20) {
        println!("\nDIVERGENCE {d}");
    }
    for e in &errors {
        println!("\nERROR {e}");
    }
    if !divergences.is_empty() || !errors.is_empty() {
        std::process::exit(1);
    }
}
