//! Errors of the host API and the faults a launch can end in.

use std::fmt;

/// Loading a module failed: something the vgpu cannot execute, or a broken reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// An instruction or construct the executor does not support, with where it is.
    #[error("unsupported: {what} at {location}")]
    Unsupported { what: String, location: String },
    /// A name that refers to nothing (register, variable, label or function).
    #[error("undefined name `{name}` at {location}")]
    Undefined { name: String, location: String },
    #[error("{message} at {location}")]
    Invalid { message: String, location: String },
}

/// Host API misuse or impossible requests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("no kernel named `{0}` in the module (kernels: {1})")]
    NoSuchKernel(String, String),
    #[error("no module variable named `{0}`")]
    NoSuchGlobal(String),
    #[error("kernel `{kernel}` takes {expected} argument(s), {given} given")]
    ArgCount {
        kernel: String,
        expected: usize,
        given: usize,
    },
    #[error("argument {index} of `{kernel}` is {expected} bytes, {given} given")]
    ArgSize {
        kernel: String,
        index: usize,
        expected: usize,
        given: usize,
    },
    #[error("invalid launch configuration: {0}")]
    LaunchConfig(String),
    /// A launch CUDA allows but with more threads than the virtual GPU runs
    /// ([`crate::MAX_THREADS`]): a limit of this device (a runtime reports it as out of
    /// resources), where [`DeviceError::LaunchConfig`] is a configuration CUDA refuses.
    #[error(
        "invalid launch configuration: {threads} threads exceed the virtual GPU's limit of {limit}"
    )]
    ThreadLimit { threads: u64, limit: u64 },
    #[error("device address {addr:#x} (+{len} bytes) is not inside an allocation")]
    BadAddress { addr: u64, len: usize },
    #[error("out of device memory: requested {0} bytes")]
    OutOfMemory(u64),
    #[error("invalid module handle")]
    BadModule,
}

/// What kind of invalid access a fault is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds,
    Misaligned,
    /// A generic address that lies in no state-space window.
    InvalidAddress,
    /// A store to read-only memory (`.const`, kernel parameters).
    ReadOnly,
    /// Call depth limit exceeded.
    StackOverflow,
    /// An operation PTX leaves undefined that we refuse to guess (e.g. `shfl.sync` with a
    /// lane outside the member mask).
    Undefined,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::OutOfBounds => "out-of-bounds access",
            FaultKind::Misaligned => "misaligned access",
            FaultKind::InvalidAddress => "invalid address",
            FaultKind::ReadOnly => "write to read-only memory",
            FaultKind::StackOverflow => "call stack overflow",
            FaultKind::Undefined => "undefined behaviour",
        })
    }
}

/// A memory-level error before it is attributed to a thread and instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemError {
    pub kind: FaultKind,
    pub space: &'static str,
    pub addr: u64,
    pub size: u32,
    /// The nearest allocation: (name, base, length).
    pub nearest: Option<(String, u64, u64)>,
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} byte(s) at {} address {:#x}",
            self.kind, self.size, self.space, self.addr
        )?;
        if let Some((name, base, len)) = &self.nearest {
            let rel = if self.addr >= *base {
                let off = self.addr - base;
                if off < *len {
                    format!("{off} bytes into")
                } else {
                    format!("{} bytes past the end of", off - len)
                }
            } else {
                format!("{} bytes before", base - self.addr)
            };
            write!(f, "; {rel} `{name}` ({len} bytes at {base:#x})")?;
        }
        Ok(())
    }
}
