//! Issue 13: patches a user can apply blindly. One kernel of our own per case
//! (`campaigns/minimizer/`); each patch applies with `git apply` from the campaign's
//! folder and the patched source passes 1,000 seeds.

use crate::common;

use common::{line_of, load, opts, patched_passes};
use fencehound_handlers::Model;
use fencehound_minimizer::source::{Fit, Patch};
use fencehound_minimizer::{
    audit, minimize, FenceSide, FenceVerdict, FixKind, MinimizeReport, DEFAULT_MODEL,
};

const SEEDS: u32 = 1000;

/// Lines the diff adds (`+`) or removes (`-`), without the file headers.
fn changed(diff: &str, sign: char) -> usize {
    diff.lines()
        .filter(|l| l.starts_with(sign) && !l.starts_with("+++") && !l.starts_with("---"))
        .count()
}

/// The patch of a minimize report, which must be verified.
fn verified(r: &MinimizeReport) -> &Patch {
    let v = r.verification.as_ref().expect("a verification");
    assert!(v.verified, "{}\n{r:#?}", v.summary());
    assert!(v.runs > 0);
    assert!(v.summary().starts_with("patch verified: 0 failures in"));
    r.patch.as_ref().expect("a patch")
}

fn minimized(
    name: &str,
    variant: &str,
) -> (std::sync::Arc<fencehound_fuzzer::Campaign>, MinimizeReport) {
    let c = load(&format!("minimizer/{name}"));
    let r = minimize(c.clone(), variant, opts(DEFAULT_MODEL)).unwrap();
    assert!(r.failure.is_some(), "{name}/{variant} should fail");
    assert!(r.confirmed, "{r:#?}");
    (c, r)
}

