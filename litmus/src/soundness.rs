//! Generated programs under every operational model, judged by the axiomatic checker
//! (`fencehound litmus --generate N`).
//!
//! For each program ([`crate::generate`]) the checker computes the final states PTX allows
//! and the sequentially consistent ones; each model runs the lowered kernel `runs` times.
//! A final state outside the allowed set is **unsound** (printed as a litmus program whose
//! `exists` is that state, with the execution that produced it first); allowed states that
//! are not SC are the **weak outcomes**, and the report counts how many of them each model
//! reached, by shape ([`crate::generate::shape`]), by synchronization mix and by
//! placement. Weak outcomes split into *in-order* ones (some allowed execution has
//! `po ∪ rf` acyclic) and *load-buffering* ones (every allowed execution reads from the
//! future), which no model whose loads read executed stores can produce.
//!
//! Program `i` and its executions depend only on `(seed, i)`, and programs are processed
//! in parallel but merged in order, so a report does not depend on the number of workers.

use crate::axiom::{self, Options, Outcomes};
use crate::generate::{generate, idioms, placement, program_seed, shape, sync_mix, with_target};
use crate::known::{explain, Known};
use crate::lower::Layout;
use crate::print::print;
use crate::run::{run_model, run_range, ExecParams, RunConfig};
use fencehound_handlers::Model;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Debug, Clone)]
pub struct Config {
    /// Distinct programs to run.
    pub count: u64,
    pub seed: u64,
    /// Executions per program and model.
    pub runs: u64,
    /// `weak` goes on, `runs` executions at a time up to this many, while some plain weak
    /// outcome of the program is still missing (the coverage measure; an unsound state
    /// found on the way counts as any other).
    pub weak_runs: u64,
    pub models: Vec<Model>,
    pub workers: usize,
    pub p_w: Vec<f64>,
    /// Programs with more allowed final states are left out (redrawn): a litmus test is
    /// a program whose every outcome a few hundred runs can hit.
    pub max_states: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            count: 100,
            seed: 0,
            runs: 300,
            weak_runs: 6000,
            models: vec![Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak],
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            p_w: vec![0.5, 1.0],
            max_states: 64,
        }
    }
}

/// A forbidden final state some model produced.
#[derive(Debug, Clone, Serialize)]
pub struct Unsound {
    pub index: u64,
    pub model: String,
    pub shape: String,
    /// How the locations were laid out ([`layout_of`]).
    pub layout: String,
    /// `var=value` pairs.
    pub state: Vec<(String, i64)>,
    pub executions: u64,
    pub first: ExecParams,
    /// The program with `exists (this state)`.
    pub program: String,
    /// The known bugs that explain it, if any ([`crate::known`]).
    pub known: Vec<Known>,
}

/// Weak outcomes and how many each model reached.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    pub tests: u64,
    /// Allowed, not SC.
    pub weak: u64,
    /// Of those, *plain*: allowed by an execution that reads no future write and has a
    /// total coherence order ([`axiom::Outcomes::plain`]).
    pub weak_plain: u64,
    /// Of those, needing load buffering (no allowed execution has `po ∪ rf` acyclic).
    pub weak_lb: u64,
    /// Per model: weak outcomes reached, and plain ones reached.
    pub reached: BTreeMap<String, (u64, u64)>,
}

impl Row {
    fn add(&mut self, o: &Row) {
        self.tests += o.tests;
        self.weak += o.weak;
        self.weak_plain += o.weak_plain;
        self.weak_lb += o.weak_lb;
        for (m, (a, b)) in &o.reached {
            let e = self.reached.entry(m.clone()).or_default();
            e.0 += a;
            e.1 += b;
        }
    }
}

