//! `audit`: which existing fences a passing variant needs.
//!
//! Fences are judged per *source statement*: the PTX copies of one statement (an unrolled
//! loop, a helper inlined at several call sites) are removed together, as a patch removing
//! the line would. Verdicts, in the order they are decided:
//!
//! 1. **necessary** — removing the copies fails (with the failing seed);
//! 2. **not exercised by this campaign** — removing it passes, but some copy never ran in
//!    the observed executions: nothing is known about it, so the line is not redundant;
//! 3. **cannot judge under this model** — removing it passed, but the model cannot show
//!    what the fence orders ([`crate::observe`] gives the facts, from the observed
//!    executions of the unchanged variant):
//!    (a) *store buffering* (`bugaroo`, `scoped`) judges a fence only by the stores it
//!    drains; loads are never delayed. So a fence that is *acquire-side* — in its thread,
//!    since the previous fence of at least its scope, it follows a load or atomic of a
//!    location another thread writes in the same launch (a poll, a lock's CAS) — or that
//!    *never drained anything* (in every observed execution its thread's buffers, and for a
//!    device-scope fence under `scoped` its CTA's overlay, were empty whenever it ran) is
//!    "cannot judge under this model (loads are never delayed): use --model weak";
//!    (b) *no model* produces load buffering (a load reading a store that executes after
//!    it; `weak` reads only executed stores), so a fence that orders such a load before a
//!    store of a location another thread reads (after it, before the thread's next fence)
//!    is "cannot judge" under every model — e.g. a queue consumer's fence between reading
//!    a slot and handing it back.
//!    Such a fence is never "likely redundant" and never goes into the removal patch
//!    (issue 11);
//! 4. **likely redundant** — 0 failures in N runs without it (failure probability < 3/N at
//!    95%, the rule of three). These are then removed *together*, greedily (device scope
//!    and most copies first): a fence whose removal fails once the others are gone is kept
//!    ("redundant alone, but not together with line L"), and the removed ones are reported
//!    "likely redundant, given that line L stays".
//!
//! The removal patch is verified: the patched source is compiled and fuzzed on fresh seeds
//! under every model of the run.

use crate::edit::{FenceScope, InstRef, PtxEdit};
use crate::observe::FenceObserver;
use crate::ptxinfo::InstKind;
use crate::source::{self, Patch, Placer, SourceSite};
use crate::{
    model_delays_loads, model_sees_scopes, Checker, Failing, MinimizeError, Options, Site, Sites,
    Verification,
};
use fencehound_fuzzer::{execute_observed, prepare, Campaign, ExecSpec, Filters, Prepared};
use fencehound_handlers::{DrainReason, Model, TraceEvent};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum FenceVerdict {
    Necessary {
        failing: Failing,
    },
    LikelyRedundant {
        runs: u64,
        failure_probability_below: f64,
        /// Other fences (file:line) whose removal together with this one fails: they
        /// must stay for this one to be redundant.
        #[serde(default)]
        given_that_stay: Vec<String>,
    },
    /// Redundant on its own, but removing it as well as the fences already removed fails.
    NeededWithOthersRemoved {
        failing: Failing,
        with: Vec<String>,
    },
    /// Some copy never ran in the observed executions.
    NotExercised {
        copies: usize,
        unreached: usize,
    },
    /// The model cannot observe what the fence orders.
    CannotJudge {
        reason: String,
    },
}

/// One PTX copy of a source fence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FenceCopy {
    pub fence: Site,
    /// Executions of this copy (thread-level) over the observed runs.
    pub reached: u64,
    /// Buffered entries it made visible over the observed runs.
    pub drained: u64,
    /// A load of memory other threads write that this copy orders (its acquire side).
    pub acquire_after: Option<Site>,
    /// A store of memory other threads read that this copy orders after that load.
    #[serde(default)]
    pub store_before: Option<Site>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FenceAudit {
    /// The first PTX copy.
    pub fence: Site,
    pub scope: FenceScope,
    pub verdict: FenceVerdict,
    /// For necessary device-scope fences: does block scope suffice (under the run's model
    /// when it sees scopes, else `scoped`)?
    pub block_scope: Option<FenceVerdict>,
    /// The model block scope was judged under.
    #[serde(default)]
    pub block_scope_model: Option<String>,
    #[serde(default)]
    pub copies: Vec<FenceCopy>,
    /// The statement in the user's files (file:line and text).
    #[serde(default)]
    pub source: Option<SourceSite>,
}

