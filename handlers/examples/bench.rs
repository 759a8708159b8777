//! Cost of the write buffers: slowdown of `bugaroo` at `p_w = 1` versus `sc`, and the
//! buffers' memory for a 65,536-thread launch at capacity 256 (issue 4, Benchmark); the
//! same for the `weak` model at `p = 1` (every load that may read stale does): slowdown
//! versus `sc` and history memory for 65,536 threads (issue 11, Benchmark).
//!
//! `cargo run --release -p fencehound-handlers --example bench` prints two tables
//! (`-- --quick` for smaller launches; results go in BENCHMARKS.md with date and machine).
//!
//! Kernels: `alu`, `mem` and `divergent` are the vgpu benchmark's (vgpu/examples/bench.rs,
//! same PTX); three more exercise the buffers' other paths:
//! - `scatter`: each thread stores `iters` distinct words (no fence), then loads them back
//!   (own-buffer forwarding) — at `iters` ≥ capacity the buffers fill (Bugaroo's "full").
//! - `fenced`: per iteration a data store, `membar.gl`, a flag store, a load (a drain
//!   per fence: message passing without the reader).
//! - `reduce`: a shared-memory tree reduction with `bar.sync` between levels (shared
//!   stores drained at every barrier), one global store per block.
//!
//! Each row is the fastest of N launches (the machine may be shared) of a fresh device per
//! configuration: plain memory (`NoHooks`), `WriteBuffers` under `sc` (no buffering: the
//! hooks' own overhead, one dispatch per hook; it holds no state, so its memory is 0), and
//! `bugaroo` at `p_w = 1` (every store buffered). Memory is
//! [`WriteBuffers::peak_heap_bytes`] of the launch: the heap the buffers held at their peak
//! (per-thread queues, CTA overlays, the address index), not device memory.

use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::{Arg, Device, Dim3, Hooks, LaunchOptions, NoHooks, RoundRobin};
use std::time::Instant;

// The vgpu benchmark's kernels (HEADER, ALU, MEM, DIVERGENT): the same PTX.
include!("../../vgpu/examples/common/kernels.rs");

const SCATTER: &str = r#"
.visible .entry scatter(.param .u64 buf, .param .u32 iters)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [iters];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mov.u32 %r6, %nctaid.x;
    mul.lo.u32 %r12, %r6, %r4;
    mov.u32 %r7, 0;
    mov.u32 %r8, %r5;
STORE:
    mul.wide.u32 %rd4, %r8, 4;
    add.s64 %rd5, %rd2, %rd4;
    st.global.u32 [%rd5], %r7;
    add.u32 %r8, %r8, %r12;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra STORE;
    mov.u32 %r7, 0;
    mov.u32 %r8, %r5;
    mov.u32 %r10, 0;
LOAD:
    mul.wide.u32 %rd4, %r8, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r9, [%rd5];
    add.u32 %r10, %r10, %r9;
    add.u32 %r8, %r8, %r12;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra LOAD;
    mul.wide.u32 %rd4, %r5, 4;
    add.s64 %rd5, %rd2, %rd4;
    st.global.u32 [%rd5], %r10;
    ret;
}
"#;

const FENCED: &str = r#"
.visible .entry fenced(.param .u64 buf, .param .u32 iters)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [iters];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mov.u32 %r6, %nctaid.x;
    mul.lo.u32 %r12, %r6, %r4;
    mul.wide.u32 %rd4, %r5, 4;
    add.s64 %rd5, %rd2, %rd4;
    mul.wide.u32 %rd6, %r12, 4;
    add.s64 %rd6, %rd5, %rd6;
    mov.u32 %r7, 0;
    mov.u32 %r10, 0;
LOOP:
    st.global.u32 [%rd5], %r7;
    membar.gl;
    st.global.u32 [%rd6], %r7;
    ld.global.u32 %r9, [%rd5];
    add.u32 %r10, %r10, %r9;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra LOOP;
    st.global.u32 [%rd5], %r10;
    ret;
}
"#;

