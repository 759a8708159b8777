//! The minimizer on the campaign corpus: it names the missing fence by CUDA line, the
//! audit separates necessary from redundant fences, and applying the suggested patch makes
//! the variant pass when fuzzed again.

use fencehound_fuzzer::{runner, Campaign, Plan};
use fencehound_handlers::Model;
use fencehound_minimizer::{apply_insertions, audit, minimize, FenceVerdict, Options};
use fencehound_vgpu::SchedulerKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn campaigns() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns")
}

fn load(name: &str) -> Arc<Campaign> {
    Arc::new(
        Campaign::load(&campaigns().join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{e}")),
    )
}

fn opts(model: Model) -> Options {
    Options {
        model,
        ps: vec![0.5, 1.0],
        batch: 20,
        confirm: 50,
        audit_runs: 50,
        master_seed: 1,
        scheduler: SchedulerKind::Random,
        jobs: 2,
        cache: None,
    }
}

/// The 1-based line of the source that contains `needle`.
fn line_of(c: &Campaign, needle: &str) -> u32 {
    let src = std::fs::read_to_string(&c.source).unwrap();
    let hits: Vec<u32> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == needle || (needle.len() > 20 && l.contains(needle)))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "`{needle}` should occur once in {}",
        c.source.display()
    );
    hits[0]
}

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

/// Writes the patched source next to a copy of the campaign and fuzzes `variant` again.
fn fuzz_patched(
    c: &Campaign,
    variant: &str,
    r: &fencehound_minimizer::MinimizeReport,
    model: Model,
) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(&c.source).unwrap();
    let patched = apply_insertions(&src, &r.fences);
    assert_ne!(src, patched);
    let name = c.source.file_name().unwrap();
    std::fs::write(dir.path().join(name), patched).unwrap();
    let toml = dir.path().join("campaign.toml");
    std::fs::write(&toml, &c.text).unwrap();
    let c2 = Arc::new(Campaign::load(&toml).unwrap());
    let prep = Arc::new(fencehound_fuzzer::prepare(c2.clone(), variant).unwrap());
    let plan = Plan {
        variants: vec![variant.into()],
        models: vec![model],
        ps: vec![0.25, 0.5, 1.0],
        runs: 60,
        master_seed: 99,
        scheduler: SchedulerKind::Random,
        scheduler_name: "random".into(),
        jobs: 2,
        stop_at_first: false,
        race: false,
    };
    let rep = runner::run(
        &c2,
        vec![prep],
        &plan,
        None,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .unwrap();
    assert_eq!(rep.executions_done, 180);
    rep.failures.len() as u64
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
    assert_eq!(fuzz_patched(&c, "no_fence", &r, Model::Bugaroo), 0);
}

#[test]
fn cbe_dot_audit_lock_fence_redundant_unlock_fence_necessary() {
    let c = load("cbe_dot");
    let r = audit(c.clone(), "two_fences", opts(Model::Bugaroo)).unwrap();
    assert!(r.base_failure.is_none());
    assert_eq!(r.fences.len(), 2, "{r:?}");
    let by_line = |needle: &str| {
        let l = line_of(&c, needle);
        r.fences
            .iter()
            .find(|f| f.fence.cuda.as_ref().map(|x| x.line) == Some(l))
            .unwrap_or_else(|| panic!("no fence at line {l}: {r:?}"))
            .clone()
    };
    let lock = by_line("LOCK_FENCE;");
    let unlock = by_line("UNLOCK_FENCE;");
    assert!(
        matches!(lock.verdict, FenceVerdict::LikelyRedundant { .. }),
        "{lock:?}"
    );
    assert!(
        matches!(unlock.verdict, FenceVerdict::Necessary { .. }),
        "{unlock:?}"
    );
    // And under `scoped` the unlock fence must stay device-scope.
    assert!(
        matches!(unlock.block_scope, Some(FenceVerdict::Necessary { .. })),
        "{unlock:?}"
    );
    assert!(r.diff.contains("-    LOCK_FENCE;"), "{}", r.diff);
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
    assert_eq!(fuzz_patched(&c, "unfenced", &r, Model::Bugaroo), 0);
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
    }
    let r = minimize(c.clone(), "no_fences", opts(Model::Bugaroo)).unwrap();
    assert!(r.confirmed);
    let mut all = vec![f1, f2, f3];
    all.sort();
    assert_eq!(fence_lines(&r), all);
    assert_eq!(fuzz_patched(&c, "no_fences", &r, Model::Bugaroo), 0);
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
    assert_eq!(fuzz_patched(&c, "no_push_fence", &r, Model::Bugaroo), 0);
}

#[test]
fn a_block_scope_fence_is_not_enough_across_ctas() {
    let c = load("cbe_dot");
    // Under `scoped`, the block-fence variant fails; the fix is a device-scope fence.
    let r = minimize(c.clone(), "block_fence", opts(Model::Scoped)).unwrap();
    assert!(r.confirmed);
    assert!(
        r.fences
            .iter()
            .all(|f| f.scope == fencehound_minimizer::edit::FenceScope::Device),
        "{r:?}"
    );
    assert_eq!(fence_lines(&r), vec![line_of(&c, "*c += cache[0];")]);
}
