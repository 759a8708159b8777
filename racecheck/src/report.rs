//! Races as the checker records them ([`RaceSet`], site ids and thread ids, cheap to
//! collect during a launch) and as people read them ([`RaceReport`], with PTX text, CUDA
//! file:line and the missing synchronization, serde-serializable for `--json`).
//!
//! Races are deduplicated by (kernel, first site, second site, class, conflict): a loop
//! that races a million times is one report with `occurrences = 1_000_000`, and the same
//! race seen in 37 of 100 executions has `executions = 37`.

use fencehound_vgpu::{AccessKind, Device, ModuleId, Scope, Sem, SiteId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Distinct addresses remembered per race.
pub const MAX_ADDRESSES: usize = 1024;

/// Adds `from` to `into`, up to [`MAX_ADDRESSES`].
pub(crate) fn add_addresses(into: &mut BTreeSet<u64>, from: &BTreeSet<u64>) {
    for a in from {
        if into.len() >= MAX_ADDRESSES {
            break;
        }
        into.insert(*a);
    }
}
use std::fmt;

/// Which synchronization is missing, from the relation of the two threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceClass {
    /// Same warp, no `__syncwarp()` between them (independent thread scheduling, sm_70+).
    IntraWarp,
    /// Same CTA, different warps: no barrier between them.
    IntraBlock,
    /// Different CTAs: no device-scope release/acquire orders them.
    InterBlock,
    /// Different CTAs, and they *would* be ordered (or would be non-racing atomics) if the
    /// `.cta`-scoped fences, atomics or release/acquire involved were device-scoped.
    InsufficientScope,
    /// At least one access holds a lock and the lock does not order the two accesses:
    /// different locks, protected and unprotected accesses mixed, or a lock whose
    /// release lacks the fence that would order its critical sections.
    LockMisuse,
    /// Lock acquired without acquire ordering: the later access's thread took the lock the
    /// earlier one held with a relaxed RMW (`atomicCAS`) and no acquire fence (of enough
    /// scope) after it, so its critical section may read the previous holder's data stale.
    LockAcquire,
    /// Unordered: two strong (e.g. `volatile`) accesses that PTX does not call a data
    /// race and that nothing orders: two writes of different values (the final value
    /// depends on the schedule), or a write and a read of which neither is
    /// synchronization (the write completes no release pattern, the read starts no
    /// acquire pattern), or lock-protected data accessed outside the critical section.
    /// (`check.rs` has the exact rule.)
    Unordered,
}

impl RaceClass {
    pub const ALL: [RaceClass; 7] = [
        RaceClass::IntraWarp,
        RaceClass::IntraBlock,
        RaceClass::InterBlock,
        RaceClass::InsufficientScope,
        RaceClass::LockMisuse,
        RaceClass::LockAcquire,
        RaceClass::Unordered,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RaceClass::IntraWarp => "intra-warp",
            RaceClass::IntraBlock => "intra-block",
            RaceClass::InterBlock => "inter-block",
            RaceClass::InsufficientScope => "insufficient-scope",
            RaceClass::LockMisuse => "lock-misuse",
            RaceClass::LockAcquire => "lock-acquire",
            RaceClass::Unordered => "unordered",
        }
    }

    /// Whether PTX calls it a data race (the other classes are ordering bugs between
    /// accesses that are not data races, or that locks were meant to order).
    pub fn is_data_race(self) -> bool {
        !matches!(self, RaceClass::Unordered | RaceClass::LockAcquire)
    }

    pub fn parse(s: &str) -> Option<RaceClass> {
        RaceClass::ALL.into_iter().find(|c| c.name() == s)
    }
}

impl fmt::Display for RaceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shape of the conflict: what the earlier and the later access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Conflict {
    /// Read after write.
    Raw,
    /// Write after read.
    War,
    /// Write after write.
    Waw,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Conflict::Raw => "RAW",
            Conflict::War => "WAR",
            Conflict::Waw => "WAW",
        })
    }
}

/// Why a lock-misuse race is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockProblem {
    /// Both hold the same lock, yet its acquire/release do not order them.
    Unordered,
    /// Each holds a lock, not the same one.
    DifferentLocks,
    /// One holds a lock, the other none.
    Unprotected,
    /// The race is on the lock word itself: a holder releases it with a plain store,
    /// which races with the other threads' atomics on the word (and is no release).
    PlainRelease,
}

