//! Program campaigns: a campaign whose subject is a whole CUDA program (`build`/`run`
//! instead of kernels and buffers, oracles on its exit status, output and files). A
//! variant is built once (cached by the campaign, its defines and the files beside it),
//! run once under `sc` for the reference, and then run once per execution, as a child
//! process under fencehound's runtime ([`crate::program`]) with the execution's model,
//! `p_w`, seed, scheduler and filters in its environment; the side channel says how each
//! launch ended.
//!
//! Which kind of subject a campaign is, and so whether this module runs it, is decided in
//! one place: [`crate::execution::Subject`].

use crate::campaign::{BuildCommand, Campaign};
use crate::program::{check_program, run_program, ProgramOutcome, ProgramRun, RuntimeDir, Streams};
use crate::types::Observer;
use crate::types::{sha256_hex, ExecResult, ExecSpec, PrepareError};
use crate::verdict::Verdict;
use fencehound_cudart_protocol::{
    events, LaunchOutcome, RuntimeConfig, SideChannel, HANG_EXIT_STATUS,
};
use fencehound_oracle::process::{self as oracle_process, ProcessOutputs};
use fencehound_oracle::{Judgement, Outputs};
use fencehound_vgpu::SchedulerKind;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A prepared program variant: the built program, the module the minimizer works on, and
/// the `sc` reference run.
#[derive(Debug)]
pub struct PreparedProgram {
    runtime: Arc<RuntimeDir>,
    exe: PathBuf,
    /// SHA-256 of the registered PTX of the module whose PTX `Prepared::ptx` holds.
    module_sha: String,
    /// Holds `<module_sha>.ptx` when the prepared PTX differs from the program's own.
    override_dir: Option<tempfile::TempDir>,
    pub golden: ProcessOutputs,
    /// Kernels (mangled PTX names) the reference run launched, in first-launch order.
    pub kernels: Vec<String>,
}

impl PreparedProgram {
    /// The built executable.
    pub fn exe(&self) -> &Path {
        &self.exe
    }
}

/// `random`, `pct:3`, `rr:1`: the runtime's spelling of a scheduler.
pub fn scheduler_name(k: SchedulerKind) -> String {
    match k {
        SchedulerKind::Random => "random".into(),
        SchedulerKind::Pct { depth } => format!("pct:{depth}"),
        SchedulerKind::RoundRobin { quantum } => format!("rr:{quantum}"),
    }
}

/// The `fencehound` binary for `{fencehound}`: `$FENCEHOUND_BIN`, this process when it is
/// fencehound, else a `fencehound` beside it or one directory up (examples and tests run
/// from `target/*/examples` and `target/*/deps`), else `fencehound` on `PATH`.
fn fencehound_bin() -> String {
    if let Some(v) = std::env::var_os("FENCEHOUND_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(v).display().to_string();
    }
    if let Ok(me) = std::env::current_exe() {
        if me.file_stem().is_some_and(|s| s == "fencehound") {
            return me.display().to_string();
        }
        if let Some(dir) = me.parent() {
            for c in [dir.join("fencehound"), dir.join("../fencehound")] {
                if c.is_file() {
                    return c.display().to_string();
                }
            }
        }
    }
    "fencehound".into()
}

