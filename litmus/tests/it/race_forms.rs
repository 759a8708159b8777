//! The race check on the minimal programs that the comparison with the axiomatic checker
//! (`fencehound litmus --generate N --race`) found wrong, one per rule it broke: each
//! must now be reported exactly as the axioms say (no false alarm, no miss, nothing
//! beyond the required reports).

use fencehound_litmus::racejudge::{judge, Config};

fn check(name: &str, src: &str, expect_reported: u64) {
    let t = fencehound_litmus::parse(name, src).unwrap_or_else(|e| panic!("{e}"));
    let cfg = Config {
        runs: 200,
        ..Config::default()
    };
    let r = judge(&cfg, 0, &t);
    assert!(r.skipped.is_none(), "{name}: {:?}", r.skipped);
    assert!(r.false_alarms.is_empty(), "{name}: {:#?}", r.false_alarms);
    assert!(r.wrong_class.is_empty(), "{name}: {:#?}", r.wrong_class);
    assert!(r.misses.is_empty(), "{name}: {:#?}", r.misses);
    assert!(
        r.extra.is_empty(),
        "{name}: reported beyond the required: {:?}",
        r.extra
    );
    assert_eq!(r.reported, expect_reported, "{name}");
    assert_eq!(r.must_found, expect_reported, "{name}");
}

/// An acquire *before* a read does not make the read the start of an acquire pattern
/// (it used to count: same epoch).
#[test]
fn an_acquire_before_the_read_does_not_follow_it() {
    check(
        "acquire-before",
        "PTX acquire-before\n{ x=0; }\n P0@cta 1,gpu 0 | P1@cta 0,gpu 0 ;\n ld.acquire.gpu r0, x | st.relaxed.gpu x, 1 ;\n ld.relaxed.gpu r1, x | ;\nexists (0:r0 == 0)\n",
        // ld.relaxed / st.relaxed: neither side synchronization. The acquire load and the
        // store: the read is an acquire, exempt.
        1,
    );
}

/// A read followed by an acquire operation on *another* location starts no acquire
/// pattern (PTX: form (b) is an acquire operation on the same location).
#[test]
fn an_acquire_on_another_location_does_not_make_an_acquire_pattern() {
    check(
        "acquire-elsewhere",
        "PTX acquire-elsewhere\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 ;\n ld.acquire.gpu r1, y | ;\nexists (0:r0 == 0)\n",
        1,
    );
    // The same location: an acquire pattern of form (b), exempt — the acquire load
    // itself is exempt too.
    check(
        "acquire-same",
        "PTX acquire-same\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 ;\n ld.acquire.gpu r1, x | ;\nexists (0:r0 == 0)\n",
        0,
    );
}

/// A compare-and-swap whose comparison fails writes nothing: against a read it is no
/// conflict at all (it used to be a data race, the CAS counted as a write).
#[test]
fn a_failed_cas_is_a_read() {
    check(
        "failed-cas",
        "PTX failed-cas\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, x | red.relaxed.cta.add x, 1 ;\n | atom.relaxed.cta.cas r1, x, 0, 5 ;\nexists (0:r0 == 0)\n",
        // The weak load and the `.cta` red of another CTA: a data race. The CAS always
        // fails (its thread's own red made x non-zero): no race with the load.
        1,
    );
}

/// A release operation on a location makes a later strong write of its thread to that
/// location part of a release pattern (form (b)); a failed CAS with `.release` is no
/// release operation.
#[test]
fn release_patterns_of_form_b() {
    check(
        "release-then-write",
        "PTX release-then-write\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.release.gpu x, 1 | ld.relaxed.gpu r0, x ;\n st.relaxed.gpu x, 2 | ;\nexists (1:r0 == 0)\n",
        0,
    );
    check(
        "failed-release-then-write",
        "PTX failed-release-then-write\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n atom.release.gpu.cas r0, x, 7, 1 | ld.relaxed.gpu r1, x ;\n st.relaxed.gpu x, 2 | ;\nexists (1:r1 == 0)\n",
        1,
    );
}

/// A strong load whose value a later CAS of its thread on the location checks (the CAS
/// loop) is not reported against the writes it may miss: a stale value makes the CAS
/// fail. Without the CAS the same load is reported.
#[test]
fn a_load_checked_by_a_later_cas_is_exempt() {
    check(
        "cas-loop",
        "PTX cas-loop\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 ;\n atom.relaxed.gpu.cas r1, x, 0, 2 | ;\nexists (0:r0 == 0)\n",
        // The load is exempt; the CAS and the store: a blind overwrite (rule 2) when the
        // store comes second.
        1,
    );
    check(
        "no-cas",
        "PTX no-cas\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 ;\n atom.relaxed.gpu.cas r1, y, 0, 2 | ;\nexists (0:r0 == 0)\n",
        1,
    );
}