/// One side of a race, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawAccess {
    pub cta: u32,
    pub tid: u32,
    pub global: u32,
    pub site: SiteId,
    pub kind: AccessKind,
    pub sem: Sem,
    pub scope: Scope,
}

/// A race as recorded during a launch: ids only.
#[derive(Debug, Clone)]
pub struct RawRace {
    pub kernel: String,
    pub class: RaceClass,
    pub conflict: Conflict,
    pub first: RawAccess,
    pub second: RawAccess,
    /// `Some(cta)` for shared memory.
    pub shared_cta: Option<u32>,
    pub addr: u64,
    /// Allocation name and base (global memory).
    pub allocation: Option<(String, u64)>,
    pub lock: Option<LockProblem>,
    /// `lock-acquire`: the RMW that took the lock, after which the acquire fence goes,
    /// and the lock (checker-internal).
    pub acquire_site: Option<SiteId>,
    pub(crate) acquire_lock: u64,
    /// `unordered` message-passing failures: the later write of the first access's thread
    /// (the signal) that the second access's thread had read, and whether a release fence
    /// separated it from the first write (then the reader's acquire is missing).
    pub signal: Option<(SiteId, bool)>,
    /// Interned lock sets of the two accesses (checker-internal).
    pub(crate) lock_ids: (u16, u16),
    /// Distinct addresses (global) or shared offsets the race was seen at, at most
    /// [`MAX_ADDRESSES`].
    pub addresses: BTreeSet<u64>,
    /// Cross-CTA read after write whose writer published the write with a device-scope
    /// release: the relaxed RMW (a ticket, a counter) on the reader's side after which no
    /// acquire came — the missing piece is on the reader side, right after it.
    pub reader_rmw: Option<SiteId>,
    /// Cross-CTA read after write whose write no device-scope release followed: the
    /// missing piece is on the writer side.
    pub writer_unreleased: bool,
    /// `unordered` across CTAs where a side has only `.cta`-scoped release/acquire
    /// fences (`__threadfence_block()`): they order nothing for another CTA.
    pub narrow_fences: bool,
    pub occurrences: u64,
    pub executions: u64,
    /// The execution (checker launch counter) that last counted this race.
    pub(crate) last_execution: u64,
}

/// Deduplication key: one race per unordered pair of sites (A then B and B then A are
/// the same race), kernel and class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RaceKey {
    pub kernel: String,
    /// The smaller and the larger of the two sites.
    pub sites: (SiteId, SiteId),
    pub class: RaceClass,
}

impl RaceKey {
    pub fn new(kernel: &str, a: SiteId, b: SiteId, class: RaceClass) -> RaceKey {
        RaceKey {
            kernel: kernel.to_string(),
            sites: (a.min(b), a.max(b)),
            class,
        }
    }
}

/// Races of any number of executions, deduplicated.
#[derive(Debug, Clone, Default)]
pub struct RaceSet {
    pub(crate) races: BTreeMap<RaceKey, RawRace>,
    /// Launches the checker observed.
    pub executions: u64,
}

impl RaceSet {
    pub fn is_empty(&self) -> bool {
        self.races.is_empty()
    }

    pub fn len(&self) -> usize {
        self.races.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&RaceKey, &RawRace)> {
        self.races.iter()
    }

    /// The distinct classes found.
    pub fn classes(&self) -> std::collections::BTreeSet<RaceClass> {
        self.races.keys().map(|k| k.class).collect()
    }

    /// Adds the races of `other` (e.g. from another execution on another thread).
    pub fn merge(&mut self, other: &RaceSet) {
        self.executions += other.executions;
        for (k, r) in &other.races {
            match self.races.get_mut(k) {
                Some(mine) => {
                    mine.occurrences += r.occurrences;
                    mine.executions += r.executions;
                    add_addresses(&mut mine.addresses, &r.addresses);
                }
                None => {
                    self.races.insert(k.clone(), r.clone());
                }
            }
        }
    }

