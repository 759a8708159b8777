//! `fencehound run-kernel`: runs one kernel on the virtual GPU with buffers described by
//! `--arg` specs (the corpus `args:` grammar, see `fencehound_argspec`), and prints
//! how it ended, its printf output and the buffers.
//!
//! Exit codes: 0 completed; 1 fault, trap, deadlock or timeout; 2 usage or input error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fencehound_argspec::{self as argspec, ArgSpec, HostBuffer};
use fencehound_toolchain::{compile_with_cache, expand_placeholders, CompileRequest, PtxCache};
use fencehound_vgpu::device::Stop;
use fencehound_vgpu::{
    Device, Dim3, LaunchOptions, LaunchOutcome, LaunchResult, NoHooks, SchedulerKind, SiteInfo,
    DEFAULT_FUEL,
};
use serde_json::{json, Value};

/// How many elements of each buffer are shown when no `--print` chooses buffers.
const PREVIEW: usize = 16;

#[derive(clap::Args)]
#[command(after_help = "\
ARG SPECS (one kernel parameter each, in parameter order):
  buffer  NAME:TYPE[LEN] INIT   e.g. in:u32[1024] random(44,0,1000)
  scalar  NAME:TYPE=VALUE       e.g. n:u32=1024   scale:f32=1.5
  TYPE    u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64
  INIT    zero | fill(V) | iota | iota(START[,STEP]) | iota_from(START) | values(a,b,..)
          | random(SEED[,LO,HI]) | special | file(PATH)   (raw little-endian elements)

EXAMPLES:
  fencehound run-kernel kernels/algo_reduce_shared.cu --grid 4 --block 128 \\
      --arg 'in:u32[1024] random(44,0,1000)' --arg 'partial:u32[4] zero' --arg n:u32=1024
  fencehound run-kernel k.ptx --kernel k --grid 2,2 --block 16,16 --arg 'out:f32[1024]' \\
      --scheduler pct:3 --seed 7 --print out --json")]
pub struct Args {
    /// The kernel: a `.ptx` file, or a `.cu` file compiled with NVRTC.
    pub input: PathBuf,
    /// The `.entry` to run (may be omitted when the module has exactly one).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Grid size: X, X,Y or X,Y,Z.
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim)]
    pub grid: Dim3,
    /// Block size: X, X,Y or X,Y,Z.
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim)]
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub dynamic_shared: u32,
    /// A kernel argument (repeatable, in parameter order); see ARG SPECS below.
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Print this buffer in full after the run (repeatable). Without it every buffer is
    /// shown, shortened to its first and last elements.
    #[arg(long = "print", value_name = "NAME")]
    pub print: Vec<String>,
    /// Write a buffer's final contents (raw little-endian elements) to a file (repeatable).
    #[arg(long = "save", value_name = "NAME=FILE", value_parser = parse_save)]
    pub save: Vec<(String, PathBuf)>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Lane-instruction budget; running out is a timeout.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FUEL)]
    pub fuel: u64,
    /// Wall-clock limit in seconds; reaching it is a timeout too.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Scheduler: rr[:QUANTUM], random, pct[:DEPTH].
    #[arg(long, value_name = "KIND", default_value = "rr", value_parser = parse_scheduler)]
    pub scheduler: SchedulerKind,
    /// Seed of the random and pct schedulers.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Define a macro when compiling a `.cu` file: -D NAME or -D NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Add an include directory when compiling a `.cu` file (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Virtual architecture for a `.cu` file.
    #[arg(long, default_value = fencehound_toolchain::DEFAULT_ARCH)]
    pub arch: String,
    /// Pass an option to NVRTC as is (repeatable); `$NVRTC_BUNDLED_HEADERS` and
    /// `$CCCL_INCLUDE` are expanded as in corpus headers.
    #[arg(long = "nvrtc-option", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_option: Vec<String>,
}

