//! One execution: a prepared variant run under a model, `p_w`, seed and scheduler on the
//! vgpu backend, judged by the campaign's oracles.

use crate::campaign::{Campaign, LaunchArg};
use crate::verdict::Verdict;
use fencehound_handlers::{BufferConfig, BufferStats, Model, TraceEvent, WriteBuffers};
use fencehound_oracle::{Buffer, Context, Judgement, Outputs};
use fencehound_vgpu::{
    Arg, Device, LaunchOptions, LaunchOutcome, ModuleId, SchedulerKind, SiteInfo, Stop,
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
    /// A device with the module loaded and the buffers initialised: every execution
    /// starts from a clone of it (decoding and initialising once per variant).
    template: Device,
    template_module: ModuleId,
    /// Device addresses of the campaign's buffers, in declaration order.
    buffer_ptrs: Vec<u64>,
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

/// Compiles (or reads) the variant's PTX and runs the reference.
pub fn prepare(campaign: Arc<Campaign>, variant: &str) -> Result<Prepared, PrepareError> {
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
        req.extra_options = campaign.file.nvrtc_options.clone();
        if let Some(a) = &campaign.file.arch {
            req.arch = a.clone();
        }
        fencehound_toolchain::compile(&req)
            .map_err(|e| PrepareError::Compile {
                campaign: cname.clone(),
                message: format!("variant `{variant}`: {e}"),
            })?
            .ptx
    };
    prepare_with_ptx(campaign, variant, ptx)
}

/// Like [`prepare`], with the PTX given (replay uses the PTX recorded in the report).
pub fn prepare_with_ptx(
    campaign: Arc<Campaign>,
    variant: &str,
    ptx: String,
) -> Result<Prepared, PrepareError> {
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
    for (i, l) in campaign.launches.iter().enumerate() {
        if !kernels.contains(&l.kernel.as_str()) {
            return Err(PrepareError::Input {
                campaign: cname,
                message: format!(
                    "launch[{i}].kernel: no kernel named `{}` in {} (kernels: {}; C++ kernels need `extern \"C\"`)",
                    l.kernel,
                    campaign.source.display(),
                    kernels.join(", ")
                ),
            });
        }
    }
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
    for (b, init) in campaign.buffers.iter().zip(&inputs.buffers) {
        let buffer_err = |e: fencehound_vgpu::DeviceError| PrepareError::Input {
            campaign: cname.clone(),
            message: format!("buffer `{}`: {e}", b.name),
        };
        let p = template
            .alloc_named(init.data.len() as u64, b.name.clone())
            .map_err(buffer_err)?;
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
        template,
        template_module,
        buffer_ptrs,
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
    let r = execute_raw(&prep, &spec, None).map_err(|message| PrepareError::Load {
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
    let mut sched = spec.scheduler.build(spec.seed);
    let deadline = Instant::now() + Duration::from_millis(c.file.budget.wall_ms);
    let mut lane_instructions = 0;
    let mut printf = String::new();
    for l in &c.launches {
        let args: Vec<Arg> = l
            .args
            .iter()
            .map(|a| match a {
                LaunchArg::Buffer(i) => Arg::Ptr(ptrs[*i]),
                LaunchArg::Scalar(s) => s.arg(),
            })
            .collect();
        let opts = LaunchOptions {
            fuel: c.file.budget.fuel,
        };
        let stop = Stop {
            deadline: Some(deadline),
            cancel,
        };
        let r = dev
            .launch_with_stop(
                module,
                &l.kernel,
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
            let wall = matches!(r.outcome, LaunchOutcome::Timeout(_))
                && r.stats.lane_instructions < c.file.budget.fuel;
            let mut verdict = outcome_verdict(&r.outcome, wall);
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                verdict = Some(Verdict::Interrupted);
            }
            return Ok((lane_instructions, printf, verdict));
        }
    }
    Ok((lane_instructions, printf, None))
}

fn execute_raw(
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
) -> Result<Raw, String> {
    let c = &prep.campaign;
    let mut dev = prep.template.clone();
    let module = prep.template_module;
    let ptrs = &prep.buffer_ptrs;
    let mut cfg = BufferConfig::new(spec.model, spec.p, spec.seed);
    cfg.trace = spec.trace;
    cfg.buffer_global = spec.filters.global;
    cfg.buffer_shared = spec.filters.shared;
    cfg.kernels = spec.filters.kernels.clone();
    cfg.sites = spec.filters.sites.clone();
    // The race checker wraps the buffers only when asked: building it analyses the module.
    let (launched, races, mut wb) = if spec.race {
        let mut rc =
            fencehound_racecheck::RaceCheck::for_module(WriteBuffers::new(cfg), &dev, module);
        let launched = run_launches(&mut dev, module, prep, spec, cancel, ptrs, &mut rc)?;
        let races = rc.races().reports(&dev, module);
        (launched, races, rc.into_inner())
    } else {
        let mut wb = WriteBuffers::new(cfg);
        let launched = run_launches(&mut dev, module, prep, spec, cancel, ptrs, &mut wb)?;
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
    let start = Instant::now();
    judge_raw(prep, execute_raw(prep, spec, cancel), start)
}

/// Judges what a backend produced (an `Err` is a run that could not happen: a fault).
pub(crate) fn judge_raw(prep: &Prepared, raw: Result<Raw, String>, start: Instant) -> ExecResult {
    let raw = match raw {
        Ok(r) => r,
        Err(message) => {
            return ExecResult {
                verdict: Verdict::Fault { message },
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
            }
        }
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
    }
}