const REDUCE: &str = r#"
.visible .entry reduce(.param .u64 buf, .param .u32 iters)
{
    .reg .pred %p<3>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 sdata[1024];
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [iters];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mov.u32 %r13, sdata;
    shl.b32 %r14, %r2, 2;
    add.u32 %r15, %r13, %r14;
    mov.u32 %r7, 0;
    mov.u32 %r10, 0;
ITER:
    add.u32 %r11, %r5, %r7;
    st.shared.u32 [%r15], %r11;
    bar.sync 0;
    shr.u32 %r8, %r4, 1;
LEVEL:
    setp.ge.u32 %p2, %r2, %r8;
    @%p2 bra SKIP;
    shl.b32 %r16, %r8, 2;
    add.u32 %r17, %r15, %r16;
    ld.shared.u32 %r9, [%r17];
    ld.shared.u32 %r18, [%r15];
    add.u32 %r18, %r18, %r9;
    st.shared.u32 [%r15], %r18;
SKIP:
    bar.sync 0;
    shr.u32 %r8, %r8, 1;
    setp.ne.u32 %p2, %r8, 0;
    @%p2 bra LEVEL;
    ld.shared.u32 %r9, [%r13];
    add.u32 %r10, %r10, %r9;
    bar.sync 0;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra ITER;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra DONE;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd2, %rd4;
    st.global.u32 [%rd5], %r10;
DONE:
    ret;
}
"#;

#[derive(Clone, Copy)]
struct Workload {
    name: &'static str,
    kernel: &'static str,
    src: &'static str,
    blocks: u32,
    threads: u32,
    iters: u32,
}

impl Workload {
    /// Words of device memory the kernel touches.
    fn elems(&self) -> u64 {
        let threads = self.blocks as u64 * self.threads as u64;
        match self.kernel {
            "scatter" => threads * self.iters.max(1) as u64,
            "fenced" => threads * 2,
            _ => threads.next_power_of_two(),
        }
    }
}

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
    let elems = w.elems();
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
    /// Seconds for one launch and lane instructions executed.
    fn launch<H: Hooks>(&mut self, hooks: &mut H) -> (f64, u64) {
        let w = self.w;
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
                LaunchOptions {
                    fuel: u64::MAX / 2,
                    ..Default::default()
                },
                hooks,
                &mut RoundRobin::new(1),
            )
            .expect("launch");
        let s = t.elapsed().as_secs_f64();
        assert!(r.outcome.is_completed(), "{}: {:?}", w.name, r.outcome);
        (s, r.stats.lane_instructions)
    }
}

enum Config {
    Plain,
    Buffers(Model),
}

