//! Issue 23, part 4: scope advice only from a model that sees scope, and one fence per
//! source line. `campaigns/minimizer/seqwriter.cu` is a seqlock writer whose data store
//! line (17) is unrolled into four PTX copies; its readers are in other CTAs.

use crate::common;

use common::{load, opts, patched_passes};
use fencehound_handlers::Model;
use fencehound_minimizer::{minimize, FixKind, MinimizeReport};

/// The lines a diff adds, without the file headers.
fn added(diff: &str) -> Vec<String> {
    diff.lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| l[1..].trim().to_string())
        .collect()
}

fn run(model: Model) -> MinimizeReport {
    let c = load("minimizer/seqwriter");
    let r = minimize(c.clone(), "unfenced", opts(model)).unwrap();
    assert!(r.failure.is_some(), "{r:#?}");
    assert!(r.confirmed, "{r:#?}");
    // Every fence the search found is after the line-17 store copies.
    assert!(
        r.fences
            .iter()
            .all(|f| f.after.cuda.as_ref().map(|c| c.line) == Some(17)),
        "{r:#?}"
    );
    let v = r.verification.as_ref().expect("a verification");
    assert!(v.verified, "{}", v.summary());
    let p = r.patch.as_ref().expect("a patch");
    // One line, one fence: the strongest, once.
    assert_eq!(
        added(&p.diff),
        vec!["__threadfence();".to_string()],
        "{}",
        p.diff
    );
    patched_passes(&c, p, "unfenced", &[Model::Scoped, Model::Weak], 200);
    r
}

#[test]
fn bugaroo_does_not_judge_scope_and_inserts_one_device_fence() {
    let r = run(Model::Bugaroo);
    for f in &r.fences {
        assert_eq!(f.fix, FixKind::DeviceFence, "{f:#?}");
        assert!(f.block_scope_fails.is_none());
        // Block scope is neither recommended nor called sufficient: it was not judged.
        let block = f
            .options
            .iter()
            .find(|o| o.kind == FixKind::BlockFence)
            .unwrap();
        assert_eq!(block.works, None, "{block:#?}");
        assert!(
            block.note.contains("cannot judge under bugaroo"),
            "{}",
            block.note
        );
        assert!(
            !f.reason.contains("__threadfence_block() (CTA scope)"),
            "{}",
            f.reason
        );
    }
    let note = r.scope_note.as_deref().expect("the scope caveat");
    assert!(note.contains("--model scoped"), "{note}");
    assert!(!r.diff.contains("__threadfence_block"), "{}", r.diff);
}

#[test]
fn scoped_searches_the_scope_and_refutes_block_scope() {
    let r = run(Model::Scoped);
    assert!(r.scope_note.is_none(), "{:?}", r.scope_note);
    for f in &r.fences {
        assert_eq!(f.fix, FixKind::DeviceFence, "{f:#?}");
        let block = f
            .options
            .iter()
            .find(|o| o.kind == FixKind::BlockFence)
            .unwrap();
        assert_eq!(block.works, Some(false), "{block:#?}");
        assert!(f.block_scope_fails.is_some());
    }
}

/// `campaigns/minimizer/mixedscope.cu`: the four copies of line 15 need different
/// strengths (slot 0 is read inside the writer's CTA, slots 1–3 by another CTA). Judged
/// copy by copy, copy 0 would get `__threadfence_block()` and the others `__threadfence()`
/// — two fences after one line. Judged together, the line gets one `__threadfence();`.
#[test]
fn copies_needing_different_strengths_get_the_strongest_once() {
    use fencehound_fuzzer::{execute, prepare, prepare_with_ptx, ExecSpec};
    use fencehound_minimizer::edit::{apply_all, FenceScope, PtxEdit};
    let c = load("minimizer/mixedscope");
    let r = minimize(c.clone(), "unfenced", opts(Model::Scoped)).unwrap();
    assert!(r.confirmed, "{r:#?}");
    assert_eq!(r.fences.len(), 4, "{r:#?}");
    for f in &r.fences {
        assert_eq!(f.fix, FixKind::DeviceFence, "{f:#?}");
        let block = f
            .options
            .iter()
            .find(|o| o.kind == FixKind::BlockFence)
            .unwrap();
        assert_eq!(block.works, Some(false), "{block:#?}");
    }
    let v = r.verification.as_ref().expect("a verification");
    assert!(v.verified, "{}", v.summary());
    let p = r.patch.as_ref().unwrap();
    assert_eq!(
        added(&p.diff),
        vec!["__threadfence();".to_string()],
        "{}",
        p.diff
    );
    patched_passes(&c, p, "unfenced", &[Model::Scoped, Model::Weak], 200);

    // The copies do need different strengths: a block fence after copy 0 (device fences
    // after the others) passes, a block fence after copy 1 fails.
    let base = prepare(c.clone(), "unfenced").unwrap();
    let mut at: Vec<_> = r.fences.iter().map(|f| f.after.at.clone()).collect();
    at.sort_by_key(|a| a.ptx_line);
    let failures = |block: usize| -> usize {
        let edits: Vec<PtxEdit> = at
            .iter()
            .enumerate()
            .map(|(k, a)| PtxEdit::InsertFence {
                after: a.clone(),
                scope: if k == block {
                    FenceScope::Block
                } else {
                    FenceScope::Device
                },
            })
            .collect();
        let m = apply_all(&base.module, &edits).unwrap();
        let prep = prepare_with_ptx(c.clone(), "unfenced", fencehound_ptx::print(&m)).unwrap();
        let mut n = 0;
        for p in [0.5, 1.0] {
            for seed in 0..200u64 {
                let spec = ExecSpec {
                    id: 0,
                    model: Model::Scoped,
                    p,
                    seed,
                    scheduler: fencehound_vgpu::SchedulerKind::Random,
                    trace: false,
                    filters: Default::default(),
                    race: false,
                };
                if execute(&prep, &spec, None).verdict.is_failure() {
                    n += 1;
                }
            }
        }
        n
    };
    assert_eq!(failures(0), 0);
    assert!(failures(1) > 0);
}
