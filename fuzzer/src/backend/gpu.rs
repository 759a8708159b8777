//! The GPU backend: the rewritten PTX on an NVIDIA GPU through the CUDA driver API
//! (cudarc, loaded at run time: the binary runs where there is no driver, and says so).
//!
//! The campaign process ([`Gpu`], a [`Backend`]) keeps watchdog'd worker processes
//! ([`super::worker::Supervisor`]); each worker ([`Session`], started as
//! `fencehound gpu-worker`) owns a CUDA context, loads each variant's instrumented module
//! once, and per execution: copies the campaign's initial buffers, zeroes the write-buffer
//! memory, points `__fencehound_ctl` at the control block ([`layout`]), launches the
//! campaign's kernels in order, and sends back the buffers and the statistics the runtime
//! kept. Judging happens in the campaign process, with the same oracles as every backend.

use super::worker::{
    hex, unhex, ArgSpec, DeviceEnd, Done, Load, RunConfig, Supervisor, WorkerDevice, WorkerError,
};
use super::Backend;
use crate::campaign::LaunchArg;
use crate::execution::{judge_raw, Prepared};
use crate::types::{ExecResult, ExecSpec, Raw};
use crate::verdict::Verdict;
use cudarc::driver::{result, sys};
use fencehound_handlers::rewrite::{self, layout};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_oracle::{Buffer, Outputs};
use std::collections::HashMap;
use std::ffi::{c_void, CString, OsString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Whether a CUDA driver and a device are present: the device's description, or why not.
/// Never panics: cudarc's loader is only used after `is_culib_present`.
pub fn probe() -> Result<String, String> {
    // SAFETY: only tries to dlopen the driver library's candidate names.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "no CUDA driver: libcuda.so (the NVIDIA driver's library) is not installed or not on the library path"
                .into(),
        );
    }
    result::init().map_err(|e| format!("the CUDA driver does not initialise: {e}"))?;
    let n = result::device::get_count().map_err(|e| format!("CUDA: {e}"))?;
    if n < 1 {
        return Err("the CUDA driver sees no device".into());
    }
    let dev = result::device::get(0).map_err(|e| format!("CUDA: {e}"))?;
    describe(dev)
}

fn describe(dev: sys::CUdevice) -> Result<String, String> {
    let name = result::device::get_name(dev).map_err(|e| format!("CUDA: {e}"))?;
    // SAFETY: `dev` is a device handle the driver returned.
    let attr = |a| unsafe { result::device::get_attribute(dev, a) };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .map_err(|e| format!("CUDA: {e}"))?;
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .map_err(|e| format!("CUDA: {e}"))?;
    Ok(format!("{name} (sm_{major}{minor})"))
}

/// Device memory of the current CUDA context, for [`layout`].
struct CudaMem {
    allocations: Vec<sys::CUdeviceptr>,
}

impl layout::DeviceMemory for CudaMem {
    type Error = String;
    fn alloc_zeroed(&mut self, bytes: u64, _name: &str) -> Result<u64, String> {
        let n = bytes.max(1) as usize;
        // SAFETY: a plain allocation in the current context, then a memset of exactly it.
        let p = unsafe { result::malloc_sync(n) }.map_err(|e| e.to_string())?;
        self.allocations.push(p);
        // SAFETY: `p` is a live allocation of `n` bytes.
        unsafe { result::memset_d8_sync(p, 0, n) }.map_err(|e| e.to_string())?;
        Ok(p)
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        // SAFETY: callers write inside allocations made here or by the module.
        unsafe { result::memcpy_htod_sync(addr, data) }.map_err(|e| e.to_string())
    }
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        // SAFETY: as for `write`.
        unsafe { result::memcpy_dtoh_sync(buf, addr) }.map_err(|e| e.to_string())
    }
}