/// Fastest of `n` launches; for buffers also the stores buffered and peak heap bytes.
fn best_of(w: &Workload, c: &Config, n: usize) -> (f64, u64, u64, usize) {
    let mut p = prepare(w);
    let mut best = f64::INFINITY;
    let (mut lanes, mut buffered, mut heap) = (0, 0, 0);
    for i in 0..n {
        let s = match c {
            Config::Plain => {
                let (s, l) = p.launch(&mut NoHooks);
                lanes = l;
                s
            }
            Config::Buffers(m) => {
                let mut wb = WriteBuffers::new(BufferConfig::new(*m, 1.0, 7 + i as u64));
                let (s, l) = p.launch(&mut wb);
                lanes = l;
                buffered = wb.stats().global.stores_buffered + wb.stats().shared.stores_buffered;
                heap = heap.max(wb.peak_heap_bytes());
                s
            }
        };
        best = best.min(s);
    }
    (best, lanes, buffered, heap)
}

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let runs = if quick { 2 } else { 5 };
    let scale = if quick { 1 } else { 2 };
    let w = |name, kernel, src, blocks, iters| Workload {
        name,
        kernel,
        src,
        blocks,
        threads: 256,
        iters,
    };
    let timing = [
        w("alu, 1 block", "alu", ALU, 1, 20_000 * scale),
        w("alu, 1024 blocks", "alu", ALU, 1024, 20 * scale),
        w("mem, 1 block", "mem", MEM, 1, 4_000 * scale),
        w("mem, 1024 blocks", "mem", MEM, 1024, 4 * scale),
        w(
            "divergent, 1 block",
            "divergent",
            DIVERGENT,
            1,
            20_000 * scale,
        ),
        w(
            "divergent, 1024 blocks",
            "divergent",
            DIVERGENT,
            1024,
            20 * scale,
        ),
        w("scatter 64, 16 blocks", "scatter", SCATTER, 16, 64),
        w("fenced, 16 blocks", "fenced", FENCED, 16, 200 * scale),
        w("reduce, 64 blocks", "reduce", REDUCE, 64, 4 * scale),
    ];
    println!("Slowdown (fastest of {runs} launches; p_w = 1, capacity 256, round-robin)");
    println!();
    println!("| workload | lane instr | stores buffered | NoHooks s | sc s | bugaroo s | bugaroo / sc | bugaroo / NoHooks | weak s | weak / sc |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (mut tp, mut ts, mut tb, mut tw) = (0.0, 0.0, 0.0, 0.0);
    for w in &timing {
        if filter
            .as_ref()
            .is_some_and(|f| !w.name.contains(f.as_str()))
        {
            continue;
        }
        // BENCH_ONLY=weak (or plain, sc, bugaroo) times one configuration, for profiling.
        let only = std::env::var("BENCH_ONLY").ok();
        let pick = |name: &str, c: &Config| {
            if only.as_deref().is_some_and(|o| o != name) {
                (0.0, 0, 0, 0)
            } else {
                best_of(w, c, runs)
            }
        };
        let (p, lanes, _, _) = pick("plain", &Config::Plain);
        let (s, _, _, _) = pick("sc", &Config::Buffers(Model::Sc));
        let (b, _, buffered, _) = pick("bugaroo", &Config::Buffers(Model::Bugaroo));
        let (wk, _, _, _) = pick("weak", &Config::Buffers(Model::Weak));
        tp += p;
        ts += s;
        tb += b;
        tw += wk;
        println!(
            "| {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.2}× | {:.2}× | {:.4} | {:.2}× |",
            w.name,
            lanes,
            buffered,
            p,
            s,
            b,
            b / s,
            b / p,
            wk,
            wk / s
        );
    }
    println!(
        "| **total** | | | {tp:.4} | {ts:.4} | {tb:.4} | {:.2}× | {:.2}× | {tw:.4} | {:.2}× |",
        tb / ts,
        tb / tp,
        tw / ts
    );
    if filter.is_some() {
        return;
    }
    // 65,536 threads (256 blocks of 256) at capacity 256.
    let memory = [
        w("mem", "mem", MEM, 256, 4),
        w("fenced", "fenced", FENCED, 256, 4),
        w("reduce", "reduce", REDUCE, 256, 1),
        w(
            "scatter 16 (16 entries/thread)",
            "scatter",
            SCATTER,
            256,
            16,
        ),
        w(
            "scatter 256 (worst case: every buffer full)",
            "scatter",
            SCATTER,
            256,
            256,
        ),
    ];
    println!();
    println!("Weak-model history memory, 65,536 threads (256 × 256), p = 1");
    println!();
    println!("| kernel | stores | stale reads | histories (8-byte blocks) | peak entries | peak heap (MiB) | B/thread | weak s | NoHooks s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for w in &memory {
        let (p, _, _, _) = best_of(w, &Config::Plain, 1);
        let mut pr = prepare(w);
        let mut wb = WriteBuffers::new(BufferConfig::new(Model::Weak, 1.0, 7));
        let (t, _) = pr.launch(&mut wb);
        let st = wb.stats();
        let ws = st.weak.clone().unwrap_or_default();
        let heap = wb.peak_heap_bytes();
        println!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.0} | {:.3} | {:.3} |",
            w.name,
            st.global.stores_seen + st.shared.stores_seen,
            ws.stale_reads,
            ws.histories_peak,
            ws.entries_peak,
            mib(heap),
            heap as f64 / 65_536.0,
            t,
            p
        );
    }
    println!();
    println!("Buffer memory, 65,536 threads (256 × 256), capacity 256, bugaroo p_w = 1");
    println!();
    println!("| kernel | stores buffered | peak entries/thread | peak heap (MiB) | B/thread | bugaroo s | NoHooks s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for w in &memory {
        let (p, _, _, _) = best_of(w, &Config::Plain, 1);
        let mut pr = prepare(w);
        let mut wb = WriteBuffers::new(BufferConfig::new(Model::Bugaroo, 1.0, 7));
        let (b, _) = pr.launch(&mut wb);
        let st = wb.stats();
        let heap = wb.peak_heap_bytes();
        println!(
            "| {} | {} | {} | {:.1} | {:.0} | {:.3} | {:.3} |",
            w.name,
            st.global.stores_buffered + st.shared.stores_buffered,
            st.peak_occupancy,
            mib(heap),
            heap as f64 / 65_536.0,
            b,
            p
        );
    }
}
