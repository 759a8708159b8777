//! `fencehound exec [--model M] [--p P] [--seed S] [--trace] -- ./app ARGS…`: one run of an
//! unmodified CUDA program whose kernels execute on the virtual GPU under a write-buffer
//! model (through fencehound's `libcudart.so.13`). The program's own output appears as
//! usual; fencehound's report follows on stderr.

use anyhow::{bail, Context, Result};
use fencehound_cudart_protocol::{LaunchOutcome, RuntimeConfig, HANG_EXIT_STATUS};
use fencehound_fuzzer::program::{self, ProgramRun, RuntimeDir, Streams};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Memory model: sc, bugaroo, scoped, weak. The default, `weak`, sees the most: the
    /// writer's side (stores seen late) and the reader's (loads that read older values),
    /// with scopes.
    #[arg(long, default_value = "weak")]
    pub model: String,
    /// Under `bugaroo` and `scoped`, the probability that a store is buffered; under
    /// `weak`, that a load reads an older store when it may. Default 0.75: at 1 every store
    /// is buffered and every load that may be stale is, never one access delayed and the
    /// next not, so bugs that need both (a seqlock reader accepting a torn snapshot) never
    /// show.
    #[arg(long)]
    pub p: Option<f64>,
    /// Execution seed: launch i uses (seed, i), so the run replays exactly.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Scheduler: random, pct[:depth], rr[:quantum].
    #[arg(long, default_value = "random")]
    pub scheduler: String,
    /// Show which stores were buffered, when they drained, and stale loads, per launch.
    #[arg(long)]
    pub trace: bool,
    /// Also run the shadow-memory race check, on the execution this command runs without
    /// it (same seed, same steps). Every access is checked except the repeated turns of a
    /// spin loop that the vgpu parks (a turn that reads what the previous one read and
    /// writes nothing): those repeat accesses already checked.
    #[arg(long)]
    pub race: bool,
    /// Lane instructions per launch before a launch counts as hung. Default: no limit — a
    /// launch is hung when no warp can make progress any more (every running warp repeats
    /// its state, spinning on values nothing can change), or after `--wall-ms`.
    #[arg(long)]
    pub fuel: Option<u64>,
    /// Wall-clock milliseconds per launch before it counts as hung (a launch that is still
    /// making progress when it runs out is reported as a timeout naming this flag).
    #[arg(long, default_value_t = EXEC_WALL_MS)]
    pub wall_ms: u64,
    /// Kill the whole program after this many seconds (host code can hang too).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Keep the side channel (one JSON record per launch) in this file.
    #[arg(long)]
    pub side_channel: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub argv: Vec<String>,
}

/// `exec`'s wall-clock budget per launch: ten minutes. Hangs are found by lack of progress
/// long before that; this bounds a launch that keeps working (a GPU-sized kernel on the
/// virtual GPU runs for minutes where a GPU takes milliseconds).
pub const EXEC_WALL_MS: u64 = 600_000;

/// Where fencehound's runtime library is (for `fencehound toolchain`).
pub fn find_runtime() -> Result<PathBuf> {
    Ok(program::find_runtime()?)
}

/// 0: the program exited 0, no launch failed and (with `--race`) no race was found; 1: a
/// launch faulted, trapped or hung, the program failed (non-zero status, signal), or the
/// race check reported a race; 2: the program could not be run.
pub fn run(a: Args) -> Result<u8> {
    let Some(model) = fencehound_handlers::Model::parse(&a.model) else {
        bail!("unknown model `{}` (sc, bugaroo, scoped, weak)", a.model);
    };
    let p = a.p.unwrap_or_else(|| default_p(model));
    if !(0.0..=1.0).contains(&p) {
        bail!("--p {p}: must be in [0, 1]");
    }
    if fencehound_vgpu::SchedulerKind::parse(&a.scheduler).is_none() {
        bail!(
            "unknown scheduler `{}` (random, pct[:depth], rr[:quantum])",
            a.scheduler
        );
    }
    let prog = PathBuf::from(&a.argv[0]);
    let info = program::check_program(&prog)?;
    if info.driver_api {
        eprintln!("fencehound exec: note: {}", program::DRIVER_API_NOTE);
    }
    let rt = RuntimeDir::new()?;
    let config = RuntimeConfig {
        model: a.model.clone(),
        p,
        seed: a.seed,
        scheduler: a.scheduler.clone(),
        fuel: a.fuel.unwrap_or(u64::MAX),
        wall_ms: a.wall_ms,
        trace: a.trace,
        race: a.race,
        ..RuntimeConfig::default()
    };
    let run = ProgramRun {
        argv: &a.argv,
        cwd: None,
        config,
        streams: Streams::Inherit,
        timeout: a.timeout.map(Duration::from_secs_f64),
        env: &[],
        side_channel: a.side_channel.as_deref(),
        cancel: None,
    };
    let out = program::run_program(&rt, &run).with_context(|| format!("running {}", a.argv[0]))?;
    Ok(report(&a, p, &out, info.driver_api))
}

/// `exec`'s p_w when none is given: 0.75 under every model that uses it (`sc` does not).
/// At p_w = 1 every store is buffered and, under `weak`, every load that may read an
/// older store does: never one access delayed and the next not. A seqlock whose writer
/// lacks the fence after its odd counter store failed 0 of 100 runs at p_w = 1 under
/// `weak`, `bugaroo` and `scoped` alike, 77 of 100 at 0.75 under `weak` (`fuzz --runs
/// 100`, 2026-12-07); `cub_scan no_fence_3` under `bugaroo` fails 0 of 50 at 1 and 10 of
/// 50 at 0.75. Over the corpus detection rates (`fuzzer/tests/data/detection_rates.tsv`)
/// 0.75 detects as well as 1 or better in every `bugaroo`/`scoped` cell, and in every
/// `weak` cell but `sdk_red sdk` (13 vs 8 of 100 with `--runs 100`, intervals overlap).
pub fn default_p(model: fencehound_handlers::Model) -> f64 {
    if model.uses_p() {
        0.75
    } else {
        1.0
    }
}

