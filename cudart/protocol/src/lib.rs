//! The contract between fencehound's `libcudart.so.13` (the `cudart/` cdylib) and whoever
//! runs a program under it (`fencehound exec`, program campaigns): the environment that
//! configures the runtime, the side-channel file through which it says what happened per
//! launch, and the exit status it ends a hung program with.
//!
//! ```text
//! runner ── RuntimeConfig::to_env() ──► app process (LD_LIBRARY_PATH: our libcudart.so.13)
//!        ◄── side channel: one JSON Record per line (flushed after each) ──┘
//!        ◄── exit status (HANG_EXIT_STATUS after a deadlock or timeout)
//! ```
//!
//! The side channel is written append-only and flushed record by record, so a program
//! that crashes or is killed leaves every record up to that point; [`read_side_channel`]
//! ignores a torn last line.

pub mod events;

use fencehound_handlers::BufferStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The exit status the runtime ends a program with when a launch deadlocks or runs out of
/// its fuel or time budget (a real GPU would hang there). 124 is `timeout(1)`'s status.
pub const HANG_EXIT_STATUS: i32 = 124;

/// Names of the environment variables the runtime reads.
pub mod env {
    /// `sc`, `bugaroo`, `scoped` (and any model `fencehound_handlers::Model::parse` knows).
    pub const MODEL: &str = "FENCEHOUND_MODEL";
    /// Probability that a store is buffered, in [0, 1].
    pub const P: &str = "FENCEHOUND_P";
    /// The execution seed; launch `i` uses (seed, i).
    pub const SEED: &str = "FENCEHOUND_SEED";
    /// `random`, `pct[:depth]`, `rr[:quantum]`.
    pub const SCHEDULER: &str = "FENCEHOUND_SCHEDULER";
    /// Lane instructions per launch.
    pub const FUEL: &str = "FENCEHOUND_FUEL";
    /// Wall-clock budget of one launch, in milliseconds.
    pub const WALL_MS: &str = "FENCEHOUND_WALL_MS";
    /// Path of the side-channel file (appended to; created if missing).
    pub const SIDE_CHANNEL: &str = "FENCEHOUND_SIDE_CHANNEL";
    /// `1`: record the buffering trace of every launch in the side channel.
    pub const TRACE: &str = "FENCEHOUND_TRACE";
    /// `1`: run the shadow-memory race check and record races.
    pub const RACE: &str = "FENCEHOUND_RACE";
    /// Which spaces may buffer: `global`, `shared`, `global,shared` (default) or `none`.
    pub const BUFFER: &str = "FENCEHOUND_BUFFER";
    /// Only launches of these kernels (mangled names, comma-separated) buffer.
    pub const KERNELS: &str = "FENCEHOUND_KERNELS";
    /// Only stores at these static sites (comma-separated vgpu site ids) buffer.
    pub const SITES: &str = "FENCEHOUND_SITES";
    /// The module (SHA-256 of its registered PTX) whose site ids [`SITES`] lists; launches
    /// of other modules then buffer nothing. Unset: the ids apply to every module.
    pub const SITES_MODULE: &str = "FENCEHOUND_SITES_MODULE";
    /// A directory of replacement modules: a module whose PTX has SHA-256 `H` is replaced
    /// by `DIR/H.ptx` when that file exists (the minimizer's fence edits).
    pub const PTX_OVERRIDE: &str = "FENCEHOUND_PTX_OVERRIDE";
    /// `1`: module records carry the PTX text (the runner's reference run asks for it).
    pub const RECORD_PTX: &str = "FENCEHOUND_RECORD_PTX";
    /// `1`: no messages on stderr (the side channel still gets everything).
    pub const QUIET: &str = "FENCEHOUND_QUIET";
    /// Path of an event log ([`crate::events`]) of the launches of one module: every
    /// access, fence and barrier, for the runner's observers (the minimizer's audit).
    pub const EVENTS: &str = "FENCEHOUND_EVENTS";
    /// The module (SHA-256 of its registered PTX) whose launches [`EVENTS`] logs.
    pub const EVENTS_MODULE: &str = "FENCEHOUND_EVENTS_MODULE";
}

