//! The race check judged against the axiomatic checker on generated programs
//! (`fencehound litmus --generate N --race`; issue 23.3).
//!
//! For each generated program ([`crate::generate`]) the axiomatic checker lists every
//! pair of conflicting accesses and what the consistent executions say about it
//! ([`crate::axiom::PairFacts`]): whether some execution leaves it unordered by causality
//! order, whether it is morally strong, and whether the race check's rules require a
//! report. The lowered kernel then runs `runs` times under each of `sc` and `weak` with
//! the race check ([`fencehound_racecheck::RaceCheck`]) wrapped around the model, and the
//! union of its reports is compared with the facts:
//!
//! * a **false alarm** is a reported pair that no consistent execution leaves unordered
//!   (or that does not conflict at all);
//! * a **wrong class** is a data-race class on a morally strong pair, or `unordered` on
//!   one that is not morally strong;
//! * a **miss** is a pair the rules require (`must_report`) that no run reported. The
//!   check is dynamic: it sees the orders its executions make, so a miss can mean the
//!   runs never made the execution that shows the race; [`Report`] counts misses by
//!   shape so that a systematic one stands out. Not a miss: a required pair whose one
//!   side's thread also writes the location and that write's race with the other side
//!   is reported (shadow memory keeps one write per location, so FastTrack reports one
//!   race per write, not every racing pair; counted as `subsumed`).
//!
//! Reports beyond `must_report` on unordered pairs are allowed: the race check's
//! failed-message-passing rule (a read after a signal that its writer made later,
//! without a release fence between) reports pairs that the flag exemption of rule 3
//! would skip.
//!
//! Program `i` depends only on `(seed, i)` and its executions on [`program_seed`], so a
//! report does not depend on the number of workers.

use crate::axiom::{self, InstrRef, Options, PairFacts};
use crate::generate::{generate, program_seed, shape};
use crate::lower::{place, Lowered};
use crate::print::print;
use crate::run::{execute_with, RunConfig};
use crate::soundness::pct;
use crate::LitmusTest;
use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_racecheck::{RaceCheck, RaceClass};
use fencehound_vgpu::Device;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

#[derive(Debug, Clone)]
pub struct Config {
    pub count: u64,
    pub seed: u64,
    /// Executions per program and model.
    pub runs: u64,
    pub models: Vec<Model>,
    pub p_w: Vec<f64>,
    pub workers: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            count: 100,
            seed: 0,
            runs: 200,
            models: vec![Model::Sc, Model::Weak],
            p_w: vec![0.5, 1.0],
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// One pair the comparison flags.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub index: u64,
    pub shape: String,
    /// `P<id>:<instruction index>` of both sides.
    pub pair: (String, String),
    pub facts: PairFacts,
    pub classes: Vec<String>,
    pub program: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TestResult {
    pub index: u64,
    pub shape: String,
    pub skipped: Option<String>,
    /// Conflicting pairs; of those unordered in some execution; required reports;
    /// reported pairs; required and reported.
    pub pairs: u64,
    pub unordered: u64,
    pub must: u64,
    pub reported: u64,
    pub must_found: u64,
    /// Data races required / found (a subset of `must`).
    pub data_races: u64,
    pub data_races_found: u64,
    pub false_alarms: Vec<Finding>,
    pub wrong_class: Vec<Finding>,
    pub misses: Vec<Finding>,
    /// Required pairs not reported themselves but through a later write of one side's
    /// thread (see the module docs).
    pub subsumed: u64,
    /// Reported, unordered, but not required, by class.
    pub extra: BTreeMap<String, u64>,
    pub executions: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub tests: u64,
    pub skipped: Vec<(u64, String)>,
    pub pairs: u64,
    pub unordered: u64,
    pub must: u64,
    pub must_found: u64,
    pub data_races: u64,
    pub data_races_found: u64,
    pub reported: u64,
    pub executions: u64,
    pub false_alarms: Vec<Finding>,
    pub wrong_class: Vec<Finding>,
    pub misses: Vec<Finding>,
    pub subsumed: u64,
    /// Reports beyond the required ones on unordered pairs, by class (the
    /// failed-message-passing rule; see the module docs).
    pub extra: BTreeMap<String, u64>,
    /// Misses by the program's shape: (misses, required pairs of that shape).
    pub misses_by_shape: BTreeMap<String, (u64, u64)>,
    pub seconds: f64,
}

/// Which instruction a race-check access was: its thread by (CTA, thread in CTA), its
/// instruction by the PTX line of its site.
struct Resolver {
    /// (cta, tid) → thread index.
    threads: BTreeMap<(u32, u32), usize>,
    /// Site → PTX line.
    lines: Vec<u32>,
}

impl Resolver {
    fn new(t: &LitmusTest, low: &Lowered) -> Option<Resolver> {
        let mut dev = Device::new();
        let id = dev.load_module(&low.module).ok()?;
        let lines = dev.program(id)?.sites.iter().map(|s| s.ptx_line).collect();
        let threads = place(t)
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.cta, 32 * s.warp + s.lane), i))
            .collect();
        Some(Resolver { threads, lines })
    }

    fn instr(&self, low: &Lowered, cta: u32, tid: u32, site: u32) -> Option<InstrRef> {
        let t = *self.threads.get(&(cta, tid))?;
        let line = *self.lines.get(site as usize)?;
        let k = low.instr_lines[t]
            .iter()
            .position(|&(a, b)| (a..=b).contains(&line))?;
        Some((t, k))
    }
}