impl Drop for CudaMem {
    fn drop(&mut self) {
        for p in self.allocations.drain(..) {
            // SAFETY: allocated by `alloc_zeroed`, freed once.
            let _ = unsafe { result::free_sync(p) };
        }
    }
}

struct Variant {
    load: Load,
    module: sys::CUmodule,
    functions: Vec<sys::CUfunction>,
    ctl: sys::CUdeviceptr,
    mem: CudaMem,
    buffers: Vec<u64>,
    /// The write-buffer memory and the (capacity, liveness, overlay) it was sized for.
    area: Option<(layout::Area, (u32, u32, u32))>,
}

/// A worker's CUDA context (device 0).
pub struct Session {
    device: String,
    ctx: sys::CUcontext,
    dev: sys::CUdevice,
    variants: HashMap<u64, Variant>,
}

impl Session {
    pub fn open() -> Result<Session, String> {
        let device = probe()?;
        let dev = result::device::get(0).map_err(|e| format!("CUDA: {e}"))?;
        // SAFETY: `dev` is valid; the primary context is released in `drop`.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| format!("CUDA: {e}"))?;
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| format!("CUDA: {e}"))?;
        Ok(Session {
            device,
            ctx,
            dev,
            variants: HashMap::new(),
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, v) in self.variants.drain() {
            drop(v.mem);
            // SAFETY: loaded by `load`, unloaded once, after its memory was freed.
            let _ = unsafe { result::module::unload(v.module) };
        }
        let _ = self.ctx;
        // SAFETY: retained in `open`.
        let _ = unsafe { result::primary_ctx::release(self.dev) };
    }
}

