//! Helpers the CLI test files share (`mod common;` in each).
#![allow(dead_code)] // each test binary uses a subset

use std::process::Output;

/// Bytes as text, lossily (for messages and `contains` checks).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The process exited with `code`; otherwise fail showing its stdout and stderr.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}
