//! The host API: allocate and copy device memory, load modules, launch kernels. Nothing
//! here panics on user input; every misuse is a [`DeviceError`] or [`LoadError`].

use crate::decode::{type_bytes, var_align, var_size, Decoder, ModuleLayout};
use crate::error::{DeviceError, LoadError};
use crate::exec::{Dim3, LaunchResult, LaunchSpec, Machine};
use crate::hooks::SiteId;
use crate::hooks::{Hooks, NoHooks};
use crate::memory::Memory;
use crate::program::{ParamLoc, Program, SiteInfo, SiteOp};
use crate::sched::{RoundRobin, Scheduler};
use fencehound_ptx as ptx;
use std::collections::HashMap;

/// Largest grid we run (threads); beyond this a launch is refused, not attempted.
pub const MAX_THREADS: u64 = 1 << 22;
/// Shared memory per CTA (sm_90's maximum opt-in size).
pub const MAX_SHARED: u64 = 227 * 1024;
/// Default fuel: lane instructions per launch.
pub const DEFAULT_FUEL: u64 = 2_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModuleId(usize);

/// A kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A device pointer (`.u64`).
    Ptr(u64),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    /// Raw bytes (structs passed by value).
    Bytes(Vec<u8>),
}

impl Arg {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::Ptr(v) | Arg::U64(v) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        }
    }
}

#[derive(Debug)]
struct Loaded {
    program: Program,
    vars: HashMap<String, (ptx::Space, u64, u64)>,
}

/// Per-launch options.
#[derive(Debug, Clone, Copy)]
pub struct LaunchOptions {
    /// Lane-instruction budget; running out is a timeout.
    pub fuel: u64,
    /// A cooperative launch (`cudaLaunchCooperativeKernel`): the launch gets a grid
    /// workspace, which `cooperative_groups::this_grid()` finds through `%envreg1`/`2`,
    /// so `grid.sync()` works (every CTA of a vgpu launch is resident at once).
    pub cooperative: bool,
    /// Loads of memory no thread of the launch writes, loads of shared memory that no
    /// thread of the CTA can write before its next barrier (under plain memory), and
    /// generic accesses to a lane's own local memory run without a scheduling decision
    /// (`crate::unwritten`): the same outcomes, fewer decisions. Off by default: a seed then names a different
    /// interleaving than without it, and seeded campaigns, litmus runs and the device
    /// rewrite's differential tests keep the interleavings their seeds always named.
    /// `fencehound exec` turns it on. (Hooks that agree skip such loads in every launch
    /// whose hooks are not transparent, with or without this: that changes no decision.)
    pub reduce_unwritten: bool,
    /// Once every runnable warp is parked, the liveness rule drains (`Hooks::stalled`) at
    /// once, and again while a drain wakes no parked warp, until one does or nothing is
    /// left to drain — instead of after the steps the stall rule lets pass, all of which
    /// would be parked steps that change nothing anyone can see; and while some runnable
    /// warp is not parked, the scheduler picks only among those, with the stall rule's
    /// period scaled to their share (the interpreter's `livelock` module, "Stalls with
    /// every warp parked"). The same
    /// outcomes; a look-back spinning on a store among thousands buffered under `scoped`
    /// at `p_w = 1` is released in far fewer steps. Off by default for the reason
    /// `reduce_unwritten` is (a seed would name a different interleaving, and parking
    /// would no longer be invisible to a run); `fencehound exec` turns it on.
    pub quick_stalls: bool,
    /// While every runnable warp of the CTA that ran last is about to touch nothing
    /// outside its CTA (shared memory, CTA barriers, warp collectives, registers), the
    /// next warp is picked among that CTA's warps only — under hooks that are
    /// [`crate::Hooks::transparent`] or say so for the CTA
    /// ([`crate::Hooks::cta_steps_local`]) and a scheduler that allows it
    /// ([`crate::Scheduler::cta_local`]): the same outcomes, and the CTA's state stays in
    /// cache (the interpreter's `ctalocal` module has the argument). Off by default for
    /// the reason `reduce_unwritten` is; `fencehound exec` turns it on.
    pub cta_local: bool,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            fuel: DEFAULT_FUEL,
            cooperative: false,
            reduce_unwritten: false,
            quick_stalls: false,
            cta_local: false,
        }
    }
}

