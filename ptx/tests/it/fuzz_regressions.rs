//! Inputs that once made the front end misbehave, found by the `parse` fuzz target
//! (`fuzz/`) or by the CLI tests. Each case is minimized and stays here so the bug cannot
//! come back; see fuzz/README.md for how the fuzzer is run.

use fencehound_ptx::{parse, print};

/// Parses `src`, expecting an error; returns it.
fn err(src: &str) -> fencehound_ptx::ParseError {
    match parse("fuzz.ptx", src) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

/// What the fuzz target asserts for every input that parses.
fn round_trips(src: &str) {
    let m = parse("fuzz.ptx", src).unwrap_or_else(|e| panic!("{e}"));
    let printed = print(&m);
    let again = parse("printed.ptx", &printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert!(again == m, "parse(print(m)) != m\n{printed}");
    assert_eq!(print(&again), printed, "print is not a fixed point");
}

/// Found by tests/it/cli.rs (`ptx check` on binary garbage): the offending token was a raw
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

/// Fuzz crash (parse target, run 2, minimized from a 2,105-byte mutant of NVRTC output): `d+0`
/// parsed as a symbol-plus-offset operand, but the printer dropped a zero offset, so the
/// printed `d` read back as a plain name and `parse(print(m)) != m`.
#[test]
fn symbol_plus_zero_offset_round_trips() {
    round_trips(".entry w{red d+0,r;}");
    let printed = print(&parse("fuzz.ptx", ".entry w{red d+0,r;}").unwrap());
    assert!(printed.contains("d+0, r"), "{printed}");
    // The shapes next to it keep round-tripping too.
    round_trips(".entry w{red d+-4,r;}");
    round_trips(".entry w{red d,r;}");
    round_trips(".entry w{red [d+0],r;}");
}

/// Fuzz finding (parse target, run 3, `n/"\\\` newline `"\`): a backslash before a newline
/// inside a string skipped the newline, so the string went on to the next line and the
/// lexer's line count fell behind — the error was reported at `1:9` on a 6-byte line.
/// A string still cannot span lines, escaped newline or not.
#[test]
fn escaped_newline_does_not_continue_a_string() {
    let e = err("n/\"\\\\\\\n\"\\");
    assert_eq!((e.line, e.col), (1, 3), "{e}");
    assert!(e.message.contains("unterminated string"), "{e}");
    let e = err(".version 8.5\n.file 1 \"a\\\nb\"\n");
    assert_eq!((e.line, e.col), (2, 9), "{e}");
    // Escapes that stay on the line are untouched.
    round_trips(".version 8.5\n.file 1 \"a\\\"b\\\\\"\n");
}
