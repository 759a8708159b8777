//! The `[[oracle]]` TOML shapes: the crate docs' examples parse, and mistakes are named.

use std::path::PathBuf;

use fencehound_oracle::{Invariant, OracleSpec, Value};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Campaign {
    oracle: Vec<OracleSpec>,
}

/// The ```toml block of the crate documentation.
fn doc_example() -> String {
    let src = include_str!("../../src/lib.rs");
    src.lines()
        .map(|l| l.strip_prefix("//!").unwrap_or(""))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .skip_while(|l| *l != "```toml")
        .skip(1)
        .take_while(|l| *l != "```")
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn documented_examples_parse_to_these_specs() {
    let text = doc_example();
    let c: Campaign = match toml::from_str(&text) {
        Ok(c) => c,
        Err(e) => panic!("crate docs' TOML does not parse: {e}\n{text}"),
    };
    let want = vec![
        OracleSpec::Golden {
            buffers: Some(vec!["c".into()]),
            abs: 1e-6,
            rel: 1e-5,
        },
        OracleSpec::Expect {
            buffer: "counts".into(),
            values: Some(vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Int(u64::MAX.into()),
            ]),
            file: None,
            abs: 0.0,
            rel: 0.0,
        },
        OracleSpec::Expect {
            buffer: "y".into(),
            values: None,
            file: Some(PathBuf::from("expected/y.npy")),
            abs: 0.0,
            rel: 1e-6,
        },
        OracleSpec::Invariant {
            buffer: "out".into(),
            check: Invariant::Sorted { descending: false },
        },
        OracleSpec::Invariant {
            buffer: "total".into(),
            check: Invariant::Sum {
                equals: Some(Value::Int(4950)),
                equals_input: None,
                abs: 0.0,
                rel: 0.0,
            },
        },
        OracleSpec::Invariant {
            buffer: "hist".into(),
            check: Invariant::Sum {
                equals: None,
                equals_input: Some("data".into()),
                abs: 0.0,
                rel: 1e-6,
            },
        },
        OracleSpec::Invariant {
            buffer: "keys".into(),
            check: Invariant::PermutationOf {
                input: "keys".into(),
            },
        },
        OracleSpec::Invariant {
            buffer: "ids".into(),
            check: Invariant::Unique {},
        },
        OracleSpec::Invariant {
            buffer: "flags".into(),
            check: Invariant::AllEqual {
                value: Some(Value::Int(1)),
            },
        },
        OracleSpec::Command {
            argv: vec!["python3".into(), "check.py".into(), "{manifest}".into()],
            timeout_ms: Some(5000),
        },
    ];
    assert_eq!(c.oracle, want);
    for s in &c.oracle {
        s.validate().unwrap();
    }
    // Specs serialize back to the same TOML meaning (reports embed them).
    let again: Campaign = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
    assert_eq!(again, c);
}

#[test]
fn defaults() {
    let c: Campaign = toml::from_str(
        r#"
        [[oracle]]
        type = "golden"
        [[oracle]]
        type = "command"
        argv = ["/bin/true"]
        [[oracle]]
        type = "invariant"
        buffer = "k"
        check = { kind = "all-equal" }
        [[oracle]]
        type = "invariant"
        buffer = "k"
        [oracle.check]
        kind = "sorted"
        descending = true
        "#,
    )
    .unwrap();
    assert_eq!(
        c.oracle,
        vec![
            OracleSpec::Golden {
                buffers: None,
                abs: 0.0,
                rel: 0.0
            },
            OracleSpec::Command {
                argv: vec!["/bin/true".into()],
                timeout_ms: None
            },
            OracleSpec::Invariant {
                buffer: "k".into(),
                check: Invariant::AllEqual { value: None }
            },
            OracleSpec::Invariant {
                buffer: "k".into(),
                check: Invariant::Sorted { descending: true }
            },
        ]
    );
}

#[test]
fn mistakes_are_named() {
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("type = \"golden\"\nbufers = [\"c\"]", "unknown field `bufers`"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1]\ntolerance = 1", "unknown field `tolerance`"),
        ("type = \"command\"\nargv = [\"x\"]\ntimeout = 5", "unknown field `timeout`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sorted\", descnding = true }", "unknown field `descnding`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"unique\", strict = true }", "unknown field `strict`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"sum\", equal = 3 }", "unknown field `equal`"),
        ("type = \"gold\"", "unknown variant `gold`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"ordered\" }", "unknown variant `ordered`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"permutation_of\", input = \"c\" }", "unknown variant `permutation_of`"),
        ("buffer = \"c\"", "missing field `type`"),
        ("type = \"expect\"\nvalues = [1]", "missing field `buffer`"),
        ("type = \"invariant\"\nbuffer = \"c\"", "missing field `check`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { descending = true }", "missing field `kind`"),
        ("type = \"invariant\"\nbuffer = \"c\"\ncheck = { kind = \"permutation-of\" }", "missing field `input`"),
        ("type = \"golden\"\nabs = \"small\"", "invalid type: string \"small\""),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [1, \"many\"]", "`many` is not a number"),
        ("type = \"expect\"\nbuffer = \"c\"\nvalues = [true]", "expected a number, or a string holding an integer"),
        ("type = \"command\"\nargv = \"python3 check.py\"", "invalid type: string \"python3 check.py\", expected a sequence"),
    ];
    for (text, want) in cases {
        match toml::from_str::<OracleSpec>(text) {
            Ok(s) => panic!("{text}\nparsed as {s:?}, expected an error mentioning {want}"),
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains(want), "{text}\n  gave: {e}\n  want: {want}");
            }
        }
    }
}

#[test]
fn describe_names_for_reports() {
    let names: Vec<String> = [
        "type = \"golden\"",
        "type = \"expect\"\nbuffer = \"c\"\nvalues = []",
        "type = \"invariant\"\nbuffer = \"out\"\ncheck = { kind = \"permutation-of\", input = \"in\" }",
        "type = \"command\"\nargv = [\"./judge\", \"{dir}\"]",
    ]
    .iter()
    .map(|t| toml::from_str::<OracleSpec>(t).unwrap().describe())
    .collect();
    assert_eq!(
        names,
        [
            "golden",
            "expect(c)",
            "invariant(out: permutation-of)",
            "command(./judge)"
        ]
    );
}
