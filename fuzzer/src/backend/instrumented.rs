//! The rewritten PTX on the vgpu: what a GPU would run, executed by the virtual GPU on
//! plain memory (`fuzz --instrumented`). The write buffers live in the kernel
//! ([`fencehound_handlers::rewrite`]); the vgpu adds nothing but the campaign's scheduler.

use super::Backend;
use crate::campaign::LaunchArg;
use crate::execution::{judge_raw, Prepared};
use crate::kernel_campaign::outcome_verdict;
use crate::types::{ExecResult, ExecSpec, Raw};
use crate::verdict::Verdict;
use fencehound_handlers::rewrite::{self, layout, Flavor, RewriteOptions};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_oracle::{Buffer, Outputs};
use fencehound_vgpu::{
    Arg, Device, HangCause, LaunchOptions, LaunchOutcome, ModuleId, NoHooks, Quiet, Stop,
};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much more fuel (lane instructions) an instrumented launch gets than the campaign's
/// budget: the blocks execute tens of instructions per memory access.
pub const FUEL_FACTOR: u64 = 100;
/// How much more wall-clock time an instrumented execution gets.
pub const WALL_FACTOR: u64 = 20;

/// The buffer configuration an instrumented execution of `spec` uses: the spec's model,
/// `p_w`, seed and filters, under the device policy.
pub fn device_config(spec: &ExecSpec) -> Result<BufferConfig, String> {
    if spec.filters.sites.is_some() {
        return Err(
            "store-site filters name vgpu sites of the original PTX; the instrumented backends do not support them".into(),
        );
    }
    let mut cfg = BufferConfig::new(spec.model, spec.p, spec.seed);
    cfg.buffer_global = spec.filters.global;
    cfg.buffer_shared = spec.filters.shared;
    cfg.kernels = spec.filters.kernels.clone();
    cfg.policy = DrainPolicy::Device {
        liveness_period: layout::DEFAULT_LIVENESS_PERIOD,
        overlay_capacity: layout::DEFAULT_OVERLAY_CAPACITY,
    };
    Ok(cfg)
}

/// Threads and CTAs of the largest launch of a campaign.
pub fn sizes(prep: &Prepared) -> layout::Sizes {
    let c = &prep.campaign;
    layout::Sizes {
        threads: c
            .launches
            .iter()
            .map(|l| (l.grid.count() * l.block.count()).min(u32::MAX as u64) as u32)
            .max()
            .unwrap_or(0),
        ctas: c
            .launches
            .iter()
            .map(|l| l.grid.count().min(u32::MAX as u64) as u32)
            .max()
            .unwrap_or(0),
    }
}

/// A variant's rewritten module, loaded, with the campaign's buffers initialised.
struct Template {
    dev: Device,
    module: ModuleId,
    ptrs: Vec<u64>,
}

/// The `vgpu-instrumented` backend.
#[derive(Default)]
pub struct Instrumented {
    templates: Mutex<HashMap<String, Arc<Result<Template, String>>>>,
    /// Cap each kernel at its original register count (ptxas, sm_80) + this many
    /// ([`rewrite::regcap`]): the PTX a GPU would run with `fencehound instrument
    /// --max-extra-registers`, run here to show it computes what the uncapped one does.
    max_extra_registers: Option<u32>,
    /// `RewriteOptions::eager_header`: the test seam that writes a fast kernel's cached
    /// header words back after every block.
    eager_header: bool,
    /// A test seam: run one module for every model (`RewriteOptions::model` `None`, the
    /// launch's flag choosing) instead of one module per model.
    generic: bool,
}

impl Instrumented {
    pub fn new() -> Instrumented {
        Instrumented::default()
    }

    /// The backend running register-capped modules (needs ptxas).
    pub fn with_register_caps(extra: u32) -> Instrumented {
        Instrumented {
            max_extra_registers: Some(extra),
            ..Instrumented::default()
        }
    }

    /// The backend running modules rewritten with `RewriteOptions::eager_header` (the
    /// header kept current between blocks): the same executions as [`Instrumented::new`]'s,
    /// which a test checks.
    pub fn with_eager_header() -> Instrumented {
        Instrumented {
            eager_header: true,
            ..Instrumented::default()
        }
    }

    /// The variant's module for `model` (one module per model: `RewriteOptions::model`).
    /// The backend running one module for every model (`RewriteOptions::model` `None`):
    /// the same executions as [`Instrumented::new`]'s, which a test checks.
    pub fn generic() -> Instrumented {
        Instrumented {
            generic: true,
            ..Instrumented::default()
        }
    }

    fn template(&self, prep: &Prepared, model: Model) -> Arc<Result<Template, String>> {
        let key = format!("{} {}", prep.ptx_sha256, model.name());
        if let Some(t) = self
            .templates
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return t.clone();
        }
        let t = Arc::new(build_template(
            prep,
            self.max_extra_registers,
            self.eager_header,
            (!self.generic).then_some(model),
        ));
        self.templates
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, t.clone());
        t
    }
}

