//! NVRTC's bundled CUDA headers, and the `nvrtc-flags` line of corpus kernels.
//!
//! NVRTC 13 carries its own copy of the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`,
//! `cccl/`, ...) and writes them to disk when given `--use-bundled-headers=DIR`; without that
//! option `#include <cuda_fp16.h>` does not resolve (the wheels ship no such file). Checked
//! with NVRTC 13.5: the first compilation with a fresh `DIR` extracts about 2,400 files
//! (26 MB) and takes about a second; later ones see NVRTC's marker file
//! (`.nvrtc_headers_version`) and extract nothing, in this process or any other. NVRTC does
//! not notice a damaged directory (a deleted header stays deleted).
//!
//! [`bundled_headers_dir`] therefore extracts once per NVRTC version into a private
//! temporary directory, checks the result, marks it complete and renames it into place, so
//! no compilation (in this process or a concurrent one) ever sees a half-written directory.
//! Compilations that pass that directory then cost nothing extra.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::cache::PtxCache;
use crate::discover::find_cccl_include;
use crate::error::ToolchainError;
use crate::nvrtc::{nvrtc, run_nvrtc};

/// Written last into a complete bundled-headers directory.
const COMPLETE_MARK: &str = ".fencehound-complete";

/// The placeholders a corpus `nvrtc-flags` line may contain (see `kernels/README.md`).
pub const BUNDLED_HEADERS_PLACEHOLDER: &str = "$NVRTC_BUNDLED_HEADERS";
pub const CCCL_INCLUDE_PLACEHOLDER: &str = "$CCCL_INCLUDE";

static BUNDLED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// A directory holding NVRTC's bundled headers, for `--use-bundled-headers=DIR`: one per
/// NVRTC version, `bundled-headers/nvrtc-MAJOR.MINOR` inside the PTX cache directory
/// ([`PtxCache::from_env`]), or in the system temporary directory when there is no cache
/// directory. Extracted on first use (about a second), then reused by every process.
pub fn bundled_headers_dir() -> Result<PathBuf, ToolchainError> {
    let mut known = BUNDLED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(dir) = known.as_ref() {
        return Ok(dir.clone());
    }
    let nv = nvrtc()?;
    let base = match PtxCache::from_env() {
        Some(cache) => cache.dir().join("bundled-headers"),
        None => std::env::temp_dir().join("fencehound-bundled-headers"),
    };
    let base = std::path::absolute(&base).unwrap_or(base);
    let dir = base.join(format!("nvrtc-{}.{}", nv.version.0, nv.version.1));
    if !is_complete(&dir) {
        extract_into(&base, &dir)?;
    }
    *known = Some(dir.clone());
    Ok(dir)
}

fn is_complete(dir: &Path) -> bool {
    dir.join(COMPLETE_MARK).is_file() && dir.join(".nvrtc_headers_version").is_file()
}

fn extract_into(base: &Path, dir: &Path) -> Result<(), ToolchainError> {
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolchainError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(base).map_err(io("creating", base))?;
    let tmp = tempfile::Builder::new()
        .prefix(".extract-")
        .tempdir_in(base)
        .map_err(io("creating a temporary directory in", base))?;
    let tmp_text = tmp
        .path()
        .to_str()
        .ok_or_else(|| ToolchainError::InvalidInput {
            what: format!("the cache directory {}", base.display()),
            reason: "is not valid UTF-8",
        })?;
    // Including the headers NVRTC has no other way to find proves the extraction worked.
    let probe = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\
                 extern \"C\" __global__ void fencehound_probe(__half *p) { *p = __float2half(1.0f); }\n";
    run_nvrtc(
        probe,
        "fencehound_bundled_headers_probe.cu",
        &[
            "--gpu-architecture=compute_80".to_string(),
            format!("--use-bundled-headers={tmp_text}"),
        ],
    )?;
    let mark = tmp.path().join(COMPLETE_MARK);
    std::fs::write(&mark, "extracted by fencehound-toolchain\n").map_err(io("writing", &mark))?;
    // A leftover without the mark (an older layout, someone's manual edit) is replaced.
    if dir.exists() && !is_complete(dir) {
        let _ = std::fs::remove_dir_all(dir);
    }
    let staged = tmp.keep();
    match std::fs::rename(&staged, dir) {
        Ok(()) => Ok(()),
        // Another process finished first; its copy is as good as ours.
        Err(_) if is_complete(dir) => {
            let _ = std::fs::remove_dir_all(&staged);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(io("moving the extracted headers to", dir)(e))
        }
    }
}

/// Expands a corpus kernel's `nvrtc-flags` value into NVRTC options: `none` (or nothing)
/// is no options; otherwise the value is split at whitespace and, in each option,
/// `$NVRTC_BUNDLED_HEADERS` becomes [`bundled_headers_dir`] and `$CCCL_INCLUDE` becomes
/// [`find_cccl_include`] (or the bundled headers' `cccl/` when the CCCL wheel is missing).
/// The directories are looked up only when a placeholder needs them.
pub fn expand_nvrtc_flags(flags: &str) -> Result<Vec<String>, ToolchainError> {
    let flags = flags.trim();
    if flags.is_empty() || flags == "none" {
        return Ok(Vec::new());
    }
    flags.split_whitespace().map(expand_placeholders).collect()
}

/// Replaces `$NVRTC_BUNDLED_HEADERS` and `$CCCL_INCLUDE` in one NVRTC option (see
/// [`expand_nvrtc_flags`]); any other `$` is an error, so a typo cannot reach NVRTC as a
/// literal path.
pub fn expand_placeholders(option: &str) -> Result<String, ToolchainError> {
    let mut option = option.to_string();
    if option.contains(BUNDLED_HEADERS_PLACEHOLDER) {
        let dir = bundled_headers_dir()?;
        option = option.replace(BUNDLED_HEADERS_PLACEHOLDER, &utf8(&dir)?);
    }
    if option.contains(CCCL_INCLUDE_PLACEHOLDER) {
        let dir = match find_cccl_include() {
            Some(found) => found.path,
            None => bundled_headers_dir()?.join("cccl"),
        };
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        option = option.replace(CCCL_INCLUDE_PLACEHOLDER, &utf8(&dir)?);
    }
    if let Some(at) = option.find('$') {
        return Err(ToolchainError::InvalidInput {
            what: format!("NVRTC option `{option}` (at `{}`)", &option[at..]),
            reason: "has an unknown placeholder; known: $NVRTC_BUNDLED_HEADERS, $CCCL_INCLUDE",
        });
    }
    Ok(option)
}

fn utf8(path: &Path) -> Result<String, ToolchainError> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| ToolchainError::InvalidInput {
            what: format!("directory {}", path.display()),
            reason: "is not valid UTF-8",
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_without_placeholders_need_no_tools() {
        assert!(expand_nvrtc_flags("none").unwrap().is_empty());
        assert!(expand_nvrtc_flags("  ").unwrap().is_empty());
        assert_eq!(
            expand_nvrtc_flags(" -use_fast_math\t--device-int128 ").unwrap(),
            ["-use_fast_math", "--device-int128"]
        );
        let err = expand_nvrtc_flags("-I$CUDA_HOME/include").unwrap_err();
        assert!(err.to_string().contains("$CUDA_HOME"), "{err}");
    }
}
