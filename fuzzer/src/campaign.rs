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
//! # A kernel may be named as written in C++ (`reduce<128, true>`, `ns::k`): NVRTC
//! # instantiates it (a name expression), no `extern "C"` needed. A struct passed by value:
//! # `NAME:{TYPE VALUE, ...}` (fields laid out with C alignment, zero-padded to the
//! # kernel's parameter size), e.g. "f:{f64 2.0, i32 7, i8 1, f32 0, f32 0, f32 0.5}".
//!
//! # __device__ variables of the module, read back for oracles like buffers (and usable
//! # as kernel arguments: their address). INIT as for buffers; `keep` keeps the
//! # variable's own initializer.
//! globals = ["total:i32[1] zero", "table:u32[4] keep"]
//!
//! # nvrtc_options may use $NVRTC_BUNDLED_HEADERS (NVRTC's own CUDA headers, e.g. for
//! # <cooperative_groups.h>) and $CCCL_INCLUDE; a relative -I is relative to this file:
//! # nvrtc_options = ["--use-bundled-headers=$NVRTC_BUNDLED_HEADERS", "-Iinclude"]
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
//!
//! # Programs
//!
//! A campaign may run a whole CUDA program instead of kernels: `build` and `run` replace
//! `buffers` and `[[launch]]`, and the oracles judge the program's process (see
//! `fencehound_oracle::process`). Every execution is one run of the program under
//! fencehound's `libcudart.so.13`, in a fresh working directory, with the model, `p_w` and
//! seed passed through the environment (`crate::program_campaign`, over `crate::program`).
//!
//! ```toml
//! name = "dot_program"
//! source = "dot_lock.cu"            # the .cu holding the kernels (minimize patches it)
//! # A shell command (or an argv array), run in the campaign's directory, once per variant.
//! # {exe}: where the program must be written; {defines}: the variant's -D options;
//! # {fencehound}: this fencehound binary; {dir}: the campaign's directory.
//! build = "{fencehound} nvcc -o {exe} {defines} dot_lock.cu"
//! run = ["{exe}", "2048"]           # argv of every execution ({exe}, {dir} expanded)
//!
//! [[oracle]]
//! type = "exit"                     # exit status 0
//! [[oracle]]
//! type = "stdout"
//! regex = "(?m)^PASS"               # or exact = "...", or golden = true (the sc run's)
//!
//! [budget]
//! fuel = 50_000_000                 # per launch
//! wall_ms = 10_000                  # per launch
//! timeout_ms = 60_000               # the whole process (default: 10 × wall_ms)
//!
//! [variants.no_fence]
//! defines = { UNLOCK_FENCE = "" }
//! expect = "fail"
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
    /// A kernel or program source where a campaign file was expected (the TOML parser's
    /// "invalid key" at line 1 told a user who ran `fencehound fuzz kernel.cu` nothing).
    #[error(
        "{path} is {what}, not a campaign file: a campaign is a TOML file that names the \
         kernel's source, its launch, arguments and oracle, and its variants (see the \
         campaigns/ directory and README.md); to run one kernel use `fencehound run-kernel`, \
         a whole program `fencehound nvcc` then `fencehound exec`"
    )]
    NotCampaign { path: PathBuf, what: &'static str },
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
    /// Programs: the whole process's limit (default 10 × `wall_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
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
            timeout_ms: None,
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
    /// `__device__` variables bound like buffers (`NAME:TYPE[LEN] INIT`, INIT may be `keep`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub globals: Vec<String>,
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
    /// Programs: how to build the program (a shell command or an argv array).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildCommand>,
    /// Programs: the argv of every execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Vec<String>>,
}

/// A program's build step: a shell command (`sh -c`) or an argv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BuildCommand {
    Shell(String),
    Argv(Vec<String>),
}

/// A program campaign's build and run, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramSpec {
    pub build: Option<BuildCommand>,
    pub run: Vec<String>,
    /// Limit of one run of the program, in milliseconds.
    pub timeout_ms: u64,
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
        _ => Vec::new(),
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
    /// A struct by value, laid out (zero-padded to the parameter's size at launch).
    Bytes(Vec<u8>),
}

/// Parses `NAME:{TYPE VALUE, ...}`: a struct passed by value. Each field is placed at the
/// next multiple of its size (C's natural alignment for these scalar types).
pub fn parse_struct_arg(s: &str) -> Option<Result<Vec<u8>, String>> {
    let (_, rest) = s.split_once(':')?;
    let body = rest.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut out: Vec<u8> = Vec::new();
    for field in body.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let Some((ty_text, value)) = field.split_once(char::is_whitespace) else {
            return Some(Err(format!(
                "field `{field}`: expected `TYPE VALUE`, e.g. `f32 1.5`"
            )));
        };
        let Some(ty) = argspec::ElemType::parse(ty_text) else {
            return Some(Err(format!("field `{field}`: unknown type `{ty_text}`")));
        };
        let lit = match argspec::parse_literal(value.trim(), ty) {
            Ok(l) => l,
            Err(e) => return Some(Err(format!("field `{field}`: {e}"))),
        };
        let size = ty.size();
        out.resize(out.len().div_ceil(size) * size, 0);
        let bits = argspec::literal_bits(lit, ty);
        out.extend_from_slice(&bits.to_le_bytes()[..size]);
    }
    if out.is_empty() {
        return Some(Err("a struct argument needs at least one field".into()));
    }
    Some(Ok(out))
}

