//! Inputs that once made the front end misbehave, found by the `parse` fuzz target
//! (`fuzz/`) or by the CLI tests. Each case is minimized and stays here so the bug cannot
//! come back; see fuzz/README.md for how the fuzzer is run.

use fencehound_ptx::parse;

/// Parses `src`, expecting an error; returns it.
fn err(src: &str) -> fencehound_ptx::ParseError {
    match parse("fuzz.ptx", src) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

/// Found by tests/cli.rs (`ptx check` on binary garbage): the offending token was a raw
/// NUL, written as-is into the message on the user's terminal. Control characters are now
/// escaped.
#[test]
fn control_characters_in_the_found_token_are_escaped() {
    let e = err("\u{0}garbage");
    assert_eq!((e.line, e.col), (1, 1));
    assert_eq!(e.found, "\\0");
    assert!(!e.to_string().contains('\0'), "{e}");
    let e = err(".version 8.5\n.target sm_80\n\u{1b}[31m");
    assert_eq!((e.line, e.col), (3, 1));
    assert!(!e.to_string().contains('\u{1b}'), "{e:?}");
    // Printable tokens are left alone.
    assert_eq!(err(".version 8.5\n\u{e9}").found, "\u{e9}");
}
