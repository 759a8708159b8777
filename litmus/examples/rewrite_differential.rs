//! The differential sweep of the device-side rewrite over the litmus suite: every lowered
//! test × {bugaroo, scoped} × p_w ∈ {0.25, 0.5, 0.75, 1} × N seeds (default 100), the
//! lockstep rewrite on plain memory against the lowered test under the native handlers
//! with the device policy, under one lockstep scheduler seed; final state, every write in
//! order, statistics and the way the run ended must be equal. Prints a summary and every
//! divergence; exit status 1 if any.
//!
//! ```sh
//! cargo run --release -p fencehound-litmus --example rewrite_differential -- [DIR] [--seeds N]
//! ```

use fencehound_handlers::rewrite::lockstep::{self, LaunchDesc, Plan};
use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_litmus::lower::{KERNEL, OUT};
use fencehound_litmus::suite::expand;
use fencehound_litmus::{lower, Lowered};
use fencehound_vgpu::{Device, Dim3, ModuleId};
use std::path::PathBuf;
use std::time::Instant;

fn final_state(dev: &Device, m: ModuleId, low: &Lowered) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    // Each variable once (a packed layout keeps every location in one array).
    let mut names: Vec<&str> = low.locations.iter().map(|(_, v, _)| v.as_str()).collect();
    names.dedup();
    names.push(OUT);
    for n in names {
        let (a, size) = dev.global_by_name(m, n).ok()?;
        let mut b = vec![0u8; size as usize];
        dev.copy_from(a, &mut b).ok()?;
        out.extend(b);
    }
    Some(out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seeds: u64 = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--") && a.parse::<u64>().is_err())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/litmus/ptx")
        });
    let files = match expand(std::slice::from_ref(&dir)) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("differential: {}: {e}", dir.display());
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    let (mut tests, mut runs, mut equal, mut unsupported) = (0u64, 0u64, 0u64, 0u64);
    let mut buffered = 0u64;
    let mut divergences = Vec::new();
    for f in &files {
        let name = f.display().to_string();
        let t = match fencehound_litmus::load(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("differential: {name}: {e}");
                std::process::exit(2);
            }
        };
        let low = match lower(&name, &t) {
            Ok(l) => l,
            Err(e) if e.is_unsupported() => {
                unsupported += 1;
                continue;
            }
            Err(e) => {
                eprintln!("differential: {name}: {e}");
                std::process::exit(2);
            }
        };
        let (reference, rewritten) = match (
            rewrite::normalize_reference(&low.module),
            rewrite::rewrite(
                &low.module,
                &RewriteOptions {
                    flavor: Flavor::Lockstep,
                    ..Default::default()
                },
            ),
        ) {
            (Ok(a), Ok(b)) => (a, b.module),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("differential: {name}: {e}");
                std::process::exit(2);
            }
        };
        tests += 1;
        for model in [Model::Bugaroo, Model::Scoped] {
            for p in [0.25, 0.5, 0.75, 1.0] {
                for s in 0..seeds {
                    let seed = s
                        .wrapping_mul(0x9E37_79B9)
                        .wrapping_add((p * 1000.0) as u64);
                    let mut cfg = BufferConfig::new(model, p, seed);
                    cfg.policy = DrainPolicy::Device {
                        liveness_period: 64,
                        overlay_capacity: 64,
                    };
                    let plan = Plan {
                        launches: vec![LaunchDesc {
                            kernel: KERNEL.into(),
                            grid: Dim3::x(low.grid),
                            block: Dim3::x(low.block),
                            dynamic_shared: 0,
                            args: Vec::new(),
                        }],
                        sched_seed: seed,
                        fuel: fencehound_litmus::run::FUEL,
                        deadline: None,
                    };
                    let mut da = Device::new();
                    let mut db = Device::new();
                    let (Ok(ma), Ok(mb)) = (da.load_module(&reference), db.load_module(&rewritten))
                    else {
                        eprintln!("differential: {name}: a module does not load");
                        std::process::exit(2);
                    };
                    let (n, r) = match (
                        lockstep::run_native(&mut da, ma, &plan, cfg.clone()),
                        lockstep::run_rewritten(&mut db, mb, &plan, &cfg),
                    ) {
                        (Ok(n), Ok(r)) => (n, r),
                        (Err(e), _) | (_, Err(e)) => {
                            eprintln!("differential: {name}: {e}");
                            std::process::exit(2);
                        }
                    };
                    runs += 1;
                    buffered +=
                        n.run.stats.global.stores_buffered + n.run.stats.shared.stores_buffered;
                    let comparable = n.run.end == r.run.end && n.run.end.compares_writes();
                    let mut problems = Vec::new();
                    if !r.run.violations.is_empty() {
                        problems.push(format!("lockstep violations {:?}", r.run.violations));
                    }
                    if n.run.end != r.run.end {
                        problems.push(format!("end {:?} vs {:?}", n.run.end, r.run.end));
                    }
                    if comparable {
                        if let Some(d) = lockstep::compare_writes(&n.writes, &r.writes) {
                            problems.push(format!(
                                "first diverging write #{}: native {:?}, rewritten {:?}",
                                d.index, d.native, d.rewritten
                            ));
                        }
                        if n.run.stats != r.run.stats {
                            problems.push("statistics differ".into());
                        }
                    }
                    if n.run.end == lockstep::End::Completed
                        && final_state(&da, ma, &low) != final_state(&db, mb, &low)
                    {
                        problems.push("final states differ".into());
                    }
                    if problems.is_empty() {
                        equal += 1;
                    } else {
                        divergences.push(format!(
                            "{name} {} p={p} seed={seed}: {}",
                            model.name(),
                            problems.join("; ")
                        ));
                    }
                }
            }
        }
    }
    println!(
        "{tests} litmus tests ({unsupported} unsupported by the lowering), {runs} executions (bugaroo, scoped × p_w 0.25, 0.5, 0.75, 1 × {seeds} seeds): {equal} equal, {} diverged; {buffered} stores buffered; {:.0} s",
        divergences.len(),
        start.elapsed().as_secs_f64()
    );
    for d in divergences.iter().take(20) {
        println!("DIVERGENCE {d}");
    }
    if !divergences.is_empty() {
        std::process::exit(1);
    }
}
