//! Interpreter throughput and per-thread memory of the virtual GPU.
//!
//! `cargo run --release -p fencehound-vgpu --example bench` prints a table; results go in
//! BENCHMARKS.md with the date and machine. Kernels are hand-written PTX (integer ALU only,
//! so the numbers measure the interpreter, not float emulation):
//!
//! - `alu`: a converged integer hash loop (9 instructions per iteration, no memory).
//! - `mem`: a loop of global load + add + store (a preemption point before every access).
//! - `divergent`: even and odd lanes take different paths every iteration, and trip counts
//!   differ per lane, so warps run as several groups.
//!
//! Throughput is lane instructions per second (each active lane of a warp instruction
//! counts once) on one thread; `2 threads` runs two independent devices at once.
//! Per-thread state is the heap growth during a launch (a counting allocator), divided by
//! the number of threads, minus shared memory and registers.

use fencehound_vgpu::{Arg, Device, Dim3, LaunchOptions, NoHooks, RoundRobin};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Off while two launches run at once: the counters' shared cache lines would otherwise
/// couple the threads (the interpreter allocates a little per step).
static COUNTING: AtomicBool = AtomicBool::new(true);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !COUNTING.load(Relaxed) {
            // SAFETY: forwarded unchanged to the system allocator.
            return unsafe { System.alloc(l) };
        }
        let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if !COUNTING.load(Relaxed) {
            // SAFETY: forwarded unchanged to the system allocator.
            return unsafe { System.dealloc(p, l) };
        }
        CURRENT.fetch_sub(l.size(), Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if !COUNTING.load(Relaxed) {
            // SAFETY: forwarded unchanged to the system allocator.
            return unsafe { System.realloc(p, l, new) };
        }
        if new > l.size() {
            let now = CURRENT.fetch_add(new - l.size(), Relaxed) + new - l.size();
            PEAK.fetch_max(now, Relaxed);
        } else {
            CURRENT.fetch_sub(l.size() - new, Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

include!("common/kernels.rs");

#[derive(Clone, Copy)]
struct Workload {
    name: &'static str,
    kernel: &'static str,
    src: &'static str,
    blocks: u32,
    threads: u32,
    iters: u32,
}

struct Measured {
    lane_instructions: u64,
    seconds: f64,
    /// Heap growth during the launch, per thread, minus shared memory and registers.
    state_beyond_regs: f64,
    regs_per_thread: f64,
}

/// A device with the module loaded and the buffer allocated, ready to launch.
struct Prepared {
    dev: Device,
    module: fencehound_vgpu::ModuleId,
    args: Vec<Arg>,
    w: Workload,
}

fn prepare(w: &Workload) -> Prepared {
    let ptx = format!("{HEADER}{}", w.src);
    let module = fencehound_ptx::parse(w.kernel, &ptx).expect("parse");
    let mut dev = Device::new();
    let m = dev.load_module(&module).expect("load");
    let threads = w.blocks as u64 * w.threads as u64;
    let elems = threads.next_power_of_two();
    let buf = dev.alloc(elems * 4).expect("alloc");
    let mut args = vec![Arg::Ptr(buf), Arg::U32(w.iters)];
    if w.kernel == "mem" {
        args.push(Arg::U32(elems as u32 - 1));
    }
    Prepared {
        dev,
        module: m,
        args,
        w: *w,
    }
}

impl Prepared {
    fn launch(&mut self) -> Measured {
        let w = self.w;
        let threads = w.blocks as u64 * w.threads as u64;
        let prog = self.dev.program(self.module).expect("program");
        let f = prog
            .funcs
            .iter()
            .find(|f| f.name == w.kernel)
            .expect("kernel");
        let regs_per_thread = f.nregs as f64 * 8.0;
        let shared = prog.shared_static as f64;
        let before = CURRENT.load(Relaxed);
        PEAK.store(before, Relaxed);
        let t = Instant::now();
        let r = self
            .dev
            .launch_with(
                self.module,
                w.kernel,
                Dim3::x(w.blocks),
                Dim3::x(w.threads),
                0,
                &self.args,
                LaunchOptions::default(),
                &mut NoHooks,
                &mut RoundRobin::new(1),
            )
            .expect("launch");
        let seconds = t.elapsed().as_secs_f64();
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        let growth = PEAK.load(Relaxed).saturating_sub(before) as f64;
        let per_thread = growth / threads as f64;
        Measured {
            lane_instructions: r.stats.lane_instructions,
            seconds,
            state_beyond_regs: per_thread
                - regs_per_thread
                - shared * w.blocks as f64 / threads as f64,
            regs_per_thread,
        }
    }
}

/// The fastest of `n` launches (the machine may be shared; the minimum is the least
/// disturbed).
fn best_of(w: &Workload, n: usize) -> Measured {
    let mut p = prepare(w);
    let mut best: Option<Measured> = None;
    for _ in 0..n {
        let m = p.launch();
        if best.as_ref().is_none_or(|b| m.seconds < b.seconds) {
            best = Some(m);
        }
    }
    best.expect("n > 0")
}

/// Two devices launched at the same instant on two OS threads; returns total lane
/// instructions and the wall time until both finished.
fn pair(w: &Workload) -> (u64, f64, Option<f64>) {
    let start = std::sync::Barrier::new(3);
    std::thread::scope(|s| {
        let run = || {
            let mut p = prepare(w);
            start.wait();
            let c0 = thread_cpu_ns();
            let m = p.launch();
            let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| (b - a) as f64 / 1e9);
            (m.lane_instructions, Instant::now(), cpu)
        };
        let a = s.spawn(run);
        let b = s.spawn(run);
        start.wait();
        let t = Instant::now();
        let (la, ta, ca) = a.join().expect("thread");
        let (lb, tb, cb) = b.join().expect("thread");
        // CPU-time throughput of one thread while the other runs.
        let cpu = ca.zip(cb).map(|(x, y)| mips(la, x).min(mips(lb, y)));
        (la + lb, (ta.max(tb) - t).as_secs_f64(), cpu)
    })
}

/// Nanoseconds this OS thread has spent on a CPU (Linux `schedstat`), if available. On a
/// shared machine wall time includes waiting for a core; CPU time shows whether two
/// launches slow each other down.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn mips(lanes: u64, s: f64) -> f64 {
    lanes as f64 / s / 1e6
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // An optional filter (`bench mem`) runs only matching workloads, without the pairs.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let scale = if quick { 1 } else { 4 };
    let workloads = [
        Workload {
            name: "alu, 1 block",
            kernel: "alu",
            src: ALU,
            blocks: 1,
            threads: 256,
            iters: 20_000 * scale,
        },
        Workload {
            name: "alu, 1024 blocks",
            kernel: "alu",
            src: ALU,
            blocks: 1024,
            threads: 256,
            iters: 20 * scale,
        },
        Workload {
            name: "mem, 1 block",
            kernel: "mem",
            src: MEM,
            blocks: 1,
            threads: 256,
            iters: 4_000 * scale,
        },
        Workload {
            name: "mem, 1024 blocks",
            kernel: "mem",
            src: MEM,
            blocks: 1024,
            threads: 256,
            iters: 4 * scale,
        },
        Workload {
            name: "divergent, 1 block",
            kernel: "divergent",
            src: DIVERGENT,
            blocks: 1,
            threads: 256,
            iters: 20_000 * scale,
        },
        Workload {
            name: "divergent, 1024 blocks",
            kernel: "divergent",
            src: DIVERGENT,
            blocks: 1024,
            threads: 256,
            iters: 20 * scale,
        },
    ];
    println!(
        "| workload | lane instr | seconds | M lane-instr/s | state/thread beyond regs (B) | regs/thread (B) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for w in &workloads {
        if filter
            .as_ref()
            .is_some_and(|f| !w.name.contains(f.as_str()))
        {
            continue;
        }
        let m = best_of(w, 3);
        println!(
            "| {} | {} | {:.3} | {:.1} | {:.0} | {:.0} |",
            w.name,
            m.lane_instructions,
            m.seconds,
            mips(m.lane_instructions, m.seconds),
            m.state_beyond_regs,
            m.regs_per_thread
        );
    }
    if filter.is_some() {
        return;
    }
    // Two independent executions on two OS threads vs one (neither counts allocations).
    COUNTING.store(false, Relaxed);
    for w in [&workloads[0], &workloads[4]] {
        let mut p = prepare(w);
        let c0 = thread_cpu_ns();
        let one = p.launch();
        let one_cpu = c0
            .zip(thread_cpu_ns())
            .map(|(a, b)| mips(one.lane_instructions, (b - a) as f64 / 1e9));
        let single = mips(one.lane_instructions, one.seconds);
        let (lanes, secs, cpu) = (0..3)
            .map(|_| pair(w))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("runs");
        let both = mips(lanes, secs);
        let per_cpu = match (cpu, one_cpu) {
            (Some(c), Some(o)) => format!("; per thread {c:.1}/CPU-s vs {o:.1} alone"),
            _ => String::new(),
        };
        println!(
            "| {} ×2 on 2 threads | {} | {:.3} | {:.1} ({:.2}× one thread{per_cpu}) | | |",
            w.name,
            lanes,
            secs,
            both,
            both / single
        );
    }
}
