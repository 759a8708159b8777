//! Malformed input: every case is an error with a position and the offending token,
//! never a panic.

use fencehound_ptx::parse;

const GOOD: &str = r#"
.version 8.5
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	st.global.u32 	[%rd2], %r1;
	ret;
}
"#;

fn err(src: &str) -> fencehound_ptx::ParseError {
    match parse("bad.ptx", src) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn good_module_parses() {
    let m = parse("good.ptx", GOOD).unwrap();
    assert_eq!(m.kernels().count(), 1);
}

#[test]
fn unknown_opcode_names_line_col_and_token() {
    let e = err(&GOOD.replace("mov.u32", "frobnicate.u32"));
    assert_eq!(e.line, 14);
    assert_eq!(e.col, 2);
    assert_eq!(e.found, "frobnicate");
    assert_eq!(
        e.to_string(),
        "bad.ptx:14:2: unknown instruction (found `frobnicate`)"
    );
}

/// Gather, query and surface-reduction instructions (valid PTX the tool does not run)
/// are named as such; their geometry modifiers (`.2d`) used to stop the lexer as
/// "malformed number". (`tex`, `suld` and `sust` parse:
/// `texture_fetches_parse_and_print_back`.)
#[test]
fn texture_instructions_are_named_not_supported() {
    for inst in [
        "tld4.r.2d.v4.f32.f32 \t{%r1, %r2, %r1, %r2}, [%rd1, {%r1, %r2}];",
        "sured.b.add.2d.u32.trap \t[%rd1, {%r1, %r2}], %r1;",
    ] {
        let e = err(&GOOD.replace("mov.u32 \t%r1, %tid.x;", inst));
        assert_eq!((e.line, e.col), (14, 2), "{e}");
        assert!(
            e.message
                .contains("texture and surface instructions are not supported"),
            "{e}"
        );
    }
}

#[test]
fn wrong_operand_count() {
    let e = err(&GOOD.replace("mov.u32 \t%r1, %tid.x;", "mov.u32 \t%r1, %tid.x, %r2;"));
    assert_eq!(e.line, 14);
    assert!(e.message.contains("`mov` takes 2 operands, found 3"), "{e}");
    let e = err(&GOOD.replace("ret;", "ret %r1;"));
    assert!(e.message.contains("takes 0 operands"), "{e}");
}

#[test]
fn unknown_and_misplaced_modifiers() {
    let e = err(&GOOD.replace("st.global.u32", "st.global.u33"));
    assert!(e.message.contains("unknown modifier"), "{e}");
    assert_eq!(e.found, ".u33");
    let e = err(&GOOD.replace("mov.u32", "mov.rn.u32"));
    assert!(e.message.contains("does not apply to `mov`"), "{e}");
}

#[test]
fn truncated_files_fail_cleanly_at_every_cut() {
    // Every prefix of a valid module either parses (cut at an item boundary) or gives an
    // error with a position inside the text.
    let lines = GOOD.lines().count() as u32 + 1;
    for cut in 0..GOOD.len() {
        if !GOOD.is_char_boundary(cut) {
            continue;
        }
        if let Err(e) = parse("cut.ptx", &GOOD[..cut]) {
            assert!(e.line >= 1 && e.line <= lines, "{e}");
            assert!(!e.message.is_empty());
        }
    }
    let e = err(&GOOD[..GOOD.find("ret;").unwrap()]);
    assert!(e.message.contains("end of input"), "{e}");
}

#[test]
fn garbage_bytes() {
    let e = err("\u{0}\u{1}\u{2}garbage");
    assert_eq!((e.line, e.col), (1, 1));
    let e = err(".version 8.5\n.target sm_80\n\u{00e9}");
    assert_eq!((e.line, e.col), (3, 1));
    assert_eq!(e.found, "\u{00e9}");
    let e = err(&GOOD.replace("%tid.x", "%tid.w"));
    assert!(e.message.contains(".x, .y or .z"), "{e}");
    let e = err("#include <x>");
    assert_eq!(e.found, "#");
}

#[test]
fn missing_punctuation() {
    let e = err(&GOOD.replace("[k_param_0];", "[k_param_0;"));
    assert!(e.message.contains("expected `]`"), "{e}");
    let e = err(&GOOD.replace("%r1, %tid.x;", "%r1 %tid.x;"));
    assert!(e.message.contains("after an operand"), "{e}");
    let e = err(".version 8.5\n.target sm_80\n.address_size 48\n");
    assert!(e.message.contains("32 or 64"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut src = String::from(".version 8.5\n.target sm_80\n.entry k()\n");
    src.push_str(&"{".repeat(100_000));
    let e = err(&src);
    assert!(e.message.contains("too deep"), "{e}");
    let init = format!(
        ".version 8.5\n.global .u32 x[1] = {}1{};",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(err(&init).message.contains("too deep"));
}

/// `tex` in unified mode (a texture object's handle in a register): every geometry the
/// vgpu runs, integer and float coordinates, printed back as written.
#[test]
fn texture_fetches_parse_and_print_back() {
    for inst in [
        "tex.1d.v4.s32.s32 \t{%r1, %r2, %r1, %r2}, [%rd1, {%r1}];",
        "tex.2d.v4.f32.f32 \t{%r1, %r2, %r1, %r2}, [%rd1, {%r1, %r2}];",
        "tex.3d.v4.u32.f32 \t{%r1, %r2, %r1, %r2}, [%rd1, {%r1, %r2, %r1, %r2}];",
        "suld.b.2d.b32.trap \t{%r1}, [%rd1, {%r1, %r2}];",
        "sust.b.1d.v4.b8.clamp \t[%rd1, {%r1}], {%r1, %r2, %r1, %r2};",
    ] {
        let src = GOOD.replace("mov.u32 \t%r1, %tid.x;", inst);
        let m = fencehound_ptx::parse("t.ptx", &src).unwrap_or_else(|e| panic!("{inst}: {e}"));
        let printed = fencehound_ptx::printer::print(&m);
        let want = inst.replace(" \t", "\t");
        assert!(printed.contains(&want), "{inst}:\n{printed}");
    }
    // A texture operand needs its coordinates in braces.
    let e = err(&GOOD.replace(
        "mov.u32 \t%r1, %tid.x;",
        "tex.1d.v4.s32.s32 \t{%r1, %r2, %r1, %r2}, [%rd1, %r1];",
    ));
    assert!(e.message.contains("coordinates"), "{e}");
}
