//! Every oracle kind, passing and failing, with the failure text pinned by snapshots.

use crate::common;

use common::{spec, World};
use fencehound_oracle::{Buffer, Judgement, Outputs};
use half::f16;

fn outs(buffers: Vec<Buffer>) -> Outputs {
    Outputs::new(buffers)
}

fn b<T: fencehound_oracle::Elem>(name: &str, v: &[T]) -> Buffer {
    Buffer::from_elems(name, v)
}

struct Case {
    name: &'static str,
    spec: &'static str,
    world: World,
}

fn golden(outputs: Vec<Buffer>, golden: Vec<Buffer>) -> World {
    World {
        outputs: outs(outputs),
        inputs: Outputs::default(),
        golden: Some(outs(golden)),
    }
}

fn only(outputs: Vec<Buffer>) -> World {
    World {
        outputs: outs(outputs),
        ..World::default()
    }
}

fn with_inputs(outputs: Vec<Buffer>, inputs: Vec<Buffer>) -> World {
    World {
        outputs: outs(outputs),
        inputs: outs(inputs),
        golden: None,
    }
}

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

fn passing_cases() -> Vec<Case> {
    vec![
        Case {
            name: "golden equal",
            spec: r#"type = "golden""#,
            world: golden(
                vec![b("c", &[1u32, 2, 3]), b("d", &[-1i8])],
                vec![b("c", &[1u32, 2, 3]), b("d", &[-1i8])],
            ),
        },
        Case {
            name: "golden NaN equals NaN, -0 equals 0, inf equals inf",
            spec: r#"type = "golden""#,
            world: golden(
                vec![b("f", &[NAN, -0.0, INF, -INF])],
                vec![b("f", &[-NAN, 0.0, INF, -INF])],
            ),
        },
        Case {
            name: "golden within rel tolerance",
            spec: r#"type = "golden"
                     rel = 1e-6"#,
            world: golden(
                vec![b("f", &[1.000_000_1f32, 1e30])],
                vec![b("f", &[1.0f32, 1.000_000_5e30])],
            ),
        },
        Case {
            name: "golden within abs tolerance near zero",
            spec: r#"type = "golden"
                     abs = 1e-3"#,
            world: golden(vec![b("f", &[0.0005f64])], vec![b("f", &[-0.0005f64])]),
        },
        Case {
            name: "golden only the listed buffers",
            spec: r#"type = "golden"
                     buffers = ["c"]"#,
            world: golden(
                vec![b("c", &[7u16]), b("scratch", &[1u8])],
                vec![b("c", &[7u16]), b("scratch", &[2u8])],
            ),
        },
        Case {
            name: "golden f16",
            spec: r#"type = "golden""#,
            world: golden(
                vec![b("h", &[f16::from_f32(0.5), f16::NAN])],
                vec![b("h", &[f16::from_f32(0.5), f16::NAN])],
            ),
        },
        Case {
            name: "expect values u64 beyond i64",
            spec: r#"type = "expect"
                     buffer = "c"
                     values = [0, 1, "0xffffffffffffffff", 9007199254740992.0]"#,
            world: only(vec![b("c", &[0u64, 1, u64::MAX, 1 << 53])]),
        },
        Case {
            name: "expect f32 values are rounded to f32 first",
            spec: r#"type = "expect"
                     buffer = "f"
                     values = [0.1, 1, nan, -inf, -0.0]"#,
            world: only(vec![b("f", &[0.1f32, 1.0, NAN, -INF, 0.0])]),
        },
        Case {
            name: "expect with rel tolerance",
            spec: r#"type = "expect"
                     buffer = "f"
                     values = [100.0, 200.0]
                     rel = 0.01"#,
            world: only(vec![b("f", &[101.0f64, 198.0])]),
        },
        Case {
            name: "sum equals integer constant",
            spec: r#"type = "invariant"
                     buffer = "c"
                     check = { kind = "sum", equals = 4950 }"#,
            world: only(vec![b("c", &(0..100u32).collect::<Vec<_>>())]),
        },
        Case {
            name: "sum does not wrap",
            spec: r#"type = "invariant"
                     buffer = "c"
                     check = { kind = "sum", equals = 510 }"#,
            world: only(vec![b("c", &[255u8, 255])]),
        },
        Case {
            name: "sum equals input sum within tolerance",
            spec: r#"type = "invariant"
                     buffer = "out"
                     check = { kind = "sum", equals_input = "in", rel = 1e-6 }"#,
            world: with_inputs(
                vec![b("out", &[0.6f32, 0.0, 0.0])],
                vec![b("in", &[0.1f32, 0.2, 0.3])],
            ),
        },
        Case {
            name: "sorted ascending with ties",
            spec: r#"type = "invariant"
                     buffer = "k"
                     check = { kind = "sorted" }"#,
            world: only(vec![b("k", &[-3i64, -3, 0, 9])]),
        },
        Case {
            name: "sorted descending",
            spec: r#"type = "invariant"
                     buffer = "k"
                     check = { kind = "sorted", descending = true }"#,
            world: only(vec![b("k", &[INF, 2.0, 0.0, -0.0, -INF])]),
        },
        Case {
            name: "permutation of input",
            spec: r#"type = "invariant"
                     buffer = "keys"
                     check = { kind = "permutation-of", input = "keys" }"#,
            world: with_inputs(
                vec![b("keys", &[3.0f32, NAN, 1.0, 3.0])],
                vec![b("keys", &[3.0f32, 1.0, 3.0, -NAN])],
            ),
        },
        Case {
            name: "unique",
            spec: r#"type = "invariant"
                     buffer = "ids"
                     check = { kind = "unique" }"#,
            world: only(vec![b("ids", &[5u32, 1, 4, 2])]),
        },
        Case {
            name: "unique sees -0 and 0 as different values",
            spec: r#"type = "invariant"
                     buffer = "f"
                     check = { kind = "unique" }"#,
            world: only(vec![b("f", &[0.0f64, -0.0])]),
        },
        Case {
            name: "all equal to element 0",
            spec: r#"type = "invariant"
                     buffer = "flags"
                     check = { kind = "all-equal" }"#,
            world: only(vec![b("flags", &[7u8, 7, 7])]),
        },
        Case {
            name: "all equal to a value, empty buffer",
            spec: r#"type = "invariant"
                     buffer = "flags"
                     check = { kind = "all-equal", value = 1 }"#,
            world: only(vec![b::<u8>("flags", &[])]),
        },
        Case {
            name: "all equal NaN",
            spec: r#"type = "invariant"
                     buffer = "f"
                     check = { kind = "all-equal", value = nan }"#,
            world: only(vec![b("f", &[NAN, -NAN])]),
        },
    ]
}

