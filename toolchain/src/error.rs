//! Errors of the toolchain crate. Each one says what went wrong and what to do next.

use std::path::PathBuf;

/// What to tell someone who has no NVRTC.
pub const NVRTC_INSTALL_HINT: &str = "install it with one of:\n  \
     scripts/setup-cuda.sh                             (pinned wheels into .tools/cuda)\n  \
     python3 -m pip install nvidia-cuda-nvrtc==13.5.37\n  \
     export FENCEHOUND_NVRTC=/path/to/libnvrtc.so.13";

/// What to tell someone who has no ptxas.
pub const PTXAS_INSTALL_HINT: &str = "install it with one of:\n  \
     scripts/setup-cuda.sh                             (pinned wheels into .tools/cuda)\n  \
     python3 -m pip install nvidia-cuda-nvcc==13.5.37\n  \
     export FENCEHOUND_PTXAS=/path/to/ptxas";

#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    /// A tool was searched for everywhere and is not there.
    #[error("{tool} not found; looked at:\n{}\n{hint}", bullet_list(.looked))]
    NotFound {
        tool: &'static str,
        looked: Vec<String>,
        hint: &'static str,
    },

    /// An explicit override (`FENCEHOUND_NVRTC`, ...) names something that does not exist.
    /// This is an error rather than a reason to keep searching: the user asked for that file.
    #[error("{var} is set to {}, which does not exist", path.display())]
    BadOverride { var: &'static str, path: PathBuf },

    #[error("could not load {}: {reason}", path.display())]
    Load { path: PathBuf, reason: String },

    /// libnvrtc needs its builtins library (`libnvrtc-builtins.so.MAJOR.MINOR`) beside it.
    #[error(
        "{} is present but {} is missing beside it (a partial install?); {}",
        nvrtc.display(),
        expected.display(),
        NVRTC_INSTALL_HINT
    )]
    BuiltinsMissing { nvrtc: PathBuf, expected: PathBuf },

    /// cudarc opens libnvrtc by name; if that resolves to another copy than the one we
    /// found, calls would go to a library we did not choose.
    #[error(
        "cudarc resolved libnvrtc to a different library than {}; put that directory first \
         on LD_LIBRARY_PATH or set FENCEHOUND_NVRTC",
        found.display()
    )]
    LibraryMismatch { found: PathBuf },

    #[error("NVRTC call {call} failed: {code}\n{log}")]
    Nvrtc {
        call: &'static str,
        code: String,
        log: String,
    },

    #[error("invalid architecture `{arch}`: {reason}")]
    BadArch { arch: String, reason: String },

    #[error(
        "NVRTC {}.{} cannot compile for `{arch}`; it supports {}",
        version.0,
        version.1,
        supported.iter().map(|a| format!("compute_{a}")).collect::<Vec<_>>().join(", ")
    )]
    UnsupportedArch {
        arch: String,
        version: (i32, i32),
        supported: Vec<i32>,
    },

    /// Something the user passed cannot be handed to NVRTC or ptxas as given.
    #[error("{what} {reason}")]
    InvalidInput { what: String, reason: &'static str },

    /// NVRTC rejected the source; `log` is NVRTC's complete log.
    #[error("NVRTC could not compile {file}:\n{}", log.trim_end())]
    Compile { file: String, log: String },

    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why `assemble` failed. `Rejected` is the interesting case: ptxas read the PTX and said
/// it is invalid; its log says why.
#[derive(Debug, thiserror::Error)]
pub enum PtxasError {
    #[error("ptxas rejected the PTX for {arch}:\n{log}")]
    Rejected { arch: String, log: String },
    #[error(transparent)]
    Toolchain(#[from] ToolchainError),
}

impl PtxasError {
    /// ptxas's output when it rejected the PTX; empty for other failures.
    pub fn log(&self) -> &str {
        match self {
            PtxasError::Rejected { log, .. } => log,
            PtxasError::Toolchain(_) => "",
        }
    }
}

fn bullet_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("  - {s}"))
        .collect::<Vec<_>>()
        .join("\n")
}
