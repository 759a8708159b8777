//! `minimize`: from a failing variant to the cheapest fences that fix it, placed in the
//! user's source and verified (see the crate documentation for the steps).

use crate::edit::{self, FenceScope, InstRef, PtxEdit};
use crate::observe::FenceObserver;
use crate::ptxinfo::{AccessKind, InstKind, Space};
use crate::source::{self, Fit, Patch, Placer, SourceSite};
use crate::{batch_for_rate, power_of, BatchSizing, POWER};
use crate::{
    ddmin, model_delays_loads, model_sees_scopes, Checker, Failing, MinimizeError, Options, Site,
    Sites, Verification, OBSERVE_FROM,
};
use fencehound_fuzzer::{execute_observed, prepare, Campaign, ExecSpec, Filters, Prepared};
use fencehound_handlers::Model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

/// Which half of a synchronization a fence serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FenceSide {
    /// Writer / release side: the stores before it become visible before what follows.
    Writer,
    /// Reader / acquire side: the load before it (a poll, a lock's CAS) is ordered before
    /// the accesses after it.
    Reader,
}

impl FenceSide {
    pub fn describe(self) -> &'static str {
        match self {
            FenceSide::Writer => "writer side (release: publishes the stores before it)",
            FenceSide::Reader => {
                "reader side (acquire: orders the load before it before later accesses)"
            }
        }
    }
}

/// The kinds of fix, cheapest first. The order is the cost: the narrowest scope first
/// (warp < CTA < device), then fewer new instructions (strengthening an existing access or
/// fence adds none), then one-sided ordering (a release store orders only the stores
/// before it) before two-sided fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixKind {
    /// `__syncwarp()`: the communicating threads are all in one warp.
    SyncWarp,
    /// `__threadfence_block()`: the communicating threads are all in one CTA.
    BlockFence,
    /// The publishing store becomes a release store (`cuda::atomic_ref::store(…,
    /// memory_order_release)`), where the code already uses libcu++.
    ReleaseStore,
    /// The polling load becomes an acquire load, where the code already uses libcu++.
    AcquireLoad,
    /// An existing `__threadfence_block()` becomes `__threadfence()`.
    WidenFence,
    /// A new `__threadfence()`.
    DeviceFence,
}

impl FixKind {
    pub fn describe(self) -> &'static str {
        match self {
            FixKind::SyncWarp => "__syncwarp() (warp scope)",
            FixKind::BlockFence => "__threadfence_block() (CTA scope)",
            FixKind::ReleaseStore => {
                "a release store through cuda::atomic_ref (device scope, one-sided)"
            }
            FixKind::AcquireLoad => {
                "an acquire load through cuda::atomic_ref (device scope, one-sided)"
            }
            FixKind::WidenFence => {
                "widen the existing __threadfence_block() to __threadfence() (no new fence)"
            }
            FixKind::DeviceFence => "a new __threadfence() (device scope)",
        }
    }
}

/// One fix tried for one missing fence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixOption {
    pub kind: FixKind,
    pub edit: PtxEdit,
    /// The instruction the fix changes or follows.
    pub at: Site,
    /// None: not tried (a cheaper one already works, or it cannot be written in the source).
    pub works: Option<bool>,
    pub failing: Option<Failing>,
    /// Why this option was considered, or why it was not taken.
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FenceSuggestion {
    /// The instruction the fence goes after (the store it publishes, or the load it
    /// orders) — named inside a library when it is inlined from one.
    pub after: Site,
    pub side: FenceSide,
    /// Scope of the chosen fix.
    pub scope: FenceScope,
    /// The chosen fix in CUDA (`__threadfence();`, …).
    pub insertion: String,
    pub ptx_insertion: String,
    /// The block-scope version failed with this execution (under a model that sees scopes).
    pub block_scope_fails: Option<Failing>,
    pub fix: FixKind,
    /// Why this fix: it is the cheapest that passed.
    pub reason: String,
    /// Every fix considered, cheapest first.
    pub options: Vec<FixOption>,
    /// Where the chosen fix goes in the user's source.
    pub source: Option<SourceSite>,
    pub fit: Option<Fit>,
}

