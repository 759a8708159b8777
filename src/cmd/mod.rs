pub mod compile;
pub mod demo;
pub mod diff;
pub mod exec;
pub mod fuzz;
pub mod instrument;
pub mod litmus;
pub mod merge;
pub mod minimize;
pub mod nvcc;
pub mod ptx;
pub mod race;
pub mod report;
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

/// Writes a SARIF 2.1.0 log (`--sarif FILE`) filled by `fill`, with paths relative to the
/// working directory (a CI checkout's root). Nothing happens without a path.
pub fn write_sarif(
    path: Option<&Path>,
    fill: impl FnOnce(&mut fencehound_export::SarifLog),
) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let base = std::env::current_dir().context("cannot read the working directory")?;
    let mut log = fencehound_export::SarifLog::new(&base);
    fill(&mut log);
    let text = log.to_json().context("cannot serialise the SARIF log")?;
    create_parent(path)?;
    write_atomically(path, text.as_bytes())
}

/// Creates the directory a file goes in.
pub fn create_parent(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    Ok(())
}
