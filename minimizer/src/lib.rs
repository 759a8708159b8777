//! The minimizer: from a failing variant to the fences that fix it, and from a passing one
//! to the fences it does not need — in both cases ending with a source patch that was
//! compiled and fuzzed before it is shown as a fix.
//!
//! `minimize` (Bugaroo's bisection, generalised; [`minimize`](crate::minimize::minimize)):
//! 1. which space — buffer only global stores, then only shared stores (same seeds);
//! 2. which kernel — buffer one kernel's launches at a time;
//! 3. which stores — delta debugging over static store sites for a smallest set whose
//!    buffering still fails;
//! 4. where the fence goes — a candidate device-scope fence after every store of the
//!    implicated space (and, under a model that delays loads, after every load and atomic
//!    of it: reader-side fences); delta debugging finds a smallest set that makes every
//!    tried seed pass; confirmed on a fresh batch and repeated until nothing fails;
//! 5. the cheapest fix per fence — `__syncwarp()` (warp-synchronous code), a block-scope
//!    fence, a release store / acquire load where the code uses libcu++, widening an
//!    existing `__threadfence_block()`, a new `__threadfence()` — ranked by cost, each
//!    tried, the cheapest that passes kept, with the reason. The PTX copies of one source
//!    line (an unrolled loop, an inlined helper) are judged together, each kind of fix
//!    applied to all of them at once, so a line gets one fix; fences the search put after
//!    several statements of one line are first moved after the line's last access (kept
//!    only if that passes the batch and a fresh one). Narrower scopes (`__syncwarp()`,
//!    `__threadfence_block()`) are judged only when a model of the run sees scopes
//!    (`scoped`, `weak`): under `bugaroo` every scope drains the same buffer, so the
//!    device-scope fix is recommended and the report's `scope_note` says the scope
//!    question needs `--model scoped` or `weak`;
//! 6. the source patch — statement-exact, in the user's own files ([`source`]);
//! 7. verification — the patched source is compiled and fuzzed on fresh seeds under every
//!    model of the run: "patch verified: 0 failures in N runs" or "patch NOT verified".
//!    A whole program (a program campaign) cannot go through NVRTC: its folder is mirrored
//!    with the patched files in place, the program is built there by the campaign's own
//!    build command, and that executable is fuzzed ([`source::Compiler`]);
//! 8. the source patch reduced — when it has several source edits, each is dropped in turn
//!    and the rest verified the same way; a drop that verifies stays dropped (the report's
//!    `source_reduced`). The PTX-level search fences PTX copies one by one and may fence
//!    some copies of an unrolled store after a neighbouring store instead, while a fence
//!    on the source line covers every copy.
//!
//! The search's `p_w`: with none strictly between 0 and 1 (`--p 1`, or a recorded failure
//! at `p_w = 1`) a model delays every access or none — never one access and not the next,
//! which most missing fences need — so the search runs at 0.5 as well and the report says
//! so (`added_ps`).
//!
//! Rare failures. The search starts from a failure: the first of the first batch, or a
//! failing execution a fuzz report recorded ([`Options::known`], `minimize REPORT --exec
//! ID`), re-run from its seed (it reproduces bit for bit; when it no longer fails the
//! report says so in `replay_failed` and nothing is minimized). The failure rate `f` —
//! the recorded cell's, or the first batch's — sizes every check: `n ≥ ln 0.05 /
//! ln(1 − f)` seeds per `p_w` ([`batch_for_rate`]), so a check sees a failure of that rate
//! with 95% probability; capped at [`Options::max_batch`] (the report's
//! [`BatchSizing`] says when, and the power left). Confirmation and verification run at
//! least as many seeds, and the recorded execution's seed is tried first in every check
//! of the search and in the verification, so a fix must also make that execution pass.
//!
//! `audit` ([`audit`](crate::audit::audit)): fences grouped by source statement (the PTX
//! copies of an unrolled loop or inlined helper together); each group removed — necessary
//! (with a failing seed), not exercised (a copy no execution reached), cannot be judged
//! (under a store-buffering model: acquire-side, or never drained anything; under every
//! model: a load ordered before a store, load buffering), or likely redundant; the likely
//! redundant ones are then removed together greedily, so two fences that are each
//! redundant given the other are not both removed; the removal patch is verified like
//! `minimize`'s. The module's documentation walks through these steps, each a function of
//! its own.
//!
//! `baseline_fence_all` is the PLDI'16 approach (Sorensen & Donaldson): a fence after every
//! memory access, then reduce — implemented for comparison.
//!
//! Every check runs executions through `fencehound_fuzzer::execute`; results are cached by
//! (PTX hash, filters, model, p, seed), so re-running with more runs resumes.

