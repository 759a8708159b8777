//! The report of a fuzzing campaign.
//!
//! It holds everything needed to reproduce any execution — tool version, campaign text and
//! hashes, the exact PTX of every variant, models, `p_w` values, runs, master seed,
//! scheduler — so that execution `id` is replayable from `(master seed, id)` alone
//! ([`crate::Plan::job`]), whether it is stored here or not. What it stores stays small:
//! per cell (variant × model × `p_w`) the counts and 95% Wilson interval (Bugaroo's
//! Table IV), the first `keep_failures` failures of the cell in full, and the distinct
//! failure *signatures* (verdict kind, output hash, first differing element) each with
//! its count and first execution. Its size grows with the number of distinct failures,
//! not with the number of executions.
//!
//! Everything in it is a function of *which* executions ran, never of the order they
//! finished in or of how they were split: "first" always means the lowest execution id,
//! counts are sums, statistics merge associatively. That is what makes a report exactly
//! resumable (`done` records the finished execution ids, so a resumed run does the others)
//! and shard reports exactly mergeable ([`Report::merge`]): the merged summary is the one
//! the unsharded run writes, byte for byte. Wall-clock times are the only exception.
//!
//! A shard `I/N` owns the ids `≡ I (mod N)`; its `done` set counts positions in that
//! sequence (position `k` is id `I + k·N`), so it stays a handful of ranges.
//!
//! Written atomically (temporary file, then rename), also every few seconds while running.

use crate::verdict::{wilson95, Verdict};
use fencehound_handlers::BufferStats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Format 2: capped failures, signatures, done set, shards (format 1 stored every
/// failure and had no done set).
pub const FORMAT: u32 = 2;

/// Failures kept in full per cell unless the run says otherwise.
pub const DEFAULT_KEEP_FAILURES: u32 = 20;

/// Distinct failure signatures kept per cell unless the run says otherwise.
pub const DEFAULT_KEEP_SIGNATURES: u32 = 100;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub format: u32,
    pub tool: String,
    /// The build that wrote it ([`build_identity`]: the version and the executable's
    /// hash), so that `fuzz --resume` does not add executions of another build — the
    /// version alone does not change between commits, and a model fix changes what a
    /// seed's execution does. Absent in reports of older builds and in merged shards
    /// written by different builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    pub campaign: CampaignInfo,
    pub master_seed: u64,
    pub scheduler: String,
    pub models: Vec<String>,
    pub p: Vec<f64>,
    pub runs: u32,
    /// The race check ran alongside every execution.
    #[serde(default)]
    pub race: bool,
    /// The run stops at its first failure.
    #[serde(default)]
    pub stop_at_first: bool,
    /// Failures stored in full per cell (the lowest ids).
    pub keep_failures: u32,
    /// Distinct signatures kept per cell: when a cell has more, the ones whose key
    /// hashes lowest (a choice that does not depend on order, shards or resumption).
    pub keep_signatures: u32,
    /// This report covers the executions of one shard (`None`: all of them).
    #[serde(default)]
    pub shard: Option<Shard>,
    pub variants: Vec<VariantInfo>,
    /// Cells of the summary table, in plan order.
    pub summary: Vec<Cell>,
    /// The first `keep_failures` failures of each cell in full, by id.
    pub failures: Vec<ExecRecord>,
    /// Distinct failures per cell, in cell order and then by first id.
    pub signatures: Vec<Signature>,
    /// Per-variant buffer statistics, summed over executions.
    pub stats: BTreeMap<String, BufferStats>,
    /// Races found by the race check, deduplicated by (kernel, class, conflict, site pair)
    /// with occurrence and execution counts; the example shown is from the lowest id.
    #[serde(default)]
    pub races: Vec<RaceEntry>,
    /// Executions the oracle could not judge (not counted, not done). The runner stops
    /// at the first one; the CLI exits 2.
    #[serde(default)]
    pub oracle_errors: Vec<ExecRecord>,
    /// Executions of this report's shard (all of the plan without a shard).
    pub executions_planned: u64,
    pub executions_done: u64,
    /// Which executions are done: positions in this shard's id sequence.
    pub done: DoneSet,
    pub interrupted: bool,
    /// Wall-clock seconds, summed over resumed runs and merged shards.
    pub wall_seconds: f64,
    /// Where the executions ran: `vgpu`, `vgpu-instrumented` or `gpu`
    /// (see `crate::backend`), and on which device.
    #[serde(default = "default_backend")]
    pub backend: String,
    #[serde(default = "default_device")]
    pub device: String,
    /// Internal lookup tables, rebuilt after reading.
    #[serde(skip)]
    index: Index,
}

fn default_backend() -> String {
    "vgpu".into()
}

fn default_device() -> String {
    crate::backend::VGPU_DEVICE.into()
}

#[derive(Debug, Clone, Default)]
struct Index {
    /// Signature key → position in `signatures`.
    signatures: HashMap<SigKey, usize>,
    /// Cell → ids of its failures kept in full, ascending.
    kept: HashMap<CellKey, Vec<u64>>,
    /// Cell → its kept signatures by key hash.
    ranked: HashMap<CellKey, std::collections::BTreeSet<(u64, SigKey)>>,
    built: bool,
}

