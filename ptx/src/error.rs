//! Parse errors. Every error carries the PTX position and the offending token, so the CLI
//! can print `file:line:col: message (found `tok`)` without knowing anything about PTX.

use crate::ast::Pos;

/// What went wrong while reading PTX.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}{}", found_suffix(.found))]
pub struct ParseError {
    /// The file name given to the parser (for messages only).
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The offending token as written, or empty at end of input.
    pub found: String,
}

fn found_suffix(found: &str) -> String {
    if found.is_empty() {
        " (found end of input)".to_string()
    } else {
        format!(" (found `{found}`)")
    }
}

impl ParseError {
    pub fn new(file: &str, pos: Pos, message: impl Into<String>, found: impl Into<String>) -> Self {
        let mut found: String = found.into();
        // Control characters (a NUL in binary input, say) are shown escaped, not written
        // raw to the user's terminal.
        if found.contains(char::is_control) {
            found = found.chars().flat_map(char::escape_debug).collect();
        }
        if found.len() > 40 {
            let mut cut = 40;
            while !found.is_char_boundary(cut) {
                cut -= 1;
            }
            found.truncate(cut);
            found.push('…');
        }
        ParseError {
            file: file.to_string(),
            line: pos.line,
            col: pos.col,
            message: message.into(),
            found,
        }
    }
}
