//! The minimizer: from a failing variant to the fences that fix it, and from a passing one
//! to the fences it does not need.
//!
//! `minimize` (Bugaroo's bisection, generalised):
//! 1. which space — buffer only global stores, then only shared stores (same seeds);
//! 2. which kernel — buffer one kernel's launches at a time;
//! 3. which stores — delta debugging over static store sites for a smallest set whose
//!    buffering still fails;
//! 4. where the fence goes — a candidate device-scope fence after every store of the
//!    implicated space; delta debugging finds a smallest set that makes every tried seed
//!    pass; confirmed on a fresh batch and repeated until nothing fails, so several
//!    missing fences are all found (Bugaroo finds one at a time); then each fence is
//!    narrowed to block scope when that passes under the `scoped` model.
//!
//! `audit`: each existing fence removed in turn — necessary (with a failing seed) or
//! likely redundant (0 failures in N runs: failure probability < 3/N at 95%, the rule of
//! three) — and each device-scope fence narrowed to block scope under `scoped`.
//!
//! `baseline_fence_all` is the PLDI'16 approach (Sorensen & Donaldson): a fence after every
//! memory access, then reduce — implemented for comparison.
//!
//! Every check runs executions through `fencehound_fuzzer::execute`; results are cached by
//! (PTX hash, filters, model, p, seed), so re-running with more runs resumes.

pub mod ddmin;
pub mod edit;

