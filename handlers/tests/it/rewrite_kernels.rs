//! The rewrite against the native handlers on the corpus of test kernels (`kernels/`):
//! every kernel is rewritten (lockstep flavour) and run on the vgpu on plain memory, and
//! the original under the native handlers with the device policy, under the same lockstep
//! scheduler seed; outputs, every write to memory in order, statistics and the way the
//! launch ended must be equal.

use fencehound_argspec::{self as bufspec, ArgSpec};
use fencehound_handlers::rewrite::lockstep::{self, LaunchDesc};
use fencehound_handlers::rewrite::{self, layout, Flavor, RewriteOptions};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_vgpu::{Device, Dim3};
use std::path::PathBuf;

fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

struct Kernel {
    stem: String,
    module: fencehound_ptx::Module,
    grid: Dim3,
    block: Dim3,
    dynamic_shared: u32,
    args: Vec<ArgSpec>,
}

fn header_value<'a>(src: &'a str, key: &str) -> &'a str {
    let prefix = format!("// {key}:");
    src.lines()
        .take(6)
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{key}` header"))
        .trim()
}

fn kernel(stem: &str) -> Kernel {
    let path = kernels_dir().join(format!("{stem}.cu"));
    let source = std::fs::read_to_string(&path).unwrap();
    let launch = header_value(&source, "launch");
    let (mut grid, mut block, mut dynamic_shared) = (None, None, 0);
    for kv in launch.split_whitespace() {
        match kv.split_once('=') {
            Some(("grid", v)) => grid = bufspec::parse_dim3(v),
            Some(("block", v)) => block = bufspec::parse_dim3(v),
            Some(("dynamic_shared", v)) => dynamic_shared = v.parse().unwrap(),
            _ => panic!("{stem}: launch header"),
        }
    }
    let args = bufspec::parse_args(header_value(&source, "args")).unwrap();
    let flags =
        fencehound_toolchain::expand_nvrtc_flags(header_value(&source, "nvrtc-flags")).unwrap();
    let mut req = fencehound_toolchain::CompileRequest::new(source.clone(), format!("{stem}.cu"));
    req.extra_options = flags;
    let ptx = fencehound_toolchain::compile(&req)
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
        .ptx;
    Kernel {
        stem: stem.to_string(),
        module: fencehound_ptx::parse(stem, &ptx).unwrap(),
        grid: grid.unwrap(),
        block: block.unwrap(),
        dynamic_shared,
        args,
    }
}

fn device_cfg(model: Model, p: f64, seed: u64) -> BufferConfig {
    let mut cfg = BufferConfig::new(model, p, seed);
    cfg.policy = DrainPolicy::Device {
        liveness_period: layout::DEFAULT_LIVENESS_PERIOD,
        overlay_capacity: 64,
    };
    cfg
}

/// Runs one kernel both ways; returns a description of the first difference.
fn differential(
    k: &Kernel,
    rewritten: &fencehound_ptx::Module,
    cfg: &BufferConfig,
    sched: u64,
) -> Option<String> {
    let reference = rewrite::normalize_reference(&k.module).unwrap();
    let text = fencehound_ptx::print(rewritten);
    let rewritten = fencehound_ptx::parse("rewritten", &text).unwrap();
    let mut da = Device::new();
    let ma = da.load_module(&reference).unwrap();
    let mut db = Device::new();
    let mb = db
        .load_module(&rewritten)
        .unwrap_or_else(|e| panic!("{}: rewritten module does not load: {e}", k.stem));
    let ba = bufspec::bind(&mut da, &k.args).unwrap();
    let bb = bufspec::bind(&mut db, &k.args).unwrap();
    let plan = |args: Vec<fencehound_vgpu::Arg>| lockstep::Plan {
        launches: vec![LaunchDesc {
            kernel: k.stem.clone(),
            grid: k.grid,
            block: k.block,
            dynamic_shared: k.dynamic_shared,
            args,
        }],
        sched_seed: sched,
        fuel: 50_000_000,
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(60)),
    };
    let n = lockstep::run_native(&mut da, ma, &plan(ba.args.clone()), cfg.clone()).unwrap();
    let r = lockstep::run_rewritten(&mut db, mb, &plan(bb.args.clone()), cfg).unwrap();
    if std::env::var("FH_DEBUG").is_ok() {
        eprintln!("{} {:?} p={} ends {:?} {:?} native writes {} rewritten {} stats {:?} rstats {:?} lanes {} {}", k.stem, cfg.model, cfg.p_w, n.run.end, r.run.end, n.writes.len(), r.writes.len(), n.run.stats, r.run.stats, n.run.lane_instructions, r.run.lane_instructions);
    }
    if std::env::var("FH_DECISIONS").is_ok() {
        eprintln!(
            "decisions: native {} rewritten {}",
            n.run.decisions.len(),
            r.run.decisions.len()
        );
        let k = n
            .run
            .decisions
            .iter()
            .zip(&r.run.decisions)
            .position(|(a, b)| a != b);
        if let Some(k) = k {
            for j in k.saturating_sub(3)..k + 2 {
                eprintln!(
                    "decision {j}: native {:?}\n             rewrit {:?}",
                    n.run.decisions.get(j),
                    r.run.decisions.get(j)
                );
            }
        }
    }
    if std::env::var("FH_WRITES").is_ok() {
        if let Some(d) = lockstep::compare_writes(&n.writes, &r.writes) {
            for (i, w) in n.writes.iter().enumerate() {
                if w.0.loc == fencehound_vgpu::Location::Global(139637976729600) {
                    eprintln!("native out[0] at #{i}: {w:?}");
                }
            }
            for (i, w) in r.writes.iter().enumerate() {
                if w.loc == fencehound_vgpu::Location::Global(139637976729600) {
                    eprintln!("rewritten out[0] at #{i}: {w:?}");
                }
            }
            for i in d.index.saturating_sub(30)..(d.index + 2) {
                eprintln!(
                    "#{i}: native {:?}\n      rewrit {:?} by {:?}",
                    n.writes.get(i),
                    r.writes.get(i),
                    r.writers.get(i)
                );
            }
        }
    }
    let mut problems = Vec::new();
    if !n.run.violations.is_empty() || !r.run.violations.is_empty() {
        problems.push(format!(
            "violations: {:?} {:?}",
            n.run.violations, r.run.violations
        ));
    }
    if n.run.end != r.run.end {
        problems.push(format!(
            "end: native {:?}, rewritten {:?}",
            n.run.end, r.run.end
        ));
    }
    let comparable = n.run.end == r.run.end && n.run.end.compares_writes();
    if !comparable {
    } else if let Some(d) = lockstep::compare_writes(&n.writes, &r.writes) {
        problems.push(format!(
            "first diverging write #{}: native {:?}, rewritten {:?}",
            d.index, d.native, d.rewritten
        ));
    }
    if comparable && n.run.stats != r.run.stats {
        problems.push(format!(
            "stats: native {:?}\nrewritten {:?}",
            n.run.stats, r.run.stats
        ));
    }
    let oa = ba.read_all(&da).unwrap();
    let ob = bb.read_all(&db).unwrap();
    if comparable && oa != ob {
        problems.push("outputs differ".into());
    }
    if n.run.stdout != r.run.stdout {
        problems.push("printf output differs".into());
    }
    if r.left_buffered != 0 && n.run.end == lockstep::End::Completed {
        problems.push(format!("{} entries left buffered", r.left_buffered));
    }
    if problems.is_empty() {
        None
    } else {
        Some(format!(
            "{} {:?} p={} seed={}: {}",
            k.stem,
            cfg.model,
            cfg.p_w,
            cfg.seed,
            problems.join("\n")
        ))
    }
}

#[test]
fn last_block_sum_matches_native() {
    let k = kernel("algo_last_block_sum");
    let rw = rewrite::rewrite(
        &k.module,
        &RewriteOptions {
            flavor: Flavor::Lockstep,
            ..Default::default()
        },
    )
    .unwrap();
    let mut fails = Vec::new();
    for model in [Model::Bugaroo, Model::Scoped] {
        for p in [0.0, 0.5, 1.0] {
            for seed in 0..3 {
                if let Some(d) = differential(&k, &rw.module, &device_cfg(model, p, seed), seed) {
                    fails.push(d);
                }
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n\n"));
}

fn stems() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(kernels_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "cu").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_kernel_matches_native() {
    let only = std::env::var("FH_ONLY").ok();
    let stems: Vec<String> = stems()
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|o| s.contains(o.as_str())))
        .collect();
    // Two workers, kernels dealt alternately: the kernels are independent, and this was
    // the crate's longest test on one thread (76 s, 2026-12-06).
    let results: Vec<(Vec<String>, Vec<String>)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|w| {
                let mine: Vec<&String> = stems.iter().skip(w).step_by(2).collect();
                sc.spawn(move || {
                    let (mut fails, mut skipped) = (Vec::new(), Vec::new());
                    for stem in mine {
                        match matches_native(stem) {
                            Ok(f) => fails.extend(f),
                            Err(why) => {
                                eprintln!("SKIP {stem}: not comparable: {why}");
                                skipped.push(stem.clone());
                            }
                        }
                    }
                    (fails, skipped)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (mut fails, mut skipped) = (Vec::new(), Vec::new());
    for (f, s) in results {
        fails.extend(f);
        skipped.extend(s);
    }
    assert!(fails.is_empty(), "{}", fails.join("\n\n"));
    assert!(skipped.len() <= 1, "skipped {skipped:?}");
}

/// The differences between kernel `stem` rewritten (lockstep flavour) and run natively,
/// both models, p_w 0.5 and 1, seeds 0 and 1; `Err` when the kernel cannot be compared.
fn matches_native(stem: &str) -> Result<Vec<String>, &'static str> {
    let k = kernel(stem);
    if let Some(why) = incomparable(&k.module) {
        return Err(why);
    }
    let rw = match rewrite::rewrite(
        &k.module,
        &RewriteOptions {
            flavor: Flavor::Lockstep,
            ..Default::default()
        },
    ) {
        Ok(r) => r,
        Err(e) => return Ok(vec![format!("{stem}: {e}")]),
    };
    let t = std::time::Instant::now();
    let mut fails = Vec::new();
    for model in [Model::Bugaroo, Model::Scoped] {
        for p in [0.5, 1.0] {
            for seed in 0..2 {
                if let Some(d) = differential(&k, &rw.module, &device_cfg(model, p, seed), seed) {
                    fails.push(d);
                }
            }
        }
    }
    eprintln!("{stem}: {:?}", t.elapsed());
    Ok(fails)
}

/// Kernels whose outputs depend on how many instructions ran (the vgpu's clocks count
/// them, and the rewritten kernel runs more) cannot be compared value for value.
fn incomparable(m: &fencehound_ptx::Module) -> Option<&'static str> {
    use fencehound_ptx::{Operand, Special};
    for f in m.functions() {
        for i in fencehound_ptx::Module::instructions(f.body.as_deref().unwrap_or(&[])) {
            for o in &i.operands {
                if let Operand::Special { reg, .. } = o {
                    if matches!(
                        reg,
                        Special::Clock
                            | Special::ClockHi
                            | Special::Clock64
                            | Special::Globaltimer
                            | Special::GlobaltimerLo
                            | Special::GlobaltimerHi
                    ) {
                        return Some("reads a clock register");
                    }
                }
            }
        }
    }
    None
}