impl FenceAudit {
    /// `file:line` of the fence in the user's code (or the innermost location).
    pub fn line(&self) -> String {
        match &self.source {
            Some(s) => format!("{}:{}", s.file, s.line),
            None => self.fence.location(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    pub campaign: String,
    pub variant: String,
    pub model: String,
    #[serde(default)]
    pub models: Vec<String>,
    /// The variant as is fails (audit results are then less meaningful).
    pub base_failure: Option<Failing>,
    /// Executions observed for coverage, drains and communication.
    #[serde(default)]
    pub observed_runs: u64,
    pub fences: Vec<FenceAudit>,
    /// The patch removing the fences found redundant together.
    #[serde(default)]
    pub patch: Option<Patch>,
    #[serde(default)]
    pub verification: Option<Verification>,
    /// Unified diff removing them (= `patch.diff`).
    pub diff: String,
    pub executions: u64,
    /// Executions answered from the cache instead of run.
    #[serde(default)]
    pub cached: u64,
    #[serde(default)]
    pub compiles: u32,
    pub wall_seconds: f64,
}

/// Per fence site: entries drained by it (from the write buffers' trace).
type Drains = HashMap<u32, u64>;

/// What the observing workers collect: the observer, the drains, each execution's
/// (p, seed, verdict) by its order.
type Observed = (
    FenceObserver,
    Drains,
    BTreeMap<usize, (f64, u64, fencehound_fuzzer::Verdict)>,
);

/// Runs the unchanged variant on the audit's seeds with the observer and the trace on:
/// coverage, drains, communication, and the first failure. Results go into the cache.
fn observe(
    ck: &mut Checker,
    base: &Arc<Prepared>,
    model: Model,
    n: u32,
) -> (FenceObserver, Drains, Option<Failing>, u64) {
    let mut work: Vec<(usize, f64, u64)> = Vec::new();
    for &p in &ck.opts.ps.clone() {
        for i in 0..n as u64 {
            work.push((work.len(), p, ck.seed(i)));
        }
    }
    let jobs = ck.opts.jobs.max(1).min(work.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let merged: Mutex<Observed> = Mutex::new(Default::default());
    let sched = ck.opts.scheduler;
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let mut obs = FenceObserver::default();
                let mut drains: Drains = HashMap::new();
                let mut verdicts = BTreeMap::new();
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(ord, p, seed)) = work.get(k) else {
                        break;
                    };
                    let spec = ExecSpec {
                        id: 0,
                        model,
                        p,
                        seed,
                        scheduler: sched,
                        trace: true,
                        filters: Filters::default(),
                        race: false,
                    };
                    let r = execute_observed(base, &spec, None, &mut obs);
                    obs.finish_launch();
                    for ev in &r.trace {
                        if let TraceEvent::Drained {
                            reason: DrainReason::Fence,
                            at: Some(site),
                            ..
                        } = ev
                        {
                            *drains.entry(*site).or_default() += 1;
                        }
                    }
                    verdicts.insert(ord, (p, seed, r.verdict));
                }
                if let Ok(mut g) = merged.lock() {
                    g.0.merge(obs);
                    for (k, v) in drains {
                        *g.1.entry(k).or_default() += v;
                    }
                    g.2.extend(verdicts);
                }
            });
        }
    });
    let (obs, drains, verdicts) = merged.into_inner().unwrap_or_default();
    let runs = verdicts.len() as u64;
    ck.executions += runs;
    let mut first = None;
    for (_, (p, seed, v)) in verdicts {
        if let fencehound_fuzzer::Verdict::OracleError { message } = &v {
            ck.note_oracle_error(message.clone());
            continue;
        }
        let fail = v.is_failure().then(|| v.summary());
        ck.remember(base, model, p, seed, fail.clone());
        if first.is_none() {
            if let Some(verdict) = fail {
                first = Some(Failing {
                    seed,
                    p,
                    model: model.name().into(),
                    verdict,
                });
            }
        }
    }
    (obs, drains, first, runs)
}