/// Bytes of the grid workspace of a cooperative launch. Its layout is the driver ABI
/// that CUDA's `cooperative_groups/details/driver_abi.h` reads: `{ u32 wsSize; u32
/// barrier; }` at the 64-bit address whose high half is `%envreg1` and low half
/// `%envreg2`; `grid.sync()` counts arrivals in `barrier`.
pub const GRID_WORKSPACE_BYTES: u64 = 8;

/// Ways to end a launch early from outside (wall-clock limits, Ctrl-C). A launch that
/// stops this way ends as [`crate::LaunchOutcome::Timeout`] with its hang dump; the
/// caller knows which of its conditions fired.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stop<'a> {
    pub deadline: Option<std::time::Instant>,
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

/// Code that is not a preemption point (see [`crate::sched`]): the scheduler never switches
/// warps before quiet code (an instruction of a quiet function, or one the rewrite
/// generated). Quiet code does not count towards a step's bound, and a step that has run
/// only quiet code so far also runs the instruction after it: code generated before an
/// original instruction runs in that instruction's step, so the instrumented kernel meets
/// the scheduler where, and as often as, the original kernel does.
///
/// What it is for: a kernel instrumented by `fencehound_handlers::rewrite` (the device
/// form of the write buffers) runs the runtime's calls and the buffer bookkeeping it
/// inlines into the kernel between the original accesses. Those touch only the write
/// buffers, so they cannot change what another warp observes except through the user
/// memory the runtime writes; as preemption points they gave the instrumented kernel many
/// more scheduling decisions per original access than the native handlers see, and a
/// different interleaving distribution (`cub_scan no_fence_3` under `bugaroo` at
/// `p_w = 0.25`: native 9/40 failures, instrumented 1/40). Quiet, the runtime's calls run
/// to their return within one step, as the native hooks run within the access that calls
/// them, and the kernel's preemption points are the original kernel's.
///
/// A step is still bounded (2^14 instructions of quiet code), and a `nanosleep` stays a
/// preemption point, so a lane spinning on a lock inside a quiet function still lets other
/// warps run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quiet {
    /// Functions (exact PTX names) whose instructions are never preemption points.
    pub functions: Vec<String>,
    /// Instructions at PTX line 0 are quiet: `fencehound_handlers::rewrite` gives that
    /// position to the code it adds (an instruction parsed from a file has line ≥ 1).
    pub generated: bool,
}

impl Quiet {
    /// Per instruction of `prog`: whether it is quiet.
    fn resolve(&self, prog: &Program) -> std::sync::Arc<[bool]> {
        let mut v = vec![false; prog.insts.len()];
        for f in prog
            .funcs
            .iter()
            .filter(|f| self.functions.contains(&f.name))
        {
            let end = (f.end as usize).min(v.len());
            v[(f.entry as usize).min(end)..end].fill(true);
        }
        if self.generated {
            for (x, i) in v.iter_mut().zip(&prog.insts) {
                *x |= prog
                    .sites
                    .get(i.site as usize)
                    .is_some_and(|s| s.ptx_line == 0);
            }
        }
        v.into()
    }
}

/// A [`Quiet`] resolved for each loaded module (in load order), once: launches only look
/// the instructions up.
#[derive(Debug, Clone)]
struct QuietCode {
    spec: Quiet,
    pcs: Vec<std::sync::Arc<[bool]>>,
}

/// A virtual GPU.
///
/// Cloning is cheap for the code (decoded modules are shared) and copies the memory: a
/// device with its module loaded and buffers initialised is a template that many
/// executions clone instead of decoding and initialising again.
#[derive(Debug, Clone)]
pub struct Device {
    mem: Memory,
    modules: Vec<std::sync::Arc<Loaded>>,
    launches: u32,
    quiet: Option<std::sync::Arc<QuietCode>>,
}