pub mod audit;
pub mod cxx;
pub mod ddmin;
pub mod edit;
pub mod minimize;
pub mod observe;
pub mod ptxinfo;
pub mod source;

pub use audit::{audit, AuditReport, FenceAudit, FenceCopy, FenceVerdict};
pub use minimize::SCOPE_BLIND;
pub use minimize::{
    baseline_fence_all, minimize, BaselineReport, FenceSide, FenceSuggestion, FixKind, FixOption,
    MinimizeReport,
};

use edit::InstRef;
use fencehound_fuzzer::{execute, prepare_with_ptx, Campaign, ExecSpec, Filters, Prepared};
use fencehound_handlers::Model;
use fencehound_vgpu::{Device, SchedulerKind};
use ptxinfo::{Frame, PtxInst};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The model `minimize` and `audit` use unless told otherwise: the strongest one
/// available. `weak` lets loads read stale values wherever PTX allows, so it judges both
/// sides of a fence; `scoped` (store buffering with CTA overlays) only the writer's side.
pub const DEFAULT_MODEL: Model = Model::Weak;

/// Whether a model lets loads read older values than memory holds. Store-buffering
/// models (`bugaroo`, `scoped`) never delay a load, so they cannot observe what a fence
/// orders after a load (its acquire side).
pub fn model_delays_loads(m: Model) -> bool {
    m.delays_loads()
}

/// Whether a model tells CTA scope from device scope (`scoped` publishes CTA-scope drains
/// only to the CTA; under `weak` a `.cta` release synchronizes only within the CTA).
pub fn model_sees_scopes(m: Model) -> bool {
    matches!(m, Model::Scoped | Model::Weak)
}

/// How much of the PTX memory model a model can show: a search runs under the strongest
/// model of the run.
pub fn model_strength(m: Model) -> u8 {
    match m {
        Model::Sc => 0,
        Model::Bugaroo => 1,
        Model::Scoped => 2,
        Model::Weak => 3,
    }
}

/// The default cap on a batch sized from the failure rate (seeds per `p_w`).
pub const DEFAULT_MAX_BATCH: u32 = 2000;

