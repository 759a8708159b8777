//! Shared test harness: compile CUDA with NVRTC, run on the vgpu under write buffers.
#![allow(clippy::too_many_arguments)]
#![allow(dead_code)]

use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::{Arg, Device, Dim3, LaunchOptions, LaunchOutcome, RandomScheduler};
use std::collections::BTreeMap;

pub struct Kernel {
    pub module: fencehound_ptx::Module,
    pub name: String,
}

/// Compiles `src` with NVRTC (compute_80, line info) and `defines`. Panics with NVRTC's
/// log on failure: a test kernel that does not compile is a broken test.
pub fn compile(name: &str, src: &str, defines: &[(&str, &str)]) -> Kernel {
    let mut req = fencehound_toolchain::CompileRequest::new(src, format!("{name}.cu"));
    req.defines = defines
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
    let out = fencehound_toolchain::compile(&req).unwrap_or_else(|e| panic!("{e}"));
    let module = fencehound_ptx::parse(name, &out.ptx).unwrap_or_else(|e| panic!("{e}"));
    Kernel {
        module,
        name: name.to_string(),
    }
}

/// One buffer argument: its initial u32 words.
pub struct Buf(pub Vec<u32>);

pub fn fill(n: usize, v: u32) -> Buf {
    Buf(vec![v; n])
}

pub struct Run {
    pub outcome: LaunchOutcome,
    pub bufs: Vec<Vec<u32>>,
    pub stats: fencehound_handlers::BufferStats,
}

pub fn run(
    k: &Kernel,
    model: Model,
    p_w: f64,
    seed: u64,
    grid: u32,
    block: u32,
    bufs: &[Buf],
    scalars: &[Arg],
) -> Run {
    run_cfg(
        k,
        BufferConfig::new(model, p_w, seed),
        seed,
        grid,
        block,
        bufs,
        scalars,
    )
}

pub fn run_cfg(
    k: &Kernel,
    cfg: BufferConfig,
    seed: u64,
    grid: u32,
    block: u32,
    bufs: &[Buf],
    scalars: &[Arg],
) -> Run {
    let mut dev = Device::new();
    let id = dev.load_module(&k.module).unwrap_or_else(|e| panic!("{e}"));
    let mut args = Vec::new();
    let mut ptrs = Vec::new();
    for b in bufs {
        let p = dev.alloc((b.0.len() * 4) as u64).unwrap();
        let data: Vec<u8> = b.0.iter().flat_map(|v| v.to_le_bytes()).collect();
        dev.copy_to(p, &data).unwrap();
        args.push(Arg::Ptr(p));
        ptrs.push((p, b.0.len()));
    }
    args.extend_from_slice(scalars);
    let mut wb = WriteBuffers::new(cfg);
    let mut sched = RandomScheduler::new(seed);
    let opts = LaunchOptions {
        fuel: 20_000_000,
        ..Default::default()
    };
    let r = dev
        .launch_with(
            id,
            &k.name,
            Dim3::x(grid),
            Dim3::x(block),
            0,
            &args,
            opts,
            &mut wb,
            &mut sched,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let bufs = ptrs
        .iter()
        .map(|(p, n)| {
            let mut b = vec![0u8; n * 4];
            dev.copy_from(*p, &mut b).unwrap();
            b.chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect();
    Run {
        outcome: r.outcome,
        bufs,
        stats: wb.stats().clone(),
    }
}

/// Outcome histogram over seeds: key → count. Panics on any non-completed launch.
pub fn histogram(
    seeds: std::ops::Range<u64>,
    mut f: impl FnMut(u64) -> Run,
    key: impl Fn(&Run) -> String,
) -> BTreeMap<String, u64> {
    let mut h = BTreeMap::new();
    for s in seeds {
        let r = f(s);
        assert!(r.outcome.is_completed(), "seed {s}: {:?}", r.outcome);
        *h.entry(key(&r)).or_default() += 1;
    }
    h
}

pub mod forward {
    use fencehound_vgpu::hooks::RmwFn;
    use fencehound_vgpu::{Access, Barrier, Fence, Hooks, LaunchInfo, MemError, Memory, ThreadRef};
    use std::cell::Cell;

    /// `inner` with some of its answers to the interpreter switchable, everything else
    /// passed on: with `park` false, `load_effects` is the trait's default (no spin
    /// parking); with `plain` false, `plain_loads` is (every load goes through `load`);
    /// `shared_effects` and `changed_blocks` are passed on only when `shared` and `named`
    /// say so (by default not: the trait's defaults). The "yes" answers of a passed-on
    /// `plain_loads` are counted in `plain_yes`.
    pub struct Forward<H> {
        pub inner: H,
        pub park: bool,
        pub plain: bool,
        pub shared: bool,
        pub named: bool,
        pub plain_yes: Cell<u64>,
        /// Calls of `load` (one per lane whose load reached the hooks).
        pub loads: Cell<u64>,
    }

    impl<H> Forward<H> {
        pub fn new(inner: H, park: bool, plain: bool) -> Self {
            Forward {
                inner,
                park,
                plain,
                shared: false,
                named: false,
                plain_yes: Cell::new(0),
                loads: Cell::new(0),
            }
        }
    }

    impl<H: Hooks> Hooks for Forward<H> {
        fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
            self.inner.launch_begin(info)
        }
        fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
            self.loads.set(self.loads.get() + 1);
            self.inner.load(mem, a, buf)
        }
        fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
            self.inner.store(mem, a, data)
        }
        fn atomic(
            &mut self,
            mem: &mut Memory,
            a: &Access,
            rmw: RmwFn<'_>,
        ) -> Result<u64, MemError> {
            self.inner.atomic(mem, a, rmw)
        }
        fn fence(&mut self, mem: &mut Memory, f: &Fence) {
            self.inner.fence(mem, f)
        }
        fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
            self.inner.barrier_arrive(mem, b)
        }
        fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, t: &[ThreadRef]) {
            self.inner.barrier_release(mem, b, t)
        }
        fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
            self.inner.thread_exit(mem, t)
        }
        fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
            self.inner.cta_exit(mem, cta)
        }
        fn stalled(&mut self, mem: &mut Memory) -> bool {
            self.inner.stalled(mem)
        }
        fn launch_end(&mut self, mem: &mut Memory) {
            self.inner.launch_end(mem)
        }
        fn load_effects(&self) -> Option<u64> {
            if self.park {
                self.inner.load_effects()
            } else {
                None
            }
        }
        fn shared_effects(&self) -> Option<u64> {
            self.inner.shared_effects().filter(|_| self.shared)
        }
        fn changed_blocks(&mut self, out: &mut Vec<u64>) -> bool {
            self.named && self.inner.changed_blocks(out)
        }
        fn transparent(&self) -> bool {
            self.inner.transparent()
        }
        fn plain_loads(&self, cta: u32, first: u32, lanes: u32) -> bool {
            if !self.plain {
                return false;
            }
            let yes = self.inner.plain_loads(cta, first, lanes);
            self.plain_yes.set(self.plain_yes.get() + yes as u64);
            yes
        }
    }
}
