//! Running ptxas: the authority on whether a PTX text is valid for a real GPU.

use std::path::Path;
use std::process::Command;

use crate::discover::find_ptxas;
use crate::error::{PtxasError, ToolchainError};

/// Assembles `ptx` for `arch` (`sm_80`; `compute_80` is taken to mean `sm_80`) with the
/// ptxas [`find_ptxas`] finds. The cubin is written to a temporary directory and discarded:
/// only ptxas's verdict matters.
pub fn assemble(ptx: &str, arch: &str) -> Result<(), PtxasError> {
    let ptxas = find_ptxas()?;
    assemble_with(&ptxas.path, ptx, arch)
}

/// [`assemble`] with an explicit ptxas.
pub fn assemble_with(ptxas: &Path, ptx: &str, arch: &str) -> Result<(), PtxasError> {
    let sm = real_arch(arch)?;
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolchainError::Io {
            action,
            path,
            source,
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("fencehound-ptxas-")
        .tempdir()
        .map_err(io(
            "creating a temporary directory in",
            &std::env::temp_dir(),
        ))?;
    let input = dir.path().join("input.ptx");
    let output = dir.path().join("output.cubin");
    std::fs::write(&input, ptx).map_err(io("writing", &input))?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={sm}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(io("running", ptxas))?;
    if out.status.success() {
        return Ok(());
    }
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    if log.trim().is_empty() {
        log = format!("ptxas exited with {}", out.status);
    }
    Err(PtxasError::Rejected {
        arch: sm,
        log: log.trim_end().to_string(),
    })
}

/// The version line of a ptxas (`Cuda compilation tools, release 13.5, V13.5.37`).
pub fn ptxas_version(ptxas: &Path) -> Result<String, ToolchainError> {
    let out = Command::new(ptxas)
        .arg("--version")
        .output()
        .map_err(|source| ToolchainError::Io {
            action: "running",
            path: ptxas.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .find(|l| l.contains("release"))
        .or_else(|| text.lines().last())
        .unwrap_or("")
        .trim()
        .to_string())
}

fn real_arch(arch: &str) -> Result<String, ToolchainError> {
    let number = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))
        .filter(|n| {
            let digits = n.trim_end_matches(['a', 'f']);
            !digits.is_empty()
                && n.len() - digits.len() <= 1
                && digits.bytes().all(|b| b.is_ascii_digit())
        })
        .ok_or_else(|| ToolchainError::BadArch {
            arch: arch.to_string(),
            reason: "expected sm_NN, e.g. sm_80".to_string(),
        })?;
    Ok(format!("sm_{number}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names() {
        assert_eq!(real_arch("sm_80").unwrap(), "sm_80");
        assert_eq!(real_arch("compute_90a").unwrap(), "sm_90a");
        for bad in ["80", "sm_", "sm_8x", "sm_80; rm -rf /", "sm_90af"] {
            assert!(real_arch(bad).is_err(), "{bad}");
        }
    }
}
