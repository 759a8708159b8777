//! `fencehound compile`.
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The CUDA source file.
    pub input: std::path::PathBuf,
}

pub fn run(_args: Args) -> Result<u8> {
    anyhow::bail!("compile: not yet implemented")
}
