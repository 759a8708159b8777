//! One execution: a prepared variant run under a model, `p_w`, seed and scheduler on the
//! vgpu backend, judged by the campaign's oracles.

use crate::campaign::{Campaign, LaunchArg};
use crate::verdict::Verdict;
use fencehound_handlers::{BufferConfig, BufferStats, Model, TraceEvent, WriteBuffers};
use fencehound_oracle::{Buffer, Context, Judgement, Outputs};
use fencehound_vgpu::hooks::RmwFn;
use fencehound_vgpu::{
    Access, Arg, Barrier, Device, Fence, HangCause, Hooks, LaunchInfo, LaunchOptions,
    LaunchOutcome, MemError, Memory, ModuleId, SchedulerKind, SiteInfo, Stop, ThreadRef,
};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a variant could not be prepared. Every message starts with the campaign file and
/// names the key (`source`, `launch[0].kernel`, `oracle`) or variant involved.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("{campaign}: {message}")]
    Compile { campaign: String, message: String },
    #[error("{campaign}: {path}: {message}")]
    Parse {
        campaign: String,
        path: String,
        message: String,
    },
    #[error("{campaign}: variant `{variant}`: {message}")]
    Load {
        campaign: String,
        variant: String,
        message: String,
    },
    #[error(
        "{campaign}: variant `{variant}`: the reference (sc) run does not complete: {message}"
    )]
    Golden {
        campaign: String,
        variant: String,
        message: String,
    },
    #[error("{campaign}: no variant named `{variant}` (variants: {known})")]
    NoVariant {
        campaign: String,
        variant: String,
        known: String,
    },
    #[error("{campaign}: {message}")]
    Input { campaign: String, message: String },
}

/// A variant ready to run: its exact PTX, parsed, and the reference outputs.
#[derive(Debug)]
pub struct Prepared {
    pub campaign: Arc<Campaign>,
    pub variant: String,
    pub ptx: String,
    pub ptx_sha256: String,
    pub module: fencehound_ptx::Module,
    pub inputs: Outputs,
    /// Outputs of the `sc` reference run (for `golden` oracles and reports).
    pub golden: Outputs,
    backend: Backend,
}

/// How a prepared variant runs.
#[derive(Debug)]
enum Backend {
    Kernels {
        /// A device with the module loaded and the buffers initialised: every execution
        /// starts from a clone of it (decoding and initialising once per variant).
        template: Device,
        template_module: ModuleId,
        /// Device addresses of the campaign's buffers, in declaration order.
        buffer_ptrs: Vec<u64>,
        /// The PTX entry name of each launch's kernel (launches may name C++ kernels as
        /// written, e.g. `reduce<128, true>`).
        kernel_names: Vec<String>,
    },
    /// A whole program, one process per execution.
    Program(Box<crate::program::ProgramBackend>),
}

impl Prepared {
    /// A prepared program variant (see [`crate::program::prepare_program`]).
    pub(crate) fn for_program(
        campaign: Arc<Campaign>,
        variant: &str,
        ptx: String,
        module: fencehound_ptx::Module,
        backend: crate::program::ProgramBackend,
    ) -> Prepared {
        Prepared {
            ptx_sha256: sha256_hex(ptx.as_bytes()),
            campaign,
            variant: variant.to_string(),
            ptx,
            module,
            inputs: Outputs {
                buffers: Vec::new(),
            },
            golden: Outputs {
                buffers: Vec::new(),
            },
            backend: Backend::Program(Box::new(backend)),
        }
    }

    /// The PTX entry name of launch `i` of a kernel campaign (`None` for a program, or
    /// past the last launch).
    pub fn launch_kernel(&self, i: usize) -> Option<&str> {
        match &self.backend {
            Backend::Kernels { kernel_names, .. } => kernel_names.get(i).map(String::as_str),
            Backend::Program(_) => None,
        }
    }

    /// Whether this variant is a whole program (it runs only on the vgpu).
    pub fn is_program(&self) -> bool {
        matches!(self.backend, Backend::Program(_))
    }

    /// The kernels this variant launches (PTX names): the campaign's launches, or for a
    /// program those its reference run launched.
    pub fn kernels(&self) -> Vec<String> {
        match &self.backend {
            Backend::Program(p) => p.kernels.clone(),
            Backend::Kernels { kernel_names, .. } => {
                let mut out: Vec<String> = Vec::new();
                for k in kernel_names {
                    if !out.contains(k) {
                        out.push(k.clone());
                    }
                }
                out
            }
        }
    }