fn build_template(
    prep: &Prepared,
    max_extra_registers: Option<u32>,
    eager_header: bool,
    model: Option<Model>,
) -> Result<Template, String> {
    let rewritten = device_rewrite_with(prep, max_extra_registers, eager_header, model)?;
    let mut dev = Device::new();
    // The runtime's calls and the code the rewrite put into the kernel are quiet: the
    // scheduler decides where, and as often as, it does for the original kernel, as with
    // the native handlers (see `fencehound_vgpu::Quiet`).
    dev.set_quiet(Some(Quiet {
        functions: rewrite::runtime_functions().map_err(|e| format!("instrumenting: {e}"))?,
        generated: true,
    }));
    let module = dev
        .load_module(&rewritten)
        .map_err(|e| format!("loading the instrumented PTX: {e}"))?;
    let ptrs = alloc_buffers(&mut dev, prep)?;
    Ok(Template { dev, module, ptrs })
}

/// The variant's module rewritten in the device flavour for `model` (what a GPU runs),
/// its kernels capped at their original register count + `max_extra_registers` when
/// given.
pub(crate) fn device_rewrite(
    prep: &Prepared,
    max_extra_registers: Option<u32>,
    model: Model,
) -> Result<fencehound_ptx::Module, String> {
    device_rewrite_with(prep, max_extra_registers, false, Some(model))
}

fn device_rewrite_with(
    prep: &Prepared,
    max_extra_registers: Option<u32>,
    eager_header: bool,
    model: Option<Model>,
) -> Result<fencehound_ptx::Module, String> {
    let mut rw = rewrite::rewrite(
        &prep.module,
        &RewriteOptions {
            flavor: Flavor::Device,
            eager_header,
            model,
        },
    )
    .map_err(|e| format!("instrumenting: {e}"))?;
    if let Some(extra) = max_extra_registers {
        cap_registers(&prep.module, &mut rw.module, extra, "sm_80")?;
    }
    Ok(rw.module)
}

/// One kernel's register cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCap {
    pub kernel: String,
    /// The original kernel's registers, as ptxas counts them.
    pub original: u32,
    /// Its `.maxnreg` in the rewritten module.
    pub cap: u32,
}

/// Caps each kernel of `rewritten` (the rewrite of `original`) at its count in `original`
/// (ptxas -v for `arch`) + `extra`, at least [`rewrite::regcap::ABI_MIN_REGISTERS`]
/// ([`rewrite::regcap::cap_registers`]).
pub fn cap_registers(
    original: &fencehound_ptx::Module,
    rewritten: &mut fencehound_ptx::Module,
    extra: u32,
    arch: &str,
) -> Result<Vec<KernelCap>, String> {
    let usage = fencehound_toolchain::resource_usage(&fencehound_ptx::print(original), arch)
        .map_err(|e| format!("measuring the original kernels' registers: {e}"))?;
    let caps: Vec<KernelCap> = usage
        .iter()
        .filter(|u| u.entry)
        .map(|u| KernelCap {
            kernel: u.name.clone(),
            original: u.registers,
            cap: rewrite::regcap::cap_for(u.registers, extra),
        })
        .collect();
    let list: Vec<(String, u32)> = caps.iter().map(|c| (c.kernel.clone(), c.cap)).collect();
    rewrite::regcap::cap_registers(rewritten, &list)
        .map_err(|e| format!("capping registers: {e}"))?;
    Ok(caps)
}

/// Allocates and initialises the campaign's buffers in declaration order (the order
/// `prepare` uses, so addresses agree with the native runs).
pub(crate) fn alloc_buffers(dev: &mut Device, prep: &Prepared) -> Result<Vec<u64>, String> {
    let mut ptrs = Vec::new();
    for (b, init) in prep.campaign.buffers.iter().zip(&prep.inputs.buffers) {
        let p = dev
            .alloc_named(init.data.len() as u64, b.name.clone())
            .map_err(|e| format!("buffer `{}`: {e}", b.name))?;
        dev.copy_to(p, &init.data)
            .map_err(|e| format!("buffer `{}`: {e}", b.name))?;
        ptrs.push(p);
    }
    Ok(ptrs)
}

/// The PTX entry name of launch `i` (a campaign may name a C++ kernel as written).
pub(crate) fn kernel_of(prep: &Prepared, i: usize) -> String {
    prep.launch_kernel(i)
        .map(str::to_string)
        .unwrap_or_else(|| prep.campaign.launches[i].kernel.clone())
}

pub(crate) fn launch_args(prep: &Prepared, ptrs: &[u64], launch: usize) -> Vec<Arg> {
    let l = &prep.campaign.launches[launch];
    let sizes = param_sizes(&prep.module, &kernel_of(prep, launch));
    l.args
        .iter()
        .enumerate()
        .map(|(j, a)| match a {
            LaunchArg::Buffer(i) => Arg::Ptr(ptrs[*i]),
            LaunchArg::Scalar(s) => s.arg(),
            LaunchArg::Bytes(b) => {
                // A struct by value, zero-padded to its parameter's size.
                let mut b = b.clone();
                if let Some(&n) = sizes.get(j) {
                    if b.len() < n as usize {
                        b.resize(n as usize, 0);
                    }
                }
                Arg::Bytes(b)
            }
        })
        .collect()
}