use edit::{FenceScope, InstRef};
use fencehound_fuzzer::{
    execute, prepare, prepare_with_ptx, Campaign, ExecSpec, Filters, Prepared,
};
use fencehound_handlers::Model;
use fencehound_vgpu::{AccessKind, AccessSpace, Device, SchedulerKind, SiteOp};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum MinimizeError {
    #[error(transparent)]
    Prepare(#[from] fencehound_fuzzer::PrepareError),
    #[error("{0}")]
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub model: Model,
    pub ps: Vec<f64>,
    /// Seeds per `p_w` in each check.
    pub batch: u32,
    /// Fresh seeds per `p_w` to confirm a result.
    pub confirm: u32,
    /// Seeds per `p_w` for each fence in `audit`.
    pub audit_runs: u32,
    pub master_seed: u64,
    pub scheduler: SchedulerKind,
    pub jobs: usize,
    /// Cache file (created if missing).
    pub cache: Option<PathBuf>,
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
    pub cuda: Option<SourceLoc>,
    /// The CUDA source line's text.
    pub statement: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FenceSuggestion {
    /// Insert after this instruction.
    pub after: Site,
    pub scope: FenceScope,
    /// `__threadfence();` or `__threadfence_block();`
    pub insertion: String,
    pub ptx_insertion: String,
    /// Under `scoped`, the block-scope version failed with this execution.
    pub block_scope_fails: Option<Failing>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MinimizeReport {
    pub campaign: String,
    pub variant: String,
    pub model: String,
    /// The failure that started the search (None: nothing failed, nothing to do).
    pub failure: Option<Failing>,
    pub global_alone: Option<Failing>,
    pub shared_alone: Option<Failing>,
    pub spaces: Vec<String>,
    pub kernels: Vec<String>,
    /// A smallest set of store sites whose buffering still fails.
    pub stores: Vec<Site>,
    pub fences: Vec<FenceSuggestion>,
    /// The final set passed the fresh confirmation batch.
    pub confirmed: bool,
    pub remaining_failure: Option<Failing>,
    /// Unified diff of the CUDA source.
    pub diff: String,
    pub ptx_change: String,
    pub executions: u64,
    /// Executions answered from the cache instead of run.
    #[serde(default)]
    pub cached: u64,
    pub wall_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum FenceVerdict {
    Necessary {
        failing: Failing,
    },
    LikelyRedundant {
        runs: u64,
        failure_probability_below: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FenceAudit {
    pub fence: Site,
    pub scope: FenceScope,
    pub verdict: FenceVerdict,
    /// For device-scope fences: does block scope suffice under `scoped`?
    pub block_scope: Option<FenceVerdict>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    pub campaign: String,
    pub variant: String,
    pub model: String,
    /// The variant as is fails (audit results are then less meaningful).
    pub base_failure: Option<Failing>,
    pub fences: Vec<FenceAudit>,
    /// Unified diff removing the likely redundant fences.
    pub diff: String,
    pub executions: u64,
    /// Executions answered from the cache instead of run.
    #[serde(default)]
    pub cached: u64,
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

/// (order, p, seed, failure summary, oracle error) of one check execution.
type CheckResult = (usize, f64, u64, Option<String>, Option<String>);

/// Seeds of checks come from their own ChaCha stream range, apart from `fuzz` ids.
const CHECK_STREAM: u64 = 1 << 40;

struct Checker {
    campaign: Arc<Campaign>,
    variant: String,
    opts: Options,
    executions: u64,
    /// Executions answered from the cache.
    cached: u64,
    /// An oracle that could not judge: the search's results are void.
    oracle_error: Option<String>,
    cache: HashMap<String, Option<String>>,
    preps: HashMap<String, Arc<Prepared>>,
}

impl Checker {
    fn new(campaign: Arc<Campaign>, variant: &str, opts: Options) -> Checker {
        let cache = opts
            .cache
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        Checker {
            campaign,
            variant: variant.to_string(),
            opts,
            executions: 0,
            cached: 0,
            oracle_error: None,
            cache,
            preps: HashMap::new(),
        }
    }

    /// The cache key of one execution: program, filters, model, p_w, seed, scheduler.
    fn key(&self, prep: &Prepared, filters: &Filters, model: Model, p: f64, seed: u64) -> String {
        format!(
            "{}|{filters:?}|{}|{p}|{seed}|{:?}",
            prep.ptx_sha256,
            model.name(),
            self.opts.scheduler
        )
    }

    /// Fails the search if an oracle could not judge some execution.
    fn check_oracle(&self) -> Result<(), MinimizeError> {
        match &self.oracle_error {
            Some(m) => Err(MinimizeError::Other(format!(
                "the oracle could not judge an execution, so the search was stopped: {m}"
            ))),
            None => Ok(()),
        }
    }

    fn save_cache(&self) {
        if let Some(p) = &self.opts.cache {
            if let Ok(text) = serde_json::to_string(&self.cache) {
                let tmp = p.with_extension("tmp");
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, p);
                }
            }
        }
    }

    fn prep(&mut self, module: &fencehound_ptx::Module) -> Result<Arc<Prepared>, MinimizeError> {
        let ptx = fencehound_ptx::print(module);
        let key = fencehound_fuzzer::execution::sha256_hex(ptx.as_bytes());
        if let Some(p) = self.preps.get(&key) {
            return Ok(p.clone());
        }
        let p = Arc::new(prepare_with_ptx(self.campaign.clone(), &self.variant, ptx)?);
        self.preps.insert(key, p.clone());
        Ok(p)
    }

    /// Runs seeds `from..from+n` for every p; returns the first failure in (p, seed) order.
    fn first_failure(
        &mut self,
        prep: &Arc<Prepared>,
        filters: &Filters,
        model: Model,
        from: u64,
        n: u32,
    ) -> Option<Failing> {
        let mut todo: Vec<(usize, f64, u64)> = Vec::new();
        let mut order = 0;
        let mut known: BTreeMap<usize, Option<String>> = BTreeMap::new();
        for &p in &self.opts.ps {
            for i in from..from + n as u64 {
                let seed =
                    fencehound_fuzzer::seeds::exec_seed(self.opts.master_seed, CHECK_STREAM + i);
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
            if first_known.is_some_and(|k| k < chunk[0].0) {
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
                    Some(m) => {
                        self.oracle_error.get_or_insert(m);
                    }
                    None => {
                        let key = self.key(prep, filters, model, p, seed);
                        self.cache.insert(key, v.clone());
                    }
                }
                failed |= v.is_some();
                known.insert(ord, v);
            }
            if failed {
                break;
            }
        }
        let (ord, v) = known.iter().find(|(_, v)| v.is_some())?;
        let p = self.opts.ps[ord / n as usize];
        let i = from + (ord % n as usize) as u64;
        Some(Failing {
            seed: fencehound_fuzzer::seeds::exec_seed(self.opts.master_seed, CHECK_STREAM + i),
            p,
            model: model.name().into(),
            verdict: v.clone().unwrap_or_default(),
        })
    }
}

/// Static information about the module's instructions.
struct Sites {
    infos: Vec<fencehound_vgpu::SiteInfo>,
    /// (site, space) of every store.
    stores: Vec<(u32, AccessSpace)>,
    /// Every global/shared/generic access (for the fence-everything baseline).
    accesses: Vec<u32>,
}

impl Sites {
    /// The (site, place) of each site id, for fence candidates.
    fn refs(&self, ids: &[u32]) -> Vec<(u32, InstRef)> {
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
}

fn sites(module: &fencehound_ptx::Module) -> Result<Sites, MinimizeError> {
    let mut dev = Device::new();
    let id = dev
        .load_module(module)
        .map_err(|e| MinimizeError::Other(e.to_string()))?;
    let prog = dev
        .program(id)
        .ok_or_else(|| MinimizeError::Other("module did not load".into()))?;
    let mut stores = Vec::new();
    let mut accesses = Vec::new();
    for (site, op) in prog.site_ops() {
        if let SiteOp::Access {
            kind,
            space: space @ (AccessSpace::Global | AccessSpace::Shared | AccessSpace::Generic),
            ..
        } = op
        {
            if kind == AccessKind::Store {
                stores.push((site, space));
            }
            accesses.push(site);
        }
    }
    Ok(Sites {
        infos: prog.sites.clone(),
        stores,
        accesses,
    })
}

fn source_lines(campaign: &Campaign) -> Option<Vec<String>> {
    if campaign.source.extension().and_then(|e| e.to_str()) != Some("cu") {
        return None;
    }
    std::fs::read_to_string(&campaign.source)
        .ok()
        .map(|t| t.lines().map(String::from).collect())
}

fn site(
    campaign: &Campaign,
    lines: &Option<Vec<String>>,
    info: &fencehound_vgpu::SiteInfo,
) -> Site {
    let src_name = campaign
        .source
        .file_name()
        .map(|s| s.to_string_lossy().into_owned());
    let cuda = info
        .cuda
        .as_ref()
        .filter(|c| c.line > 0)
        .map(|c| SourceLoc {
            file: c.file.clone(),
            line: c.line,
            col: c.col,
        });
    let statement = cuda.as_ref().and_then(|c| {
        let same = Path::new(&c.file)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            == src_name;
        if !same {
            return None;
        }
        lines
            .as_ref()?
            .get(c.line as usize - 1)
            .map(|l| l.trim().to_string())
    });
    Site {
        at: InstRef {
            function: info.function.clone(),
            ptx_line: info.ptx_line,
        },
        ptx: info.text.clone(),
        cuda,
        statement,
    }
}

/// The unified diff of inserting fences after the given CUDA lines.
pub fn insertion_diff(campaign: &Campaign, fences: &[FenceSuggestion]) -> String {
    let Some(lines) = source_lines(campaign) else {
        return String::new();
    };
    let mut after: BTreeMap<u32, &'static str> = BTreeMap::new();
    for f in fences {
        if let (Some(c), Some(_)) = (&f.after.cuda, &f.after.statement) {
            let e = after.entry(c.line).or_insert(f.scope.cuda());
            if f.scope == FenceScope::Device {
                *e = FenceScope::Device.cuda();
            }
        }
    }
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        out.push(l.clone());
        if let Some(ins) = after.get(&(i as u32 + 1)) {
            let indent: String = l.chars().take_while(|c| c.is_whitespace()).collect();
            out.push(format!("{indent}{ins}"));
        }
    }
    unified(campaign, &lines, &out)
}

fn unified(campaign: &Campaign, old: &[String], new: &[String]) -> String {
    let a = old.join("\n") + "\n";
    let b = new.join("\n") + "\n";
    if a == b {
        return String::new();
    }
    let name = campaign.source.display().to_string();
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// Applies the suggestions' insertions to the source text (for "apply and fuzz again").
pub fn apply_insertions(source: &str, fences: &[FenceSuggestion]) -> String {
    let mut after: BTreeMap<u32, &'static str> = BTreeMap::new();
    for f in fences {
        if let Some(c) = &f.after.cuda {
            after.insert(c.line, f.scope.cuda());
        }
    }
    let mut out = String::new();
    for (i, l) in source.lines().enumerate() {
        out.push_str(l);
        out.push('\n');
        if let Some(ins) = after.get(&(i as u32 + 1)) {
            let indent: String = l.chars().take_while(|c| c.is_whitespace()).collect();
            out.push_str(&format!("{indent}{ins}\n"));
        }
    }
    out
}

fn all_filters() -> Filters {
    Filters::default()
}

/// Finds the missing fences of a failing variant.
pub fn minimize(
    campaign: Arc<Campaign>,
    variant: &str,
    opts: Options,
) -> Result<MinimizeReport, MinimizeError> {
    let start = Instant::now();
    let base = Arc::new(prepare(campaign.clone(), variant)?);
    let mut ck = Checker::new(campaign.clone(), variant, opts.clone());
    ck.preps.insert(base.ptx_sha256.clone(), base.clone());
    let model = opts.model;
    let b = opts.batch;
    let mut report = MinimizeReport {
        campaign: campaign.name.clone(),
        variant: variant.into(),
        model: model.name().into(),
        ..Default::default()
    };
    report.failure = ck.first_failure(&base, &all_filters(), model, 0, b);
    if report.failure.is_none() {
        report.executions = ck.executions;
        report.cached = ck.cached;
        report.wall_seconds = start.elapsed().as_secs_f64();
        ck.save_cache();
        ck.check_oracle()?;
        return Ok(report);
    }
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
    let kernels: BTreeSet<String> = campaign.launches.iter().map(|l| l.kernel.clone()).collect();
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
    let st = sites(&base.module)?;
    let lines = source_lines(&campaign);
    let in_space = |sp: AccessSpace| match sp {
        AccessSpace::Global => g,
        AccessSpace::Shared => s,
        _ => true,
    };
    let candidates: Vec<u32> = st
        .stores
        .iter()
        .filter(|(_, sp)| in_space(*sp))
        .map(|(id, _)| *id)
        .collect();
    let minimal = {
        let fref = filters.clone();
        ddmin::ddmin(candidates.clone(), &mut |set: &[u32]| {
            let f = Filters {
                sites: Some(set.iter().copied().collect()),
                ..fref.clone()
            };
            ck.first_failure(&base, &f, model, 0, b).is_some()
        })
    };
    report.stores = minimal
        .iter()
        .filter_map(|id| st.infos.get(*id as usize))
        .map(|i| site(&campaign, &lines, i))
        .collect();
    // 4. Where the fence goes: after each store of the implicated space.
    let cand_refs: Vec<(u32, InstRef)> = st.refs(&candidates);
    let found = search_fences(&mut ck, &base, &cand_refs, model)?;
    report.confirmed = found.confirmed;
    report.remaining_failure = found.remaining_failure;
    let fixed = found.fences;
    // Narrow each to block scope where that passes under `scoped`.
    let mut suggestions = Vec::new();
    for (k, (id, at)) in fixed.iter().enumerate() {
        let mut m = base.module.clone();
        for (j, (_, other)) in fixed.iter().enumerate() {
            let scope = if j == k {
                FenceScope::Block
            } else {
                FenceScope::Device
            };
            edit::insert_fence_after(&mut m, other, scope);
        }
        let prep = ck.prep(&m)?;
        let fail = ck.first_failure(&prep, &all_filters(), Model::Scoped, 0, b);
        let scope = if fail.is_none() {
            FenceScope::Block
        } else {
            FenceScope::Device
        };
        let info = &st.infos[*id as usize];
        let _ = at;
        suggestions.push(FenceSuggestion {
            after: site(&campaign, &lines, info),
            scope,
            insertion: scope.cuda().into(),
            ptx_insertion: scope.ptx().into(),
            block_scope_fails: fail,
        });
    }
    report.ptx_change = suggestions
        .iter()
        .map(|f| {
            format!(
                "insert `{}` after PTX line {} of `{}`: `{}`",
                f.ptx_insertion, f.after.at.ptx_line, f.after.at.function, f.after.ptx
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    report.diff = insertion_diff(&campaign, &suggestions);
    report.fences = suggestions;
    report.executions = ck.executions;
    report.cached = ck.cached;
    report.wall_seconds = start.elapsed().as_secs_f64();
    ck.save_cache();
    ck.check_oracle()?;
    Ok(report)
}

/// Delta-debugs a smallest set of fence insertions (device scope) that makes every tried
/// seed pass, then confirms it on fresh seeds. Checks are statistical: a set can pass a
/// batch by luck (e.g. a fence that only narrows the window). When confirmation finds a
/// failure, the search starts over with the confirming seeds added to the batch, so the
/// next set must also survive them; repeated until a set survives a fresh batch.
fn search_fences(
    ck: &mut Checker,
    base: &Arc<Prepared>,
    cands: &[(u32, InstRef)],
    model: Model,
) -> Result<FenceSearch, MinimizeError> {
    let mut remaining_failure = None;
    let mut window = ck.opts.batch;
    let mut confirm_from = ck.opts.batch as u64;
    let debug = std::env::var_os("FENCEHOUND_DEBUG_MIN").is_some();
    let build = |set: &[(u32, InstRef)]| {
        let mut m = base.module.clone();
        for (_, at) in set {
            edit::insert_fence_after(&mut m, at, FenceScope::Device);
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
    })
}

/// What [`search_fences`] found.
struct FenceSearch {
    fences: Vec<(u32, InstRef)>,
    /// The set survived a fresh batch of seeds.
    confirmed: bool,
    /// The last failure seen with the set (None when confirmed).
    remaining_failure: Option<Failing>,
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
    let model = opts.model;
    let n = opts.audit_runs;
    let base_failure = ck.first_failure(&base, &all_filters(), model, 0, n);
    let st = sites(&base.module)?;
    let lines = source_lines(&campaign);
    let mut audits = Vec::new();
    let runs_total = n as u64 * opts.ps.len() as u64;
    for (at, inst) in edit::fences(&base.module) {
        let info = st
            .infos
            .iter()
            .find(|i| i.function == at.function && i.ptx_line == at.ptx_line);
        let Some(info) = info else { continue };
        let mut m = base.module.clone();
        edit::remove_fence(&mut m, &at);
        let p = ck.prep(&m)?;
        let verdict = match ck.first_failure(&p, &all_filters(), model, 0, n) {
            Some(f) => FenceVerdict::Necessary { failing: f },
            None => FenceVerdict::LikelyRedundant {
                runs: runs_total,
                failure_probability_below: 3.0 / runs_total.max(1) as f64,
            },
        };
        let scope = if edit::is_cta_fence(&inst) {
            FenceScope::Block
        } else {
            FenceScope::Device
        };
        let block_scope =
            if scope == FenceScope::Device && matches!(verdict, FenceVerdict::Necessary { .. }) {
                let mut m = base.module.clone();
                edit::narrow_fence(&mut m, &at);
                let p = ck.prep(&m)?;
                Some(
                    match ck.first_failure(&p, &all_filters(), Model::Scoped, 0, n) {
                        Some(f) => FenceVerdict::Necessary { failing: f },
                        None => FenceVerdict::LikelyRedundant {
                            runs: runs_total,
                            failure_probability_below: 3.0 / runs_total.max(1) as f64,
                        },
                    },
                )
            } else {
                None
            };
        audits.push(FenceAudit {
            fence: site(&campaign, &lines, info),
            scope,
            verdict,
            block_scope,
        });
    }
    // Diff: remove likely-redundant fences whose source line is a lone statement.
    let mut diff = String::new();
    if let Some(src) = source_lines(&campaign) {
        let drop: BTreeSet<u32> = audits
            .iter()
            .filter(|a| matches!(a.verdict, FenceVerdict::LikelyRedundant { .. }))
            .filter_map(|a| {
                let c = a.fence.cuda.as_ref()?;
                let s = a.fence.statement.as_ref()?;
                (s.ends_with(';') && s.matches(';').count() == 1).then_some(c.line)
            })
            .collect();
        let new: Vec<String> = src
            .iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(&(*i as u32 + 1)))
            .map(|(_, l)| l.clone())
            .collect();
        diff = unified(&campaign, &src, &new);
    }
    ck.save_cache();
    ck.check_oracle()?;
    Ok(AuditReport {
        campaign: campaign.name.clone(),
        variant: variant.into(),
        model: model.name().into(),
        base_failure,
        fences: audits,
        diff,
        executions: ck.executions,
        cached: ck.cached,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
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
    let st = sites(&base.module)?;
    let lines = source_lines(&campaign);
    let cands: Vec<(u32, InstRef)> = st.refs(&st.accesses);
    let found = search_fences(&mut ck, &base, &cands, opts.model)?;
    let fences = found
        .fences
        .iter()
        .map(|(id, _)| FenceSuggestion {
            after: site(&campaign, &lines, &st.infos[*id as usize]),
            scope: FenceScope::Device,
            insertion: FenceScope::Device.cuda().into(),
            ptx_insertion: FenceScope::Device.ptx().into(),
            block_scope_fails: None,
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