fn parse_dim(s: &str) -> Result<Dim3, String> {
    argspec::parse_dim3(s)
        .ok_or_else(|| format!("`{s}` is not X, X,Y or X,Y,Z with each a positive integer"))
}

fn parse_save(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((n, f)) if !n.is_empty() && !f.is_empty() => Ok((n.to_string(), PathBuf::from(f))),
        _ => Err(format!("`{s}` is not NAME=FILE")),
    }
}

fn parse_scheduler(s: &str) -> Result<SchedulerKind, String> {
    SchedulerKind::parse(s)
        .ok_or_else(|| format!("`{s}` is not a scheduler (rr, rr:QUANTUM, random, pct, pct:DEPTH)"))
}

fn parse_define(s: &str) -> Result<(String, Option<String>)> {
    crate::cmd::compile::parse_define(s).map_err(|e| anyhow::anyhow!("-D {s}: {e}"))
}

/// The PTX text of the input: read, or compiled from CUDA.
fn ptx_of(args: &Args) -> Result<String> {
    let ext = args
        .input
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    match ext {
        "ptx" => {
            if !args.define.is_empty() || !args.include.is_empty() {
                bail!(
                    "-D and -I apply to .cu inputs; {} is PTX",
                    args.input.display()
                );
            }
            std::fs::read_to_string(&args.input)
                .with_context(|| format!("cannot read {}", args.input.display()))
        }
        "cu" => {
            let source = std::fs::read_to_string(&args.input)
                .with_context(|| format!("cannot read {}", args.input.display()))?;
            let mut req = CompileRequest::new(source, args.input.display().to_string());
            req.arch = args.arch.clone();
            req.defines = args
                .define
                .iter()
                .map(|d| parse_define(d))
                .collect::<Result<_>>()?;
            let own_dir = match args.input.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            req.include_dirs = std::iter::once(own_dir)
                .chain(args.include.iter().cloned())
                .collect();
            for option in &args.nvrtc_option {
                req.extra_options.push(expand_placeholders(option)?);
            }
            let compiled = compile_with_cache(&req, PtxCache::from_env().as_ref())?;
            if !compiled.log.trim().is_empty() && !args.json {
                eprint!("{}", compiled.log);
            }
            Ok(compiled.ptx)
        }
        _ => bail!("{}: expected a .ptx or .cu file", args.input.display()),
    }
}

fn arg_specs(args: &Args) -> Result<Vec<ArgSpec>> {
    let mut specs: Vec<ArgSpec> = Vec::new();
    for a in &args.args {
        for s in argspec::parse_args(a).with_context(|| format!("--arg '{a}'"))? {
            if specs.iter().any(|x| x.name() == s.name()) {
                bail!("--arg '{a}': the name `{}` is used twice", s.name());
            }
            specs.push(s);
        }
    }
    let buffers: Vec<&str> = specs
        .iter()
        .filter(|s| matches!(s, ArgSpec::Buffer(_)))
        .map(|s| s.name())
        .collect();
    for name in args.print.iter().chain(args.save.iter().map(|(n, _)| n)) {
        if !buffers.contains(&name.as_str()) {
            bail!(
                "no buffer named `{name}` to print or save (buffers: {})",
                if buffers.is_empty() {
                    "none".to_string()
                } else {
                    buffers.join(", ")
                }
            );
        }
    }
    Ok(specs)
}

