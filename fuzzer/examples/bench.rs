//! Fuzzing throughput and time to first failure.
//!
//! `cargo run --release -p fencehound-fuzzer --example bench [-- RUNS]` prints two tables
//! (results go in BENCHMARKS.md with the date and machine):
//!
//! 1. executions per second of a litmus-sized campaign (message passing between two
//!    threads of two blocks, written here) and of every corpus campaign (all variants, the
//!    campaign's models and `p_w` values, RUNS runs per cell; default 20), with 1 and 2
//!    jobs. Timed is `runner::run` alone: the variants are compiled and their reference
//!    runs done first (`prepare`), and no report file is written.
//! 2. time to the first failure for each underfenced corpus variant (every (variant,
//!    model) whose `expect` is `fail`), with `stop_at_first`, 2 jobs and the campaign's own
//!    seed, `p_w` list and run count: from loading the campaign file (NVRTC compile, from
//!    an empty PTX cache, so NVRTC compiles every variant, and the reference run) until the
//!    runner returns. This table comes first (the throughput runs warm the cache). The
//!    executions column counts the ones that completed (parallel ones are cancelled).
//!
//! The corpus is `campaigns/` at the workspace root.

use fencehound_fuzzer::{prepare, runner, Campaign, Plan};
use fencehound_handlers::Model;
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

const MP_CU: &str = r#"
// Message passing: thread 0 of block 0 writes data then flag; thread 0 of block 1 waits for
// the flag and reads data. MP_FENCE orders the producer's two stores.
#ifndef MP_FENCE
#define MP_FENCE __threadfence()
#endif
extern "C" __global__ void mp(int *data, volatile int *flag, int *out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        MP_FENCE;
        *flag = 1;
    } else {
        while (*flag == 0) {}
        __threadfence();
        out[0] = data[0];
    }
}
"#;

const MP_TOML: &str = r#"
name = "mp"
source = "mp.cu"
seed = 1
buffers = ["data:i32[1] zero", "flag:i32[1] zero", "out:i32[1] zero"]

[[launch]]
kernel = "mp"
grid = [2]
block = [1]
args = ["data", "flag", "out"]

[[oracle]]
type = "expect"
buffer = "out"
values = [42]

[budget]
fuel = 100_000
wall_ms = 5_000

[fuzz]
models = ["bugaroo"]
p = [0.5, 1.0]

[variants.fenced]
expect = "pass"

[variants.unfenced]
defines = { MP_FENCE = "(void)0" }
expect = "fail"
"#;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns")
}

fn plan(c: &Campaign, variants: Vec<String>, models: Vec<Model>, runs: u32, jobs: usize) -> Plan {
    let sched = c.file.fuzz.scheduler.clone();
    Plan {
        variants,
        models,
        ps: c.file.fuzz.p.clone(),
        runs,
        master_seed: c.file.seed,
        scheduler: SchedulerKind::parse(&sched).expect("scheduler"),
        scheduler_name: sched,
        jobs,
        stop_at_first: false,
        race: false,
    }
}

fn models(c: &Campaign) -> Vec<Model> {
    c.file
        .fuzz
        .models
        .iter()
        .map(|m| Model::parse(m).expect("model"))
        .collect()
}

/// Executions per second of the whole campaign with `jobs` workers.
fn throughput(path: &Path, runs: u32) -> (String, u64, [f64; 2], u64) {
    let c = Arc::new(Campaign::load(path).expect("campaign"));
    let preps: Vec<_> = c
        .variant_names()
        .iter()
        .map(|v| Arc::new(prepare(c.clone(), v).expect("prepare")))
        .collect();
    let names: Vec<String> = preps.iter().map(|p| p.variant.clone()).collect();
    let mut rates = [0.0; 2];
    let mut total = 0;
    for (k, jobs) in [1usize, 2].into_iter().enumerate() {
        let p = plan(&c, names.clone(), models(&c), runs, jobs);
        let start = Instant::now();
        let r = runner::run(
            &c,
            preps.clone(),
            &p,
            None,
            Arc::new(AtomicBool::new(false)),
            |_| {},
        )
        .expect("run");
        let secs = start.elapsed().as_secs_f64();
        total = r.executions_done;
        rates[k] = r.executions_done as f64 / secs;
    }
    let per_exec_instr = {
        // Lane instructions of the reference run of the first variant, for scale.
        let p = &preps[0];
        let spec = fencehound_fuzzer::ExecSpec {
            id: 0,
            model: Model::Sc,
            p: 0.0,
            seed: 0,
            scheduler: SchedulerKind::Random,
            trace: false,
            filters: Default::default(),
            race: false,
        };
        fencehound_fuzzer::execute(p, &spec, None).lane_instructions
    };
    (c.name.clone(), total, rates, per_exec_instr)
}