/// Defaults when a variable is unset.
pub const DEFAULT_FUEL: u64 = 200_000_000;
pub const DEFAULT_WALL_MS: u64 = 30_000;

/// How the runtime runs every launch of one program execution.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    pub model: String,
    pub p: f64,
    pub seed: u64,
    pub scheduler: String,
    pub fuel: u64,
    pub wall_ms: u64,
    pub side_channel: Option<PathBuf>,
    pub trace: bool,
    pub race: bool,
    pub buffer_global: bool,
    pub buffer_shared: bool,
    pub kernels: Option<Vec<String>>,
    pub sites: Option<Vec<u32>>,
    pub sites_module: Option<String>,
    pub ptx_override: Option<PathBuf>,
    pub record_ptx: bool,
    pub quiet: bool,
    /// Where to write the event log of [`RuntimeConfig::events_module`]'s launches.
    pub events: Option<PathBuf>,
    pub events_module: Option<String>,
}

impl Default for RuntimeConfig {
    /// What a program gets when nothing is set: `sc`, no side channel.
    fn default() -> Self {
        RuntimeConfig {
            model: "sc".into(),
            p: 0.0,
            seed: 0,
            scheduler: "random".into(),
            fuel: DEFAULT_FUEL,
            wall_ms: DEFAULT_WALL_MS,
            side_channel: None,
            trace: false,
            race: false,
            buffer_global: true,
            buffer_shared: true,
            kernels: None,
            sites: None,
            sites_module: None,
            ptx_override: None,
            record_ptx: false,
            quiet: false,
            events: None,
            events_module: None,
        }
    }
}

/// A variable the runtime could not understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value}: {reason}")]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub reason: String,
}

fn flag(v: &str) -> bool {
    matches!(v.trim(), "1" | "true" | "yes")
}