/// What one program gave.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TestResult {
    pub index: u64,
    pub shape: String,
    pub mix: String,
    pub placement: String,
    pub layout: String,
    pub idioms: Vec<String>,
    pub row: Row,
    pub unsound: Vec<Unsound>,
    /// States the `sc` model produced that the checker's SC enumeration does not have.
    pub sc_mismatch: Vec<String>,
    /// The checker or the lowering could not take the program.
    pub skipped: Option<String>,
    /// More allowed final states than [`Config::max_states`]: left out.
    pub oversized: bool,
    pub hangs: u64,
    pub faults: u64,
    pub checker_seconds: f64,
    pub model_seconds: f64,
    /// Executions run, all models.
    pub executions: u64,
    /// Weak outcomes `weak` missed, `var=value` lists.
    pub weak_missed: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub seed: u64,
    pub runs: u64,
    pub weak_runs: u64,
    pub models: Vec<String>,
    pub tests: u64,
    /// Programs generated but left out for having more than `max_states` final states.
    pub oversized: u64,
    pub max_states: usize,
    pub seconds: f64,
    pub checker_seconds: f64,
    pub model_seconds: f64,
    pub executions: u64,
    pub hangs: u64,
    pub faults: u64,
    pub unsound: Vec<Unsound>,
    pub sc_mismatch: Vec<String>,
    pub skipped: Vec<(u64, String)>,
    pub total: Row,
    pub by_shape: BTreeMap<String, Row>,
    pub by_mix: BTreeMap<String, Row>,
    pub by_placement: BTreeMap<String, Row>,
    /// By location layout ([`layout_of`]).
    pub by_layout: BTreeMap<String, Row>,
    /// By classic shape contained ([`crate::generate::idioms`]): a program counts in
    /// every row whose shape it contains.
    pub by_idiom: BTreeMap<String, Row>,
    /// Per shape, a few weak outcomes `weak` missed (program index and state).
    pub weak_misses: BTreeMap<String, Vec<(u64, String)>>,
}

impl Report {
    /// Unsound outcomes no known bug explains.
    pub fn unexplained(&self) -> impl Iterator<Item = &Unsound> {
        self.unsound.iter().filter(|u| u.known.is_empty())
    }
}

fn show_state(vars: &[String], s: &[i64]) -> Vec<(String, i64)> {
    vars.iter().cloned().zip(s.iter().copied()).collect()
}

fn state_text(st: &[(String, i64)]) -> String {
    st.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How program `index` lays out its locations: every odd-numbered program packs them
/// into consecutive words (two to an 8-byte block, as a struct's fields), the others give
/// each a block of its own. The models keep per-block state; a per-block approximation
/// in `weak`'s observations hid every stale read of a location whose block-mate had been
/// observed, and the spread layout alone could not show it (2026-12-07).
pub fn layout_of(index: u64) -> Layout {
    if index % 2 == 1 {
        Layout::Packed
    } else {
        Layout::Spread
    }
}

fn layout_name(l: Layout) -> &'static str {
    match l {
        Layout::Spread => "a block per location",
        Layout::Packed => "packed words",
    }
}