#[derive(Debug, thiserror::Error)]
pub enum MinimizeError {
    #[error(transparent)]
    Prepare(#[from] fencehound_fuzzer::PrepareError),
    #[error("{0}")]
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Options {
    /// The model the search runs under.
    pub model: Model,
    /// Every model of the run: alternatives are judged and the patch verified under each
    /// (`model` is always included).
    pub models: Vec<Model>,
    pub ps: Vec<f64>,
    /// Seeds per `p_w` in each check.
    pub batch: u32,
    /// Fresh seeds per `p_w` to confirm a result.
    pub confirm: u32,
    /// Seeds per `p_w` for each fence in `audit`.
    pub audit_runs: u32,
    /// Fresh seeds per `p_w` and model to verify the patched source.
    pub verify_runs: u32,
    pub master_seed: u64,
    pub scheduler: SchedulerKind,
    pub jobs: usize,
    /// Cache file (created if missing). Its results hold for the build that wrote them
    /// only ([`CacheFile`]).
    pub cache: Option<PathBuf>,
    /// A failing execution recorded by a fuzz run: the search starts from it.
    pub known: Option<KnownFailure>,
    /// The largest batch (seeds per `p_w`) the failure rate may ask for.
    pub max_batch: u32,
}

/// A failing execution a fuzz report recorded (`minimize REPORT --exec ID`). Its seed
/// reproduces it bit for bit; the report's cell gives the failure rate.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownFailure {
    /// Where it comes from: `report.json, execution 244`.
    pub origin: String,
    pub model: Model,
    pub p: f64,
    pub seed: u64,
    /// Failures and executions of its cell (variant × model × p_w) in the report.
    pub cell_failures: u64,
    pub cell_runs: u64,
    /// The PTX the report ran is not what the campaign compiles to now.
    pub ptx_changed: bool,
}

/// The confidence every check aims at: the chance that a batch shows the failure it is
/// looking for, when it fails at the measured rate.
pub const POWER: f64 = 0.95;

/// Seeds a check needs to see, with probability `power`, a failure that happens with
/// probability `rate` per execution: the least n with 1 − (1 − rate)^n ≥ power, i.e.
/// n ≥ ln(1 − power) / ln(1 − rate). `None` when `rate` is 0 (no batch is enough).
pub fn batch_for_rate(rate: f64, power: f64) -> Option<u64> {
    if rate.is_nan() || rate <= 0.0 || !(0.0..1.0).contains(&power) {
        return None;
    }
    if rate >= 1.0 {
        return Some(1);
    }
    let n = ((1.0 - power).ln() / (1.0 - rate).ln()).ceil();
    Some(if n.is_finite() && n >= 1.0 {
        n.min(u64::MAX as f64 / 2.0) as u64
    } else {
        1
    })
}

/// The chance that `n` executions show a failure of probability `rate` at least once.
pub fn power_of(rate: f64, n: u64) -> f64 {
    1.0 - (1.0 - rate.clamp(0.0, 1.0)).powf(n as f64)
}

/// How the checks' batches were sized from the failure rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchSizing {
    /// Failures and executions the rate was measured on, and where (`the report's cell`,
    /// `the first batch`).
    pub failures: u64,
    pub runs: u64,
    pub measured_on: String,
    pub rate: f64,
    /// Seeds per `p_w` for 95% power at that rate.
    pub needed: u64,
    /// Seeds per `p_w` each check runs (at least the `--batch` asked for).
    pub batch: u32,
    /// `needed` was above the maximum: the checks have less power than 95%.
    pub capped: bool,
    /// The power each check has at the measured rate.
    pub power: f64,
}

impl BatchSizing {
    pub fn describe(&self) -> String {
        let base = format!(
            "failure rate {:.3} ({} of {} on {}): {} seed(s) per p_w give a check {:.0}% power to see it",
            self.rate,
            self.failures,
            self.runs,
            self.measured_on,
            self.batch,
            self.power * 100.0
        );
        if self.capped {
            format!(
                "{base} — CAPPED: 95% power would need {} seeds, above the maximum (--max-batch); a check that passes is weaker evidence",
                self.needed
            )
        } else {
            base
        }
    }
}

impl Options {
    /// Defaults of the command line for one model.
    pub fn new(model: Model) -> Options {
        Options {
            model,
            models: vec![model],
            ps: vec![0.5, 1.0],
            batch: 20,
            confirm: 50,
            audit_runs: 100,
            verify_runs: 50,
            master_seed: 1,
            scheduler: SchedulerKind::Random,
            jobs: 2,
            cache: None,
            known: None,
            max_batch: DEFAULT_MAX_BATCH,
        }
    }

    /// The run's models, `model` first, without repeats.
    pub fn run_models(&self) -> Vec<Model> {
        let mut v = vec![self.model];
        for m in &self.models {
            if !v.contains(m) {
                v.push(*m);
            }
        }
        v
    }
}

/// A failing execution found by a check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failing {
    pub seed: u64,
    pub p: f64,
    pub model: String,
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

/// A static instruction, in PTX and CUDA terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Site {
    pub at: InstRef,
    pub ptx: String,
    /// The innermost CUDA location (inside a library header when the code is inlined
    /// from one).
    pub cuda: Option<SourceLoc>,
    /// The CUDA source line's text at `cuda`.
    pub statement: Option<String>,
    /// The whole inline stack, innermost first.
    #[serde(default)]
    pub stack: Vec<Frame>,
}

impl Site {
    /// `k.cu:42` or `PTX line 120 of `k``.
    pub fn location(&self) -> String {
        match &self.cuda {
            Some(c) => format!("{}:{}", ptxinfo::short(&c.file), c.line),
            None => format!("PTX line {} of `{}`", self.at.ptx_line, self.at.function),
        }
    }