impl RuntimeConfig {
    /// The variables that reproduce this configuration (every one, so that a variable
    /// inherited from the caller's environment cannot leak in).
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let bool_s = |b: bool| if b { "1" } else { "0" }.to_string();
        let buffer = match (self.buffer_global, self.buffer_shared) {
            (true, true) => "global,shared",
            (true, false) => "global",
            (false, true) => "shared",
            (false, false) => "none",
        };
        vec![
            (env::MODEL, self.model.clone()),
            (env::P, format!("{}", self.p)),
            (env::SEED, self.seed.to_string()),
            (env::SCHEDULER, self.scheduler.clone()),
            (env::FUEL, self.fuel.to_string()),
            (env::WALL_MS, self.wall_ms.to_string()),
            (
                env::SIDE_CHANNEL,
                self.side_channel
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            (env::TRACE, bool_s(self.trace)),
            (env::RACE, bool_s(self.race)),
            (env::BUFFER, buffer.into()),
            (
                env::KERNELS,
                self.kernels
                    .as_ref()
                    .map(|k| k.join(","))
                    .unwrap_or_default(),
            ),
            (
                env::SITES,
                self.sites
                    .as_ref()
                    .map(|s| {
                        // An empty set must stay distinguishable from "all sites".
                        if s.is_empty() {
                            "none".to_string()
                        } else {
                            s.iter()
                                .map(|x| x.to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        }
                    })
                    .unwrap_or_default(),
            ),
            (
                env::SITES_MODULE,
                self.sites_module.clone().unwrap_or_default(),
            ),
            (
                env::PTX_OVERRIDE,
                self.ptx_override
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            (env::RECORD_PTX, bool_s(self.record_ptx)),
            (env::QUIET, bool_s(self.quiet)),
            (
                env::EVENTS,
                self.events
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            (
                env::EVENTS_MODULE,
                self.events_module.clone().unwrap_or_default(),
            ),
        ]
    }

    /// Reads the configuration through `get` (`std::env::var` in the runtime); unset or
    /// empty variables take their defaults.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut c = RuntimeConfig::default();
        let val = |var: &'static str| get(var).filter(|v| !v.trim().is_empty());
        let bad = |var: &'static str, value: &str, reason: &str| ConfigError {
            var,
            value: value.to_string(),
            reason: reason.to_string(),
        };
        if let Some(v) = val(env::MODEL) {
            c.model = v.trim().to_string();
        }
        if let Some(v) = val(env::P) {
            c.p = v
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=1.0).contains(p))
                .ok_or_else(|| bad(env::P, &v, "must be a number in [0, 1]"))?;
        }
        if let Some(v) = val(env::SEED) {
            c.seed = v
                .trim()
                .parse()
                .map_err(|_| bad(env::SEED, &v, "must be an unsigned 64-bit integer"))?;
        }
        if let Some(v) = val(env::SCHEDULER) {
            c.scheduler = v.trim().to_string();
        }
        if let Some(v) = val(env::FUEL) {
            c.fuel = v
                .trim()
                .replace('_', "")
                .parse()
                .map_err(|_| bad(env::FUEL, &v, "must be a number of instructions"))?;
        }
        if let Some(v) = val(env::WALL_MS) {
            c.wall_ms = v
                .trim()
                .replace('_', "")
                .parse()
                .map_err(|_| bad(env::WALL_MS, &v, "must be milliseconds"))?;
        }
        c.side_channel = val(env::SIDE_CHANNEL).map(PathBuf::from);
        c.trace = val(env::TRACE).is_some_and(|v| flag(&v));
        c.race = val(env::RACE).is_some_and(|v| flag(&v));
        if let Some(v) = val(env::BUFFER) {
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            if parts
                .iter()
                .any(|p| !matches!(*p, "global" | "shared" | "none"))
            {
                return Err(bad(env::BUFFER, &v, "expected global, shared or none"));
            }
            c.buffer_global = parts.contains(&"global");
            c.buffer_shared = parts.contains(&"shared");
        }
        c.kernels = val(env::KERNELS).map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        if let Some(v) = val(env::SITES) {
            c.sites = Some(if v.trim() == "none" {
                Vec::new()
            } else {
                v.split(',')
                    .map(|s| s.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad(env::SITES, &v, "expected comma-separated site ids"))?
            });
        }
        c.sites_module = val(env::SITES_MODULE).map(|v| v.trim().to_string());
        c.ptx_override = val(env::PTX_OVERRIDE).map(PathBuf::from);
        c.record_ptx = val(env::RECORD_PTX).is_some_and(|v| flag(&v));
        c.quiet = val(env::QUIET).is_some_and(|v| flag(&v));
        c.events = val(env::EVENTS).map(PathBuf::from);
        c.events_module = val(env::EVENTS_MODULE).map(|v| v.trim().to_string());
        Ok(c)
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|v| std::env::var(v).ok())
    }
}

/// How a launch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchOutcome {
    Completed,
    /// An invalid memory access (the app sees `cudaErrorIllegalAddress` or
    /// `cudaErrorMisalignedAddress`).
    Fault,
    /// `trap` or a failed `assert`.
    Trap,
    /// Threads that can never proceed; the runtime ends the program.
    Deadlock,
    /// Fuel or wall-clock budget exhausted; the runtime ends the program.
    Timeout,
    /// The launch could not start (bad configuration, unknown kernel, unloadable module).
    Refused,
}

impl LaunchOutcome {
    pub fn is_failure(self) -> bool {
        !matches!(self, LaunchOutcome::Completed | LaunchOutcome::Refused)
    }
}

