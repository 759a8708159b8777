//! Expected values from files, and every way an oracle can fail to judge.

use crate::common;

use std::path::Path;

use common::{spec, World};
use fencehound_oracle::{
    needs_golden, BufferSet, ElemType, Judgement, OracleError, OracleSpec, Outputs,
};
use fencehound_oracle::{Buffer, Invariant};

fn world(outputs: Vec<Buffer>) -> World {
    World {
        outputs: Outputs::new(outputs),
        ..World::default()
    }
}

fn fail_text(j: Judgement) -> String {
    match j {
        Judgement::Fail(f) => f.to_string(),
        Judgement::Pass => "pass".to_string(),
    }
}

#[test]
fn expect_files_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    let good = [10u32, 20, 0xffff_ffff];
    std::fs::create_dir(base.join("want")).unwrap();
    std::fs::write(
        base.join("want/c.npy"),
        Buffer::from_elems("c", &good).to_npy(),
    )
    .unwrap();
    // An .npy of another dtype is compared by value.
    std::fs::write(
        base.join("want/c64.npy"),
        Buffer::from_elems("c", &[10u64, 20, 0xffff_ffff]).to_npy(),
    )
    .unwrap();
    std::fs::write(base.join("want/c.txt"), "# c\n10, 20\n0xffffffff\n").unwrap();
    std::fs::write(base.join("want/c.csv"), "10,20,4294967295").unwrap();
    let raw: Vec<u8> = good.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(base.join("want/c.bin"), &raw).unwrap();
    std::fs::write(base.join("want/c.bad.txt"), "10 20 30").unwrap();

    let w = world(vec![Buffer::from_elems("c", &good)]);
    for file in [
        "want/c.npy",
        "want/c64.npy",
        "want/c.txt",
        "want/c.csv",
        "want/c.bin",
    ] {
        let s = spec(&format!(
            "type = \"expect\"\nbuffer = \"c\"\nfile = \"{file}\""
        ));
        assert_eq!(w.judge_in(&[s], base).unwrap(), Judgement::Pass, "{file}");
    }
    // An absolute path ignores the base directory.
    let abs = base.join("want/c.bin");
    let s = OracleSpec::Expect {
        buffer: "c".into(),
        values: None,
        file: Some(abs),
        abs: 0.0,
        rel: 0.0,
    };
    assert_eq!(
        w.judge_in(&[s], Path::new("/nonexistent")).unwrap(),
        Judgement::Pass
    );

    let s = spec("type = \"expect\"\nbuffer = \"c\"\nfile = \"want/c.bad.txt\"");
    insta::assert_snapshot!(fail_text(w.judge_in(&[s], base).unwrap()), @r"
    expect(c): 1 of 3 elements differ (first at index 2)
    c[2]: expected 30, got 4294967295
    --- expected
    +++ got
    @@ c[0..3] @@
     c[0] = 10
     c[1] = 20
    -c[2] = 30
    +c[2] = 4294967295
    ");
}

/// Runs one spec and returns the error it must produce.
fn error(w: &World, spec_text: &str, base: &Path) -> OracleError {
    match w.judge_in(&[spec(spec_text)], base) {
        Err(e) => e,
        Ok(j) => panic!("expected an error from {spec_text}, got {j:?}"),
    }
}

