//! What a whole program costs per execution compared with a kernel campaign.
//!
//! `cargo build --release && cargo run --release -p fencehound-fuzzer --example program_bench [-- N]`
//! (the first builds `fencehound` and the runtime library `target/release/deps/libcudart.so`
//! that program executions load). Prints one table (results go in BENCHMARKS.md with the
//! date and machine):
//!
//! * **kernel campaign**: `campaigns/cbe_dot.toml`, variant `two_fences` — the dot product
//!   with its lock, 8 × 64 threads, run in process (`execute`);
//! * **program**: `tests/programs/dot_lock.toml`, variant `fenced` — the same algorithm and
//!   grid as a whole CUDA program, one process per execution (process start, loading
//!   fencehound's runtime, fat-binary registration and PTX load, the launch, the host
//!   check); its extra cost per execution is the difference of the two means;
//! * **`true`**: spawning a process that does nothing, for scale;
//!
//! each N executions (default 200) in sequence, bugaroo, `p_w` = 0.5; then the program
//! campaign's 1,000-run throughput with 2 jobs (`runner::run`, 500 runs × `p_w` 0.5, 1).

use fencehound_fuzzer::{execute, prepare, runner, Campaign, ExecSpec, Plan};
use fencehound_handlers::Model;
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Mean and median milliseconds of `n` sequential executions.
fn time_execs(c: Arc<Campaign>, variant: &str, n: u64) -> (f64, f64, u64) {
    let prep = match prepare(c, variant) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot prepare {variant}: {e}");
            std::process::exit(2);
        }
    };
    let mut ms = Vec::new();
    let mut failures = 0;
    for i in 0..n {
        let spec = ExecSpec {
            id: i,
            model: Model::Bugaroo,
            p: 0.5,
            seed: fencehound_fuzzer::seeds::exec_seed(1, i),
            scheduler: SchedulerKind::Random,
            trace: false,
            filters: Default::default(),
            race: false,
        };
        let t = Instant::now();
        let r = execute(&prep, &spec, None);
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        failures += r.verdict.is_failure() as u64;
    }
    let mean = ms.iter().sum::<f64>() / ms.len().max(1) as f64;
    ms.sort_by(|a, b| a.total_cmp(b));
    (mean, ms[ms.len() / 2], failures)
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let load = |p: &Path| match Campaign::load(p) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let kernel = load(&root().join("campaigns/cbe_dot.toml"));
    let program = load(&root().join("tests/programs/dot_lock.toml"));
    // Bare process start, for scale: spawn and wait for `true`.
    let mut spawn = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let _ = std::process::Command::new("true").status();
        spawn.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let spawn_mean = spawn.iter().sum::<f64>() / n as f64;
    let (k_mean, k_med, k_fail) = time_execs(kernel, "two_fences", n);
    let (p_mean, p_med, p_fail) = time_execs(program.clone(), "fenced", n);
    println!("| execution | n | mean ms | median ms | failures |");
    println!("|---|---:|---:|---:|---:|");
    println!("| `true` (bare process start) | {n} | {spawn_mean:.2} | | |");
    println!("| kernel campaign cbe_dot/two_fences (in process) | {n} | {k_mean:.2} | {k_med:.2} | {k_fail} |");
    println!("| program dot_lock/fenced (one process each) | {n} | {p_mean:.2} | {p_med:.2} | {p_fail} |");
    println!(
        "| **program overhead per execution** | | **{:.2}** | **{:.2}** | |",
        p_mean - k_mean,
        p_med - k_med
    );
    let prep = match prepare(program.clone(), "fenced") {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let plan = Plan {
        variants: vec!["fenced".into()],
        models: vec![Model::Bugaroo],
        ps: vec![0.5, 1.0],
        runs: 500,
        master_seed: 1,
        scheduler: SchedulerKind::Random,
        scheduler_name: "random".into(),
        jobs: 2,
        stop_at_first: false,
        race: false,
    };
    let t = Instant::now();
    let report = match runner::run(
        &program,
        vec![prep],
        &plan,
        None,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let s = t.elapsed().as_secs_f64();
    println!(
        "\nprogram campaign dot_lock/fenced: {} executions, {} failing, {:.1} s with 2 jobs = {:.0} executions/s",
        report.executions_done,
        report.failures.len(),
        s,
        report.executions_done as f64 / s
    );
}