    /// Reports with instruction text and CUDA lines, from the module the races came from.
    ///
    /// Races between the same two source statements (an unrolled loop or an inlined helper
    /// gives several PTX sites per CUDA line) are one report: `sites` says how many site
    /// pairs it stands for, occurrences add up, and executions is the largest count of any
    /// of them (a lower bound).
    pub fn reports(&self, dev: &Device, module: ModuleId) -> Vec<RaceReport> {
        let mut out: Vec<RaceReport> = Vec::new();
        for r in self.races.values() {
            let rep = RaceReport::resolve(r, dev, module);
            match out.iter_mut().find(|x| x.same_race(&rep)) {
                Some(x) => {
                    x.occurrences += rep.occurrences;
                    x.executions = x.executions.max(rep.executions);
                    x.sites += 1;
                    let mut all: BTreeSet<u64> = x.addresses.iter().copied().collect();
                    add_addresses(&mut all, &rep.addresses.iter().copied().collect());
                    x.addresses = all.into_iter().collect();
                }
                None => out.push(rep),
            }
        }
        out
    }
}

/// A CUDA source position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

/// One access of a race, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessReport {
    pub cta: u32,
    pub tid: u32,
    pub global_tid: u32,
    pub warp_in_cta: u32,
    pub lane: u32,
    /// `load`, `store` or `atomic`.
    pub access: String,
    /// `weak`, `volatile`, `relaxed.gpu`, `release.cta`, ...
    pub semantics: String,
    pub site: SiteId,
    /// The PTX instruction.
    pub instruction: String,
    pub ptx_line: u32,
    pub cuda: Option<SourceLine>,
    /// When `cuda` is in a header the kernel's code inlined (`mma.h`'s fragment loads,
    /// libcu++'s atomics, cooperative groups), the kernel's own line that called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called_from: Option<SourceLine>,
}

/// A race, for people and for `--json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceReport {
    pub kernel: String,
    pub class: RaceClass,
    pub conflict: Conflict,
    /// The access that came first in the observed execution.
    pub first: AccessReport,
    pub second: AccessReport,
    /// `global` or `shared`.
    pub space: String,
    /// Global address, or offset in the CTA's shared memory.
    pub address: u64,
    /// Shared memory: the CTA whose shared memory it is.
    pub shared_cta: Option<u32>,
    /// Global memory: the allocation's name and the offset in it.
    pub allocation: Option<String>,
    pub offset: Option<u64>,
    pub lock: Option<LockProblem>,
    /// `lock-acquire`: where the acquire fence goes (right after this RMW).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence_after: Option<AccessReport>,
    /// One line on the synchronization that is missing.
    pub missing: String,
    pub occurrences: u64,
    pub executions: u64,
    /// PTX site pairs this report stands for (same class and source lines).
    #[serde(default = "one")]
    pub sites: u32,
    /// Distinct addresses (global) or shared-memory offsets it was seen at, sorted (at
    /// most [`MAX_ADDRESSES`]).
    #[serde(default)]
    pub addresses: Vec<u64>,
    /// The RMW after which the reader side lacks an acquire (see [`RawRace::reader_rmw`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_after: Option<AccessReport>,
}

fn one() -> u32 {
    1
}

fn sem_text(sem: Sem, scope: Scope, kind: AccessKind) -> String {
    let s = match sem {
        Sem::Weak => return "weak".into(),
        Sem::Volatile => return "volatile".into(),
        Sem::Relaxed => "relaxed",
        Sem::Acquire => "acquire",
        Sem::Release => "release",
        Sem::AcqRel => "acq_rel",
        Sem::Sc => "sc",
    };
    let _ = kind;
    let sc = match scope {
        Scope::Cta => "cta",
        Scope::Cluster => "cluster",
        Scope::Gpu => "gpu",
        Scope::Sys => "sys",
    };
    format!("{s}.{sc}")
}

impl AccessReport {
    fn resolve(a: &RawAccess, dev: &Device, module: ModuleId) -> AccessReport {
        let site = dev.site(module, a.site);
        AccessReport {
            cta: a.cta,
            tid: a.tid,
            global_tid: a.global,
            warp_in_cta: a.tid / 32,
            lane: a.tid % 32,
            access: match a.kind {
                AccessKind::Load => "load",
                AccessKind::Store => "store",
                AccessKind::Atomic => "atomic",
            }
            .into(),
            semantics: sem_text(a.sem, a.scope, a.kind),
            site: a.site,
            instruction: site.map_or_else(|| format!("<site {}>", a.site), |s| s.text.clone()),
            ptx_line: site.map_or(0, |s| s.ptx_line),
            cuda: site.and_then(|s| s.cuda.as_ref()).map(|c| SourceLine {
                file: c.file.clone(),
                line: c.line,
            }),
            called_from: site
                .and_then(|s| s.cuda.as_ref())
                .and_then(|c| c.caller.as_ref())
                .map(|(file, line)| SourceLine {
                    file: file.clone(),
                    line: *line,
                }),
        }
    }

