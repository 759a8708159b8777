//! `fencehound nvcc ARGS…`: the toolchain's nvcc with the paths it needs, plus
//! `-cudart shared -lineinfo` unless the arguments decide those (see
//! `fencehound_toolchain::default_nvcc_options`): a program built this way runs under
//! `fencehound exec`.

use anyhow::{Context, Result};
use std::process::ExitStatus;

#[derive(clap::Args)]
pub struct Args {
    /// Everything nvcc gets (after the added defaults).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub args: Vec<String>,
}

/// 0 when nvcc succeeded; 2 (an input error) when it failed (its messages are on stderr)
/// or the toolchain cannot build anything.
pub fn run(a: Args) -> Result<u8> {
    let tc = fencehound_toolchain::find_nvcc()?;
    let missing = tc.missing();
    if !missing.is_empty() {
        anyhow::bail!(
            "nvcc at {} cannot build programs here; missing:\n  - {}\n{}",
            tc.nvcc.path.display(),
            missing.join("\n  - "),
            fencehound_toolchain::NVCC_INSTALL_HINT
        );
    }
    let status: ExitStatus = fencehound_toolchain::nvcc_command(&tc, &a.args)
        .status()
        .with_context(|| format!("cannot run {}", tc.nvcc.path.display()))?;
    Ok(if status.success() {
        crate::exit::OK
    } else {
        crate::exit::INPUT
    })
}
