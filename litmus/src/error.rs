use crate::ast::Pos;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LitmusError {
    /// The file is not valid litmus.
    #[error("{file}:{pos}: {message}")]
    Parse {
        file: String,
        pos: Pos,
        message: String,
    },
    /// Valid litmus that we cannot run (proxy fences, threads on several GPUs, …).
    #[error("{file}:{pos}: unsupported: {what}")]
    Unsupported {
        file: String,
        pos: Pos,
        what: String,
    },
    /// The generated kernel did not parse or load: a bug in the lowering.
    #[error("{file}: internal error lowering to PTX: {message}")]
    Lowering { file: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Expect {
        path: String,
        line: usize,
        message: String,
    },
}

impl LitmusError {
    pub fn is_unsupported(&self) -> bool {
        matches!(self, LitmusError::Unsupported { .. })
    }
}
