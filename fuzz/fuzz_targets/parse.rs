//! Parser fuzz target: arbitrary bytes must never panic the parser; an error must point
//! inside the text (1-based line and column within the input) and be one printable line;
//! whatever parses must survive the round trip: `parse(print(m)) == m` and `print` is a
//! fixed point.
//!
//! Bytes are read as UTF-8 lossily (invalid sequences become U+FFFD), so every input
//! reaches the lexer; the PTX front end only ever sees `&str`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let module = match fencehound_ptx::parse("fuzz.ptx", &src) {
        Ok(m) => m,
        Err(e) => {
            check_error(&src, &e);
            return;
        }
    };
    let printed = fencehound_ptx::print(&module);
    let reparsed = match fencehound_ptx::parse("printed.ptx", &printed) {
        Ok(m) => m,
        Err(e) => panic!("printed module does not parse: {e}\n--- printed ---\n{printed}"),
    };
    assert!(
        reparsed == module,
        "parse(print(m)) != m\n--- printed ---\n{printed}\n--- m ---\n{module:#?}\n--- reparsed ---\n{reparsed:#?}"
    );
    let printed_again = fencehound_ptx::print(&reparsed);
    assert_eq!(printed_again, printed, "print is not a fixed point");
});

fn check_error(src: &str, e: &fencehound_ptx::ParseError) {
    let lines: Vec<&str> = src.split('\n').collect();
    assert!(
        e.line >= 1 && e.line as usize <= lines.len(),
        "error line {} outside 1..={}: {e}",
        e.line,
        lines.len()
    );
    // Columns may count bytes or characters; either way at most one past the line's end.
    let line_len = lines[e.line as usize - 1].len();
    assert!(
        e.col >= 1 && e.col as usize <= line_len + 1,
        "error column {} outside 1..={}: {e}",
        e.col,
        line_len + 1
    );
    let text = e.to_string();
    assert!(
        !text.contains(char::is_control),
        "error message contains a control character: {text:?}"
    );
}