/// The location an instruction accesses and whether it can write (a store or an atomic).
fn access(t: &LitmusTest, r: InstrRef) -> Option<(&str, bool)> {
    use crate::ast::Instr;
    match &t.threads.get(r.0)?.instrs.get(r.1)?.node {
        Instr::Load { loc, .. } => Some((loc, false)),
        Instr::Store { loc, .. } | Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => {
            Some((loc, true))
        }
        _ => None,
    }
}

/// A required pair `(a, b)` the race check reports as a race of `b` with another write
/// of `a`'s thread to the same location (or the other way round): shadow memory keeps
/// one write per location, so a read next to its own thread's write (before or after
/// it) is checked against other threads' writes through that write (FastTrack reports a
/// race per write, not every racing pair).
fn subsumed(
    t: &LitmusTest,
    (a, b): (InstrRef, InstrRef),
    reported: &BTreeMap<(InstrRef, InstrRef), BTreeSet<RaceClass>>,
) -> bool {
    let via = |x: InstrRef, other: InstrRef| {
        let Some((loc, _)) = access(t, x) else {
            return false;
        };
        (0..t.threads[x.0].instrs.len()).any(|k| {
            let w = (x.0, k);
            k != x.1
                && access(t, w).is_some_and(|(l, writes)| l == loc && writes)
                && reported.contains_key(&(w.min(other), w.max(other)))
        })
    };
    via(a, b) || via(b, a)
}

fn name(t: &LitmusTest, r: InstrRef) -> String {
    format!("P{}:{}", t.threads[r.0].id, r.1)
}

/// Judges program `t` (number `index` of `cfg.seed`).
pub fn judge(cfg: &Config, index: u64, t: &LitmusTest) -> TestResult {
    let mut res = TestResult {
        index,
        shape: shape(t),
        ..TestResult::default()
    };
    let facts = match axiom::outcomes(
        t,
        &Options {
            races: true,
            ..Options::default()
        },
    ) {
        Ok(o) => o.races,
        Err(e) => {
            res.skipped = Some(format!("checker: {e}"));
            return res;
        }
    };
    let low = match crate::lower::lower_with(
        &format!("gen-{}-{index}", cfg.seed),
        t,
        crate::soundness::layout_of(index),
    ) {
        Ok(l) => l,
        Err(e) => {
            res.skipped = Some(format!("lowering: {e}"));
            return res;
        }
    };
    let Some(resolve) = Resolver::new(t, &low) else {
        res.skipped = Some("the lowered module does not load".into());
        return res;
    };
    // Reported pairs and their classes, over every run of every model.
    let mut reported: BTreeMap<(InstrRef, InstrRef), BTreeSet<RaceClass>> = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (mi, &model) in cfg.models.iter().enumerate() {
        let rc = RunConfig {
            runs: cfg.runs,
            p_w: cfg.p_w.clone(),
            seed: program_seed(cfg.seed, index) ^ (mi as u64) << 56,
            workers: 1,
            ..RunConfig::default()
        };
        for i in 0..cfg.runs {
            let (_, hooks) = execute_with(t, &low, &rc, i, |ep, dev, id| {
                let mut bc = BufferConfig::new(model, ep.p_w, ep.seed);
                bc.policy = rc.policy;
                RaceCheck::for_module(WriteBuffers::new(bc), dev, id)
            });
            res.executions += 1;
            let Some(mut hooks) = hooks else { continue };
            for (key, race) in hooks.take_races().iter() {
                let a = resolve.instr(&low, race.first.cta, race.first.tid, race.first.site);
                let b = resolve.instr(&low, race.second.cta, race.second.tid, race.second.site);
                match (a, b) {
                    (Some(a), Some(b)) => {
                        reported
                            .entry((a.min(b), a.max(b)))
                            .or_default()
                            .insert(key.class);
                    }
                    _ => unresolved.push(format!(
                        "{} between sites {} and {}",
                        key.class, race.first.site, race.second.site
                    )),
                }
            }
        }
    }
    let program = print(t);
    let sh = res.shape.clone();
    let finding =
        |pair: (InstrRef, InstrRef), f: PairFacts, classes: &BTreeSet<RaceClass>| Finding {
            index,
            shape: sh.clone(),
            pair: (name(t, pair.0), name(t, pair.1)),
            facts: f,
            classes: classes.iter().map(|c| c.name().to_string()).collect(),
            program: program.clone(),
        };
    let none = BTreeSet::new();
    for (&pair, &f) in &facts {
        res.pairs += 1;
        res.unordered += f.unordered as u64;
        let got = reported.get(&pair);
        if f.must_report {
            res.must += 1;
            if !f.morally_strong {
                res.data_races += 1;
            }
            if got.is_some() {
                res.must_found += 1;
                if !f.morally_strong {
                    res.data_races_found += 1;
                }
            } else if subsumed(t, pair, &reported) {
                res.subsumed += 1;
            } else {
                res.misses.push(finding(pair, f, &none));
            }
        }
    }
    for (pair, classes) in &reported {
        res.reported += 1;
        let f = facts.get(pair).copied().unwrap_or_default();
        if !f.unordered {
            res.false_alarms.push(finding(*pair, f, classes));
            continue;
        }
        let wrong = classes
            .iter()
            .any(|c| c.is_data_race() == f.morally_strong && *c != RaceClass::LockAcquire);
        if wrong {
            res.wrong_class.push(finding(*pair, f, classes));
        }
        if !f.must_report {
            for c in classes {
                *res.extra.entry(c.name().to_string()).or_default() += 1;
            }
        }
    }
    if !unresolved.is_empty() {
        res.skipped = Some(format!("races not mapped to instructions: {unresolved:?}"));
    }
    res
}

