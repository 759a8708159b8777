//! `fencehound ptx fmt|check`: print a parsed module back as PTX; report parse errors.
use crate::exit::{FOUND, INPUT, OK};
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
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .context("reading standard input")?;
        b
    } else {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        let (line, col) = position_of(e.as_bytes(), e.utf8_error().valid_up_to());
        let byte = e.as_bytes()[e.utf8_error().valid_up_to()];
        anyhow::Error::new(NotUtf8 {
            file: path.display().to_string(),
            line,
            col,
            byte,
        })
    })
}

/// Where a non-UTF-8 byte sits, for `ptx check --json`.
#[derive(Debug)]
struct NotUtf8 {
    file: String,
    line: usize,
    col: usize,
    byte: u8,
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: not UTF-8 text (byte 0x{:02x})",
            self.file, self.line, self.col, self.byte
        )
    }
}

impl std::error::Error for NotUtf8 {}

/// 1-based line and column (in characters) of byte `at`; `bytes[..at]` is valid UTF-8.
fn position_of(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
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
                    Err(e) => {
                        // Reported like a parse error, so every file still gets a result.
                        bad = true;
                        let at = e.downcast_ref::<NotUtf8>();
                        if !json {
                            eprintln!("error: {e:#}");
                        }
                        reports.push(serde_json::json!({
                            "file": name, "ok": false,
                            "errors": [{
                                "line": at.map(|p| p.line), "col": at.map(|p| p.col),
                                "message": format!("{e:#}"), "found": null,
                            }],
                        }));
                        continue;
                    }
                };
                match fencehound_ptx::parse(&name, &src) {
                    Ok(m) => {
                        let kernels: Vec<String> = m.kernels().map(|k| k.name.clone()).collect();
                        let instructions: usize = m
                            .functions()
                            .filter_map(|f| f.body.as_deref())
                            .map(|b| fencehound_ptx::Module::instructions(b).len())
                            .sum();
                        // Valid PTX the vgpu cannot run is listed, not an input error:
                        // the file is fine for a real GPU.
                        let unsupported: Vec<String> = fencehound_vgpu::Device::check_module(&m)
                            .iter()
                            .map(|e| e.to_string())
                            .collect();
                        if !json {
                            println!(
                                "{name}: ok ({} kernel(s): {}; {instructions} instructions)",
                                kernels.len(),
                                kernels.join(", ")
                            );
                            if !unsupported.is_empty() {
                                println!(
                                    "{name}: the vgpu cannot run {} construct(s):",
                                    unsupported.len()
                                );
                                for u in &unsupported {
                                    println!("  {u}");
                                }
                            }
                        }
                        reports.push(serde_json::json!({
                            "file": name, "ok": true, "kernels": kernels,
                            "instructions": instructions, "errors": [],
                            "vgpu_unsupported": unsupported,
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
                // Input errors: exit 2, after printing every file's result (the messages
                // are out already; no extra "error:" line).
                return Ok(INPUT);
            }
            Ok(OK)
        }
    }
}

#[allow(dead_code)]
const _: u8 = FOUND;