    fn place(&self) -> String {
        let at = match &self.cuda {
            Some(c) => format!("{}:{}", c.file, c.line),
            None => format!("PTX line {}", self.ptx_line),
        };
        match &self.called_from {
            Some(c) => format!("{at} (called from {}:{})", c.file, c.line),
            None => at,
        }
    }
}

impl RaceReport {
    pub fn resolve(r: &RawRace, dev: &Device, module: ModuleId) -> RaceReport {
        let first = AccessReport::resolve(&r.first, dev, module);
        let second = AccessReport::resolve(&r.second, dev, module);
        let fence_after = r.acquire_site.map(|site| {
            AccessReport::resolve(
                &RawAccess {
                    site,
                    kind: AccessKind::Atomic,
                    ..r.second
                },
                dev,
                module,
            )
        });
        let signal = r.signal.map(|(site, _)| {
            AccessReport::resolve(
                &RawAccess {
                    site,
                    kind: AccessKind::Store,
                    ..r.first
                },
                dev,
                module,
            )
        });
        let acquire_after = r.reader_rmw.map(|site| {
            let mut rmw = AccessReport::resolve(
                &RawAccess {
                    site,
                    kind: AccessKind::Atomic,
                    ..r.second
                },
                dev,
                module,
            );
            // `atomicInc` is inlined from CUDA's headers: name the line that calls it.
            let call = dev
                .site(module, site)
                .and_then(|s| s.cuda.as_ref())
                .filter(|c| second.cuda.as_ref().is_some_and(|x| x.file != c.file))
                .and_then(|c| c.inlined_at.as_ref());
            if let Some((file, line, _)) = call {
                rmw.cuda = Some(SourceLine {
                    file: file.clone(),
                    line: *line,
                });
            }
            rmw
        });
        let mut missing = missing_text(r, fence_after.as_ref(), signal.as_ref());
        if let Some(side) = side_text(r, acquire_after.as_ref(), &first) {
            missing = format!("{side}; {missing}");
        }
        if let Some(plain) = plain_against_atomic(r, &first, &second) {
            missing = format!("{plain}{missing}");
        }
        RaceReport {
            kernel: r.kernel.clone(),
            class: r.class,
            conflict: r.conflict,
            first,
            second,
            space: if r.shared_cta.is_some() {
                "shared"
            } else {
                "global"
            }
            .into(),
            address: r.addr,
            shared_cta: r.shared_cta,
            allocation: r.allocation.as_ref().map(|a| a.0.clone()),
            offset: r.allocation.as_ref().map(|a| r.addr - a.1),
            lock: r.lock,
            fence_after,
            missing,
            occurrences: r.occurrences,
            executions: r.executions,
            sites: 1,
            addresses: if r.addresses.is_empty() {
                vec![r.addr]
            } else {
                r.addresses.iter().copied().collect()
            },
            acquire_after,
        }
    }

    /// Whether `other` is the same race: kernel, class, and the same two accesses in
    /// either order — the same source statements (file, line and kind of access) when
    /// both have CUDA lines, else the same PTX sites.
    pub fn same_race(&self, other: &RaceReport) -> bool {
        if self.kernel != other.kernel || self.class != other.class {
            return false;
        }
        let lines = |r: &RaceReport| -> Option<[(String, u32, String); 2]> {
            let side = |a: &AccessReport| {
                a.cuda
                    .as_ref()
                    .map(|c| (c.file.clone(), c.line, a.access.clone()))
            };
            let (mut x, mut y) = (side(&r.first)?, side(&r.second)?);
            if y < x {
                std::mem::swap(&mut x, &mut y);
            }
            Some([x, y])
        };
        match (lines(self), lines(other)) {
            (Some(a), Some(b)) => a == b,
            _ => {
                let pair = |r: &RaceReport| {
                    let (a, b) = (r.first.site, r.second.site);
                    (a.min(b), a.max(b))
                };
                pair(self) == pair(other)
            }
        }
    }

    /// The CUDA lines (or PTX lines) of both accesses, e.g. `k.cu:12`.
    pub fn lines(&self) -> (Option<u32>, Option<u32>) {
        (
            self.first.cuda.as_ref().map(|c| c.line),
            self.second.cuda.as_ref().map(|c| c.line),
        )
    }
}

