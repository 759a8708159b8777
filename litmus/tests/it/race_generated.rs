//! The race check judged against the axiomatic checker on a bounded sample of generated
//! programs (`fencehound litmus --generate N --race` runs more): no false alarm, no
//! wrong class, and every pair the rules require is reported (issue 23.3).

use fencehound_litmus::racejudge::{self, Config};

#[test]
fn race_check_reports_exactly_the_pairs_the_axioms_leave_unordered() {
    let cfg = Config {
        count: 200,
        seed: 23,
        runs: 100,
        ..Config::default()
    };
    let rep = racejudge::run(&cfg, |_| {});
    eprintln!("{}", racejudge::render(&rep, 20));
    assert_eq!(rep.tests, 200);
    assert!(rep.skipped.is_empty(), "{:?}", rep.skipped);
    assert!(rep.false_alarms.is_empty());
    assert!(rep.wrong_class.is_empty());
    assert!(rep.misses.is_empty());
}