#[test]
fn passing() {
    for case in passing_cases() {
        let spec = spec(case.spec);
        match case.world.judge(&[spec]) {
            Ok(Judgement::Pass) => {}
            other => panic!("{}: expected a pass, got {other:?}", case.name),
        }
    }
}

fn iota(n: u32) -> Vec<u32> {
    (0..n).collect()
}

fn failing_cases() -> Vec<Case> {
    let mut many_wrong = iota(40);
    for i in (5..40).step_by(3) {
        many_wrong[i] += 1000;
    }
    let mut swapped = iota(20);
    swapped.swap(9, 10);
    vec![
        Case {
            name: "golden_one_element",
            spec: r#"type = "golden""#,
            world: golden(
                vec![b("c", &[1u32, 2, 3, 1020, 5, 6, 7, 8, 9, 10, 11, 12])],
                vec![b("c", &[1u32, 2, 3, 1024, 5, 6, 7, 8, 9, 10, 11, 12])],
            ),
        },
        Case {
            name: "golden_many_elements",
            spec: r#"type = "golden""#,
            world: golden(vec![b("c", &many_wrong)], vec![b("c", &iota(40))]),
        },
        Case {
            name: "golden_second_buffer",
            spec: r#"type = "golden""#,
            world: golden(
                vec![b("a", &[1i16]), b("flag", &[0u8, 0])],
                vec![b("a", &[1i16]), b("flag", &[0u8, 1])],
            ),
        },
        Case {
            name: "golden_float_tolerance",
            spec: r#"type = "golden"
                     abs = 1e-3"#,
            world: golden(
                vec![b("y", &[1.0f32, 2.0005, 3.0, NAN, -INF, 0.0])],
                vec![b("y", &[1.0f32, 2.0, 3.01, 4.0, INF, -0.0])],
            ),
        },
        Case {
            name: "golden_inf_vs_finite_with_rel",
            spec: r#"type = "golden"
                     rel = 0.5"#,
            world: golden(vec![b("y", &[1e300f64])], vec![b("y", &[f64::INFINITY])]),
        },
        Case {
            name: "expect_values",
            spec: r#"type = "expect"
                     buffer = "c"
                     values = [0, -1, 2, -3]"#,
            world: only(vec![b("c", &[0i32, -1, -2, -3])]),
        },
        Case {
            name: "expect_f32_shortest_format",
            spec: r#"type = "expect"
                     buffer = "f"
                     values = [0.1, 0.2]"#,
            world: only(vec![b("f", &[0.1f32, 0.3])]),
        },
        Case {
            name: "sum_constant",
            spec: r#"type = "invariant"
                     buffer = "total"
                     check = { kind = "sum", equals = 4950 }"#,
            world: only(vec![b("total", &[4940u64])]),
        },
        Case {
            name: "sum_of_input_float",
            spec: r#"type = "invariant"
                     buffer = "out"
                     check = { kind = "sum", equals_input = "in", rel = 1e-6 }"#,
            world: with_inputs(
                vec![b("out", &[1.5f64, 1.0])],
                vec![b("in", &[1.0f64, 2.0])],
            ),
        },
        Case {
            name: "sorted_swap",
            spec: r#"type = "invariant"
                     buffer = "k"
                     check = { kind = "sorted" }"#,
            world: only(vec![b("k", &swapped)]),
        },
        Case {
            name: "sorted_descending_nan",
            spec: r#"type = "invariant"
                     buffer = "k"
                     check = { kind = "sorted", descending = true }"#,
            world: only(vec![b("k", &[3.0f32, NAN, 1.0, 2.0])]),
        },
        Case {
            name: "permutation_lost_update",
            spec: r#"type = "invariant"
                     buffer = "out"
                     check = { kind = "permutation-of", input = "in" }"#,
            world: with_inputs(
                vec![b("out", &[4u32, 1, 1, 3, 9, 9, 9])],
                vec![b("in", &[1u32, 2, 3, 4, 5, 5, 9])],
            ),
        },
        Case {
            name: "unique_duplicates",
            spec: r#"type = "invariant"
                     buffer = "ids"
                     check = { kind = "unique" }"#,
            world: only(vec![b("ids", &[8u32, 3, 8, 3, 8, 8, 8, 1])]),
        },
        Case {
            name: "all_equal_element0",
            spec: r#"type = "invariant"
                     buffer = "flags"
                     check = { kind = "all-equal" }"#,
            world: only(vec![b("flags", &[1u8, 1, 0, 1])]),
        },
        Case {
            name: "all_equal_value",
            spec: r#"type = "invariant"
                     buffer = "flags"
                     check = { kind = "all-equal", value = 1 }"#,
            world: only(vec![b("flags", &[0u8, 1, 1, 1])]),
        },
    ]
}

