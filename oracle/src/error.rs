use std::path::PathBuf;

use crate::ElemType;

/// Which set of buffers a name was looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferSet {
    Outputs,
    Inputs,
    Golden,
}

impl std::fmt::Display for BufferSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BufferSet::Outputs => "outputs",
            BufferSet::Inputs => "inputs",
            BufferSet::Golden => "golden run's outputs",
        })
    }
}

/// The oracle could not judge: the spec or the data it was given is wrong, or the
/// external judge could not run. This is never a verdict about the kernel.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OracleError {
    #[error("{oracle}: {reason}")]
    InvalidSpec { oracle: String, reason: String },
    #[error("{oracle}: no buffer `{name}` in the {set}")]
    MissingBuffer {
        oracle: String,
        name: String,
        set: BufferSet,
    },
    #[error("{oracle}: needs the golden (`sc`) run's outputs, but none were given")]
    NoGoldenRun { oracle: String },
    #[error("buffer `{name}` has {bytes} bytes, not a whole number of {ty} elements")]
    RaggedBuffer {
        name: String,
        ty: ElemType,
        bytes: usize,
    },
    #[error("{oracle}: {what}")]
    ShapeMismatch { oracle: String, what: String },
    #[error("{oracle}: cannot read {}: {source}", path.display())]
    ReadFile {
        oracle: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{oracle}: {}: {reason}", path.display())]
    BadFile {
        oracle: String,
        path: PathBuf,
        reason: String,
    },
    #[error("writing buffers to {}: {source}", path.display())]
    WriteFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{oracle}: cannot run `{program}`: {source}")]
    Spawn {
        oracle: String,
        program: String,
        source: std::io::Error,
    },
    #[error("{oracle}: `{program}` did not finish within {timeout_ms} ms and was killed")]
    CommandTimeout {
        oracle: String,
        program: String,
        timeout_ms: u64,
    },
}
