//! Campaign files: what to compile, how to launch it, how to judge it, and which variants
//! (sets of `-D` defines) to fuzz. TOML, read with serde; every error names the file and,
//! where the TOML parser knows it, the line and key.
//!
//! ```toml
//! name = "cbe_dot"                  # default: the file stem
//! source = "cbe_dot.cu"             # .cu (NVRTC) or .ptx, relative to this file
//! arch = "compute_80"               # optional
//! nvrtc_options = []                # optional extra NVRTC options
//! seed = 1                          # master seed of `fencehound fuzz`
//! buffers = [                       # argspec grammar (fencehound-argspec): NAME:TYPE[LEN] INIT
//!   "a:f32[2048] random(1,0,1)",
//!   "c:f32[1] zero",
//!   "mutex:i32[1] zero",
//! ]
//!
//! [[launch]]                        # one or more, run in order on one device
//! kernel = "dot"
//! grid = [8]                        # [x], [x, y] or [x, y, z]
//! block = [128]
//! dynamic_shared = 0
//! args = ["a", "b", "c", "mutex", "n:u32=2048"]   # buffer names or scalars
//!
//! [[oracle]]                        # see fencehound-oracle for every kind
//! type = "golden"
//! buffers = ["c"]
//! rel = 1e-5
//!
//! [budget]
//! fuel = 50_000_000                 # lane instructions per launch
//! wall_ms = 10_000                  # per execution
//!
//! [fuzz]                            # defaults for `fencehound fuzz`
//! models = ["bugaroo"]
//! p = [0.25, 0.5, 0.75, 1.0]
//! runs = 50                         # per variant × model × p
//! scheduler = "random"              # random | pct[:depth] | rr[:quantum]
//!
//! [variants.fenced]
//! defines = { LOCK_FENCE = "1" }
//! expect = "pass"                   # pass | fail | {bugaroo = "pass", scoped = "fail"}
//! ```

use fencehound_argspec::{self as argspec, ArgSpec, BufferSpec};
use fencehound_oracle::OracleSpec;
use fencehound_vgpu::Dim3;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    // Not `source`: the message already carries the I/O error, and a `#[source]` would
    // print it twice in an error chain (`cannot read x: No such file: No such file`).
    #[error("cannot read {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}{}: {key}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        /// The line the problem is on, when it can be found.
        line: Option<usize>,
        key: String,
        message: String,
    },
}

/// What a variant is expected to do under fuzzing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// No execution may fail.
    Pass,
    /// Some execution must fail.
    Fail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ExpectSpec {
    All(Expect),
    PerModel(BTreeMap<String, Expect>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    #[serde(default)]
    pub defines: BTreeMap<String, String>,
    #[serde(default)]
    pub expect: Option<ExpectSpec>,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub kernel: String,
    pub grid: Vec<u32>,
    pub block: Vec<u32>,
    #[serde(default)]
    pub dynamic_shared: u32,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    #[serde(default = "default_fuel")]
    pub fuel: u64,
    #[serde(default = "default_wall")]
    pub wall_ms: u64,
}

fn default_fuel() -> u64 {
    200_000_000
}
fn default_wall() -> u64 {
    30_000
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            fuel: default_fuel(),
            wall_ms: default_wall(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FuzzDefaults {
    #[serde(default = "default_models")]
    pub models: Vec<String>,
    #[serde(default = "default_p")]
    pub p: Vec<f64>,
    #[serde(default = "default_runs")]
    pub runs: u32,
    #[serde(default = "default_sched")]
    pub scheduler: String,
}

/// The paper's flat buffers, the scope-aware buffers, and loads that may read older
/// values (the only model under which reader-side fences matter).
fn default_models() -> Vec<String> {
    vec!["bugaroo".into(), "scoped".into(), "weak".into()]
}
fn default_p() -> Vec<f64> {
    vec![0.25, 0.5, 0.75, 1.0]
}
fn default_runs() -> u32 {
    100
}
fn default_sched() -> String {
    "random".into()
}

impl Default for FuzzDefaults {
    fn default() -> Self {
        FuzzDefaults {
            models: default_models(),
            p: default_p(),
            runs: default_runs(),
            scheduler: default_sched(),
        }
    }
}

/// The campaign file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub source: PathBuf,
    #[serde(default)]
    pub arch: Option<String>,
    #[serde(default)]
    pub nvrtc_options: Vec<String>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub buffers: Vec<String>,
    #[serde(default)]
    pub launch: Vec<Launch>,
    #[serde(default)]
    pub oracle: Vec<OracleSpec>,
    #[serde(default)]
    pub budget: Budget,
    #[serde(default)]
    pub fuzz: FuzzDefaults,
    #[serde(default)]
    /// In file order (the order reports list them in).
    pub variants: indexmap::IndexMap<String, Variant>,
}

/// The line of `text` a validation error is about: the first line holding the first
/// back-quoted token of the message (the offending value), else the first line that sets
/// the key's last field (`grid = ...`).
fn locate(text: &str, key: &str, message: &str) -> Option<usize> {
    let token = message.split('`').nth(1).filter(|t| !t.is_empty());
    if let Some(t) = token {
        let quoted = format!("\"{t}\"");
        if let Some(i) = text.lines().position(|l| l.contains(&quoted)) {
            return Some(i + 1);
        }
        if let Some(i) = text.lines().position(|l| l.contains(t)) {
            return Some(i + 1);
        }
    }
    let field = key.rsplit('.').next()?.split('[').next()?;
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with(field) && l[field.len()..].trim_start().starts_with('=')
        })
        .map(|i| i + 1)
}