/// Runs program `index`.
pub fn run_one(cfg: &Config, index: u64, t: &crate::LitmusTest) -> TestResult {
    let layout = layout_of(index);
    let mut res = TestResult {
        index,
        shape: shape(t),
        mix: sync_mix(t),
        placement: placement(t).to_string(),
        layout: layout_name(layout).to_string(),
        idioms: idioms(t).into_iter().map(str::to_string).collect(),
        ..TestResult::default()
    };
    res.row.tests = 1;
    let t0 = std::time::Instant::now();
    let o: Outcomes = match axiom::outcomes(
        t,
        &Options {
            sc: true,
            total_co: true,
            ..Options::default()
        },
    ) {
        Ok(o) => o,
        Err(e) => {
            res.skipped = Some(format!("checker: {e}"));
            return res;
        }
    };
    res.checker_seconds = t0.elapsed().as_secs_f64();
    if o.allowed.len() > cfg.max_states {
        res.oversized = true;
        return res;
    }
    let name = format!("gen-{}-{index}", cfg.seed);
    let low = match crate::lower::lower_with(&name, t, layout) {
        Ok(l) => l,
        Err(e) => {
            res.skipped = Some(format!("lowering: {e}"));
            return res;
        }
    };
    let vars: Vec<String> = o.vars.iter().map(|v| v.to_string()).collect();
    let weak: BTreeSet<&Vec<i64>> = o.allowed.difference(&o.sc).collect();
    res.row.weak = weak.len() as u64;
    res.row.weak_plain = weak.iter().filter(|s| o.plain.contains(**s)).count() as u64;
    res.row.weak_lb = weak.iter().filter(|s| !o.in_order.contains(**s)).count() as u64;
    let t1 = std::time::Instant::now();
    for &m in &cfg.models {
        let rc = RunConfig {
            runs: cfg.runs,
            p_w: cfg.p_w.clone(),
            seed: program_seed(cfg.seed, index),
            workers: 1,
            ..RunConfig::default()
        };
        let mut h = run_model(t, &low, m, &rc);
        let mut done = cfg.runs;
        if m == Model::Weak {
            let plain: Vec<&Vec<i64>> = weak
                .iter()
                .filter(|s| o.plain.contains(**s))
                .copied()
                .collect();
            while done < cfg.weak_runs && plain.iter().any(|s| !h.states.contains_key(*s)) {
                let next = (done + cfg.runs).min(cfg.weak_runs);
                h.merge(run_range(t, &low, m, &rc, done..next));
                done = next;
            }
        }
        res.executions += done;
        res.hangs += h.hangs;
        res.faults += h.faults;
        let mut reached = (0, 0);
        for (state, (n, ep)) in &h.states {
            if !o.allowed.contains(state) {
                let shown = show_state(&vars, state);
                res.unsound.push(Unsound {
                    index,
                    model: m.name().to_string(),
                    shape: res.shape.clone(),
                    layout: res.layout.clone(),
                    program: print(&with_target(t, state)),
                    known: explain(t, m, state).into_iter().cloned().collect(),
                    state: shown,
                    executions: *n,
                    first: ep.clone(),
                });
                continue;
            }
            if m == Model::Sc && !o.sc.contains(state) {
                res.sc_mismatch.push(format!(
                    "program {index}: {}",
                    state_text(&show_state(&vars, state))
                ));
            }
            if weak.contains(state) {
                reached.0 += 1;
                if o.plain.contains(state) {
                    reached.1 += 1;
                }
            }
        }
        if m == Model::Weak {
            for s in weak.iter().filter(|s| o.plain.contains(**s)) {
                if !h.states.contains_key(*s) {
                    res.weak_missed.push(state_text(&show_state(&vars, s)));
                }
            }
        }
        res.row.reached.insert(m.name().to_string(), reached);
    }
    res.model_seconds = t1.elapsed().as_secs_f64();
    res
}