/// The dynamic loader's exit status when it cannot load a program's libraries.
const LOADER_FAILED: i32 = 127;

fn report(a: &Args, p: f64, out: &program::ProgramOutcome, driver: bool) -> u8 {
    let sc = &out.side;
    eprintln!(
        "\nfencehound exec: {} under {} (p_w={}, seed {}): {} launch(es) in {:.2}s",
        a.argv[0],
        a.model,
        p,
        a.seed,
        sc.launches.len(),
        out.wall.as_secs_f64()
    );
    for l in &sc.launches {
        let s = &l.stats;
        // Under `weak` the interesting count is loads that read an older value.
        let weak = s
            .weak
            .as_ref()
            .map(|w| format!("; stale reads {}/{}", w.stale_reads, w.loads + w.rmws))
            .unwrap_or_default();
        eprintln!(
            "  #{:<3} {} grid ({},{},{}) block ({},{},{}): {}{}; stores buffered: global {}/{}, shared {}/{}{weak}",
            l.index,
            l.name,
            l.grid[0],
            l.grid[1],
            l.grid[2],
            l.block[0],
            l.block[1],
            l.block[2],
            outcome_name(l.outcome),
            if l.cuda_error != "cudaSuccess" {
                format!(" ({})", l.cuda_error)
            } else {
                String::new()
            },
            s.global.stores_buffered,
            s.global.stores_seen,
            s.shared.stores_buffered,
            s.shared.stores_seen,
        );
        if l.unwritten_escapes > 0 {
            eprintln!(
                "        note: {} write(s) landed outside every allocation the kernel's pointer \
                 parameters point into (pointer arithmetic across allocations, undefined in \
                 CUDA C++); loads of those bytes before such a write were not seen by the \
                 model{}",
                l.unwritten_escapes,
                if a.race { " or the race check" } else { "" }
            );
        }
        if a.trace {
            for site in &l.store_sites {
                eprintln!(
                    "        buffered {}× at {} `{}`",
                    site.buffered, site.location, site.ptx
                );
            }
            for t in &l.trace {
                eprintln!("        {t}");
            }
        }
    }
    // One report per (kernel, pair of source lines, class), over every address and launch,
    // under the kernel's name as the launch lines give it.
    let races = fencehound_racecheck::RaceSummary::fold(
        sc.launches
            .iter()
            .flat_map(|l| l.races.iter().map(move |r| (l.name.as_str(), r))),
    );
    if a.race {
        if races.is_empty() {
            eprintln!("race check: no races");
        } else {
            eprintln!("race check: {} race(s)", races.len());
            for r in &races {
                eprintln!("race: {r}");
            }
        }
    }
    for name in &sc.unimplemented {
        eprintln!(
            "  not implemented by fencehound's runtime (returned cudaErrorNotSupported): {name}"
        );
    }
    for e in &sc.errors {
        eprintln!("  problem: {e}");
    }
    let failed_launch = sc.first_failure();
    // Status 127 before any CUDA call: the loader could not start the program (a missing
    // shared library) — an input problem, not a finding.
    let loader_failed = !sc.started && out.status == Some(LOADER_FAILED);
    let verdict = if let Some(l) = failed_launch {
        let first = l.message.lines().next().unwrap_or("");
        format!(
            "{} in `{}` (launch #{}): {first}",
            outcome_name(l.outcome),
            l.name,
            l.index
        )
    } else if loader_failed {
        format!(
            "could not start (exit status 127: the dynamic loader failed{})",
            if driver {
                "; it needs libcuda.so.1, the CUDA driver, which fencehound does not provide"
            } else {
                ", see its message above"
            }
        )
    } else if let Some(sig) = out.signal {
        format!("the program was killed by signal {sig}")
    } else if out.killed_after_timeout {
        "the program was killed after --timeout".to_string()
    } else if !races.is_empty() && out.status == Some(0) {
        format!(
            "race(s) found: {} (the program exited with status 0)",
            races.len()
        )
    } else {
        match out.status {
            Some(0) => "pass (exit status 0)".to_string(),
            Some(HANG_EXIT_STATUS) if out.hung() => "timeout".to_string(),
            Some(c) => format!("the program exited with status {c}"),
            None => "the program ended without a status".to_string(),
        }
    };
    if !sc.started && !loader_failed {
        eprintln!(
            "  note: the program never called the CUDA runtime (no CUDA calls, or it loaded another libcudart: check `ldd {}`)",
            a.argv[0]
        );
    }
    eprintln!("verdict: {verdict}");
    if loader_failed {
        return crate::exit::INPUT;
    }
    let failed = failed_launch.is_some()
        || !races.is_empty()
        || out.signal.is_some()
        || out.killed_after_timeout
        || out.status != Some(0);
    if failed {
        crate::exit::FOUND
    } else {
        crate::exit::OK
    }
}

fn outcome_name(o: LaunchOutcome) -> &'static str {
    match o {
        LaunchOutcome::Completed => "completed",
        LaunchOutcome::Fault => "FAULT",
        LaunchOutcome::Trap => "TRAP",
        LaunchOutcome::Deadlock => "DEADLOCK",
        LaunchOutcome::Timeout => "TIMEOUT",
        LaunchOutcome::Refused => "refused",
    }
}