    /// The `sc` reference run of a program variant (`None` for kernel campaigns).
    pub fn program_golden(&self) -> Option<&fencehound_oracle::process::ProcessOutputs> {
        match &self.backend {
            Backend::Program(p) => Some(&p.golden),
            Backend::Kernels { .. } => None,
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn oracle_type(t: fencehound_argspec::ElemType) -> fencehound_oracle::ElemType {
    use fencehound_argspec::ElemType as B;
    use fencehound_oracle::ElemType as O;
    match t {
        B::U8 => O::U8,
        B::I8 => O::I8,
        B::U16 | B::Bf16 => O::U16,
        B::I16 => O::I16,
        B::U32 => O::U32,
        B::I32 => O::I32,
        B::U64 => O::U64,
        B::I64 => O::I64,
        B::F16 => O::F16,
        B::F32 => O::F32,
        B::F64 => O::F64,
    }
}

/// Compiles (or reads) the variant's PTX and runs the reference. For a program campaign:
/// builds the program and runs it once under `sc`.
pub fn prepare(campaign: Arc<Campaign>, variant: &str) -> Result<Prepared, PrepareError> {
    if campaign.is_program() {
        return crate::program::prepare_program(campaign, variant, None);
    }
    let cname = campaign.path.display().to_string();
    let v = campaign
        .variant(variant)
        .ok_or_else(|| PrepareError::NoVariant {
            campaign: cname.clone(),
            variant: variant.to_string(),
            known: campaign.variant_names().join(", "),
        })?;
    let read_source = || {
        std::fs::read_to_string(&campaign.source).map_err(|e| PrepareError::Input {
            campaign: cname.clone(),
            message: format!("source: cannot read {}: {e}", campaign.source.display()),
        })
    };
    let ptx = if campaign.source.extension().and_then(|e| e.to_str()) == Some("ptx") {
        read_source()?
    } else {
        let src = read_source()?;
        let file_name = campaign.source.display().to_string();
        let mut req = fencehound_toolchain::CompileRequest::new(src, file_name);
        req.defines = v
            .defines
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        req.include_dirs = vec![campaign.dir.clone()];
        req.extra_options = nvrtc_options(&campaign).map_err(|message| PrepareError::Input {
            campaign: cname.clone(),
            message,
        })?;
        req.name_expressions = campaign
            .launches
            .iter()
            .map(|l| l.kernel.clone())
            .filter(|k| crate::campaign::is_name_expression(k))
            .collect();
        req.name_expressions.dedup();
        if let Some(a) = &campaign.file.arch {
            req.arch = a.clone();
        }
        fencehound_toolchain::compile(&req)
            .map_err(|e| PrepareError::Compile {
                campaign: cname.clone(),
                message: format!("variant `{variant}`: {e}{}", header_hint(&e.to_string())),
            })?
            .ptx
    };
    prepare_with_ptx(campaign, variant, ptx)
}

/// The campaign's `nvrtc_options`: `$NVRTC_BUNDLED_HEADERS`/`$CCCL_INCLUDE` expanded, a
/// relative `-I` made relative to the campaign file.
fn nvrtc_options(c: &Campaign) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for o in &c.file.nvrtc_options {
        let o = fencehound_toolchain::expand_placeholders(o)
            .map_err(|e| format!("nvrtc_options: {e}"))?;
        let rel = |p: &str| {
            let path = std::path::Path::new(p);
            if path.is_relative() {
                let joined = c.dir.join(path);
                std::path::absolute(&joined)
                    .unwrap_or(joined)
                    .display()
                    .to_string()
            } else {
                p.to_string()
            }
        };
        out.push(if let Some(p) = o.strip_prefix("--include-path=") {
            format!("--include-path={}", rel(p))
        } else if let Some(p) = o.strip_prefix("-I").filter(|p| !p.is_empty()) {
            format!("-I{}", rel(p))
        } else {
            o
        });
    }
    Ok(out)
}

/// What to do when NVRTC cannot find a CUDA header it only has in its bundled copy.
fn header_hint(message: &str) -> &'static str {
    let missing = |h: &str| message.contains(h) && message.contains("cannot open source file");
    if [
        "cooperative_groups.h",
        "cuda_fp16.h",
        "cuda_bf16.h",
        "cuda_runtime.h",
        "cuda/",
    ]
    .iter()
    .any(|h| missing(h))
    {
        "\nhint: NVRTC finds the CUDA headers only in its bundled copy: add \
         nvrtc_options = [\"--use-bundled-headers=$NVRTC_BUNDLED_HEADERS\"] to the campaign"
    } else {
        ""
    }
}

/// The PTX entry name of each launch: an entry of that name, else the lowered name NVRTC
/// recorded for the expression (a comment in the PTX), else the entry whose demangled name
/// is the expression (spaces ignored).
fn resolve_kernels(c: &Campaign, ptx: &str, entries: &[&str]) -> Result<Vec<String>, String> {
    let lowered = fencehound_toolchain::lowered_names(ptx);
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let opts = cpp_demangle::DemangleOptions::default()
        .no_params()
        .no_return_type();
    let demangled: Vec<(String, &str)> = entries
        .iter()
        .filter_map(|e| {
            let d = cpp_demangle::Symbol::new(*e).ok()?.demangle(&opts).ok()?;
            Some((squash(&d), *e))
        })
        .collect();
    let mut out = Vec::new();
    for (i, l) in c.launches.iter().enumerate() {
        let k = &l.kernel;
        let found = if entries.contains(&k.as_str()) {
            Some(k.clone())
        } else if let Some((_, m)) = lowered.iter().find(|(e, _)| e == k) {
            Some(m.clone())
        } else {
            let want = squash(k);
            demangled
                .iter()
                .find(|(d, _)| *d == want)
                .map(|(_, e)| e.to_string())
        };
        match found.filter(|f| entries.contains(&f.as_str())) {
            Some(f) => out.push(f),
            None => {
                let shown: Vec<String> = entries
                    .iter()
                    .map(|e| match demangled.iter().find(|(_, x)| x == e) {
                        Some((d, _)) if d != e => format!("{e} ({d})"),
                        _ => e.to_string(),
                    })
                    .collect();
                return Err(format!(
                    "launch[{i}].kernel: no kernel named `{k}` in {} (kernels: {}; name C++ kernels as written, e.g. `reduce<128, true>`, or declare them `extern \"C\"`)",
                    c.source.display(),
                    shown.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Address and size of the module variable `name`: its PTX name, or the C++ variable
/// whose mangled PTX name demangles to `name` (`ns::total`).
fn device_variable(dev: &Device, m: ModuleId, name: &str) -> Result<(u64, u64), String> {
    if let Ok(x) = dev.global_by_name(m, name) {
        return Ok(x);
    }
    let prog = dev.program(m).ok_or("module not loaded")?;
    let opts = cpp_demangle::DemangleOptions::default();
    for (g, addr, size, _) in &prog.globals {
        let d = cpp_demangle::Symbol::new(g.as_str())
            .ok()
            .and_then(|s| s.demangle(&opts).ok());
        if d.as_deref() == Some(name) {
            return Ok((*addr, *size));
        }
    }
    Err(format!(
        "no __device__ variable `{name}` in the module (variables: {})",
        prog.globals
            .iter()
            .map(|g| g.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Like [`prepare`], with the PTX given (replay uses the PTX recorded in the report).
pub fn prepare_with_ptx(
    campaign: Arc<Campaign>,
    variant: &str,
    ptx: String,
) -> Result<Prepared, PrepareError> {
    if campaign.is_program() {
        return crate::program::prepare_program(campaign, variant, Some(ptx));
    }
    let cname = campaign.path.display().to_string();
    let module =
        fencehound_ptx::parse(&campaign.source.display().to_string(), &ptx).map_err(|e| {
            PrepareError::Parse {
                campaign: cname.clone(),
                path: campaign.source.display().to_string(),
                message: e.to_string(),
            }
        })?;
    // Every launched kernel must exist: say which launch names which missing kernel here,
    // rather than as a failure of the reference run.
    let kernels: Vec<&str> = module
        .items
        .iter()
        .filter_map(|i| match i {
            fencehound_ptx::ast::Item::Func(f)
                if f.kind == fencehound_ptx::ast::FuncKind::Entry && f.body.is_some() =>
            {
                Some(f.name.as_str())
            }
            _ => None,
        })
        .collect();
    let kernel_names =
        resolve_kernels(&campaign, &ptx, &kernels).map_err(|message| PrepareError::Input {
            campaign: cname.clone(),
            message,
        })?;
    let mut inputs = Outputs {
        buffers: Vec::new(),
    };
    for b in &campaign.buffers {
        let data = b.initial_bytes().map_err(|e| PrepareError::Input {
            campaign: cname.clone(),
            message: format!("buffer `{}`: {e}", b.name),
        })?;
        inputs.buffers.push(Buffer {
            name: b.name.clone(),
            ty: oracle_type(b.ty),
            data,
        });
    }
    let mut template = Device::new();
    let template_module = template
        .load_module(&module)
        .map_err(|e| PrepareError::Load {
            campaign: cname.clone(),
            variant: variant.to_string(),
            message: e.to_string(),
        })?;
    let mut buffer_ptrs = Vec::new();
    for (i, (b, init)) in campaign
        .buffers
        .iter()
        .zip(inputs.buffers.iter_mut())
        .enumerate()
    {
        let buffer_err = |e: fencehound_vgpu::DeviceError| PrepareError::Input {
            campaign: cname.clone(),
            message: format!("buffer `{}`: {e}", b.name),
        };
        let global = campaign.globals.iter().find(|(g, _)| *g == i);
        let p =
            match global {
                None => template
                    .alloc_named(init.data.len() as u64, b.name.clone())
                    .map_err(buffer_err)?,
                Some((_, keep)) => {
                    let (addr, size) = device_variable(&template, template_module, &b.name)
                        .map_err(|message| PrepareError::Input {
                            campaign: cname.clone(),
                            message: format!("globals: {message}"),
                        })?;
                    if size != init.data.len() as u64 {
                        return Err(PrepareError::Input {
                            campaign: cname.clone(),
                            message: format!(
                            "globals: `{}` is {size} bytes in the module, the campaign declares {}",
                            b.name,
                            init.data.len()
                        ),
                        });
                    }
                    if *keep {
                        // The variable's initializer is the input.
                        template
                            .copy_from(addr, &mut init.data)
                            .map_err(buffer_err)?;
                    }
                    addr
                }
            };
        template.copy_to(p, &init.data).map_err(buffer_err)?;
        buffer_ptrs.push(p);
    }
    let mut prep = Prepared {
        ptx_sha256: sha256_hex(ptx.as_bytes()),
        campaign: campaign.clone(),
        variant: variant.to_string(),
        ptx,
        module,
        golden: Outputs {
            buffers: Vec::new(),
        },
        inputs,
        backend: Backend::Kernels {
            template,
            template_module,
            buffer_ptrs,
            kernel_names,
        },
    };
    // The reference: no buffering, round-robin scheduling.
    let spec = ExecSpec {
        id: u64::MAX,
        model: Model::Sc,
        p: 0.0,
        seed: 0,
        scheduler: SchedulerKind::RoundRobin { quantum: 1 },
        trace: false,
        filters: Filters::default(),
        race: false,
    };
    let r = execute_raw(&prep, &spec, None, None).map_err(|message| PrepareError::Load {
        campaign: cname.clone(),
        variant: variant.to_string(),
        message,
    })?;
    match r.outcome_verdict {
        Some(v) => {
            let dump = match &v {
                Verdict::Deadlock { dump } | Verdict::Timeout { dump, .. } => {
                    format!("\n{}", dump.trim_end())
                }
                _ => String::new(),
            };
            return Err(PrepareError::Golden {
                campaign: cname,
                variant: variant.to_string(),
                message: format!("{}{dump}", v.summary()),
            });
        }
        None => prep.golden = r.outputs,
    }
    // The reference must satisfy the oracles: otherwise every execution would "fail" and
    // say nothing about fences.
    let cx = Context {
        outputs: &prep.golden,
        inputs: &prep.inputs,
        golden: Some(&prep.golden),
        base_dir: &prep.campaign.dir,
    };
    match fencehound_oracle::judge(&prep.campaign.file.oracle, &cx) {
        Ok(Judgement::Pass) => {}
        Ok(Judgement::Fail(f)) => {
            return Err(PrepareError::Golden {
                campaign: cname,
                variant: variant.to_string(),
                message: format!(
                    "its outputs fail the oracle {}: {}\n{}",
                    f.oracle, f.message, f.diff
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
    Ok(prep)
}

/// Which stores may be buffered (the minimizer narrows these down).
#[derive(Debug, Clone, PartialEq)]
pub struct Filters {
    pub global: bool,
    pub shared: bool,
    /// Only launches of these kernels buffer.
    pub kernels: Option<std::collections::BTreeSet<String>>,
    /// Only stores at these vgpu sites are buffered.
    pub sites: Option<std::collections::BTreeSet<u32>>,
}

impl Default for Filters {
    fn default() -> Self {
        Filters {
            global: true,
            shared: true,
            kernels: None,
            sites: None,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecSpec {
    pub id: u64,
    pub model: Model,
    pub p: f64,
    pub seed: u64,
    pub scheduler: SchedulerKind,
    pub trace: bool,
    pub filters: Filters,
    /// Run the shadow-memory race check alongside.
    pub race: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExecResult {
    pub verdict: Verdict,
    /// SHA-256 of every output buffer's bytes, in declaration order.
    pub output_hash: String,
    #[serde(skip)]
    pub outputs: Outputs,
    pub stats: BufferStats,
    pub lane_instructions: u64,
    pub wall_ms: u64,
    pub printf: String,
    #[serde(skip)]
    pub trace: Vec<TraceEvent>,
    #[serde(skip)]
    pub sites: Vec<SiteInfo>,
    /// Races found by the race check (empty unless requested).
    pub races: Vec<fencehound_racecheck::RaceReport>,
    /// Programs: the buffering trace as text, per launch (with `trace`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub program_trace: Vec<String>,
}

impl ExecResult {
    /// An execution that could not run at all.
    pub(crate) fn failed(verdict: Verdict, start: Instant) -> ExecResult {
        ExecResult {
            verdict,
            output_hash: String::new(),
            outputs: Outputs {
                buffers: Vec::new(),
            },
            stats: BufferStats::default(),
            lane_instructions: 0,
            wall_ms: start.elapsed().as_millis() as u64,
            printf: String::new(),
            trace: Vec::new(),
            sites: Vec::new(),
            races: Vec::new(),
            program_trace: Vec::new(),
        }
    }
}

/// What running an execution produced, before judging (backends fill it).
pub(crate) struct Raw {
    pub(crate) outputs: Outputs,
    /// A launch that did not complete.
    pub(crate) outcome_verdict: Option<Verdict>,
    pub(crate) stats: BufferStats,
    pub(crate) lane_instructions: u64,
    pub(crate) printf: String,
    pub(crate) trace: Vec<TraceEvent>,
    pub(crate) sites: Vec<SiteInfo>,
    pub(crate) races: Vec<fencehound_racecheck::RaceReport>,
}

pub(crate) fn outcome_verdict(o: &LaunchOutcome, wall: bool) -> Option<Verdict> {
    match o {
        LaunchOutcome::Completed => None,
        LaunchOutcome::Fault(f) => Some(Verdict::Fault {
            message: f.to_string(),
        }),
        LaunchOutcome::Trap(t) => Some(Verdict::Trap {
            message: format!(
                "{} (at {}: `{}`)",
                t.message,
                t.site.location(),
                t.site.text
            ),
        }),
        LaunchOutcome::Deadlock(d) => Some(Verdict::Deadlock {
            dump: d.to_string(),
        }),
        LaunchOutcome::Timeout(d) => Some(Verdict::Timeout {
            dump: d.to_string(),
            wall,
        }),
    }
}

/// Runs the campaign's launches in order under `hooks`; returns the lane instructions,
/// the printf output and the verdict of a launch that did not complete.
fn run_launches<H: fencehound_vgpu::Hooks>(
    dev: &mut Device,
    module: ModuleId,
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    ptrs: &[u64],
    hooks: &mut H,
) -> Result<(u64, String, Option<Verdict>), String> {
    let c = &prep.campaign;
    let Backend::Kernels { kernel_names, .. } = &prep.backend else {
        return Err("a program variant has no kernel launches to run".into());
    };
    let mut sched = spec.scheduler.build(spec.seed);
    let deadline = Instant::now() + Duration::from_millis(c.file.budget.wall_ms);
    let mut lane_instructions = 0;
    let mut printf = String::new();
    for (l, kernel) in c.launches.iter().zip(kernel_names) {
        // Parameter sizes, to pad struct arguments to their `.param` size.
        let sizes: Vec<u32> = dev
            .program(module)
            .and_then(|p| p.funcs.iter().find(|f| f.is_kernel && f.name == *kernel))
            .map(|f| {
                f.params
                    .iter()
                    .map(|p| match p {
                        fencehound_vgpu::program::ParamLoc::Frame(_, s) => *s,
                        fencehound_vgpu::program::ParamLoc::Reg(_) => 0,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let args: Vec<Arg> = l
            .args
            .iter()
            .enumerate()
            .map(|(j, a)| match a {
                LaunchArg::Buffer(i) => Arg::Ptr(ptrs[*i]),
                LaunchArg::Scalar(s) => s.arg(),
                LaunchArg::Bytes(b) => {
                    let mut b = b.clone();
                    if let Some(&n) = sizes.get(j) {
                        if b.len() < n as usize {
                            b.resize(n as usize, 0);
                        }
                    }
                    Arg::Bytes(b)
                }
            })
            .collect();
        let opts = LaunchOptions {
            fuel: c.file.budget.fuel,
            ..Default::default()
        };
        let stop = Stop {
            deadline: Some(deadline),
            cancel,
        };
        let r = dev
            .launch_with_stop(
                module,
                kernel,
                l.grid,
                l.block,
                l.dynamic_shared,
                &args,
                opts,
                stop,
                hooks,
                &mut sched,
            )
            .map_err(|e| format!("launch of `{}`: {e}", l.kernel))?;
        lane_instructions += r.stats.lane_instructions;
        printf.push_str(&r.stdout);
        if !r.outcome.is_completed() {
            let wall =
                matches!(&r.outcome, LaunchOutcome::Timeout(d) if d.cause == HangCause::WallClock);
            let mut verdict = outcome_verdict(&r.outcome, wall);
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                verdict = Some(Verdict::Interrupted);
            }
            return Ok((lane_instructions, printf, verdict));
        }
    }
    Ok((lane_instructions, printf, None))
}

/// Sees every global/shared access, fence, barrier and launch of an execution before the
/// write buffers do. The minimizer uses it for coverage (which fence copies ran) and for
/// which loads read what other threads write; it cannot change the execution.
pub trait Observer {
    fn launch_begin(&mut self, _info: &LaunchInfo<'_>) {}
    fn access(&mut self, _a: &Access) {}
    fn fence(&mut self, _f: &Fence) {}
    fn barrier(&mut self, _b: &Barrier) {}
}

/// Hooks that show every event to an [`Observer`], then hand it to `inner`.
struct Observed<'o, H> {
    inner: H,
    obs: &'o mut dyn Observer,
}

impl<H: Hooks> Hooks for Observed<'_, H> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.obs.launch_begin(info);
        self.inner.launch_begin(info)
    }
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.obs.access(a);
        self.inner.load(mem, a, buf)
    }
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.obs.access(a);
        self.inner.store(mem, a, data)
    }
    fn atomic(&mut self, mem: &mut Memory, a: &Access, rmw: RmwFn<'_>) -> Result<u64, MemError> {
        self.obs.access(a);
        self.inner.atomic(mem, a, rmw)
    }
    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.obs.fence(f);
        self.inner.fence(mem, f)
    }
    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.obs.barrier(b);
        self.inner.barrier_arrive(mem, b)
    }
    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.inner.barrier_release(mem, b, threads)
    }
    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.inner.thread_exit(mem, t)
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.inner.stalled(mem)
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        self.inner.launch_end(mem)
    }
}

/// What [`run_launches`] returns: lane instructions, printf output, a launch's verdict.
type Launched = (u64, String, Option<Verdict>);

/// Runs the launches under `hooks`, shown to `obs` first when there is one.
#[allow(clippy::too_many_arguments)]
fn run_observed<H: Hooks>(
    dev: &mut Device,
    module: ModuleId,
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    ptrs: &[u64],
    hooks: H,
    obs: Option<&mut dyn Observer>,
) -> Result<(Launched, H), String> {
    match obs {
        Some(obs) => {
            let mut h = Observed { inner: hooks, obs };
            let r = run_launches(dev, module, prep, spec, cancel, ptrs, &mut h)?;
            Ok((r, h.inner))
        }
        None => {
            let mut h = hooks;
            let r = run_launches(dev, module, prep, spec, cancel, ptrs, &mut h)?;
            Ok((r, h))
        }
    }
}

fn execute_raw(
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: Option<&mut dyn Observer>,
) -> Result<Raw, String> {
    let c = &prep.campaign;
    let Backend::Kernels {
        template,
        template_module,
        buffer_ptrs,
        ..
    } = &prep.backend
    else {
        return Err("a program variant has no kernel launches to run".into());
    };
    let mut dev = template.clone();
    let module = *template_module;
    let ptrs = buffer_ptrs;
    let mut cfg = BufferConfig::new(spec.model, spec.p, spec.seed);
    cfg.trace = spec.trace;
    cfg.buffer_global = spec.filters.global;
    cfg.buffer_shared = spec.filters.shared;
    cfg.kernels = spec.filters.kernels.clone();
    cfg.sites = spec.filters.sites.clone();
    // The race checker wraps the buffers only when asked: building it analyses the module.
    let (launched, races, mut wb) = if spec.race {
        let rc = fencehound_racecheck::RaceCheck::for_module(WriteBuffers::new(cfg), &dev, module);
        let (launched, rc) = run_observed(&mut dev, module, prep, spec, cancel, ptrs, rc, obs)?;
        let races = rc.races().reports(&dev, module);
        (launched, races, rc.into_inner())
    } else {
        let wb = WriteBuffers::new(cfg);
        let (launched, wb) = run_observed(&mut dev, module, prep, spec, cancel, ptrs, wb, obs)?;
        (launched, Vec::new(), wb)
    };
    let (lane_instructions, printf, verdict) = launched;
    let mut outputs = Outputs {
        buffers: Vec::new(),
    };
    for ((b, init), p) in c.buffers.iter().zip(&prep.inputs.buffers).zip(ptrs) {
        let mut data = vec![0u8; init.data.len()];
        dev.copy_from(*p, &mut data).map_err(|e| e.to_string())?;
        outputs.buffers.push(Buffer {
            name: b.name.clone(),
            ty: init.ty,
            data,
        });
    }
    let sites = if spec.trace {
        dev.program(module)
            .map(|p| p.sites.clone())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok(Raw {
        outputs,
        outcome_verdict: verdict,
        stats: wb.stats().clone(),
        lane_instructions,
        printf,
        trace: wb.take_trace(),
        sites,
        races,
    })
}

/// Runs one execution and judges it.
pub fn execute(prep: &Prepared, spec: &ExecSpec, cancel: Option<&AtomicBool>) -> ExecResult {
    execute_inner(prep, spec, cancel, None)
}

/// Like [`execute`], showing every memory access, fence and barrier to `obs`.
pub fn execute_observed(
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: &mut dyn Observer,
) -> ExecResult {
    execute_inner(prep, spec, cancel, Some(obs))
}

fn execute_inner(
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: Option<&mut dyn Observer>,
) -> ExecResult {
    let start = Instant::now();
    if let Backend::Program(b) = &prep.backend {
        return crate::program::execute_program(prep, b, spec, cancel);
    }
    judge_raw(prep, execute_raw(prep, spec, cancel, obs), start)
}

/// Judges what a backend produced (an `Err` is a run that could not happen: a fault).
pub(crate) fn judge_raw(prep: &Prepared, raw: Result<Raw, String>, start: Instant) -> ExecResult {
    let raw = match raw {
        Ok(r) => r,
        Err(message) => return ExecResult::failed(Verdict::Fault { message }, start),
    };
    let mut h = Sha256::new();
    for b in &raw.outputs.buffers {
        h.update(&b.data);
    }
    let output_hash: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let verdict = match raw.outcome_verdict {
        Some(v) => v,
        None => {
            let cx = Context {
                outputs: &raw.outputs,
                inputs: &prep.inputs,
                golden: Some(&prep.golden),
                base_dir: &prep.campaign.dir,
            };
            match fencehound_oracle::judge(&prep.campaign.file.oracle, &cx) {
                Ok(Judgement::Pass) => Verdict::Pass,
                Ok(Judgement::Fail(f)) => Verdict::WrongOutput {
                    oracle: f.oracle,
                    message: f.message,
                    diff: f.diff,
                },
                // A judge that cannot run or hangs says nothing about the kernel.
                Err(e) => Verdict::OracleError {
                    message: e.to_string(),
                },
            }
        }
    };
    ExecResult {
        verdict,
        output_hash,
        outputs: raw.outputs,
        stats: raw.stats,
        lane_instructions: raw.lane_instructions,
        wall_ms: start.elapsed().as_millis() as u64,
        printf: raw.printf,
        trace: raw.trace,
        sites: raw.sites,
        races: raw.races,
        program_trace: Vec::new(),
    }
}
