//! `audit`: which existing fences a passing variant needs.
//!
//! `minimize` asks where fences must go; `audit` asks the reverse of a variant that passes:
//! which of the fences it has can go. The evidence is removal — take a fence out, fuzz,
//! see whether anything fails — but a removal that passes proves something only when the
//! model could have made it fail, and only about code the executions ran. So every
//! verdict weighs the removal's outcome against what the unchanged variant's executions
//! showed about the fence (coverage, drains, what it orders), and "likely redundant" is the
//! verdict of last resort, never a default.
//!
//! # Steps
//!
//! [`audit`] runs these in order, each a function of its own. Every check of a modified
//! variant goes through one helper, `try_edits`: apply PTX edits to the variant, run the
//! audit's seeds (`--runs` per `p_w`, the known failing seeds first) under one model until
//! the first failure. Results are cached by PTX hash, model, `p_w` and seed, so a re-run
//! with more runs resumes and repeated checks cost nothing.
//!
//! 0. **Observe** (`observe`). The unchanged variant runs on the audit's seeds with the
//!    [`FenceObserver`] and the write buffers' trace on: per PTX fence copy, how often it
//!    ran, how many buffered entries it drained, the communicating load it follows (its
//!    acquire side) and the communicating store after it ([`crate::observe`] defines
//!    them); and the variant's own first failure, if any (the report's `base_failure`: the
//!    verdicts then mean less). These executions also fill the cache.
//! 1. **Group the fences** (`group_fences`). Fences are judged per *source statement*:
//!    the PTX copies of one statement (an unrolled loop, a helper inlined at several call
//!    sites) form a group, removed together, as a patch removing the line would. The key
//!    is the innermost frame in the user's files, else the innermost line; a fence with no
//!    line is a group of its own. Each group is named by the statement a patch would
//!    remove, else by its user line (`statement_of`). The fences are `membar` and
//!    `fence` instructions, except `fence.acquire` and proxy fences.
//! 2. **Judge a group** (`judge_group`). Every copy of the group removed, the seeds run
//!    under the audit's model. The verdict is then a pure function, `judge`, of that
//!    run's first failure and the copies' observations (`observed_copies`): see
//!    *Verdicts*. It runs nothing itself, so its unit tests cover every case it tells
//!    apart without executing a kernel.
//! 3. **Judge block scope** (`judge_block_scope`). For a necessary device-scope fence:
//!    every copy narrowed to `.cta`, the seeds run under a model that tells CTA scope from
//!    device scope — the audit's model when it does (`scoped`, `weak`), else `scoped`
//!    (`block_scope_model`). Passing means `__threadfence_block()` suffices (with no
//!    `p_w` strictly between 0 and 1: cannot judge, as in *Verdicts* 3 (d)). Steps 2 and
//!    3 run group by group, in PTX order; `audits[k]` is always the audit of `groups[k]`.
//! 4. **Remove jointly** (`remove_jointly`). Two fences can each be redundant given the
//!    other (two fences between the same store and its flag: either one orders it). So
//!    the groups found likely redundant in step 2 are removed *together*, greedily, the
//!    costliest first (device scope, then most copies): a group whose removal fails on top
//!    of those already removed is kept — "redundant alone, but not together with line L"
//!    ([`FenceVerdict::NeededWithOthersRemoved`]; `conflicting` finds L by trying the
//!    pairs) — and the removed ones are reported "likely redundant, given that line L
//!    stays".
//! 5. **Verify the patch** (`verify_removal`). The removed groups become a statement-exact
//!    patch of the user's files ([`crate::source`]), compiled and fuzzed on fresh seeds
//!    under every model of the run, like `minimize`'s fixes. A fence that is not a
//!    statement of its own (or lies in library code) gets no patch, and the verification
//!    says why.
//!
//! # Verdicts
//!
//! `judge` decides, in this order (the first that applies wins):
//!
//! 1. **necessary** — removing the copies fails (with the failing seed), whatever else was
//!    observed;
//! 2. **not exercised by this campaign** — removing it passes, but some copy never ran in
//!    the observed executions: nothing is known about that copy, so the line is not
//!    redundant;
//! 3. **cannot judge under this model** — removing it passed, but the model could not have
//!    shown what the fence orders (`cannot_judge`, in this order):
//!    (a) *store buffering* (`sc`, `bugaroo`, `scoped`) never delays loads, so a fence
//!    that is *acquire-side* — in its thread, since the previous fence of at least its
//!    scope, it follows a load or atomic of a location another thread writes in the same
//!    launch (a poll, a lock's CAS) — is "cannot judge under this model (loads are never
//!    delayed): use --model weak";
//!    (b) *no model* produces load buffering (a load reading a store that executes after
//!    it; `weak` reads only executed stores), so a fence that orders such a load before a
//!    store of a location another thread reads (after it, before the thread's next fence;
//!    both in the same copy) is "cannot judge" under every model — e.g. a queue
//!    consumer's fence between reading a slot and handing it back;
//!    (c) store buffering judges a fence only by the stores it drains, so one that *never
//!    drained anything* (in every observed execution its thread's buffers, and for a
//!    device-scope fence under `scoped` its CTA's overlay, were empty whenever it ran) is
//!    "cannot judge … use --model weak" too;
//!    (d) with no `p_w` strictly between 0 and 1, a model delays every access it can
//!    (p_w = 1: every store buffered, every load that may be stale stale) or none, never
//!    one access and not the next of its thread, so it cannot produce the outcomes most
//!    fence bugs need (a seqlock reader's torn snapshot: under `weak` one load fresh and
//!    the next stale; under store buffering the record's stores seen before the odd
//!    counter): "cannot judge at these p_w" ([`Model::blind_at`]), under every model but
//!    `sc`, which has no `p_w`.
//!    Such a fence is never "likely redundant" and never goes into the removal patch
//!    (issue 11);
//! 4. **likely redundant** — 0 failures in N runs without it (failure probability < 3/N at
//!    95%, the rule of three). Step 4 may still keep it, as "needed with others removed".
//!
//! The order matters: an unreached copy comes before every blind spot (nothing is known
//! about it under any model), and under store buffering a fence that is acquire-side *and*
//! orders a load before a store gets the acquire-side reason, which points to
//! `--model weak`; under `weak` the same fence gets the load-buffering reason.