    /// `k.cu:42 `statement`` (the location alone when the text is unknown).
    pub fn describe(&self) -> String {
        match (&self.cuda, &self.statement) {
            (Some(_), Some(st)) => format!("{} `{}`", self.location(), st),
            _ => self.location(),
        }
    }

    /// The inline path outward from the innermost frame: `h.cuh:3 ← k.cu:40`.
    pub fn inline_path(&self) -> String {
        self.stack
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join(" ← ")
    }
}

/// The result of compiling and fuzzing a patched source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub verified: bool,
    /// Executions run (seeds × p_w × models) until the first failure or the end.
    pub runs: u64,
    pub models: Vec<String>,
    pub failing: Option<Failing>,
    /// The patch did not compile or could not be prepared.
    pub error: Option<String>,
    /// The compiled patch makes exactly the PTX change that was searched and checked
    /// (same memory operations and fences in the same order).
    pub exact: bool,
    /// A whole program: the runs were of the patched program as its build command built
    /// it, not of the original running edited PTX.
    #[serde(default)]
    pub program: bool,
    /// `p_w` values the verification added to the run's (0.5 when no `p_w` of the run lies
    /// strictly between 0 and 1 and a model uses it: at 0 or 1 no model delays one access
    /// and not the next — [`Model::blind_at`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_ps: Vec<f64>,
}

impl Verification {
    /// "patch verified: 0 failures in N runs (models)" or "patch NOT verified: …".
    pub fn summary(&self) -> String {
        let models = self.models.join(", ");
        let what = if self.program {
            "the patched program (built with the campaign's build command)"
        } else {
            "the patched source"
        };
        let added = if self.added_ps.is_empty() {
            String::new()
        } else {
            let ps: Vec<String> = self.added_ps.iter().map(|p| p.to_string()).collect();
            format!(", also at p_w = {}", ps.join(", "))
        };
        if self.verified {
            format!(
                "patch verified: 0 failures in {} runs of {what} ({models}{added})",
                self.runs
            )
        } else if let Some(e) = &self.error {
            format!("patch NOT verified: {e}")
        } else if let Some(f) = &self.failing {
            format!(
                "patch NOT verified: {what} still fails (seed {}, p_w={}, {}: {})",
                f.seed, f.p, f.model, f.verdict
            )
        } else {
            "patch NOT verified".into()
        }
    }
}

/// (order, p, seed, failure summary, oracle error) of one check execution.
type CheckResult = (usize, f64, u64, Option<String>, Option<String>);

/// Seeds of checks come from their own ChaCha stream range, apart from `fuzz` ids.
const CHECK_STREAM: u64 = 1 << 40;
/// Seeds of patch verification: far from any check's seeds, so they are fresh.
pub(crate) const VERIFY_FROM: u64 = 1 << 30;
/// Seeds of observation runs (coverage, drains, communication).
pub(crate) const OBSERVE_FROM: u64 = 1 << 29;

pub(crate) struct Checker {
    campaign: Arc<Campaign>,
    variant: String,
    pub(crate) opts: Options,
    pub(crate) executions: u64,
    /// Executions answered from the cache.
    pub(crate) cached: u64,
    /// An oracle that could not judge: the search's results are void.
    oracle_error: Option<String>,
    cache: Executions,
    preps: HashMap<String, Arc<Prepared>>,
    /// (p, seed) of a known failing execution: tried first in every check that starts at
    /// seed 0 (the search's batches), so a fix must also make that execution pass.
    pub(crate) witnesses: Vec<(f64, u64)>,
}

/// What a cache file holds: the execution results of one build of the tool
/// ([`fencehound_fuzzer::report::build_identity`]). A file another build wrote (or one
/// in the older plain-map form, which named no build) is ignored and replaced: the
/// results were keyed by program, model, p_w and seed but not by the tool, so after an
/// upgrade that fixed a model a kept cache answered with the old model's executions —
/// an audit called two needed fences "likely redundant" from a cache the build before
/// the `weak` observation fix had written (2026-12-07).
/// `M` is the map, read, or a reference to it, written.
#[derive(serde::Serialize, serde::Deserialize)]
struct CacheFile<M> {
    tool: String,
    executions: M,
}