/// Buffer names an oracle refers to.
fn oracle_buffers(o: &OracleSpec) -> Vec<String> {
    use fencehound_oracle::Invariant;
    match o {
        OracleSpec::Golden { buffers, .. } => buffers.clone().unwrap_or_default(),
        OracleSpec::Expect { buffer, .. } => vec![buffer.clone()],
        OracleSpec::Invariant { buffer, check } => {
            let mut v = vec![buffer.clone()];
            match check {
                Invariant::Sum {
                    equals_input: Some(i),
                    ..
                }
                | Invariant::PermutationOf { input: i } => v.push(i.clone()),
                _ => {}
            }
            v
        }
        OracleSpec::Command { .. } => Vec::new(),
    }
}

/// One launch, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedLaunch {
    pub kernel: String,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
    /// Each argument: a buffer (index into `Campaign::buffers`) or a scalar.
    pub args: Vec<LaunchArg>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LaunchArg {
    Buffer(usize),
    Scalar(argspec::ScalarSpec),
}

/// A validated campaign.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub name: String,
    pub text: String,
    pub file: CampaignFile,
    pub source: PathBuf,
    pub buffers: Vec<BufferSpec>,
    pub launches: Vec<ResolvedLaunch>,
    /// Variant names in file order (BTreeMap order); `default` when none are given.
    pub variants: Vec<(String, Variant)>,
}

fn dim(v: &[u32], path: &Path, key: &str, text: &str) -> Result<Dim3, CampaignError> {
    let bad = |message: &str| CampaignError::Invalid {
        line: locate(text, key, message),
        path: path.to_path_buf(),
        key: key.to_string(),
        message: message.to_string(),
    };
    match v {
        [x] => Ok(Dim3::new(*x, 1, 1)),
        [x, y] => Ok(Dim3::new(*x, *y, 1)),
        [x, y, z] => Ok(Dim3::new(*x, *y, *z)),
        _ => Err(bad("expected [x], [x, y] or [x, y, z]")),
    }
    .and_then(|d| {
        if d.x == 0 || d.y == 0 || d.z == 0 {
            Err(bad("dimensions must be at least 1"))
        } else {
            Ok(d)
        }
    })
}