impl Default for Device {
    fn default() -> Self {
        Device::new()
    }
}

impl Device {
    pub fn new() -> Device {
        Device {
            mem: Memory::default(),
            modules: Vec::new(),
            launches: 0,
            quiet: None,
        }
    }

    /// Sets the code that is not a preemption point in later launches ([`Quiet`], for the
    /// modules loaded and those loaded later); `None` makes every instruction count again.
    pub fn set_quiet(&mut self, quiet: Option<Quiet>) {
        self.quiet = quiet.map(|spec| {
            let pcs = self
                .modules
                .iter()
                .map(|m| spec.resolve(&m.program))
                .collect();
            std::sync::Arc::new(QuietCode { spec, pcs })
        });
    }

    pub fn memory(&self) -> &Memory {
        &self.mem
    }

    /// The texture objects kernels fetch from (`crate::texture`).
    pub fn textures_mut(&mut self) -> &mut crate::texture::Textures {
        &mut self.mem.textures
    }

    /// The most device-side `malloc` may hand out at once (`cudaLimitMallocHeapSize`).
    pub fn set_device_heap_limit(&mut self, bytes: u64) {
        self.mem.device_heap_limit = bytes;
    }

    /// Number of launches so far (the next launch's index).
    pub fn launch_count(&self) -> u32 {
        self.launches
    }

    /// Allocates zeroed global memory, 256-byte aligned.
    pub fn alloc(&mut self, bytes: u64) -> Result<u64, DeviceError> {
        self.alloc_named(
            bytes,
            format!("allocation #{}", self.mem.global.allocations().len()),
        )
    }

    /// Like [`Device::alloc`], with a name used in fault messages.
    pub fn alloc_named(&mut self, bytes: u64, name: impl Into<String>) -> Result<u64, DeviceError> {
        self.mem
            .global
            .alloc(bytes, 256, name.into())
            .ok_or(DeviceError::OutOfMemory(bytes))
    }

    /// Like [`Device::alloc_named`], aligned to `align` bytes (a power of two, at most
    /// 4096; at least 256).
    pub fn alloc_aligned(
        &mut self,
        bytes: u64,
        align: u64,
        name: impl Into<String>,
    ) -> Result<u64, DeviceError> {
        self.mem
            .global
            .alloc(bytes, align, name.into())
            .ok_or(DeviceError::OutOfMemory(bytes))
    }

    /// Frees the global allocation that starts at `ptr` (from [`Device::alloc`]); later
    /// accesses to it fault.
    pub fn free(&mut self, ptr: u64) -> Result<(), DeviceError> {
        if self.mem.global.free(ptr) {
            Ok(())
        } else {
            Err(DeviceError::BadAddress { addr: ptr, len: 0 })
        }
    }

    pub fn copy_to(&mut self, ptr: u64, data: &[u8]) -> Result<(), DeviceError> {
        let len = u32::try_from(data.len()).map_err(|_| DeviceError::BadAddress {
            addr: ptr,
            len: data.len(),
        })?;
        let heap = if ptr >= crate::memory::CONST_WINDOW {
            &mut self.mem.constant
        } else {
            &mut self.mem.global
        };
        heap.slice_mut(ptr, len)
            .map_err(|_| DeviceError::BadAddress {
                addr: ptr,
                len: data.len(),
            })?
            .copy_from_slice(data);
        Ok(())
    }

    pub fn copy_from(&self, ptr: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let len = u32::try_from(buf.len()).map_err(|_| DeviceError::BadAddress {
            addr: ptr,
            len: buf.len(),
        })?;
        let heap = if ptr >= crate::memory::CONST_WINDOW {
            &self.mem.constant
        } else {
            &self.mem.global
        };
        buf.copy_from_slice(heap.slice(ptr, len).map_err(|_| DeviceError::BadAddress {
            addr: ptr,
            len: buf.len(),
        })?);
        Ok(())
    }