use crate::edit::{FenceScope, InstRef, PtxEdit};
use crate::observe::FenceObserver;
use crate::ptxinfo::InstKind;
use crate::source::{self, Patch, Placer, SourceSite};
use crate::{
    model_delays_loads, model_sees_scopes, Checker, Failing, MinimizeError, Options, Site, Sites,
    Verification,
};
use fencehound_fuzzer::{execute_observed, prepare, Campaign, ExecSpec, Filters, Prepared};
use fencehound_handlers::model::mixes;
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
                    // A program's drains come counted, from its event log.
                    for (site, n) in &r.fence_drains {
                        *drains.entry(*site).or_default() += n;
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

/// The verdict on a group of fence copies, from what removing them showed (`failing`: the
/// first failure without them, if any) and what the observed executions of the unchanged
/// variant showed about each copy. Pure: it runs nothing, so every case is unit-tested.
///
/// In order: a failure makes the fence necessary, whatever else is known; executions that
/// were not seen whole (a program's event log cut short: `unobserved` says why) make any
/// other verdict "cannot judge", since coverage and communication are then unknown; a copy
/// that never ran makes it not exercised (nothing is known about that copy); a passing
/// removal the model could not have made fail is "cannot judge" ([`cannot_judge`]);
/// anything else is likely redundant.
pub(crate) fn judge_observed(
    failing: Option<Failing>,
    copies: &[FenceCopy],
    Judged { model, mixed }: Judged,
    observed_runs: u64,
    runs_total: u64,
    unobserved: Unobserved<'_>,
) -> FenceVerdict {
    if let Some(failing) = failing {
        return FenceVerdict::Necessary { failing };
    }
    if let Some(why) = unobserved {
        return FenceVerdict::CannotJudge {
            reason: format!(
                "the executions were not observed whole ({why}), so which fences ran and what they order is unknown"
            ),
        };
    }
    let unreached = copies.iter().filter(|c| c.reached == 0).count();
    if unreached > 0 {
        return FenceVerdict::NotExercised {
            copies: copies.len(),
            unreached,
        };
    }
    match cannot_judge(copies, model, mixed, observed_runs) {
        Some(reason) => FenceVerdict::CannotJudge { reason },
        None => likely_redundant(runs_total),
    }
}

/// [`judge_observed`] of executions that were seen whole.
#[cfg(test)]
pub(crate) fn judge(
    failing: Option<Failing>,
    copies: &[FenceCopy],
    model: Model,
    observed_runs: u64,
    runs_total: u64,
) -> FenceVerdict {
    let mixed = true;
    judge_observed(
        failing,
        copies,
        Judged { model, mixed },
        observed_runs,
        runs_total,
        None,
    )
}

/// The model a verdict is judged under, and whether the run's `p_w` values let it delay
/// one access and not the next ([`mixes`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judged {
    pub model: Model,
    pub mixed: bool,
}

