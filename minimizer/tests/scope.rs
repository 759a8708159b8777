//! Issue 23, part 4: scope advice only from a model that sees scope, and one fence per
//! source line. `campaigns/minimizer/seqwriter.cu` is a seqlock writer whose data store
//! line (17) is unrolled into four PTX copies; its readers are in other CTAs.

mod common;

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