pub fn run(args: Args) -> Result<u8> {
    let specs = arg_specs(&args)?;
    let ptx = ptx_of(&args)?;
    let file = args.input.display().to_string();
    let module = fencehound_ptx::parse(&file, &ptx).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut dev = Device::new();
    let m = dev
        .load_module(&module)
        .map_err(|e| anyhow::anyhow!("cannot run {file}: {e}"))?;
    let kernels: Vec<String> = dev
        .program(m)
        .map(|p| {
            p.funcs
                .iter()
                .filter(|f| f.is_kernel)
                .map(|f| f.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let kernel = match (&args.kernel, kernels.as_slice()) {
        (Some(k), _) => k.clone(),
        (None, [only]) => only.clone(),
        (None, []) => bail!("{file} has no kernel (.entry)"),
        (None, many) => bail!(
            "{file} has {} kernels; choose one with --kernel ({})",
            many.len(),
            many.join(", ")
        ),
    };
    let bound = argspec::bind(&mut dev, &specs)?;
    let mut sched = args.scheduler.build(args.seed);
    let scheduler = sched.describe();
    let deadline = match args.time_limit {
        Some(s) if s.is_finite() && s >= 0.0 => {
            Some(Instant::now() + Duration::from_secs_f64(s.min(1e9)))
        }
        Some(s) => bail!("--time-limit {s}: expected a non-negative number of seconds"),
        None => None,
    };
    let result = dev
        .launch_with_stop(
            m,
            &kernel,
            args.grid,
            args.block,
            args.dynamic_shared,
            &bound.args,
            LaunchOptions {
                fuel: args.fuel,
                ..Default::default()
            },
            Stop {
                deadline,
                cancel: None,
            },
            &mut NoHooks,
            &mut sched,
        )
        .with_context(|| format!("cannot launch `{kernel}`"))?;
    let buffers = bound.read_all(&dev)?;
    for (name, path) in &args.save {
        if let Some(b) = buffers.iter().find(|b| &b.name == name) {
            super::write_atomically(path, &b.bytes)?;
        }
    }
    let report = Report {
        file: &file,
        kernel: &kernel,
        args: &args,
        scheduler: &scheduler,
        result: &result,
        buffers: &buffers,
    };
    let text = if args.json {
        let mut s = report.json().to_string();
        s.push('\n');
        s
    } else {
        report.text()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot write to stdout")?,
    }
    Ok(if result.outcome.is_completed() {
        crate::exit::OK
    } else {
        crate::exit::FOUND
    })
}

struct Report<'a> {
    file: &'a str,
    kernel: &'a str,
    args: &'a Args,
    scheduler: &'a str,
    result: &'a LaunchResult,
    buffers: &'a [HostBuffer],
}

fn outcome_kind(o: &LaunchOutcome) -> &'static str {
    match o {
        LaunchOutcome::Completed => "completed",
        LaunchOutcome::Fault(_) => "fault",
        LaunchOutcome::Trap(_) => "trap",
        LaunchOutcome::Deadlock(_) => "deadlock",
        LaunchOutcome::Timeout(_) => "timeout",
    }
}

fn site_json(s: &SiteInfo) -> Value {
    json!({
        "location": s.location(),
        "cuda_file": s.cuda.as_ref().map(|c| c.file.clone()),
        "cuda_line": s.cuda.as_ref().map(|c| c.line),
        "ptx_line": s.ptx_line,
        "function": s.function,
        "instruction": s.text,
    })
}

impl Report<'_> {
    fn chosen(&self) -> Vec<&HostBuffer> {
        if self.args.print.is_empty() {
            self.buffers.iter().collect()
        } else {
            self.args
                .print
                .iter()
                .filter_map(|n| self.buffers.iter().find(|b| &b.name == n))
                .collect()
        }
    }

    fn text(&self) -> String {
        let r = self.result;
        let mut s = format!(
            "{} `{}` grid {} block {} on {}\n",
            Path::new(self.file)
                .file_name()
                .map_or(self.file.into(), |f| f.to_string_lossy()),
            self.kernel,
            self.args.grid,
            self.args.block,
            self.scheduler
        );
        let stats = format!(
            "{} lane instructions, {} warp instructions, {} scheduling steps",
            r.stats.lane_instructions, r.stats.warp_instructions, r.stats.steps
        );
        match &r.outcome {
            LaunchOutcome::Completed => s += &format!("completed ({stats})\n"),
            LaunchOutcome::Fault(f) => s += &format!("FAULT: {f}\n"),
            LaunchOutcome::Trap(t) => {
                s += &format!(
                    "TRAP at {}: `{}`\n  {}\n",
                    t.site.location(),
                    t.site.text,
                    t.message
                )
            }
            LaunchOutcome::Deadlock(d) => {
                s += &format!("DEADLOCK: {}; unfinished warps:\n", d.cause.describe());
                s += &d.to_string();
            }
            LaunchOutcome::Timeout(d) => {
                s += &format!("TIMEOUT after {stats}; unfinished warps:\n");
                s += &d.to_string();
            }
        }
        if !r.stdout.is_empty() {
            s += "--- printf output ---\n";
            s += &r.stdout;
            if !r.stdout.ends_with('\n') {
                s.push('\n');
            }
            s += "---\n";
        }
        let limit = if self.args.print.is_empty() {
            Some(PREVIEW)
        } else {
            None
        };
        for b in self.chosen() {
            s += &b.format(limit);
            s.push('\n');
        }
        s
    }

    fn json(&self) -> Value {
        let r = self.result;
        let outcome = match &r.outcome {
            LaunchOutcome::Completed => json!({ "kind": "completed" }),
            LaunchOutcome::Fault(f) => json!({
                "kind": "fault",
                "fault": f.kind.to_string(),
                "message": f.message,
                "block_idx": f.block_idx,
                "thread_idx": f.thread_idx,
                "site": site_json(&f.site),
                "text": f.to_string(),
            }),
            LaunchOutcome::Trap(t) => json!({
                "kind": "trap",
                "message": t.message,
                "thread": { "cta": t.thread.cta, "tid": t.thread.tid },
                "site": site_json(&t.site),
            }),
            LaunchOutcome::Deadlock(d) | LaunchOutcome::Timeout(d) => {
                let warps: Vec<Value> = d
                    .warps
                    .iter()
                    .map(|w| {
                        json!({
                            "warp": w.warp,
                            "block_idx": w.block_idx,
                            "groups": w.groups.iter().map(|(mask, what, site)| json!({
                                "lanes": format!("{mask:#010x}"),
                                "state": what,
                                "site": site_json(site),
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                json!({ "kind": outcome_kind(&r.outcome), "warps": warps })
            }
        };
        let buffers: Vec<Value> = self
            .chosen()
            .iter()
            .map(|b| serde_json::from_str(&b.to_json()).unwrap_or(Value::Null))
            .collect();
        json!({
            "file": self.file,
            "kernel": self.kernel,
            "grid": [self.args.grid.x, self.args.grid.y, self.args.grid.z],
            "block": [self.args.block.x, self.args.block.y, self.args.block.z],
            "dynamic_shared": self.args.dynamic_shared,
            "scheduler": self.scheduler,
            "seed": self.args.seed,
            "outcome": outcome,
            "stats": {
                "lane_instructions": r.stats.lane_instructions,
                "warp_instructions": r.stats.warp_instructions,
                "steps": r.stats.steps,
            },
            "stdout": r.stdout,
            "buffers": buffers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencehound_argspec::json_string;

    #[test]
    fn value_parsers() {
        assert_eq!(parse_dim("2,3").unwrap(), Dim3::new(2, 3, 1));
        assert!(parse_dim("0").is_err());
        assert_eq!(
            parse_save("out=o.bin").unwrap(),
            ("out".to_string(), PathBuf::from("o.bin"))
        );
        assert!(parse_save("out").is_err());
        assert!(parse_save("=x").is_err());
        assert_eq!(
            parse_scheduler("pct:2").unwrap(),
            SchedulerKind::Pct { depth: 2 }
        );
        assert!(parse_scheduler("fifo").is_err());
        assert!(parse_define("1X").is_err());
        assert_eq!(
            parse_define("N=4").unwrap(),
            ("N".to_string(), Some("4".to_string()))
        );
        // json_string is what buffer names go through.
        assert_eq!(json_string("a\"b"), "\"a\\\"b\"");
    }
}