type CellKey = (String, String, u64);
type SigKey = (CellKey, String, String, String);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignInfo {
    pub name: String,
    /// The path as given on the command line.
    pub path: String,
    /// The same, absolute (`--resume` from another directory finds the file by it).
    #[serde(default)]
    pub abs_path: String,
    /// SHA-256 of the campaign file text and the source text (a digest of both).
    pub sha256: String,
    /// SHA-256 of the campaign file alone.
    #[serde(default)]
    pub campaign_sha256: String,
    /// Files the results depend on besides the campaign file: the kernel source, buffer
    /// contents and expected values read from files.
    #[serde(default)]
    pub sources: Vec<SourceHash>,
    /// The campaign file, verbatim (replay re-reads it from here).
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SourceHash {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantInfo {
    pub name: String,
    pub defines: BTreeMap<String, String>,
    pub expect: BTreeMap<String, String>,
    pub ptx_sha256: String,
    pub ptx: String,
}

/// One execution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExecRecord {
    pub id: u64,
    pub variant: String,
    pub model: String,
    pub p: f64,
    pub seed: u64,
    pub scheduler: String,
    pub verdict: Verdict,
    pub output_hash: String,
    pub lane_instructions: u64,
    pub wall_ms: u64,
    #[serde(default)]
    pub printf: String,
    /// The backend and device that ran it.
    #[serde(default = "default_backend")]
    pub backend: String,
    #[serde(default = "default_device")]
    pub device: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    pub variant: String,
    pub model: String,
    pub p: f64,
    pub runs: u64,
    pub failures: u64,
    pub rate: f64,
    pub ci95: (f64, f64),
    /// pass / fail / none: what the campaign expects.
    pub expect: Option<String>,
    /// `failing` (failures seen) or `clean` (none in `runs`).
    pub status: String,
    /// Run number (0-based, within the cell) of its first failure: the executions it
    /// took to find the bug are this + 1.
    #[serde(default)]
    pub first_failure_run: Option<u32>,
    /// Failures whose signature is not among the cell's kept signatures (the cell had
    /// more distinct failures than `keep_signatures`).
    #[serde(default)]
    pub failures_unsigned: u64,
}

/// A distinct way a cell failed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Signature {
    pub variant: String,
    pub model: String,
    pub p: f64,
    /// The verdict kind (`wrong-output`, `fault`, `timeout`, ...).
    pub kind: String,
    pub output_hash: String,
    /// The first differing element for wrong outputs (`c[0]: expected 26, got 11`),
    /// else the verdict's one-line summary.
    pub detail: String,
    pub count: u64,
    pub first_id: u64,
    pub first_seed: u64,
}

/// A race, the variant it was found in (site ids are per PTX, so races of different
/// variants are never merged) and the lowest execution id it was seen in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RaceEntry {
    pub variant: String,
    pub first_exec: u64,
    /// Position among the races of execution `first_exec`: with it, the list is kept in
    /// (first execution, position) order, so a report's race order does not depend on
    /// which job finished first.
    #[serde(skip)]
    pub position: usize,
    #[serde(flatten)]
    pub race: fencehound_racecheck::RaceReport,
}