/// Judges programs `0..cfg.count` of `cfg.seed`; `progress(done)` after each.
pub fn run(cfg: &Config, progress: impl Fn(u64) + Sync) -> Report {
    let t0 = std::time::Instant::now();
    let next = std::sync::atomic::AtomicU64::new(0);
    let done = std::sync::atomic::AtomicU64::new(0);
    let workers = cfg.workers.max(1);
    let mut results: Vec<TestResult> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= cfg.count {
                            break;
                        }
                        mine.push(judge(cfg, i, &generate(cfg.seed, i)));
                        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        progress(d);
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|r| r.index);
    let mut rep = Report::default();
    for r in results {
        rep.tests += 1;
        if let Some(s) = r.skipped {
            rep.skipped.push((r.index, s));
        }
        rep.pairs += r.pairs;
        rep.unordered += r.unordered;
        rep.must += r.must;
        rep.must_found += r.must_found;
        rep.data_races += r.data_races;
        rep.data_races_found += r.data_races_found;
        rep.reported += r.reported;
        rep.executions += r.executions;
        let e = rep.misses_by_shape.entry(r.shape).or_default();
        e.0 += r.misses.len() as u64;
        e.1 += r.must;
        rep.false_alarms.extend(r.false_alarms);
        rep.wrong_class.extend(r.wrong_class);
        rep.misses.extend(r.misses);
        rep.subsumed += r.subsumed;
        for (c, n) in r.extra {
            *rep.extra.entry(c).or_default() += n;
        }
    }
    rep.misses_by_shape.retain(|_, v| v.0 > 0);
    rep.seconds = t0.elapsed().as_secs_f64();
    rep
}

/// The report as text: totals, then up to `limit` findings of each kind.
pub fn render(rep: &Report, limit: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "race check vs axiomatic checker: {} programs, {} executions, {:.1} s",
        rep.tests, rep.executions, rep.seconds
    );
    let _ = writeln!(
        s,
        "  conflicting pairs {}, unordered in some execution {}, reported {}",
        rep.pairs, rep.unordered, rep.reported
    );
    let _ = writeln!(
        s,
        "  required reports found: {}/{} ({}); data races {}/{} ({})",
        rep.must_found,
        rep.must,
        pct(rep.must_found, rep.must),
        rep.data_races_found,
        rep.data_races,
        pct(rep.data_races_found, rep.data_races)
    );
    let _ = writeln!(
        s,
        "  false alarms {}, wrong class {}, misses {} (and {} reported through another write of their thread), skipped {}",
        rep.false_alarms.len(),
        rep.wrong_class.len(),
        rep.misses.len(),
        rep.subsumed,
        rep.skipped.len()
    );
    if !rep.extra.is_empty() {
        let _ = writeln!(
            s,
            "  reported beyond the required (unordered pairs): {:?}",
            rep.extra
        );
    }
    for (title, list) in [
        ("false alarm", &rep.false_alarms),
        ("wrong class", &rep.wrong_class),
        ("miss", &rep.misses),
    ] {
        for f in list.iter().take(limit) {
            let _ = writeln!(
                s,
                "\n{title}: program {} ({}), {} / {}, {:?}, reported as {:?}\n{}",
                f.index, f.shape, f.pair.0, f.pair.1, f.facts, f.classes, f.program
            );
        }
    }
    if !rep.misses_by_shape.is_empty() {
        let _ = writeln!(s, "\nmisses by shape (misses / required):");
        for (sh, (m, n)) in &rep.misses_by_shape {
            let _ = writeln!(s, "  {sh}: {m}/{n}");
        }
    }
    for (i, why) in rep.skipped.iter().take(limit) {
        let _ = writeln!(s, "skipped program {i}: {why}");
    }
    s
}