/// Why `model` cannot show what the copies' fence orders, so that a passing removal says
/// nothing — or None when it can. In order (the first that applies is the reason):
///
/// 1. the model never delays loads (`sc`, `bugaroo`, `scoped`) and some copy is
///    acquire-side: it follows a load of memory other threads write (the first such copy's
///    load is named);
/// 2. some copy orders such a load before a store other threads read (both in that one
///    copy): load buffering, which no model produces — the `weak` model's reads only see
///    stores that already executed, store buffering never delays loads;
/// 3. the model never delays loads and no copy ever drained a buffered store in
///    `observed_runs` runs: its removal changes nothing store buffering can show;
/// 4. the model uses `p_w` (every model but `sc`) and no `p_w` of the run lies strictly
///    between 0 and 1 (`mixed` false, [`Model::blind_at`]): its stores were all buffered or
///    none, its loads all stale where they could be or none, never a mix.
fn cannot_judge(
    copies: &[FenceCopy],
    model: Model,
    mixed: bool,
    observed_runs: u64,
) -> Option<String> {
    let delays_loads = model_delays_loads(model);
    if !delays_loads {
        if let Some(l) = copies.iter().find_map(|c| c.acquire_after.as_ref()) {
            return Some(format!(
                "cannot judge under this model (loads are never delayed): use --model weak — it follows a load of memory other threads write ({} `{}`), an acquire-side ordering {} cannot break",
                l.location(),
                text(l),
                model.name()
            ));
        }
    }
    if let Some((l, s)) = copies
        .iter()
        .find_map(|c| Some((c.acquire_after.as_ref()?, c.store_before.as_ref()?)))
    {
        return Some(format!(
            "cannot judge under this model (it never lets a load read a later store): it orders a load of memory other threads write ({} `{}`) before a store other threads read ({} `{}`) — load buffering, which {} cannot produce",
            l.location(),
            text(l),
            s.location(),
            text(s),
            model.name()
        ));
    }
    if !delays_loads && copies.iter().all(|c| c.drained == 0) {
        return Some(format!(
            "cannot judge under this model (loads are never delayed): use --model weak — it never had a buffered store to drain in {observed_runs} runs, so removing it changes nothing {} can show",
            model.name()
        ));
    }
    if model.uses_p() && !mixed {
        return Some(no_mix_reason(model));
    }
    None
}

/// The start of the reason [`cannot_judge`] gives when no `p_w` mixes fresh and stale
/// reads.
pub(crate) const NO_MIX: &str =
    "cannot judge at these p_w (use a p_w between 0 and 1 as well, e.g. --p 0.5,1)";

/// The "cannot judge" reason of a passing check under `model` when no `p_w` of the run
/// lies strictly between 0 and 1 ([`Model::blind_at`]).
fn no_mix_reason(model: Model) -> String {
    let why = if model.delays_loads() {
        "reads every load fresh, or every load stale that can be, never a mix of the two"
    } else {
        "buffers no store, or every store, never one store and not the next"
    };
    format!(
        "{NO_MIX}: {} at p_w = 0 or 1 {why}, which most fence bugs need",
        model.name()
    )
}

/// An instruction's CUDA statement, else its PTX.
fn text(s: &Site) -> &str {
    s.statement.as_deref().unwrap_or(&s.ptx)
}

/// No failure in `runs_total` runs: failure probability below 3/N at 95% (the rule of
/// three).
fn likely_redundant(runs_total: u64) -> FenceVerdict {
    FenceVerdict::LikelyRedundant {
        runs: runs_total,
        failure_probability_below: 3.0 / runs_total.max(1) as f64,
        given_that_stay: Vec::new(),
    }
}

/// One source fence: its PTX copies.
struct Group {
    copies: Vec<InstRef>,
    source: Option<SourceSite>,
    cta: bool,
}

impl Group {
    /// Removing every copy.
    fn removal(&self) -> Vec<PtxEdit> {
        self.copies
            .iter()
            .map(|c| PtxEdit::RemoveFence { at: c.clone() })
            .collect()
    }

    /// Narrowing every copy to block scope.
    fn narrowing(&self) -> Vec<PtxEdit> {
        self.copies
            .iter()
            .map(|c| PtxEdit::NarrowFence { at: c.clone() })
            .collect()
    }

    fn scope(&self) -> FenceScope {
        if self.cta {
            FenceScope::Block
        } else {
            FenceScope::Device
        }
    }
}

/// Removing every copy of the groups `which`, in that order.
fn removal_of(groups: &[Group], which: &[usize]) -> Vec<PtxEdit> {
    which.iter().flat_map(|g| groups[*g].removal()).collect()
}

/// The audit's model and batch sizes, which every step shares.
#[derive(Debug, Clone, Copy)]
struct Runs {
    model: Model,
    /// Seeds per `p_w` in each check.
    n: u32,
    /// Executions in each check (`n` × the number of `p_w`).
    total: u64,
    /// Executions of the unchanged variant observed.
    observed: u64,
    /// Some `p_w` of the run lies strictly between 0 and 1 ([`mixes`]).
    mixed: bool,
}

/// Why the observed executions were not seen whole, if they were not.
type Unobserved<'a> = Option<&'a str>;

