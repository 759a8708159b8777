//! `fencehound report REPORT -o report.html`: the report as one self-contained HTML page.

use anyhow::{Context, Result};
use fencehound_fuzzer::Report;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A fuzz (or merged) report.
    pub report: PathBuf,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Missing fences found by `fencehound minimize --json > FILE` (repeatable).
    #[arg(long, value_name = "FILE")]
    pub minimize: Vec<PathBuf>,
    /// Fence verdicts from `fencehound audit --json > FILE` (repeatable).
    #[arg(long, value_name = "FILE")]
    pub audit: Vec<PathBuf>,
}

fn read_json<T: serde::de::DeserializeOwned>(p: &PathBuf, what: &str) -> Result<T> {
    let text =
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not the JSON output of `fencehound {what} --json`",
            p.display()
        )
    })
}

pub fn run(a: Args) -> Result<u8> {
    let report = Report::read(&a.report).map_err(anyhow::Error::msg)?;
    let minimize: Vec<fencehound_minimizer::MinimizeReport> = a
        .minimize
        .iter()
        .map(|p| read_json(p, "minimize"))
        .collect::<Result<_>>()?;
    let audit: Vec<fencehound_minimizer::AuditReport> = a
        .audit
        .iter()
        .map(|p| read_json(p, "audit"))
        .collect::<Result<_>>()?;
    let html = fencehound_export::html::render(&fencehound_export::html::HtmlInputs {
        report: &report,
        report_path: &a.report,
        minimize: &minimize,
        audit: &audit,
    })?;
    crate::cmd::create_parent(&a.output)?;
    crate::cmd::write_atomically(&a.output, html.as_bytes())?;
    println!("{}", a.output.display());
    Ok(0)
}
