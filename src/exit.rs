//! Exit codes scripts can trust.

/// An error that carries a specific exit code (everything else exits 2).
#[derive(Debug)]
pub struct Exit(pub u8);

impl Exit {
    pub fn code(&self) -> u8 {
        self.0
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Exit {}

/// Nothing found.
pub const OK: u8 = 0;
/// Failures (bugs, races, unsupported constructs) found.
pub const FOUND: u8 = 1;
/// Usage or input error.
#[allow(dead_code)]
pub const INPUT: u8 = 2;