type Executions = HashMap<String, Option<String>>;

fn load_cache(path: Option<&PathBuf>) -> Executions {
    let Some(tool) = fencehound_fuzzer::report::build_identity() else {
        return HashMap::new();
    };
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<CacheFile<Executions>>(&t).ok())
        .filter(|f| f.tool == tool)
        .map(|f| f.executions)
        .unwrap_or_default()
}

impl Checker {
    pub(crate) fn new(campaign: Arc<Campaign>, variant: &str, opts: Options) -> Checker {
        let cache = load_cache(opts.cache.as_ref());
        Checker {
            campaign,
            variant: variant.to_string(),
            opts,
            executions: 0,
            cached: 0,
            oracle_error: None,
            cache,
            preps: HashMap::new(),
            witnesses: Vec::new(),
        }
    }

    /// The cache key of one execution: program, filters, model, p_w, seed, scheduler.
    fn key(&self, prep: &Prepared, filters: &Filters, model: Model, p: f64, seed: u64) -> String {
        format!(
            "{}|{filters:?}|{}|{p}|{seed}|{:?}",
            prep.identity(),
            model.name(),
            self.opts.scheduler
        )
    }

    pub(crate) fn campaign(&self) -> &Campaign {
        &self.campaign
    }

    pub(crate) fn seed(&self, i: u64) -> u64 {
        fencehound_fuzzer::seeds::exec_seed(self.opts.master_seed, CHECK_STREAM + i)
    }

    /// Fails the search if an oracle could not judge some execution.
    pub(crate) fn check_oracle(&self) -> Result<(), MinimizeError> {
        match &self.oracle_error {
            Some(m) => Err(MinimizeError::Other(format!(
                "the oracle could not judge an execution, so the search was stopped: {m}"
            ))),
            None => Ok(()),
        }
    }

    pub(crate) fn note_oracle_error(&mut self, m: String) {
        self.oracle_error.get_or_insert(m);
    }