/// A store site that buffered at least once in a launch (recorded when tracing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSite {
    /// The vgpu site id (what [`env::SITES`] takes).
    pub site: u32,
    /// How many stores at this site were buffered.
    pub buffered: u64,
    /// `file.cu:LINE` when the PTX has line information, else `PTX line N`.
    pub location: String,
    /// The PTX instruction.
    pub ptx: String,
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// Launch index in the process (0, 1, ...); with the seed it fixes every choice.
    pub index: u32,
    /// Index of the module (see [`Record::Module`]).
    pub module: usize,
    /// The PTX entry name (mangled for C++ kernels).
    pub kernel: String,
    /// The kernel as written in the source (demangled).
    pub name: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    pub outcome: LaunchOutcome,
    /// Fault, trap or refusal message with the CUDA line, or the hang dump.
    #[serde(default)]
    pub message: String,
    /// The CUDA error the application sees for this launch (`cudaSuccess` when none).
    pub cuda_error: String,
    /// Whether this launch buffered stores (the kernel filter may exclude it).
    pub buffered: bool,
    pub lane_instructions: u64,
    /// Scheduler decisions, and loads that needed none (memory no thread of the launch
    /// writes, or shared memory settled until the next barrier).
    #[serde(default)]
    pub steps: u64,
    #[serde(default)]
    pub unwritten_loads: u64,
    /// Writes that landed outside the allocations the launch's bound held (pointer
    /// arithmetic from one allocation into another: undefined behaviour in CUDA C++);
    /// loads of those bytes made before the write read memory without the model or the
    /// race check (`fencehound_vgpu::ExecStats::unwritten_escapes`).
    #[serde(default)]
    pub unwritten_escapes: u64,
    pub wall_ms: u64,
    pub stats: BufferStats,
    /// Store sites that buffered (only when tracing).
    #[serde(default)]
    pub store_sites: Vec<StoreSite>,
    /// The buffering trace as text lines (only when tracing).
    #[serde(default)]
    pub trace: Vec<String>,
    /// Races found by the race check (only with [`env::RACE`]).
    #[serde(default)]
    pub races: Vec<fencehound_racecheck::RaceReport>,
}

/// One line of the side channel: `{"event": ..., "data": {...}}`. (Adjacent rather than
/// internal tagging: serde buffers internally tagged content, and buffered JSON cannot
/// restore the integer map keys of [`BufferStats`].)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "kebab-case")]
pub enum Record {
    /// The runtime initialised (first CUDA call of the process).
    Start {
        pid: u32,
        version: String,
        model: String,
        p: f64,
        seed: u64,
        scheduler: String,
    },
    /// A fat binary registered by the program, and the PTX chosen from it.
    Module {
        index: usize,
        /// The compilation unit's name in the fat binary, when it has one.
        source: String,
        /// The PTX target (`sm_80`) of the chosen entry.
        arch: String,
        /// SHA-256 of the PTX as registered (before any override).
        ptx_sha256: String,
        /// The PTX text, when [`env::RECORD_PTX`] asked for it.
        #[serde(default)]
        ptx: Option<String>,
        /// A replacement from [`env::PTX_OVERRIDE`] was used.
        #[serde(default)]
        overridden: bool,
        /// Kernels registered from the host (mangled names).
        #[serde(default)]
        kernels: Vec<String>,
        /// Why the module cannot run, if it cannot.
        #[serde(default)]
        error: Option<String>,
    },
    Launch(Box<LaunchRecord>),
    /// The program called an entry point the runtime does not implement.
    Unimplemented {
        name: String,
    },
    /// A problem outside any launch (bad configuration, unreadable fat binary).
    Error {
        message: String,
    },
}

/// Everything one execution's side channel said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideChannel {
    pub started: bool,
    pub modules: Vec<Record>,
    pub launches: Vec<LaunchRecord>,
    pub unimplemented: Vec<String>,
    pub errors: Vec<String>,
}

impl SideChannel {
    /// The first launch that failed (fault, trap, deadlock, timeout).
    pub fn first_failure(&self) -> Option<&LaunchRecord> {
        self.launches.iter().find(|l| l.outcome.is_failure())
    }

    /// Buffer statistics summed over launches.
    pub fn stats(&self) -> BufferStats {
        let mut s = BufferStats::default();
        for l in &self.launches {
            s.merge(&l.stats);
        }
        s
    }

    pub fn lane_instructions(&self) -> u64 {
        self.launches.iter().map(|l| l.lane_instructions).sum()
    }