/// Expands `{exe}`, `{dir}`, `{fencehound}` in one word.
fn expand(word: &str, exe: &Path, dir: &Path) -> String {
    let me = fencehound_bin();
    word.replace("{exe}", &exe.display().to_string())
        .replace("{dir}", &dir.display().to_string())
        .replace("{fencehound}", &me)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Where built programs are kept: `programs/` in the PTX cache directory, else the
/// system's temporary directory.
fn build_root() -> PathBuf {
    match fencehound_toolchain::PtxCache::from_env() {
        Some(c) => c.dir().join("programs"),
        None => std::env::temp_dir().join("fencehound-programs"),
    }
}

/// The cache key of a variant's build: the campaign text, the variant's defines, the build
/// command, and the contents of every file directly in the campaign's directory (sources
/// and headers beside it; files elsewhere are not part of the key).
fn build_key(c: &Campaign, variant: &str) -> String {
    let mut h = Sha256::new();
    h.update(c.text.as_bytes());
    h.update(variant.as_bytes());
    if let Some(v) = c.variant(variant) {
        for (k, val) in &v.defines {
            h.update(format!("-D{k}={val}\0").as_bytes());
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&c.dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for f in files {
        if std::fs::metadata(&f)
            .map(|m| m.len() <= 4 << 20)
            .unwrap_or(false)
        {
            h.update(f.display().to_string().as_bytes());
            h.update(std::fs::read(&f).unwrap_or_default());
        }
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Builds the variant's program (or reuses an identical earlier build); returns the
/// executable's path.
pub fn build(c: &Campaign, variant: &str) -> Result<PathBuf, String> {
    let Some(spec) = &c.program else {
        return Err("not a program campaign".into());
    };
    let name = std::path::Path::new(&c.name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let final_dir = build_root().join(format!("{}-{}", name, build_key(c, variant)));
    let exe_in = |d: &Path| d.join(&name);
    let Some(build) = &spec.build else {
        // No build step: `run` names an existing program.
        return Ok(PathBuf::from(expand(&spec.run[0], Path::new(""), &c.dir)));
    };
    if exe_in(&final_dir).is_file() {
        return Ok(exe_in(&final_dir));
    }
    let root = build_root();
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".build-")
        .tempdir_in(&root)
        .map_err(|e| format!("cannot create a build directory in {}: {e}", root.display()))?;
    let exe = exe_in(tmp.path());
    let defines: Vec<String> = c
        .variant(variant)
        .map(|v| {
            v.defines
                .iter()
                .map(|(k, v)| format!("-D{k}={v}"))
                .collect()
        })
        .unwrap_or_default();
    let mut cmd = match build {
        BuildCommand::Shell(s) => {
            let line = expand(s, &exe, &c.dir).replace(
                "{defines}",
                &defines
                    .iter()
                    .map(|d| shell_quote(d))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(line);
            cmd
        }
        BuildCommand::Argv(argv) => {
            let mut words = Vec::new();
            for w in argv {
                if w == "{defines}" {
                    words.extend(defines.iter().cloned());
                } else {
                    words.push(expand(w, &exe, &c.dir));
                }
            }
            let mut cmd = Command::new(&words[0]);
            cmd.args(&words[1..]);
            cmd
        }
    };
    let out = cmd
        .current_dir(&c.dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("build: cannot run the build command: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "build: the build command failed ({}) for variant `{variant}`:\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if !exe.is_file() {
        return Err(format!(
            "build: the build command succeeded but did not write {{exe}} ({})",
            exe.display()
        ));
    }
    let staged = tmp.keep();
    if std::fs::rename(&staged, &final_dir).is_err() {
        // Another process built the same thing first; its copy is as good.
        let _ = std::fs::remove_dir_all(&staged);
    }
    Ok(exe_in(&final_dir))
}

/// The runtime link directory, shared by every prepared program of this process.
fn runtime_dir() -> Result<Arc<RuntimeDir>, String> {
    static DIR: OnceLock<Mutex<Option<Arc<RuntimeDir>>>> = OnceLock::new();
    let m = DIR.get_or_init(|| Mutex::new(None));
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = g.as_ref() {
        return Ok(d.clone());
    }
    let d = Arc::new(RuntimeDir::new().map_err(|e| e.to_string())?);
    *g = Some(d.clone());
    Ok(d)
}

/// Runs the program once as `spec` says, in a fresh working directory.
fn run_once(
    c: &Campaign,
    rt: &RuntimeDir,
    exe: &Path,
    config: RuntimeConfig,
    cancel: Option<&AtomicBool>,
) -> Result<(ProgramOutcome, ProcessOutputs), String> {
    let Some(spec) = &c.program else {
        return Err("not a program campaign".into());
    };
    let work = tempfile::Builder::new()
        .prefix("fencehound-run-")
        .tempdir()
        .map_err(|e| format!("cannot create a working directory: {e}"))?;
    let argv: Vec<String> = spec.run.iter().map(|w| expand(w, exe, &c.dir)).collect();
    let run = ProgramRun {
        argv: &argv,
        cwd: Some(work.path()),
        config,
        streams: Streams::Capture,
        timeout: Some(Duration::from_millis(spec.timeout_ms)),
        env: &[],
        side_channel: None,
        cancel,
    };
    let out = run_program(rt, &run).map_err(|e| e.to_string())?;
    let mut files = std::collections::BTreeMap::new();
    for p in oracle_process::files_to_collect(&c.file.oracle) {
        files.insert(p.clone(), std::fs::read(work.path().join(&p)).ok());
    }
    let po = ProcessOutputs {
        status: out.status,
        signal: out.signal,
        stdout: out.stdout.clone(),
        stderr: out.stderr.clone(),
        files,
    };
    Ok((out, po))
}

/// The runtime configuration of one execution.
fn config_for(
    c: &Campaign,
    spec: &ExecSpec,
    module_sha: &str,
    override_dir: Option<&Path>,
) -> RuntimeConfig {
    RuntimeConfig {
        model: spec.model.name().into(),
        p: spec.p,
        seed: spec.seed,
        scheduler: scheduler_name(spec.scheduler),
        fuel: c.file.budget.fuel,
        wall_ms: c.file.budget.wall_ms,
        side_channel: None,
        trace: spec.trace,
        race: spec.race,
        buffer_global: spec.filters.global,
        buffer_shared: spec.filters.shared,
        kernels: spec
            .filters
            .kernels
            .as_ref()
            .map(|k| k.iter().cloned().collect()),
        sites: spec
            .filters
            .sites
            .as_ref()
            .map(|s| s.iter().copied().collect()),
        sites_module: spec.filters.sites.as_ref().map(|_| module_sha.to_string()),
        ptx_override: override_dir.map(Path::to_path_buf),
        record_ptx: false,
        quiet: true,
        events: None,
        events_module: None,
    }
}

/// What the reference (`sc`) run of a built program said, cached per executable.
#[derive(Debug, Clone)]
struct Reference {
    side: SideChannel,
    outputs: ProcessOutputs,
}

fn reference_run(
    c: &Campaign,
    rt: &RuntimeDir,
    exe: &Path,
    override_dir: Option<&Path>,
) -> Result<Reference, String> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Reference>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if override_dir.is_none() {
        if let Some(r) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(exe) {
            return Ok(r.clone());
        }
    }
    let mut cfg = config_for(c, &ExecSpec::reference(), "", override_dir);
    cfg.record_ptx = override_dir.is_none();
    let (out, outputs) = run_once(c, rt, exe, cfg, None)?;
    let r = Reference {
        side: out.side,
        outputs,
    };
    if override_dir.is_none() {
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(exe.to_path_buf(), r.clone());
    }
    Ok(r)
}

/// What preparing a program variant produces.
pub(crate) struct ProgramVariant {
    /// The PTX of the program's main module (the first one with kernels), as it runs.
    pub(crate) ptx: String,
    pub(crate) module: fencehound_ptx::Module,
    pub(crate) program: PreparedProgram,
}

/// Builds and prepares a program variant. With `ptx`, the program's main module (the
/// first one with kernels) runs that PTX instead of its own (the minimizer's edits, or a
/// report's recorded PTX).
pub(crate) fn prepare(
    campaign: &Campaign,
    variant: &str,
    ptx: Option<String>,
) -> Result<ProgramVariant, PrepareError> {
    let cname = campaign.path.display().to_string();
    if campaign.variant(variant).is_none() {
        return Err(PrepareError::NoVariant {
            campaign: cname,
            variant: variant.to_string(),
            known: campaign.variant_names().join(", "),
        });
    }
    let load_err = |message: String| PrepareError::Load {
        campaign: cname.clone(),
        variant: variant.to_string(),
        message,
    };
    let exe = build(campaign, variant).map_err(|message| PrepareError::Input {
        campaign: cname.clone(),
        message,
    })?;
    if let Err(e) = check_program(&exe) {
        return Err(PrepareError::Input {
            campaign: cname,
            message: e.to_string(),
        });
    }
    let rt = runtime_dir().map_err(load_err)?;
    let base = reference_run(campaign, &rt, &exe, None).map_err(load_err)?;
    if !base.side.started {
        return Err(load_err(format!(
            "{} never called fencehound's CUDA runtime (is it linked with -cudart shared? `fencehound nvcc` does that)",
            exe.display()
        )));
    }
    // The module the minimizer edits: the first that registered kernels.
    let main = base.side.modules.iter().find_map(|m| match m {
        fencehound_cudart_protocol::Record::Module {
            ptx_sha256,
            ptx: Some(text),
            kernels,
            error,
            ..
        } if !kernels.is_empty() => Some((ptx_sha256.clone(), text.clone(), error.clone())),
        _ => None,
    });
    let Some((module_sha, own_ptx, module_error)) = main else {
        return Err(load_err("the program registered no kernels".into()));
    };
    if let Some(e) = module_error {
        return Err(load_err(e));
    }
    let (ptx, override_dir, reference) = match ptx {
        Some(p) if sha256_hex(p.as_bytes()) != module_sha => {
            let dir = tempfile::Builder::new()
                .prefix("fencehound-ptx-")
                .tempdir()
                .map_err(|e| load_err(format!("cannot create a directory for edited PTX: {e}")))?;
            std::fs::write(dir.path().join(format!("{module_sha}.ptx")), &p)
                .map_err(|e| load_err(format!("cannot write edited PTX: {e}")))?;
            let r = reference_run(campaign, &rt, &exe, Some(dir.path())).map_err(load_err)?;
            (p, Some(dir), r)
        }
        _ => (own_ptx, None, base.clone()),
    };
    let source_name = campaign.source.display().to_string();
    let module = fencehound_ptx::parse(&source_name, &ptx).map_err(|e| PrepareError::Parse {
        campaign: cname.clone(),
        path: source_name.clone(),
        message: e.to_string(),
    })?;
    if let Some(l) = reference.side.first_failure() {
        return Err(PrepareError::Golden {
            campaign: cname,
            variant: variant.to_string(),
            message: format!(
                "launch #{} of `{}`: {}",
                l.index,
                l.name,
                l.message.trim_end()
            ),
        });
    }
    if reference.outputs.signal.is_some() || out_of_time(&reference.outputs) {
        return Err(PrepareError::Golden {
            campaign: cname,
            variant: variant.to_string(),
            message: format!(
                "the program did not finish normally (status {:?}, signal {:?})\n{}",
                reference.outputs.status,
                reference.outputs.signal,
                String::from_utf8_lossy(&reference.outputs.stderr)
            ),
        });
    }
    match oracle_process::judge(
        &campaign.file.oracle,
        &reference.outputs,
        Some(&reference.outputs),
    ) {
        Ok(Judgement::Pass) => {}
        Ok(Judgement::Fail(f)) => {
            return Err(PrepareError::Golden {
                campaign: cname,
                variant: variant.to_string(),
                message: format!(
                    "its run fails the oracle {}: {}\n{}{}",
                    f.oracle,
                    f.message,
                    f.diff,
                    unimplemented_note(&reference.side)
                ),
            })
        }
        Err(e) => {
            return Err(PrepareError::Input {
                campaign: cname,
                message: format!("oracle: {e}"),
            })
        }
    }
    let mut kernels: Vec<String> = Vec::new();
    for l in &reference.side.launches {
        if !kernels.contains(&l.kernel) {
            kernels.push(l.kernel.clone());
        }
    }
    let program = PreparedProgram {
        runtime: rt,
        exe,
        module_sha,
        override_dir,
        golden: reference.outputs.clone(),
        kernels,
    };
    Ok(ProgramVariant {
        ptx,
        module,
        program,
    })
}

fn out_of_time(o: &ProcessOutputs) -> bool {
    o.status == Some(HANG_EXIT_STATUS)
}

fn unimplemented_note(side: &SideChannel) -> String {
    if side.unimplemented.is_empty() {
        String::new()
    } else {
        format!(
            "\n(the program called {}, which fencehound's CUDA runtime does not implement)",
            side.unimplemented.join(", ")
        )
    }
}

/// Runs one execution of a prepared program and judges it.
pub(crate) fn execute(
    c: &Campaign,
    b: &PreparedProgram,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: Option<&mut dyn Observer>,
) -> ExecResult {
    let start = Instant::now();
    let mut cfg = config_for(
        c,
        spec,
        &b.module_sha,
        b.override_dir.as_ref().map(|d| d.path()),
    );
    // An observer sees the main module's launches through the program's event log.
    let log_file = match &obs {
        Some(_) => match tempfile::Builder::new()
            .prefix("fencehound-events-")
            .tempfile()
        {
            Ok(f) => Some(f),
            Err(e) => {
                let message = format!("cannot create an event log: {e}");
                return ExecResult::failed(Verdict::OracleError { message }, start);
            }
        },
        None => None,
    };
    if let Some(f) = &log_file {
        cfg.events = Some(f.path().to_path_buf());
        cfg.events_module = Some(b.module_sha.clone());
    }
    let (out, outputs) = match run_once(c, &b.runtime, &b.exe, cfg, cancel) {
        Ok(x) => x,
        Err(message) => return ExecResult::failed(Verdict::OracleError { message }, start),
    };
    let mut fence_drains = std::collections::BTreeMap::new();
    if let (Some(obs), Some(f)) = (obs, &log_file) {
        let log = match std::fs::read(f.path()) {
            Ok(bytes) if out.side.started => events::read(&bytes),
            Ok(_) => events::Log {
                incomplete: Some("the program never started fencehound's runtime".into()),
                ..Default::default()
            },
            Err(e) => events::Log {
                incomplete: Some(format!("the program's event log cannot be read: {e}")),
                ..Default::default()
            },
        };
        events::replay(&log, obs, &mut fence_drains);
        if let Some(why) = &log.incomplete {
            obs.incomplete(why);
        }
    }
    let side = &out.side;
    let mut h = Sha256::new();
    h.update(format!("{:?} {:?}\0", outputs.status, outputs.signal).as_bytes());
    h.update(&outputs.stdout);
    h.update([0]);
    h.update(&outputs.stderr);
    for (p, f) in &outputs.files {
        h.update(p.display().to_string().as_bytes());
        h.update(f.as_deref().unwrap_or(b"\0missing"));
    }
    let output_hash: String = h.finalize().iter().map(|x| format!("{x:02x}")).collect();
    let verdict = if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        Verdict::Interrupted
    } else if let Some(l) = side.first_failure() {
        let at = format!("launch #{} of `{}`", l.index, l.name);
        match l.outcome {
            LaunchOutcome::Fault => Verdict::Fault {
                message: format!("{at}: {}", l.message),
            },
            LaunchOutcome::Trap => Verdict::Trap {
                message: format!("{at}: {}", l.message),
            },
            LaunchOutcome::Deadlock => Verdict::Deadlock {
                dump: format!("{at}: {}", l.message),
            },
            _ => Verdict::Timeout {
                wall: l.message.contains("wall-clock"),
                dump: format!("{at}: {}", l.message),
            },
        }
    } else if out.killed_after_timeout {
        Verdict::Timeout {
            dump: format!(
                "the program did not finish within {} ms (budget.timeout_ms)",
                c.program.as_ref().map(|p| p.timeout_ms).unwrap_or(0)
            ),
            wall: true,
        }
    } else {
        Verdict::from_judgement(
            oracle_process::judge(&c.file.oracle, &outputs, Some(&b.golden)),
            &unimplemented_note(side),
        )
    };
    ExecResult {
        verdict,
        output_hash,
        outputs: Outputs {
            buffers: Vec::new(),
        },
        stats: side.stats(),
        lane_instructions: side.lane_instructions(),
        wall_ms: start.elapsed().as_millis() as u64,
        printf: String::from_utf8_lossy(&outputs.stdout).into_owned(),
        trace: Vec::new(),
        sites: Vec::new(),
        races: side
            .launches
            .iter()
            .flat_map(|l| l.races.iter().cloned())
            .collect(),
        program_trace: side
            .launches
            .iter()
            .flat_map(|l| {
                std::iter::once(format!("launch #{} `{}`:", l.index, l.name))
                    .chain(l.trace.iter().map(|t| format!("  {t}")))
            })
            .collect(),
        fence_drains,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Campaign, crate::CampaignError> {
        Campaign::from_text(Path::new("/tmp/p/c.toml"), text.to_string())
    }

    #[test]
    fn program_campaigns_are_validated() {
        let ok = load(
            "source = \"a.cu\"\nbuild = \"nvcc -o {exe} a.cu\"\nrun = [\"{exe}\"]\n[[oracle]]\ntype = \"exit\"\n",
        )
        .expect("valid");
        let p = ok.program.expect("a program campaign");
        assert_eq!(p.run, vec!["{exe}".to_string()]);
        assert_eq!(p.timeout_ms, 300_000);
        let no_run = load("source = \"a.cu\"\nbuild = \"make\"\n[[oracle]]\ntype = \"exit\"\n");
        assert!(no_run.unwrap_err().to_string().contains("needs `run`"));
        let buffers = load(
            "source = \"a.cu\"\nrun = [\"./a\"]\nbuffers = [\"x:i32[4] zero\"]\n[[oracle]]\ntype = \"exit\"\n",
        );
        assert!(buffers.unwrap_err().to_string().contains("has no buffers"));
        let kernel_oracle =
            load("source = \"a.cu\"\nrun = [\"./a\"]\n[[oracle]]\ntype = \"golden\"\n");
        assert!(kernel_oracle
            .unwrap_err()
            .to_string()
            .contains("judges kernel buffers"));
        let process_oracle_on_kernels = load(
            "source = \"a.cu\"\nbuffers = [\"x:i32[4] zero\"]\n[[launch]]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"x\"]\n[[oracle]]\ntype = \"stdout\"\nregex = \"x\"\n",
        );
        assert!(process_oracle_on_kernels
            .unwrap_err()
            .to_string()
            .contains("judges a program's process"));
    }

    #[test]
    fn struct_arguments_are_laid_out_with_c_alignment() {
        use crate::campaign::{is_name_expression, parse_struct_arg};
        let b = parse_struct_arg("f:{f64 2.0, i32 7, i8 1, f32 0.5}")
            .unwrap()
            .unwrap();
        // f64 at 0, i32 at 8, i8 at 12, f32 at 16 (aligned up from 13).
        assert_eq!(b.len(), 20);
        assert_eq!(&b[0..8], &2.0f64.to_le_bytes());
        assert_eq!(&b[8..12], &7i32.to_le_bytes());
        assert_eq!(b[12], 1);
        assert_eq!(&b[16..20], &0.5f32.to_le_bytes());
        assert!(parse_struct_arg("n:i32=3").is_none());
        assert!(parse_struct_arg("f:{f33 1}").unwrap().is_err());
        assert!(is_name_expression("reduce<128, true>"));
        assert!(is_name_expression("ns::k"));
        assert!(!is_name_expression("_Z3dotPf"));
    }

    #[test]
    fn words_are_expanded_and_quoted() {
        assert_eq!(
            expand("{exe} {dir}/in.txt", Path::new("/b/app"), Path::new("/c")),
            "/b/app /c/in.txt"
        );
        assert_eq!(shell_quote("-DX=1"), "-DX=1");
        assert_eq!(shell_quote("-DX="), "-DX=");
        assert_eq!(shell_quote("-DMSG=a b'c"), "'-DMSG=a b'\\''c'");
        assert_eq!(scheduler_name(SchedulerKind::Pct { depth: 3 }), "pct:3");
        assert_eq!(
            SchedulerKind::parse(&scheduler_name(SchedulerKind::RoundRobin { quantum: 2 })),
            Some(SchedulerKind::RoundRobin { quantum: 2 })
        );
    }
}