    pub(crate) fn save_cache(&self) {
        let Some(tool) = fencehound_fuzzer::report::build_identity() else {
            return;
        };
        if let Some(p) = &self.opts.cache {
            let file = CacheFile {
                tool,
                executions: &self.cache,
            };
            if let Ok(text) = serde_json::to_string(&file) {
                let tmp = p.with_extension("tmp");
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, p);
                }
            }
        }
    }

    /// Records the verdict of an execution run outside [`Self::first_failure`].
    pub(crate) fn remember(
        &mut self,
        prep: &Prepared,
        model: Model,
        p: f64,
        seed: u64,
        failure: Option<String>,
    ) {
        let key = self.key(prep, &Filters::default(), model, p, seed);
        self.cache.insert(key, failure);
    }

    pub(crate) fn add(&mut self, prep: Arc<Prepared>) {
        self.preps.insert(prep.ptx_sha256.clone(), prep);
    }

    pub(crate) fn prep(
        &mut self,
        module: &fencehound_ptx::Module,
    ) -> Result<Arc<Prepared>, MinimizeError> {
        let ptx = fencehound_ptx::print(module);
        self.prep_ptx(ptx)
    }

    pub(crate) fn prep_ptx(&mut self, ptx: String) -> Result<Arc<Prepared>, MinimizeError> {
        let key = fencehound_fuzzer::sha256_hex(ptx.as_bytes());
        if let Some(p) = self.preps.get(&key) {
            return Ok(p.clone());
        }
        let p = Arc::new(prepare_with_ptx(self.campaign.clone(), &self.variant, ptx)?);
        self.preps.insert(key, p.clone());
        Ok(p)
    }

    /// The first failure over every model in `models` (seeds `from..from+n` per p each).
    pub(crate) fn first_failure_any(
        &mut self,
        prep: &Arc<Prepared>,
        models: &[Model],
        from: u64,
        n: u32,
    ) -> Option<Failing> {
        models
            .iter()
            .find_map(|m| self.first_failure(prep, &Filters::default(), *m, from, n))
    }

    /// Runs one execution (cached); the failure's summary, if it fails.
    pub(crate) fn run_one(
        &mut self,
        prep: &Arc<Prepared>,
        filters: &Filters,
        model: Model,
        p: f64,
        seed: u64,
    ) -> Option<String> {
        let key = self.key(prep, filters, model, p, seed);
        if let Some(v) = self.cache.get(&key) {
            self.cached += 1;
            return v.clone();
        }
        let spec = ExecSpec {
            id: 0,
            model,
            p,
            seed,
            scheduler: self.opts.scheduler,
            trace: false,
            filters: filters.clone(),
            race: false,
        };
        let r = execute(prep, &spec, None);
        self.executions += 1;
        if let fencehound_fuzzer::Verdict::OracleError { message } = &r.verdict {
            self.note_oracle_error(message.clone());
            return Some(r.verdict.summary());
        }
        let v = r.verdict.is_failure().then(|| r.verdict.summary());
        self.cache.insert(key, v.clone());
        v
    }

    /// Failures and executions over seeds `from..from+n` of every p (all of them run).
    pub(crate) fn count_failures(
        &mut self,
        prep: &Arc<Prepared>,
        filters: &Filters,
        model: Model,
        from: u64,
        n: u32,
    ) -> (u64, u64) {
        let known = self.run_batch(prep, filters, model, from, n, false);
        let fails = known.values().filter(|v| v.is_some()).count() as u64;
        let runs = known.len() as u64;
        (fails, runs)
    }

    /// Runs seeds `from..from+n` for every p; returns the first failure in (p, seed) order.
    /// A check of the search's batch (`from` = 0) first tries the known failing
    /// executions' seeds.
    pub(crate) fn first_failure(
        &mut self,
        prep: &Arc<Prepared>,
        filters: &Filters,
        model: Model,
        from: u64,
        n: u32,
    ) -> Option<Failing> {
        if from == 0 {
            for (p, seed) in self.witnesses.clone() {
                if let Some(v) = self.run_one(prep, filters, model, p, seed) {
                    return Some(Failing {
                        seed,
                        p,
                        model: model.name().into(),
                        verdict: v,
                    });
                }
            }
        }
        let known = self.run_batch(prep, filters, model, from, n, true);
        let (ord, v) = known.iter().find(|(_, v)| v.is_some())?;
        let p = self.opts.ps[ord / n as usize];
        let i = from + (ord % n as usize) as u64;
        Some(Failing {
            seed: self.seed(i),
            p,
            model: model.name().into(),
            verdict: v.clone().unwrap_or_default(),
        })
    }

    /// Runs seeds `from..from+n` for every p in parallel chunks (answers from the cache
    /// where known): the verdict by order (p-major). With `stop`, after the first chunk
    /// with a failure (or before any chunk after a known failure).
    fn run_batch(
        &mut self,
        prep: &Arc<Prepared>,
        filters: &Filters,
        model: Model,
        from: u64,
        n: u32,
        stop: bool,
    ) -> BTreeMap<usize, Option<String>> {
        let mut todo: Vec<(usize, f64, u64)> = Vec::new();
        let mut order = 0;
        let mut known: BTreeMap<usize, Option<String>> = BTreeMap::new();
        for &p in &self.opts.ps.clone() {
            for i in from..from + n as u64 {
                let seed = self.seed(i);
                let key = self.key(prep, filters, model, p, seed);
                match self.cache.get(&key) {
                    Some(v) => {
                        self.cached += 1;
                        known.insert(order, v.clone());
                    }
                    None => todo.push((order, p, seed)),
                }
                order += 1;
            }
        }
        // Already-known failures come first in order; otherwise run the rest in chunks,
        // stopping after the first chunk with a failure (deterministic for fixed `jobs`).
        let jobs = self.opts.jobs.max(1);
        let first_known = known.iter().find(|(_, v)| v.is_some()).map(|(k, _)| *k);
        for chunk in todo.chunks(jobs * 4) {
            if stop && first_known.is_some_and(|k| k < chunk[0].0) {
                break;
            }
            let results: Mutex<Vec<CheckResult>> = Mutex::new(Vec::new());
            let next = AtomicUsize::new(0);
            let sched = self.opts.scheduler;
            std::thread::scope(|s| {
                for _ in 0..jobs.min(chunk.len()) {
                    s.spawn(|| loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(ord, p, seed)) = chunk.get(k) else {
                            break;
                        };
                        let spec = ExecSpec {
                            id: 0,
                            model,
                            p,
                            seed,
                            scheduler: sched,
                            trace: false,
                            filters: filters.clone(),
                            race: false,
                        };
                        let r = execute(prep, &spec, None);
                        // An oracle that could not judge says nothing about the kernel: it
                        // counts as failing (so no fence is called redundant on its account),
                        // is never cached, and ends the search with an error.
                        let oracle_error = match &r.verdict {
                            fencehound_fuzzer::Verdict::OracleError { message } => {
                                Some(message.clone())
                            }
                            _ => None,
                        };
                        let v = (r.verdict.is_failure() || oracle_error.is_some())
                            .then(|| r.verdict.summary());
                        if let Ok(mut g) = results.lock() {
                            g.push((ord, p, seed, v, oracle_error));
                        }
                    });
                }
            });
            let results = results.into_inner().unwrap_or_default();
            self.executions += results.len() as u64;
            let mut failed = false;
            for (ord, p, seed, v, oracle_error) in results {
                match oracle_error {
                    Some(m) => self.note_oracle_error(m),
                    None => {
                        let key = self.key(prep, filters, model, p, seed);
                        self.cache.insert(key, v.clone());
                    }
                }
                failed |= v.is_some();
                known.insert(ord, v);
            }
            if stop && failed {
                break;
            }
        }
        known
    }

    /// Compiles the patched files, then fuzzes them on fresh seeds under every model.
    pub(crate) fn verify(
        &mut self,
        compiler: &mut source::Compiler,
        patch: &source::Patch,
        models: &[Model],
        exact: impl Fn(&source::Compiled) -> bool,
    ) -> Verification {
        let mut v = Verification {
            models: models.iter().map(|m| m.name().to_string()).collect(),
            ..Default::default()
        };
        let files: BTreeMap<PathBuf, String> = patch
            .files
            .iter()
            .map(|f| (f.absolute.clone(), f.new.clone()))
            .collect();
        let compiled = match compiler.compile(&files) {
            Ok(c) => c,
            Err(e) => {
                v.error = Some(format!("the patched source does not compile: {e}"));
                return v;
            }
        };
        v.exact = exact(&compiled);
        // A program campaign's patch is verified on the patched program as built.
        let built = compiled.program.as_ref().map(|p| p.prepared.clone());
        v.program = built.is_some();
        let prep = match built.map_or_else(|| self.prep_ptx(compiled.ptx.clone()), Ok) {
            Ok(p) => p,
            Err(e) => {
                v.error = Some(format!("the patched source cannot be run: {e}"));
                return v;
            }
        };
        let n = self.opts.verify_runs.max(1);
        let before = self.executions + self.cached;
        // The recorded failing execution's seed first: the patch must fix that one too.
        for m in models {
            for (p, seed) in self.witnesses.clone() {
                if v.failing.is_some() {
                    break;
                }
                if let Some(verdict) = self.run_one(&prep, &Filters::default(), *m, p, seed) {
                    v.failing = Some(Failing {
                        seed,
                        p,
                        model: m.name().into(),
                        verdict,
                    });
                }
            }
        }
        // The run's p_w values, and 0.5 when a model would otherwise never delay one
        // access and not the next (at p_w = 1 every model passes fixes that fail at 0.5:
        // [`Model::blind_at`]).
        let saved = self.opts.ps.clone();
        v.added_ps = mix_in(&mut self.opts.ps, models);
        if v.failing.is_none() {
            v.failing = self.first_failure_any(&prep, models, VERIFY_FROM, n);
        }
        self.opts.ps = saved;
        v.runs = self.executions + self.cached - before;
        v.verified = v.failing.is_none();
        v
    }
}