fn site_of(st: &Sites, id: u32) -> Option<Site> {
    let i = st.infos.get(id as usize)?;
    Some(st.site(&InstRef {
        function: i.function.clone(),
        ptx_line: i.ptx_line,
    }))
}

/// What running the variant with some PTX edits applied showed, under one model on the
/// audit's seeds.
#[derive(Debug)]
enum Trial {
    /// The edits do not apply to the module: nothing ran.
    Inapplicable,
    Passes,
    Fails(Failing),
}

impl Trial {
    /// The failure, if it failed.
    fn failure(self) -> Option<Failing> {
        match self {
            Trial::Fails(f) => Some(f),
            Trial::Passes | Trial::Inapplicable => None,
        }
    }
}

/// The check every step makes: the variant with `edits` applied, run on seeds `0..n` of
/// every `p_w` under `model` until the first failure (the known failing seeds first,
/// answers from the cache where known).
fn try_edits(
    ck: &mut Checker,
    base: &Prepared,
    edits: &[PtxEdit],
    model: Model,
    n: u32,
) -> Result<Trial, MinimizeError> {
    let Some(m) = crate::edit::apply_all(&base.module, edits) else {
        return Ok(Trial::Inapplicable);
    };
    let p = ck.prep(&m)?;
    Ok(
        match ck.first_failure(&p, &Filters::default(), model, 0, n) {
            Some(f) => Trial::Fails(f),
            None => Trial::Passes,
        },
    )
}

/// One source fence: its PTX copies.
struct Group {
    copies: Vec<InstRef>,
    source: Option<SourceSite>,
    cta: bool,
}