#[test]
fn cannot_judge_is_an_error_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    std::fs::write(base.join("short.bin"), [1u8, 2, 3]).unwrap();
    std::fs::write(base.join("junk.npy"), b"not npy").unwrap();
    std::fs::write(base.join("words.txt"), "1 2\nthree").unwrap();
    std::fs::write(base.join("binary.txt"), [0xffu8, 0xfe]).unwrap();
    std::fs::write(base.join("two.txt"), "1 2").unwrap();
    std::fs::write(base.join("frac.txt"), "1 2.5 3").unwrap();

    let mut w = World {
        outputs: Outputs::new(vec![
            Buffer::from_elems("c", &[1u32, 2, 3]),
            Buffer::new("ragged", ElemType::U32, vec![0; 6]),
        ]),
        inputs: Outputs::new(vec![Buffer::from_elems("in", &[1u32, 2])]),
        golden: None,
    };
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("type = \"golden\"", "golden: needs the golden (`sc`) run's outputs, but none were given"),
        ("type = \"expect\"\nbuffer = \"nope\"\nvalues = [1]", "expect(nope): no buffer `nope` in the outputs"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2]", "expect(c): 2 expected values for buffer `c` of 3 elements"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2, -3]", "expect(c): expected value 2: -3 is out of range for u32"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2, 3.5]", "expect(c): expected value 2: 3.5 is not an integer, but the buffer is u32"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"missing.npy\"", "expect(c): cannot read "),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"short.bin\"", "3 bytes is not a whole number of u32 elements"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"junk.npy\"", "junk.npy: not a readable .npy file: missing the \\x93NUMPY magic"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"words.txt\"", "words.txt: line 2: `three` is not a number"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"binary.txt\"", "not UTF-8 text (byte 0)"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"two.txt\"", "2 expected values for buffer `c` of 3 elements"),
        ("type = \"expect\"\nbuffer = \"c\"\nfile = \"frac.txt\"", "expected value 1: 2.5 is not an integer"),
        ("type = \"expect\"\nbuffer = \"ragged\"\nvalues = [0]", "buffer `ragged` has 6 bytes, not a whole number of u32 elements"),
        ("type = \"expect\"\nbuffer = \"c\"", "expect(c): give exactly one of `values` and `file`"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2, 3]\nfile = \"x.txt\"", "give exactly one of `values` and `file`"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2, 3]\nabs = -1", "`abs` and `rel` must be numbers >= 0"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, 2, 3]\nrel = nan", "`abs` and `rel` must be numbers >= 0"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sum\" }", "invariant(c: sum): give exactly one of `equals` and `equals_input`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sum\", equals = 1, equals_input = \"in\" }", "give exactly one of `equals` and `equals_input`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sum\", equals_input = \"gone\" }", "invariant(c: sum): no buffer `gone` in the inputs"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"permutation-of\", input = \"gone\" }", "no buffer `gone` in the inputs"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"permutation-of\", input = \"in\" }", "`c` has 3 elements, input `in` has 2: never a permutation"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"all-equal\", value = 1e10 }", "10000000000 is out of range for u32"),
        ("type = \"invariant\"\nbuffer = \"gone\"\ncheck = { kind = \"unique\" }", "invariant(gone: unique): no buffer `gone` in the outputs"),
        ("type = \"command\"\nargv = []", "command(): `argv` must name a program"),
        ("type = \"command\"\nargv = [\"true\"]\ntimeout_ms = 0", "command(true): `timeout_ms` must be > 0"),
    ];
    for (spec_text, want) in cases {
        let e = error(&w, spec_text, base).to_string();
        assert!(e.contains(want), "{spec_text}\n  gave: {e}\n  want: {want}");
    }

    // Golden run present, but it lacks a buffer, or its shape differs.
    w.golden = Some(Outputs::new(vec![Buffer::from_elems("c", &[1u32, 2])]));
    let e = error(&w, "type = \"golden\"\nbuffers = [\"c\"]", base);
    assert_eq!(
        e.to_string(),
        "golden(c): output is 3 × u32, the golden run's is 2 × u32"
    );
    w.golden = Some(Outputs::new(vec![Buffer::from_elems("c", &[1i32, 2, 3])]));
    let e = error(&w, "type = \"golden\"\nbuffers = [\"c\"]", base);
    assert!(matches!(e, OracleError::ShapeMismatch { .. }), "{e}");
    let e = error(&w, "type = \"golden\"\nbuffers = [\"nope\"]", base);
    assert!(
        matches!(&e, OracleError::MissingBuffer { name, set: BufferSet::Outputs, .. } if name == "nope"),
        "{e}"
    );
    w.golden = Some(Outputs::default());
    let e = error(&w, "type = \"golden\"\nbuffers = [\"c\"]", base);
    assert_eq!(
        e.to_string(),
        "golden: no buffer `c` in the golden run's outputs"
    );
}

#[test]
fn specs_are_validated_before_any_runs() {
    // The first spec fails, but the second is malformed: that is reported, so a bad
    // campaign is not hidden behind a buggy kernel.
    let w = world(vec![Buffer::from_elems("c", &[2u8, 1])]);
    let specs = [
        spec("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sorted\" }"),
        spec("type = \"expect\"\nbuffer = \"c\""),
    ];
    assert!(matches!(
        w.judge(&specs),
        Err(OracleError::InvalidSpec { .. })
    ));
}

#[test]
fn needs_golden_only_for_golden_specs() {
    let golden = spec("type = \"golden\"");
    let unique = OracleSpec::Invariant {
        buffer: "c".into(),
        check: Invariant::Unique {},
    };
    assert!(!needs_golden(&[]));
    assert!(!needs_golden(std::slice::from_ref(&unique)));
    assert!(needs_golden(&[unique, golden]));
}
