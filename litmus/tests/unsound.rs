//! The minimal programs of `litmus/UNSOUND.md` (`tests/unsound/ID.litmus`, one per known
//! bug of `src/known.rs`): the checker forbids each one's `exists` state, and exactly the
//! known entry `ID` explains it for the `weak` model — so the allowlist excuses what
//! UNSOUND.md says and nothing the examples do not show.

use fencehound_handlers::Model;
use fencehound_litmus::ast::{Cond, Operand, Var};
use fencehound_litmus::axiom::{self, Options};
use fencehound_litmus::known::{explain, KNOWN};
use fencehound_litmus::suite::expand;
use std::path::PathBuf;

/// The state an `exists (v1 == c1 /\ v2 == c2 ...)` names, in `observed()` order.
fn target(c: &Cond, vars: &[Var]) -> Vec<i64> {
    fn walk(c: &Cond, out: &mut Vec<(Var, i64)>) {
        match c {
            Cond::And(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Cond::Eq(Operand::Var(v), Operand::Const(x)) => out.push((v.clone(), *x)),
            other => panic!("not a conjunction of equalities: {other:?}"),
        }
    }
    let mut eqs = Vec::new();
    walk(c, &mut eqs);
    vars.iter()
        .map(|v| eqs.iter().find(|(w, _)| w == v).map(|e| e.1).unwrap())
        .collect()
}

#[test]
fn each_known_bug_has_its_minimal_program() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/unsound");
    let files = expand(&[dir]).unwrap();
    let ids: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    let mut known: Vec<&str> = KNOWN.iter().map(|k| k.id).collect();
    known.sort();
    assert_eq!(ids, known);
    for (f, id) in files.iter().zip(&ids) {
        let t = fencehound_litmus::load(f).unwrap();
        let v = axiom::verdict(&t, &Options::default()).unwrap();
        assert!(!v.target_allowed, "{id}: the PTX model allows its target");
        let st = target(&t.condition.cond, &t.observed());
        let why: Vec<&str> = explain(&t, Model::Weak, &st).iter().map(|k| k.id).collect();
        assert_eq!(why, vec![id.as_str()], "{id}");
        // No other model's entry excuses it.
        assert!(explain(&t, Model::Bugaroo, &st).is_empty(), "{id}");
    }
}
