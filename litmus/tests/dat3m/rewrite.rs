//! The device-side rewrite on the litmus suite: every lowered test, rewritten (lockstep
//! flavour) and run on plain memory, gives the same final state, memory writes in order and
//! statistics as the lowered test under the native handlers with the device policy, for
//! the same seeds; and the device flavour of every lowered test assembles with ptxas for
//! sm_75, sm_80 and sm_90. The 100-seed sweep is this crate's `rewrite_differential`
//! example (results in fuzzer/DIFFERENTIAL.md); here a few seeds per test keep CI fast.

use fencehound_handlers::rewrite::lockstep::{self, LaunchDesc, Plan};
use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_litmus::lower::{KERNEL, OUT};
use fencehound_litmus::suite::expand;
use fencehound_litmus::{lower, Lowered};
use fencehound_vgpu::{Device, Dim3, ModuleId};
use std::path::Path;

fn lowered_suite(dir: &Path) -> Vec<(String, Lowered)> {
    let mut out = Vec::new();
    for f in expand(&[dir.join("ptx")]).unwrap() {
        let t = fencehound_litmus::load(&f).unwrap();
        let name = f.display().to_string();
        match lower(&name, &t) {
            Ok(l) => out.push((name, l)),
            Err(e) if e.is_unsupported() => {}
            Err(e) => panic!("{name}: {e}"),
        }
    }
    out
}

/// Final state: every location variable and the register dump.
fn final_state(dev: &Device, m: ModuleId, low: &Lowered) -> Vec<u8> {
    let mut out = Vec::new();
    // Each variable once (a packed layout keeps every location in one array).
    let mut names: Vec<&str> = low.locations.iter().map(|(_, v, _)| v.as_str()).collect();
    names.dedup();
    names.push(OUT);
    for n in names {
        let (a, size) = dev.global_by_name(m, n).unwrap();
        let mut b = vec![0u8; size as usize];
        dev.copy_from(a, &mut b).unwrap();
        out.extend(b);
    }
    out
}

fn device_cfg(model: Model, p: f64, seed: u64) -> BufferConfig {
    let mut cfg = BufferConfig::new(model, p, seed);
    cfg.policy = DrainPolicy::Device {
        liveness_period: 64,
        overlay_capacity: 64,
    };
    cfg
}