impl FenceSuggestion {
    /// The fix in one sentence, in CUDA terms.
    pub fn headline(&self) -> String {
        let fix_at = self
            .options
            .iter()
            .find(|o| o.kind == self.fix)
            .map(|o| o.at.describe())
            .unwrap_or_else(|| self.after.describe());
        match self.fix {
            FixKind::SyncWarp | FixKind::BlockFence | FixKind::DeviceFence => {
                format!("insert `{}` after {}", self.insertion, self.after.describe())
            }
            FixKind::WidenFence => format!(
                "widen `__threadfence_block()` to `__threadfence()` at {fix_at} (it follows {})",
                self.after.describe()
            ),
            FixKind::ReleaseStore => format!(
                "make the store at {fix_at} a release store (`cuda::memory_order_release`): it publishes {}",
                self.after.describe()
            ),
            FixKind::AcquireLoad => format!(
                "make the load at {} an acquire load (`cuda::memory_order_acquire`)",
                self.after.describe()
            ),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MinimizeReport {
    pub campaign: String,
    pub variant: String,
    pub model: String,
    /// Models alternatives were judged and the patch verified under.
    #[serde(default)]
    pub models: Vec<String>,
    /// The failure that started the search (None: nothing failed, nothing to do).
    pub failure: Option<Failing>,
    pub global_alone: Option<Failing>,
    pub shared_alone: Option<Failing>,
    pub spaces: Vec<String>,
    pub kernels: Vec<String>,
    /// A smallest set of store sites whose buffering still fails.
    pub stores: Vec<Site>,
    pub fences: Vec<FenceSuggestion>,
    /// The final set passed the fresh confirmation batch (PTX level).
    pub confirmed: bool,
    pub remaining_failure: Option<Failing>,
    /// The source patch, paths relative to the campaign file's folder.
    #[serde(default)]
    pub patch: Option<Patch>,
    /// The patched source compiled and fuzzed on fresh seeds.
    #[serde(default)]
    pub verification: Option<Verification>,
    /// Unified diff of the CUDA source (= `patch.diff`).
    pub diff: String,
    pub ptx_change: String,
    /// Where the search started: a failing execution recorded by a fuzz report.
    #[serde(default)]
    pub start: Option<String>,
    /// That recorded execution did not fail when re-run (and why, when known).
    #[serde(default)]
    pub replay_failed: Option<String>,
    /// How each check's batch was sized from the measured failure rate.
    #[serde(default)]
    pub sizing: Option<BatchSizing>,
    /// Set when the run's models cannot tell fence scopes apart (`bugaroo`, `sc`): the
    /// narrower scopes were not judged and why.
    #[serde(default)]
    pub scope_note: Option<String>,
    /// p_w values the search ran at besides the ones asked for: 0.5 when none of those
    /// lies strictly between 0 and 1 (at 0 or 1 alone the search model is blind to the
    /// fences that must order one access of a thread and not the next).
    #[serde(default)]
    pub added_ps: Vec<f64>,
    /// Source edits dropped from the verified patch because the patch without them
    /// verifies as well (`reduce_source`): what each would have done.
    #[serde(default)]
    pub source_reduced: Vec<String>,
    /// Candidate fence placements (after stores; after loads when the model delays loads).
    #[serde(default)]
    pub candidates: usize,
    pub executions: u64,
    /// Executions answered from the cache instead of run.
    #[serde(default)]
    pub cached: u64,
    /// NVRTC compilations of patch candidates.
    #[serde(default)]
    pub compiles: u32,
    pub wall_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineReport {
    pub campaign: String,
    pub variant: String,
    pub candidates: usize,
    pub fences: Vec<FenceSuggestion>,
    pub confirmed: bool,
    pub executions: u64,
    #[serde(default)]
    pub cached: u64,
    pub wall_seconds: f64,
}

/// Each check's batch from the failure rate measured on (failures, runs, where).
fn size_batches((failures, runs, on): (u64, u64, &str), opts: &Options) -> BatchSizing {
    let rate = failures as f64 / runs as f64;
    let needed = batch_for_rate(rate, POWER).unwrap_or(u64::MAX);
    let max = opts.max_batch.max(1);
    let capped = needed > max as u64;
    let batch = opts.batch.max(needed.min(max as u64) as u32);
    BatchSizing {
        failures,
        runs,
        measured_on: on.into(),
        rate,
        needed,
        batch,
        capped,
        power: power_of(rate, batch as u64),
    }
}

/// How a fix that the model cannot judge is marked in its note.
const CANNOT_JUDGE: &str = "cannot judge under";

/// Why a store-buffering model without scopes cannot judge a narrower fence.
pub const SCOPE_BLIND: &str = "every fence scope drains the same write buffer, so a block-scope fence always looks as good as a device-scope one and whether block scope suffices cannot be told";

fn all_filters() -> Filters {
    Filters::default()
}

fn space_of(k: &InstKind) -> Option<Space> {
    match k {
        InstKind::Access { space, .. } => Some(*space),
        _ => None,
    }
}

/// Finds the missing fences of a failing variant.
pub fn minimize(
    campaign: Arc<Campaign>,
    variant: &str,
    opts: Options,
) -> Result<MinimizeReport, MinimizeError> {
    let start = Instant::now();
    let base = Arc::new(prepare(campaign.clone(), variant)?);
    // No p_w strictly between 0 and 1: the search model would delay every access or none,
    // never one access and not the next, and a whole class of missing fences would pass
    // every check ([`Model::blind_at`]; at `--p 1` alone a seqlock writer without its
    // first fence was "nothing to minimize"). The search runs at 0.5 as well, and says so.
    let mut opts = opts;
    let added_ps = crate::mix_in(&mut opts.ps, &[opts.model]);
    let mut ck = Checker::new(campaign.clone(), variant, opts.clone());
    ck.add(base.clone());
    let model = opts.model;
    let mut b = opts.batch;
    let mut report = MinimizeReport {
        campaign: campaign.name.clone(),
        variant: variant.into(),
        model: model.name().into(),
        models: opts.run_models().iter().map(|m| m.name().into()).collect(),
        added_ps,
        ..Default::default()
    };
    let finish = |mut report: MinimizeReport, ck: &Checker, compiles: u32| {
        report.executions = ck.executions;
        report.cached = ck.cached;
        report.compiles = compiles;
        report.wall_seconds = start.elapsed().as_secs_f64();
        ck.save_cache();
        ck.check_oracle()?;
        Ok(report)
    };
    // The failure to start from, and the failure rate the batches are sized by: a known
    // failing execution (re-run from its seed: it reproduces bit for bit) and its cell's
    // rate in the report, or the first failure of the first batch and that batch's rate.
    let measured = match &opts.known {
        Some(k) => {
            report.start = Some(k.origin.clone());
            match ck.run_one(&base, &all_filters(), k.model, k.p, k.seed) {
                Some(verdict) => {
                    report.failure = Some(Failing {
                        seed: k.seed,
                        p: k.p,
                        model: k.model.name().into(),
                        verdict,
                    });
                    ck.witnesses.push((k.p, k.seed));
                    (
                        k.cell_failures.max(1),
                        k.cell_runs.max(1),
                        "the report's cell",
                    )
                }
                None => {
                    report.replay_failed = Some(format!(
                        "{} did not fail when re-run from its seed{}",
                        k.origin,
                        if k.ptx_changed {
                            ": the campaign now compiles to other PTX than the report ran (the source or the tool changed)"
                        } else {
                            ""
                        }
                    ));
                    return finish(report, &ck, 0);
                }
            }
        }
        None => {
            report.failure = ck.first_failure(&base, &all_filters(), model, 0, b);
            if report.failure.is_none() {
                return finish(report, &ck, 0);
            }
            let (f, n) = ck.count_failures(&base, &all_filters(), model, 0, b);
            (f.max(1), n.max(1), "the first batch")
        }
    };
    let sizing = size_batches(measured, &opts);
    b = sizing.batch;
    ck.opts.batch = b;
    ck.opts.confirm = ck.opts.confirm.max(b);
    ck.opts.verify_runs = ck.opts.verify_runs.max(b);
    report.sizing = Some(sizing);
    // 1. Which space.
    let only = |g: bool, s: bool| Filters {
        global: g,
        shared: s,
        ..Filters::default()
    };
    report.global_alone = ck.first_failure(&base, &only(true, false), model, 0, b);
    report.shared_alone = ck.first_failure(&base, &only(false, true), model, 0, b);
    let (g, s) = match (&report.global_alone, &report.shared_alone) {
        (Some(_), None) => (true, false),
        (None, Some(_)) => (false, true),
        _ => (true, true),
    };
    if g {
        report.spaces.push("global".into());
    }
    if s {
        report.spaces.push("shared".into());
    }
    let mut filters = only(g, s);
    // 2. Which kernel.
    // The kernels the variant launches (a program's come from its reference run).
    let kernels: BTreeSet<String> = base.kernels().into_iter().collect();
    if kernels.len() > 1 {
        let mut implicated = Vec::new();
        for k in &kernels {
            let f = Filters {
                kernels: Some([k.clone()].into()),
                ..filters.clone()
            };
            if ck.first_failure(&base, &f, model, 0, b).is_some() {
                implicated.push(k.clone());
            }
        }
        if implicated.len() == 1 {
            filters.kernels = Some(implicated.iter().cloned().collect());
        }
        report.kernels = if implicated.is_empty() {
            kernels.iter().cloned().collect()
        } else {
            implicated
        };
    } else {
        report.kernels = kernels.iter().cloned().collect();
    }
    // 3. Which stores.
    let st = Sites::new(&base.module)?;
    let in_space = |sp: Option<Space>| match sp {
        Some(Space::Global) => g,
        Some(Space::Shared) => s,
        _ => true,
    };
    let store_ids: Vec<u32> = st
        .insts
        .iter()
        .filter(|i| {
            matches!(
                i.kind,
                InstKind::Access {
                    kind: AccessKind::Store,
                    ..
                }
            ) && in_space(space_of(&i.kind))
        })
        .filter_map(|i| st.id(&i.at))
        .collect();
    let minimal = {
        let fref = filters.clone();
        ddmin::ddmin(store_ids.clone(), &mut |set: &[u32]| {
            let f = Filters {
                sites: Some(set.iter().copied().collect()),
                ..fref.clone()
            };
            ck.first_failure(&base, &f, model, 0, b).is_some()
        })
    };
    report.stores = minimal
        .iter()
        .filter_map(|id| st.refs(&[*id]).pop())
        .map(|(_, at)| st.site(&at))
        .collect();
    // 4. Where the fence goes: after each store of the implicated space; under a model
    // that delays loads also after each load and atomic of it (reader-side fences).
    // Store-buffering models never delay a load, so a fence after a load could only act
    // as a writer-side fence there, which the fence after the preceding store already is.
    let readers = model_delays_loads(model);
    let cand_ids: Vec<u32> = st
        .insts
        .iter()
        .filter(|i| match i.kind {
            InstKind::Access { kind, space, .. } => {
                in_space(Some(space))
                    && (kind == AccessKind::Store
                        || (readers && matches!(kind, AccessKind::Load | AccessKind::Rmw)))
            }
            _ => false,
        })
        .filter_map(|i| st.id(&i.at))
        .collect();
    let cand_refs: Vec<(u32, InstRef)> = st.refs(&cand_ids);
    report.candidates = cand_refs.len();
    let mut found = search_fences(&mut ck, &base, &cand_refs, model, false)?;
    let implicated: Vec<u32> = minimal.clone();
    let warp_local = warp_local(&mut ck, &base, model, &implicated);
    // A fence orders a thread's own accesses; it does not make another thread wait. Code
    // that hands values between lanes with nothing but the warp's lockstep needs
    // `__syncwarp()` (under `weak` no fence helps there), so when fences everywhere do not
    // fix a warp-synchronous kernel, the search is repeated with warp syncs.
    let mut warp_search = false;
    if found.everywhere_fails && warp_local {
        let w = search_fences(&mut ck, &base, &cand_refs, model, true)?;
        if !w.everywhere_fails {
            found = w;
            warp_search = true;
        }
    }
    let plain = |at: &InstRef| {
        if warp_search {
            PtxEdit::InsertWarpSync { after: at.clone() }
        } else {
            PtxEdit::InsertFence {
                after: at.clone(),
                scope: FenceScope::Device,
            }
        }
    };
    // One source line, one fence: when the search put fences after several statements of
    // one line (`a = x; b = y;` unrolled), try a single fence after the line's last
    // access in each copy instead; kept only if it passes the batch and a fresh one.
    if found.confirmed && !found.fences.is_empty() {
        let ends = line_ends(&st, &found.fences);
        if ends != found.fences {
            let edits: Vec<PtxEdit> = ends.iter().map(|(_, at)| plain(at)).collect();
            if let Some(m) = edit::apply_all(&base.module, &edits) {
                let prep = ck.prep(&m)?;
                let passes = ck
                    .first_failure(&prep, &all_filters(), model, 0, b)
                    .is_none()
                    && ck
                        .first_failure(&prep, &all_filters(), model, LINE_END_FROM, ck.opts.confirm)
                        .is_none();
                if std::env::var_os("FENCEHOUND_DEBUG_MIN").is_some() {
                    let a: Vec<u32> = found.fences.iter().map(|(_, at)| at.ptx_line).collect();
                    let e: Vec<u32> = ends.iter().map(|(_, at)| at.ptx_line).collect();
                    eprintln!(
                        "line ends: {a:?} -> {e:?}: {}",
                        if passes { "pass" } else { "fail" }
                    );
                }
                if passes {
                    found.fences = ends;
                }
            }
        }
    }
    report.confirmed = found.confirmed;
    report.remaining_failure = found.remaining_failure.clone();
    // 5. The cheapest fix per fence.
    let mut placer = Placer::new(&campaign, &base.module, &st.insts);
    let mut compiler = source::Compiler::new(campaign.clone(), variant);
    let libcupp = placer.user_uses_libcupp();
    let mut chosen: Vec<PtxEdit> = found.fences.iter().map(|(_, at)| plain(at)).collect();
    // Whether a narrower scope can be judged at all: under `bugaroo` (or `sc`) every fence
    // scope drains the same buffer, so a block-scope fence always looks as good as a
    // device-scope one. Narrower scopes are then not tried, the device-scope fence is
    // recommended, and the report says the scope question needs `scoped` or `weak`.
    let scope_blind = !opts.run_models().iter().any(|m| model_sees_scopes(*m));
    // One source line gets one fix: the PTX copies of a line (an unrolled loop, an inlined
    // helper) are judged together — each kind of fix is applied to every copy at once, as
    // the source edit would — so a patch never adds two fences of different strengths
    // after the same line.
    let mut groups: Vec<(Option<LineKey>, Vec<usize>)> = Vec::new();
    for (k, (_, at)) in found.fences.iter().enumerate() {
        let key = st.site(at).cuda.map(|c| (c.file, c.line));
        match groups.iter_mut().find(|(g, _)| key.is_some() && *g == key) {
            Some((_, members)) => members.push(k),
            None => groups.push((key, vec![k])),
        }
    }
    let mut picked: Vec<Option<FenceSuggestion>> = vec![None; found.fences.len()];
    for (_, members) in &groups {
        let per_copy: Vec<Vec<(FixKind, PtxEdit, String)>> = members
            .iter()
            .map(|&k| {
                let at = &found.fences[k].1;
                if warp_search {
                    vec![(
                        FixKind::SyncWarp,
                        plain(at),
                        "fences do not make another lane wait: warp-synchronous code needs __syncwarp()"
                            .to_string(),
                    )]
                } else {
                    fix_options(&st, at, readers && reads(&st, at), libcupp, warp_local)
                }
            })
            .collect();
        // The kinds of fix every copy offers, cheapest first (the device fence always).
        let options: Vec<(FixKind, String)> = per_copy[0]
            .iter()
            .filter(|(kind, _, _)| {
                per_copy
                    .iter()
                    .all(|os| os.iter().any(|(k2, _, _)| k2 == kind))
            })
            .map(|(kind, _, note)| (*kind, note.clone()))
            .collect();
        let edit_of = |copy: usize, kind: FixKind| -> Option<PtxEdit> {
            per_copy[copy]
                .iter()
                .find(|(k2, _, _)| *k2 == kind)
                .map(|(_, e, _)| e.clone())
        };
        let copies_note = if members.len() > 1 {
            format!(
                " (one fix for the line: judged on its {} PTX copies that need a fence together)",
                members.len()
            )
        } else {
            String::new()
        };
        let mut tried: Vec<FixOption> = Vec::new();
        let mut pick: Option<usize> = None;
        for (kind, note) in options {
            let Some(e) = edit_of(0, kind) else { continue };
            let at_site = st.site(e.anchor());
            if kind == FixKind::DeviceFence || warp_search {
                tried.push(FixOption {
                    kind,
                    edit: e,
                    at: at_site,
                    works: Some(found.confirmed),
                    failing: None,
                    note,
                });
                if pick.is_none() {
                    pick = Some(tried.len() - 1);
                }
                continue;
            }
            if pick.is_some() {
                tried.push(FixOption {
                    kind,
                    edit: e,
                    at: at_site,
                    works: None,
                    failing: None,
                    note: format!("{note}; not tried: a cheaper fix works"),
                });
                continue;
            }
            if scope_blind && matches!(kind, FixKind::SyncWarp | FixKind::BlockFence) {
                tried.push(FixOption {
                    kind,
                    edit: e,
                    at: at_site,
                    works: None,
                    failing: None,
                    note: format!("{note}; {CANNOT_JUDGE} {}: {SCOPE_BLIND}", model.name()),
                });
                continue;
            }
            let edits_k: Vec<PtxEdit> = (0..members.len())
                .filter_map(|c| edit_of(c, kind))
                .collect();
            // A cheaper fix must also be writable in the user's source.
            if edits_k.iter().any(|e| placer.candidates(e).is_empty()) {
                tried.push(FixOption {
                    kind,
                    edit: e,
                    at: at_site,
                    works: None,
                    failing: None,
                    note: format!("{note}; not tried: no statement in your files to change"),
                });
                continue;
            }
            let mut edits = chosen.clone();
            for (c, &k) in members.iter().enumerate() {
                if let Some(e) = edits_k.get(c) {
                    edits[k] = e.clone();
                }
            }
            // The strongest model first: it is the likeliest to refute a cheaper fix, and
            // a check stops at its first failure.
            let mut models = opts.run_models();
            models.sort_by_key(|m| std::cmp::Reverse(crate::model_strength(*m)));
            let failing = match edit::apply_all(&base.module, &edits) {
                Some(m) => {
                    let prep = ck.prep(&m)?;
                    ck.first_failure_any(&prep, &models, 0, b)
                }
                None => Some(Failing {
                    seed: 0,
                    p: 0.0,
                    model: String::new(),
                    verdict: "the PTX edit does not apply".into(),
                }),
            };
            let works = failing.is_none();
            if works && pick.is_none() {
                pick = Some(tried.len());
            }
            tried.push(FixOption {
                kind,
                edit: e,
                at: at_site,
                works: Some(works),
                failing,
                note,
            });
        }
        let pick = pick.unwrap_or(tried.len().saturating_sub(1));
        let Some(fix) = tried.get(pick).cloned() else {
            continue;
        };
        let block_scope_fails = tried
            .iter()
            .find(|o| o.kind == FixKind::BlockFence)
            .and_then(|o| o.failing.clone());
        let reason = format!("{}{copies_note}", reason_for(&fix, &tried));
        for (c, &k) in members.iter().enumerate() {
            let at = &found.fences[k].1;
            let edit = edit_of(c, fix.kind).unwrap_or_else(|| plain(at));
            chosen[k] = edit.clone();
            // The options as they apply to this copy.
            let options = tried
                .iter()
                .map(|o| FixOption {
                    edit: edit_of(c, o.kind).unwrap_or_else(|| o.edit.clone()),
                    ..o.clone()
                })
                .collect();
            picked[k] = Some(FenceSuggestion {
                after: st.site(at),
                side: if readers && reads(&st, at) {
                    FenceSide::Reader
                } else {
                    FenceSide::Writer
                },
                scope: match fix.kind {
                    FixKind::SyncWarp | FixKind::BlockFence => FenceScope::Block,
                    _ => FenceScope::Device,
                },
                insertion: cuda_text(fix.kind).into(),
                ptx_insertion: ptx_text(&edit),
                block_scope_fails: block_scope_fails.clone(),
                fix: fix.kind,
                reason: reason.clone(),
                options,
                source: None,
                fit: None,
            });
        }
    }
    // One suggestion per PTX fence, in the order of `chosen` (the placement's indices).
    let mut suggestions: Vec<FenceSuggestion> = Vec::new();
    let mut kept: Vec<PtxEdit> = Vec::new();
    for (k, s) in picked.into_iter().enumerate() {
        if let Some(s) = s {
            suggestions.push(s);
            kept.push(chosen[k].clone());
        }
    }
    let mut chosen = kept;
    if scope_blind && !warp_search && !suggestions.is_empty() {
        report.scope_note = Some(format!(
            "scope not judged: under {} {SCOPE_BLIND}. The device-scope fix is recommended; run `minimize --model scoped` (or `weak`) to ask whether a narrower scope suffices.",
            model.name()
        ));
    }
    // 6–7. Source patch, then verification; when a cheaper fix's patch does not verify,
    // the plain device fences are placed and verified instead.
    let models = {
        let mut m = opts.run_models();
        if suggestions
            .iter()
            .any(|s| matches!(s.fix, FixKind::SyncWarp | FixKind::BlockFence))
            && !m.iter().any(|x| model_sees_scopes(*x))
        {
            m.push(Model::Scoped);
        }
        m
    };
    if !chosen.is_empty() {
        let (patch, verification, placement) =
            place_and_verify(&mut ck, &mut placer, &mut compiler, &chosen, &models);
        let fallback = !verification.verified
            && !warp_search
            && suggestions.iter().any(|s| s.fix != FixKind::DeviceFence);
        let (patch, verification, placement) = if fallback {
            let plain: Vec<PtxEdit> = found
                .fences
                .iter()
                .map(|(_, at)| PtxEdit::InsertFence {
                    after: at.clone(),
                    scope: FenceScope::Device,
                })
                .collect();
            let r = place_and_verify(&mut ck, &mut placer, &mut compiler, &plain, &models);
            if r.1.verified {
                for s in suggestions.iter_mut() {
                    s.fix = FixKind::DeviceFence;
                    s.scope = FenceScope::Device;
                    s.insertion = cuda_text(FixKind::DeviceFence).into();
                    s.ptx_insertion = FenceScope::Device.ptx().into();
                    s.reason =
                        "a new __threadfence(): the patch with the cheaper fix did not verify"
                            .into();
                }
                chosen = plain;
                r
            } else {
                (patch, verification, placement)
            }
        } else {
            (patch, verification, placement)
        };
        // 8. The source patch reduced (see `reduce_source`).
        let reduced = (patch.is_some() && !warp_search && verification.verified)
            .then(|| reduce_source(&mut ck, &mut compiler, &placement, &models))
            .flatten();
        let (patch, verification, placement) = match reduced {
            Some((kept, p, v)) => {
                report.source_reduced = (0..placement.edits.len())
                    .filter(|e| !kept.contains(e))
                    .map(|e| placement.edits[e].site.to_string())
                    .collect();
                // The PTX edits (and their suggestions) whose source edit stays.
                let (placement, ptx) = placement.keep(&kept);
                suggestions = ptx
                    .iter()
                    .filter_map(|&k| suggestions.get(k).cloned())
                    .collect();
                chosen = ptx.iter().filter_map(|&k| chosen.get(k).cloned()).collect();
                (Some(p), v, placement)
            }
            None => (patch, verification, placement),
        };
        for (k, s) in suggestions.iter_mut().enumerate() {
            if let Some(Some((e, fit))) = placement.per_edit.get(k) {
                s.source = placement.edits.get(*e).map(|x| x.site.clone());
                s.fit = Some(*fit);
            }
        }
        report.diff = patch.as_ref().map(|p| p.diff.clone()).unwrap_or_default();
        report.patch = patch;
        report.verification = Some(verification);
    }
    report.ptx_change = chosen
        .iter()
        .map(|e| {
            let at = e.anchor();
            let text = st.site(at).ptx;
            format!("{}: `{}`", e.describe(), text)
        })
        .collect::<Vec<_>>()
        .join("\n");
    report.fences = suggestions;
    finish(report, &ck, compiler.compiles)
}

/// The verified source patch with every source edit the rest makes unnecessary dropped:
/// the PTX-level search fences PTX copies one by one, and where a loop is unrolled into
/// copies it may fence some copies of a store after a neighbouring store instead — but in
/// the source one line gets one fence, which covers every copy of that line. (A seqlock
/// writer without its first fence got three fences, one inside the record loop, where the
/// one after the odd counter store suffices.) Each source edit is dropped in turn, and the
/// rest compiled and verified like the patch itself (the recorded failing seeds first,
/// then fresh seeds sized for 95% power at the measured failure rate, every model); a
/// drop that verifies is kept. Returns the kept edits (indices into `placement.edits`),
/// their patch and its verification, or `None` when nothing could be dropped.
fn reduce_source(
    ck: &mut Checker,
    compiler: &mut source::Compiler,
    placement: &source::Placement,
    models: &[Model],
) -> Option<(Vec<usize>, Patch, crate::Verification)> {
    let mut kept: Vec<usize> = (0..placement.edits.len()).collect();
    let mut best = None;
    let mut i = 0;
    while i < kept.len() && kept.len() > 1 {
        let trial: Vec<usize> = kept
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, &e)| e)
            .collect();
        let edits: Vec<source::SourceEdit> =
            trial.iter().map(|&e| placement.edits[e].clone()).collect();
        let verified = source::build_patch(ck.campaign(), &edits)
            .ok()
            .map(|p| {
                let v = ck.verify(compiler, &p, models, |_| false);
                (p, v)
            })
            .filter(|(_, v)| v.verified);
        match verified {
            Some((p, v)) => {
                kept = trial;
                best = Some((p, v));
            }
            None => i += 1,
        }
    }
    best.map(|(p, v)| (kept, p, v))
}

/// Places `edits` in the source, builds the patch and verifies it.
fn place_and_verify(
    ck: &mut Checker,
    placer: &mut Placer<'_>,
    compiler: &mut source::Compiler,
    edits: &[PtxEdit],
    models: &[Model],
) -> (Option<Patch>, Verification, source::Placement) {
    let placement = placer.place(edits, compiler);
    let missing = placement.per_edit.iter().filter(|p| p.is_none()).count();
    if missing > 0 || placement.edits.is_empty() {
        return (
            None,
            Verification {
                error: Some(format!(
                    "{missing} of {} change(s) could not be placed in your source files (no line information, or only library code)",
                    edits.len()
                )),
                models: models.iter().map(|m| m.name().into()).collect(),
                ..Default::default()
            },
            placement,
        );
    }
    let patch = match source::build_patch(ck.campaign(), &placement.edits) {
        Ok(p) => p,
        Err(e) => {
            return (
                None,
                Verification {
                    error: Some(e),
                    ..Default::default()
                },
                placement,
            )
        }
    };
    let v = ck.verify(compiler, &patch, models, |c| placer.matches(edits, c));
    (Some(patch), v, placement)
}

/// A CUDA source line: (file, line).
type LineKey = (String, u32);

/// Seeds of the check of a fence set moved to line ends: apart from the search's batches.
const LINE_END_FROM: u64 = 1 << 20;

/// Each fence moved after the last memory access of its CUDA line (the run of following
/// instructions of the same function on the same line), without repeats.
fn line_ends(st: &Sites, fences: &[(u32, InstRef)]) -> Vec<(u32, InstRef)> {
    let loc = |i: &crate::ptxinfo::PtxInst| i.stack.first().map(|f| (f.file.clone(), f.line));
    let mut out: Vec<(u32, InstRef)> = Vec::new();
    for (id, at) in fences {
        let mut end = (*id, at.clone());
        if let Some(p) = st.insts.iter().position(|i| &i.at == at) {
            let here = loc(&st.insts[p]);
            if here.is_some() {
                for i in st.insts[p + 1..]
                    .iter()
                    .take_while(|i| i.at.function == at.function && loc(i) == here)
                {
                    if matches!(i.kind, InstKind::Access { .. }) {
                        if let Some(k) = st.id(&i.at) {
                            end = (k, i.at.clone());
                        }
                    }
                }
            }
        }
        if !out.contains(&end) {
            out.push(end);
        }
    }
    out
}

/// Whether the instruction reads memory (a load or an atomic).
fn reads(st: &Sites, at: &InstRef) -> bool {
    matches!(
        st.inst(at).map(|i| i.kind),
        Some(InstKind::Access {
            kind: AccessKind::Load | AccessKind::Rmw,
            ..
        })
    )
}

/// Whether every load, by another thread, of what the implicated stores wrote came from the
/// writer's warp, over a few observed executions of the unfixed variant.
fn warp_local(ck: &mut Checker, base: &Arc<Prepared>, model: Model, stores: &[u32]) -> bool {
    if stores.is_empty() {
        return false;
    }
    let mut obs = FenceObserver::default();
    let p = ck.opts.ps.first().copied().unwrap_or(1.0);
    for i in 0..4u64 {
        let spec = ExecSpec {
            id: 0,
            model,
            p,
            seed: ck.seed(OBSERVE_FROM + i),
            scheduler: ck.opts.scheduler,
            trace: false,
            filters: Filters::default(),
            race: false,
        };
        let _ = execute_observed(base, &spec, None, &mut obs);
        obs.finish_launch();
        ck.executions += 1;
    }
    obs.warp_local(stores)
}

/// The fixes worth trying for a fence after `at`, cheapest first, each with why it is
/// considered. The plain device fence is always last.
fn fix_options(
    st: &Sites,
    at: &InstRef,
    reader: bool,
    libcupp: bool,
    warp_local: bool,
) -> Vec<(FixKind, PtxEdit, String)> {
    let mut out = Vec::new();
    if warp_local {
        out.push((
            FixKind::SyncWarp,
            PtxEdit::InsertWarpSync { after: at.clone() },
            "every load of these stores by another thread came from the writer's warp".into(),
        ));
    }
    out.push((
        FixKind::BlockFence,
        PtxEdit::InsertFence {
            after: at.clone(),
            scope: FenceScope::Block,
        },
        "CTA scope suffices when the communicating threads share a CTA".into(),
    ));
    // The instructions after `at` in the same function, up to the next fence or barrier.
    let pos = st.insts.iter().position(|i| &i.at == at);
    let after: Vec<&crate::ptxinfo::PtxInst> = pos
        .map(|p| {
            st.insts[p + 1..]
                .iter()
                .take_while(|i| i.at.function == at.function)
                .collect()
        })
        .unwrap_or_default();
    if libcupp && !reader {
        // The next store or atomic publishes what the fence would: make it a release.
        let next = after.iter().find(|i| {
            matches!(
                i.kind,
                InstKind::Access {
                    kind: AccessKind::Store | AccessKind::Rmw | AccessKind::Red,
                    ..
                } | InstKind::Fence { .. }
                    | InstKind::Barrier
            )
        });
        if let Some(i) = next.filter(|i| matches!(i.kind, InstKind::Access { .. })) {
            out.push((
                FixKind::ReleaseStore,
                PtxEdit::Release { at: i.at.clone() },
                "the code uses libcu++, and the next store publishes what the fence would".into(),
            ));
        }
    }
    if libcupp && reader {
        out.push((
            FixKind::AcquireLoad,
            PtxEdit::Acquire { at: at.clone() },
            "the code uses libcu++: the polling load itself can be an acquire".into(),
        ));
    }
    // An existing block-scope fence before the next store: widen it instead.
    let existing = after.iter().find(|i| {
        matches!(
            i.kind,
            InstKind::Fence { .. }
                | InstKind::Access {
                    kind: AccessKind::Store | AccessKind::Rmw | AccessKind::Red,
                    ..
                }
        )
    });
    if let Some(f) = existing.filter(|i| {
        matches!(
            i.kind,
            InstKind::Fence {
                cta: true,
                acquire_only: false
            }
        )
    }) {
        out.push((
            FixKind::WidenFence,
            PtxEdit::WidenFence { at: f.at.clone() },
            "a __threadfence_block() already stands there, before the next store".into(),
        ));
    }
    out.push((
        FixKind::DeviceFence,
        PtxEdit::InsertFence {
            after: at.clone(),
            scope: FenceScope::Device,
        },
        "always works where the search found it".into(),
    ));
    out
}

fn reason_for(fix: &FixOption, tried: &[FixOption]) -> String {
    let cheaper: Vec<String> = tried
        .iter()
        .filter(|o| o.kind < fix.kind)
        .map(|o| match (&o.works, &o.failing) {
            (Some(false), Some(f)) => format!(
                "{} fails (seed {}, p_w={}, {})",
                short_kind(o.kind),
                f.seed,
                f.p,
                f.model
            ),
            (None, _) if o.note.contains(CANNOT_JUDGE) => {
                format!("{} cannot be judged under this model", short_kind(o.kind))
            }
            _ => format!("{} not applicable", short_kind(o.kind)),
        })
        .collect();
    if tried.len() == 1 {
        format!("{}: {}", fix.kind.describe(), fix.note)
    } else if cheaper.is_empty() {
        format!("{}: the cheapest fix, and it passes", fix.kind.describe())
    } else {
        format!(
            "{}: cheaper fixes do not work ({})",
            fix.kind.describe(),
            cheaper.join("; ")
        )
    }
}

fn short_kind(k: FixKind) -> &'static str {
    match k {
        FixKind::SyncWarp => "__syncwarp()",
        FixKind::BlockFence => "__threadfence_block()",
        FixKind::ReleaseStore => "a release store",
        FixKind::AcquireLoad => "an acquire load",
        FixKind::WidenFence => "widening the existing fence",
        FixKind::DeviceFence => "__threadfence()",
    }
}

fn cuda_text(k: FixKind) -> &'static str {
    match k {
        FixKind::SyncWarp => "__syncwarp();",
        FixKind::BlockFence => "__threadfence_block();",
        FixKind::ReleaseStore => "cuda::memory_order_release",
        FixKind::AcquireLoad => "cuda::memory_order_acquire",
        FixKind::WidenFence => "__threadfence();",
        FixKind::DeviceFence => "__threadfence();",
    }
}

