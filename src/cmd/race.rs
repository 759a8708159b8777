//! `fencehound race`: the shadow-memory race check over seeded executions of a campaign,
//! then race-directed exposure: each race's store site is buffered alone (`p_w = 1`) to
//! try to turn it into a failing output.

use crate::cmd::fuzz;
use anyhow::Result;
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
    /// Seeded executions per variant (random schedules, no buffering).
    #[arg(long, default_value_t = 50)]
    pub runs: u32,
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
    runs: u32,
}

pub fn run(a: Args) -> Result<u8> {
    let (c, preps) = fuzz::load(&a.campaign, &a.variants)?;
    let mut all = Vec::new();
    for prep in &preps {
        let plan = Plan {
            variants: vec![prep.variant.clone()],
            models: vec![Model::Sc],
            ps: vec![0.0],
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
            let models = if race.class == RaceClass::InsufficientScope {
                vec![Model::Scoped]
            } else {
                vec![Model::Bugaroo, Model::Scoped]
            };
            let mut found = None;
            if a.expose > 0 && !stores.is_empty() {
                'outer: for m in models {
                    for i in 0..a.expose as u64 {
                        let seed = fencehound_fuzzer::seeds::exec_seed(c.file.seed, (1 << 41) + i);
                        let spec = ExecSpec {
                            id: i,
                            model: m,
                            p: 1.0,
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
                            found = Some((seed, m.name().to_string()));
                            break 'outer;
                        }
                    }
                }
            }
            let status = match (&found, stores.is_empty(), a.expose) {
                (Some(_), _, _) => "confirmed harmful",
                (None, true, _) => "no store to buffer (load/atomic race)",
                (None, _, 0) => "not tried",
                (None, _, _) => "not confirmed",
            };
            all.push(Exposed {
                race,
                variant: prep.variant.clone(),
                status: status.into(),
                seed: found.as_ref().map(|f| f.0),
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
            match (&e.seed, &e.model) {
                (Some(s), Some(m)) => println!("    → confirmed harmful: buffering its store fails (model {m}, seed {s}, p_w=1)"),
                _ => println!("    → {} in {} runs", e.status, e.runs),
            }
        }
    }
    Ok(if all.is_empty() { 0 } else { 1 })
}
