//! Kernel campaigns on the vgpu: a variant's PTX (compiled with NVRTC, or read), its
//! launches resolved to PTX entries, the campaign's buffers laid out in a template device
//! that every execution clones, the `sc` reference run, and one execution: the launches in
//! order under the model's hooks (write buffers, the race check, an [`Observer`]), judged
//! by the campaign's oracles over the output buffers.
//!
//! Which kind of subject a campaign is, and so whether this module runs it, is decided in
//! one place: [`crate::execution::Subject`].

use crate::campaign::{Campaign, LaunchArg};
use crate::types::{ExecResult, ExecSpec, Observer, PrepareError, Raw};
use crate::verdict::Verdict;
use fencehound_handlers::{BufferConfig, WriteBuffers};
use fencehound_oracle::{Buffer, Context, Judgement, Outputs};
use fencehound_vgpu::{
    Arg, Device, HangCause, Hooks, LaunchOptions, LaunchOutcome, ModuleId, Observed, Stop,
};
use sha2::{Digest, Sha256};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A kernel campaign's variant, ready to run on the vgpu.
#[derive(Debug)]
pub struct PreparedKernels {
    /// A device with the module loaded and the buffers initialised: every execution
    /// starts from a clone of it (decoding and initialising once per variant).
    template: Device,
    template_module: ModuleId,
    /// Device addresses of the campaign's buffers, in declaration order.
    buffer_ptrs: Vec<u64>,
    /// The PTX entry name of each launch's kernel (launches may name C++ kernels as
    /// written, e.g. `reduce<128, true>`).
    kernel_names: Vec<String>,
}

impl PreparedKernels {
    /// The PTX entry name of each launch, in launch order.
    pub fn kernel_names(&self) -> &[String] {
        &self.kernel_names
    }
}

/// What preparing a kernel variant produces.
pub(crate) struct KernelVariant {
    pub(crate) module: fencehound_ptx::Module,
    /// The campaign's buffers as initialised.
    pub(crate) inputs: Outputs,
    /// Outputs of the `sc` reference run.
    pub(crate) golden: Outputs,
    pub(crate) kernels: PreparedKernels,
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

/// The variant's PTX: the campaign's `.ptx` source as it is, or its CUDA source compiled
/// by NVRTC with the variant's defines.
pub(crate) fn compile(campaign: &Campaign, variant: &str) -> Result<String, PrepareError> {
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
        req.extra_options = nvrtc_options(campaign).map_err(|message| PrepareError::Input {
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
    Ok(ptx)
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

/// Prepares a variant from its PTX: parses it, resolves the launches' kernels, lays out
/// the buffers in a template device and runs the reference (`sc`), which must complete and
/// satisfy the oracles.
pub(crate) fn prepare(
    campaign: &Campaign,
    variant: &str,
    ptx: &str,
) -> Result<KernelVariant, PrepareError> {
    let cname = campaign.path.display().to_string();
    let module =
        fencehound_ptx::parse(&campaign.source.display().to_string(), ptx).map_err(|e| {
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
        resolve_kernels(campaign, ptx, &kernels).map_err(|message| PrepareError::Input {
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
    let kernels = PreparedKernels {
        template,
        template_module,
        buffer_ptrs,
        kernel_names,
    };
    let r = execute_raw(
        campaign,
        &kernels,
        &inputs,
        &ExecSpec::reference(),
        None,
        None,
    )
    .map_err(|message| PrepareError::Load {
        campaign: cname.clone(),
        variant: variant.to_string(),
        message,
    })?;
    if let Some(v) = r.outcome_verdict {
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
    let golden = r.outputs;
    // The reference must satisfy the oracles: otherwise every execution would "fail" and
    // say nothing about fences.
    let cx = Context {
        outputs: &golden,
        inputs: &inputs,
        golden: Some(&golden),
        base_dir: &campaign.dir,
    };
    match fencehound_oracle::judge(&campaign.file.oracle, &cx) {
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
    Ok(KernelVariant {
        module,
        inputs,
        golden,
        kernels,
    })
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
    c: &Campaign,
    k: &PreparedKernels,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    hooks: &mut H,
) -> Result<(u64, String, Option<Verdict>), String> {
    let module = k.template_module;
    let ptrs = &k.buffer_ptrs;
    let mut sched = spec.scheduler.build(spec.seed);
    let deadline = Instant::now() + Duration::from_millis(c.file.budget.wall_ms);
    let mut lane_instructions = 0;
    let mut printf = String::new();
    for (l, kernel) in c.launches.iter().zip(&k.kernel_names) {
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

/// What [`run_launches`] returns: lane instructions, printf output, a launch's verdict.
type Launched = (u64, String, Option<Verdict>);

/// Runs the launches under `hooks`, shown to `obs` first when there is one.
fn run_observed<H: Hooks>(
    dev: &mut Device,
    c: &Campaign,
    k: &PreparedKernels,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    hooks: H,
    obs: Option<&mut dyn Observer>,
) -> Result<(Launched, H), String> {
    match obs {
        Some(obs) => {
            let mut h = Observed { inner: hooks, obs };
            let r = run_launches(dev, c, k, spec, cancel, &mut h)?;
            Ok((r, h.inner))
        }
        None => {
            let mut h = hooks;
            let r = run_launches(dev, c, k, spec, cancel, &mut h)?;
            Ok((r, h))
        }
    }
}

/// Runs one execution of a prepared kernel variant (`inputs`: its initial buffers), without
/// judging it.
pub(crate) fn execute_raw(
    c: &Campaign,
    k: &PreparedKernels,
    inputs: &Outputs,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: Option<&mut dyn Observer>,
) -> Result<Raw, String> {
    let mut dev = k.template.clone();
    let module = k.template_module;
    let ptrs = &k.buffer_ptrs;
    let mut cfg = BufferConfig::new(spec.model, spec.p, spec.seed);
    cfg.trace = spec.trace;
    cfg.buffer_global = spec.filters.global;
    cfg.buffer_shared = spec.filters.shared;
    cfg.kernels = spec.filters.kernels.clone();
    cfg.sites = spec.filters.sites.clone();
    // The race checker wraps the buffers only when asked: building it analyses the module.
    let (launched, races, mut wb) = if spec.race {
        let rc = fencehound_racecheck::RaceCheck::for_module(WriteBuffers::new(cfg), &dev, module);
        let (launched, rc) = run_observed(&mut dev, c, k, spec, cancel, rc, obs)?;
        let races = rc.races().reports(&dev, module);
        (launched, races, rc.into_inner())
    } else {
        let wb = WriteBuffers::new(cfg);
        let (launched, wb) = run_observed(&mut dev, c, k, spec, cancel, wb, obs)?;
        (launched, Vec::new(), wb)
    };
    let (lane_instructions, printf, verdict) = launched;
    let mut outputs = Outputs {
        buffers: Vec::new(),
    };
    for ((b, init), p) in c.buffers.iter().zip(&inputs.buffers).zip(ptrs) {
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

/// Judges what a kernel backend produced by the campaign's oracles over the output buffers
/// (`inputs` and `golden`: the variant's initial buffers and its reference outputs); an
/// `Err` is a run that could not happen: a fault.
pub(crate) fn judge(
    c: &Campaign,
    inputs: &Outputs,
    golden: &Outputs,
    raw: Result<Raw, String>,
    start: Instant,
) -> ExecResult {
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
                inputs,
                golden: Some(golden),
                base_dir: &c.dir,
            };
            Verdict::from_judgement(fencehound_oracle::judge(&c.file.oracle, &cx), "")
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
        fence_drains: Default::default(),
    }
}
