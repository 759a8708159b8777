//! A bounded sample of generated programs (`fencehound litmus --generate`) under every
//! model, judged by the axiomatic checker: no model may produce a final state the PTX
//! model forbids, except the outcomes a known bug explains (`src/known.rs`, the one
//! place that lists them; `litmus/UNSOUND.md`). When a bug is fixed, delete its entry and
//! this test checks the fix.

use fencehound_litmus::soundness::{self, Config};

#[test]
fn generated_programs_are_sound_under_every_model_but_known_bugs() {
    let cfg = Config {
        count: 200,
        seed: 23,
        runs: 200,
        weak_runs: 800,
        ..Config::default()
    };
    let t0 = std::time::Instant::now();
    let rep = soundness::run(&cfg, |_| {});
    eprintln!("{}", soundness::render(&rep, 12));
    eprintln!("{:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(rep.tests, 200);
    assert!(rep.skipped.is_empty(), "{:?}", rep.skipped);
    assert_eq!(rep.faults, 0);
    let unexplained: Vec<String> = rep
        .unexplained()
        .map(|u| {
            format!(
                "{} (program {}): {:?}\n{}",
                u.model, u.index, u.state, u.program
            )
        })
        .collect();
    assert!(
        unexplained.is_empty(),
        "unsound:\n{}",
        unexplained.join("\n")
    );
    // `sc` interleaves: every state it produces is sequentially consistent by the
    // checker's own enumeration, so it reaches no weak outcome.
    assert!(rep.sc_mismatch.is_empty(), "{:?}", rep.sc_mismatch);
    let reached = |m: &str| rep.total.reached.get(m).copied().unwrap_or_default();
    assert_eq!(reached("sc"), (0, 0));
    // The generator makes weak outcomes, and `weak` reaches most plain ones even in a
    // short run (90.5% of 346 over 300 programs at up to 3000 runs; BENCHMARKS.md).
    assert!(rep.total.weak_plain >= 100, "{:?}", rep.total);
    assert!(
        reached("weak").1 * 10 >= rep.total.weak_plain * 7,
        "weak reached {:?} of {} plain",
        reached("weak"),
        rep.total.weak_plain
    );
    assert!(reached("weak").1 > reached("scoped").1);
    assert!(reached("scoped").1 >= reached("bugaroo").1);
}

/// The generator draws warps split into sub-warp barrier groups (disjoint member masks at
/// one `bar.warp.sync`, as cooperative-groups tiles make), and those programs are sound:
/// until hb kept one barrier instance per warp *and mask*, `weak` produced outcomes the
/// checker forbids for them (`tests/patterns/bar-warp-sync_groups.litmus`).
#[test]
fn generated_warps_split_into_sync_groups_and_stay_sound() {
    use fencehound_litmus::ast::Instr;
    use fencehound_litmus::generate::generate;
    let split: Vec<u64> = (0..3000)
        .filter(|&i| {
            let t = generate(1, i);
            let groups: std::collections::BTreeSet<u32> = t
                .threads
                .iter()
                .flat_map(|th| th.instrs.iter())
                .filter_map(|x| match x.node {
                    Instr::WarpSync { group } => Some(group),
                    _ => None,
                })
                .collect();
            groups.len() > 1
        })
        .collect();
    eprintln!(
        "{} of 3000 programs split a warp into sync groups",
        split.len()
    );
    assert!(split.len() >= 3, "{split:?}");
    for &i in split.iter().take(8) {
        let t = generate(1, i);
        let text = fencehound_litmus::print::print(&t);
        assert!(text.contains("bar.warp.sync 1"), "{text}");
        let allowed = fencehound_litmus::axiom::outcomes(&t, &Default::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .allowed;
        let low = fencehound_litmus::lower("gen", &t).unwrap();
        for m in [
            fencehound_handlers::Model::Sc,
            fencehound_handlers::Model::Bugaroo,
            fencehound_handlers::Model::Scoped,
            fencehound_handlers::Model::Weak,
        ] {
            let cfg = fencehound_litmus::RunConfig {
                runs: 300,
                ..Default::default()
            };
            let h = fencehound_litmus::run_model(&t, &low, m, &cfg);
            assert_eq!(h.faults, 0, "{text}");
            for st in h.states.keys() {
                assert!(
                    allowed.contains(st),
                    "{} produced {st:?}, forbidden:\n{text}",
                    m.name()
                );
            }
        }
    }
}

#[test]
fn generation_is_deterministic_and_programs_round_trip() {
    for i in 0..300 {
        let a = fencehound_litmus::generate::generate(7, i);
        let b = fencehound_litmus::generate::generate(7, i);
        assert_eq!(a, b);
        let text = fencehound_litmus::print::print(&a);
        let back =
            fencehound_litmus::parse("gen.litmus", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(fencehound_litmus::print::print(&back), text);
        assert_eq!(back.observed(), a.observed());
        // Every generated program lowers (the vgpu and ptxas forms are checked on the
        // Dat3M suite) and stays within the grammar's bounds.
        fencehound_litmus::lower("gen", &a).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!((2..=4).contains(&a.threads.len()), "{text}");
        assert!(a.threads.iter().all(|t| t.instrs.len() <= 3), "{text}");
    }
}

#[test]
fn shapes_have_their_classic_names() {
    use fencehound_litmus::generate::shape;
    let name = |src: &str| shape(&fencehound_litmus::parse("s", src).unwrap());
    let mp = "PTX mp\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r0, y ;\n fence.sc.gpu | ld.weak r1, x ;\n st.weak y, 1 | ;\nexists (1:r0 == 1)\n";
    assert_eq!(name(mp), "MP");
    // Thread order and location names do not matter.
    let mp2 = "PTX mp\n{ a=0; b=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, a | st.weak b, 1 ;\n ld.weak r1, b | st.weak a, 1 ;\nexists (0:r0 == 1)\n";
    assert_eq!(name(mp2), "MP");
    let sb = "PTX sb\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | st.weak y, 1 ;\n ld.weak r0, y | ld.weak r1, x ;\nexists (0:r0 == 0)\n";
    assert_eq!(name(sb), "SB");
    let iriw = "PTX iriw\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x | st.weak y, 1 | ld.weak r2, y ;\n | ld.weak r1, y | | ld.weak r3, x ;\nexists (1:r0 == 1)\n";
    assert_eq!(name(iriw), "IRIW");
    // Containment: a 3-thread program with an MP pair and an extra reader contains MP.
    let mp3 = "PTX mp3\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n st.weak x, 1 | ld.weak r0, y | ld.weak r2, x ;\n st.weak y, 1 | ld.weak r1, x | ;\nexists (1:r0 == 1)\n";
    let t = fencehound_litmus::parse("mp3", mp3).unwrap();
    let ids = fencehound_litmus::generate::idioms(&t);
    assert!(ids.contains(&"MP") && !ids.contains(&"SB"), "{ids:?}");
    assert!(
        fencehound_litmus::generate::idioms(&fencehound_litmus::parse("sb", sb).unwrap())
            .contains(&"SB")
    );
}