fn cuda<T>(what: &str, r: Result<T, result::DriverError>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

impl WorkerDevice for Session {
    fn describe(&self) -> String {
        self.device.clone()
    }

    fn load(&mut self, load: Load) -> Result<(), String> {
        let image = CString::new(load.ptx.as_bytes()).map_err(|_| "PTX with a NUL byte")?;
        // SAFETY: a NUL-terminated PTX image; the driver copies what it needs.
        let module = cuda("loading the module", unsafe {
            result::module::load_data(image.as_ptr() as *const c_void)
        })?;
        let mut functions = Vec::new();
        for l in &load.launches {
            let name = CString::new(l.kernel.as_bytes()).map_err(|_| "kernel name with a NUL")?;
            // SAFETY: `module` is loaded.
            functions.push(cuda(&format!("kernel `{}`", l.kernel), unsafe {
                result::module::get_function(module, name)
            })?);
        }
        let ctl_name = CString::new(rewrite::CTL).map_err(|_| "bad name")?;
        // SAFETY: `module` is loaded.
        let (ctl, _) = cuda("the control-block pointer", unsafe {
            result::module::get_global(module, ctl_name)
        })?;
        let mut mem = CudaMem {
            allocations: Vec::new(),
        };
        let mut buffers = Vec::new();
        for (i, b) in load.buffers.iter().enumerate() {
            let bytes = unhex(b).ok_or_else(|| format!("buffer {i}: bad hex"))?;
            buffers.push(layout::DeviceMemory::alloc_zeroed(
                &mut mem,
                bytes.len() as u64,
                "campaign buffer",
            )?);
        }
        self.variants.insert(
            load.variant,
            Variant {
                load,
                module,
                functions,
                ctl,
                mem,
                buffers,
                area: None,
            },
        );
        Ok(())
    }

    fn run(&mut self, exec: u64, variant: u64, rc: &RunConfig) -> Result<Done, String> {
        let start = Instant::now();
        let v = self
            .variants
            .get_mut(&variant)
            .ok_or_else(|| format!("variant {variant} was not loaded"))?;
        let model = Model::parse(&rc.model).ok_or_else(|| format!("model `{}`", rc.model))?;
        let mut cfg = BufferConfig::new(model, rc.p, rc.seed);
        cfg.capacity = rc.capacity;
        cfg.buffer_global = rc.buffer_global;
        cfg.buffer_shared = rc.buffer_shared;
        cfg.kernels = rc.kernels.as_ref().map(|k| k.iter().cloned().collect());
        cfg.policy = DrainPolicy::Device {
            liveness_period: rc.liveness_period,
            overlay_capacity: rc.overlay_capacity,
        };
        let key = (rc.capacity, rc.liveness_period, rc.overlay_capacity);
        if v.area.as_ref().is_none_or(|(_, k)| *k != key) {
            let a = layout::allocate(&mut v.mem, &cfg, v.load.sizes).map_err(|e| e.to_string())?;
            v.area = Some((a, key));
        }
        let Some((area, _)) = v.area.clone() else {
            return Err("no buffer memory".into());
        };
        for &(p, n) in &area.allocations {
            // SAFETY: an allocation of `n` bytes made by `layout::allocate`.
            cuda("clearing the buffers", unsafe {
                result::memset_d8_sync(p, 0, n as usize)
            })?;
        }
        layout::DeviceMemory::write(&mut v.mem, v.ctl, &area.ctl.to_le_bytes())?;
        for (i, b) in v.load.buffers.iter().enumerate() {
            let bytes = unhex(b).ok_or_else(|| format!("buffer {i}: bad hex"))?;
            layout::DeviceMemory::write(&mut v.mem, v.buffers[i], &bytes)?;
        }
        let mut end = DeviceEnd::Completed;
        for (i, l) in v.load.launches.iter().enumerate() {
            layout::begin_launch(
                &mut v.mem,
                &cfg,
                &area,
                i as u32,
                layout::LaunchShape::new(l.grid, l.block),
                layout::launch_active(&cfg, &l.kernel),
            )
            .map_err(|e| e.to_string())?;
            // Each argument's bytes, then pointers to them (cuLaunchKernel's layout).
            let mut storage: Vec<Vec<u8>> = Vec::new();
            for a in &l.args {
                storage.push(match a {
                    ArgSpec::Buffer(b) => v
                        .buffers
                        .get(*b)
                        .ok_or_else(|| format!("argument names buffer {b}"))?
                        .to_le_bytes()
                        .to_vec(),
                    ArgSpec::Bytes(h) => unhex(h).ok_or("bad argument bytes")?,
                });
            }
            let mut params: Vec<*mut c_void> = storage
                .iter_mut()
                .map(|s| s.as_mut_ptr() as *mut c_void)
                .collect();
            // SAFETY: the function belongs to the loaded module; `params` points at
            // argument bytes that live until after the synchronisation below.
            let launched = unsafe {
                result::launch_kernel(
                    v.functions[i],
                    (l.grid[0], l.grid[1], l.grid[2]),
                    (l.block[0], l.block[1], l.block[2]),
                    l.dynamic_shared,
                    std::ptr::null_mut(),
                    &mut params,
                )
            }
            .and_then(|()| result::ctx::synchronize());
            if let Err(e) = launched {
                end = DeviceEnd::Failed {
                    launch: i,
                    message: format!("launch {i} (`{}`): {e}", l.kernel),
                };
                break;
            }
        }
        if end != DeviceEnd::Completed {
            // The context is lost: nothing more can be read from it.
            return Ok(Done {
                exec,
                outputs: Vec::new(),
                stats: Default::default(),
                end,
                wall_ms: start.elapsed().as_millis() as u64,
            });
        }
        let mut outputs = Vec::new();
        for (i, b) in v.load.buffers.iter().enumerate() {
            let mut bytes = vec![0u8; b.len() / 2];
            layout::DeviceMemory::read(&v.mem, v.buffers[i], &mut bytes)?;
            outputs.push(hex(&bytes));
        }
        let stats = layout::read_stats(&v.mem, &area).map_err(|e| e.to_string())?;
        Ok(Done {
            exec,
            outputs,
            stats,
            end,
            wall_ms: start.elapsed().as_millis() as u64,
        })
    }
}

/// The `gpu-worker` process: serves requests on stdin/stdout until stdin closes. Exit
/// status 2 when there is no usable GPU (after saying why on stdout).
pub fn worker_main() -> u8 {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match Session::open() {
        Ok(s) => match super::worker::serve(s, stdin.lock(), stdout.lock()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("gpu-worker: {e}");
                2
            }
        },
        Err(message) => {
            let line = serde_json::to_string(&super::worker::Response::Error { message })
                .unwrap_or_default();
            println!("{line}");
            2
        }
    }
}

