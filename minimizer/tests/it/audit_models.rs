//! Issue 11, "use it everywhere": `audit` never calls a fence redundant when the model
//! cannot observe what the fence orders. Under bugaroo and scoped loads are never delayed:
//! acquire-side fences (after a poll, after a lock's CAS, between a seqlock reader's
//! loads) and fences that never drain anything are "cannot judge … use --model weak".
//! On a correctly fenced lock, seqlock and producer/consumer queue, no fence is "likely
//! redundant" under bugaroo, and nothing goes into a removal patch.

use crate::common;

use common::{line_of, load, opts};
use fencehound_handlers::Model;
use fencehound_minimizer::{audit, AuditReport, FenceVerdict};

fn audited(name: &str, model: Model) -> AuditReport {
    let c = load(&format!("minimizer/{name}"));
    let r = audit(c, "fenced", opts(model)).unwrap();
    assert!(r.base_failure.is_none(), "{r:#?}");
    assert!(
        !r.fences
            .iter()
            .any(|f| matches!(f.verdict, FenceVerdict::LikelyRedundant { .. })),
        "{name}: a fence is called likely redundant under {}: {r:#?}",
        model.name()
    );
    assert!(r.patch.is_none() && r.diff.is_empty(), "{}", r.diff);
    r
}

/// The verdict of the fence on the source line containing `needle`.
fn verdict(name: &str, r: &AuditReport, needle: &str, nth: usize) -> FenceVerdict {
    let c = load(&format!("minimizer/{name}"));
    let src = std::fs::read_to_string(&c.source).unwrap();
    let line = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .map(|(i, _)| i as u32 + 1)
        .unwrap();
    verdict_at(r, line)
}

/// The verdict of the fence on source line `line`.
fn verdict_at(r: &AuditReport, line: u32) -> FenceVerdict {
    r.fences
        .iter()
        .find(|f| f.source.as_ref().map(|s| s.line) == Some(line))
        .unwrap_or_else(|| panic!("no fence at line {line}: {r:#?}"))
        .verdict
        .clone()
}