/// Shard `index` of `count` owns the execution ids `≡ index (mod count)`: interleaved, so
/// every shard gets its share of every variant, model and `p_w`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole plan as one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// `I/N` with `I < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: expected I/N, e.g. 0/4"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: `{i}` is not a shard index"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: `{n}` is not a shard count"))?;
        if count == 0 {
            return Err(format!("`{s}`: the shard count must be at least 1"));
        }
        if index >= count {
            return Err(format!(
                "`{s}`: shard index {index} is out of range (0..{count}; shards are numbered from 0)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// How many of the ids `0..total` this shard owns.
    pub fn len(&self, total: u64) -> u64 {
        if total <= self.index {
            0
        } else {
            (total - self.index).div_ceil(self.count)
        }
    }

    pub fn id(&self, pos: u64) -> u64 {
        self.index + pos * self.count
    }

    /// The position of `id` in this shard's sequence, if the shard owns it.
    pub fn pos(&self, id: u64) -> Option<u64> {
        (id % self.count == self.index).then(|| id / self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A set of positions as sorted, disjoint, non-adjacent half-open ranges. Executions
/// finish nearly in order, so a run's set is one range plus a few stragglers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DoneSet(Vec<(u64, u64)>);

impl DoneSet {
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.0
    }

    pub fn len(&self) -> u64 {
        self.0.iter().map(|(a, b)| b - a).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The range holding `x`, or where one would go.
    fn find(&self, x: u64) -> Result<usize, usize> {
        let i = self.0.partition_point(|&(_, end)| end <= x);
        match self.0.get(i) {
            Some(&(start, _)) if start <= x => Ok(i),
            _ => Err(i),
        }
    }

    pub fn contains(&self, x: u64) -> bool {
        self.find(x).is_ok()
    }

    /// Adds `x`; false when it was already there.
    pub fn insert(&mut self, x: u64) -> bool {
        let i = match self.find(x) {
            Ok(_) => return false,
            Err(i) => i,
        };
        let joins_left = i > 0 && self.0[i - 1].1 == x;
        let joins_right = i < self.0.len() && self.0[i].0 == x + 1;
        match (joins_left, joins_right) {
            (true, true) => {
                self.0[i - 1].1 = self.0[i].1;
                self.0.remove(i);
            }
            (true, false) => self.0[i - 1].1 = x + 1,
            (false, true) => self.0[i].0 = x,
            (false, false) => self.0.insert(i, (x, x + 1)),
        }
        true
    }

    /// Every position in `0..n`.
    pub fn full(n: u64) -> DoneSet {
        if n == 0 {
            DoneSet::default()
        } else {
            DoneSet(vec![(0, n)])
        }
    }

    /// Checks the invariant (for sets read from files).
    fn valid(&self) -> bool {
        self.0.iter().all(|(a, b)| a < b) && self.0.windows(2).all(|w| w[0].1 < w[1].0)
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().flat_map(|&(a, b)| a..b)
    }
}

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge")]
    Empty,
    #[error("{what} differs between the reports ({a} vs {b}): they are not shards of one run")]
    Mismatch { what: String, a: String, b: String },
    #[error("shard {shard} is given twice")]
    Duplicate { shard: Shard },
    #[error("shards {missing} of {count} are missing (run them with --shard I/{count}, or pass their reports)")]
    Missing { missing: String, count: u64 },
    #[error(
        "a whole (unsharded) report cannot be merged with others: they would repeat its executions"
    )]
    NotAShard,
}

fn cell_key(variant: &str, model: &str, p: f64) -> CellKey {
    (variant.to_string(), model.to_string(), p.to_bits())
}

fn sig_key(s: &Signature) -> SigKey {
    (
        cell_key(&s.variant, &s.model, s.p),
        s.kind.clone(),
        s.output_hash.clone(),
        s.detail.clone(),
    )
}

/// A hash of a signature's key that is the same on every machine and run (the first 8
/// bytes of a SHA-256), for choosing which signatures a full cell keeps.
fn sig_hash(k: &SigKey) -> u64 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [
        k.0 .0.as_bytes(),
        k.0 .1.as_bytes(),
        &k.0 .2.to_le_bytes(),
        k.1.as_bytes(),
        k.2.as_bytes(),
        k.3.as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// What a failure looks like, for its signature: the first differing element of a wrong
/// output (first line of the oracle's diff), else the verdict's summary line.
fn signature_detail(v: &Verdict) -> String {
    match v {
        Verdict::WrongOutput {
            oracle,
            message,
            diff,
        } => match diff.lines().find(|l| !l.trim().is_empty()) {
            Some(l) => format!("{oracle}: {}", l.trim()),
            None => format!("{oracle}: {message}"),
        },
        v => v.summary().lines().next().unwrap_or_default().to_string(),
    }
}

impl Report {
    /// An empty report for a plan (the runner fills it).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        campaign: CampaignInfo,
        variants: Vec<VariantInfo>,
        master_seed: u64,
        scheduler: String,
        models: Vec<String>,
        p: Vec<f64>,
        runs: u32,
        executions_planned: u64,
    ) -> Report {
        Report {
            format: FORMAT,
            tool: tool_version(),
            build: build_identity(),
            campaign,
            master_seed,
            scheduler,
            models,
            p,
            runs,
            race: false,
            stop_at_first: false,
            keep_failures: DEFAULT_KEEP_FAILURES,
            keep_signatures: DEFAULT_KEEP_SIGNATURES,
            shard: None,
            variants,
            summary: Vec::new(),
            failures: Vec::new(),
            signatures: Vec::new(),
            stats: BTreeMap::new(),
            races: Vec::new(),
            oracle_errors: Vec::new(),
            executions_planned,
            executions_done: 0,
            done: DoneSet::default(),
            interrupted: false,
            wall_seconds: 0.0,
            backend: default_backend(),
            device: default_device(),
            index: Index::default(),
        }
    }

    /// Executions in the whole plan (all shards).
    pub fn plan_total(&self) -> u64 {
        self.variants.len() as u64
            * self.models.len() as u64
            * self.p.len() as u64
            * self.runs as u64
    }

    pub fn shard_or_whole(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }

    /// Whether execution `id` is done (counted in this report).
    pub fn is_done(&self, id: u64) -> bool {
        self.shard_or_whole()
            .pos(id)
            .is_some_and(|p| self.done.contains(p))
    }

    pub fn complete(&self) -> bool {
        self.executions_done >= self.executions_planned
    }

    fn build_index(&mut self) {
        if self.index.built {
            return;
        }
        let mut ix = Index {
            built: true,
            ..Index::default()
        };
        for (i, s) in self.signatures.iter().enumerate() {
            let key = sig_key(s);
            ix.ranked
                .entry(key.0.clone())
                .or_default()
                .insert((sig_hash(&key), key.clone()));
            ix.signatures.insert(key, i);
        }
        for f in &self.failures {
            ix.kept
                .entry(cell_key(&f.variant, &f.model, f.p))
                .or_default()
                .push(f.id);
        }
        for ids in ix.kept.values_mut() {
            ids.sort_unstable();
        }
        self.index = ix;
    }

    pub fn cell_mut(&mut self, variant: &str, model: &str, p: f64) -> &mut Cell {
        let i = match self
            .summary
            .iter()
            .position(|c| c.variant == variant && c.model == model && c.p == p)
        {
            Some(i) => i,
            None => {
                self.summary.push(Cell {
                    variant: variant.into(),
                    model: model.into(),
                    p,
                    runs: 0,
                    failures: 0,
                    rate: 0.0,
                    ci95: (0.0, 1.0),
                    expect: None,
                    status: String::new(),
                    first_failure_run: None,
                    failures_unsigned: 0,
                });
                self.summary.len() - 1
            }
        };
        &mut self.summary[i]
    }

    /// Merges one execution's races into the deduplicated list.
    pub fn add_races(
        &mut self,
        variant: &str,
        exec: u64,
        races: &[fencehound_racecheck::RaceReport],
    ) {
        for (position, r) in races.iter().enumerate() {
            let mut r = r.clone();
            r.executions = 1;
            self.add_race(RaceEntry {
                variant: variant.to_string(),
                first_exec: exec,
                position,
                race: r,
            });
        }
        self.races.sort_by_key(|e| (e.first_exec, e.position));
    }

    fn add_race(&mut self, e: RaceEntry) {
        let r = &e.race;
        let same = |x: &RaceEntry| {
            let v = &x.variant;
            let x = &x.race;
            *v == e.variant && x.same_race(r)
        };
        match self.races.iter_mut().find(|x| same(x)) {
            Some(x) => {
                let (occ, execs) = (
                    x.race.occurrences + e.race.occurrences,
                    x.race.executions + e.race.executions,
                );
                // Distinct addresses over all executions: the smallest ones when there are
                // too many, so the result does not depend on the order of merging.
                let mut addrs: std::collections::BTreeSet<u64> =
                    x.race.addresses.iter().copied().collect();
                addrs.extend(e.race.addresses.iter().copied());
                if e.first_exec < x.first_exec {
                    *x = e;
                }
                x.race.occurrences = occ;
                x.race.executions = execs;
                x.race.addresses = addrs
                    .into_iter()
                    .take(fencehound_racecheck::report::MAX_ADDRESSES)
                    .collect();
            }
            None => self.races.push(e),
        }
    }

    /// Records one execution. `run` is its run number within its cell (for the time to
    /// the first failure); `pos` its position in this report's shard.
    pub fn add(&mut self, rec: ExecRecord, run: u32, stats: &BufferStats) {
        if rec.verdict == Verdict::Interrupted {
            return;
        }
        if let Verdict::OracleError { .. } = rec.verdict {
            self.oracle_errors.push(rec);
            return;
        }
        let Some(pos) = self.shard_or_whole().pos(rec.id) else {
            return;
        };
        if !self.done.insert(pos) {
            return;
        }
        self.build_index();
        self.executions_done += 1;
        let fail = rec.verdict.is_failure();
        let cell = self.cell_mut(&rec.variant, &rec.model, rec.p);
        cell.runs += 1;
        cell.failures += fail as u64;
        cell.rate = cell.failures as f64 / cell.runs as f64;
        cell.ci95 = wilson95(cell.failures, cell.runs);
        cell.status = if cell.failures > 0 {
            "failing".into()
        } else {
            "clean".into()
        };
        if fail {
            cell.first_failure_run = Some(cell.first_failure_run.map_or(run, |r| r.min(run)));
        }
        self.stats
            .entry(rec.variant.clone())
            .or_default()
            .merge(stats);
        if fail {
            self.add_signature(Signature {
                variant: rec.variant.clone(),
                model: rec.model.clone(),
                p: rec.p,
                kind: rec.verdict.name().to_string(),
                output_hash: rec.output_hash.clone(),
                detail: signature_detail(&rec.verdict),
                count: 1,
                first_id: rec.id,
                first_seed: rec.seed,
            });
            self.keep_failure(rec);
        }
    }

    /// Adds a signature (or its count). A cell keeps at most `keep_signatures`: those
    /// whose key hashes lowest. A signature among the lowest of the whole run is among the
    /// lowest of every subset of its executions, so it is never evicted on the way and
    /// its count is exact, whatever the order, sharding or resumption (bottom-k sampling).
    fn add_signature(&mut self, s: Signature) {
        let key = sig_key(&s);
        if let Some(&i) = self.index.signatures.get(&key) {
            let x = &mut self.signatures[i];
            x.count += s.count;
            if s.first_id < x.first_id {
                x.first_id = s.first_id;
                x.first_seed = s.first_seed;
            }
            return;
        }
        let h = sig_hash(&key);
        let cap = self.keep_signatures as usize;
        let ranked = self.index.ranked.entry(key.0.clone()).or_default();
        if ranked.len() >= cap {
            match ranked.last() {
                Some((top, _)) if h < *top => {}
                _ => return,
            }
            let Some((_, evicted)) = ranked.pop_last() else {
                return;
            };
            if let Some(i) = self.index.signatures.remove(&evicted) {
                self.signatures.swap_remove(i);
                if let Some(moved) = self.signatures.get(i) {
                    self.index.signatures.insert(sig_key(moved), i);
                }
            }
        }
        ranked.insert((h, key.clone()));
        self.index.signatures.insert(key, self.signatures.len());
        self.signatures.push(s);
    }

    /// Keeps `rec` in full if it is among the `keep_failures` lowest ids of its cell.
    fn keep_failure(&mut self, rec: ExecRecord) {
        let k = self.keep_failures as usize;
        let ids = self
            .index
            .kept
            .entry(cell_key(&rec.variant, &rec.model, rec.p))
            .or_default();
        if ids.len() >= k {
            match ids.last() {
                Some(&last) if rec.id < last => {
                    ids.pop();
                    if let Ok(i) = self.failures.binary_search_by_key(&last, |f| f.id) {
                        self.failures.remove(i);
                    }
                }
                _ => return,
            }
        }
        let at = ids.partition_point(|&x| x < rec.id);
        ids.insert(at, rec.id);
        let at = self.failures.partition_point(|f| f.id < rec.id);
        self.failures.insert(at, rec);
    }

    /// Failures counted in the summary (stored in full or not).
    pub fn failure_count(&self) -> u64 {
        self.summary.iter().map(|c| c.failures).sum()
    }

    pub fn failed(&self) -> bool {
        self.failure_count() > 0
    }

    /// Puts cells, signatures and races in their canonical order and fills in the
    /// expectations: the same report whatever order executions finished in.
    pub fn finish(&mut self) {
        let variant_ix = |v: &str| self.variants.iter().position(|x| x.name == v);
        let model_ix = |m: &str| self.models.iter().position(|x| x == m);
        let p_ix = |p: f64| self.p.iter().position(|x| x.to_bits() == p.to_bits());
        let order = |v: &str, m: &str, p: f64| (variant_ix(v), model_ix(m), p_ix(p), p.to_bits());
        let mut summary = std::mem::take(&mut self.summary);
        summary.sort_by_key(|c| order(&c.variant, &c.model, c.p));
        for c in summary.iter_mut() {
            c.expect = self
                .variants
                .iter()
                .find(|v| v.name == c.variant)
                .and_then(|v| v.expect.get(&c.model).cloned());
        }
        let mut signed: HashMap<CellKey, u64> = HashMap::new();
        for x in &self.signatures {
            *signed
                .entry(cell_key(&x.variant, &x.model, x.p))
                .or_default() += x.count;
        }
        for c in summary.iter_mut() {
            let k = cell_key(&c.variant, &c.model, c.p);
            c.failures_unsigned = c
                .failures
                .saturating_sub(signed.get(&k).copied().unwrap_or(0));
        }
        let mut sigs = std::mem::take(&mut self.signatures);
        sigs.sort_by(|a, b| {
            order(&a.variant, &a.model, a.p)
                .cmp(&order(&b.variant, &b.model, b.p))
                .then(a.first_id.cmp(&b.first_id))
                .then_with(|| {
                    (&a.kind, &a.output_hash, &a.detail).cmp(&(&b.kind, &b.output_hash, &b.detail))
                })
        });
        self.summary = summary;
        self.signatures = sigs;
        self.races.sort_by_key(|r| r.first_exec);
        self.failures.sort_by_key(|f| f.id);
        self.oracle_errors.sort_by_key(|f| f.id);
        self.index.built = false;
    }

    /// Combines the reports of the shards of one run into the report the unsharded run
    /// would have written (wall-clock times aside: they are summed). Every shard must be
    /// there; a shard that did not finish leaves the result incomplete (and resumable).
    pub fn merge(parts: Vec<Report>) -> Result<Report, MergeError> {
        let mut parts = parts.into_iter();
        let first = parts.next().ok_or(MergeError::Empty)?;
        let rest: Vec<Report> = parts.collect();
        if rest.is_empty() && first.shard.is_none() {
            return Ok(first);
        }
        let count = first.shard.ok_or(MergeError::NotAShard)?.count;
        let mut seen = vec![false; count as usize];
        for r in std::iter::once(&first).chain(&rest) {
            let s = r.shard.ok_or(MergeError::NotAShard)?;
            first.same_run(r)?;
            if s.count != count {
                return Err(MergeError::Mismatch {
                    what: "the shard count".into(),
                    a: count.to_string(),
                    b: s.count.to_string(),
                });
            }
            if std::mem::replace(&mut seen[s.index as usize], true) {
                return Err(MergeError::Duplicate { shard: s });
            }
        }
        let missing: Vec<String> = seen
            .iter()
            .enumerate()
            .filter(|(_, s)| !**s)
            .map(|(i, _)| i.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(MergeError::Missing {
                missing: missing.join(", "),
                count,
            });
        }
        let total = first.plan_total();
        let mut out = first.clone();
        // Shards may come from different machines, whose executables differ: the
        // merged report names a build only when every shard was written by the same.
        if rest.iter().any(|r| r.build != first.build) {
            out.build = None;
        }
        out.shard = None;
        out.executions_planned = total;
        out.executions_done = 0;
        out.done = DoneSet::default();
        out.summary.clear();
        out.failures.clear();
        out.signatures.clear();
        out.stats.clear();
        out.races.clear();
        out.oracle_errors.clear();
        out.interrupted = false;
        out.wall_seconds = 0.0;
        out.index = Index::default();
        let all_complete = std::iter::once(&first)
            .chain(&rest)
            .all(|r| r.done == DoneSet::full(r.executions_planned));
        for r in std::iter::once(first).chain(rest) {
            out.absorb(r, !all_complete);
        }
        if all_complete {
            out.done = DoneSet::full(total);
        }
        out.interrupted = !out.complete();
        out.finish();
        Ok(out)
    }

    /// Adds a disjoint part's results (its done ids too, unless `ids` is false).
    fn absorb(&mut self, r: Report, ids: bool) {
        self.build_index();
        let shard = r.shard_or_whole();
        if ids {
            for pos in r.done.iter() {
                self.done.insert(shard.id(pos));
            }
        }
        self.executions_done += r.executions_done;
        self.wall_seconds += r.wall_seconds;
        for c in r.summary {
            let x = self.cell_mut(&c.variant, &c.model, c.p);
            x.runs += c.runs;
            x.failures += c.failures;
            x.rate = x.failures as f64 / x.runs as f64;
            x.ci95 = wilson95(x.failures, x.runs);
            x.status = if x.failures > 0 {
                "failing".into()
            } else {
                "clean".into()
            };
            x.first_failure_run = match (x.first_failure_run, c.first_failure_run) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        for (v, s) in &r.stats {
            self.stats.entry(v.clone()).or_default().merge(s);
        }
        for s in r.signatures {
            self.add_signature(s);
        }
        for f in r.failures {
            self.keep_failure(f);
        }
        for e in r.races {
            self.add_race(e);
        }
        self.oracle_errors.extend(r.oracle_errors);
    }

    /// Checks that `other` ran the same plan on the same inputs.
    pub fn same_run(&self, other: &Report) -> Result<(), MergeError> {
        let check = |what: &str, a: String, b: String| {
            if a == b {
                Ok(())
            } else {
                Err(MergeError::Mismatch {
                    what: what.into(),
                    a,
                    b,
                })
            }
        };
        check("the tool version", self.tool.clone(), other.tool.clone())?;
        check(
            "the campaign (hash of campaign and source)",
            self.campaign.sha256.clone(),
            other.campaign.sha256.clone(),
        )?;
        check(
            "the master seed",
            self.master_seed.to_string(),
            other.master_seed.to_string(),
        )?;
        check(
            "the scheduler",
            self.scheduler.clone(),
            other.scheduler.clone(),
        )?;
        check("the models", self.models.join(","), other.models.join(","))?;
        check(
            "the p_w values",
            format!("{:?}", self.p),
            format!("{:?}", other.p),
        )?;
        check("the runs", self.runs.to_string(), other.runs.to_string())?;
        check("--race", self.race.to_string(), other.race.to_string())?;
        check(
            "--stop-at-first",
            self.stop_at_first.to_string(),
            other.stop_at_first.to_string(),
        )?;
        check(
            "--keep-failures",
            self.keep_failures.to_string(),
            other.keep_failures.to_string(),
        )?;
        check(
            "--keep-signatures",
            self.keep_signatures.to_string(),
            other.keep_signatures.to_string(),
        )?;
        let vs = |r: &Report| {
            r.variants
                .iter()
                .map(|v| {
                    format!(
                        "{} ({})",
                        v.name,
                        &v.ptx_sha256[..v.ptx_sha256.len().min(12)]
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        check("the variants and their PTX", vs(self), vs(other))
    }

    /// Variants whose observed behaviour contradicts their `expect`.
    pub fn expectation_mismatches(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in &self.variants {
            for (model, e) in &v.expect {
                let cells: Vec<&Cell> = self
                    .summary
                    .iter()
                    .filter(|c| c.variant == v.name && &c.model == model)
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                let failures: u64 = cells.iter().map(|c| c.failures).sum();
                let runs: u64 = cells.iter().map(|c| c.runs).sum();
                match e.as_str() {
                    "pass" if failures > 0 => out.push(format!(
                        "{} under {model}: expected to pass, failed {failures} of {runs}",
                        v.name
                    )),
                    "fail" if failures == 0 => out.push(format!(
                        "{} under {model}: expected to fail, passed all {runs}",
                        v.name
                    )),
                    _ => {}
                }
            }
        }
        out
    }

    /// Writes the report atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report.json".into());
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    pub fn read(path: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        #[derive(Deserialize)]
        struct Head {
            format: u32,
        }
        let head: Head = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fencehound report: {e}", path.display()))?;
        if head.format != FORMAT {
            return Err(format!(
                "{}: report format {} is not supported (this tool reads {FORMAT}; re-run the campaign)",
                path.display(),
                head.format
            ));
        }
        let r: Report = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fencehound report: {e}", path.display()))?;
        let bad = |what: &str| Err(format!("{}: inconsistent report: {what}", path.display()));
        if !r.done.valid() {
            return bad("`done` is not a sorted list of disjoint ranges");
        }
        if r.done.len() != r.executions_done {
            return bad("`done` does not hold `executions_done` executions");
        }
        if let Some(s) = r.shard {
            if s.count == 0 || s.index >= s.count {
                return bad("`shard` index out of range");
            }
        }
        if r.executions_planned != r.shard_or_whole().len(r.plan_total()) {
            return bad("`executions_planned` does not match the plan");
        }
        if r.done
            .ranges()
            .last()
            .is_some_and(|&(_, end)| end > r.executions_planned)
        {
            return bad("`done` goes beyond the plan");
        }
        Ok(r)
    }

    /// The summary table as text (Bugaroo Table IV style).
    pub fn table(&self) -> String {
        let mut ps: Vec<f64> = self.p.clone();
        ps.sort_by(|a, b| a.total_cmp(b));
        let mut out = String::new();
        let width = self
            .variants
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(7)
            .max(7);
        out.push_str(&format!("{:width$}  {:8}", "variant", "model"));
        for p in &ps {
            out.push_str(&format!("  {:>20}", format!("p_w={p}")));
        }
        out.push_str("  verdict\n");
        for v in &self.variants {
            for m in &self.models {
                let cells: Vec<Option<&Cell>> = ps
                    .iter()
                    .map(|p| {
                        self.summary
                            .iter()
                            .find(|c| c.variant == v.name && &c.model == m && c.p == *p)
                    })
                    .collect();
                if cells.iter().all(|c| c.is_none()) {
                    continue;
                }
                out.push_str(&format!("{:width$}  {:8}", v.name, m));
                let mut total_f = 0;
                for c in &cells {
                    match c {
                        Some(c) => {
                            total_f += c.failures;
                            out.push_str(&format!(
                                "  {:>20}",
                                format!(
                                    "{}/{} [{:.2},{:.2}]",
                                    c.failures, c.runs, c.ci95.0, c.ci95.1
                                )
                            ));
                        }
                        None => out.push_str(&format!("  {:>20}", "-")),
                    }
                }
                let runs: u64 = cells.iter().flatten().map(|c| c.runs).sum();
                let verdict = if total_f > 0 {
                    "UNDERFENCED".to_string()
                } else {
                    format!(
                        "no failure in {runs} (p_fail < {:.3} at 95%)",
                        3.0 / runs.max(1) as f64
                    )
                };
                let exp = v
                    .expect
                    .get(m)
                    .map(|e| format!(" (expected {e})"))
                    .unwrap_or_default();
                out.push_str(&format!("  {verdict}{exp}\n"));
            }
        }
        out
    }
}

/// `fencehound X.Y.Z`, as reports record it.
pub fn tool_version() -> String {
    format!("fencehound {}", env!("CARGO_PKG_VERSION"))
}

/// This build of the tool: [`tool_version`] and the SHA-256 of the running executable
/// (the version alone does not change between commits, and a model fix changes what an
/// execution does). For caches of execution results that must not outlive the build
/// that made them; `None` when the executable cannot be read (then nothing is cached
/// across processes).
pub fn build_identity() -> Option<String> {
    use sha2::{Digest, Sha256};
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        // Streamed (`io::copy`, a small buffer; sha2's hasher is an `io::Write`): reading
        // the whole executable into memory (87 MB with debug info) made the kernel zero
        // fresh pages for a tenth of a short `fuzz` run's time (perf, kmeans, 2026-12-07).
        let exe = std::env::current_exe().ok()?;
        let mut f = std::fs::File::open(exe).ok()?;
        let mut h = Sha256::new();
        std::io::copy(&mut f, &mut h).ok()?;
        let d = h.finalize();
        let hex: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
        Some(format!("{} (executable {hex})", tool_version()))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_set_keeps_ranges_merged() {
        let mut d = DoneSet::default();
        for x in [0, 2, 1, 5, 4, 3, 9] {
            assert!(d.insert(x));
        }
        assert!(!d.insert(4));
        assert_eq!(d.ranges(), &[(0, 6), (9, 10)]);
        assert_eq!(d.len(), 7);
        assert!(d.contains(5) && !d.contains(6) && d.contains(9) && !d.contains(10));
        assert!(d.valid());
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5, 9]);
    }

    /// A plan of 2 variants × 1 model × 2 p × 10 runs = 40 executions, and what execution
    /// `id` gives: every third fails, with one of four outputs.
    fn base(shard: Option<Shard>, keep: u32) -> Report {
        base_capped(shard, keep, DEFAULT_KEEP_SIGNATURES)
    }

    fn base_capped(shard: Option<Shard>, keep: u32, sigs: u32) -> Report {
        let info = CampaignInfo {
            name: "c".into(),
            path: "c.toml".into(),
            abs_path: String::new(),
            sha256: "h".into(),
            campaign_sha256: "h".into(),
            sources: Vec::new(),
            text: String::new(),
        };
        let variants = ["a", "b"]
            .iter()
            .map(|n| VariantInfo {
                name: n.to_string(),
                defines: BTreeMap::new(),
                expect: BTreeMap::new(),
                ptx_sha256: "p".into(),
                ptx: String::new(),
            })
            .collect();
        let mut r = Report::new(
            info,
            variants,
            1,
            "random".into(),
            vec!["bugaroo".into()],
            vec![0.5, 1.0],
            10,
            40,
        );
        r.shard = shard;
        r.keep_failures = keep;
        r.keep_signatures = sigs;
        r.executions_planned = shard.unwrap_or(Shard::WHOLE).len(40);
        r
    }

    fn exec(id: u64) -> (ExecRecord, u32, BufferStats) {
        let (v, p, run) = (id / 20, (id / 10) % 2, (id % 10) as u32);
        let fail = id.is_multiple_of(3);
        let got = id % 4;
        let verdict = if fail {
            Verdict::WrongOutput {
                oracle: "golden(c)".into(),
                message: "1 of 1 elements differ".into(),
                diff: format!("c[0]: expected 9, got {got}\n"),
            }
        } else {
            Verdict::Pass
        };
        let mut stats = BufferStats::default();
        stats.global.stores_seen = id;
        stats.peak_occupancy = (id % 7) as u32;
        (
            ExecRecord {
                id,
                variant: ["a", "b"][v as usize].into(),
                model: "bugaroo".into(),
                p: [0.5, 1.0][p as usize],
                seed: id * 1000 + 1,
                scheduler: "random".into(),
                verdict,
                output_hash: format!("hash{}", if fail { got } else { 9 }),
                lane_instructions: id,
                wall_ms: 0,
                printf: String::new(),
                backend: default_backend(),
                device: default_device(),
            },
            run,
            stats,
        )
    }

    fn add_all(r: &mut Report, ids: impl IntoIterator<Item = u64>) {
        for id in ids {
            let (rec, run, st) = exec(id);
            r.add(rec, run, &st);
        }
        r.finish();
    }

    fn json(r: &Report) -> String {
        serde_json::to_string(r).unwrap()
    }

    #[test]
    fn the_report_depends_on_the_set_of_executions_not_their_order_or_split() {
        let mut whole = base(None, 2);
        add_all(&mut whole, 0..40);
        assert_eq!(whole.done.ranges(), &[(0, 40)]);
        assert_eq!(whole.failure_count(), 14);
        // 2 kept per cell of 4 cells; signatures sum to all failures.
        assert_eq!(whole.failures.len(), 8);
        assert_eq!(
            whole.signatures.iter().map(|s| s.count).sum::<u64>(),
            whole.failure_count()
        );
        // Any completion order: the same report.
        let mut order: Vec<u64> = (0..40).collect();
        let mut x = 12345u64;
        for i in (1..order.len()).rev() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (x >> 33) as usize % (i + 1));
        }
        let mut shuffled = base(None, 2);
        add_all(&mut shuffled, order.iter().copied());
        assert_eq!(json(&shuffled), json(&whole));
        // Interrupted after some, resumed (through a file round trip) with the rest.
        let mut part = base(None, 2);
        add_all(&mut part, order[..17].iter().copied());
        let mut part: Report = serde_json::from_str(&json(&part)).unwrap();
        add_all(&mut part, order[17..].iter().copied());
        assert_eq!(json(&part), json(&whole));
        // Three shards merged.
        let shards: Vec<Report> = (0..3)
            .map(|i| {
                let s = Shard { index: i, count: 3 };
                let mut r = base(Some(s), 2);
                add_all(&mut r, (0..40).filter(|id| id % 3 == i));
                r
            })
            .collect();
        let merged = Report::merge(shards.clone()).unwrap();
        assert_eq!(json(&merged), json(&whole));
        // A shard cut short: the merge is incomplete and says which ids are missing;
        // running those makes it whole.
        let mut short = shards.clone();
        let s1 = Shard { index: 1, count: 3 };
        short[1] = base(Some(s1), 2);
        add_all(&mut short[1], (0..40).filter(|id| id % 3 == 1 && *id < 20));
        let mut m = Report::merge(short).unwrap();
        assert!(!m.complete() && m.interrupted);
        let missing: Vec<u64> = (0..40).filter(|id| !m.is_done(*id)).collect();
        assert_eq!(missing, vec![22, 25, 28, 31, 34, 37]);
        add_all(&mut m, missing);
        m.interrupted = false;
        assert_eq!(json(&m), json(&whole));
        // Duplicates are counted once.
        let mut twice = base(None, 2);
        add_all(&mut twice, (0..40).chain(0..40));
        assert_eq!(json(&twice), json(&whole));
    }

    #[test]
    fn capped_signatures_are_a_sample_that_order_and_shards_do_not_change() {
        for cap in [0, 1, 2] {
            let mut whole = base_capped(None, 2, cap);
            add_all(&mut whole, 0..40);
            // 4 failing cells with up to 3 distinct outputs each.
            for c in whole.summary.iter().filter(|c| c.failures > 0) {
                let n = whole
                    .signatures
                    .iter()
                    .filter(|s| s.variant == c.variant && s.p == c.p)
                    .count();
                assert!(n <= cap as usize);
                let counted: u64 = whole
                    .signatures
                    .iter()
                    .filter(|s| s.variant == c.variant && s.p == c.p)
                    .map(|s| s.count)
                    .sum();
                assert_eq!(counted + c.failures_unsigned, c.failures);
            }
            let mut rev = base_capped(None, 2, cap);
            add_all(&mut rev, (0..40).rev());
            assert_eq!(json(&rev), json(&whole), "cap {cap}");
            let shards: Vec<Report> = (0..4)
                .map(|i| {
                    let mut r = base_capped(Some(Shard { index: i, count: 4 }), 2, cap);
                    add_all(&mut r, (0..40).rev().filter(|id| id % 4 == i));
                    r
                })
                .collect();
            assert_eq!(
                json(&Report::merge(shards).unwrap()),
                json(&whole),
                "cap {cap}"
            );
        }
    }

    #[test]
    fn shards_partition_the_ids() {
        let total = 103;
        let shards: Vec<Shard> = (0..4).map(|i| Shard { index: i, count: 4 }).collect();
        let mut all: Vec<u64> = shards
            .iter()
            .flat_map(|s| (0..s.len(total)).map(move |p| s.id(p)))
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..total).collect::<Vec<_>>());
        for s in &shards {
            for p in 0..s.len(total) {
                assert_eq!(s.pos(s.id(p)), Some(p));
            }
        }
        assert_eq!(Shard::parse("3/4"), Ok(Shard { index: 3, count: 4 }));
        assert!(Shard::parse("4/4").unwrap_err().contains("out of range"));
        assert!(Shard::parse("0/0").is_err());
        assert!(Shard::parse("x").is_err());
        assert_eq!(Shard { index: 5, count: 8 }.len(3), 0);
    }
}