/// The CUDA call and the `cuda::atomic_ref` member an RMW's PTX instruction comes from.
fn rmw_names(instruction: &str) -> (&'static str, &'static str) {
    let op = instruction
        .split_whitespace()
        .next()
        .unwrap_or("")
        .split('.')
        .find_map(|m| match m {
            "inc" => Some(("atomicInc", "fetch_add")),
            "dec" => Some(("atomicDec", "fetch_sub")),
            "add" => Some(("atomicAdd", "fetch_add")),
            "min" => Some(("atomicMin", "fetch_min")),
            "max" => Some(("atomicMax", "fetch_max")),
            "and" => Some(("atomicAnd", "fetch_and")),
            "or" => Some(("atomicOr", "fetch_or")),
            "xor" => Some(("atomicXor", "fetch_xor")),
            "cas" => Some(("atomicCAS", "compare_exchange_strong")),
            "exch" => Some(("atomicExch", "exchange")),
            _ => None,
        });
    op.unwrap_or(("atomic", "fetch_add"))
}

/// Which side of a cross-CTA read-after-write misses its half of the release/acquire
/// pair, when the checker could tell.
fn side_text(
    r: &RawRace,
    acquire_after: Option<&AccessReport>,
    first: &AccessReport,
) -> Option<String> {
    if let Some(rmw) = acquire_after {
        let (call, member) = rmw_names(&rmw.instruction);
        let line = match &rmw.cuda {
            Some(c) => format!("line {}", c.line),
            None => format!("PTX line {}", rmw.ptx_line),
        };
        return Some(format!(
            "reader side: an acquire after the `{call}` at {line} (`__threadfence()` after \
             it, or `cuda::atomic_ref::{member}(…, memory_order_acq_rel)`)"
        ));
    }
    if r.writer_unreleased {
        return Some(format!(
            "writer side: a device-scope release after the {} at {} (`__threadfence()` \
             between it and the signal, or a release store/RMW as the signal)",
            first.access,
            first.place()
        ));
    }
    None
}

/// A data race between a plain (weak) load or store and an atomic RMW of the same word:
/// the atomic marks the word as one that threads update concurrently, and the plain side
/// is the first thing to fix — no barrier or fence makes a plain access of a word that
/// other threads keep updating race-free unless it really waits for all of them. A
/// compare-and-swap loop whose first read is plain and may leave the loop without a CAS
/// (`if (old >= v) break;`, an atomic maximum of floats) needs only that read made atomic;
/// the ordering advice that follows applies when the access must see (or be seen by) a
/// particular update. (Before, such a pair got only the ordering advice: `__syncwarp()`,
/// `__syncthreads()` or `__threadfence()`, none of which fixes the loop.)
fn plain_against_atomic(
    r: &RawRace,
    first: &AccessReport,
    second: &AccessReport,
) -> Option<String> {
    if !matches!(
        r.class,
        RaceClass::IntraWarp | RaceClass::IntraBlock | RaceClass::InterBlock
    ) || r.lock.is_some()
    {
        return None;
    }
    let (plain, rmw) = match (r.first.kind, r.second.kind) {
        (AccessKind::Atomic, k) if k != AccessKind::Atomic && r.second.sem == Sem::Weak => {
            (second, first)
        }
        (k, AccessKind::Atomic) if k != AccessKind::Atomic && r.first.sem == Sem::Weak => {
            (first, second)
        }
        _ => return None,
    };
    let (call, _) = rmw_names(&rmw.instruction);
    let how = if plain.access == "load" {
        "a `volatile` read, `atomicAdd(p, 0)`, or `cuda::atomic_ref<T>(*p).load(cuda::memory_order_relaxed)`; \
         enough where any recent value will do, as for a compare-and-swap loop's first read"
    } else {
        "`atomicExch(p, v)` or `cuda::atomic_ref<T>(*p).store(v, …)`"
    };
    // The atomic comes from CUDA's headers: name the kernel's line that called it.
    let rmw_at = match &rmw.called_from {
        Some(c) => format!("{}:{}", c.file, c.line),
        None => rmw.place(),
    };
    Some(format!(
        "the plain {} at {} meets the `{call}` at {rmw_at}, which other threads use on this \
         word without synchronizing with it: make it atomic too ({how}); if it must see or \
         be seen by a particular update, also: ",
        plain.access,
        plain.place(),
    ))
}

