//! The runtime's state and every operation on it, in safe Rust: modules registered from
//! fat binaries, kernels and device variables by their host addresses, device memory on
//! the vgpu, launches under the configured write-buffer model, sticky errors, streams and
//! events. The C entry points (`api`) only convert pointers and call in here.
//!
//! Semantics kept from CUDA (CUDA C++ Programming Guide, "Error Checking" and "Streams"):
//! * a launch returns at once; a fault in the kernel surfaces at the next synchronising
//!   call and in `cudaGetLastError`, and is *sticky*: every later call returns it;
//! * work runs synchronously, in program order, whatever stream it names (a legal
//!   schedule of any stream program: streams allow concurrency, they do not require it);
//! * a deadlocked or hung kernel never returns on a GPU: here the process ends with
//!   [`HANG_EXIT_STATUS`] after the hang dump.

use crate::errors::{self, CudaError};
use crate::fatbin;
use fencehound_cudart_protocol::{
    LaunchOutcome as Outcome, LaunchRecord, Record, RuntimeConfig, StoreSite, HANG_EXIT_STATUS,
};
use fencehound_handlers::{BufferConfig, Level, Model, TraceEvent, WriteBuffers};
use fencehound_vgpu::{
    Arg, Device, Dim3, FaultKind, LaunchOptions, LaunchOutcome, ModuleId, Observed, SchedulerKind,
    SiteInfo, Stop,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::time::{Duration, Instant};

/// What the vgpu reports as its compute capability (its PTX front end runs sm_70..sm_100
/// PTX; 8.0 is what nvcc's default `compute_75`/`compute_80` builds expect to find).
pub const CC_MAJOR: i32 = 8;
pub const CC_MINOR: i32 = 0;
/// Device memory the vgpu reports (it allocates on demand; this only answers
/// `cudaMemGetInfo` and `totalGlobalMem`).
pub const TOTAL_MEM: u64 = 16 << 30;
/// Maximum resident threads and blocks per multiprocessor reported (sm_80's).
pub const THREADS_PER_SM: i32 = 2048;
pub const BLOCKS_PER_SM: i32 = 32;
/// Default shared memory per block (larger needs the opt-in attribute on a GPU).
pub const SHARED_PER_BLOCK: u64 = 48 * 1024;

/// A kernel launch configuration pushed by `<<<...>>>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: usize,
    pub stream: usize,
}

/// A registered fat binary.
#[derive(Debug)]
struct Module {
    source: String,
    arch: u32,
    sha256: String,
    ptx: Option<String>,
    overridden: bool,
    /// The vgpu module, or why it cannot run.
    loaded: Result<ModuleId, (CudaError, String)>,
    kernels: Vec<String>,
    recorded: bool,
}

#[derive(Debug, Clone)]
struct Kernel {
    module: usize,
    name: String,
}

#[derive(Debug, Clone)]
struct Var {
    module: usize,
    name: String,
}

#[derive(Debug, Clone, Copy, Default)]
struct Event {
    at: Option<Instant>,
}

/// The runtime of one process.
pub struct Runtime {
    pub cfg: RuntimeConfig,
    model: Model,
    scheduler: SchedulerKind,
    dev: Device,
    modules: Vec<Module>,
    kernels: HashMap<usize, Kernel>,
    vars: HashMap<usize, Var>,
    /// Live `cudaMalloc` allocations: base → size.
    allocs: BTreeMap<u64, u64>,
    /// Live `cudaMallocHost` blocks: address → size.
    pub host_allocs: HashMap<usize, usize>,
    configs: Vec<CallConfig>,
    sticky: Option<CudaError>,
    side: Option<std::fs::File>,
    /// The event log (`FENCEHOUND_EVENTS`) of the launches of one module.
    event_log: Option<EventLog>,
    streams: HashMap<usize, u32>,
    events: HashMap<usize, Event>,
    next_handle: usize,
    reported: std::collections::HashSet<String>,
    pub device_flags: u32,
    pub limits: HashMap<i32, usize>,
    /// Per kernel (host stub address): the dynamic shared memory it opted in to with
    /// `cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, n)`; without
    /// one a launch may use 48 KB less the kernel's static shared memory, as on a GPU.
    pub max_dynamic_shared: HashMap<usize, u32>,
    /// Managed allocations (`cudaMallocManaged`): base → size. See [`Runtime::malloc_managed`].
    managed: BTreeMap<u64, u64>,
    /// Mapped host allocations (`cudaHostAlloc` with `cudaHostAllocMapped`): bases of
    /// managed allocations that `cudaFreeHost` frees ([`Runtime::host_alloc_mapped`]).
    pub mapped_host: std::collections::BTreeSet<u64>,
    /// CUDA arrays (`cudaMallocArray`), by handle (the base of the device allocation
    /// holding their elements).
    pub arrays: HashMap<u64, crate::api::texture_api::ArrayInfo>,
    /// CUDA graphs and stream captures.
    pub graphs: crate::graph::Graphs,
    /// Memory pools made by `cudaMemPoolCreate`, and the default pool's attributes
    /// (under its handle once set).
    pub pools: HashMap<usize, PoolState>,
    /// The pool `cudaDeviceSetMemPool` made current (`None`: the default pool).
    pub current_pool: Option<usize>,
}

/// Attributes of a memory pool as the program set them.
#[derive(Debug, Clone)]
pub struct PoolState {
    /// `cudaMemPoolReuseFollowEventDependencies`, `…AllowOpportunistic`,
    /// `…AllowInternalDependencies`.
    pub flags: [i32; 3],
    pub release_threshold: u64,
}

impl Default for PoolState {
    /// CUDA's defaults: every reuse policy on, release threshold 0.
    fn default() -> PoolState {
        PoolState {
            flags: [1; 3],
            release_threshold: 0,
        }
    }
}

type EventLog = fencehound_cudart_protocol::events::Writer<std::io::BufWriter<std::fs::File>>;

fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// `_Z5scaleILi256EEvPff` → `scale<256>`, the kernel as written at its launch; names that
/// do not demangle (`extern "C"` kernels) stay as they are.
pub fn demangle(name: &str) -> String {
    let opts = cpp_demangle::DemangleOptions::default()
        .no_params()
        .no_return_type();
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&opts).ok())
        .unwrap_or_else(|| name.to_string())
}

/// Writes device `printf` output where the program's own `printf` goes (C `stdout`), so
/// the two interleave in program order as they would on a GPU (whose runtime prints at
/// synchronisation points).
fn write_c_stdout(text: &str) {
    if text.is_empty() {
        return;
    }
    extern "C" {
        static mut stdout: *mut libc::FILE;
    }
    // SAFETY: `stdout` is glibc's standard output stream, valid for the process lifetime;
    // fwrite reads exactly `len` bytes of `text`.
    unsafe {
        let out = stdout;
        if !out.is_null() {
            libc::fwrite(text.as_ptr().cast(), 1, text.len(), out);
        }
    }
}

fn flush_c_stdio() {
    // SAFETY: fflush(NULL) flushes every open output stream; always valid.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

impl Runtime {
    pub fn new(cfg: RuntimeConfig) -> Result<Runtime, String> {
        let model = Model::parse(&cfg.model)
            .ok_or_else(|| format!("FENCEHOUND_MODEL={}: unknown model", cfg.model))?;
        let scheduler = SchedulerKind::parse(&cfg.scheduler).ok_or_else(|| {
            format!(
                "FENCEHOUND_SCHEDULER={}: unknown scheduler (random, pct[:depth], rr[:quantum])",
                cfg.scheduler
            )
        })?;
        let side = match &cfg.side_channel {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| format!("cannot open the side channel {}: {e}", p.display()))?,
            ),
            None => None,
        };
        let event_log = match &cfg.events {
            Some(p) => Some(fencehound_cudart_protocol::events::Writer::new(
                std::io::BufWriter::new(
                    std::fs::File::create(p)
                        .map_err(|e| format!("cannot create the event log {}: {e}", p.display()))?,
                ),
            )),
            None => None,
        };
        let mut rt = Runtime {
            cfg,
            model,
            scheduler,
            dev: Device::new(),
            modules: Vec::new(),
            kernels: HashMap::new(),
            vars: HashMap::new(),
            allocs: BTreeMap::new(),
            host_allocs: HashMap::new(),
            configs: Vec::new(),
            sticky: None,
            side,
            event_log,
            streams: HashMap::new(),
            events: HashMap::new(),
            next_handle: 0x1000,
            reported: Default::default(),
            device_flags: 0,
            limits: HashMap::new(),
            max_dynamic_shared: HashMap::new(),
            managed: BTreeMap::new(),
            mapped_host: Default::default(),
            arrays: HashMap::new(),
            graphs: Default::default(),
            pools: HashMap::new(),
            current_pool: None,
        };
        rt.record(&Record::Start {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            model: rt.cfg.model.clone(),
            p: rt.cfg.p,
            seed: rt.cfg.seed,
            scheduler: rt.cfg.scheduler.clone(),
        });
        Ok(rt)
    }

    /// Appends one record to the side channel (a whole line per write, so a killed
    /// process leaves whole records).
    fn record(&mut self, r: &Record) {
        if let Some(f) = &mut self.side {
            if let Ok(mut line) = serde_json::to_string(r) {
                line.push('\n');
                let _ = f.write_all(line.as_bytes());
            }
        }
    }

    /// A message for the user on stderr, unless quiet.
    pub fn say(&self, msg: &str) {
        if !self.cfg.quiet {
            eprintln!("fencehound: {msg}");
        }
    }

    /// Reports an entry point the runtime does not implement (once per name).
    pub fn unimplemented(&mut self, name: &str) {
        if self.reported.insert(name.to_string()) {
            self.say(&format!(
                "the program called {name}, which fencehound's CUDA runtime does not implement; it returns cudaErrorNotSupported"
            ));
            self.record(&Record::Unimplemented { name: name.into() });
        }
    }

    /// A problem outside any launch, reported once per message.
    pub fn problem(&mut self, message: String) {
        if self.reported.insert(message.clone()) {
            self.say(&message);
            self.record(&Record::Error { message });
        }
    }

    pub fn sticky(&self) -> Option<CudaError> {
        self.sticky
    }

    pub fn handle(&mut self) -> usize {
        self.next_handle += 16;
        self.next_handle
    }

    // ---- registration -------------------------------------------------------------

    /// Registers a fat binary; returns the module index.
    pub fn register_fatbin(
        &mut self,
        contents: Result<fatbin::Contents, fatbin::FatbinError>,
    ) -> usize {
        let index = self.modules.len();
        let mut m = Module {
            source: String::new(),
            arch: 0,
            sha256: String::new(),
            ptx: None,
            overridden: false,
            loaded: Err((errors::NO_KERNEL_IMAGE_FOR_DEVICE, String::new())),
            kernels: Vec::new(),
            recorded: false,
        };
        match contents {
            Err(e) => {
                m.loaded = Err((
                    errors::INVALID_KERNEL_IMAGE,
                    format!("cannot read the program's fat binary #{index}: {e}"),
                ))
            }
            Ok(c) => match c.best_ptx() {
                None => {
                    let msg = if c.cubins.is_empty() {
                        format!("fat binary #{index} holds no PTX")
                    } else {
                        format!(
                            "fat binary #{index} holds only machine code (sm_{}) and no PTX; build with `fencehound nvcc` or add `-gencode arch=compute_80,code=compute_80`",
                            c.cubins.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", sm_")
                        )
                    };
                    m.loaded = Err((errors::NO_KERNEL_IMAGE_FOR_DEVICE, msg));
                }
                Some(e) => {
                    m.source = e.name.clone();
                    m.arch = e.arch;
                    m.sha256 = sha256_hex(e.text.as_bytes());
                    let mut text = e.text.clone();
                    if let Some(dir) = &self.cfg.ptx_override {
                        let p = dir.join(format!("{}.ptx", m.sha256));
                        if let Ok(t) = std::fs::read_to_string(&p) {
                            text = t;
                            m.overridden = true;
                        }
                    }
                    m.loaded = self.load_ptx(index, &m.source, &text);
                    if self.cfg.record_ptx {
                        m.ptx = Some(e.text.clone());
                    }
                }
            },
        }
        self.modules.push(m);
        index
    }

    fn load_ptx(
        &mut self,
        index: usize,
        source: &str,
        text: &str,
    ) -> Result<ModuleId, (CudaError, String)> {
        let name = if source.is_empty() {
            format!("module{index}.ptx")
        } else {
            format!("{source}.ptx")
        };
        let module = fencehound_ptx::parse(&name, text).map_err(|e| {
            (
                errors::INVALID_PTX,
                format!("the PTX of {name} does not parse: {e}"),
            )
        })?;
        self.dev.load_module(&module).map_err(|e| {
            (
                errors::INVALID_PTX,
                format!("the virtual GPU cannot run {name}: {e}"),
            )
        })
    }

    /// Records the module in the side channel once its kernels are registered.
    pub fn finish_fatbin(&mut self, index: usize) {
        let Some(m) = self.modules.get_mut(index) else {
            return;
        };
        if m.recorded {
            return;
        }
        m.recorded = true;
        let r = Record::Module {
            index,
            source: m.source.clone(),
            arch: format!("sm_{}", m.arch),
            ptx_sha256: m.sha256.clone(),
            ptx: m.ptx.take(),
            overridden: m.overridden,
            kernels: m.kernels.clone(),
            error: m.loaded.as_ref().err().map(|(_, s)| s.clone()),
        };
        self.record(&r);
    }

    pub fn register_function(&mut self, module: usize, host: usize, name: &str) {
        if let Some(m) = self.modules.get_mut(module) {
            if !m.kernels.iter().any(|k| k == name) {
                m.kernels.push(name.to_string());
            }
        }
        self.kernels.insert(
            host,
            Kernel {
                module,
                name: name.to_string(),
            },
        );
    }

    pub fn register_var(&mut self, module: usize, host: usize, name: &str) {
        self.vars.insert(
            host,
            Var {
                module,
                name: name.to_string(),
            },
        );
    }

    /// The kernel's name as written in the source (demangled).
    pub fn kernel_name(&self, host: usize) -> Option<String> {
        self.kernels.get(&host).map(|k| demangle(&k.name))
    }

    pub fn is_kernel(&self, host: usize) -> bool {
        self.kernels.contains_key(&host)
    }

    /// The most dynamic shared memory a launch of kernel `host`, whose static shared
    /// memory is `static_shared` bytes, may ask for: its opt-in, or 48 KB less the static.
    pub fn dynamic_shared_limit(&self, host: usize, static_shared: u64) -> u64 {
        self.max_dynamic_shared
            .get(&host)
            .map_or(SHARED_PER_BLOCK.saturating_sub(static_shared), |&n| {
                u64::from(n)
            })
    }

    // ---- memory ---------------------------------------------------------------------

    pub fn malloc(&mut self, size: u64) -> Result<u64, CudaError> {
        if size == 0 {
            return Ok(0);
        }
        let name = format!("cudaMalloc #{} ({size} bytes)", self.allocs.len());
        match self.dev.alloc_named(size, name) {
            Ok(p) => {
                self.allocs.insert(p, size);
                Ok(p)
            }
            Err(_) => Err(errors::MEMORY_ALLOCATION),
        }
    }

    pub fn free(&mut self, ptr: u64) -> Result<(), CudaError> {
        if ptr == 0 {
            return Ok(());
        }
        if self.allocs.remove(&ptr).is_none() {
            self.say(&format!(
                "cudaFree({ptr:#x}): not the start of a live cudaMalloc allocation"
            ));
            return Err(errors::INVALID_VALUE);
        }
        // Later accesses then fault as use-after-free instead of reading stale data.
        let _ = self.dev.free(ptr);
        if let Some(n) = self.managed.remove(&ptr) {
            unmap_host_pages(ptr, n);
        }
        Ok(())
    }

    /// `cudaMallocManaged`: one address for host and device, as CUDA's unified memory
    /// gives. The vgpu allocates the range, page-aligned; the same addresses in the host
    /// process (inside the reservation `api::reserve_device_addresses` made, where nothing
    /// else can be) become readable and writable pages. The two copies are kept coherent
    /// at the only points where CUDA lets either side see the other's writes, given that
    /// this runtime runs every operation to completion before returning: the host's view
    /// is copied into the vgpu before every device operation (launch, copy, set) and the
    /// vgpu's back after it ([`Runtime::managed_to_device`], [`Runtime::managed_to_host`]).
    /// So a kernel reads what the host wrote before the launch, and the host reads the
    /// kernel's results after it returns — the behaviour of a program that synchronizes
    /// before touching managed memory, which CUDA requires of it on devices without
    /// concurrent managed access.
    pub fn malloc_managed(&mut self, size: u64) -> Result<u64, CudaError> {
        if size == 0 {
            return Err(errors::INVALID_VALUE);
        }
        self.shared_alloc("cudaMallocManaged", size)
    }

    /// `cudaHostAlloc` with `cudaHostAllocMapped` (zero-copy memory): host memory the
    /// device reads and writes through the pointer `cudaHostGetDevicePointer` gives. With
    /// unified addressing that pointer is the host's, so the block is made exactly as a
    /// managed allocation ([`Runtime::malloc_managed`]): one address for both sides, the
    /// copies coherent around every device operation — what a program sees that reads a
    /// kernel's zero-copy results after synchronizing (this runtime runs every operation
    /// to completion before returning, so a host polling the block *during* a kernel is
    /// the one use it cannot give). Freed by `cudaFreeHost`.
    pub fn host_alloc_mapped(&mut self, size: u64) -> Result<u64, CudaError> {
        let p = self.shared_alloc("cudaHostAlloc (mapped)", size.max(1))?;
        self.mapped_host.insert(p);
        Ok(p)
    }

    /// A vgpu allocation of `size` bytes whose pages are shared with the host
    /// ([`Runtime::share_with_host`]).
    fn shared_alloc(&mut self, what: &str, size: u64) -> Result<u64, CudaError> {
        let name = format!("{what} #{} ({size} bytes)", self.allocs.len());
        let Ok(p) = self.dev.alloc_aligned(size, PAGE, name) else {
            return Err(errors::MEMORY_ALLOCATION);
        };
        if !self.share_with_host(what, p, size) {
            let _ = self.dev.free(p);
            return Err(errors::MEMORY_ALLOCATION);
        }
        self.allocs.insert(p, size);
        Ok(p)
    }

    /// Makes the vgpu's `[p, p + size)` managed: the same host pages mapped, holding what
    /// the vgpu holds, and kept coherent from now on. False (with a problem reported for
    /// `what`) when the pages cannot be mapped.
    fn share_with_host(&mut self, what: &str, p: u64, size: u64) -> bool {
        if !map_host_pages(p, size.max(1)) {
            self.problem(format!(
                "{what}: the host pages at {p:#x} ({size} bytes) could not be mapped \
                 (the device address range is not reserved in this process)"
            ));
            return false;
        }
        self.managed.insert(p, size);
        // SAFETY: just mapped, `size` writable bytes at `p`.
        let host_view = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, size as usize) };
        let _ = self.dev.copy_from(p, host_view);
        true
    }

    /// A `__managed__` variable: the vgpu placed it at the start of a page of its own
    /// (`.attribute(.managed)`); that page is mapped on the host and made coherent like a
    /// `cudaMallocManaged` allocation, holding the variable's initial value. Returns its
    /// address (the host's pointer to it), or `None` (with a problem reported) when the
    /// module did not load or the page cannot be mapped.
    pub fn register_managed_var(&mut self, module: usize, host: usize, name: &str) -> Option<u64> {
        self.register_var(module, host, name);
        let id = self.module_id(module).ok()?;
        let Ok((p, size)) = self.dev.global_by_name(id, name) else {
            self.problem(format!(
                "__managed__ variable `{name}`: not in the module's PTX"
            ));
            return None;
        };
        self.share_with_host(&format!("__managed__ variable `{name}`"), p, size)
            .then_some(p)
    }

    /// Whether `ptr` lies in a mapped host allocation ([`Runtime::host_alloc_mapped`]).
    pub fn is_mapped_host(&self, ptr: u64) -> bool {
        self.mapped_host
            .range(..=ptr)
            .next_back()
            .is_some_and(|&b| {
                self.is_managed(ptr) && self.device_range(b) == self.device_range(ptr)
            })
    }

    /// Whether `ptr` lies in a block from `cudaMallocHost` (or `cudaHostAlloc` without
    /// `cudaHostAllocMapped`).
    pub fn is_pinned_host(&self, ptr: u64) -> bool {
        self.host_allocs
            .iter()
            .any(|(&b, &n)| (b..b + n.max(1)).contains(&(ptr as usize)))
    }

    /// Whether `ptr` lies in a managed allocation.
    pub fn is_managed(&self, ptr: u64) -> bool {
        self.managed
            .range(..=ptr)
            .next_back()
            .is_some_and(|(b, n)| ptr < b + n)
    }

    /// Copies the host's view of every managed allocation into the vgpu.
    pub fn managed_to_device(&mut self) {
        for (&b, &n) in &self.managed {
            // SAFETY: `malloc_managed` mapped `n` readable bytes at `b` in this process;
            // they stay mapped until `free` removes the entry.
            let host = unsafe { std::slice::from_raw_parts(b as *const u8, n as usize) };
            let _ = self.dev.copy_to(b, host);
        }
    }

    /// Copies the vgpu's view of every managed allocation to the host.
    pub fn managed_to_host(&mut self) {
        for (&b, &n) in &self.managed {
            // SAFETY: as in `managed_to_device`, and writable.
            let host = unsafe { std::slice::from_raw_parts_mut(b as *mut u8, n as usize) };
            let _ = self.dev.copy_from(b, host);
        }
    }

    /// The vgpu's texture objects.
    pub fn textures(&mut self) -> &mut fencehound_vgpu::texture::Textures {
        self.dev.textures_mut()
    }

    pub fn bytes_allocated(&self) -> u64 {
        self.allocs.values().sum()
    }

    /// The live device allocation holding `ptr`: (base, size).
    pub fn device_range(&self, ptr: u64) -> Option<(u64, u64)> {
        let all = self.dev.memory().global.allocations();
        let i = all.partition_point(|a| a.base <= ptr);
        let a = all.get(i.checked_sub(1)?)?;
        (ptr < a.base + a.data.len() as u64).then_some((a.base, a.data.len() as u64))
    }

    fn bad_range(&self, what: &str, ptr: u64, len: usize) -> CudaError {
        self.say(&format!(
            "{what}: device range {ptr:#x}..{:#x} ({len} bytes) is not inside an allocation",
            ptr.wrapping_add(len as u64)
        ));
        errors::INVALID_VALUE
    }

    pub fn write_device(&mut self, what: &str, ptr: u64, data: &[u8]) -> Result<(), CudaError> {
        if data.is_empty() {
            return Ok(());
        }
        self.dev
            .copy_to(ptr, data)
            .map_err(|_| self.bad_range(what, ptr, data.len()))
    }

    pub fn read_device(&self, what: &str, ptr: u64, buf: &mut [u8]) -> Result<(), CudaError> {
        if buf.is_empty() {
            return Ok(());
        }
        self.dev
            .copy_from(ptr, buf)
            .map_err(|_| self.bad_range(what, ptr, buf.len()))
    }

    /// Address and size of a registered `__device__`/`__constant__` variable.
    pub fn symbol(&mut self, host: usize) -> Result<(u64, u64), CudaError> {
        let Some(v) = self.vars.get(&host).cloned() else {
            return Err(errors::INVALID_SYMBOL);
        };
        let id = self.module_id(v.module)?;
        self.dev
            .global_by_name(id, &v.name)
            .map_err(|_| errors::INVALID_SYMBOL)
    }

    fn module_id(&mut self, module: usize) -> Result<ModuleId, CudaError> {
        match self.modules.get(module).map(|m| m.loaded.clone()) {
            Some(Ok(id)) => Ok(id),
            Some(Err((code, msg))) => {
                self.problem(msg);
                Err(code)
            }
            None => Err(errors::INVALID_RESOURCE_HANDLE),
        }
    }

    // ---- launches -------------------------------------------------------------------

    pub fn push_config(&mut self, c: CallConfig) {
        self.configs.push(c);
    }

    pub fn pop_config(&mut self) -> Option<CallConfig> {
        self.configs.pop()
    }

    /// Parameter sizes of a kernel (by its host stub address), for reading its arguments.
    pub fn kernel_params(&mut self, host: usize) -> Result<Vec<u32>, CudaError> {
        let Some(k) = self.kernels.get(&host).cloned() else {
            self.say(&format!(
                "launch of {host:#x}: not a kernel registered by the program"
            ));
            return Err(errors::INVALID_DEVICE_FUNCTION);
        };
        let id = self.module_id(k.module)?;
        let f = self
            .dev
            .program(id)
            .and_then(|p| p.funcs.iter().find(|f| f.is_kernel && f.name == k.name));
        match f {
            // Kernels have only `.param` parameters (the decoder refuses `.reg` ones).
            Some(f) => Ok(f
                .params
                .iter()
                .map(|p| match p {
                    fencehound_vgpu::program::ParamLoc::Frame(_, s) => *s,
                    fencehound_vgpu::program::ParamLoc::Reg(_) => 0,
                })
                .collect()),
            None => {
                self.problem(format!(
                    "kernel `{}` is registered but not in its module's PTX",
                    demangle(&k.name)
                ));
                Err(errors::INVALID_DEVICE_FUNCTION)
            }
        }
    }

    /// Attributes of a kernel: (static shared bytes, const bytes, local bytes per
    /// thread, registers, PTX version). The "PTX version" of `cudaFuncAttributes` is the
    /// virtual architecture the PTX was compiled for (`compute_75` → 75), not the PTX ISA
    /// `.version`: CUB's `PtxVersion` multiplies it by 10 and picks its tuning policy and
    /// kernel by it, and a `.version 9.0` read as "sm_90" made every `cub::Device*` call
    /// fail with `cudaErrorInvalidDeviceFunction` (issue 22).
    pub fn kernel_attributes(
        &mut self,
        host: usize,
    ) -> Result<(u64, u64, u64, i32, i32), CudaError> {
        let k = self
            .kernels
            .get(&host)
            .cloned()
            .ok_or(errors::INVALID_DEVICE_FUNCTION)?;
        let id = self.module_id(k.module)?;
        let version = self.modules[k.module].arch as i32;
        let p = self
            .dev
            .program(id)
            .ok_or(errors::INVALID_DEVICE_FUNCTION)?;
        let f = p
            .funcs
            .iter()
            .find(|f| f.is_kernel && f.name == k.name)
            .ok_or(errors::INVALID_DEVICE_FUNCTION)?;
        let consts: u64 = p.globals.iter().filter(|g| g.3).map(|g| g.2).sum();
        Ok((
            f.shared_bytes as u64,
            consts,
            f.frame_size as u64,
            f.declared_regs.min(255) as i32,
            version,
        ))
    }

    /// Runs a kernel. `read_arg(i, size)` returns the bytes of argument `i`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        host: usize,
        grid: Dim3,
        block: Dim3,
        shared: usize,
        cooperative: bool,
        read_arg: &dyn Fn(usize, usize) -> Vec<u8>,
    ) -> CudaError {
        if let Some(e) = self.sticky {
            return e;
        }
        let sizes = match self.kernel_params(host) {
            Ok(s) => s,
            Err(e) => return e,
        };
        let Some(k) = self.kernels.get(&host).cloned() else {
            return errors::INVALID_DEVICE_FUNCTION;
        };
        let id = match self.module_id(k.module) {
            Ok(id) => id,
            Err(e) => return e,
        };
        let args: Vec<Arg> = sizes
            .iter()
            .enumerate()
            .map(|(i, s)| Arg::Bytes(read_arg(i, *s as usize)))
            .collect();
        let index = self.dev.launch_count();
        let name = demangle(&k.name);
        let mut rec = LaunchRecord {
            index,
            module: k.module,
            kernel: k.name.clone(),
            name: name.clone(),
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
            dynamic_shared: shared as u32,
            outcome: Outcome::Completed,
            message: String::new(),
            cuda_error: "cudaSuccess".into(),
            buffered: false,
            lane_instructions: 0,
            steps: 0,
            unwritten_loads: 0,
            unwritten_escapes: 0,
            wall_ms: 0,
            stats: Default::default(),
            store_sites: Vec::new(),
            trace: Vec::new(),
            races: Vec::new(),
        };
        let refuse = |rt: &mut Runtime, mut rec: LaunchRecord, code: CudaError, msg: String| {
            rt.say(&format!("launch of `{name}` refused: {msg}"));
            rec.outcome = Outcome::Refused;
            rec.message = msg;
            rec.cuda_error = errors::name(code).unwrap_or("?").into();
            rt.record(&Record::Launch(Box::new(rec)));
            code
        };
        if cooperative {
            let per_sm = self.max_active_blocks(host, block.count() as i32, shared);
            let most = per_sm as u64 * fencehound_vgpu::exec::NUM_SMS as u64;
            if grid.count() > most {
                let msg = format!(
                    "a cooperative launch of {} blocks exceeds the {most} that can be resident at once",
                    grid.count()
                );
                return refuse(self, rec, errors::COOPERATIVE_LAUNCH_TOO_LARGE, msg);
            }
        }
        // A GPU refuses more dynamic shared memory than the kernel's limit: 48 KB less its
        // static shared memory, unless the program raised it with cudaFuncSetAttribute.
        // (The vgpu itself would run it, up to its MAX_SHARED: a program that forgot the
        // opt-in must fail here as it would on hardware.)
        let static_shared = self.kernel_attributes(host).map_or(0, |a| a.0);
        let allowed = self.dynamic_shared_limit(host, static_shared);
        if shared as u64 > allowed {
            let msg = format!(
                "{shared} bytes of dynamic shared memory exceed the kernel's limit of {allowed} \
                 (above 48 KB per block a kernel must opt in first: \
                 cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes))"
            );
            return refuse(self, rec, errors::INVALID_VALUE, msg);
        }
        let shared_u32 = match u32::try_from(shared) {
            Ok(s) => s,
            Err(_) => {
                return refuse(
                    self,
                    rec,
                    errors::INVALID_VALUE,
                    format!("{shared} bytes of dynamic shared memory"),
                )
            }
        };
        let mut cfg = BufferConfig::new(self.model, self.cfg.p, self.cfg.seed);
        cfg.trace = self.cfg.trace;
        cfg.buffer_global = self.cfg.buffer_global;
        cfg.buffer_shared = self.cfg.buffer_shared;
        cfg.kernels = self
            .cfg
            .kernels
            .as_ref()
            .map(|k| k.iter().cloned().collect());
        cfg.sites = self.cfg.sites.as_ref().map(|s| {
            // Site ids are per module: another module's launches buffer nothing.
            let here = self
                .cfg
                .sites_module
                .as_ref()
                .is_none_or(|m| *m == self.modules[k.module].sha256);
            if here {
                s.iter().copied().collect()
            } else {
                Default::default()
            }
        });
        rec.buffered = self.model != Model::Sc
            && self.cfg.p > 0.0
            && cfg.kernels.as_ref().is_none_or(|ks| ks.contains(&k.name));
        // Each launch draws its schedule from (seed, launch index), so a program that
        // launches the same kernels in the same order replays exactly.
        let mut sched = self.scheduler.build(fencehound_handlers::select::mix(
            self.cfg.seed ^ fencehound_handlers::select::mix(index as u64 + 1),
        ));
        let opts = LaunchOptions {
            fuel: self.cfg.fuel,
            cooperative,
            reduce_unwritten: true,
            quick_stalls: true,
            cta_local: true,
        };
        let start = Instant::now();
        let stop = Stop {
            deadline: Some(start + Duration::from_millis(self.cfg.wall_ms)),
            cancel: None,
        };
        let wb = WriteBuffers::new(cfg);
        // The event log sees the launches of its module only (site ids are per module).
        let logged = self
            .cfg
            .events_module
            .as_ref()
            .is_none_or(|m| *m == self.modules[k.module].sha256);
        let mut log = if logged { self.event_log.take() } else { None };
        let run = if self.cfg.race {
            let mut rc = fencehound_racecheck::RaceCheck::for_module(wb, &self.dev, id);
            let r = match log.as_mut() {
                Some(obs) => {
                    let mut h = Observed { inner: rc, obs };
                    let r = self.dev.launch_with_stop(
                        id, &k.name, grid, block, shared_u32, &args, opts, stop, &mut h, &mut sched,
                    );
                    rc = h.inner;
                    r
                }
                None => self.dev.launch_with_stop(
                    id, &k.name, grid, block, shared_u32, &args, opts, stop, &mut rc, &mut sched,
                ),
            };
            rec.races = rc.races().reports(&self.dev, id);
            r.map(|r| (r, rc.into_inner()))
        } else {
            let mut wb = wb;
            let r = match log.as_mut() {
                Some(obs) => {
                    let mut h = Observed { inner: wb, obs };
                    let r = self.dev.launch_with_stop(
                        id, &k.name, grid, block, shared_u32, &args, opts, stop, &mut h, &mut sched,
                    );
                    wb = h.inner;
                    r
                }
                None => self.dev.launch_with_stop(
                    id, &k.name, grid, block, shared_u32, &args, opts, stop, &mut wb, &mut sched,
                ),
            };
            r.map(|r| (r, wb))
        };
        if let Some(mut l) = log {
            l.end_launch();
            self.event_log = Some(l);
        }
        rec.wall_ms = start.elapsed().as_millis() as u64;
        let (result, mut wb) = match run {
            Ok(x) => x,
            Err(e) => {
                use fencehound_vgpu::DeviceError as D;
                let code = match &e {
                    // More threads than the vgpu holds: resources. A grid or block beyond
                    // what CUDA allows (grid y or z > 65535 included) is a configuration
                    // error, as on a GPU.
                    D::ThreadLimit { .. } => errors::LAUNCH_OUT_OF_RESOURCES,
                    D::LaunchConfig(_) => errors::INVALID_CONFIGURATION,
                    D::ArgCount { .. } | D::ArgSize { .. } => errors::INVALID_VALUE,
                    D::NoSuchKernel(..) => errors::INVALID_DEVICE_FUNCTION,
                    _ => errors::LAUNCH_FAILURE,
                };
                return refuse(self, rec, code, e.to_string());
            }
        };
        write_c_stdout(&result.stdout);
        rec.lane_instructions = result.stats.lane_instructions;
        rec.steps = result.stats.steps;
        rec.unwritten_loads = result.stats.unwritten_loads;
        rec.unwritten_escapes = result.stats.unwritten_escapes;
        rec.stats = wb.stats().clone();
        if self.cfg.trace {
            let trace = wb.take_trace();
            if let Some(l) = self.event_log.as_mut().filter(|_| logged) {
                let mut drains: BTreeMap<u32, u64> = BTreeMap::new();
                for ev in &trace {
                    if let TraceEvent::Drained {
                        reason: fencehound_handlers::DrainReason::Fence,
                        at: Some(site),
                        ..
                    } = ev
                    {
                        *drains.entry(*site).or_default() += 1;
                    }
                }
                for (site, n) in drains {
                    l.fence_drains(site, n);
                }
                l.flush();
            }
            let sites: &[SiteInfo] = self
                .dev
                .program(id)
                .map(|p| p.sites.as_slice())
                .unwrap_or(&[]);
            rec.store_sites = store_sites(&trace, sites);
            rec.trace = render_trace(&trace, sites, block.count() as u32);
        }
        let launch_desc = format!("`{name}` (launch #{index}, grid {grid}, block {block})");
        let (outcome, code, message) = match &result.outcome {
            LaunchOutcome::Completed => (Outcome::Completed, errors::SUCCESS, String::new()),
            LaunchOutcome::Fault(f) => {
                let code = match f.kind {
                    FaultKind::Misaligned => errors::MISALIGNED_ADDRESS,
                    FaultKind::OutOfBounds | FaultKind::InvalidAddress | FaultKind::ReadOnly => {
                        errors::ILLEGAL_ADDRESS
                    }
                    FaultKind::StackOverflow | FaultKind::Undefined => errors::LAUNCH_FAILURE,
                };
                (Outcome::Fault, code, f.to_string())
            }
            LaunchOutcome::Trap(t) => {
                let code = if t.message.contains("Assertion") {
                    errors::ASSERT
                } else {
                    errors::LAUNCH_FAILURE
                };
                (
                    Outcome::Trap,
                    code,
                    format!("{} at {}: `{}`", t.message, t.site.location(), t.site.text),
                )
            }
            LaunchOutcome::Deadlock(d) => (
                Outcome::Deadlock,
                errors::LAUNCH_TIMEOUT,
                format!("deadlock: {}\n{d}", d.cause.describe()),
            ),
            LaunchOutcome::Timeout(d) => {
                let why = if d.cause == fencehound_vgpu::HangCause::Fuel {
                    format!(
                        "its fuel ({} lane instructions, set by `--fuel`) ran out",
                        self.cfg.fuel
                    )
                } else {
                    format!(
                        "its wall-clock budget ({} ms, set by `--wall-ms`) ran out",
                        self.cfg.wall_ms
                    )
                };
                (
                    Outcome::Timeout,
                    errors::LAUNCH_TIMEOUT,
                    format!("timeout: {why}; unfinished warps:\n{d}"),
                )
            }
        };
        rec.outcome = outcome;
        rec.message = message.clone();
        rec.cuda_error = errors::name(code).unwrap_or("?").into();
        self.record(&Record::Launch(Box::new(rec)));
        match outcome {
            Outcome::Completed | Outcome::Refused => errors::SUCCESS,
            Outcome::Fault | Outcome::Trap => {
                self.say(&format!(
                    "kernel {launch_desc} failed: {message}\nfencehound: the program sees {} from its next CUDA call",
                    errors::name(code).unwrap_or("?")
                ));
                self.sticky = Some(code);
                // Like a GPU, the launch call itself succeeds; the error is asynchronous.
                errors::SUCCESS
            }
            Outcome::Deadlock | Outcome::Timeout => {
                self.say(&format!(
                    "kernel {launch_desc} hangs: {}\nfencehound: ending the program with status {HANG_EXIT_STATUS} (a GPU would hang here)",
                    message.trim_end()
                ));
                flush_c_stdio();
                if let Some(f) = &mut self.side {
                    let _ = f.flush();
                }
                // SAFETY: _exit ends the process without running atexit handlers, which
                // would call back into this (locked) runtime.
                unsafe { libc::_exit(HANG_EXIT_STATUS) }
            }
        }
    }

    /// Blocks of `threads` threads one multiprocessor can hold, by threads, blocks and
    /// shared memory (sm_80's limits).
    pub fn max_active_blocks(&mut self, host: usize, threads: i32, dyn_shared: usize) -> i32 {
        if threads <= 0 {
            return 0;
        }
        let by_threads = THREADS_PER_SM / threads;
        let static_shared = self.kernel_attributes(host).map(|a| a.0).unwrap_or(0);
        let per_block = static_shared + dyn_shared as u64;
        let by_shared = fencehound_vgpu::device::MAX_SHARED
            .checked_div(per_block)
            .map_or(BLOCKS_PER_SM, |n| n.min(BLOCKS_PER_SM as u64) as i32);
        by_threads.min(by_shared).min(BLOCKS_PER_SM)
    }

    // ---- streams and events -----------------------------------------------------------

    pub fn create_stream(&mut self, flags: u32) -> usize {
        let h = self.handle();
        self.streams.insert(h, flags);
        h
    }

    /// Whether `s` names a stream: the legacy (0), per-thread (2) default streams or one
    /// created and not destroyed.
    pub fn is_stream(&self, s: usize) -> bool {
        s == 0 || s == 1 || s == 2 || self.streams.contains_key(&s)
    }

    pub fn stream_flags(&self, s: usize) -> Option<u32> {
        if s <= 2 {
            return Some(0);
        }
        self.streams.get(&s).copied()
    }

    pub fn destroy_stream(&mut self, s: usize) -> bool {
        self.streams.remove(&s).is_some()
    }

    pub fn create_event(&mut self) -> usize {
        let h = self.handle();
        self.events.insert(h, Event::default());
        h
    }

    pub fn record_event(&mut self, e: usize) -> bool {
        match self.events.get_mut(&e) {
            Some(ev) => {
                ev.at = Some(Instant::now());
                true
            }
            None => false,
        }
    }

    /// Milliseconds between two recorded events.
    pub fn elapsed(&self, a: usize, b: usize) -> Result<f32, CudaError> {
        let (Some(x), Some(y)) = (self.events.get(&a), self.events.get(&b)) else {
            return Err(errors::INVALID_RESOURCE_HANDLE);
        };
        match (x.at, y.at) {
            (Some(x), Some(y)) => Ok(if y >= x {
                (y - x).as_secs_f32() * 1000.0
            } else {
                -((x - y).as_secs_f32() * 1000.0)
            }),
            _ => Err(errors::INVALID_RESOURCE_HANDLE),
        }
    }

    pub fn is_event(&self, e: usize) -> bool {
        self.events.contains_key(&e)
    }

    pub fn destroy_event(&mut self, e: usize) -> bool {
        self.events.remove(&e).is_some()
    }

    /// `cudaDeviceReset`: frees every allocation and clears the sticky error; modules
    /// stay registered (as on a GPU, where they reload lazily).
    /// `cudaDeviceSetLimit`: recorded for `cudaDeviceGetLimit`; the malloc heap's size
    /// (`cudaLimitMallocHeapSize`, 2) bounds device-side `malloc` too.
    pub fn set_limit(&mut self, limit: i32, value: usize) {
        self.limits.insert(limit, value);
        if limit == 2 {
            self.dev.set_device_heap_limit(value as u64);
        }
    }

    pub fn reset(&mut self) {
        for p in std::mem::take(&mut self.allocs).into_keys() {
            let _ = self.dev.free(p);
        }
        self.sticky = None;
        self.configs.clear();
    }
}