    /// Loads a module: allocates its `.global`/`.const` variables (with initializers),
    /// lays out shared memory and decodes every function.
    /// Every reason [`Device::load_module`] would refuse `m`, not only the first: each
    /// instruction the executor cannot run, each undefined name, each declaration it
    /// does not support, with locations. Empty when the module loads. Uses a scratch
    /// device; nothing is loaded.
    pub fn check_module(m: &ptx::Module) -> Vec<LoadError> {
        let mut scratch = Device::new();
        match scratch.lay_out(m) {
            Ok((layout, _, _)) => Decoder::new(m, &layout).check(),
            Err(e) => vec![e],
        }
    }

    pub fn load_module(&mut self, m: &ptx::Module) -> Result<ModuleId, LoadError> {
        let (layout, vars, dyn_off) = self.lay_out(m)?;
        let mut program = Decoder::new(m, &layout).run()?;
        program.dyn_shared_offset = dyn_off as u32;
        program.globals = vars
            .iter()
            .filter(|(_, (s, _, _))| *s != ptx::Space::Shared)
            .map(|(k, (s, a, n))| (k.clone(), *a, *n, *s == ptx::Space::Const))
            .collect();
        program.globals.sort();
        if let Some(q) = &mut self.quiet {
            let pcs = q.spec.resolve(&program);
            std::sync::Arc::make_mut(q).pcs.push(pcs);
        }
        self.modules
            .push(std::sync::Arc::new(Loaded { program, vars }));
        Ok(ModuleId(self.modules.len() - 1))
    }

