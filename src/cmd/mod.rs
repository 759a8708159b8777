pub mod compile;
pub mod demo;
pub mod fuzz;
pub mod instrument;
pub mod litmus;
pub mod minimize;
pub mod ptx;
pub mod race;
pub mod run_kernel;
pub mod toolchain;

use anyhow::{Context, Result};
use std::path::Path;

/// Writes a file so that readers see either the old or the new contents, never half.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