/// Whether a launch names its kernel as a C++ expression rather than a PTX entry name.
pub fn is_name_expression(kernel: &str) -> bool {
    !kernel
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
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
    /// Set for program campaigns (`build`/`run` instead of buffers and launches).
    pub program: Option<ProgramSpec>,
    /// Buffers (by index into `buffers`) bound to `__device__` variables, and whether the
    /// variable keeps its own initializer.
    pub globals: Vec<(usize, bool)>,
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

/// What a file that is not TOML looks like, when it is a kernel or a program's source:
/// by its extension, or (any name) by its first line that is not blank.
fn source_kind(path: &Path, text: &str) -> Option<&'static str> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("cu" | "cuh") => return Some("CUDA source"),
        Some("ptx") => return Some("PTX"),
        Some("litmus") => return Some("a litmus test (run it with `fencehound litmus`)"),
        _ => {}
    }
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if first.starts_with(".version") || first.starts_with(".target") {
        Some("PTX")
    } else if first.starts_with("#include") || first.starts_with("__global__") {
        Some("CUDA source")
    } else {
        None
    }
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
        let file: CampaignFile =
            toml::from_str(&text).map_err(|e| match source_kind(path, &text) {
                Some(what) => CampaignError::NotCampaign {
                    path: path.to_path_buf(),
                    what,
                },
                None => CampaignError::Toml {
                    path: path.to_path_buf(),
                    message: e.to_string().trim_end().to_string(),
                },
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
        let mut globals = Vec::new();
        for (i, g) in file.globals.iter().enumerate() {
            let key = format!("globals[{i}]");
            let (text, keep) = match g.trim().strip_suffix(" keep") {
                Some(t) => (t, true),
                None => (g.as_str(), false),
            };
            match argspec::parse_arg(text) {
                Ok(ArgSpec::Buffer(spec)) => {
                    if buffers.iter().any(|x| x.name == spec.name) {
                        return Err(invalid(key, format!("`{}` is declared twice", spec.name)));
                    }
                    globals.push((buffers.len(), keep));
                    buffers.push(spec);
                }
                Ok(ArgSpec::Scalar(_)) | Err(_) => {
                    return Err(invalid(
                        key,
                        format!("`{g}`: expected `NAME:TYPE[LEN] INIT` (INIT may be `keep`) naming a __device__ variable"),
                    ))
                }
            }
        }
        let program = if file.run.is_some() || file.build.is_some() {
            let Some(run) = file.run.clone().filter(|r| !r.is_empty()) else {
                return Err(invalid(
                    "run".into(),
                    "a program campaign needs `run`, the program's argv (e.g. [\"{exe}\"])".into(),
                ));
            };
            if !file.launch.is_empty() || !file.buffers.is_empty() {
                return Err(invalid(
                    if file.launch.is_empty() { "buffers" } else { "launch" }.into(),
                    "a program campaign (`build`/`run`) has no buffers or [[launch]]: the program allocates and launches itself".into(),
                ));
            }
            if let Some(i) = file.oracle.iter().position(|o| !o.is_process()) {
                return Err(invalid(
                    format!("oracle[{i}]"),
                    format!("`{}` judges kernel buffers; a program's oracles are exit, stdout, stderr and file", file.oracle[i].describe()),
                ));
            }
            if matches!(&file.build, Some(BuildCommand::Argv(a)) if a.is_empty()) {
                return Err(invalid(
                    "build".into(),
                    "an empty argv builds nothing".into(),
                ));
            }
            Some(ProgramSpec {
                build: file.build.clone(),
                run,
                timeout_ms: file
                    .budget
                    .timeout_ms
                    .unwrap_or(file.budget.wall_ms.saturating_mul(10)),
            })
        } else {
            if file.launch.is_empty() {
                return Err(invalid(
                    "launch".into(),
                    "at least one [[launch]] is required (or `build`/`run` for a whole program)"
                        .into(),
                ));
            }
            if let Some(i) = file.oracle.iter().position(|o| o.is_process()) {
                return Err(invalid(
                    format!("oracle[{i}]"),
                    format!("`{}` judges a program's process; add `build` and `run`, or use golden, expect, invariant or command", file.oracle[i].describe()),
                ));
            }
            None
        };
        let mut launches = Vec::new();
        for (i, l) in file.launch.iter().enumerate() {
            let key = |k: &str| format!("launch[{i}].{k}");
            let mut args = Vec::new();
            for (j, a) in l.args.iter().enumerate() {
                if let Some(k) = buffers.iter().position(|b| b.name == *a) {
                    args.push(LaunchArg::Buffer(k));
                    continue;
                }
                if let Some(r) = parse_struct_arg(a) {
                    match r {
                        Ok(bytes) => args.push(LaunchArg::Bytes(bytes)),
                        Err(e) => {
                            return Err(invalid(key(&format!("args[{j}]")), format!("`{a}`: {e}")))
                        }
                    }
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
            program,
            globals,
        })
    }

    pub fn is_program(&self) -> bool {
        self.program.is_some()
    }

    /// Fuzzing, minimizing and auditing judge outputs: they need an `[[oracle]]` (the race
    /// check does not, so a campaign written only for `fencehound race` may have none).
    pub fn require_oracle(&self) -> Result<(), CampaignError> {
        if !self.file.oracle.is_empty() {
            return Ok(());
        }
        let example = if self.is_program() { "exit" } else { "golden" };
        Err(CampaignError::Invalid {
            path: self.path.clone(),
            line: None,
            key: "oracle".into(),
            message: format!(
                "at least one [[oracle]] is required to judge executions (e.g. type = \"{example}\"); `fencehound race` needs none"
            ),
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
