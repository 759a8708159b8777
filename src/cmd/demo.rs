//! `fencehound demo`.
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<u8> {
    anyhow::bail!("demo: not yet implemented")
}