    /// Allocates and initialises a module's variables; returns the layout the decoder
    /// needs, the variables (space, address, size) and the dynamic shared offset.
    #[allow(clippy::type_complexity)]
    fn lay_out(
        &mut self,
        m: &ptx::Module,
    ) -> Result<(ModuleLayout, HashMap<String, (ptx::Space, u64, u64)>, u64), LoadError> {
        let mut vars: HashMap<String, (ptx::Space, u64, u64)> = HashMap::new();
        let mut shared_end: u64 = 0;
        let mut dynamic_shared: Vec<String> = Vec::new();
        let mut inits: Vec<(u64, bool, &ptx::VarDecl)> = Vec::new();
        // Module-level variables, then function-level `.shared` (demoted statics).
        let mut decls: Vec<&ptx::VarDecl> = m.variables().collect();
        for f in m.functions() {
            fn walk<'a>(s: &'a [ptx::Statement], out: &mut Vec<&'a ptx::VarDecl>) {
                for st in s {
                    match st {
                        ptx::Statement::Var(v)
                            if matches!(
                                v.space,
                                ptx::Space::Shared | ptx::Space::Global | ptx::Space::Const
                            ) =>
                        {
                            out.push(v)
                        }
                        ptx::Statement::Block(b) => walk(b, out),
                        _ => {}
                    }
                }
            }
            if let Some(b) = &f.body {
                walk(b, &mut decls);
            }
        }
        let loc = |v: &ptx::VarDecl| format!("PTX line {} (`{}`)", v.pos.line, v.name);
        let users = SharedUsers::of(m);
        let mut placed: Vec<(u64, u64, &[u32])> = Vec::new();
        let mut kernel_end: Vec<u64> = vec![0; users.kernels.len()];
        for v in decls {
            if vars.contains_key(&v.name) {
                continue;
            }
            let unsized_ = v.dims.iter().any(|d| d.is_none());
            let size = if unsized_ { Some(0) } else { var_size(v) };
            let Some(size) = size else {
                return Err(LoadError::Invalid {
                    message: "variable of unknown size".into(),
                    location: loc(v),
                });
            };
            match v.space {
                ptx::Space::Shared => {
                    if v.linkage == Some(ptx::Linkage::Extern) || unsized_ {
                        dynamic_shared.push(v.name.clone());
                        continue;
                    }
                    // The lowest offset where the variable overlaps no variable that a
                    // kernel using it uses too: kernels that share nothing may reuse each
                    // other's addresses, as a GPU gives each kernel only its own
                    // variables (a CUB module holds dozens of kernels, each with its own
                    // shared storage; summed, they exceed any CTA's shared memory).
                    let align = var_align(v);
                    let mine = users.of_var(&v.name);
                    let mut at = 0u64;
                    loop {
                        at = at.div_ceil(align) * align;
                        let clash = placed.iter().find(|(a, n, ks)| {
                            *a < at + size.max(1)
                                && at < a + (*n).max(1)
                                && ks.iter().any(|k| mine.contains(k))
                        });
                        match clash {
                            Some((a, n, _)) => at = a + (*n).max(1),
                            None => break,
                        }
                    }
                    vars.insert(v.name.clone(), (ptx::Space::Shared, at, size));
                    placed.push((at, size, mine));
                    for &k in mine {
                        let end = &mut kernel_end[k as usize];
                        *end = (*end).max(at + size);
                        if *end > MAX_SHARED {
                            return Err(LoadError::Invalid {
                                message: format!(
                                    "static shared memory of kernel `{}` exceeds {MAX_SHARED} bytes",
                                    users.kernels[k as usize]
                                ),
                                location: loc(v),
                            });
                        }
                    }
                    shared_end = shared_end.max(at + size);
                }
                ptx::Space::Global | ptx::Space::Const => {
                    if v.linkage == Some(ptx::Linkage::Extern) {
                        return Err(LoadError::Unsupported {
                            what: format!("external variable `{}`", v.name),
                            location: loc(v),
                        });
                    }
                    let heap = if v.space == ptx::Space::Const {
                        &mut self.mem.constant
                    } else {
                        &mut self.mem.global
                    };
                    // A `__managed__` variable starts a page of its own: the CUDA runtime
                    // maps the same host page at its address (one address on both sides).
                    let align = if v.managed { 4096 } else { var_align(v) };
                    let addr = heap.alloc(size, align, v.name.clone()).ok_or_else(|| {
                        LoadError::Invalid {
                            message: "variable too large".into(),
                            location: loc(v),
                        }
                    })?;
                    vars.insert(v.name.clone(), (v.space, addr, size));
                    if v.init.is_some() {
                        inits.push((addr, v.space == ptx::Space::Const, v));
                    }
                }
                _ => {}
            }
        }
        let dyn_off = shared_end.div_ceil(16) * 16;
        for name in dynamic_shared {
            vars.insert(name, (ptx::Space::Shared, dyn_off, 0));
        }
        // Initializers (after every variable has an address, for `generic(x)` and `x+4`).
        // A function's name is its address, as the decoder numbers functions (vtables of
        // C++ virtual functions, tables of device function pointers).
        let funcs: HashMap<&str, u64> = m
            .functions()
            .filter(|f| f.body.is_some())
            .enumerate()
            .map(|(i, f)| (f.name.as_str(), crate::program::FUNC_WINDOW + 16 * i as u64))
            .collect();
        for (addr, is_const, v) in inits {
            let elem = type_bytes(v.ty).unwrap_or(1) as usize;
            let mut bytes = Vec::new();
            if let Some(init) = &v.init {
                flatten_init(init, elem, &vars, &funcs, &mut bytes).map_err(|message| {
                    LoadError::Invalid {
                        message,
                        location: loc(v),
                    }
                })?;
            }
            let size = var_size(v).unwrap_or(0) as usize;
            bytes.truncate(size);
            let heap = if is_const {
                &mut self.mem.constant
            } else {
                &mut self.mem.global
            };
            if let Ok(dst) = heap.slice_mut(addr, bytes.len() as u32) {
                dst.copy_from_slice(&bytes);
            }
        }
        let layout = ModuleLayout {
            vars: vars
                .iter()
                .map(|(k, (s, a, _))| (k.clone(), (*s, *a)))
                .collect(),
            shared_end: shared_end as u32,
            kernel_shared: users
                .kernels
                .iter()
                .zip(&kernel_end)
                .map(|(k, e)| (k.clone(), *e as u32))
                .collect(),
        };
        Ok((layout, vars, dyn_off))
    }

    /// Address and size of a module `.global` or `.const` variable.
    pub fn global_by_name(&self, module: ModuleId, name: &str) -> Result<(u64, u64), DeviceError> {
        let m = self.modules.get(module.0).ok_or(DeviceError::BadModule)?;
        match m.vars.get(name) {
            Some((ptx::Space::Global | ptx::Space::Const, a, n)) => Ok((*a, *n)),
            _ => Err(DeviceError::NoSuchGlobal(name.to_string())),
        }
    }

    pub fn program(&self, module: ModuleId) -> Option<&Program> {
        self.modules.get(module.0).map(|m| &m.program)
    }

    /// What each instruction of a module does to memory ordering (see [`SiteOp`]).
    pub fn site_ops(&self, module: ModuleId) -> Option<Vec<(SiteId, SiteOp)>> {
        self.program(module).map(Program::site_ops)
    }

    pub fn site(&self, module: ModuleId, site: u32) -> Option<&SiteInfo> {
        self.program(module)?.sites.get(site as usize)
    }

    /// Launches with plain memory (`sc`) and a round-robin scheduler.
    pub fn launch(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: u32,
        args: &[Arg],
    ) -> Result<LaunchResult, DeviceError> {
        self.launch_with(
            module,
            kernel,
            grid,
            block,
            dynamic_shared,
            args,
            LaunchOptions::default(),
            &mut NoHooks,
            &mut RoundRobin::new(1),
        )
    }

    /// Launches with the given hooks and scheduler.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_with<H: Hooks, S: Scheduler>(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: u32,
        args: &[Arg],
        opts: LaunchOptions,
        hooks: &mut H,
        sched: &mut S,
    ) -> Result<LaunchResult, DeviceError> {
        self.launch_with_stop(
            module,
            kernel,
            grid,
            block,
            dynamic_shared,
            args,
            opts,
            Stop::default(),
            hooks,
            sched,
        )
    }

    /// [`Device::launch_with`] that can also be stopped by a deadline or a cancel flag.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_with_stop<H: Hooks, S: Scheduler>(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: u32,
        args: &[Arg],
        opts: LaunchOptions,
        stop: Stop<'_>,
        hooks: &mut H,
        sched: &mut S,
    ) -> Result<LaunchResult, DeviceError> {
        let m = self.modules.get(module.0).ok_or(DeviceError::BadModule)?;
        let prog = &m.program;
        let Some(fi) = prog
            .funcs
            .iter()
            .position(|f| f.name == kernel && f.is_kernel)
        else {
            let names: Vec<&str> = prog
                .funcs
                .iter()
                .filter(|f| f.is_kernel)
                .map(|f| f.name.as_str())
                .collect();
            return Err(DeviceError::NoSuchKernel(
                kernel.to_string(),
                names.join(", "),
            ));
        };
        let f = &prog.funcs[fi];
        if args.len() != f.params.len() {
            return Err(DeviceError::ArgCount {
                kernel: kernel.into(),
                expected: f.params.len(),
                given: args.len(),
            });
        }
        let mut params = vec![0u8; f.param_bytes as usize];
        for (i, (a, loc)) in args.iter().zip(&f.params).enumerate() {
            // Kernels have no `.reg` parameters (the decoder refuses them).
            let ParamLoc::Frame(off, size) = loc else {
                continue;
            };
            let b = a.bytes();
            if b.len() != *size as usize {
                return Err(DeviceError::ArgSize {
                    kernel: kernel.into(),
                    index: i,
                    expected: *size as usize,
                    given: b.len(),
                });
            }
            params[*off as usize..(*off + *size) as usize].copy_from_slice(&b);
        }
        let bad = |s: String| Err(DeviceError::LaunchConfig(s));
        if block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0
        {
            return bad(format!(
                "grid {grid} and block {block} must have no zero dimension"
            ));
        }
        if block.count() > 1024 || block.z > 64 {
            return bad(format!(
                "block {block} has more than 1024 threads or z > 64"
            ));
        }
        if grid.y > 65535 || grid.z > 65535 || grid.count() > u32::MAX as u64 {
            return bad(format!("grid {grid} exceeds the limits (y, z ≤ 65535)"));
        }
        if grid.count() * block.count() > MAX_THREADS {
            return Err(DeviceError::ThreadLimit {
                threads: grid.count() * block.count(),
                limit: MAX_THREADS,
            });
        }
        if prog.dyn_shared_offset as u64 + dynamic_shared as u64 > MAX_SHARED {
            return bad(format!(
                "{} bytes of shared memory exceed {MAX_SHARED}",
                prog.dyn_shared_offset as u64 + dynamic_shared as u64
            ));
        }
        let grid_workspace = if opts.cooperative {
            let ws = self
                .mem
                .global
                .alloc(
                    GRID_WORKSPACE_BYTES,
                    256,
                    "cooperative launch grid workspace".into(),
                )
                .ok_or(DeviceError::OutOfMemory(GRID_WORKSPACE_BYTES))?;
            let size = (GRID_WORKSPACE_BYTES as u32).to_le_bytes();
            if let Ok(s) = self.mem.global.slice_mut(ws, 4) {
                s.copy_from_slice(&size);
            }
            ws
        } else {
            0
        };
        let m = self.modules.get(module.0).ok_or(DeviceError::BadModule)?;
        let prog = &m.program;
        let spec = LaunchSpec {
            prog,
            grid_workspace,
            func: fi as u32,
            grid,
            block,
            dyn_shared: dynamic_shared,
            params,
            fuel: opts.fuel,
            reduce_unwritten: opts.reduce_unwritten,
            quick_stalls: opts.quick_stalls,
            cta_local: opts.cta_local,
            launch_index: self.launches,
            deadline: stop.deadline,
            cancel: stop.cancel,
            quiet_pc: self
                .quiet
                .as_ref()
                .and_then(|q| q.pcs.get(module.0))
                .map_or(&[][..], |p| &p[..]),
        };
        self.launches += 1;
        let machine = Machine::new(spec, &mut self.mem, hooks, sched);
        let result = machine.run();
        if grid_workspace != 0 {
            self.mem.global.free(grid_workspace);
        }
        Ok(result)
    }
}

