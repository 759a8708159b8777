//! `fencehound diff OLD NEW`: what got better or worse from one night to the next.

use anyhow::Result;
use fencehound_fuzzer::Report;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier report.
    pub old: PathBuf,
    /// The later report.
    pub new: PathBuf,
    /// Print the differences as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Exit 1 when something got worse, 0 otherwise.
pub fn run(a: Args) -> Result<u8> {
    let old = Report::read(&a.old).map_err(anyhow::Error::msg)?;
    let new = Report::read(&a.new).map_err(anyhow::Error::msg)?;
    let d = fencehound_fuzzer::diff::diff(&old, &new);
    if a.json {
        let mut v = serde_json::to_value(&d)?;
        v["worse"] = serde_json::json!(d.worse());
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{d}");
    }
    Ok(if d.worse() { 1 } else { 0 })
}