fn missing_text(
    r: &RawRace,
    fence_after: Option<&AccessReport>,
    signal: Option<&AccessReport>,
) -> String {
    let (a, b) = (&r.first, &r.second);
    match r.class {
        RaceClass::IntraWarp => format!(
            "no __syncwarp() (bar.warp.sync) between lanes {} and {} of warp {} in CTA {}: \
             under independent thread scheduling the lanes of a warp are not in lockstep",
            a.tid % 32,
            b.tid % 32,
            a.tid / 32,
            a.cta
        ),
        RaceClass::IntraBlock => format!(
            "no __syncthreads() (bar.sync) between threads {} and {} of CTA {}",
            a.tid, b.tid, a.cta
        ),
        RaceClass::InterBlock => format!(
            "nothing orders CTA {} before CTA {}: needs a device-scope release/acquire \
             (__threadfence() before the signal and after the wait, or .release/.acquire.gpu atomics)",
            a.cta, b.cta
        ),
        RaceClass::InsufficientScope => format!(
            "the synchronization between CTA {} and CTA {} is .cta-scoped \
             (__threadfence_block(), atomic*_block, .cta release/acquire): it must be .gpu scope across CTAs",
            a.cta, b.cta
        ),
        RaceClass::LockMisuse => match r.lock {
            Some(LockProblem::DifferentLocks) => {
                "the two accesses hold different locks: protect the data with one lock".into()
            }
            Some(LockProblem::Unprotected) => {
                "one access holds a lock and the other none: take the lock for both".into()
            }
            Some(LockProblem::PlainRelease) => {
                "the lock word itself: its holder releases it with a plain store, which \
                 races with the other threads' atomics on the word and is no release (the \
                 next holder does not synchronize with it): release it with \
                 `atomicExch(lock, 0)`, after `__threadfence()`"
                    .into()
            }
            _ => "both hold the lock, but its release does not order the critical \
                  sections: __threadfence() before releasing it (and after acquiring it)"
                .into(),
        },
        RaceClass::LockAcquire => format!(
            "lock acquired without acquire ordering: the lock is taken by a relaxed RMW{} \
             with no {}acquire fence after it, so the critical section may read the \
             previous holder's data stale: insert __threadfence() right after it (or use \
             an acquire RMW)",
            fence_after.map_or(String::new(), |f| format!(" at {}", f.place())),
            if a.cta != b.cta {
                "device-scope (the lock is shared across CTAs) "
            } else {
                ""
            }
        ),
        RaceClass::Unordered if r.lock.is_some() => format!(
            "unordered: the location is data of a lock (accessed inside its critical \
             sections), but thread {} (CTA {}) and thread {} (CTA {}) take that lock and \
             one of them made this access outside its critical section (after the unlock \
             or before the lock): move the access inside it",
            a.tid, a.cta, b.tid, b.cta
        ),
        RaceClass::Unordered if r.conflict == Conflict::Waw => format!(
            "unordered writes: thread {} (CTA {}) and thread {} (CTA {}) store different \
             values and nothing orders the two stores, so the final value depends on the \
             schedule: {}",
            a.tid,
            a.cta,
            b.tid,
            b.cta,
            if a.cta == b.cta && a.tid / 32 == b.tid / 32 {
                "__syncwarp() between them"
            } else if a.cta == b.cta {
                "__syncthreads() between them, or a release/acquire hand-off"
            } else {
                "a device-scope release/acquire between them (__threadfence() before the \
                 first thread's signal or unlock, and after the second's wait or lock)"
            }
        ),
        RaceClass::Unordered if r.signal.is_some() => {
            let at = signal.map_or("a later write".to_string(), |s| {
                format!("the write at {} (`{}`)", s.place(), s.instruction)
            });
            if r.signal.is_some_and(|x| x.1) {
                format!(
                    "unordered, stale read possible: thread {} (CTA {}) read {at}, which its \
                     writer published after a release fence, but no acquire follows that \
                     read: __threadfence() after reading it (or an acquire load)",
                    b.tid, b.cta
                )
            } else {
                format!(
                    "unordered, stale read possible: thread {} (CTA {}) read {at}, which \
                     thread {} (CTA {}) wrote after this write with no release fence in \
                     between: __threadfence() between this write and that one",
                    b.tid, b.cta, a.tid, a.cta
                )
            }
        }
        RaceClass::Unordered => format!(
            "unordered, stale read possible: both accesses are strong (e.g. volatile), so \
             PTX calls it no data race, but nothing orders thread {} (CTA {}) and thread {} \
             (CTA {}) and neither access is synchronization: {}",
            a.tid,
            a.cta,
            b.tid,
            b.cta,
            if a.cta == b.cta && a.tid / 32 == b.tid / 32 {
                "__syncwarp() between them (independent thread scheduling)"
            } else if a.cta == b.cta {
                "__syncthreads() between them, or a release/acquire pair"
            } else if r.narrow_fences {
                "the fences between them are block-scoped (`__threadfence_block()` orders \
                 nothing for another CTA): __threadfence() before the write and after the \
                 read (release/acquire)"
            } else {
                "__threadfence() before the write and after the read (release/acquire)"
            }
        ),
    }
}