/// Which kernels may use each `.shared` variable: those from which a function that names
/// it is reachable through calls. A function with an indirect call reaches every function
/// (conservatively: it may call any whose address was taken).
struct SharedUsers {
    kernels: Vec<String>,
    by_var: HashMap<String, Vec<u32>>,
}

impl SharedUsers {
    fn of(m: &ptx::Module) -> SharedUsers {
        use std::collections::HashSet;
        let funcs: Vec<&ptx::Function> = m.functions().filter(|f| f.body.is_some()).collect();
        let index: HashMap<&str, usize> = funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.as_str(), i))
            .collect();
        // Per function: the names it mentions, its callees, whether it calls indirectly.
        let mut names: Vec<HashSet<String>> = vec![HashSet::new(); funcs.len()];
        let mut calls: Vec<Vec<usize>> = vec![Vec::new(); funcs.len()];
        let mut indirect = vec![false; funcs.len()];
        fn operand_names(o: &ptx::Operand, out: &mut Vec<String>) {
            match o {
                ptx::Operand::Name(n) | ptx::Operand::SymOffset { name: n, .. } => {
                    out.push(n.clone())
                }
                ptx::Operand::Addr {
                    base: ptx::AddrBase::Name(n),
                    ..
                } => out.push(n.clone()),
                ptx::Operand::Vector(v) | ptx::Operand::List(v) => {
                    v.iter().for_each(|x| operand_names(x, out))
                }
                ptx::Operand::Pair(a, b) => {
                    operand_names(a, out);
                    operand_names(b, out);
                }
                ptx::Operand::Not(a) => operand_names(a, out),
                ptx::Operand::Select { name, .. } => out.push(name.clone()),
                _ => {}
            }
        }
        fn walk(s: &[ptx::Statement], out: &mut Vec<(bool, Vec<String>)>) {
            for st in s {
                match st {
                    ptx::Statement::Inst(i) => {
                        let mut n = Vec::new();
                        i.operands.iter().for_each(|o| operand_names(o, &mut n));
                        out.push((i.opcode == ptx::Opcode::Call, n));
                    }
                    ptx::Statement::Block(b) => walk(b, out),
                    _ => {}
                }
            }
        }
        for (i, f) in funcs.iter().enumerate() {
            let mut insts = Vec::new();
            walk(f.body.as_deref().unwrap_or(&[]), &mut insts);
            for (is_call, ns) in insts {
                let mut direct = false;
                for n in ns {
                    if let Some(&j) = index.get(n.as_str()) {
                        calls[i].push(j);
                        direct = true;
                    }
                    names[i].insert(n);
                }
                indirect[i] |= is_call && !direct;
            }
        }
        let mut kernels = Vec::new();
        let mut by_var: HashMap<String, Vec<u32>> = HashMap::new();
        for (ki, k) in funcs.iter().enumerate().filter(|(_, f)| f.is_kernel()) {
            let kid = kernels.len() as u32;
            kernels.push(k.name.clone());
            let mut seen = vec![false; funcs.len()];
            let mut stack = vec![ki];
            seen[ki] = true;
            while let Some(f) = stack.pop() {
                if indirect[f] {
                    seen.iter_mut().for_each(|s| *s = true);
                    break;
                }
                for &c in &calls[f] {
                    if !std::mem::replace(&mut seen[c], true) {
                        stack.push(c);
                    }
                }
            }
            // Function-scope `.shared` declarations are used by their function.
            for (fi, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
                let mut decl = Vec::new();
                fn decls(s: &[ptx::Statement], out: &mut Vec<String>) {
                    for st in s {
                        match st {
                            ptx::Statement::Var(v) => out.push(v.name.clone()),
                            ptx::Statement::Block(b) => decls(b, out),
                            _ => {}
                        }
                    }
                }
                decls(funcs[fi].body.as_deref().unwrap_or(&[]), &mut decl);
                for n in names[fi].iter().chain(&decl) {
                    let ks = by_var.entry(n.clone()).or_default();
                    if ks.last() != Some(&kid) {
                        ks.push(kid);
                    }
                }
            }
        }
        SharedUsers { kernels, by_var }
    }

    /// The kernels (indices into `kernels`) that may use variable `name`.
    fn of_var(&self, name: &str) -> &[u32] {
        self.by_var.get(name).map_or(&[], |v| v.as_slice())
    }
}