/// Bytes of each parameter of `kernel` (element size times array dimensions).
pub(crate) fn param_sizes(m: &fencehound_ptx::Module, kernel: &str) -> Vec<u64> {
    let bytes = |t: fencehound_ptx::Mod| {
        let s = t.as_str();
        let bits: u64 = s
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or(8);
        (bits / 8).max(1)
    };
    m.kernels()
        .find(|f| f.name == kernel)
        .map(|f| {
            f.params
                .iter()
                .map(|p| {
                    let n: u64 = p.dims.iter().map(|d| d.unwrap_or(1)).product();
                    bytes(p.ty) * n.max(1) * p.vector.map_or(1, |v| v as u64)
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn read_outputs(dev: &Device, prep: &Prepared, ptrs: &[u64]) -> Result<Outputs, String> {
    let mut outputs = Outputs {
        buffers: Vec::new(),
    };
    for ((b, init), p) in prep
        .campaign
        .buffers
        .iter()
        .zip(&prep.inputs.buffers)
        .zip(ptrs)
    {
        let mut data = vec![0u8; init.data.len()];
        dev.copy_from(*p, &mut data).map_err(|e| e.to_string())?;
        outputs.buffers.push(Buffer {
            name: b.name.clone(),
            ty: init.ty,
            data,
        });
    }
    Ok(outputs)
}

fn run(
    t: &Template,
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
) -> Result<Raw, String> {
    let cfg = device_config(spec)?;
    let c = &prep.campaign;
    let mut dev = t.dev.clone();
    let area = layout::allocate(&mut dev, &cfg, sizes(prep)).map_err(|e| e.to_string())?;
    let (ctl, _) = dev
        .global_by_name(t.module, rewrite::CTL)
        .map_err(|e| e.to_string())?;
    dev.copy_to(ctl, &area.ctl.to_le_bytes())
        .map_err(|e| e.to_string())?;
    let mut sched = spec.scheduler.build(spec.seed);
    let fuel = c.file.budget.fuel.saturating_mul(FUEL_FACTOR);
    let deadline =
        Instant::now() + Duration::from_millis(c.file.budget.wall_ms.saturating_mul(WALL_FACTOR));
    let mut lane_instructions = 0;
    let mut printf = String::new();
    let mut verdict = None;
    for (i, l) in c.launches.iter().enumerate() {
        let kernel = kernel_of(prep, i);
        let index = dev.launch_count();
        layout::begin_launch(
            &mut dev,
            &cfg,
            &area,
            index,
            layout::LaunchShape::of(l.grid, l.block),
            layout::launch_active(&cfg, &kernel),
        )
        .map_err(|e| e.to_string())?;
        let r = dev
            .launch_with_stop(
                t.module,
                &kernel,
                l.grid,
                l.block,
                l.dynamic_shared,
                &launch_args(prep, &t.ptrs, i),
                LaunchOptions {
                    fuel,
                    ..Default::default()
                },
                Stop {
                    deadline: Some(deadline),
                    cancel,
                },
                &mut NoHooks,
                &mut sched,
            )
            .map_err(|e| format!("launch of `{kernel}`: {e}"))?;
        lane_instructions += r.stats.lane_instructions;
        printf.push_str(&r.stdout);
        if !r.outcome.is_completed() {
            let wall =
                matches!(&r.outcome, LaunchOutcome::Timeout(d) if d.cause == HangCause::WallClock);
            verdict = outcome_verdict(&r.outcome, wall);
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                verdict = Some(Verdict::Interrupted);
            }
            break;
        }
    }
    let stats = layout::read_stats(&dev, &area).map_err(|e| e.to_string())?;
    Ok(Raw {
        outputs: read_outputs(&dev, prep, &t.ptrs)?,
        outcome_verdict: verdict,
        stats,
        lane_instructions,
        printf,
        trace: Vec::new(),
        sites: Vec::new(),
        races: Vec::new(),
    })
}

impl Backend for Instrumented {
    fn execute(&self, prep: &Prepared, spec: &ExecSpec, cancel: Option<&AtomicBool>) -> ExecResult {
        let start = Instant::now();
        let raw = if spec.race || spec.trace {
            Err("the instrumented backends have no race check and no trace".to_string())
        } else if let Some(what) = prep.vgpu_only() {
            Err(format!("{what} run only on the vgpu backend"))
        } else {
            match &*self.template(prep, spec.model) {
                Ok(t) => run(t, prep, spec, cancel),
                Err(e) => Err(e.clone()),
            }
        };
        judge_raw(prep, raw, start)
    }
    fn name(&self) -> &'static str {
        "vgpu-instrumented"
    }
    fn device(&self) -> String {
        super::VGPU_DEVICE.to_string()
    }
}
