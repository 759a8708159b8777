//! `fencehound race`: the shadow-memory race check over seeded executions of a campaign,
//! then race-directed exposure: each race's store is made the only one that may be
//! delayed (buffered under `bugaroo`/`scoped`, skipped by stale reads under `weak`) to try
//! to turn it into a failing output. The campaign needs no oracle for the check itself;
//! exposure judges outputs, so it needs one.

use crate::cmd::fuzz;
use anyhow::{Context, Result};
use fencehound_fuzzer::{execute, runner, ExecSpec, Filters, Plan};
use fencehound_handlers::Model;
use fencehound_racecheck::RaceClass;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    pub campaign: PathBuf,
    /// Only these variants (default: all).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// Seeded executions per variant (random schedules).
    #[arg(long, default_value_t = 50)]
    pub runs: u32,
    /// Memory model the checked executions run under (sc: no buffering, no stale reads).
    #[arg(long, default_value = "sc")]
    pub model: String,
    /// Executions per race for race-directed exposure (0: skip).
    #[arg(long, default_value_t = 100)]
    pub expose: u32,
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
    /// Also write the races as SARIF 2.1.0 (both accesses' CUDA lines).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct Exposed {
    race: fencehound_racecheck::RaceReport,
    variant: String,
    /// "confirmed harmful" or "not confirmed".
    status: String,
    seed: Option<u64>,
    model: Option<String>,
    p: Option<f64>,
    runs: u32,
}

pub fn run(a: Args) -> Result<u8> {
    let (c, preps) = fuzz::load_unjudged(&a.campaign, &a.variants)?;
    let model = Model::parse(&a.model)
        .with_context(|| format!("unknown model `{}` (sc, bugaroo, scoped, weak)", a.model))?;
    let can_expose = !c.file.oracle.is_empty();
    let mut all = Vec::new();
    for prep in &preps {
        let plan = Plan {
            variants: vec![prep.variant.clone()],
            models: vec![model],
            ps: vec![if model == Model::Sc { 0.0 } else { 0.5 }],
            runs: a.runs.max(1),
            master_seed: c.file.seed,
            scheduler: fencehound_vgpu::SchedulerKind::Random,
            scheduler_name: "random".into(),
            jobs: fuzz::jobs(a.jobs),
            stop_at_first: false,
            race: true,
        };
        let report = runner::run(
            &c,
            vec![prep.clone()],
            &plan,
            None,
            Arc::new(AtomicBool::new(false)),
            |_| {},
        )?;
        for race in report.races.into_iter().map(|e| e.race) {
            // Exposure: buffer only the race's store sites, every store, under the model
            // that can show its class.
            let stores: std::collections::BTreeSet<u32> = [&race.first, &race.second]
                .iter()
                .filter(|x| x.access == "store")
                .map(|x| x.site)
                .collect();
            // The models that can show the class: a lock taken without acquire and an
            // unordered (morally strong) pair need loads that read older values.
            let models = match race.class {
                RaceClass::LockAcquire | RaceClass::Unordered => vec![Model::Weak],
                RaceClass::InsufficientScope => vec![Model::Scoped, Model::Weak],
                _ => vec![Model::Bugaroo, Model::Scoped, Model::Weak],
            };
            let mut found = None;
            if a.expose > 0 && !stores.is_empty() && can_expose {
                'outer: for m in models {
                    for i in 0..a.expose as u64 {
                        let seed = fencehound_fuzzer::seeds::exec_seed(c.file.seed, (1 << 41) + i);
                        // Under `weak`, p = 1 makes spin loops lean on the liveness rule;
                        // alternate with 0.5.
                        let p = if m == Model::Weak && i % 2 == 1 {
                            0.5
                        } else {
                            1.0
                        };
                        let spec = ExecSpec {
                            id: i,
                            model: m,
                            p,
                            seed,
                            scheduler: fencehound_vgpu::SchedulerKind::Random,
                            trace: false,
                            filters: Filters {
                                sites: Some(stores.clone()),
                                ..Filters::default()
                            },
                            race: false,
                        };
                        let r = execute(prep, &spec, None);
                        if r.verdict.is_failure() {
                            found = Some((seed, m.name().to_string(), p));
                            break 'outer;
                        }
                    }
                }
            }
            let status = match (&found, stores.is_empty(), a.expose) {
                (Some(_), _, _) => "confirmed harmful",
                (None, true, _) => "no store to delay (load/atomic race)",
                (None, _, _) if !can_expose => "not tried (the campaign has no oracle)",
                (None, _, 0) => "not tried (--expose 0)",
                (None, _, _) => "not confirmed",
            };
            all.push(Exposed {
                race,
                variant: prep.variant.clone(),
                status: status.into(),
                seed: found.as_ref().map(|f| f.0),
                p: found.as_ref().map(|f| f.2),
                model: found.map(|f| f.1),
                runs: a.expose,
            });
        }
    }
    crate::cmd::write_sarif(a.sarif.as_deref(), |l| {
        for e in &all {
            l.add_race(&e.variant, &e.race, Some(&e.status));
        }
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else if all.is_empty() {
        println!(
            "{}: no races in {} execution(s) per variant",
            c.name, a.runs
        );
    } else {
        println!("{}: {} distinct race(s)", c.name, all.len());
        for e in &all {
            println!("[{}] {}", e.variant, e.race);
            match (&e.seed, &e.model, e.p) {
                (Some(s), Some(m), Some(p)) if m == "weak" => println!(
                    "    → confirmed harmful: letting loads read older values than its store fails (model weak, seed {s}, p={p})"
                ),
                (Some(s), Some(m), Some(p)) => println!(
                    "    → confirmed harmful: buffering its store fails (model {m}, seed {s}, p_w={p})"
                ),
                _ if e.status.starts_with("not tried") => println!("    → {}", e.status),
                _ => println!("    → {} in {} runs", e.status, e.runs),
            }
        }
    }
    Ok(if all.is_empty() { 0 } else { 1 })
}