fn flatten_init(
    init: &ptx::Init,
    elem: usize,
    vars: &HashMap<String, (ptx::Space, u64, u64)>,
    funcs: &HashMap<&str, u64>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match init {
        ptx::Init::List(v) => {
            for x in v {
                flatten_init(x, elem, vars, funcs, out)?;
            }
        }
        ptx::Init::Scalar(s) => {
            let v: u64 = match s {
                ptx::InitValue::Int(i) => *i as u64,
                ptx::InitValue::F32(b) => {
                    if elem == 8 {
                        (f32::from_bits(*b) as f64).to_bits()
                    } else {
                        *b as u64
                    }
                }
                ptx::InitValue::F64(b) => {
                    if elem == 4 {
                        (f64::from_bits(*b) as f32).to_bits() as u64
                    } else {
                        *b
                    }
                }
                ptx::InitValue::Addr {
                    name,
                    generic,
                    offset,
                } => match vars.get(name) {
                    Some((sp, a, _)) => {
                        let base = match (sp, generic) {
                            (ptx::Space::Shared, true) => a + crate::memory::SHARED_WINDOW,
                            _ => *a,
                        };
                        base.wrapping_add(*offset as u64)
                    }
                    None => match funcs.get(name.as_str()) {
                        Some(f) => f.wrapping_add(*offset as u64),
                        None => return Err(format!("initializer refers to unknown `{name}`")),
                    },
                },
            };
            out.extend_from_slice(&v.to_le_bytes()[..elem.min(8)]);
        }
    }
    Ok(())
}
