//! The device-side rewrite's documented defaults. (Its runs on the litmus suite, which is
//! not in the repository, are in `tests/dat3m/rewrite.rs`: a harness that says SKIPPED
//! where the suite is missing.)

use fencehound_handlers::rewrite::layout;

#[test]
fn layout_defaults_are_the_ones_documented() {
    assert_eq!(layout::DEFAULT_LIVENESS_PERIOD, 1024);
}