impl fmt::Display for RaceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} race ({}) in `{}` on {} {}",
            self.class,
            self.conflict,
            self.kernel,
            self.space,
            match (&self.allocation, self.offset, self.shared_cta) {
                (Some(n), Some(o), _) => format!("`{n}`+{o:#x} ({:#x})", self.address),
                (_, _, Some(c)) => format!("offset {:#x} of CTA {c}", self.address),
                _ => format!("{:#x}", self.address),
            }
        )?;
        for (which, a) in [("first ", &self.first), ("second", &self.second)] {
            writeln!(
                f,
                "  {which}: {} {} by thread {} (CTA {}, tid {}) at {}: `{}`",
                a.semantics,
                a.access,
                a.global_tid,
                a.cta,
                a.tid,
                a.place(),
                a.instruction
            )?;
        }
        writeln!(f, "  missing: {}", self.missing)?;
        write!(
            f,
            "  seen {} times at {} address(es) in {} execution(s){}",
            self.occurrences,
            self.addresses.len().max(1),
            self.executions,
            if self.sites > 1 {
                format!(
                    " at {} PTX site pairs (unrolled or inlined code)",
                    self.sites
                )
            } else {
                String::new()
            }
        )
    }
}

/// One race over the launches of a program: every report of the same race — same kernel,
/// class and pair of source statements ([`RaceReport::same_race`]) — folded into one,
/// whatever the address and the launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceSummary {
    /// The first report, with the kernel named as given, occurrences summed, addresses
    /// united and executions the largest count of any launch's report.
    pub report: RaceReport,
    /// Launches it was seen in.
    pub launches: u64,
}

impl RaceSummary {
    /// Folds `(kernel name, report)` pairs — e.g. each launch's reports under the
    /// launch's demangled kernel name — into one summary per race, in first-seen order.
    pub fn fold<'a>(
        races: impl IntoIterator<Item = (&'a str, &'a RaceReport)>,
    ) -> Vec<RaceSummary> {
        let mut out: Vec<RaceSummary> = Vec::new();
        for (kernel, r) in races {
            let mut rep = r.clone();
            rep.kernel = kernel.to_string();
            match out.iter_mut().find(|s| s.report.same_race(&rep)) {
                Some(s) => {
                    let x = &mut s.report;
                    x.occurrences += rep.occurrences;
                    x.executions = x.executions.max(rep.executions);
                    x.sites = x.sites.max(rep.sites);
                    let mut all: BTreeSet<u64> = x.addresses.iter().copied().collect();
                    add_addresses(&mut all, &rep.addresses.iter().copied().collect());
                    x.addresses = all.into_iter().collect();
                    s.launches += 1;
                }
                None => out.push(RaceSummary {
                    report: rep,
                    launches: 1,
                }),
            }
        }
        out
    }
}

impl fmt::Display for RaceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.report.to_string();
        // Everything but the report's own "seen" line, which is per launch.
        let body = text.rsplit_once('\n').map_or(text.as_str(), |(b, _)| b);
        writeln!(f, "{body}")?;
        let r = &self.report;
        let n = r.addresses.len().max(1);
        write!(
            f,
            "  seen {} times at {}{} address(es) in {} launch(es) of {} execution(s){}",
            r.occurrences,
            if n >= MAX_ADDRESSES { "≥ " } else { "" },
            n,
            self.launches,
            r.executions,
            if r.sites > 1 {
                format!(" at {} PTX site pairs (unrolled or inlined code)", r.sites)
            } else {
                String::new()
            }
        )
    }
}