/// Audits the existing fences of a variant.
pub fn audit(
    campaign: Arc<Campaign>,
    variant: &str,
    opts: Options,
) -> Result<AuditReport, MinimizeError> {
    let start = Instant::now();
    let base = Arc::new(prepare(campaign.clone(), variant)?);
    let mut ck = Checker::new(campaign.clone(), variant, opts.clone());
    ck.add(base.clone());
    let model = opts.model;
    let n = opts.audit_runs;
    let runs_total = n as u64 * opts.ps.len() as u64;
    let st = Sites::new(&base.module)?;
    let mut placer = Placer::new(&campaign, &base.module, &st.insts);
    let mut compiler = source::Compiler::new(campaign.clone(), variant);
    let (obs, drains, base_failure, observed_runs) = observe(&mut ck, &base, model, n);
    // Group the fences by their statement in the user's code (or their innermost line).
    let mut groups: Vec<Group> = Vec::new();
    let mut keys: Vec<Option<(String, u32)>> = Vec::new();
    for i in &st.insts {
        let InstKind::Fence {
            cta,
            acquire_only: false,
        } = i.kind
        else {
            continue;
        };
        let key = placer
            .user_frames(i)
            .first()
            .cloned()
            .or_else(|| i.stack.first().map(|f| (f.file.clone(), f.line)));
        match keys.iter().position(|k| key.is_some() && *k == key) {
            Some(g) => groups[g].copies.push(i.at.clone()),
            None => {
                keys.push(key);
                groups.push(Group {
                    copies: vec![i.at.clone()],
                    source: None,
                    cta,
                });
            }
        }
    }
    for g in &mut groups {
        let e = PtxEdit::RemoveFence {
            at: g.copies[0].clone(),
        };
        g.source = placer.candidates(&e).first().map(|c| c.site.clone());
        if g.source.is_none() {
            // No removable statement: still name the line.
            if let Some(i) = st.inst(&g.copies[0]) {
                if let Some((file, line)) = placer.user_frames(i).first() {
                    g.source = Some(SourceSite {
                        file: placer.display(&source::canonical(std::path::Path::new(file))),
                        line: *line,
                        text: st.site(&g.copies[0]).statement.unwrap_or_default(),
                        action: "fence at".into(),
                    });
                }
            }
        }
    }
    let removal = |g: &Group| -> Vec<PtxEdit> {
        g.copies
            .iter()
            .map(|c| PtxEdit::RemoveFence { at: c.clone() })
            .collect()
    };
    let mut audits: Vec<FenceAudit> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let copies: Vec<FenceCopy> = g
            .copies
            .iter()
            .map(|c| {
                let id = st.id(c).unwrap_or(u32::MAX);
                FenceCopy {
                    fence: st.site(c),
                    reached: obs.reached.get(&id).copied().unwrap_or(0),
                    drained: drains.get(&id).copied().unwrap_or(0),
                    acquire_after: obs.acquire_side(id).and_then(|l| site_of(&st, l)),
                    store_before: obs.later_store(id).and_then(|l| site_of(&st, l)),
                }
            })
            .collect();
        let failing = match try_edits(&mut ck, &base, &removal(g), model, n)? {
            // Edits that do not apply leave the variant unchanged, which is then run.
            Trial::Inapplicable => try_edits(&mut ck, &base, &[], model, n)?.failure(),
            t => t.failure(),
        };
        let verdict = match failing {
            Some(f) => FenceVerdict::Necessary { failing: f },
            None => {
                let unreached = copies.iter().filter(|c| c.reached == 0).count();
                let acquire = copies.iter().find_map(|c| c.acquire_after.clone());
                if unreached > 0 {
                    FenceVerdict::NotExercised {
                        copies: copies.len(),
                        unreached,
                    }
                } else if !model_delays_loads(model) && acquire.is_some() {
                    let l = acquire.unwrap_or_else(|| copies[0].fence.clone());
                    FenceVerdict::CannotJudge {
                        reason: format!(
                            "cannot judge under this model (loads are never delayed): use --model weak — it follows a load of memory other threads write ({} `{}`), an acquire-side ordering {} cannot break",
                            l.location(),
                            l.statement.clone().unwrap_or_else(|| l.ptx.clone()),
                            model.name()
                        ),
                    }
                } else if let Some((l, s)) = copies
                    .iter()
                    .find_map(|c| Some((c.acquire_after.clone()?, c.store_before.clone()?)))
                {
                    // No model here produces load buffering: a load never reads a store
                    // that executes after it (the `weak` model's reads only see executed
                    // stores; store buffering never delays loads).
                    FenceVerdict::CannotJudge {
                        reason: format!(
                            "cannot judge under this model (it never lets a load read a later store): it orders a load of memory other threads write ({} `{}`) before a store other threads read ({} `{}`) — load buffering, which {} cannot produce",
                            l.location(),
                            l.statement.clone().unwrap_or_else(|| l.ptx.clone()),
                            s.location(),
                            s.statement.clone().unwrap_or_else(|| s.ptx.clone()),
                            model.name()
                        ),
                    }
                } else if !model_delays_loads(model) && copies.iter().all(|c| c.drained == 0) {
                    FenceVerdict::CannotJudge {
                        reason: format!(
                            "cannot judge under this model (loads are never delayed): use --model weak — it never had a buffered store to drain in {observed_runs} runs, so removing it changes nothing {} can show",
                            model.name()
                        ),
                    }
                } else {
                    candidates.push(gi);
                    FenceVerdict::LikelyRedundant {
                        runs: runs_total,
                        failure_probability_below: 3.0 / runs_total.max(1) as f64,
                        given_that_stay: Vec::new(),
                    }
                }
            }
        };
        let scope = if g.cta {
            FenceScope::Block
        } else {
            FenceScope::Device
        };
        // Block scope is judged under the run's model when it sees scopes, else `scoped`.
        let scope_model = if model_sees_scopes(model) {
            model
        } else {
            Model::Scoped
        };
        let block_scope =
            if scope == FenceScope::Device && matches!(verdict, FenceVerdict::Necessary { .. }) {
                let narrow: Vec<PtxEdit> = g
                    .copies
                    .iter()
                    .map(|c| PtxEdit::NarrowFence { at: c.clone() })
                    .collect();
                match try_edits(&mut ck, &base, &narrow, scope_model, n)? {
                    Trial::Inapplicable => None,
                    Trial::Fails(f) => Some(FenceVerdict::Necessary { failing: f }),
                    Trial::Passes => Some(FenceVerdict::LikelyRedundant {
                        runs: runs_total,
                        failure_probability_below: 3.0 / runs_total.max(1) as f64,
                        given_that_stay: Vec::new(),
                    }),
                }
            } else {
                None
            };
        audits.push(FenceAudit {
            fence: copies
                .first()
                .map(|c| c.fence.clone())
                .unwrap_or_else(|| st.site(&g.copies[0])),
            scope,
            verdict,
            block_scope_model: block_scope.as_ref().map(|_| scope_model.name().to_string()),
            block_scope,
            copies,
            source: g.source.clone(),
        });
    }
    // `audits[k]` is the audit of `groups[k]`.
    // Joint removal: the costliest first (device scope, then most copies).
    candidates.sort_by_key(|gi| (groups[*gi].cta, std::cmp::Reverse(groups[*gi].copies.len())));
    let mut removed: Vec<usize> = Vec::new();
    let mut conflicts: Vec<(usize, usize)> = Vec::new(); // (kept, removed)
    for &gi in &candidates {
        if removed.is_empty() {
            removed.push(gi);
            continue;
        }
        let mut edits: Vec<PtxEdit> = removed.iter().flat_map(|r| removal(&groups[*r])).collect();
        edits.extend(removal(&groups[gi]));
        match try_edits(&mut ck, &base, &edits, model, n)? {
            Trial::Inapplicable => continue,
            Trial::Passes => removed.push(gi),
            Trial::Fails(f) => {
                // Which of the removed ones it conflicts with.
                let mut with: Vec<usize> = Vec::new();
                if removed.len() == 1 {
                    with.push(removed[0]);
                } else {
                    for &r in &removed {
                        let mut e = removal(&groups[r]);
                        e.extend(removal(&groups[gi]));
                        if let Trial::Fails(_) = try_edits(&mut ck, &base, &e, model, n)? {
                            with.push(r);
                        }
                    }
                    if with.is_empty() {
                        with = removed.clone();
                    }
                }
                for r in &with {
                    conflicts.push((gi, *r));
                }
                let with: Vec<String> = with.iter().map(|r| audits[*r].line()).collect();
                audits[gi].verdict = FenceVerdict::NeededWithOthersRemoved { failing: f, with };
            }
        }
    }
    for &r in &removed {
        let stay: Vec<String> = conflicts
            .iter()
            .filter(|(_, rr)| *rr == r)
            .map(|(kept, _)| audits[*kept].line())
            .collect();
        if let FenceVerdict::LikelyRedundant {
            given_that_stay, ..
        } = &mut audits[r].verdict
        {
            *given_that_stay = stay;
        }
    }
    // The removal patch, verified.
    let mut patch = None;
    let mut verification = None;
    if !removed.is_empty() {
        let edits: Vec<PtxEdit> = removed.iter().flat_map(|r| removal(&groups[*r])).collect();
        let placement = placer.place(&edits, &mut compiler);
        let models = opts.run_models();
        if placement.per_edit.iter().any(|p| p.is_none()) || placement.edits.is_empty() {
            verification = Some(Verification {
                error: Some(
                    "some fence could not be removed in your source files (a statement that is not only the fence, or library code)".into(),
                ),
                models: models.iter().map(|m| m.name().into()).collect(),
                ..Default::default()
            });
        } else {
            match source::build_patch(&campaign, &placement.edits) {
                Ok(p) => {
                    let v = ck.verify(&mut compiler, &p, &models, |c| placer.matches(&edits, c));
                    verification = Some(v);
                    patch = Some(p);
                }
                Err(e) => {
                    verification = Some(Verification {
                        error: Some(e),
                        ..Default::default()
                    })
                }
            }
        }
    }
    ck.save_cache();
    ck.check_oracle()?;
    Ok(AuditReport {
        campaign: campaign.name.clone(),
        variant: variant.into(),
        model: model.name().into(),
        models: opts.run_models().iter().map(|m| m.name().into()).collect(),
        base_failure,
        observed_runs,
        fences: audits,
        diff: patch.as_ref().map(|p| p.diff.clone()).unwrap_or_default(),
        patch,
        verification,
        executions: ck.executions,
        cached: ck.cached,
        compiles: compiler.compiles,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}