/// Store sites that buffered, with counts and locations, from a launch's trace.
fn store_sites(trace: &[TraceEvent], sites: &[SiteInfo]) -> Vec<StoreSite> {
    let mut n: BTreeMap<u32, u64> = BTreeMap::new();
    for e in trace {
        if let TraceEvent::Buffered { site, .. } = e {
            *n.entry(*site).or_default() += 1;
        }
    }
    n.into_iter()
        .map(|(site, buffered)| {
            let info = sites.get(site as usize);
            StoreSite {
                site,
                buffered,
                location: info
                    .map(|i| i.location())
                    .unwrap_or_else(|| format!("site {site}")),
                ptx: info.map(|i| i.text.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

/// The trace as lines, in the style of `fencehound replay --trace`.
fn render_trace(trace: &[TraceEvent], sites: &[SiteInfo], threads_per_cta: u32) -> Vec<String> {
    let at = |s: u32| match sites.get(s as usize) {
        Some(i) => format!("{} `{}`", i.location(), i.text),
        None => format!("site {s}"),
    };
    let tpc = threads_per_cta.max(1);
    let who = |g: u32| format!("thread {} of block {}", g % tpc, g / tpc);
    let loc = |l: &fencehound_vgpu::Location| match l {
        fencehound_vgpu::Location::Global(a) => format!("global {a:#x}"),
        fencehound_vgpu::Location::Shared { cta, offset } => {
            format!("shared[cta {cta}] +{offset:#x}")
        }
    };
    trace
        .iter()
        .map(|e| match e {
            TraceEvent::Buffered {
                seq,
                thread,
                site,
                loc: l,
                value,
                ..
            } => format!(
                "#{seq:<5} buffered  {:<24} {} <- {value:#x}  at {}",
                who(*thread),
                loc(l),
                at(*site)
            ),
            TraceEvent::Drained {
                seq,
                to,
                reason,
                at: by,
                ..
            } => format!(
                "#{seq:<5} drained   to {:<6} ({reason:?}{})",
                if *to == Level::Cta { "CTA" } else { "memory" },
                by.map(|s| format!(" at {}", at(s))).unwrap_or_default()
            ),
            TraceEvent::Forwarded {
                thread,
                site,
                loc: l,
                value,
            } => format!(
                "forwarded {:<24} {} = {value:#x} at {}",
                who(*thread),
                loc(l),
                at(*site)
            ),
            TraceEvent::StaleLoad {
                thread,
                site,
                loc: l,
                value,
            } => format!(
                "STALE     {:<24} {} read {value:#x} (a newer store is still buffered) at {}",
                who(*thread),
                loc(l),
                at(*site)
            ),
            TraceEvent::StaleRead {
                thread,
                site,
                loc: l,
                value,
                read_seq,
                read_site,
                newest_seq,
                newest_site,
                newest_value,
            } => {
                let store = |seq: u64, s: &Option<u32>| match s {
                    Some(s) => format!("store #{seq} ({})", at(*s)),
                    None => "the value before the launch".to_string(),
                };
                format!(
                    "STALE     {:<24} {} read {value:#x} at {}: read {} although {} = {newest_value:#x} was visible",
                    who(*thread),
                    loc(l),
                    at(*site),
                    store(*read_seq, read_site),
                    store(*newest_seq, newest_site)
                )
            }
        })
        .collect()
}

/// The host page size managed allocations are aligned to (Linux on x86-64 and aarch64
/// with 4 KiB pages; a larger page size only makes `map_host_pages` fail cleanly).
const PAGE: u64 = 4096;

/// Makes `[p, p + size)` (rounded out to pages) readable and writable host memory, zeroed.
/// Only inside the reservation of the device address range: anywhere else it could
/// replace a mapping the program owns.
fn map_host_pages(p: u64, size: u64) -> bool {
    if !crate::api::device_addresses_reserved(p, size) || !p.is_multiple_of(PAGE) {
        return false;
    }
    let len = size.div_ceil(PAGE) * PAGE;
    // SAFETY: the pages are inside our own PROT_NONE reservation (checked above) and
    // belong to this allocation alone (page-aligned, and no other managed allocation
    // shares a page: each starts on a page of its own).
    unsafe {
        libc::mprotect(
            p as *mut libc::c_void,
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
        ) == 0
    }
}

/// Returns the pages of a freed managed allocation to the reservation.
fn unmap_host_pages(p: u64, size: u64) {
    let len = (size.div_ceil(PAGE) * PAGE) as usize;
    // SAFETY: the pages `map_host_pages` made accessible; afterwards a host access faults
    // (use after free), as a device access does.
    unsafe {
        libc::madvise(p as *mut libc::c_void, len, libc::MADV_DONTNEED);
        libc::mprotect(p as *mut libc::c_void, len, libc::PROT_NONE);
    }
}
