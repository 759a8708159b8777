//! `fencehound instrument`: the PTX→PTX rewrite that puts the write buffers into the
//! kernel (what the GPU backend loads), for users and CI to read and assemble.
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};
use fencehound_handlers::Model;
use fencehound_toolchain::{compile_with_cache, CompileRequest, PtxCache, DEFAULT_ARCH};

#[derive(clap::Args)]
pub struct Args {
    /// A PTX file, or a CUDA file (compiled with NVRTC first).
    pub input: PathBuf,
    /// The write-buffer model the output is for: bugaroo or scoped (`weak` has no
    /// device-side implementation; `sc` buffers nothing).
    #[arg(long)]
    pub model: String,
    /// Write the instrumented PTX here (atomically) instead of to stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// For a CUDA input: define a macro, -D NAME or -D NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = super::compile::parse_define)]
    pub define: Vec<(String, Option<String>)>,
    /// For a CUDA input: the virtual architecture (compute_75 or newer).
    #[arg(long, default_value = DEFAULT_ARCH)]
    pub arch: String,
    /// Emit the lockstep flavour the differential test runs on the virtual GPU (lanes of a
    /// block one at a time, between markers) instead of the device flavour.
    #[arg(long, hide = true)]
    pub lockstep: bool,
}

fn check_model(name: &str) -> Result<Model> {
    let Some(model) = Model::parse(name) else {
        bail!("unknown model `{name}` (bugaroo, scoped)");
    };
    if !rewrite::layout::has_device_model(model) {
        bail!(
            "the `{name}` model has no device-side implementation: its loads may read older \
             values, which needs per-location store histories that the rewrite does not keep. \
             It runs on the virtual GPU only (`fencehound fuzz --model {name}`)"
        );
    }
    if model == Model::Sc {
        bail!("the `sc` model buffers nothing: the original PTX is its instrumented form");
    }
    Ok(model)
}

fn read_input(args: &Args) -> Result<(String, String)> {
    let name = args.input.display().to_string();
    let text = std::fs::read_to_string(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    if args.input.extension().and_then(|e| e.to_str()) != Some("cu") {
        return Ok((name, text));
    }
    let mut req = CompileRequest::new(text, name.clone());
    req.arch = args.arch.clone();
    req.defines = args.define.clone();
    req.include_dirs = vec![match args.input.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }];
    let compiled = compile_with_cache(&req, PtxCache::from_env().as_ref())?;
    if !compiled.log.trim().is_empty() {
        eprint!("{}", compiled.log);
    }
    Ok((name, compiled.ptx))
}

pub fn run(args: Args) -> Result<u8> {
    let model = check_model(&args.model)?;
    let (name, ptx) = read_input(&args)?;
    let module = fencehound_ptx::parse(&name, &ptx)?;
    let flavor = if args.lockstep {
        Flavor::Lockstep
    } else {
        Flavor::Device
    };
    let rw = rewrite::rewrite(&module, &RewriteOptions { flavor })
        .with_context(|| format!("cannot instrument {name}"))?;
    let c = rw.counts;
    let mut text = format!(
        "// Instrumented by fencehound {} for the `{}` write-buffer model: {} loads, {} stores,\n\
         // {} atomics and {} fences/barriers/exits call the device runtime (__fencehound_*).\n\
         // Before each launch the host points `{}` at a control block (model, p_w, seed,\n\
         // launch index, buffer memory): see handlers/src/rewrite/layout.rs.\n",
        env!("CARGO_PKG_VERSION"),
        model.name(),
        c.loads,
        c.stores,
        c.atomics,
        c.drains,
        rewrite::CTL
    );
    text.push_str(&fencehound_ptx::print(&rw.module));
    match &args.output {
        Some(path) => super::write_atomically(path, text.as_bytes())?,
        None => write_stdout(&text)?,
    }
    eprintln!(
        "instrumented {name}: {} loads, {} stores, {} atomics, {} drain points{}",
        c.loads,
        c.stores,
        c.atomics,
        c.drains,
        args.output
            .as_deref()
            .map(|p: &Path| format!(" → {}", p.display()))
            .unwrap_or_default()
    );
    Ok(crate::exit::OK)
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write the PTX to stdout"),
    }
}
