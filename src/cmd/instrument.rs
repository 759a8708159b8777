//! `fencehound instrument`: the PTX→PTX rewrite that puts the write buffers into the
//! kernel (what the GPU backend loads), for users and CI to read and assemble.
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use fencehound_fuzzer::backend::instrumented::{cap_registers, KernelCap};
use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};
use fencehound_handlers::Model;
use fencehound_toolchain::{compile_with_cache, PtxCache, DEFAULT_ARCH};

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
    /// For a CUDA input: add an include directory, searched after the input's own
    /// directory (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// For a CUDA input: pass an option to NVRTC as is (repeatable), as `fencehound
    /// compile --nvrtc-option` does, e.g. `--nvrtc-option=--device-int128`
    /// (`$NVRTC_BUNDLED_HEADERS` and `$CCCL_INCLUDE` are expanded).
    #[arg(long = "nvrtc-option", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_option: Vec<String>,
    /// For a CUDA input: the virtual architecture (compute_75 or newer). Also the GPU
    /// ptxas measures registers for when capping them (compute_80 is measured as sm_80).
    #[arg(long, default_value = DEFAULT_ARCH)]
    pub arch: String,
    /// Cap every kernel at its original register count + N, or `none` for no cap.
    /// Default: 16 when ptxas is found (else no cap, with a warning). ptxas (from the
    /// toolchain) measures the original PTX; the instrumented kernels get `.maxnreg` and
    /// call the runtime through indirect calls, so the runtime's functions fit the cap by
    /// spilling inside themselves (they run on the slow paths only: selected stores, loads
    /// while the thread holds entries, drains). The result is assembled again and each
    /// kernel's registers and spills are printed. Uncapped, the kernels take 50–91
    /// registers more than the originals (ptxas merges the runtime's registers into each
    /// kernel); capped, 16 more and some spill bytes (BENCHMARKS.md, issue 25).
    #[arg(long, value_name = "N|none", value_parser = parse_extra_registers)]
    pub max_extra_registers: Option<ExtraRegisters>,
    /// Emit the lockstep flavour the differential test runs on the virtual GPU (lanes of a
    /// block one at a time, between markers) instead of the device flavour.
    #[arg(long, hide = true)]
    pub lockstep: bool,
}

/// `--max-extra-registers`: a cap over the original register count, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraRegisters {
    Uncapped,
    Cap(u32),
}

/// The cap a GPU user gets unless they ask otherwise: issue 25's bound, "≤ 16 extra
/// registers per thread". Capped, the slow paths spill instead (the per-kernel spill
/// bytes are in BENCHMARKS.md and `fuzzer --example overhead`'s table).
pub const DEFAULT_EXTRA_REGISTERS: u32 = 16;

pub fn parse_extra_registers(s: &str) -> std::result::Result<ExtraRegisters, String> {
    if s == "none" {
        return Ok(ExtraRegisters::Uncapped);
    }
    s.parse()
        .map(ExtraRegisters::Cap)
        .map_err(|_| format!("`{s}` is not a number of registers (or `none`)"))
}

/// The cap to apply: the one asked for; by default [`DEFAULT_EXTRA_REGISTERS`] when
/// ptxas can measure the original kernels, else none, with a warning on stderr
/// (`warn`): an instrumented module that ptxas never saw is still what the rewrite
/// produces, and `--max-extra-registers none` says it on purpose.
pub fn resolve_extra_registers(given: Option<ExtraRegisters>, warn: bool) -> Option<u32> {
    match given {
        Some(ExtraRegisters::Cap(n)) => Some(n),
        Some(ExtraRegisters::Uncapped) => None,
        None => match fencehound_toolchain::find_ptxas() {
            Ok(_) => Some(DEFAULT_EXTRA_REGISTERS),
            Err(e) => {
                if warn {
                    eprintln!(
                        "warning: registers not capped: the default cap (original count + \
                         {DEFAULT_EXTRA_REGISTERS}) needs ptxas to measure the original \
                         kernels ({e}); uncapped, an instrumented kernel takes 50–91 \
                         registers more. `--max-extra-registers none` silences this"
                    );
                }
                None
            }
        },
    }
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
    let req = super::compile::request(
        &args.input,
        text,
        &args.arch,
        &args.define,
        &args.include,
        &args.nvrtc_option,
    )?;
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
    let mut rw = rewrite::rewrite(
        &module,
        &RewriteOptions {
            flavor,
            // The output is for this model alone (its header comment says so).
            model: Some(model),
            ..Default::default()
        },
    )
    .with_context(|| format!("cannot instrument {name}"))?;
    let extra = match args.max_extra_registers {
        Some(ExtraRegisters::Cap(_)) if args.lockstep => {
            bail!("--max-extra-registers is for the device flavour, not --lockstep")
        }
        _ if args.lockstep => None,
        given => resolve_extra_registers(given, true),
    };
    let caps = match extra {
        Some(n) => Some(
            cap_registers(&module, &mut rw.module, n, &args.arch)
                .map_err(anyhow::Error::msg)
                .with_context(|| {
                    format!("capping registers (--max-extra-registers {n}) on {name}")
                })?,
        ),
        None => None,
    };
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
    if let Some(caps) = &caps {
        let _ = writeln!(
            text,
            "// Registers capped at the original count + {} (ptxas -v, {}): {}.",
            extra.unwrap_or(0),
            args.arch,
            caps.iter()
                .map(|c| format!("{} {} -> .maxnreg {}", c.kernel, c.original, c.cap))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if caps.is_none() && !args.lockstep {
        text.push_str(
            "// Registers not capped: ptxas gives each kernel its own registers plus the runtime's.\n",
        );
    }
    let printed = fencehound_ptx::print(&rw.module);
    text.push_str(&printed);
    if let Some(caps) = &caps {
        report_caps(caps, &printed, &args.arch)?;
    }
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

/// Assembles the capped module and prints each kernel's registers and spills.
fn report_caps(caps: &[KernelCap], ptx: &str, arch: &str) -> Result<()> {
    let usage = fencehound_toolchain::resource_usage(ptx, arch)
        .context("ptxas rejected the register-capped PTX")?;
    for c in caps {
        let Some(u) = usage.iter().find(|u| u.entry && u.name == c.kernel) else {
            continue;
        };
        eprintln!(
            "{}: {} registers originally, {} instrumented (cap {}); {} B spill stores, {} B spill loads in the kernel",
            c.kernel, c.original, u.registers, c.cap, u.spill_stores, u.spill_loads
        );
    }
    Ok(())
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write the PTX to stdout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_registers_parse_and_resolve() {
        assert_eq!(parse_extra_registers("16"), Ok(ExtraRegisters::Cap(16)));
        assert_eq!(parse_extra_registers("0"), Ok(ExtraRegisters::Cap(0)));
        assert_eq!(parse_extra_registers("none"), Ok(ExtraRegisters::Uncapped));
        for bad in ["", "-1", "16.5", "None", "sixteen"] {
            assert!(parse_extra_registers(bad).is_err(), "{bad}");
        }
        // What is asked for wins whether or not ptxas is there.
        assert_eq!(
            resolve_extra_registers(Some(ExtraRegisters::Cap(8)), false),
            Some(8)
        );
        assert_eq!(
            resolve_extra_registers(Some(ExtraRegisters::Uncapped), false),
            None
        );
        // The default follows ptxas (the CLI test runs it without one too).
        assert_eq!(
            resolve_extra_registers(None, false),
            fencehound_toolchain::find_ptxas()
                .ok()
                .map(|_| DEFAULT_EXTRA_REGISTERS)
        );
    }
}