/// The worker's view of a variant: instrumented PTX (its kernels capped at their original
/// register count + `max_extra_registers` when given), buffers, launches.
pub fn load_for(
    prep: &Prepared,
    variant: u64,
    max_extra_registers: Option<u32>,
    model: Model,
) -> Result<Load, String> {
    if let Some(what) = prep.vgpu_only() {
        return Err(format!("{what} run only on the vgpu backend"));
    }
    let module = super::instrumented::device_rewrite(prep, max_extra_registers, model)?;
    let c = &prep.campaign;
    Ok(Load {
        variant,
        ptx: fencehound_ptx::print(&module),
        buffers: prep.inputs.buffers.iter().map(|b| hex(&b.data)).collect(),
        launches: c
            .launches
            .iter()
            .enumerate()
            .map(|(i, l)| super::worker::LaunchSpec {
                kernel: super::instrumented::kernel_of(prep, i),
                grid: [l.grid.x, l.grid.y, l.grid.z],
                block: [l.block.x, l.block.y, l.block.z],
                dynamic_shared: l.dynamic_shared,
                // Buffers by index (the worker allocates them), scalars and structs as the
                // bytes the vgpu would pass (structs padded to the parameter's size).
                args: l
                    .args
                    .iter()
                    .zip(super::instrumented::launch_args(
                        prep,
                        &vec![0; c.buffers.len()],
                        i,
                    ))
                    .map(|(a, arg)| match a {
                        LaunchArg::Buffer(b) => ArgSpec::Buffer(*b),
                        _ => ArgSpec::Bytes(hex(&arg.bytes())),
                    })
                    .collect(),
            })
            .collect(),
        sizes: super::instrumented::sizes(prep),
    })
}

/// The per-execution configuration sent to a worker.
pub fn run_config(spec: &ExecSpec) -> Result<RunConfig, String> {
    let cfg = super::instrumented::device_config(spec)?;
    let DrainPolicy::Device {
        liveness_period,
        overlay_capacity,
    } = cfg.policy
    else {
        return Err("the device policy is required".into());
    };
    Ok(RunConfig {
        model: cfg.model.name().to_string(),
        p: cfg.p_w,
        seed: cfg.seed,
        capacity: cfg.capacity,
        liveness_period,
        overlay_capacity,
        buffer_global: cfg.buffer_global,
        buffer_shared: cfg.buffer_shared,
        kernels: cfg.kernels.map(|k| k.into_iter().collect()),
    })
}

/// The `gpu` backend (campaign side).
pub struct Gpu {
    command: Vec<OsString>,
    device: String,
    idle: Mutex<Vec<Supervisor>>,
    loads: Mutex<HashMap<String, Arc<Result<Load, String>>>>,
    next_variant: AtomicU64,
    max_extra_registers: Option<u32>,
}

impl Gpu {
    /// `command` starts a worker (`fencehound gpu-worker`); `device` describes the GPU
    /// ([`probe`]).
    pub fn new(command: Vec<OsString>, device: String) -> Gpu {
        Gpu {
            command,
            device,
            idle: Mutex::new(Vec::new()),
            loads: Mutex::new(HashMap::new()),
            next_variant: AtomicU64::new(1),
            max_extra_registers: None,
        }
    }

