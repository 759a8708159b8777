//! The Dat3M PTX litmus suite under every model: no forbidden outcome, ever; and every
//! lowered kernel assembles with ptxas.

use fencehound_handlers::Model;
use fencehound_litmus::expect::Expectations;
use fencehound_litmus::suite::{expand, render_summary, run_suite, FileStatus};
use fencehound_litmus::{lower, RunConfig};
use std::path::Path;

pub fn whole_suite_is_sound_under_every_model(dir: &Path) {
    let files = expand(&[dir.join("ptx")]).unwrap();
    assert!(files.len() >= 104, "{} files", files.len());
    let exp = Expectations::load(&dir.join("expected-ptx-v7.5.csv")).unwrap();
    let cfg = RunConfig {
        runs: 200,
        ..RunConfig::default()
    };
    let models = [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak];
    let r = run_suite(&files, &models, &cfg, Some(&exp), |_| {});
    eprintln!("{}", render_summary(&r.summary));
    assert!(r.summary.errors.is_empty(), "{:?}", r.summary.errors);
    assert_eq!(r.summary.unsound(), 0, "{}", render_summary(&r.summary));
    // Only the tests placing threads on two GPUs are unsupported.
    assert_eq!(
        r.summary.unsupported.len(),
        6,
        "{:?}",
        r.summary.unsupported
    );
    assert!(r
        .summary
        .unsupported
        .iter()
        .all(|u| u.contains("different GPUs")));
    // The sc model never produces a weak target, by definition; the buffered models do.
    let power = |m: &str| crate::weak_power(&r.summary, m);
    assert_eq!(power("sc"), 0);
    assert!(power("bugaroo") >= 3, "bugaroo power {}", power("bugaroo"));
    assert!(power("scoped") >= power("bugaroo"));
    // Loads that may read older values reach most of what PTX allows (25 of 31 at 4,000
    // runs; litmus/RESULTS.md lists the six it cannot reach and why).
    assert!(power("weak") >= 21, "weak power {}", power("weak"));
    for f in &r.files {
        if let FileStatus::Ran { models, .. } = &f.status {
            for m in models {
                assert_eq!(m.faults, 0, "{}: {:?}", f.file, m.first_fault);
            }
        }
    }
}

pub fn generated_ptx_assembles_with_ptxas(dir: &Path) {
    let mut n = 0;
    for f in expand(&[dir.join("ptx")]).unwrap() {
        let t = fencehound_litmus::load(&f).unwrap();
        let low = match lower(&f.display().to_string(), &t) {
            Ok(l) => l,
            Err(e) if e.is_unsupported() => continue,
            Err(e) => panic!("{e}"),
        };
        if let Err(e) = fencehound_toolchain::assemble(&low.ptx, "sm_80") {
            panic!(
                "{}: ptxas rejects the lowering: {e}\n{}",
                f.display(),
                low.ptx
            );
        }
        n += 1;
    }
    assert!(n >= 98, "{n} assembled");
}
