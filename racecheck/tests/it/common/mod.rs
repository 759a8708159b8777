//! Shared test harness: compile CUDA with NVRTC, run it under the race check (alone or
//! around write buffers) with seeded random schedules, and read the labelled cases.
#![allow(dead_code)]

use fencehound_argspec as argspec;
use fencehound_handlers::{BufferConfig, Model, WeakHooks, WriteBuffers};
use fencehound_racecheck::{Conflict, RaceCheck, RaceClass, RaceReport, RaceSet};
use fencehound_vgpu::{Device, Dim3, Hooks, LaunchOptions, NoHooks, RandomScheduler};
use std::collections::BTreeSet;

/// Compiles `src` with NVRTC (default arch, line info) and `defines`. Panics with NVRTC's
/// log on failure: a test kernel that does not compile is a broken test.
pub fn compile(file: &str, src: &str, defines: &[&str]) -> fencehound_ptx::Module {
    let mut req = fencehound_toolchain::CompileRequest::new(src, file);
    req.defines = defines.iter().map(|d| (d.to_string(), None)).collect();
    let out = fencehound_toolchain::compile(&req).unwrap_or_else(|e| panic!("{file}: {e}"));
    fencehound_ptx::parse(file, &out.ptx).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// One labelled kernel: `// case: NAME; expect: none | CLASS[:CONFLICT] ...; grid: N;
/// block: N; args: ...`.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub expect: Vec<(RaceClass, Option<Conflict>)>,
    pub grid: u32,
    pub block: u32,
    pub args: String,
}

pub fn cases(src: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.strip_prefix("// case:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default().to_string();
        let mut c = Case {
            name,
            expect: Vec::new(),
            grid: 1,
            block: 32,
            args: String::new(),
        };
        for p in parts {
            let (k, v) = p
                .split_once(':')
                .unwrap_or_else(|| panic!("bad case field `{p}`"));
            let v = v.trim();
            match k.trim() {
                "expect" if v == "none" => {}
                "expect" => {
                    for e in v.split_whitespace() {
                        let (cl, cf) = match e.split_once(':') {
                            Some((a, b)) => (a, Some(b)),
                            None => (e, None),
                        };
                        let class = RaceClass::parse(cl).unwrap_or_else(|| panic!("class `{cl}`"));
                        let conflict = cf.map(|c| match c {
                            "RAW" => Conflict::Raw,
                            "WAR" => Conflict::War,
                            "WAW" => Conflict::Waw,
                            _ => panic!("conflict `{c}`"),
                        });
                        c.expect.push((class, conflict));
                    }
                }
                "grid" => c.grid = v.parse().expect("grid"),
                "block" => c.block = v.parse().expect("block"),
                "args" => c.args = v.to_string(),
                other => panic!("unknown case field `{other}`"),
            }
        }
        out.push(c);
    }
    out
}

/// What memory does under the race check.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    Sc,
    /// As `Sc`, every access through the checker's general path (no fast paths).
    ScGeneral,
    /// Write buffers, `scoped` model, with this `p_w`.
    Buffers(f64),
    /// The `weak` model (stale reads) with this `p`: reads may read older stores, which
    /// the checker must still match to the writes they read.
    Weak(f64),
}

pub struct Outcome {
    pub races: RaceSet,
    pub reports: Vec<RaceReport>,
    /// Picks made among one CTA's warps (`LaunchOptions::cta_local`, [`run_opts`]).
    pub cta_local_picks: u64,
}

/// Runs `kernel` once per seed (a fresh device each time, one checker for all).
#[allow(clippy::too_many_arguments)]
pub fn run(
    module: &fencehound_ptx::Module,
    kernel: &str,
    grid: u32,
    block: u32,
    args: &str,
    seeds: std::ops::Range<u64>,
    memory: Memory,
    defines_note: &str,
) -> Outcome {
    run_opts(
        module,
        kernel,
        grid,
        block,
        args,
        seeds,
        memory,
        defines_note,
        false,
    )
}