    /// Runs register-capped kernels ([`load_for`]; needs ptxas).
    pub fn with_register_caps(mut self, extra: Option<u32>) -> Gpu {
        self.max_extra_registers = extra;
        self
    }

    /// The variant's module for `model` (one per model: `RewriteOptions::model`), loaded
    /// in the worker under its own number.
    fn load(&self, prep: &Prepared, model: Model) -> Arc<Result<Load, String>> {
        let mut loads = self.loads.lock().unwrap_or_else(|p| p.into_inner());
        loads
            .entry(format!("{} {}", prep.ptx_sha256, model.name()))
            .or_insert_with(|| {
                Arc::new(load_for(
                    prep,
                    self.next_variant.fetch_add(1, Ordering::Relaxed),
                    self.max_extra_registers,
                    model,
                ))
            })
            .clone()
    }

    /// Runs one execution in a worker and turns the answer into what the judge needs.
    fn run(&self, prep: &Prepared, spec: &ExecSpec) -> Result<Raw, String> {
        if spec.race || spec.trace {
            return Err("the GPU backend has no race check and no trace".into());
        }
        let load = self.load(prep, spec.model);
        let load = load.as_ref().as_ref().map_err(|e| e.clone())?;
        let rc = run_config(spec)?;
        let mut sup = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_else(|| Supervisor::new(self.command.clone()));
        let timeout = Duration::from_millis(prep.campaign.file.budget.wall_ms);
        let answer = sup.run(load, spec.id, &rc, timeout);
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(sup);
        raw_from_answer(prep, answer, timeout)
    }
}

/// Maps a worker's answer to the unjudged result of an execution.
pub(crate) fn raw_from_answer(
    prep: &Prepared,
    answer: Result<Done, WorkerError>,
    timeout: Duration,
) -> Result<Raw, String> {
    let empty = |verdict: Verdict| Raw {
        outputs: Outputs {
            buffers: Vec::new(),
        },
        outcome_verdict: Some(verdict),
        stats: Default::default(),
        lane_instructions: 0,
        printf: String::new(),
        trace: Vec::new(),
        sites: Vec::new(),
        races: Vec::new(),
    };
    match answer {
        Ok(Done {
            end: DeviceEnd::Failed { message, .. },
            ..
        }) => Ok(empty(Verdict::Fault { message })),
        Ok(d) => {
            let mut outputs = Outputs {
                buffers: Vec::new(),
            };
            for ((b, init), h) in prep
                .campaign
                .buffers
                .iter()
                .zip(&prep.inputs.buffers)
                .zip(&d.outputs)
            {
                let data = unhex(h).ok_or("the worker sent a malformed buffer")?;
                if data.len() != init.data.len() {
                    return Err(format!(
                        "the worker sent {} bytes of `{}`",
                        data.len(),
                        b.name
                    ));
                }
                outputs.buffers.push(Buffer {
                    name: b.name.clone(),
                    ty: init.ty,
                    data,
                });
            }
            Ok(Raw {
                outputs,
                outcome_verdict: None,
                stats: d.stats,
                lane_instructions: 0,
                printf: String::new(),
                trace: Vec::new(),
                sites: Vec::new(),
                races: Vec::new(),
            })
        }
        Err(WorkerError::Timeout(_)) => Ok(empty(Verdict::Timeout {
            dump: format!(
                "the kernels did not finish within {} ms on the GPU; the worker process was killed",
                timeout.as_millis()
            ),
            wall: true,
        })),
        Err(e) => Err(format!("GPU worker: {e}")),
    }
}

impl Backend for Gpu {
    fn execute(
        &self,
        prep: &Prepared,
        spec: &ExecSpec,
        _cancel: Option<&AtomicBool>,
    ) -> ExecResult {
        let start = Instant::now();
        judge_raw(prep, self.run(prep, spec), start)
    }
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn device(&self) -> String {
        self.device.clone()
    }
}