/// The p_w a run adds when it has none strictly between 0 and 1.
const MIXING_P: f64 = 0.5;

/// Adds [`MIXING_P`] to `ps` when some model of `models` is blind at them
/// ([`Model::blind_at`]: it would delay every access or none, never one access and not
/// the next), and returns what it added (for the report to say so).
pub(crate) fn mix_in(ps: &mut Vec<f64>, models: &[Model]) -> Vec<f64> {
    if models.iter().any(|m| m.blind_at(ps)) {
        ps.push(MIXING_P);
        vec![MIXING_P]
    } else {
        Vec::new()
    }
}

/// Static information about the module's instructions.
pub(crate) struct Sites {
    pub(crate) infos: Vec<fencehound_vgpu::SiteInfo>,
    /// Every instruction with its kind and inline stack, in site-id order.
    pub(crate) insts: Vec<PtxInst>,
    /// Site id of each instruction.
    pub(crate) ids: HashMap<InstRef, u32>,
}

impl Sites {
    pub(crate) fn new(module: &fencehound_ptx::Module) -> Result<Sites, MinimizeError> {
        let mut dev = Device::new();
        let id = dev
            .load_module(module)
            .map_err(|e| MinimizeError::Other(e.to_string()))?;
        let prog = dev
            .program(id)
            .ok_or_else(|| MinimizeError::Other("module did not load".into()))?;
        let infos = prog.sites.clone();
        let mut ids = HashMap::new();
        for (k, i) in infos.iter().enumerate() {
            ids.entry(InstRef {
                function: i.function.clone(),
                ptx_line: i.ptx_line,
            })
            .or_insert(k as u32);
        }
        let mut insts = ptxinfo::instructions(module);
        insts.retain(|i| ids.contains_key(&i.at));
        insts.sort_by_key(|i| ids[&i.at]);
        Ok(Sites { infos, insts, ids })
    }