#[test]
fn two_statements_on_one_line() {
    let (c, r) = minimized("oneline", "unfenced");
    assert_eq!(r.fences.len(), 1, "{r:#?}");
    assert_eq!(r.fences[0].fit, Some(Fit::Exact));
    // Store buffering finds writer-side fences only (loads are never delayed).
    assert_eq!(r.fences[0].side, FenceSide::Writer);
    let p = verified(&r);
    assert!(
        p.diff
            .contains("+        data[i] = i + 100; __threadfence(); flag[i] = 1;\n"),
        "{}",
        p.diff
    );
    assert_eq!(
        p.sites[0].line,
        line_of(&c, "data[i] = i + 100; flag[i] = 1;")
    );
    assert_eq!(p.sites[0].text, "data[i] = i + 100;");
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

/// A fence needed after a loop that NVRTC unrolls goes after the loop: the search puts
/// one fence after the last copy of the store, which a fence after the statement (in the
/// loop's body) would not compile to — it gave a fence after every store.
#[test]
fn a_fence_after_an_unrolled_loop_goes_after_the_loop() {
    let (c, r) = minimized("loopexit", "unfenced");
    assert_eq!(r.fences.len(), 1, "{r:#?}");
    assert_eq!(r.fences[0].fit, Some(Fit::Exact), "{r:#?}");
    let p = verified(&r);
    assert!(
        p.diff.contains(
            "             record[i * 4 + k] = 10 * i + k + 1;\n+        __threadfence();\n         RECORD_FENCE;\n"
        ),
        "{}",
        p.diff
    );
    assert_eq!(changed(&p.diff, '+'), 1, "{}", p.diff);
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn do_while_with_the_store_and_the_cas_on_one_line() {
    let (c, r) = minimized("dowhile", "unfenced");
    assert_eq!(r.fences[0].fit, Some(Fit::Exact));
    let p = verified(&r);
    assert!(
        p.diff.contains(
            "+        do { old = *(volatile int *)top; next[me] = old; __threadfence(); } while (atomicCAS(top, old, me) != old);\n"
        ),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn two_fences_each_redundant_given_the_other_are_not_both_removed() {
    let c = load("minimizer/twofences");
    let r = audit(c.clone(), "fenced", opts(DEFAULT_MODEL)).unwrap();
    assert!(r.base_failure.is_none());
    // The producer's two fences, and the consumer's (necessary: its acquire side).
    assert_eq!(r.fences.len(), 3, "{r:#?}");
    let first = c.source.file_name().unwrap().to_string_lossy().to_string();
    let (l1, l2) = (10, 12);
    let at = |l: u32| {
        r.fences
            .iter()
            .find(|f| f.source.as_ref().map(|s| s.line) == Some(l))
            .unwrap_or_else(|| panic!("no fence at line {l}: {r:#?}"))
    };
    match &at(l1).verdict {
        FenceVerdict::LikelyRedundant {
            given_that_stay, ..
        } => assert_eq!(given_that_stay, &vec![format!("{first}:{l2}")]),
        v => panic!("{v:?}"),
    }
    match &at(l2).verdict {
        FenceVerdict::NeededWithOthersRemoved { with, .. } => {
            assert_eq!(with, &vec![format!("{first}:{l1}")])
        }
        v => panic!("{v:?}"),
    }
    let v = r.verification.as_ref().unwrap();
    assert!(v.verified, "{}", v.summary());
    let p = r.patch.as_ref().unwrap();
    assert_eq!(changed(&p.diff, '-'), 1, "{}", p.diff);
    assert_eq!(changed(&p.diff, '+'), 0, "{}", p.diff);
    assert!(
        p.diff
            .contains("-        __threadfence();\n         count[i] = 1;"),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "fenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn unrolled_copies_that_never_run_are_not_exercised_never_redundant() {
    let c = load("minimizer/unrolled");
    let r = audit(c.clone(), "fenced", opts(DEFAULT_MODEL)).unwrap();
    assert_eq!(r.fences.len(), 3, "{r:#?}");
    let at = |needle: &str| {
        let l = line_of(&c, needle);
        r.fences
            .iter()
            .find(|f| f.source.as_ref().map(|s| s.line) == Some(l))
            .unwrap_or_else(|| panic!("no fence at line {l}: {r:#?}"))
    };
    let slot = at("SLOT_FENCE;");
    let scratch = at("__threadfence_block();");
    assert_eq!(slot.copies.len(), 4);
    assert_eq!(slot.copies.iter().filter(|c| c.reached == 0).count(), 2);
    assert!(
        matches!(slot.verdict, FenceVerdict::Necessary { .. }),
        "{slot:#?}"
    );
    assert_eq!(
        scratch.verdict,
        FenceVerdict::NotExercised {
            copies: 4,
            unreached: 2
        }
    );
    // Nothing is removed: no copy of either line is called redundant.
    assert!(r.patch.is_none() && r.diff.is_empty(), "{}", r.diff);
    // Without the slot fence, the fence goes back on the source line: one statement
    // carries all four copies (two of them never run, hence "covers").
    let r = minimize(c.clone(), "no_slot_fence", opts(DEFAULT_MODEL)).unwrap();
    assert!(r.confirmed, "{r:#?}");
    let p = verified(&r);
    assert_eq!(p.sites.len(), 1, "{p:#?}");
    assert_eq!(p.sites[0].line, line_of(&c, "slot[i * 4 + j] = i + j + 1;"));
    assert!(matches!(
        r.fences[0].fit,
        Some(Fit::Exact | Fit::Covers { .. })
    ));
    patched_passes(&c, p, "no_slot_fence", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn a_fence_needed_inside_an_included_helper() {
    let (c, r) = minimized("helper", "unfenced");
    // `publish` is inlined twice; the fence goes into the helper once, for both.
    let p = verified(&r);
    assert_eq!(p.files.len(), 1, "{p:#?}");
    assert_eq!(p.files[0].path, "publish.cuh");
    assert!(
        p.diff.starts_with("--- a/publish.cuh\n+++ b/publish.cuh\n"),
        "{}",
        p.diff
    );
    assert!(
        p.diff
            .contains("     slot[0] = v;\n+    __threadfence();\n     flag[0] = 1;"),
        "{}",
        p.diff
    );
    assert_eq!(r.fences.len(), 2);
    assert!(r.fences.iter().all(|f| f.fit == Some(Fit::Exact)), "{r:#?}");
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn a_store_inside_a_library_gets_its_fence_in_the_users_file() {
    let (c, r) = minimized("library", "unfenced");
    let f = &r.fences[0];
    // The report names the store inside CUB...
    assert!(
        f.after.location().starts_with("thread_store.cuh:"),
        "{f:#?}"
    );
    assert!(f.after.stack.len() > 1);
    // ...and the fence goes into the user's file, after the call.
    let p = verified(&r);
    assert_eq!(p.files.len(), 1);
    assert_eq!(p.files[0].path, "library.cu");
    assert_eq!(
        p.sites[0].line,
        line_of(&c, "cub::ThreadStore<cub::STORE_CG>(slot + i, i + 7);")
    );
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn an_unbraced_if_gets_braces() {
    let (c, r) = minimized("unbraced", "unfenced");
    let p = verified(&r);
    assert!(
        p.diff.contains(
            "-    if (threadIdx.x == 0)\n+    if (threadIdx.x == 0) {\n         partial[blockIdx.x] = sum;\n-    else\n+        __threadfence();\n+    } else\n"
        ),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "unfenced", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn a_block_fence_is_widened_not_doubled() {
    let (c, r) = minimized("widen", "block_fence");
    let f = &r.fences[0];
    assert_eq!(f.fix, FixKind::WidenFence, "{f:#?}");
    // The block-scope fence was tried first and fails under scoped.
    let block = f
        .options
        .iter()
        .find(|o| o.kind == FixKind::BlockFence)
        .unwrap();
    assert_eq!(block.works, Some(false));
    let p = verified(&r);
    assert!(
        p.diff
            .contains("-        __threadfence_block();\n+        __threadfence();\n"),
        "{}",
        p.diff
    );
    assert_eq!(changed(&p.diff, '+'), 1, "{}", p.diff);
    patched_passes(&c, p, "block_fence", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn code_using_libcupp_gets_a_release_store_and_an_acquire_load() {
    let (c, r) = minimized("libcupp", "relaxed");
    let side = |s: FenceSide| r.fences.iter().find(|f| f.side == s).unwrap();
    // The writer's relaxed store becomes a release; under `weak` the reader's relaxed
    // poll must become an acquire too.
    assert_eq!(side(FenceSide::Writer).fix, FixKind::ReleaseStore, "{r:#?}");
    assert_eq!(side(FenceSide::Reader).fix, FixKind::AcquireLoad, "{r:#?}");
    let p = verified(&r);
    assert!(
        p.diff
            .contains("+        f.store(1, cuda::memory_order_release);\n"),
        "{}",
        p.diff
    );
    assert!(
        p.diff
            .contains("+        while (f.load(cuda::memory_order_acquire) == 0) {\n"),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "relaxed", &[DEFAULT_MODEL], SEEDS);
}

#[test]
fn warp_synchronous_code_gets_syncwarp() {
    let (c, r) = minimized("warpsync", "unsynced");
    let f = &r.fences[0];
    assert_eq!(f.fix, FixKind::SyncWarp, "{f:#?}");
    let p = verified(&r);
    assert!(
        p.diff
            .contains("     buf[lane] = in[lane] * 3;\n+    __syncwarp();\n"),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "unsynced", &[DEFAULT_MODEL, Model::Bugaroo], SEEDS);
}

#[test]
fn a_lock_taken_without_a_fence_gets_a_reader_side_fence_under_weak() {
    let c = load("minimizer/lock");
    // Store buffering never delays the loads of the critical section: nothing fails.
    let r = minimize(c.clone(), "no_lock_fence", opts(Model::Scoped)).unwrap();
    assert!(r.failure.is_none(), "{r:#?}");
    let r = minimize(c.clone(), "no_lock_fence", opts(Model::Weak)).unwrap();
    assert!(r.confirmed, "{r:#?}");
    assert_eq!(r.fences.len(), 1, "{r:#?}");
    let f = &r.fences[0];
    assert_eq!(f.side, FenceSide::Reader);
    assert_eq!(
        f.after.cuda.as_ref().map(|l| l.line),
        Some(line_of(&c, "while (atomicCAS(mutex, 0, 1) != 0) {"))
    );
    let p = verified(&r);
    // After the polling loop, where the lock is held.
    assert!(
        p.diff.contains(
            "     while (atomicCAS(mutex, 0, 1) != 0) {\n     }\n+    __threadfence();\n"
        ),
        "{}",
        p.diff
    );
    patched_passes(&c, p, "no_lock_fence", &[Model::Weak], SEEDS);
}
