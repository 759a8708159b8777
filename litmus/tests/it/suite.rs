//! Litmus runs that need no suite: results do not depend on the number of worker threads,
//! and malformed input gives positioned errors, not panics. (The Dat3M suite itself,
//! `../shared/litmus`, is run by `tests/dat3m/suite.rs`.)

use fencehound_handlers::Model;
use fencehound_litmus::{lower, parse, run_model, LitmusError, RunConfig};

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
