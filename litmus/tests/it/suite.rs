//! The Dat3M PTX litmus suite (../shared/litmus) under every model: no forbidden outcome,
//! ever. Also: every generated kernel assembles with ptxas, results do not depend on the
//! number of worker threads, and malformed input gives positioned errors, not panics.

use fencehound_handlers::Model;
use fencehound_litmus::expect::Expectations;
use fencehound_litmus::suite::{expand, render_summary, run_suite, FileStatus};
use fencehound_litmus::{lower, parse, run_model, LitmusError, RunConfig};
use std::path::PathBuf;

/// `$FENCEHOUND_LITMUS_DIR`, else `../shared/litmus` beside the workspace.
fn suite_dir() -> Option<PathBuf> {
    let d = std::env::var_os("FENCEHOUND_LITMUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/litmus"));
    if d.join("expected-ptx-v7.5.csv").exists() {
        Some(d)
    } else {
        eprintln!("skipping: {} not found", d.display());
        None
    }
}

#[test]
fn whole_suite_is_sound_under_every_model() {
    let Some(dir) = suite_dir() else { return };
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
    let power = |m: &str| {
        r.summary
            .models
            .iter()
            .find(|x| x.model == m)
            .map_or(0, |x| x.weak_targets_reached.len())
    };
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

#[test]
fn generated_ptx_assembles_with_ptxas() {
    let Some(dir) = suite_dir() else { return };
    if fencehound_toolchain::find_ptxas().is_err() {
        eprintln!("skipping: no ptxas (run scripts/setup-cuda.sh)");
        return;
    }
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

const MP: &str = r#"PTX MP
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r1, y ;
 st.release.gpu y, 1 | ld.weak r2, x        ;
exists (P1:r1 == 1 /\ P1:r2 == 0)
"#;

#[test]
fn results_do_not_depend_on_worker_count() {
    let t = parse("mp.litmus", MP).unwrap();
    let low = lower("mp.litmus", &t).unwrap();
    let mk = |workers| RunConfig {
        runs: 600,
        workers,
        ..RunConfig::default()
    };
    for m in [Model::Bugaroo, Model::Scoped, Model::Weak] {
        let a = run_model(&t, &low, m, &mk(1));
        let b = run_model(&t, &low, m, &mk(2));
        assert_eq!(format!("{:?}", a.states), format!("{:?}", b.states));
        // Release/acquire across CTAs at gpu scope: the stale read is forbidden.
        assert!(!a.states.keys().any(|s| s == &vec![1, 0]), "{:?}", a.states);
    }
}

#[test]
fn malformed_input_gives_positioned_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "1:1"),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x 1 ;\nexists (x == 1)",
            "4:2",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n frob r0, x ;\nexists (x == 1)",
            "4:2",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == )",
            "5:",
        ),
        (
            "PTX t\n{ x=0 }\n P0@cta 0,gpu 0 ;\n goto L ;\nexists (x == 1)",
            "4:2",
        ),
        (
            "PTX t\n{ x=zero; }\n P0@cta 0,gpu 0 ;\nexists (x == 1)",
            "2:",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n",
            "2:9",
        ),
        ("PTX t\n\"unterminated\n{ x=0; }", "2:1"),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x | ld.weak r1, x ;\nexists (x == 1)",
            "4:",
        ),
    ];
    for (src, pos) in cases {
        match parse("t.litmus", src) {
            Err(e @ (LitmusError::Parse { .. } | LitmusError::Unsupported { .. })) => {
                let s = e.to_string();
                assert!(s.starts_with(&format!("t.litmus:{pos}")), "{src:?}: {s}");
            }
            other => panic!("{src:?}: expected an error, got {other:?}"),
        }
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap fuzz: every prefix of a real test, and some byte flips.
    let mut inputs: Vec<String> = (0..MP.len()).map(|i| MP[..i].to_string()).collect();
    for (i, c) in MP.char_indices().step_by(3) {
        for r in ['|', ';', '(', '~', ':', '9', '{', '}', '"', 'é'] {
            let mut s = MP.to_string();
            s.replace_range(i..i + c.len_utf8(), &r.to_string());
            inputs.push(s);
        }
    }
    for s in inputs {
        if let Ok(t) = parse("f.litmus", &s) {
            let _ = lower("f.litmus", &t);
        }
    }
}