#[test]
fn failing_with_readable_diffs() {
    for case in failing_cases() {
        let spec = spec(case.spec);
        match case.world.judge(&[spec]) {
            Ok(Judgement::Fail(f)) => insta::assert_snapshot!(case.name, f.to_string()),
            other => panic!("{}: expected a failure, got {other:?}", case.name),
        }
    }
}

#[test]
fn first_failing_spec_wins_and_all_must_pass() {
    let world = golden(vec![b("c", &[2u32, 1])], vec![b("c", &[2u32, 0])]);
    let sorted = spec(
        r#"type = "invariant"
           buffer = "c"
           check = { kind = "sorted", descending = true }"#,
    );
    let unique = spec(
        r#"type = "invariant"
           buffer = "c"
           check = { kind = "unique" }"#,
    );
    let gold = spec(r#"type = "golden""#);
    assert_eq!(world.judge(&[]).unwrap(), Judgement::Pass);
    assert_eq!(
        world.judge(&[sorted.clone(), unique.clone()]).unwrap(),
        Judgement::Pass
    );
    let oracle = |j| match j {
        Judgement::Fail(f) => f.oracle,
        Judgement::Pass => "pass".to_string(),
    };
    assert_eq!(
        oracle(
            world
                .judge(&[sorted.clone(), gold.clone(), unique])
                .unwrap()
        ),
        "golden(c)"
    );
    let ascending = spec(
        r#"type = "invariant"
           buffer = "c"
           check = { kind = "sorted" }"#,
    );
    assert_eq!(
        oracle(world.judge(&[ascending, gold]).unwrap()),
        "invariant(c: sorted)"
    );
}

#[test]
fn judgement_serializes_for_reports() {
    let world = only(vec![b("c", &[1u8, 0])]);
    let j = world
        .judge(&[spec(
            r#"type = "invariant"
               buffer = "c"
               check = { kind = "sorted" }"#,
        )])
        .unwrap();
    let json = serde_json::to_value(&j).unwrap();
    assert_eq!(json["result"], "fail");
    assert_eq!(json["oracle"], "invariant(c: sorted)");
    assert!(json["diff"]
        .as_str()
        .unwrap_or("")
        .contains("c[0] = 1, c[1] = 0"));
    assert_eq!(
        serde_json::to_value(Judgement::Pass).unwrap(),
        serde_json::json!({"result": "pass"})
    );
}