fn ptx_text(e: &PtxEdit) -> String {
    match e {
        PtxEdit::InsertFence { scope, .. } => scope.ptx().into(),
        PtxEdit::InsertWarpSync { .. } => "bar.warp.sync -1;".into(),
        PtxEdit::WidenFence { .. } => "membar.gl;".into(),
        PtxEdit::Release { .. } => ".release.gpu".into(),
        PtxEdit::Acquire { .. } => ".acquire.gpu".into(),
        PtxEdit::RemoveFence { .. } | PtxEdit::NarrowFence { .. } => String::new(),
    }
}

/// Delta-debugs a smallest set of fence insertions (device scope; `__syncwarp()` when
/// `warp`) that makes every tried seed pass, then confirms it on fresh seeds. Checks are statistical: a set can pass a
/// batch by luck (e.g. a fence that only narrows the window). When confirmation finds a
/// failure, the search starts over with the confirming seeds added to the batch, so the
/// next set must also survive them; repeated until a set survives a fresh batch.
fn search_fences(
    ck: &mut Checker,
    base: &Arc<Prepared>,
    cands: &[(u32, InstRef)],
    model: Model,
    warp: bool,
) -> Result<FenceSearch, MinimizeError> {
    let mut remaining_failure = None;
    let mut window = ck.opts.batch;
    let mut confirm_from = ck.opts.batch as u64;
    let debug = std::env::var_os("FENCEHOUND_DEBUG_MIN").is_some();
    let build = |set: &[(u32, InstRef)]| {
        let mut m = base.module.clone();
        for (_, at) in set {
            if warp {
                edit::insert_warp_sync_after(&mut m, at);
            } else {
                edit::insert_fence_after(&mut m, at, FenceScope::Device);
            }
        }
        m
    };
    let mut best: Vec<(u32, InstRef)> = cands.to_vec();
    for _round in 0..6 {
        // Whether every seed of the window passes with fences after `set`. A module that
        // cannot be prepared counts as failing; the error is returned after the search.
        let mut err: Option<MinimizeError> = None;
        let mut passes = |set: &[(u32, InstRef)], ck: &mut Checker| -> bool {
            let r = match ck.prep(&build(set)) {
                Ok(p) => ck
                    .first_failure(&p, &all_filters(), model, 0, window)
                    .is_none(),
                Err(e) => {
                    err.get_or_insert(e);
                    false
                }
            };
            if debug {
                let lines: Vec<u32> = set.iter().map(|(_, at)| at.ptx_line).collect();
                eprintln!(
                    "ddmin: fences after PTX lines {lines:?} over {window} seeds/p -> {}",
                    if r { "pass" } else { "fail" }
                );
            }
            r
        };
        let all_pass = passes(cands, ck);
        if !all_pass {
            // Even a fence after every candidate does not fix it (or a module failed).
            if let Some(e) = err {
                return Err(e);
            }
            let p = ck.prep(&build(cands))?;
            return Ok(FenceSearch {
                fences: cands.to_vec(),
                confirmed: false,
                remaining_failure: ck.first_failure(&p, &all_filters(), model, 0, window),
                everywhere_fails: true,
            });
        }
        let mut chosen = ddmin::ddmin(cands.to_vec(), &mut |set| passes(set, ck));
        chosen.sort();
        // Prefer the earlier of two adjacent placements: a fence after the store that
        // precedes a publishing store closes the window for good, while a fence after the
        // publishing store only narrows it — and may pass a batch by luck.
        for k in 0..chosen.len() {
            let Some(pos) = cands.iter().position(|c| *c == chosen[k]) else {
                continue;
            };
            if pos == 0
                || cands[pos - 1].1.function != chosen[k].1.function
                || chosen.contains(&cands[pos - 1])
            {
                continue;
            }
            let mut alt = chosen.clone();
            alt[k] = cands[pos - 1].clone();
            if passes(&alt, ck) {
                chosen = alt;
            }
        }
        // Moves can make another fence unnecessary: reduce once more.
        chosen.sort();
        let mut chosen = ddmin::ddmin(chosen, &mut |set| passes(set, ck));
        if let Some(e) = err {
            return Err(e);
        }
        chosen.sort();
        best = chosen.clone();
        let p = ck.prep(&build(&chosen))?;
        match ck.first_failure(&p, &all_filters(), model, confirm_from, ck.opts.confirm) {
            None => {
                return Ok(FenceSearch {
                    fences: chosen,
                    confirmed: true,
                    remaining_failure: None,
                    everywhere_fails: false,
                })
            }
            Some(f) => {
                remaining_failure = Some(f);
                window = (confirm_from + ck.opts.confirm as u64) as u32;
                confirm_from += ck.opts.confirm as u64;
            }
        }
    }
    Ok(FenceSearch {
        fences: best,
        confirmed: false,
        remaining_failure,
        everywhere_fails: false,
    })
}

