//! vgpu time with the race check versus without, and shadow memory per tracked byte.
//!
//! `cargo run --release -p fencehound-racecheck --example bench [-- REPEATS [NAME]]`
//!
//! Kernels: corpus algorithms (their header launch and arguments) and two scale kernels of
//! 65,536 threads (256 CTAs × 256): a barrier-heavy shared reduction with a cross-CTA
//! read after a grid barrier, and a fence-per-thread publication. Each row is the median
//! of REPEATS runs (default 5) of one launch with `NoHooks` and with `RaceCheck<NoHooks>`
//! (the latter including the checker's teardown: the fuzzer drops one per execution).
//!
//! `BENCH_SIDE=plain`, `race` or `none` runs only that side of each row (the other's time
//! is printed as 0): for instruction counts under `valgrind --tool=callgrind`, where
//! race-checked minus `none` over plain minus `none` is the row's ratio in instructions.

use fencehound_argspec as argspec;
use fencehound_racecheck::RaceCheck;
use fencehound_vgpu::{Device, Dim3, Hooks, LaunchOptions, NoHooks, RoundRobin};
use std::time::Instant;

const SCALE_SRC: &str = r#"
extern "C" __global__ void scale_reduce(const unsigned *in, unsigned *partial, unsigned *count,
                                        unsigned *out)
{
    __shared__ unsigned s[256];
    unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    s[t] = in[g];
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        atomicAdd(count, 1u);
        while (*(volatile unsigned *)count < gridDim.x) { }
        __threadfence();
    }
    __syncthreads();
    out[g] = partial[(blockIdx.x + 1) % gridDim.x] + s[0];
}

extern "C" __global__ void scale_fences(unsigned *data, unsigned *count)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    data[g] = g;
    __threadfence();
    atomicAdd(count, 1u);
}
"#;

struct Job {
    name: String,
    module: fencehound_ptx::Module,
    kernel: String,
    grid: Dim3,
    block: Dim3,
    args: String,
    dynamic_shared: u32,
}

fn corpus(name: &str) -> Option<Job> {
    let path = format!("{}/../kernels/{name}.cu", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).ok()?;
    let field = |k: &str| {
        src.lines().find_map(|l| {
            l.strip_prefix(&format!("// {k}:"))
                .map(|v| v.trim().to_string())
        })
    };
    let (mut grid, mut block, mut dynamic_shared) = (Dim3::x(1), Dim3::x(1), 0);
    for p in field("launch")?.split_whitespace() {
        match p.split_once('=')? {
            ("grid", v) => grid = argspec::parse_dim3(v)?,
            ("block", v) => block = argspec::parse_dim3(v)?,
            ("dynamic_shared", v) => dynamic_shared = v.parse().ok()?,
            _ => {}
        }
    }
    let mut req = fencehound_toolchain::CompileRequest::new(src.clone(), format!("{name}.cu"));
    req.extra_options = fencehound_toolchain::expand_nvrtc_flags(&field("nvrtc-flags")?).ok()?;
    let ptx = fencehound_toolchain::compile(&req).ok()?;
    Some(Job {
        name: name.into(),
        module: fencehound_ptx::parse(name, &ptx.ptx).ok()?,
        kernel: name.into(),
        grid,
        block,
        args: field("args")?,
        dynamic_shared,
    })
}