/// Step 1: the fences of the module (not acquire-only ones) grouped by their statement in
/// the user's code — the innermost user frame, else the innermost line; a fence with no
/// line is a group of its own —, in PTX order, each named by its statement.
fn group_fences(st: &Sites, placer: &mut Placer) -> Vec<Group> {
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
        g.source = statement_of(g, st, placer);
    }
    groups
}

/// The statement a patch would remove to remove the group's first copy; when there is
/// none (the statement is not only the fence, or the fence is in library code), the
/// user's line it comes from.
fn statement_of(g: &Group, st: &Sites, placer: &mut Placer) -> Option<SourceSite> {
    let e = PtxEdit::RemoveFence {
        at: g.copies[0].clone(),
    };
    if let Some(c) = placer.candidates(&e).first() {
        return Some(c.site.clone());
    }
    // No removable statement: still name the line.
    let i = st.inst(&g.copies[0])?;
    let (file, line) = placer.user_frames(i).first().cloned()?;
    Some(SourceSite {
        file: placer.display(&source::canonical(std::path::Path::new(&file))),
        line,
        text: st.site(&g.copies[0]).statement.unwrap_or_default(),
        action: "fence at".into(),
    })
}

/// What the observed executions of the unchanged variant showed about each copy of a
/// group: how often it ran, what it drained, and the communicating load before it and
/// store after it.
fn observed_copies(g: &Group, st: &Sites, obs: &FenceObserver, drains: &Drains) -> Vec<FenceCopy> {
    g.copies
        .iter()
        .map(|c| {
            let id = st.id(c).unwrap_or(u32::MAX);
            FenceCopy {
                fence: st.site(c),
                reached: obs.reached.get(&id).copied().unwrap_or(0),
                drained: drains.get(&id).copied().unwrap_or(0),
                acquire_after: obs.acquire_side(id).and_then(|l| site_of(st, l)),
                store_before: obs.later_store(id).and_then(|l| site_of(st, l)),
            }
        })
        .collect()
}

/// Step 2: judges a group alone — every copy removed, the audit's seeds run under the
/// audit's model — and [`judge`] gives the verdict from that and the observations.
fn judge_group(
    ck: &mut Checker,
    base: &Prepared,
    g: &Group,
    copies: &[FenceCopy],
    runs: Runs,
    unobserved: Unobserved<'_>,
) -> Result<FenceVerdict, MinimizeError> {
    let failing = match try_edits(ck, base, &g.removal(), runs.model, runs.n)? {
        // Edits that do not apply leave the variant unchanged, which is then run.
        Trial::Inapplicable => try_edits(ck, base, &[], runs.model, runs.n)?.failure(),
        t => t.failure(),
    };
    Ok(judge_observed(
        failing,
        copies,
        Judged {
            model: runs.model,
            mixed: runs.mixed,
        },
        runs.observed,
        runs.total,
        unobserved,
    ))
}

/// The model block scope is judged under: the run's model when it tells CTA scope from
/// device scope, else `scoped`.
fn block_scope_model(model: Model) -> Model {
    if model_sees_scopes(model) {
        model
    } else {
        Model::Scoped
    }
}

/// Step 3: whether block scope suffices for a necessary device-scope fence — every copy
/// narrowed, the audit's seeds run under [`block_scope_model`]: necessary (device scope
/// must stay) or likely redundant (block scope is enough). None for other fences, or when
/// the narrowing does not apply.
fn judge_block_scope(
    ck: &mut Checker,
    base: &Prepared,
    g: &Group,
    verdict: &FenceVerdict,
    runs: Runs,
) -> Result<Option<FenceVerdict>, MinimizeError> {
    if g.scope() != FenceScope::Device || !matches!(verdict, FenceVerdict::Necessary { .. }) {
        return Ok(None);
    }
    let model = block_scope_model(runs.model);
    Ok(match try_edits(ck, base, &g.narrowing(), model, runs.n)? {
        Trial::Inapplicable => None,
        Trial::Fails(f) => Some(FenceVerdict::Necessary { failing: f }),
        // Without a p_w between 0 and 1 a passing narrowing says nothing either
        // ([`cannot_judge`], reason 4).
        Trial::Passes if model.uses_p() && !runs.mixed => Some(FenceVerdict::CannotJudge {
            reason: no_mix_reason(model),
        }),
        Trial::Passes => Some(likely_redundant(runs.total)),
    })
}