/// Runs `cfg.count` distinct generated programs; `progress(done)` after each.
pub fn run(cfg: &Config, progress: impl Fn(u64) + Sync) -> Report {
    let t0 = std::time::Instant::now();
    // Distinct programs in index order; workers take them in that order and stop once
    // `count` have been kept, so the kept ones are the first `count` in index order
    // whatever the number of workers.
    let mut programs = Vec::new();
    let mut seen = HashSet::new();
    let mut index = 0u64;
    let want = cfg.count.saturating_mul(4).max(64);
    while (programs.len() as u64) < want && index < want.saturating_mul(20) {
        let t = generate(cfg.seed, index);
        if seen.insert(print(&t)) {
            programs.push((index, t));
        }
        index += 1;
    }
    let next = AtomicU64::new(0);
    let kept = AtomicU64::new(0);
    let results: Mutex<Vec<TestResult>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..cfg.workers.max(1) {
            s.spawn(|| loop {
                if kept.load(Ordering::Relaxed) >= cfg.count {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some((i, t)) = programs.get(k) else { break };
                let r = run_one(cfg, *i, t);
                if !r.oversized {
                    progress(kept.fetch_add(1, Ordering::Relaxed) + 1);
                }
                if let Ok(mut v) = results.lock() {
                    v.push(r);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|r| r.index);
    // The first `count` kept programs, and the oversized ones among them.
    let mut n = 0;
    results.retain(|r| {
        if n >= cfg.count {
            return false;
        }
        if !r.oversized {
            n += 1;
        }
        true
    });
    let mut rep = Report {
        seed: cfg.seed,
        runs: cfg.runs,
        weak_runs: cfg.weak_runs,
        max_states: cfg.max_states,
        models: cfg.models.iter().map(|m| m.name().to_string()).collect(),
        ..Report::default()
    };
    for r in results {
        if r.oversized {
            rep.oversized += 1;
            continue;
        }
        rep.tests += 1;
        if let Some(s) = r.skipped {
            rep.skipped.push((r.index, s));
            continue;
        }
        rep.executions += r.executions;
        rep.checker_seconds += r.checker_seconds;
        rep.model_seconds += r.model_seconds;
        rep.hangs += r.hangs;
        rep.faults += r.faults;
        rep.unsound.extend(r.unsound);
        rep.sc_mismatch.extend(r.sc_mismatch);
        rep.total.add(&r.row);
        rep.by_shape.entry(r.shape.clone()).or_default().add(&r.row);
        rep.by_mix.entry(r.mix.clone()).or_default().add(&r.row);
        rep.by_placement
            .entry(r.placement.clone())
            .or_default()
            .add(&r.row);
        rep.by_layout
            .entry(r.layout.clone())
            .or_default()
            .add(&r.row);
        for i in &r.idioms {
            rep.by_idiom.entry(i.clone()).or_default().add(&r.row);
        }
        let misses = rep.weak_misses.entry(r.shape.clone()).or_default();
        for m in r.weak_missed {
            if misses.len() < 3 {
                misses.push((r.index, m));
            }
        }
    }
    rep.weak_misses.retain(|_, v| !v.is_empty());
    rep.seconds = t0.elapsed().as_secs_f64();
    rep
}

/// `a` of `b` as a percentage with one decimal ("-" when `b` is 0).
pub(crate) fn pct(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// The coverage table of `rows` (Markdown), rows with the most plain weak outcomes
/// first, at most `limit` rows and the rest summed as "other".
pub fn table(title: &str, rows: &BTreeMap<String, Row>, models: &[String], limit: usize) -> String {
    let mut v: Vec<(&String, &Row)> = rows.iter().collect();
    v.sort_by(|a, b| {
        b.1.weak_plain
            .cmp(&a.1.weak_plain)
            .then(b.1.weak.cmp(&a.1.weak))
            .then(b.1.tests.cmp(&a.1.tests))
    });
    let mut o = String::new();
    let _ = write!(
        o,
        "| {title} | tests | weak outcomes | load buffering | plain |"
    );
    for m in models {
        let _ = write!(o, " {m}: plain reached |");
    }
    let _ = writeln!(o, " `weak`: all reached |");
    let _ = write!(o, "|---|---:|---:|---:|---:|");
    for _ in models {
        let _ = write!(o, "---:|");
    }
    let _ = writeln!(o, "---:|");
    let mut other = Row::default();
    let mut shown = 0;
    for (k, r) in &v {
        if shown >= limit {
            other.add(r);
            continue;
        }
        shown += 1;
        o.push_str(&row_line(k, r, models));
    }
    if other.tests > 0 {
        o.push_str(&row_line(
            &format!("other ({} kinds)", v.len() - limit),
            &other,
            models,
        ));
    }
    o
}

fn row_line(name: &str, r: &Row, models: &[String]) -> String {
    let mut o = format!(
        "| {} | {} | {} | {} | {} |",
        name.replace('|', "\\|"),
        r.tests,
        r.weak,
        r.weak_lb,
        r.weak_plain
    );
    for m in models {
        let (_, b) = r.reached.get(m).copied().unwrap_or_default();
        let _ = write!(o, " {b} ({}) |", pct(b, r.weak_plain));
    }
    let (a, _) = r.reached.get("weak").copied().unwrap_or_default();
    let _ = writeln!(o, " {a} ({}) |", pct(a, r.weak));
    o
}

/// The human-readable report.
pub fn render(rep: &Report, shapes: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "generated {} programs (seed {}, {} runs per model, `weak` up to {} while a plain weak outcome is missing: {}) in {:.1} s — checker {:.1} s, models {:.1} s (CPU time summed over workers)",
        rep.tests,
        rep.seed,
        rep.runs,
        rep.weak_runs,
        rep.models.join(", "),
        rep.seconds,
        rep.checker_seconds,
        rep.model_seconds
    );
    let _ = writeln!(
        o,
        "{} executions, {} hangs, {} faults, {} skipped; {} more programs left out for having over {} allowed final states",
        rep.executions,
        rep.hangs,
        rep.faults,
        rep.skipped.len(),
        rep.oversized,
        rep.max_states
    );
    for (i, s) in rep.skipped.iter().take(10) {
        let _ = writeln!(o, "  skipped program {i}: {s}");
    }
    let known = rep.unsound.iter().filter(|u| !u.known.is_empty()).count();
    let _ = writeln!(
        o,
        "unsound outcomes (produced, forbidden by the PTX model): {} ({} explained by a known bug, {} not)",
        rep.unsound.len(),
        known,
        rep.unsound.len() - known
    );
    for u in &rep.unsound {
        let _ = writeln!(
            o,
            "\nUNSOUND under {} (program {}, shape {}, {}): {} — {} of {} executions, first: execution {} (seed {}, {}, p_w {}){}",
            u.model,
            u.index,
            u.shape,
            u.layout,
            state_text(&u.state),
            u.executions,
            rep.runs,
            u.first.index,
            u.first.seed,
            u.first.scheduler,
            u.first.p_w,
            u.known
                .iter()
                .map(|k| format!("\n  known: {} ({})", k.id, k.issue))
                .collect::<String>()
        );
        o.push_str(&u.program);
    }
    if !rep.sc_mismatch.is_empty() {
        let _ = writeln!(
            o,
            "\n`sc` produced {} states that are not sequentially consistent by the checker:",
            rep.sc_mismatch.len()
        );
        for s in rep.sc_mismatch.iter().take(10) {
            let _ = writeln!(o, "  {s}");
        }
    }
    let t = &rep.total;
    let _ = writeln!(
        o,
        "\nweak outcomes (allowed by PTX, not SC): {}; {} need load buffering, {} need a coherence order no serializing memory has (racing writes left unordered, an RMW's write before what it read), {} are plain",
        t.weak,
        t.weak_lb,
        t.weak - t.weak_plain - t.weak_lb,
        t.weak_plain
    );
    for m in &rep.models {
        let (a, b) = t.reached.get(m).copied().unwrap_or_default();
        let _ = writeln!(
            o,
            "  {m:<8} reached {b} of {} plain ({}); {a} of {} in all ({})",
            t.weak_plain,
            pct(b, t.weak_plain),
            t.weak,
            pct(a, t.weak)
        );
    }
    let _ = writeln!(o);
    o.push_str(&table("shape", &rep.by_shape, &rep.models, shapes));
    let _ = writeln!(o);
    o.push_str(&table("synchronization", &rep.by_mix, &rep.models, shapes));
    let _ = writeln!(o);
    o.push_str(&table("placement", &rep.by_placement, &rep.models, shapes));
    let _ = writeln!(o);
    o.push_str(&table("layout", &rep.by_layout, &rep.models, shapes));
    let _ = writeln!(o);
    o.push_str(&table(
        "contains classic shape",
        &rep.by_idiom,
        &rep.models,
        shapes,
    ));
    if !rep.weak_misses.is_empty() {
        let _ = writeln!(
            o,
            "\nplain weak outcomes `weak` missed, by shape (up to 3 each):"
        );
        let mut v: Vec<_> = rep.weak_misses.iter().collect();
        v.sort_by_key(|(k, _)| rep.by_shape.get(*k).map_or(0, |r| u64::MAX - r.weak));
        for (k, ms) in v.into_iter().take(shapes) {
            for (i, s) in ms {
                let _ = writeln!(o, "  {k}: program {i}: {s}");
            }
        }
    }
    o
}