fn main() {
    let runs: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let tmp = tempfile::tempdir().expect("temp dir");
    std::fs::write(tmp.path().join("mp.cu"), MP_CU).unwrap();
    std::fs::write(tmp.path().join("mp.toml"), MP_TOML).unwrap();
    let mut campaigns = vec![tmp.path().join("mp.toml")];
    let mut corpus_files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("campaigns/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    corpus_files.sort();
    campaigns.extend(corpus_files.iter().cloned());

    // Time to first failure with a cold PTX cache (NVRTC compiles each variant).
    let cold = tmp.path().join("ptx-cache");
    std::env::set_var("FENCEHOUND_CACHE_DIR", &cold);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average before: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("## time to first failure (stop at first, 2 jobs, the campaign's seed, p_w list and runs; empty PTX cache: every variant compiled by NVRTC)\n");
    println!("| campaign | variant | model | seconds (load + compile + reference + fuzz) | fuzz only | executions done | first failing id | p_w | verdict |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---|");
    for path in &campaigns {
        let c0 = Campaign::load(path).expect("campaign");
        for (v, var) in &c0.variants {
            for m in models(&c0) {
                if var.expect_for(m.name()) != Some(fencehound_fuzzer::Expect::Fail) {
                    continue;
                }
                let start = Instant::now();
                let c = Arc::new(Campaign::load(path).expect("campaign"));
                let prep = Arc::new(prepare(c.clone(), v).expect("prepare"));
                let mut p = plan(&c, vec![v.clone()], vec![m], c.file.fuzz.runs, 2);
                p.stop_at_first = true;
                let fuzz_start = Instant::now();
                let r = runner::run(
                    &c,
                    vec![prep],
                    &p,
                    None,
                    Arc::new(AtomicBool::new(false)),
                    |_| {},
                )
                .expect("run");
                let fuzz = fuzz_start.elapsed().as_secs_f64();
                let total = start.elapsed().as_secs_f64();
                match r.failures.first() {
                    Some(f) => println!(
                        "| {} | {v} | {} | {total:.3} | {fuzz:.3} | {} | {} | {} | {} |",
                        c.name,
                        m.name(),
                        r.executions_done,
                        f.id,
                        f.p,
                        f.verdict.name()
                    ),
                    None => println!(
                        "| {} | {v} | {} | {total:.3} | {fuzz:.3} | {} | — | — | NOT FOUND |",
                        c.name,
                        m.name(),
                        r.executions_done
                    ),
                }
            }
        }
    }
    println!("\n## executions per second ({runs} runs per variant × model × p_w)\n");
    println!("| campaign | lane instr / exec (sc) | executions | exec/s, 1 job | exec/s, 2 jobs | speed-up |");
    println!("|---|---:|---:|---:|---:|---:|");
    for path in &campaigns {
        // The litmus-sized campaign is cheap: give it more runs so the timing means something.
        let r = if path.starts_with(tmp.path()) {
            runs * 50
        } else {
            runs
        };
        let (name, total, rates, instr) = throughput(path, r);
        println!(
            "| {name} | {instr} | {total} | {:.0} | {:.0} | {:.2}× |",
            rates[0],
            rates[1],
            rates[1] / rates[0]
        );
    }

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nload average after: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