/// What [`search_fences`] found.
struct FenceSearch {
    fences: Vec<(u32, InstRef)>,
    /// The set survived a fresh batch of seeds.
    confirmed: bool,
    /// The last failure seen with the set (None when confirmed).
    remaining_failure: Option<Failing>,
    /// Even an insertion after every candidate fails.
    everywhere_fails: bool,
}

/// The PLDI'16 baseline: a device fence after every global/shared access of every
/// function, reduced by delta debugging to a set that makes every tried seed pass.
pub fn baseline_fence_all(
    campaign: Arc<Campaign>,
    variant: &str,
    opts: Options,
) -> Result<BaselineReport, MinimizeError> {
    let start = Instant::now();
    let base = Arc::new(prepare(campaign.clone(), variant)?);
    let mut ck = Checker::new(campaign.clone(), variant, opts.clone());
    let st = Sites::new(&base.module)?;
    let ids: Vec<u32> = st
        .insts
        .iter()
        .filter(|i| {
            matches!(
                i.kind,
                InstKind::Access {
                    kind: AccessKind::Load | AccessKind::Store | AccessKind::Rmw,
                    ..
                }
            )
        })
        .filter_map(|i| st.id(&i.at))
        .collect();
    let cands: Vec<(u32, InstRef)> = st.refs(&ids);
    let found = search_fences(&mut ck, &base, &cands, opts.model, false)?;
    let fences = found
        .fences
        .iter()
        .map(|(_, at)| FenceSuggestion {
            after: st.site(at),
            side: FenceSide::Writer,
            scope: FenceScope::Device,
            insertion: FenceScope::Device.cuda().into(),
            ptx_insertion: FenceScope::Device.ptx().into(),
            block_scope_fails: None,
            fix: FixKind::DeviceFence,
            reason: String::new(),
            options: Vec::new(),
            source: None,
            fit: None,
        })
        .collect();
    ck.save_cache();
    ck.check_oracle()?;
    Ok(BaselineReport {
        campaign: campaign.name.clone(),
        variant: variant.into(),
        candidates: cands.len(),
        fences,
        confirmed: found.confirmed,
        executions: ck.executions,
        cached: ck.cached,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}
