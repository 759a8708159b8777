//! `fencehound merge`: shard reports of one run into the report of the whole run.

use crate::cmd::fuzz;
use anyhow::{Context, Result};
use fencehound_fuzzer::lock::{LockError, ReportLock};
use fencehound_fuzzer::Report;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The shard reports (`fuzz --shard I/N`), one per shard, in any order.
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// The merged report.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Exit 0 when every variant behaves as its `expect` says, 1 otherwise.
    #[arg(long)]
    pub check_expect: bool,
    /// Print the summary as JSON on standard output instead of the table.
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write failing variants and races as SARIF 2.1.0 (for code scanning).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write JUnit XML: one test case per variant × model.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<u8> {
    let mut parts = Vec::new();
    // A report a live run still writes is not finished: refuse it rather than merge a
    // snapshot. The locks are held until the merged report is written.
    let mut locks = Vec::new();
    let mut locked = std::collections::BTreeSet::new();
    for p in &a.reports {
        // A file named twice is locked once (and then refused as a duplicate shard).
        let canonical = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if !locked.insert(canonical) {
            parts.push(Report::read(p).map_err(anyhow::Error::msg)?);
            continue;
        }
        match ReportLock::try_acquire(p) {
            Ok(l) => locks.push(l),
            Err(e @ LockError::Held { .. }) => {
                anyhow::bail!("{e}; merge it once that run has finished")
            }
            Err(e) => return Err(e.into()),
        }
        parts.push(Report::read(p).map_err(anyhow::Error::msg)?);
    }
    let merged = Report::merge(parts).context("cannot merge these reports")?;
    if let Some(dir) = a.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    merged
        .write(&a.output)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    drop(locks);
    let mism = merged.expectation_mismatches();
    let found = merged.failed() || !merged.races.is_empty();
    let (complete, interrupted) = (merged.complete(), merged.interrupted);
    let (done, planned) = (merged.executions_done, merged.executions_planned);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "campaign": merged.campaign.name, "report": a.output, "summary": merged.summary,
                "failures_total": merged.failure_count(), "signatures": merged.signatures.len(),
                "expectation_mismatches": mism, "interrupted": merged.interrupted,
                "executions": merged.executions_done, "executions_planned": merged.executions_planned,
            }))?
        );
    } else if !a.quiet {
        fuzz::print_report(&merged, &a.output, &mism);
    }
    if !a.quiet && !complete {
        eprintln!(
            "note: {done} of {planned} executions are done (some shard did not finish); `fencehound fuzz --resume {}` runs the rest",
            a.output.display()
        );
    }
    fuzz::publish(
        &[(merged, a.output.clone())],
        a.sarif.as_deref(),
        a.junit.as_deref(),
    )?;
    Ok(match (a.check_expect, found, interrupted) {
        (true, _, _) if !mism.is_empty() => 1,
        (true, _, true) => fuzz::INTERRUPTED,
        (true, _, false) => 0,
        (false, true, _) => 1,
        (false, false, true) => fuzz::INTERRUPTED,
        (false, false, false) => 0,
    })
}
