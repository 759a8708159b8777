//! `fencehound ptx fmt|check`: print a parsed module back as PTX; report parse errors.
use crate::exit::{Exit, FOUND, OK};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum PtxCommand {
    /// Print the parsed module back as PTX (canonical form; ptxas accepts it).
    Fmt {
        /// The PTX file (`-` for standard input).
        input: PathBuf,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Report parse errors and constructs the vgpu cannot execute.
    Check {
        /// PTX files (`-` for standard input).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

pub fn read_input(path: &Path) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .context("reading standard input")?;
        return Ok(s);
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}

pub fn run(c: PtxCommand) -> Result<u8> {
    match c {
        PtxCommand::Fmt { input, output } => {
            let src = read_input(&input)?;
            let module = fencehound_ptx::parse(&input.display().to_string(), &src)?;
            let text = fencehound_ptx::print(&module);
            match output {
                Some(path) => crate::cmd::write_atomically(&path, text.as_bytes())?,
                None => print!("{text}"),
            }
            Ok(OK)
        }
        PtxCommand::Check { inputs, json } => {
            let mut reports = Vec::new();
            let mut bad = false;
            for input in &inputs {
                let name = input.display().to_string();
                let src = match read_input(input) {
                    Ok(s) => s,
                    Err(e) => return Err(e),
                };
                match fencehound_ptx::parse(&name, &src) {
                    Ok(m) => {
                        let kernels: Vec<String> = m.kernels().map(|k| k.name.clone()).collect();
                        let instructions: usize = m
                            .functions()
                            .filter_map(|f| f.body.as_deref())
                            .map(|b| fencehound_ptx::Module::instructions(b).len())
                            .sum();
                        if !json {
                            println!(
                                "{name}: ok ({} kernel(s): {}; {instructions} instructions)",
                                kernels.len(),
                                kernels.join(", ")
                            );
                        }
                        reports.push(serde_json::json!({
                            "file": name, "ok": true, "kernels": kernels,
                            "instructions": instructions, "errors": [],
                        }));
                    }
                    Err(e) => {
                        bad = true;
                        if !json {
                            eprintln!("{e}");
                        }
                        reports.push(serde_json::json!({
                            "file": name, "ok": false,
                            "errors": [{
                                "line": e.line, "col": e.col, "message": e.message,
                                "found": e.found,
                            }],
                        }));
                    }
                }
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&reports)?);
            }
            if bad {
                // Input errors: exit 2, after printing every file's result.
                return Err(Exit(2).into());
            }
            Ok(OK)
        }
    }
}

#[allow(dead_code)]
const _: u8 = FOUND;
