//! `fencehound ptx fmt|check`.
use anyhow::Result;

#[derive(clap::Subcommand)]
pub enum PtxCommand {
    /// Print the parsed module back as PTX.
    Fmt { input: std::path::PathBuf },
}

pub fn run(_c: PtxCommand) -> Result<u8> {
    anyhow::bail!("ptx: not yet implemented")
}