/// [`run`], with CTA-local picks (`exec`'s scheduling) on or off.
#[allow(clippy::too_many_arguments)]
pub fn run_opts(
    module: &fencehound_ptx::Module,
    kernel: &str,
    grid: u32,
    block: u32,
    args: &str,
    seeds: std::ops::Range<u64>,
    memory: Memory,
    defines_note: &str,
    cta_local: bool,
) -> Outcome {
    let mut cta_local_picks = 0;
    let specs = argspec::parse_args(args).unwrap_or_else(|e| panic!("{kernel}: args: {e}"));
    let mut all = RaceSet::default();
    let mut reports = Vec::new();
    for seed in seeds {
        let mut dev = Device::new();
        let id = dev
            .load_module(module)
            .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let bound = argspec::bind(&mut dev, &specs).unwrap_or_else(|e| panic!("{kernel}: {e}"));
        // One launch whatever hooks the checker wraps (their types differ).
        macro_rules! launch_with {
            ($inner:expr) => {{
                let mut rc = RaceCheck::for_module($inner, &dev, id);
                if matches!(memory, Memory::ScGeneral) {
                    rc = rc.without_fast_paths();
                }
                launch(
                    &mut dev,
                    id,
                    kernel,
                    grid,
                    block,
                    &bound.args,
                    seed,
                    rc,
                    defines_note,
                    cta_local,
                )
            }};
        }
        let (races, picks) = match memory {
            Memory::Sc | Memory::ScGeneral => launch_with!(NoHooks),
            Memory::Buffers(p_w) => launch_with!(WriteBuffers::new(BufferConfig::new(
                Model::Scoped,
                p_w,
                seed
            ))),
            Memory::Weak(p) => {
                launch_with!(WeakHooks::new(BufferConfig::new(Model::Weak, p, seed)))
            }
        };
        reports = {
            let mut merged = all.clone();
            merged.merge(&races);
            merged.reports(&dev, id)
        };
        all.merge(&races);
        cta_local_picks += picks;
    }
    Outcome {
        races: all,
        reports,
        cta_local_picks,
    }
}

#[allow(clippy::too_many_arguments)]
fn launch<H: Hooks>(
    dev: &mut Device,
    id: fencehound_vgpu::ModuleId,
    kernel: &str,
    grid: u32,
    block: u32,
    args: &[fencehound_vgpu::Arg],
    seed: u64,
    mut rc: RaceCheck<H>,
    note: &str,
    cta_local: bool,
) -> (RaceSet, u64) {
    let mut sched = RandomScheduler::new(seed);
    let r = dev
        .launch_with(
            id,
            kernel,
            Dim3::x(grid),
            Dim3::x(block),
            0,
            args,
            LaunchOptions {
                fuel: 50_000_000,
                cta_local,
                ..Default::default()
            },
            &mut rc,
            &mut sched,
        )
        .unwrap_or_else(|e| panic!("{kernel}{note}: {e}"));
    assert!(
        r.outcome.is_completed(),
        "{kernel}{note} seed {seed}: {:?}",
        r.outcome
    );
    (rc.take_races(), r.stats.cta_local_picks)
}

/// Checks a case's labels against what was found; returns a description of the mismatch.
pub fn verdict(case: &Case, out: &Outcome) -> Result<(), String> {
    let found: BTreeSet<RaceClass> = out.races.classes();
    let expected: BTreeSet<RaceClass> = case.expect.iter().map(|e| e.0).collect();
    let mut problems = Vec::new();
    if found != expected {
        problems.push(format!("expected classes {expected:?}, found {found:?}"));
    }
    for (class, conflict) in &case.expect {
        if let Some(cf) = conflict {
            // One report per pair of accesses: a read-write pair is RAW or WAR depending on
            // which came first in the execution that reported it first.
            let rw = |c: Conflict| matches!(c, Conflict::Raw | Conflict::War);
            if !out
                .reports
                .iter()
                .any(|r| r.class == *class && (r.conflict == *cf || (rw(r.conflict) && rw(*cf))))
            {
                problems.push(format!("no {class} {cf} race"));
            }
        }
    }
    for r in &out.reports {
        if r.first.cuda.is_none() || r.second.cuda.is_none() {
            problems.push(format!("report without CUDA lines: {r}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let text: Vec<String> = out.reports.iter().map(|r| r.to_string()).collect();
        Err(format!(
            "{}: {}\n{}",
            case.name,
            problems.join("; "),
            text.join("\n")
        ))
    }
}
