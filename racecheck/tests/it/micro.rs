//! The team's labelled microbenchmarks (`tests/kernels/*.cu`): race and no-race twins for
//! every class. Each case runs under four random schedules with plain memory, one with
//! scoped write buffers around the checker and one under the `weak` model (every read
//! that may be stale is); the classes found must be exactly the labels.

use crate::common;

use common::{cases, compile, run, verdict, Case, Memory};

/// `tests/kernels/FILE` compiled, and its labelled cases.
fn load(file: &str) -> (fencehound_ptx::Module, Vec<Case>) {
    let path = format!("{}/tests/kernels/{file}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (compile(file, &src, &[]), cases(&src))
}

fn check_file(file: &str) {
    let (module, cs) = load(file);
    assert!(!cs.is_empty(), "{file} has no cases");
    let mut failures = Vec::new();
    let mut local_picks = 0;
    for c in &cs {
        // Each row also with CTA-local picks (`exec`'s scheduling, `LaunchOptions::
        // cta_local`): the same labels must be found, no more.
        for (memory, seeds, cta_local) in [
            (Memory::Sc, 0..4, false),
            (Memory::Buffers(0.5), 7..8, false),
            // The schedules of the Sc row: a race that needs one (xb_last_block_fence's
            // fence-SC order: 3 of seeds 0-15) is there to find.
            (Memory::Weak(1.0), 0..4, false),
            // CTA-local rows: other seeds name other schedules. xb_last_block_fence's
            // race needs one again (over seeds 0..64 under `Sc`: 15 without, 21 with).
            (Memory::Sc, 0..8, true),
            (Memory::Buffers(0.5), 7..10, true),
            (Memory::Weak(1.0), 0..8, true),
        ] {
            let out = common::run_opts(
                &module,
                &c.name,
                c.grid,
                c.block,
                &c.args,
                seeds,
                memory,
                &format!(" ({memory:?}, cta_local {cta_local})"),
                cta_local,
            );
            local_picks += out.cta_local_picks;
            if let Err(e) = verdict(c, &out) {
                failures.push(format!("[{memory:?}, cta_local {cta_local}] {e}"));
            }
        }
        // The fast paths find and record what the general path does.
        let reports = |memory| -> Vec<String> {
            let out = run(&module, &c.name, c.grid, c.block, &c.args, 0..2, memory, "");
            out.reports.iter().map(|r| format!("{r:?}")).collect()
        };
        if reports(Memory::Sc) != reports(Memory::ScGeneral) {
            failures.push(format!(
                "{}: the fast paths report other races than the general path",
                c.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Where a case has CTAs to choose between, some picks were made among one CTA's warps.
    if cs.iter().any(|c| c.grid > 1) {
        assert!(local_picks > 0, "{file}: no CTA-local pick");
    }
}

#[test]
fn intra_block() {
    check_file("intra_block.cu");
}

#[test]
fn intra_warp() {
    check_file("intra_warp.cu");
}

#[test]
fn inter_block() {
    check_file("inter_block.cu");
}

#[test]
fn scope() {
    check_file("scope.cu");
}

#[test]
fn locks() {
    check_file("locks.cu");
}

#[test]
fn ptx_exact() {
    check_file("ptx_exact.cu");
}

#[test]
fn at_least_thirty_labelled_kernels() {
    let dir = format!("{}/tests/kernels", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    let mut racy = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let src = std::fs::read_to_string(e.unwrap().path()).unwrap();
        for c in cases(&src) {
            n += 1;
            racy += usize::from(!c.expect.is_empty());
        }
    }
    assert!(n >= 30, "{n} cases");
    assert!(racy >= 10 && n - racy >= 10, "{racy} racy of {n}");
}

#[test]
fn unordered() {
    check_file("unordered.cu");
}

#[test]
fn subword() {
    check_file("subword.cu");
}

/// Strong data handed across CTAs with `__threadfence_block()` on both sides is
/// reported, and the report names the block scope as what is wrong (before, the two
/// `.cta` fences made the pair look like a flag's release/acquire).
#[test]
fn block_fences_across_ctas_are_named() {
    let (module, cs) = load("unordered.cu");
    let c = cs
        .into_iter()
        .find(|c| c.name == "ui_mp_block_fences_across")
        .expect("the case");
    let out = run(
        &module,
        &c.name,
        c.grid,
        c.block,
        &c.args,
        0..2,
        Memory::Sc,
        "",
    );
    assert!(
        out.reports.iter().any(|r| r
            .missing
            .contains("the fences between them are block-scoped (`__threadfence_block()`")),
        "{:#?}",
        out.reports.iter().map(|r| &r.missing).collect::<Vec<_>>()
    );
}