fn cannot_judge(v: &FenceVerdict, why: &str) {
    match v {
        FenceVerdict::CannotJudge { reason } => {
            assert!(
                reason.starts_with(
                    "cannot judge under this model (loads are never delayed): use --model weak"
                ),
                "{reason}"
            );
            assert!(reason.contains(why), "{reason}");
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_correct_lock_has_no_likely_redundant_fence_under_bugaroo() {
    let r = audited("lock", Model::Bugaroo);
    let c = load("minimizer/lock");
    let acquire = line_of(&c, "LOCK_FENCE;");
    let lock = r
        .fences
        .iter()
        .find(|f| f.source.as_ref().map(|s| s.line) == Some(acquire))
        .unwrap();
    cannot_judge(
        &lock.verdict,
        "follows a load of memory other threads write",
    );
    assert!(matches!(
        verdict("lock", &r, "__threadfence();", 0),
        FenceVerdict::Necessary { .. }
    ));
}

#[test]
fn a_correct_seqlock_has_no_likely_redundant_fence_under_bugaroo() {
    let r = audited("seqlock", Model::Bugaroo);
    // Writer: both fences necessary. Reader: both acquire-side.
    for k in 0..2 {
        assert!(
            matches!(
                verdict("seqlock", &r, "__threadfence();", k),
                FenceVerdict::Necessary { .. }
            ),
            "writer fence {k}: {r:#?}"
        );
    }
    for k in 2..4 {
        cannot_judge(
            &verdict("seqlock", &r, "__threadfence();", k),
            "follows a load of memory other threads write",
        );
    }
}

#[test]
fn a_correct_queue_has_no_likely_redundant_fence_under_bugaroo() {
    let r = audited("queue", Model::Bugaroo);
    assert!(matches!(
        verdict("queue", &r, "__threadfence();", 0),
        FenceVerdict::Necessary { .. }
    ));
    for k in 1..3 {
        cannot_judge(
            &verdict("queue", &r, "__threadfence();", k),
            "follows a load of memory other threads write",
        );
    }
    // Under scoped, the default store-buffering model, the same.
    // And the same under scoped, the default model.
    audited("queue", Model::Scoped);
}

/// Under `weak` every fence of the lock, the seqlock and the queue is necessary — except
/// the queue consumer's fence between reading a slot and handing it back, which orders a
/// load before a store: load buffering, which `weak` cannot produce either.
#[test]
fn under_weak_the_lock_seqlock_and_queue_fences_are_necessary() {
    let queue = load("minimizer/queue");
    let lb = line_of(&queue, "*(volatile int *)head = k + 1;") - 1;
    for (name, n) in [("lock", 2), ("seqlock", 4), ("queue", 3)] {
        let r = audited(name, Model::Weak);
        assert_eq!(r.fences.len(), n, "{r:#?}");
        for (k, f) in r.fences.iter().enumerate() {
            if name == "queue" && f.source.as_ref().map(|s| s.line) == Some(lb) {
                match &f.verdict {
                    FenceVerdict::CannotJudge { reason } => {
                        assert!(reason.contains("load buffering"), "{reason}")
                    }
                    v => panic!("{v:?}"),
                }
            } else {
                assert!(
                    matches!(f.verdict, FenceVerdict::Necessary { .. }),
                    "{name} fence {k}: {f:#?}"
                );
            }
        }
    }
}

#[test]
fn a_fence_that_never_drains_cannot_be_judged() {
    let r = audited("nodrain", Model::Scoped);
    assert_eq!(r.fences.len(), 1);
    cannot_judge(&r.fences[0].verdict, "never had a buffered store to drain");
}

/// A flag and its payload in one 8-byte block: under `weak` both fences are necessary
/// (until `weak` kept observations per location, both were "likely redundant" and the
/// verified patch removed them).
///
/// Also at `p_w = 1` alone: there the reader's flag reads are stale until the liveness
/// rule declares a stall and reads the polled location fresh — which was the flag's whole
/// 8-byte block, the payload included, so neither missing fence showed.
#[test]
fn fences_of_a_flag_beside_its_payload_are_necessary_under_weak() {
    let r = audited("mailbox", Model::Weak);
    for nth in 0..2 {
        let v = verdict("mailbox", &r, "__threadfence();", nth);
        assert!(matches!(v, FenceVerdict::Necessary { .. }), "{v:?}");
    }
    let c = load("minimizer/mailbox");
    let o = fencehound_minimizer::Options {
        ps: vec![1.0],
        ..opts(Model::Weak)
    };
    let r = audit(c, "fenced", o).unwrap();
    for nth in 0..2 {
        let v = verdict("mailbox", &r, "__threadfence();", nth);
        assert!(
            matches!(v, FenceVerdict::Necessary { .. }),
            "p_w = 1: {v:?}"
        );
    }
}

/// At `p_w = 1` alone a model delays every access it can (every store buffered, every
/// load that may be stale stale), never one and not the next: the seqlock writer's first
/// fence (needed: without it a reader can see a new record and still the old even
/// counter) passed 100 of 100 there under `weak`, `bugaroo` and `scoped` and was called
/// likely redundant, with a verified patch removing it. Now no fence is likely redundant
/// (nor "block scope suffices") at `p_w = 1` alone, and with 0.5 that fence is necessary.
#[test]
fn at_p_w_1_alone_no_seqlock_fence_is_redundant() {
    let c = load("seqlock");
    let line = line_of(&c, "WRITER_FENCE_1;");
    let at = |r: &AuditReport| verdict_at(r, line);
    for model in [Model::Weak, Model::Bugaroo, Model::Scoped] {
        let o = fencehound_minimizer::Options {
            ps: vec![1.0],
            ..opts(model)
        };
        let r = audit(c.clone(), "fenced", o).unwrap();
        for a in &r.fences {
            assert!(
                !matches!(a.verdict, FenceVerdict::LikelyRedundant { .. }),
                "{} p_w = 1: {a:?}",
                model.name()
            );
            assert!(
                !matches!(a.block_scope, Some(FenceVerdict::LikelyRedundant { .. })),
                "{} p_w = 1: {a:?}",
                model.name()
            );
        }
        assert!(r.patch.is_none() && r.diff.is_empty(), "{}", r.diff);
        assert!(
            matches!(&at(&r), FenceVerdict::CannotJudge { reason } if reason.contains("p_w")),
            "{}: {:?}",
            model.name(),
            at(&r)
        );
        let o = fencehound_minimizer::Options {
            ps: vec![0.5, 1.0],
            ..opts(model)
        };
        let r = audit(c.clone(), "fenced", o).unwrap();
        assert!(
            matches!(at(&r), FenceVerdict::Necessary { .. }),
            "{}: {:?}",
            model.name(),
            at(&r)
        );
    }
}

/// The result cache holds for the build that wrote it only: a cache file naming another
/// build — here one that says every execution passed — is ignored (the verdicts are this
/// build's), and this build's own file is used on the next run.
#[test]
fn a_cache_written_by_another_build_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mailbox.minimize-cache.json");
    let c = load("minimizer/mailbox");
    let run = || {
        let o = fencehound_minimizer::Options {
            cache: Some(path.clone()),
            ..opts(Model::Weak)
        };
        audit(c.clone(), "fenced", o).unwrap()
    };
    let first = run();
    assert!(first.cached == 0 && first.executions > 0, "{first:#?}");
    let mine = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&mine).unwrap();
    let entries = v["executions"].as_object().unwrap().clone();
    assert!(!entries.is_empty());
    assert!(v["tool"].as_str().unwrap().starts_with("fencehound "));
    // Another build's results, every execution a pass; and the old form (a bare map).
    let passing: serde_json::Map<_, _> = entries
        .keys()
        .map(|k| (k.clone(), serde_json::Value::Null))
        .collect();
    for other in [
        serde_json::json!({"tool": "fencehound 0.1.0 (executable 00)", "executions": passing}),
        serde_json::Value::Object(passing.clone()),
    ] {
        std::fs::write(&path, other.to_string()).unwrap();
        let r = run();
        assert_eq!(r.cached, 0, "{r:#?}");
        for f in &r.fences {
            assert!(
                matches!(f.verdict, FenceVerdict::Necessary { .. }),
                "{:?}",
                f.verdict
            );
        }
    }
    // This build's own cache answers.
    assert!(run().cached > 0);
}