fn time_one<H: Hooks>(job: &Job, hooks: &mut H) -> Result<f64, String> {
    let mut dev = Device::new();
    let id = dev.load_module(&job.module).map_err(|e| e.to_string())?;
    let specs = argspec::parse_args(&job.args).map_err(|e| e.to_string())?;
    let bound = argspec::bind(&mut dev, &specs).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let r = dev
        .launch_with(
            id,
            &job.kernel,
            job.grid,
            job.block,
            job.dynamic_shared,
            &bound.args,
            LaunchOptions::default(),
            hooks,
            &mut RoundRobin::new(1),
        )
        .map_err(|e| e.to_string())?;
    let t = start.elapsed().as_secs_f64();
    if !r.outcome.is_completed() {
        return Err(format!("{:?}", r.outcome).chars().take(120).collect());
    }
    Ok(t)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let repeats: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5)
        .max(1);
    // An optional second argument keeps only the rows whose name contains it.
    let only = std::env::args().nth(2);
    let side_var = std::env::var("BENCH_SIDE").ok();
    let side = side_var.as_deref();
    let mut jobs: Vec<Job> = [
        "algo_reduce_shared",
        "algo_scan_block",
        "algo_histogram",
        "algo_spinlock",
        "algo_last_block_sum",
        "algo_matmul_tiled",
        "algo_bitonic_sort",
        "algo_stencil2d",
        "algo_transpose_dyn_shared",
        "fence_message_passing",
    ]
    .iter()
    .filter_map(|n| corpus(n))
    .collect();
    let scale = fencehound_toolchain::compile(&fencehound_toolchain::CompileRequest::new(
        SCALE_SRC, "scale.cu",
    ))
    .ok()
    .and_then(|c| fencehound_ptx::parse("scale", &c.ptx).ok());
    if let Some(m) = scale {
        jobs.push(Job {
            name: "scale_reduce (65,536 thr)".into(),
            module: m.clone(),
            kernel: "scale_reduce".into(),
            grid: Dim3::x(256),
            block: Dim3::x(256),
            args: "in:u32[65536] random(1,0,100), partial:u32[256], count:u32[1], out:u32[65536]"
                .into(),
            dynamic_shared: 0,
        });
        jobs.push(Job {
            name: "scale_fences (65,536 thr)".into(),
            module: m,
            kernel: "scale_fences".into(),
            grid: Dim3::x(256),
            block: Dim3::x(256),
            args: "data:u32[65536], count:u32[1]".into(),
            dynamic_shared: 0,
        });
    }
    println!(
        "| kernel | threads | vgpu ms | + racecheck ms | ratio | of which teardown ms | tracked KiB | shadow KiB | shadow B/B | races |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (mut sum_base, mut sum_rc) = (0.0, 0.0);
    for job in &jobs {
        if only
            .as_ref()
            .is_some_and(|o| !job.name.contains(o.as_str()))
        {
            continue;
        }
        let threads = job.grid.count() * job.block.count();
        let mut base = Vec::new();
        let mut rc_t = Vec::new();
        let mut down_t = Vec::new();
        let mut stats = None;
        let mut races = 0;
        let mut err = None;
        for _ in 0..repeats {
            if side == Some("none") {
                base.push(0.0);
                rc_t.push(0.0);
                down_t.push(0.0);
                continue;
            }
            if side == Some("race") {
                base.push(0.0);
            } else {
                match time_one(job, &mut NoHooks) {
                    Ok(t) => base.push(t),
                    Err(e) => err = Some(e),
                }
            }
            if side == Some("plain") {
                rc_t.push(0.0);
                down_t.push(0.0);
                continue;
            }
            let mut rc = RaceCheck::new(NoHooks);
            let launch = time_one(job, &mut rc);
            stats = Some(rc.stats());
            races = rc.races().len();
            // The checker's teardown counts: the fuzzer builds one checker per execution
            // and drops it after, so freeing its state is part of every execution's cost.
            let t0 = Instant::now();
            drop(rc);
            let teardown = t0.elapsed().as_secs_f64();
            match launch {
                Ok(t) => {
                    rc_t.push(t + teardown);
                    down_t.push(teardown);
                }
                Err(e) => err = Some(e),
            }
        }
        if let Some(e) = err {
            println!("| {} | {threads} | skipped: {e} | | | | | | | |", job.name);
            continue;
        }
        let (b, r, d) = (median(base), median(rc_t), median(down_t));
        sum_base += b;
        sum_rc += r;
        let s = stats.unwrap_or_default();
        println!(
            "| {} | {threads} | {:.2} | {:.2} | {:.2}× | {:.2} | {:.1} | {:.1} | {:.0} | {races} |",
            job.name,
            b * 1e3,
            r * 1e3,
            r / b,
            d * 1e3,
            s.tracked_bytes as f64 / 1024.0,
            s.shadow_bytes as f64 / 1024.0,
            if s.tracked_bytes > 0 {
                s.shadow_bytes as f64 / s.tracked_bytes as f64
            } else {
                0.0
            },
        );
    }
    println!(
        "| **total** | | {:.2} | {:.2} | {:.2}× | | | | | |",
        sum_base * 1e3,
        sum_rc * 1e3,
        sum_rc / sum_base
    );
}
