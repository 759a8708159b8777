//! The minimizer on the campaign corpus: it names the missing fence by CUDA line, the
//! audit separates necessary fences from those it cannot judge, and the suggested patch,
//! applied with `git apply`, makes the variant pass when fuzzed again.

use crate::common;

use common::{line_of, load, opts, patched_passes};
use fencehound_handlers::Model;
use fencehound_minimizer::{audit, minimize, FenceVerdict};

fn fence_lines(r: &fencehound_minimizer::MinimizeReport) -> Vec<u32> {
    let mut v: Vec<u32> = r
        .fences
        .iter()
        .filter_map(|f| f.after.cuda.as_ref().map(|c| c.line))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn verified(r: &fencehound_minimizer::MinimizeReport) -> &fencehound_minimizer::source::Patch {
    let v = r.verification.as_ref().expect("a verification");
    assert!(v.verified, "{}\n{r:?}", v.summary());
    r.patch.as_ref().expect("a patch")
}

#[test]
fn cbe_dot_without_fences_needs_the_unlock_fence() {
    let c = load("cbe_dot");
    let r = minimize(c.clone(), "no_fence", opts(Model::Bugaroo)).unwrap();
    assert!(r.failure.is_some());
    assert_eq!(r.spaces, vec!["global"]);
    assert!(r.confirmed, "{r:?}");
    assert_eq!(fence_lines(&r), vec![line_of(&c, "*c += cache[0];")]);
    assert!(r.diff.contains("+        __threadfence();"), "{}", r.diff);
    assert!(
        r.diff.starts_with("--- a/cbe_dot.cu\n+++ b/cbe_dot.cu\n"),
        "{}",
        r.diff
    );
    let patch = verified(&r);
    patched_passes(&c, patch, "no_fence", &[Model::Bugaroo], 200);
}

#[test]
fn cbe_dot_audit_cannot_judge_the_lock_fence_unlock_fence_necessary() {
    let c = load("cbe_dot");
    let r = audit(c.clone(), "two_fences", opts(Model::Bugaroo)).unwrap();
    assert!(r.base_failure.is_none());
    assert_eq!(r.fences.len(), 2, "{r:?}");
    let by_line = |needle: &str| {
        let l = line_of(&c, needle);
        r.fences
            .iter()
            .find(|f| f.source.as_ref().map(|s| s.line) == Some(l))
            .unwrap_or_else(|| panic!("no fence at line {l}: {r:?}"))
            .clone()
    };
    let lock = by_line("LOCK_FENCE;");
    let unlock = by_line("UNLOCK_FENCE;");
    // The fence after taking the lock is acquire-side: bugaroo never delays loads, so it
    // cannot be judged there (issue 11), and it is not removed.
    match &lock.verdict {
        FenceVerdict::CannotJudge { reason } => {
            assert!(reason.contains("use --model weak"), "{reason}")
        }
        v => panic!("{v:?}"),
    }
    assert!(
        matches!(unlock.verdict, FenceVerdict::Necessary { .. }),
        "{unlock:?}"
    );
    // And under `scoped` the unlock fence must stay device-scope.
    assert!(
        matches!(unlock.block_scope, Some(FenceVerdict::Necessary { .. })),
        "{unlock:?}"
    );
    assert!(r.diff.is_empty(), "{}", r.diff);
    assert!(r.patch.is_none());
}

#[test]
fn sdk_red_needs_its_fence() {
    let c = load("sdk_red");
    let r = minimize(c.clone(), "unfenced", opts(Model::Bugaroo)).unwrap();
    assert!(r.confirmed);
    assert_eq!(
        fence_lines(&r),
        vec![line_of(&c, "partial[blockIdx.x] = sum;")]
    );
    let patch = verified(&r);
    patched_passes(&c, patch, "unfenced", &[Model::Bugaroo], 200);
}

#[test]
fn cub_scan_each_removed_fence_is_found_and_all_three_together() {
    let c = load("cub_scan");
    let f1 = line_of(&c, "vinclusive[0] = tile_aggregate;");
    let f2 = line_of(&c, "vaggregate[tile] = tile_aggregate;");
    let f3 = line_of(&c, "vinclusive[tile] = tile_prefix + tile_aggregate;");
    for (variant, want) in [
        ("no_fence_1", vec![f1]),
        ("no_fence_2", vec![f2]),
        ("no_fence_3", vec![f3]),
    ] {
        let r = minimize(c.clone(), variant, opts(Model::Bugaroo)).unwrap();
        assert!(r.confirmed, "{variant}: {r:?}");
        assert_eq!(fence_lines(&r), want, "{variant}");
        verified(&r);
    }
    let r = minimize(c.clone(), "no_fences", opts(Model::Bugaroo)).unwrap();
    assert!(r.confirmed);
    let mut all = vec![f1, f2, f3];
    all.sort();
    assert_eq!(fence_lines(&r), all);
    let patch = verified(&r);
    patched_passes(&c, patch, "no_fences", &[Model::Bugaroo], 200);
}

#[test]
fn work_stealing_queue_needs_the_push_fence() {
    let c = load("ct_octree");
    let r = minimize(c.clone(), "no_push_fence", opts(Model::Bugaroo)).unwrap();
    assert!(r.confirmed);
    assert_eq!(
        fence_lines(&r),
        vec![line_of(
            &c,
            "((volatile unsigned *)q.items)[me * CAP + t] = task;"
        )]
    );
    // `push` is inlined at three call sites: one source line carries the three PTX fences.
    let patch = verified(&r);
    assert_eq!(patch.sites.len(), 1, "{patch:?}");
    patched_passes(&c, patch, "no_push_fence", &[Model::Bugaroo], 200);
}

#[test]
fn a_block_scope_fence_is_not_enough_across_ctas() {
    let c = load("cbe_dot");
    // Under `scoped`, the block-fence variant fails; the fix is device scope. The block
    // fence is the campaign's macro (`-D UNLOCK_FENCE=__threadfence_block()`), which a
    // source patch cannot widen: a device fence goes after the store instead.
    let r = minimize(c.clone(), "block_fence", opts(Model::Scoped)).unwrap();
    assert!(r.confirmed);
    assert!(
        r.fences
            .iter()
            .all(|f| f.scope == fencehound_minimizer::edit::FenceScope::Device),
        "{r:?}"
    );
    assert_eq!(fence_lines(&r), vec![line_of(&c, "*c += cache[0];")]);
    verified(&r);
}