/// Step 4: the groups judged likely redundant alone, removed together, greedily — the
/// costliest first (device scope, then most copies). A group whose removal fails on top of
/// those already removed stays: its verdict becomes
/// [`FenceVerdict::NeededWithOthersRemoved`], naming the removed ones it fails with
/// ([`conflicting`]); each removed group's verdict then names the groups that stay for it
/// (`given_that_stay`). Returns the removed groups, in the order they were removed.
///
/// `audits[k]` is the audit of `groups[k]`.
fn remove_jointly(
    ck: &mut Checker,
    base: &Prepared,
    groups: &[Group],
    audits: &mut [FenceAudit],
    runs: Runs,
) -> Result<Vec<usize>, MinimizeError> {
    let mut candidates: Vec<usize> = (0..groups.len())
        .filter(|gi| matches!(audits[*gi].verdict, FenceVerdict::LikelyRedundant { .. }))
        .collect();
    candidates.sort_by_key(|gi| (groups[*gi].cta, std::cmp::Reverse(groups[*gi].copies.len())));
    let mut removed: Vec<usize> = Vec::new();
    let mut conflicts: Vec<(usize, usize)> = Vec::new(); // (kept, removed)
    for &gi in &candidates {
        if removed.is_empty() {
            removed.push(gi);
            continue;
        }
        let mut together = removed.clone();
        together.push(gi);
        match try_edits(ck, base, &removal_of(groups, &together), runs.model, runs.n)? {
            Trial::Inapplicable => continue,
            Trial::Passes => removed.push(gi),
            Trial::Fails(f) => {
                let with = conflicting(ck, base, groups, &removed, gi, runs)?;
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
    Ok(removed)
}

/// Which of the `removed` groups group `gi` fails together with: the only one, without a
/// run; else each one whose removal together with `gi` fails; else, when no pair fails
/// alone, all of them.
fn conflicting(
    ck: &mut Checker,
    base: &Prepared,
    groups: &[Group],
    removed: &[usize],
    gi: usize,
    runs: Runs,
) -> Result<Vec<usize>, MinimizeError> {
    if removed.len() == 1 {
        return Ok(removed.to_vec());
    }
    let mut with: Vec<usize> = Vec::new();
    for &r in removed {
        let pair = removal_of(groups, &[r, gi]);
        if let Trial::Fails(_) = try_edits(ck, base, &pair, runs.model, runs.n)? {
            with.push(r);
        }
    }
    if with.is_empty() {
        with = removed.to_vec();
    }
    Ok(with)
}

/// Step 5: the patch removing `edits` in the user's files, compiled and fuzzed on fresh
/// seeds under every model of the run. No patch when some fence has no removable statement
/// of its own (the verification says why) or the patch cannot be built.
fn verify_removal(
    ck: &mut Checker,
    campaign: &Campaign,
    placer: &mut Placer,
    compiler: &mut source::Compiler,
    edits: &[PtxEdit],
    models: &[Model],
) -> (Option<Patch>, Verification) {
    let placement = placer.place(edits, compiler);
    if placement.per_edit.iter().any(|p| p.is_none()) || placement.edits.is_empty() {
        let v = Verification {
            error: Some(
                "some fence could not be removed in your source files (a statement that is not only the fence, or library code)".into(),
            ),
            models: models.iter().map(|m| m.name().into()).collect(),
            ..Default::default()
        };
        return (None, v);
    }
    match source::build_patch(campaign, &placement.edits) {
        Ok(p) => {
            let v = ck.verify(compiler, &p, models, |c| placer.matches(edits, c));
            (Some(p), v)
        }
        Err(e) => (
            None,
            Verification {
                error: Some(e),
                ..Default::default()
            },
        ),
    }
}

/// Audits the existing fences of a variant: the steps of the module documentation, in
/// order.
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
    let st = Sites::new(&base.module)?;
    let mut placer = Placer::new(&campaign, &base.module, &st.insts);
    let mut compiler = source::Compiler::new(campaign.clone(), variant);
    let (obs, drains, base_failure, observed_runs) = observe(&mut ck, &base, model, n);
    let runs = Runs {
        model,
        n,
        total: n as u64 * opts.ps.len() as u64,
        observed: observed_runs,
        mixed: mixes(&opts.ps),
    };
    let groups = group_fences(&st, &mut placer);
    // `audits[k]` is the audit of `groups[k]`.
    let mut audits: Vec<FenceAudit> = Vec::new();
    for g in &groups {
        let copies = observed_copies(g, &st, &obs, &drains);
        let verdict = judge_group(&mut ck, &base, g, &copies, runs, obs.incomplete.as_deref())?;
        let block_scope = judge_block_scope(&mut ck, &base, g, &verdict, runs)?;
        audits.push(FenceAudit {
            fence: copies
                .first()
                .map(|c| c.fence.clone())
                .unwrap_or_else(|| st.site(&g.copies[0])),
            scope: g.scope(),
            verdict,
            block_scope_model: block_scope
                .as_ref()
                .map(|_| block_scope_model(model).name().to_string()),
            block_scope,
            copies,
            source: g.source.clone(),
        });
    }
    let removed = remove_jointly(&mut ck, &base, &groups, &mut audits, runs)?;
    let (patch, verification) = if removed.is_empty() {
        (None, None)
    } else {
        let (patch, v) = verify_removal(
            &mut ck,
            &campaign,
            &mut placer,
            &mut compiler,
            &removal_of(&groups, &removed),
            &opts.run_models(),
        );
        (patch, Some(v))
    };
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

#[cfg(test)]
mod tests {
    //! The verdict on a fence from what its removal and the observed executions showed:
    //! every case [`judge`] and [`cannot_judge`] tell apart, and the order they are
    //! decided in, with no executions.

    use super::*;
    use crate::SourceLoc;

    const STORE_BUFFERING: [Model; 3] = [Model::Sc, Model::Bugaroo, Model::Scoped];
    const ALL: [Model; 4] = [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak];

    /// An instruction at `k.cu:line` (PTX line `line`), with its statement when given.
    fn site(line: u32, ptx: &str, statement: Option<&str>) -> Site {
        Site {
            at: InstRef {
                function: "k".into(),
                ptx_line: line,
            },
            ptx: ptx.into(),
            cuda: Some(SourceLoc {
                file: "k.cu".into(),
                line,
                col: 9,
            }),
            statement: statement.map(Into::into),
            stack: Vec::new(),
        }
    }

    fn poll() -> Site {
        site(
            12,
            "ld.volatile.global.u32 %r4, [%rd2];",
            Some("while (*(volatile int *)flag == 0);"),
        )
    }

    fn hand_back() -> Site {
        site(
            14,
            "st.volatile.global.u32 [%rd3], %r5;",
            Some("*(volatile int *)head = k + 1;"),
        )
    }

    /// A copy that ran `reached` times and drained `drained` entries; neither side seen.
    fn copy(reached: u64, drained: u64) -> FenceCopy {
        FenceCopy {
            fence: site(13, "membar.gl;", Some("__threadfence();")),
            reached,
            drained,
            acquire_after: None,
            store_before: None,
        }
    }

    /// A copy that ran and drained, after the load `l` (its acquire side).
    fn acquire(l: Site) -> FenceCopy {
        FenceCopy {
            acquire_after: Some(l),
            ..copy(10, 4)
        }
    }

    /// A copy that ran and drained, ordering the load `l` before the store `s`.
    fn load_to_store(l: Site, s: Site) -> FenceCopy {
        FenceCopy {
            acquire_after: Some(l),
            store_before: Some(s),
            ..copy(10, 4)
        }
    }

    fn failing() -> Failing {
        Failing {
            seed: 7,
            p: 0.5,
            model: "bugaroo".into(),
            verdict: "oracle: out[3] = 0, expected 1".into(),
        }
    }

    fn reason(v: FenceVerdict) -> String {
        match v {
            FenceVerdict::CannotJudge { reason } => reason,
            v => panic!("expected cannot judge, got {v:?}"),
        }
    }

    fn acquire_reason(model: Model, load: &str) -> String {
        format!(
            "cannot judge under this model (loads are never delayed): use --model weak — it follows a load of memory other threads write ({load}), an acquire-side ordering {} cannot break",
            model.name()
        )
    }

    fn load_buffering_reason(model: Model, load: &str, store: &str) -> String {
        format!(
            "cannot judge under this model (it never lets a load read a later store): it orders a load of memory other threads write ({load}) before a store other threads read ({store}) — load buffering, which {} cannot produce",
            model.name()
        )
    }

    fn never_drained_reason(model: Model, runs: u64) -> String {
        format!(
            "cannot judge under this model (loads are never delayed): use --model weak — it never had a buffered store to drain in {runs} runs, so removing it changes nothing {} can show",
            model.name()
        )
    }

    const POLL: &str = "k.cu:12 `while (*(volatile int *)flag == 0);`";
    const HAND_BACK: &str = "k.cu:14 `*(volatile int *)head = k + 1;`";

    /// Every shape of observations the decision tells apart.
    fn every_shape() -> Vec<Vec<FenceCopy>> {
        vec![
            vec![copy(10, 4)],
            vec![copy(10, 4), copy(0, 0)],
            vec![copy(0, 0)],
            vec![acquire(poll())],
            vec![load_to_store(poll(), hand_back())],
            vec![copy(10, 0)],
            vec![FenceCopy {
                store_before: Some(hand_back()),
                ..copy(10, 0)
            }],
        ]
    }

    #[test]
    fn a_removal_that_fails_is_necessary_whatever_was_observed() {
        for model in ALL {
            for copies in every_shape() {
                assert_eq!(
                    judge(Some(failing()), &copies, model, 100, 100),
                    FenceVerdict::Necessary { failing: failing() },
                    "{} {copies:?}",
                    model.name()
                );
            }
        }
    }

    #[test]
    fn executions_not_seen_whole_leave_only_necessary_or_cannot_judge() {
        let cut = Some("the program made more events than the log holds (256 MiB)");
        for model in ALL {
            // A failure is still a failure.
            assert_eq!(
                judge_observed(Some(failing()), &[copy(0, 0)], judged(model), 100, 100, cut),
                FenceVerdict::Necessary { failing: failing() }
            );
            // Seen as never run, or as likely redundant when observed whole: neither may
            // rest on a partial observation.
            for copies in [vec![copy(0, 0)], vec![copy(10, 4)]] {
                let FenceVerdict::CannotJudge { reason } =
                    judge_observed(None, &copies, judged(model), 100, 100, cut)
                else {
                    panic!("{} {copies:?}: not cannot-judge", model.name());
                };
                assert!(reason.contains("not observed whole"), "{reason}");
                assert!(reason.contains("256 MiB"), "{reason}");
            }
        }
        assert!(matches!(
            judge(None, &[copy(10, 4)], Model::Weak, 100, 100),
            FenceVerdict::LikelyRedundant { .. }
        ));
    }

    #[test]
    fn a_copy_that_never_ran_makes_the_fence_not_exercised_before_anything_else() {
        for model in ALL {
            // Unreached besides an acquire-side copy, a load-to-store copy, a copy that
            // never drained: nothing is known about the unreached copy, and that comes
            // first.
            let copies = vec![
                acquire(poll()),
                load_to_store(poll(), hand_back()),
                copy(10, 0),
                copy(0, 0),
            ];
            assert_eq!(
                judge(None, &copies, model, 100, 100),
                FenceVerdict::NotExercised {
                    copies: 4,
                    unreached: 1
                },
                "{}",
                model.name()
            );
            // No copy ran.
            assert_eq!(
                judge(None, &[copy(0, 0), copy(0, 0)], model, 100, 100),
                FenceVerdict::NotExercised {
                    copies: 2,
                    unreached: 2
                }
            );
        }
    }

    #[test]
    fn store_buffering_cannot_judge_an_acquire_side_fence() {
        for model in STORE_BUFFERING {
            let want = acquire_reason(model, POLL);
            // It drained (the writer's side was seen), and still: its acquire side was not.
            assert_eq!(
                reason(judge(None, &[acquire(poll())], model, 100, 100)),
                want
            );
            // Ahead of load buffering, when the copy also orders the load before a store.
            assert_eq!(
                reason(judge(
                    None,
                    &[load_to_store(poll(), hand_back())],
                    model,
                    100,
                    100
                )),
                want
            );
            // Ahead of "never drained".
            let quiet = FenceCopy {
                acquire_after: Some(poll()),
                ..copy(10, 0)
            };
            assert_eq!(reason(judge(None, &[quiet], model, 100, 100)), want);
            // Any copy being acquire-side is enough.
            assert_eq!(
                reason(judge(
                    None,
                    &[copy(10, 4), acquire(poll())],
                    model,
                    100,
                    100
                )),
                want
            );
        }
    }

    #[test]
    fn the_acquire_side_named_is_the_first_copys_and_its_ptx_when_no_statement() {
        let cas = site(20, "atom.global.cas.b32 %r7, [%rd1], 0, 1;", None);
        let copies = [copy(10, 4), acquire(cas), acquire(poll())];
        assert_eq!(
            reason(judge(None, &copies, Model::Bugaroo, 100, 100)),
            acquire_reason(
                Model::Bugaroo,
                "k.cu:20 `atom.global.cas.b32 %r7, [%rd1], 0, 1;`"
            )
        );
    }

    #[test]
    fn weak_judges_an_acquire_side_fence_and_one_that_never_drained() {
        // `weak` delays loads, so the acquire side is observable, and it does not judge a
        // fence by its drains.
        for copies in [
            vec![acquire(poll())],
            vec![copy(10, 0)],
            vec![FenceCopy {
                acquire_after: Some(poll()),
                ..copy(10, 0)
            }],
            vec![FenceCopy {
                store_before: Some(hand_back()),
                ..copy(10, 0)
            }],
        ] {
            assert_eq!(
                judge(None, &copies, Model::Weak, 100, 100),
                likely_redundant(100),
                "{copies:?}"
            );
        }
    }

    fn judged(model: Model) -> Judged {
        Judged { model, mixed: true }
    }

    /// At p_w = 0 or 1 only, under every model that uses p_w: a passing removal is
    /// "cannot judge", never likely redundant; a failure is still necessary. `sc` has no
    /// p_w and keeps its verdicts.
    #[test]
    fn without_a_p_w_between_0_and_1_no_fence_is_redundant() {
        assert!(!mixes(&[1.0]));
        assert!(!mixes(&[0.0, 1.0]));
        assert!(mixes(&[0.5, 1.0]));
        assert!(mixes(&[0.01]));
        let unmixed = |model| Judged {
            model,
            mixed: false,
        };
        for model in [Model::Bugaroo, Model::Scoped, Model::Weak] {
            let r = reason(judge_observed(
                None,
                &[copy(10, 4)],
                unmixed(model),
                100,
                100,
                None,
            ));
            assert!(r.starts_with(NO_MIX), "{}: {r}", model.name());
            assert!(r.contains(model.name()), "{r}");
            assert_eq!(
                judge_observed(
                    Some(failing()),
                    &[copy(10, 4)],
                    unmixed(model),
                    100,
                    100,
                    None
                ),
                FenceVerdict::Necessary { failing: failing() }
            );
        }
        // Under weak every copy shape gets it (under store buffering the acquire-side
        // and never-drained reasons come first).
        for copies in [vec![copy(10, 0)], vec![acquire(poll())]] {
            let r = reason(judge_observed(
                None,
                &copies,
                unmixed(Model::Weak),
                100,
                100,
                None,
            ));
            assert!(r.starts_with(NO_MIX), "{r}");
        }
        assert_eq!(
            judge_observed(None, &[copy(10, 4)], unmixed(Model::Sc), 100, 100, None),
            likely_redundant(100)
        );
    }

    #[test]
    fn no_model_can_judge_a_fence_that_orders_a_load_before_a_store() {
        // Reached under `weak` only: the store-buffering models stop at the acquire side.
        assert_eq!(
            reason(judge(
                None,
                &[load_to_store(poll(), hand_back())],
                Model::Weak,
                100,
                100
            )),
            load_buffering_reason(Model::Weak, POLL, HAND_BACK)
        );
        // Even when it never drained anything.
        let quiet = FenceCopy {
            drained: 0,
            ..load_to_store(poll(), hand_back())
        };
        assert_eq!(
            reason(judge(None, &[quiet], Model::Weak, 100, 100)),
            load_buffering_reason(Model::Weak, POLL, HAND_BACK)
        );
    }

    #[test]
    fn load_buffering_needs_the_load_and_the_store_in_one_copy() {
        // One copy after the load, another before the store: neither orders one before
        // the other.
        let split = [
            acquire(poll()),
            FenceCopy {
                store_before: Some(hand_back()),
                ..copy(10, 4)
            },
        ];
        assert_eq!(
            judge(None, &split, Model::Weak, 100, 100),
            likely_redundant(100)
        );
        // The pair named is the first copy that has both, not the first acquire side;
        // the PTX stands in for a missing statement.
        let slot = site(30, "ld.global.u32 %r9, [%rd6];", None);
        let release = site(31, "st.global.u32 [%rd7], %r9;", None);
        let copies = [
            acquire(poll()),
            load_to_store(slot, release),
            load_to_store(poll(), hand_back()),
        ];
        assert_eq!(
            reason(judge(None, &copies, Model::Weak, 100, 100)),
            load_buffering_reason(
                Model::Weak,
                "k.cu:30 `ld.global.u32 %r9, [%rd6];`",
                "k.cu:31 `st.global.u32 [%rd7], %r9;`"
            )
        );
    }

    #[test]
    fn store_buffering_cannot_judge_a_fence_that_never_drained() {
        for model in STORE_BUFFERING {
            // Every copy ran, none drained: says how many runs were observed.
            assert_eq!(
                reason(judge(None, &[copy(10, 0), copy(3, 0)], model, 150, 100)),
                never_drained_reason(model, 150)
            );
            // A store after it alone is not load buffering: still "never drained".
            let store_only = FenceCopy {
                store_before: Some(hand_back()),
                ..copy(10, 0)
            };
            assert_eq!(
                reason(judge(None, &[store_only], model, 150, 100)),
                never_drained_reason(model, 150)
            );
            // One copy that drained is enough to judge it.
            assert_eq!(
                judge(None, &[copy(10, 0), copy(3, 1)], model, 150, 100),
                likely_redundant(100)
            );
        }
    }

    #[test]
    fn block_scope_is_judged_under_a_model_that_tells_the_scopes_apart() {
        assert_eq!(block_scope_model(Model::Sc), Model::Scoped);
        assert_eq!(block_scope_model(Model::Bugaroo), Model::Scoped);
        assert_eq!(block_scope_model(Model::Scoped), Model::Scoped);
        assert_eq!(block_scope_model(Model::Weak), Model::Weak);
    }

    #[test]
    fn likely_redundant_is_the_rule_of_three_over_the_runs() {
        for model in ALL {
            assert_eq!(
                judge(None, &[copy(10, 4), copy(2, 1)], model, 150, 200),
                FenceVerdict::LikelyRedundant {
                    runs: 200,
                    failure_probability_below: 0.015,
                    given_that_stay: Vec::new(),
                }
            );
        }
        // No runs: the bound is 3 (nothing is known), not a division by zero.
        assert_eq!(
            likely_redundant(0),
            FenceVerdict::LikelyRedundant {
                runs: 0,
                failure_probability_below: 3.0,
                given_that_stay: Vec::new(),
            }
        );
    }
}