    /// Store sites that buffered, merged over launches, by site id.
    pub fn store_sites(&self) -> BTreeMap<u32, StoreSite> {
        let mut out: BTreeMap<u32, StoreSite> = BTreeMap::new();
        for l in &self.launches {
            for s in &l.store_sites {
                out.entry(s.site)
                    .and_modify(|e| e.buffered += s.buffered)
                    .or_insert_with(|| s.clone());
            }
        }
        out
    }
}

/// Parses side-channel text; a line that does not parse (the torn last line of a killed
/// process) is skipped.
pub fn parse_side_channel(text: &str) -> SideChannel {
    let mut sc = SideChannel::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Record>(line) {
            Ok(Record::Start { .. }) => sc.started = true,
            Ok(r @ Record::Module { .. }) => sc.modules.push(r),
            Ok(Record::Launch(l)) => sc.launches.push(*l),
            Ok(Record::Unimplemented { name }) => {
                if !sc.unimplemented.contains(&name) {
                    sc.unimplemented.push(name)
                }
            }
            Ok(Record::Error { message }) => sc.errors.push(message),
            Err(_) => {}
        }
    }
    sc
}

/// Reads a side-channel file; a missing file is an empty channel (the program never
/// reached the runtime).
pub fn read_side_channel(path: &Path) -> std::io::Result<SideChannel> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(parse_side_channel(&t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SideChannel::default()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn config_round_trips_through_the_environment() {
        let c = RuntimeConfig {
            model: "scoped".into(),
            p: 0.5,
            seed: 42,
            scheduler: "pct:3".into(),
            fuel: 1000,
            wall_ms: 77,
            side_channel: Some("/tmp/x.jsonl".into()),
            trace: true,
            race: false,
            buffer_global: true,
            buffer_shared: false,
            kernels: Some(vec!["_Z3dotPfS_".into(), "k2".into()]),
            sites: Some(vec![3, 9]),
            sites_module: Some("ab12".into()),
            ptx_override: Some("/tmp/o".into()),
            record_ptx: true,
            quiet: true,
            events: Some("/tmp/e.bin".into()),
            events_module: Some("cd34".into()),
        };
        let env: HashMap<&str, String> = c.to_env().into_iter().collect();
        let back = RuntimeConfig::from_lookup(|k| env.get(k).cloned()).unwrap();
        assert_eq!(back, c);
        // An empty site set is not "every site".
        let c2 = RuntimeConfig {
            sites: Some(vec![]),
            ..RuntimeConfig::default()
        };
        let env: HashMap<&str, String> = c2.to_env().into_iter().collect();
        assert_eq!(
            RuntimeConfig::from_lookup(|k| env.get(k).cloned())
                .unwrap()
                .sites,
            Some(vec![])
        );
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = RuntimeConfig::from_lookup(|k| (k == env::P).then(|| "2".to_string())).unwrap_err();
        assert_eq!(e.var, env::P);
        let e = RuntimeConfig::from_lookup(|k| (k == env::BUFFER).then(|| "gobal".to_string()))
            .unwrap_err();
        assert_eq!(e.var, env::BUFFER);
    }

    #[test]
    fn a_torn_last_line_is_ignored() {
        let l = LaunchRecord {
            index: 0,
            module: 0,
            kernel: "k".into(),
            name: "k".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            dynamic_shared: 0,
            outcome: LaunchOutcome::Fault,
            message: "out of bounds".into(),
            cuda_error: "cudaErrorIllegalAddress".into(),
            buffered: true,
            lane_instructions: 5,
            steps: 0,
            unwritten_loads: 0,
            unwritten_escapes: 0,
            wall_ms: 0,
            stats: BufferStats::default(),
            store_sites: vec![],
            trace: vec![],
            races: vec![],
        };
        let mut text = serde_json::to_string(&Record::Launch(Box::new(l.clone()))).unwrap();
        text.push('\n');
        text.push_str("{\"event\":\"launch\",\"data\":{\"ind");
        let sc = parse_side_channel(&text);
        assert_eq!(sc.launches, vec![l]);
        assert_eq!(sc.first_failure().map(|l| l.index), Some(0));
    }
}
