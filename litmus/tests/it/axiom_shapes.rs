//! The axiomatic checker on the classic shapes, with and without synchronization, at each
//! scope. Every verdict is derived here from the PTX ISA's memory consistency model (§8;
//! the reasoning is in the comment beside each case), not copied from another tool.
//! Also: the SC final states are a subset of the allowed ones, the checker is fast on
//! 4-thread × 3-operation programs, and malformed or unsupported input gives typed errors.

use fencehound_litmus::axiom::{self, AxiomError, Options};
use fencehound_litmus::parse;
use std::time::Instant;

/// Placement of a two-thread test: same CTA, two CTAs of one GPU, or two GPUs.
#[derive(Clone, Copy, Debug)]
enum Place {
    SameCta,
    OtherCta,
    OtherGpu,
}

fn header(n: usize, p: Place) -> String {
    (0..n)
        .map(|i| match (p, i) {
            (_, 0) | (Place::SameCta, _) => format!("P{i}@cta 0,gpu 0"),
            (Place::OtherCta, _) => format!("P{i}@cta {i},gpu 0"),
            (Place::OtherGpu, _) => format!("P{i}@cta 0,gpu {i}"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A test from per-thread instruction lists.
fn test(name: &str, p: Place, threads: &[&[&str]], cond: &str) -> String {
    let rows = threads.iter().map(|t| t.len()).max().unwrap_or(0);
    let mut s = format!(
        "PTX {name}\n{{ x=0; y=0; }}\n {} ;\n",
        header(threads.len(), p)
    );
    for r in 0..rows {
        let cells: Vec<&str> = threads
            .iter()
            .map(|t| t.get(r).copied().unwrap_or(""))
            .collect();
        s.push_str(&format!(" {} ;\n", cells.join(" | ")));
    }
    s.push_str(&format!("exists ({cond})\n"));
    s
}

/// Whether the checker allows the `exists` target; also checks SC ⊆ allowed and time.
fn allowed(name: &str, src: &str) -> bool {
    let t = parse(name, src).unwrap_or_else(|e| panic!("{name}: {e}\n{src}"));
    let t0 = Instant::now();
    let opts = Options {
        sc: true,
        ..Options::default()
    };
    let v = axiom::verdict(&t, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    assert!(ms < 200.0, "{name}: {ms:.1} ms");
    let o = &v.outcomes;
    assert!(
        o.sc.is_subset(&o.allowed),
        "{name}: SC states not allowed: {:?}",
        o.sc.difference(&o.allowed).collect::<Vec<_>>()
    );
    assert!(!o.sc.is_empty(), "{name}: no SC execution");
    v.target_allowed
}

struct Case {
    name: String,
    src: String,
    allowed: bool,
}

fn case(name: impl Into<String>, src: String, allowed: bool) -> Case {
    Case {
        name: name.into(),
        src,
        allowed,
    }
}

fn run(cases: Vec<Case>) {
    let mut bad = Vec::new();
    for c in &cases {
        let got = allowed(&c.name, &c.src);
        if got != c.allowed {
            bad.push(format!(
                "{}: expected {}, checker says {}\n{}",
                c.name,
                if c.allowed { "allowed" } else { "forbidden" },
                if got { "allowed" } else { "forbidden" },
                c.src
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

const MP: &str = "1:r1 == 1 /\\ 1:r2 == 0";

#[test]
fn message_passing() {
    use Place::*;
    let mp = |name: &str, p, w: &[&str], r: &[&str], allowed| {
        case(
            format!("MP-{name}-{p:?}"),
            test(name, p, &[w, r], MP),
            allowed,
        )
    };
    run(vec![
        // No synchronization at all: the reader may see the flag and stale data.
        mp(
            "weak",
            OtherCta,
            &["st.weak x, 1", "st.weak y, 1"],
            &["ld.weak r1, y", "ld.weak r2, x"],
            true,
        ),
        mp(
            "relaxed",
            OtherCta,
            &["st.relaxed.gpu x, 1", "st.relaxed.gpu y, 1"],
            &["ld.relaxed.gpu r1, y", "ld.relaxed.gpu r2, x"],
            true,
        ),
        // Release pattern (a) observed by acquire pattern (a), morally strong: synchronizes,
        // so x=1 precedes the read of x in causality order (Causality axiom).
        mp(
            "rel-acq-gpu",
            OtherCta,
            &["st.weak x, 1", "st.release.gpu y, 1"],
            &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
            false,
        ),
        mp(
            "rel-acq-sys",
            OtherGpu,
            &["st.weak x, 1", "st.release.sys y, 1"],
            &["ld.acquire.sys r1, y", "ld.weak r2, x"],
            false,
        ),
        // .gpu scope does not include a thread of another GPU: not morally strong.
        mp(
            "rel-acq-gpu",
            OtherGpu,
            &["st.weak x, 1", "st.release.gpu y, 1"],
            &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
            true,
        ),
        // .cta scope includes only the CTA's threads.
        mp(
            "rel-acq-cta",
            SameCta,
            &["st.weak x, 1", "st.release.cta y, 1"],
            &["ld.acquire.cta r1, y", "ld.weak r2, x"],
            false,
        ),
        mp(
            "rel-acq-cta",
            OtherCta,
            &["st.weak x, 1", "st.release.cta y, 1"],
            &["ld.acquire.cta r1, y", "ld.weak r2, x"],
            true,
        ),
        // One side .cta, the other .gpu, across CTAs: the .cta operation's scope misses
        // the other thread.
        mp(
            "rel-cta-acq-gpu",
            OtherCta,
            &["st.weak x, 1", "st.release.cta y, 1"],
            &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
            true,
        ),
        // Release without acquire, or acquire without release: no pattern pair.
        mp(
            "rel-only",
            OtherCta,
            &["st.weak x, 1", "st.release.gpu y, 1"],
            &["ld.relaxed.gpu r1, y", "ld.weak r2, x"],
            true,
        ),
        mp(
            "acq-only",
            OtherCta,
            &["st.weak x, 1", "st.relaxed.gpu y, 1"],
            &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
            true,
        ),
        // Fences make patterns (c): fence then strong write, strong read then fence.
        mp(
            "fence-acqrel-gpu",
            OtherCta,
            &["st.weak x, 1", "fence.acq_rel.gpu", "st.relaxed.gpu y, 1"],
            &["ld.relaxed.gpu r1, y", "fence.acq_rel.gpu", "ld.weak r2, x"],
            false,
        ),
        mp(
            "fence-sc-gpu",
            OtherCta,
            &["st.weak x, 1", "fence.sc.gpu", "st.relaxed.gpu y, 1"],
            &["ld.relaxed.gpu r1, y", "fence.sc.gpu", "ld.weak r2, x"],
            false,
        ),
        mp(
            "fence-acqrel-cta",
            OtherCta,
            &["st.weak x, 1", "fence.acq_rel.cta", "st.relaxed.gpu y, 1"],
            &["ld.relaxed.gpu r1, y", "fence.acq_rel.cta", "ld.weak r2, x"],
            true,
        ),
        mp(
            "fence-acqrel-cta",
            SameCta,
            &["st.weak x, 1", "fence.acq_rel.cta", "st.relaxed.cta y, 1"],
            &["ld.relaxed.cta r1, y", "fence.acq_rel.cta", "ld.weak r2, x"],
            false,
        ),
        // The flag itself weak: a weak write is not strong, so no release pattern ends
        // in it and acq_rel fences do not synchronize...
        mp(
            "acqrel-weak-flag",
            OtherCta,
            &["st.weak x, 1", "fence.acq_rel.gpu", "st.weak y, 1"],
            &["ld.weak r1, y", "fence.acq_rel.gpu", "ld.weak r2, x"],
            true,
        ),
        // ... but fence.sc does: whichever fence is first in Fence-SC order synchronizes
        // with the other, and either order contradicts one of the reads (Causality).
        mp(
            "sc-weak-flag",
            OtherCta,
            &["st.weak x, 1", "fence.sc.gpu", "st.weak y, 1"],
            &["ld.weak r1, y", "fence.sc.gpu", "ld.weak r2, x"],
            false,
        ),
        // volatile is .relaxed.sys: with fences it synchronizes.
        mp(
            "fence-volatile",
            OtherCta,
            &["st.weak x, 1", "fence.acq_rel.sys", "st.volatile y, 1"],
            &["ld.volatile r1, y", "fence.acq_rel.sys", "ld.weak r2, x"],
            false,
        ),
        // Release sequence: the acquire reads an RMW that read the release (observation
        // order through an atomic).
        case(
            "MP-release-sequence",
            test(
                "MP-rs",
                OtherCta,
                &[
                    &["st.weak x, 1", "st.release.gpu y, 1"],
                    &["atom.relaxed.gpu.add r0, y, 1"],
                    &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
                ],
                "1:r0 == 1 /\\ 2:r1 == 2 /\\ 2:r2 == 0",
            ),
            false,
        ),
        // ... but not through a plain (non-atomic) store in between.
        case(
            "MP-broken-sequence",
            test(
                "MP-bs",
                OtherCta,
                &[
                    &["st.weak x, 1", "st.release.gpu y, 1"],
                    &["ld.relaxed.gpu r0, y", "st.relaxed.gpu y, 2"],
                    &["ld.acquire.gpu r1, y", "ld.weak r2, x"],
                ],
                "1:r0 == 1 /\\ 2:r1 == 2 /\\ 2:r2 == 0",
            ),
            true,
        ),
    ]);
}

#[test]
fn store_buffering() {
    use Place::*;
    const SB: &str = "0:r1 == 0 /\\ 1:r2 == 0";
    let sb = |name: &str, p, f: Option<&str>, st: &str, ld: &str, allowed| {
        let w0 = format!("{st} x, 1");
        let r0 = format!("{ld} r1, y");
        let w1 = format!("{st} y, 1");
        let r1 = format!("{ld} r2, x");
        let (t0, t1): (Vec<&str>, Vec<&str>) = match f {
            Some(f) => (vec![&w0, f, &r0], vec![&w1, f, &r1]),
            None => (vec![&w0, &r0], vec![&w1, &r1]),
        };
        case(
            format!("SB-{name}-{p:?}"),
            test(name, p, &[&t0, &t1], SB),
            allowed,
        )
    };
    run(vec![
        sb(
            "relaxed",
            OtherCta,
            None,
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            true,
        ),
        // Release/acquire does not order a write before a later read.
        sb(
            "rel-acq",
            OtherCta,
            None,
            "st.release.gpu",
            "ld.acquire.gpu",
            true,
        ),
        sb(
            "acqrel-fence",
            OtherCta,
            Some("fence.acq_rel.gpu"),
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            true,
        ),
        // fence.sc: the Fence-SC order relates the two fences one way; either way one
        // read is caused by the other thread's write (Causality through fr).
        sb(
            "sc-gpu",
            OtherCta,
            Some("fence.sc.gpu"),
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            false,
        ),
        sb(
            "sc-sys",
            OtherGpu,
            Some("fence.sc.sys"),
            "st.relaxed.sys",
            "ld.relaxed.sys",
            false,
        ),
        sb(
            "sc-gpu",
            OtherGpu,
            Some("fence.sc.gpu"),
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            true,
        ),
        sb(
            "sc-cta",
            SameCta,
            Some("fence.sc.cta"),
            "st.relaxed.cta",
            "ld.relaxed.cta",
            false,
        ),
        sb(
            "sc-cta",
            OtherCta,
            Some("fence.sc.cta"),
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            true,
        ),
        // Weak accesses with fence.sc: the first fence in Fence-SC order makes its
        // thread's write cause the other thread's read, and from-read needs no strength.
        sb(
            "sc-weak",
            OtherCta,
            Some("fence.sc.gpu"),
            "st.weak",
            "ld.weak",
            false,
        ),
    ]);
}

#[test]
fn load_buffering() {
    use Place::*;
    const LB: &str = "0:r1 == 1 /\\ 1:r2 == 1";
    let lb = |name: &str, p, t0: &[&str], t1: &[&str], allowed| {
        case(
            format!("LB-{name}-{p:?}"),
            test(name, p, &[t0, t1], LB),
            allowed,
        )
    };
    run(vec![
        // PTX allows load buffering without dependencies.
        lb(
            "relaxed",
            OtherCta,
            &["ld.relaxed.gpu r1, x", "st.relaxed.gpu y, 1"],
            &["ld.relaxed.gpu r2, y", "st.relaxed.gpu x, 1"],
            true,
        ),
        lb(
            "weak",
            SameCta,
            &["ld.weak r1, x", "st.weak y, 1"],
            &["ld.weak r2, y", "st.weak x, 1"],
            true,
        ),
        // Acquire reads alone do not forbid it (nothing releases)...
        lb(
            "acq",
            OtherCta,
            &["ld.acquire.gpu r1, x", "st.relaxed.gpu y, 1"],
            &["ld.acquire.gpu r2, y", "st.relaxed.gpu x, 1"],
            true,
        ),
        // ... release writes with acquire reads do: each read's write is caused by it.
        lb(
            "acq-rel",
            OtherCta,
            &["ld.acquire.gpu r1, x", "st.release.gpu y, 1"],
            &["ld.acquire.gpu r2, y", "st.release.gpu x, 1"],
            false,
        ),
        lb(
            "acqrel-fences",
            OtherCta,
            &[
                "ld.relaxed.gpu r1, x",
                "fence.acq_rel.gpu",
                "st.relaxed.gpu y, 1",
            ],
            &[
                "ld.relaxed.gpu r2, y",
                "fence.acq_rel.gpu",
                "st.relaxed.gpu x, 1",
            ],
            false,
        ),
        lb(
            "acq-rel-cta",
            OtherCta,
            &["ld.acquire.cta r1, x", "st.release.cta y, 1"],
            &["ld.acquire.cta r2, y", "st.release.cta x, 1"],
            true,
        ),
        // Values from dependencies cannot justify themselves (No-Thin-Air).
        lb(
            "data-deps",
            OtherCta,
            &["ld.relaxed.gpu r1, x", "st.relaxed.gpu y, r1"],
            &["ld.relaxed.gpu r2, y", "st.relaxed.gpu x, r2"],
            false,
        ),
    ]);
}

#[test]
fn iriw_and_coherence() {
    use Place::*;
    const IRIW: &str = "2:r1 == 1 /\\ 2:r2 == 0 /\\ 3:r3 == 1 /\\ 3:r4 == 0";
    let iriw = |name: &str, st: &str, ld: &str, f: Option<&str>, allowed| {
        let wx = format!("{st} x, 1");
        let wy = format!("{st} y, 1");
        let (a, b, c, d) = (
            format!("{ld} r1, x"),
            format!("{ld} r2, y"),
            format!("{ld} r3, y"),
            format!("{ld} r4, x"),
        );
        let (t2, t3): (Vec<&str>, Vec<&str>) = match f {
            Some(f) => (vec![&a, f, &b], vec![&c, f, &d]),
            None => (vec![&a, &b], vec![&c, &d]),
        };
        case(
            format!("IRIW-{name}"),
            test(name, OtherCta, &[&[&wx], &[&wy], &t2, &t3], IRIW),
            allowed,
        )
    };
    const CORR: &str = "1:r1 == 1 /\\ 1:r2 == 0";
    run(vec![
        iriw("relaxed", "st.relaxed.gpu", "ld.relaxed.gpu", None, true),
        // Release/acquire is not multi-copy atomic.
        iriw("rel-acq", "st.release.gpu", "ld.acquire.gpu", None, true),
        // fence.sc between the reads: ordered fences make one reader's observation cause
        // the other's read (observation then base causality).
        iriw(
            "sc",
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            Some("fence.sc.gpu"),
            false,
        ),
        // ... but only through observation, which needs morally strong accesses.
        iriw(
            "sc-weak-stores",
            "st.weak",
            "ld.relaxed.gpu",
            Some("fence.sc.gpu"),
            true,
        ),
        iriw(
            "sc-cta",
            "st.relaxed.gpu",
            "ld.relaxed.gpu",
            Some("fence.sc.cta"),
            true,
        ),
        // CoRR: SC per location forbids reading new then old among morally strong
        // accesses; weak ones race.
        case(
            "CoRR-relaxed",
            test(
                "CoRR",
                OtherCta,
                &[
                    &["st.relaxed.gpu x, 1"],
                    &["ld.relaxed.gpu r1, x", "ld.relaxed.gpu r2, x"],
                ],
                CORR,
            ),
            false,
        ),
        case(
            "CoRR-weak",
            test(
                "CoRR",
                OtherCta,
                &[&["st.weak x, 1"], &["ld.weak r1, x", "ld.weak r2, x"]],
                CORR,
            ),
            true,
        ),
        case(
            "CoRR-cta-across",
            test(
                "CoRR",
                OtherCta,
                &[
                    &["st.relaxed.cta x, 1"],
                    &["ld.relaxed.cta r1, x", "ld.relaxed.cta r2, x"],
                ],
                CORR,
            ),
            true,
        ),
        case(
            "CoRR-cta-inside",
            test(
                "CoRR",
                SameCta,
                &[
                    &["st.relaxed.cta x, 1"],
                    &["ld.relaxed.cta r1, x", "ld.relaxed.cta r2, x"],
                ],
                CORR,
            ),
            false,
        ),
        // CoWW: program order is causality order, so coherence follows it even for weak
        // writes (Coherence axiom); the final value is the second.
        case(
            "CoWW",
            test(
                "CoWW",
                OtherCta,
                &[&["st.weak x, 1", "st.weak x, 2"], &["ld.weak r0, y"]],
                "x == 1",
            ),
            false,
        ),
        // CoWR: a thread's read after its own write does not read the initial value.
        case(
            "CoWR",
            test(
                "CoWR",
                OtherCta,
                &[&["st.weak x, 1", "ld.weak r1, x"], &["ld.weak r0, y"]],
                "0:r1 == 0",
            ),
            false,
        ),
        // CoRW: a read does not read its own thread's later write.
        case(
            "CoRW",
            test(
                "CoRW",
                OtherCta,
                &[&["ld.weak r1, x", "st.weak x, 1"], &["ld.weak r0, y"]],
                "0:r1 == 1",
            ),
            false,
        ),
    ]);
}

#[test]
fn two_plus_two_writes() {
    use Place::*;
    const W22: &str = "x == 1 /\\ y == 1";
    let w = |name: &str, p, t0: &[&str], t1: &[&str], allowed| {
        case(
            format!("2+2W-{name}-{p:?}"),
            test(name, p, &[t0, t1], W22),
            allowed,
        )
    };
    run(vec![
        // Nothing orders the two threads' writes: each location's coherence order may
        // put the other thread's write first.
        w(
            "relaxed",
            OtherCta,
            &["st.relaxed.gpu x, 1", "st.relaxed.gpu y, 2"],
            &["st.relaxed.gpu y, 1", "st.relaxed.gpu x, 2"],
            true,
        ),
        w(
            "release",
            OtherCta,
            &["st.relaxed.gpu x, 1", "st.release.gpu y, 2"],
            &["st.relaxed.gpu y, 1", "st.release.gpu x, 2"],
            true,
        ),
        // fence.sc: whichever fence is first in Fence-SC order, its thread's first write
        // causes the other's second write to the same location (Coherence).
        w(
            "sc",
            OtherCta,
            &["st.relaxed.gpu x, 1", "fence.sc.gpu", "st.relaxed.gpu y, 2"],
            &["st.relaxed.gpu y, 1", "fence.sc.gpu", "st.relaxed.gpu x, 2"],
            false,
        ),
        w(
            "sc-cta",
            OtherCta,
            &["st.relaxed.gpu x, 1", "fence.sc.cta", "st.relaxed.gpu y, 2"],
            &["st.relaxed.gpu y, 1", "fence.sc.cta", "st.relaxed.gpu x, 2"],
            true,
        ),
        w(
            "sc-cta",
            SameCta,
            &["st.relaxed.cta x, 1", "fence.sc.cta", "st.relaxed.cta y, 2"],
            &["st.relaxed.cta y, 1", "fence.sc.cta", "st.relaxed.cta x, 2"],
            false,
        ),
        // Racing weak writes stay unordered in coherence: either may be last.
        w(
            "weak",
            OtherCta,
            &["st.weak x, 1", "st.weak y, 2"],
            &["st.weak y, 1", "st.weak x, 2"],
            true,
        ),
    ]);
}

#[test]
fn atomicity_and_barriers() {
    use Place::*;
    run(vec![
        // Morally strong RMWs never lose an update...
        case("Atom-gpu", test("A", OtherCta, &[&["atom.relaxed.gpu.add r0, x, 1"], &["atom.relaxed.gpu.add r0, x, 1"]], "x == 1"), false),
        // ... unless their scopes miss each other.
        case("Atom-cta-across", test("A", OtherCta, &[&["atom.relaxed.cta.add r0, x, 1"], &["atom.relaxed.cta.add r0, x, 1"]], "x == 1"), true),
        case("Atom-exch-cas", test("A", OtherCta, &[&["atom.relaxed.gpu.exch r0, x, 1"], &["atom.relaxed.gpu.cas r1, x, 0, 2"]], "0:r0 == 0 /\\ 1:r1 == 0"), false),
        // A CTA barrier orders its participants' accesses.
        case("SB-bar", test("B", SameCta, &[&["st.weak x, 1", "bar.cta.sync 0", "ld.weak r1, y"], &["st.weak y, 1", "bar.cta.sync 0", "ld.weak r2, x"]], "0:r1 == 0 \\/ 1:r2 == 0"), false),
        case("MP-bar-arrive", test("B", SameCta, &[&["st.weak x, 1", "bar.cta.arrive 0"], &["bar.cta.sync 0", "ld.weak r2, x"]], "1:r2 == 0"), false),
        // bar.warp.sync among lanes of one warp.
        case(
            "SB-warp-sync",
            "PTX W\n{ x=0; y=0; }\n P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;\n st.weak x, 1 | st.weak y, 1 ;\n bar.warp.sync | bar.warp.sync ;\n ld.weak r1, y | ld.weak r2, x ;\nexists (0:r1 == 0 \\/ 1:r2 == 0)\n".into(),
            false,
        ),
        case(
            "SB-same-warp-no-sync",
            "PTX W\n{ x=0; y=0; }\n P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;\n st.weak x, 1 | st.weak y, 1 ;\n ld.weak r1, y | ld.weak r2, x ;\nexists (0:r1 == 0 /\\ 1:r2 == 0)\n".into(),
            true,
        ),
    ]);
}

#[test]
fn four_threads_of_three_operations_check_in_milliseconds() {
    // Dense programs: every thread stores and loads both locations, with fences.
    let srcs = [
        test(
            "dense-sc",
            Place::OtherCta,
            &[
                &[
                    "st.relaxed.gpu x, 1",
                    "fence.sc.gpu",
                    "ld.relaxed.gpu r1, y",
                ],
                &[
                    "st.relaxed.gpu y, 1",
                    "fence.sc.gpu",
                    "ld.relaxed.gpu r2, x",
                ],
                &[
                    "ld.relaxed.gpu r3, x",
                    "fence.sc.gpu",
                    "ld.relaxed.gpu r4, y",
                ],
                &[
                    "ld.relaxed.gpu r5, y",
                    "fence.sc.gpu",
                    "ld.relaxed.gpu r6, x",
                ],
            ],
            "0:r1 == 0 /\\ 1:r2 == 0 /\\ 2:r3 == 0 /\\ 2:r4 == 0 /\\ 3:r5 == 0 /\\ 3:r6 == 0",
        ),
        test(
            "dense-writes",
            Place::OtherCta,
            &[
                &[
                    "st.relaxed.gpu x, 1",
                    "ld.acquire.gpu r1, y",
                    "st.relaxed.gpu y, 3",
                ],
                &[
                    "st.release.gpu y, 1",
                    "ld.relaxed.gpu r2, x",
                    "st.weak x, 3",
                ],
                &[
                    "st.relaxed.gpu x, 2",
                    "atom.acq_rel.gpu.exch r3, y, 2",
                    "ld.weak r4, x",
                ],
                &[
                    "ld.relaxed.gpu r5, y",
                    "fence.acq_rel.gpu",
                    "ld.relaxed.gpu r6, x",
                ],
            ],
            "0:r1 == 0 /\\ 1:r2 == 0 /\\ 2:r3 == 0 /\\ 2:r4 == 0 /\\ 3:r5 == 0 /\\ 3:r6 == 0",
        ),
    ];
    for s in &srcs {
        let t = parse("dense", s).unwrap();
        let t0 = Instant::now();
        let o = axiom::outcomes(
            &t,
            &Options {
                sc: true,
                ..Options::default()
            },
        )
        .unwrap();
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        eprintln!(
            "{}: {} allowed, {} SC states, {:?}, {ms:.1} ms",
            t.name,
            o.allowed.len(),
            o.sc.len(),
            o.stats
        );
        assert!(o.sc.is_subset(&o.allowed));
        if t.name == "dense-sc" {
            // fence.sc between every two accesses of a thread restores SC.
            assert_eq!(o.allowed, o.sc);
        } else {
            assert!(o.allowed.len() > o.sc.len());
        }
        assert!(ms < 500.0, "{}: {ms:.1} ms", t.name);
    }
}

#[test]
fn unsupported_and_limits_are_typed_errors() {
    let bad = [
        ("ld.sc", "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n fence.sc.gpu ;\n ld.sc.gpu r0, x ;\nexists (x == 1)\n"),
        ("quorum reg", "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n bar.cta.sync 1, 1, r1 ;\nexists (x == 1)\n"),
        ("no scope", "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.relaxed x, 1 ;\nexists (x == 1)\n"),
    ];
    for (name, src) in bad {
        let t = parse(name, src).unwrap();
        match axiom::outcomes(&t, &Options::default()) {
            Err(AxiomError::Unsupported { .. }) => {}
            other => panic!("{name}: expected unsupported, got {other:?}"),
        }
    }
    // A loop that never exits has no final state: every path is cut at the bound.
    let spin = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n LC: | ld.weak r1, x ;\n ld.weak r0, x | ;\n add r0, r0, 1 | ;\n st.weak x, r0 | ;\n goto LC | ;\nexists (x == 1)\n";
    let t = parse("spin", spin).unwrap();
    let o = axiom::outcomes(&t, &Options::default()).unwrap();
    assert!(o.cut && o.allowed.is_empty(), "{o:?}");
    // Too many paths is a limit, not a hang or a wrong answer.
    let many = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, x | st.weak x, 1 ;\n ld.weak r1, x | st.weak x, 2 ;\nexists (x == 1)\n";
    let t = parse("many", many).unwrap();
    let tight = Options {
        max_traces: 3,
        ..Options::default()
    };
    assert!(matches!(
        axiom::outcomes(&t, &tight),
        Err(AxiomError::Limit(_))
    ));
    assert!(axiom::outcomes(&t, &Options::default()).is_ok());
    // Division by zero on an allowed path is reported.
    let div = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n div r1, 1, r0 ;\nexists (0:r1 == 1)\n";
    let t = parse("div", div).unwrap();
    assert!(matches!(
        axiom::outcomes(&t, &Options::default()),
        Err(AxiomError::Undefined(_))
    ));
}

#[test]
fn arbitrary_inputs_never_panic_the_checker() {
    // Every prefix of some tests, and byte flips: whatever parses, the checker answers
    // with outcomes or a typed error.
    let srcs = [
        test(
            "mp",
            Place::OtherCta,
            &[
                &["st.weak x, 1", "fence.sc.gpu", "st.release.gpu y, 1"],
                &["ld.acquire.gpu r1, y", "atom.relaxed.gpu.cas r2, x, 1, 2"],
            ],
            MP,
        ),
        "PTX b\n{ x=0; P0:r2=1; }\n P0@cta 0,gpu 0 | P1@cta 0,warp 3,gpu 0 | P2@cta 0,warp 3,gpu 0 ;\n LC: | bar.warp.sync | bar.warp.sync ;\n bar.cta.sync 1, r2, 2 | ld.weak r0, x | st.weak x, 2 ;\n ld.weak r1, x | ;\n bne r1, 2, LC | ;\nexists (0:r1 == 2)\n".to_string(),
    ];
    let opts = Options {
        sc: true,
        total_co: true,
        max_traces: 200,
        ..Options::default()
    };
    let mut n = 0;
    for src in &srcs {
        let mut inputs: Vec<String> = (0..src.len())
            .filter(|i| src.is_char_boundary(*i))
            .map(|i| src[..i].to_string())
            .collect();
        for (i, c) in src.char_indices().step_by(2) {
            for r in ['|', ';', '2', 'x', ',', '0', '-', 'r'] {
                let mut s = src.clone();
                s.replace_range(i..i + c.len_utf8(), &r.to_string());
                inputs.push(s);
            }
        }
        for s in inputs {
            if let Ok(t) = parse("f.litmus", &s) {
                let _ = axiom::outcomes(&t, &opts);
                n += 1;
            }
        }
    }
    assert!(n > 50, "{n} inputs parsed");
}