    pub(crate) fn id(&self, at: &InstRef) -> Option<u32> {
        self.ids.get(at).copied()
    }

    pub(crate) fn inst(&self, at: &InstRef) -> Option<&PtxInst> {
        self.insts.iter().find(|i| &i.at == at)
    }

    /// The (site, place) of each site id, for fence candidates.
    pub(crate) fn refs(&self, ids: &[u32]) -> Vec<(u32, InstRef)> {
        ids.iter()
            .filter_map(|id| {
                let i = self.infos.get(*id as usize)?;
                Some((
                    *id,
                    InstRef {
                        function: i.function.clone(),
                        ptx_line: i.ptx_line,
                    },
                ))
            })
            .collect()
    }

    /// A report's view of an instruction.
    pub(crate) fn site(&self, at: &InstRef) -> Site {
        let info = self.id(at).and_then(|id| self.infos.get(id as usize));
        let stack = self.inst(at).map(|i| i.stack.clone()).unwrap_or_default();
        let cuda = stack.first().map(|f| SourceLoc {
            file: f.file.clone(),
            line: f.line,
            col: f.col,
        });
        let statement = cuda.as_ref().and_then(|c| {
            let text = std::fs::read_to_string(&c.file).ok()?;
            text.lines()
                .nth(c.line.checked_sub(1)? as usize)
                .map(|l| l.trim().to_string())
        });
        Site {
            at: at.clone(),
            ptx: info.map(|i| i.text.clone()).unwrap_or_default(),
            cuda,
            statement,
            stack,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_have_95_percent_power_at_the_measured_rate() {
        // n >= ln(0.05) / ln(1 - f)
        assert_eq!(batch_for_rate(0.05, POWER), Some(59));
        assert_eq!(batch_for_rate(0.045, POWER), Some(66));
        assert_eq!(batch_for_rate(0.5, POWER), Some(5));
        assert_eq!(batch_for_rate(1.0, POWER), Some(1));
        assert_eq!(batch_for_rate(0.0, POWER), None);
        assert_eq!(batch_for_rate(f64::NAN, POWER), None);
        for f in [0.001, 0.01, 0.02, 0.05, 0.1, 0.3, 0.9] {
            let n = batch_for_rate(f, POWER).unwrap();
            assert!(power_of(f, n) >= POWER, "{f}: {n}");
            assert!(
                power_of(f, n - 1) < POWER || n == 1,
                "{f}: {n} is not the least"
            );
        }
    }
}