impl Campaign {
    pub fn load(path: &Path) -> Result<Campaign, CampaignError> {
        let text = std::fs::read_to_string(path).map_err(|error| CampaignError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Campaign::from_text(path, text)
    }

    pub fn from_text(path: &Path, text: String) -> Result<Campaign, CampaignError> {
        let file: CampaignFile = toml::from_str(&text).map_err(|e| CampaignError::Toml {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let invalid = |key: String, message: String| CampaignError::Invalid {
            path: path.to_path_buf(),
            line: locate(&text, &key, &message),
            key,
            message,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let source = dir.join(&file.source);
        let ext = source.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "cu" && ext != "ptx" {
            return Err(invalid(
                "source".into(),
                format!("`{}` must end in .cu or .ptx", file.source.display()),
            ));
        }
        let mut buffers: Vec<BufferSpec> = Vec::new();
        for (i, b) in file.buffers.iter().enumerate() {
            let key = format!("buffers[{i}]");
            match argspec::parse_arg(b) {
                Ok(ArgSpec::Buffer(mut spec)) => {
                    if let argspec::Init::File(p) = &spec.init {
                        if p.is_relative() {
                            spec.init = argspec::Init::File(dir.join(p));
                        }
                    }
                    if buffers.iter().any(|x| x.name == spec.name) {
                        return Err(invalid(
                            key,
                            format!("buffer `{}` is declared twice", spec.name),
                        ));
                    }
                    buffers.push(spec);
                }
                Ok(ArgSpec::Scalar(_)) => {
                    return Err(invalid(
                        key,
                        format!("`{b}` is a scalar; scalars go in a launch's args"),
                    ))
                }
                Err(e) => return Err(invalid(key, e.to_string())),
            }
        }
        if file.launch.is_empty() {
            return Err(invalid(
                "launch".into(),
                "at least one [[launch]] is required".into(),
            ));
        }
        let mut launches = Vec::new();
        for (i, l) in file.launch.iter().enumerate() {
            let key = |k: &str| format!("launch[{i}].{k}");
            let mut args = Vec::new();
            for (j, a) in l.args.iter().enumerate() {
                if let Some(k) = buffers.iter().position(|b| b.name == *a) {
                    args.push(LaunchArg::Buffer(k));
                    continue;
                }
                match argspec::parse_arg(a) {
                    Ok(ArgSpec::Scalar(s)) => args.push(LaunchArg::Scalar(s)),
                    Ok(ArgSpec::Buffer(_)) => {
                        return Err(invalid(key(&format!("args[{j}]")), format!("`{a}`: declare buffers in `buffers`, then name them here")))
                    }
                    Err(_) => {
                        return Err(invalid(
                            key(&format!("args[{j}]")),
                            format!("`{a}` is neither a declared buffer ({}) nor a scalar `NAME:TYPE=VALUE`", buffers.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")),
                        ))
                    }
                }
            }
            launches.push(ResolvedLaunch {
                kernel: l.kernel.clone(),
                grid: dim(&l.grid, path, &key("grid"), &text)?,
                block: dim(&l.block, path, &key("block"), &text)?,
                dynamic_shared: l.dynamic_shared,
                args,
            });
        }
        for (i, o) in file.oracle.iter().enumerate() {
            if let Err(e) = o.validate() {
                return Err(invalid(format!("oracle[{i}]"), e.to_string()));
            }
            for name in oracle_buffers(o) {
                if !buffers.iter().any(|b| b.name == name) {
                    return Err(invalid(
                        format!("oracle[{i}]"),
                        format!("no buffer named `{name}`"),
                    ));
                }
            }
        }
        if file.oracle.is_empty() {
            return Err(invalid(
                "oracle".into(),
                "at least one [[oracle]] is required (e.g. type = \"golden\")".into(),
            ));
        }
        for m in &file.fuzz.models {
            if fencehound_handlers::Model::parse(m).is_none() {
                return Err(invalid(
                    "fuzz.models".into(),
                    format!("unknown model `{m}` (sc, bugaroo, scoped, weak)"),
                ));
            }
        }
        if fencehound_vgpu::SchedulerKind::parse(&file.fuzz.scheduler).is_none() {
            return Err(invalid(
                "fuzz.scheduler".into(),
                format!(
                    "unknown scheduler `{}` (random, pct[:depth], rr[:quantum])",
                    file.fuzz.scheduler
                ),
            ));
        }
        if file.fuzz.p.iter().any(|p| !(0.0..=1.0).contains(p)) {
            return Err(invalid(
                "fuzz.p".into(),
                "probabilities must be in [0, 1]".into(),
            ));
        }
        let mut variants: Vec<(String, Variant)> = file.variants.clone().into_iter().collect();
        if variants.is_empty() {
            variants.push((
                "default".into(),
                Variant {
                    defines: BTreeMap::new(),
                    expect: None,
                    description: None,
                },
            ));
        }
        for (name, v) in &variants {
            if let Some(ExpectSpec::PerModel(m)) = &v.expect {
                for k in m.keys() {
                    if fencehound_handlers::Model::parse(k).is_none() {
                        return Err(invalid(
                            format!("variants.{name}.expect"),
                            format!("unknown model `{k}`"),
                        ));
                    }
                }
            }
        }
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "campaign".into())
        });
        Ok(Campaign {
            path: path.to_path_buf(),
            dir,
            name,
            text,
            file,
            source,
            buffers,
            launches,
            variants,
        })
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    pub fn variant_names(&self) -> Vec<&str> {
        self.variants.iter().map(|(n, _)| n.as_str()).collect()
    }
}

impl Variant {
    /// The expectation for a model, if the campaign states one.
    pub fn expect_for(&self, model: &str) -> Option<Expect> {
        match &self.expect {
            None => None,
            Some(ExpectSpec::All(e)) => Some(*e),
            Some(ExpectSpec::PerModel(m)) => m.get(model).copied(),
        }
    }
}
