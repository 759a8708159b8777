//! `fencehound compile`: CUDA → PTX with NVRTC, always with line info.
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fencehound_toolchain::{
    compile_with_cache, expand_placeholders, CompileRequest, PtxCache, DEFAULT_ARCH,
};

#[derive(clap::Args)]
pub struct Args {
    /// The CUDA source file.
    pub input: PathBuf,
    /// Define a macro: -D NAME or -D NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define)]
    pub define: Vec<(String, Option<String>)>,
    /// Add an include directory, searched after the input's own directory (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Virtual architecture to compile for (compute_75 or newer).
    #[arg(long, default_value = DEFAULT_ARCH)]
    pub arch: String,
    /// Write the PTX here (atomically) instead of to stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Pass an option to NVRTC as is, after -D and -I (repeatable), e.g.
    /// `--nvrtc-option=-use_fast_math`. `$NVRTC_BUNDLED_HEADERS` and `$CCCL_INCLUDE` are
    /// expanded as in corpus headers (kernels/README.md).
    #[arg(long = "nvrtc-option", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_option: Vec<String>,
    /// Neither read nor write the PTX cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// `NAME` or `NAME=VALUE` of a `-D` option (also used by `run-kernel`).
pub fn parse_define(s: &str) -> Result<(String, Option<String>), String> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (s, None),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!("`{name}` is not a macro name"));
    }
    Ok((name.to_string(), value))
}

/// The NVRTC request for CUDA file `input` (text `source`): what `compile` and
/// `instrument` take from their command lines. The input's own directory is searched
/// first, so `#include "x.h"` next to the kernel works as it does with nvcc; NVRTC options
/// get `$NVRTC_BUNDLED_HEADERS` and `$CCCL_INCLUDE` expanded.
pub fn request(
    input: &Path,
    source: String,
    arch: &str,
    defines: &[(String, Option<String>)],
    include: &[PathBuf],
    nvrtc_options: &[String],
) -> Result<CompileRequest> {
    let mut req = CompileRequest::new(source, input.display().to_string());
    req.arch = arch.to_string();
    req.defines = defines.to_vec();
    let own_dir = match input.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    req.include_dirs = std::iter::once(own_dir)
        .chain(include.iter().cloned())
        .collect();
    for option in nvrtc_options {
        req.extra_options.push(expand_placeholders(option)?);
    }
    Ok(req)
}

pub fn run(args: Args) -> Result<u8> {
    let source = std::fs::read_to_string(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    let req = request(
        &args.input,
        source,
        &args.arch,
        &args.define,
        &args.include,
        &args.nvrtc_option,
    )?;

    let cache = if args.no_cache {
        None
    } else {
        PtxCache::from_env()
    };
    let compiled = compile_with_cache(&req, cache.as_ref())?;
    if !compiled.log.trim().is_empty() {
        eprint!("{}", compiled.log);
    }
    match &args.output {
        Some(path) => write_atomically(path, compiled.ptx.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            match out
                .write_all(compiled.ptx.as_bytes())
                .and_then(|()| out.flush())
            {
                // The reader (`| head`) has seen all it wanted.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => other.context("cannot write the PTX to stdout")?,
            }
        }
    }
    Ok(crate::exit::OK)
}

/// Writes to a temporary file beside `path`, then renames it over `path`, so a reader
/// never sees a partial file and an interrupted run leaves the old one intact.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