pub fn every_litmus_test_matches_native(dir: &Path) {
    let suite = lowered_suite(dir);
    assert!(!suite.is_empty(), "no litmus test lowered");
    let mut fails = Vec::new();
    let mut runs = 0;
    for (name, low) in &suite {
        let reference = rewrite::normalize_reference(&low.module).unwrap();
        let rw = rewrite::rewrite(
            &low.module,
            &RewriteOptions {
                flavor: Flavor::Lockstep,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        for model in [Model::Bugaroo, Model::Scoped] {
            for (k, p) in [0.5, 1.0].into_iter().enumerate() {
                for s in 0..4u64 {
                    let seed = s * 2 + k as u64;
                    let cfg = device_cfg(model, p, seed);
                    let plan = Plan {
                        launches: vec![LaunchDesc {
                            kernel: KERNEL.into(),
                            grid: Dim3::x(low.grid),
                            block: Dim3::x(low.block),
                            dynamic_shared: 0,
                            args: Vec::new(),
                        }],
                        sched_seed: seed,
                        fuel: 60_000,
                        deadline: None,
                    };
                    let mut da = Device::new();
                    let ma = da.load_module(&reference).unwrap();
                    let mut db = Device::new();
                    let mb = db.load_module(&rw.module).unwrap();
                    let n = lockstep::run_native(&mut da, ma, &plan, cfg.clone()).unwrap();
                    let r = lockstep::run_rewritten(&mut db, mb, &plan, &cfg).unwrap();
                    runs += 1;
                    let mut problems = Vec::new();
                    if !r.run.violations.is_empty() {
                        problems.push(format!("lockstep violations {:?}", r.run.violations));
                    }
                    if n.run.end != r.run.end {
                        problems.push(format!("end {:?} vs {:?}", n.run.end, r.run.end));
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
                        problems.push(format!("stats {:?} vs {:?}", n.run.stats, r.run.stats));
                    }
                    if n.run.end == lockstep::End::Completed
                        && final_state(&da, ma, low) != final_state(&db, mb, low)
                    {
                        problems.push("final states differ".into());
                    }
                    if !problems.is_empty() {
                        fails.push(format!(
                            "{name} {} p={p} seed={seed}: {}",
                            model.name(),
                            problems.join("; ")
                        ));
                    }
                }
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
    assert!(runs >= 98 * 16, "{runs} runs");
}

pub fn every_rewritten_litmus_test_assembles(dir: &Path) {
    let suite = lowered_suite(dir);
    assert!(!suite.is_empty(), "no litmus test lowered");
    let jobs: Vec<(&String, &Lowered, &str)> = suite
        .iter()
        .flat_map(|(n, l)| ["75", "80", "90"].into_iter().map(move |a| (n, l, a)))
        .collect();
    // Two workers: ptxas is single-threaded and dominates.
    let fails: Vec<String> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|w| {
                let mine: Vec<_> = jobs.iter().skip(w).step_by(2).copied().collect();
                sc.spawn(move || {
                    let mut fails = Vec::new();
                    for (name, low, arch) in mine {
                        let rw = match rewrite::rewrite(&low.module, &RewriteOptions::default()) {
                            Ok(r) => r,
                            Err(e) => {
                                fails.push(format!("{name}: {e}"));
                                continue;
                            }
                        };
                        // The lowering targets sm_80; its instructions exist from sm_70 on.
                        let mut m = rw.module;
                        for item in &mut m.items {
                            if let fencehound_ptx::Item::Target(t) = item {
                                *t = vec![format!("sm_{arch}")];
                            }
                        }
                        let (k, r) = rewrite::assembly_parts(&m)
                            .expect("a rewritten module holds the runtime verbatim");
                        if let Err(e) =
                            fencehound_toolchain::assemble_linked(&k, &[&r], &format!("sm_{arch}"))
                        {
                            fails.push(format!("{name} sm_{arch}: {e}"));
                        }
                    }
                    fails
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(fails.is_empty(), "{}", fails.join("\n"));
    assert!(jobs.len() >= 98 * 3, "{} assembled", jobs.len());
}

/// The device policy (what the GPU rewrite implements: orphan queues at thread exit, a
/// liveness counter, bounded CTA queues) produces no outcome PTX forbids, like the native
/// policy (litmus/tests/dat3m/suite.rs), and still produces weak outcomes.
pub fn device_policy_is_sound_on_the_suite(dir: &Path) {
    let files = expand(&[dir.join("ptx")]).unwrap();
    let exp = fencehound_litmus::Expectations::load(&dir.join("expected-ptx-v7.5.csv")).unwrap();
    let cfg = fencehound_litmus::RunConfig {
        runs: 200,
        policy: DrainPolicy::Device {
            liveness_period: 64,
            overlay_capacity: 64,
        },
        ..fencehound_litmus::RunConfig::default()
    };
    let r = fencehound_litmus::run_suite(
        &files,
        &[Model::Bugaroo, Model::Scoped],
        &cfg,
        Some(&exp),
        |_| {},
    );
    let summary = fencehound_litmus::suite::render_summary(&r.summary);
    eprintln!("{summary}");
    assert!(r.summary.errors.is_empty(), "{:?}", r.summary.errors);
    assert_eq!(r.summary.unsound(), 0, "{summary}");
    let power = |m: &str| crate::weak_power(&r.summary, m);
    assert!(
        power("bugaroo") >= 3 && power("scoped") >= power("bugaroo"),
        "{summary}"
    );
}
