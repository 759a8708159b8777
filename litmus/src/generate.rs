//! A seeded generator of small PTX litmus programs, and their *shapes*.
//!
//! Program `i` of seed `s` is a pure function of `(s, i)`: 2–4 threads of 1–3 operations
//! each over one to three locations, drawn from: loads (`.weak`, `.volatile`,
//! `.relaxed`, `.acquire`), stores (`.weak`, `.volatile`, `.relaxed`, `.release`),
//! atomics (`atom` add / exch / cas, `red.add`, with `.relaxed` / `.acquire` /
//! `.release` / `.acq_rel`), `fence.sc` and `fence.acq_rel`, `bar.cta.sync` (threads of
//! one CTA in warps of their own) and `bar.warp.sync` (threads sharing a warp; a warp of
//! three or four threads may split into two groups that sync with disjoint masks); scopes
//! `.cta`, `.gpu`, `.sys`; placements: threads in one warp, in one CTA, or in different
//! CTAs. Like the classic shapes, a thread makes one to three accesses, mostly to a
//! location other than its previous one, with now and then a fence or barrier between
//! two. Every store writes a value no other store of its location writes, so a final
//! state tells which write each read saw. A program always has a location written by
//! one thread and read or written by another, at most [`MAX_RMW`] atomics and
//! [`MAX_WRITES`] writes per location (each multiplies the executions the checker
//! enumerates and the final states a model has to reach).
//!
//! The condition of a generated test names every register and location (so that a final
//! state is the whole state); its comparison values mean nothing until [`with_target`]
//! replaces it by one final state.

use crate::ast::*;
use crate::print::print;
use std::collections::BTreeMap;

/// Most atomics in one program.
pub const MAX_RMW: usize = 2;
/// Most writes (stores and atomics) to one location.
pub const MAX_WRITES: usize = 3;

/// splitmix64, for reproducible draws without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    /// An index drawn with the given weights.
    pub fn weighted(&mut self, w: &[u64]) -> usize {
        let total: u64 = w.iter().sum();
        let mut x = self.below(total);
        for (i, &wi) in w.iter().enumerate() {
            if x < wi {
                return i;
            }
            x -= wi;
        }
        w.len() - 1
    }
}

/// The seed of program `index` of `seed`.
pub fn program_seed(seed: u64, index: u64) -> u64 {
    let mut r = Rng::new(seed ^ Rng::new(index).next_u64());
    r.next_u64()
}

const LOCS: [&str; 3] = ["x", "y", "z"];

fn scope(r: &mut Rng) -> Scope {
    *r.pick(&[Scope::Cta, Scope::Gpu, Scope::Sys])
}

struct Builder {
    /// Next value to store, per location.
    next_val: BTreeMap<String, i64>,
    rmw: usize,
}

impl Builder {
    fn value(&mut self, loc: &str) -> i64 {
        let v = self.next_val.entry(loc.to_string()).or_insert(1);
        *v += 1;
        *v - 1
    }
}

/// Generates program `index` of `seed`.
pub fn generate(seed: u64, index: u64) -> LitmusTest {
    let mut r = Rng::new(program_seed(seed, index));
    // A program that communicates through memory: redraw until it does (almost always
    // at once).
    let mut attempt = 0u64;
    loop {
        let t = draw(&mut r, seed, index);
        attempt += 1;
        if communicates(&t) || attempt > 64 {
            return t;
        }
    }
}

fn draw(r: &mut Rng, seed: u64, index: u64) -> LitmusTest {
    let n = 2 + r.weighted(&[45, 30, 25]);
    let nlocs = 1 + r.weighted(&[20, 60, 20]).min(n - 1);
    let locs = &LOCS[..nlocs];
    // Placement: every thread in a CTA of its own, all in one CTA, or a mix; threads of
    // one CTA may share a warp.
    let ctas: Vec<u32> = match r.weighted(&[45, 25, 30]) {
        0 => (0..n as u32).collect(),
        1 => vec![0; n],
        _ => (0..n).map(|_| r.below(2) as u32).collect(),
    };
    let mut warps: Vec<Option<u32>> = vec![None; n];
    for i in 0..n {
        if ctas[..i].contains(&ctas[i]) && r.chance(35) {
            // Join the warp of the CTA's first thread.
            let j = (0..i).find(|j| ctas[*j] == ctas[i]).unwrap_or(0);
            let w = warps[j].unwrap_or(j as u32);
            warps[j] = Some(w);
            warps[i] = Some(w);
        }
    }
    let mut b = Builder {
        next_val: BTreeMap::new(),
        rmw: 0,
    };
    let mut threads = Vec::new();
    for i in 0..n {
        let warp_size = warps.iter().filter(|w| **w == warps[i]).count();
        let shares_warp = warps[i].is_some() && warp_size > 1;
        let cta_mates = ctas.iter().filter(|c| **c == ctas[i]).count() > 1;
        // One to three memory accesses, a fence or barrier between two of them now and
        // then (at most three operations), like the classic shapes.
        let accesses = 1 + r.weighted(&[30, 55, 15]);
        let mut instrs: Vec<Instr> = Vec::new();
        let mut regs = 0;
        let mut barrier = false;
        let mut last_loc: Option<&str> = None;
        for k in 0..accesses {
            if instrs.len() == 3 {
                break;
            }
            if k > 0 && instrs.len() < 2 && r.chance(35) {
                // A warp of three or four threads splits into two sub-warp barriers
                // with disjoint member masks (tiles of a warp): its first two threads
                // sync as group 0, the others as group 1 — drawn more often there, so
                // that both groups sync in one program now and then.
                let warp_rank = (0..i).filter(|j| warps[*j] == warps[i]).count();
                let p_sync = if warp_size > 2 { 60 } else { 30 };
                let node = if !barrier && shares_warp && r.chance(p_sync) {
                    barrier = true;
                    let group = if warp_size > 2 {
                        warp_rank as u32 / 2
                    } else {
                        0
                    };
                    Instr::WarpSync { group }
                } else if !barrier && cta_mates && warps[i].is_none() && r.chance(30) {
                    barrier = true;
                    Instr::Barrier {
                        kind: BarKind::Sync,
                        instance: 0,
                        id: None,
                        quorum: None,
                    }
                } else {
                    Instr::Fence {
                        mo: *r.pick(&[Mo::Sc, Mo::AcqRel]),
                        scope: scope(r),
                    }
                };
                instrs.push(node);
            }
            // Mostly another location than the thread's previous access.
            let loc = match last_loc {
                Some(prev) if locs.len() > 1 && r.chance(75) => {
                    let others: Vec<&str> = locs.iter().copied().filter(|l| *l != prev).collect();
                    *r.pick(&others)
                }
                _ => *r.pick(locs),
            };
            last_loc = Some(loc);
            instrs.push(access(r, &mut b, loc, &mut regs));
        }
        threads.push(Thread {
            id: i as u32,
            cta: ctas[i],
            gpu: 0,
            warp: warps[i],
            pos: Pos::default(),
            instrs: instrs
                .into_iter()
                .map(|node| Spanned {
                    pos: Pos::default(),
                    node,
                })
                .collect(),
        });
    }
    let mut t = LitmusTest {
        name: format!("gen-{seed}-{index}"),
        init_mem: locs.iter().map(|l| (l.to_string(), 0)).collect(),
        init_regs: Vec::new(),
        threads,
        condition: Condition {
            quantifier: Quantifier::Exists,
            cond: Cond::True,
            pos: Pos::default(),
        },
    };
    t.condition.cond = whole_state(&t);
    t
}

/// One memory access to `loc`: a load, a store, or (at most [`MAX_RMW`] per program) an
/// atomic; a location gets at most [`MAX_WRITES`] writes, then loads.
fn access(r: &mut Rng, b: &mut Builder, loc: &str, regs: &mut u32) -> Instr {
    let mut reg = || {
        *regs += 1;
        format!("r{}", *regs - 1)
    };
    let writes = b.next_val.get(loc).copied().unwrap_or(1) - 1;
    let kind = if writes as usize >= MAX_WRITES {
        0
    } else {
        r.weighted(&[45, 40, 15])
    };
    match kind {
        1 => {
            let mo = *r.pick(&[
                Mo::Weak,
                Mo::Volatile,
                Mo::Relaxed,
                Mo::Relaxed,
                Mo::Release,
                Mo::Release,
            ]);
            Instr::Store {
                mo,
                scope: strong_scope(r, mo),
                val: Value::Const(b.value(loc)),
                loc: loc.to_string(),
            }
        }
        2 if b.rmw < MAX_RMW => {
            b.rmw += 1;
            let mo = *r.pick(&[Mo::Relaxed, Mo::Acquire, Mo::Release, Mo::AcqRel]);
            let scope = Some(scope(r));
            let loc = loc.to_string();
            match r.weighted(&[30, 25, 25, 20]) {
                0 => Instr::Rmw {
                    mo,
                    scope,
                    op: RmwOp::Add,
                    dst: Some(reg()),
                    loc,
                    val: Value::Const(1),
                },
                1 => Instr::Rmw {
                    mo,
                    scope,
                    op: RmwOp::Exch,
                    dst: Some(reg()),
                    val: Value::Const(b.value(&loc)),
                    loc,
                },
                2 => {
                    // Expect the initial value or a value some store writes.
                    let top = b.next_val.get(&loc).copied().unwrap_or(1);
                    let expected = r.below(top as u64) as i64;
                    Instr::Cas {
                        mo,
                        scope,
                        dst: reg(),
                        expected: Value::Const(expected),
                        new: Value::Const(b.value(&loc)),
                        loc,
                    }
                }
                _ => Instr::Rmw {
                    mo: *r.pick(&[Mo::Relaxed, Mo::Release]),
                    scope,
                    op: RmwOp::Add,
                    dst: None,
                    loc,
                    val: Value::Const(1),
                },
            }
        }
        _ => {
            let mo = *r.pick(&[
                Mo::Weak,
                Mo::Volatile,
                Mo::Relaxed,
                Mo::Relaxed,
                Mo::Acquire,
                Mo::Acquire,
            ]);
            Instr::Load {
                mo,
                scope: strong_scope(r, mo),
                dst: reg(),
                loc: loc.to_string(),
            }
        }
    }
}

fn strong_scope(r: &mut Rng, mo: Mo) -> Option<Scope> {
    match mo {
        Mo::Weak | Mo::Volatile => None,
        _ => Some(scope(r)),
    }
}

/// Registers a thread writes, in order.
pub fn written_regs(th: &Thread) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in &th.instrs {
        let d = match &i.node {
            Instr::Load { dst, .. } | Instr::Cas { dst, .. } => Some(dst),
            Instr::Rmw { dst: Some(d), .. } => Some(d),
            _ => None,
        };
        if let Some(d) = d {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    out
}

/// A condition naming every register a thread writes and every location (each
/// compared with 0): [`LitmusTest::observed`] is then the whole final state.
pub fn whole_state(t: &LitmusTest) -> Cond {
    let mut vars: Vec<Var> = Vec::new();
    for th in &t.threads {
        for r in written_regs(th) {
            vars.push(Var::Reg {
                thread: th.id,
                name: r,
            });
        }
    }
    for l in t.locations() {
        vars.push(Var::Loc(l));
    }
    conj(vars.into_iter().map(|v| (v, 0)).collect())
}

fn conj(eqs: Vec<(Var, i64)>) -> Cond {
    let mut it = eqs.into_iter();
    let Some((v, x)) = it.next() else {
        return Cond::True;
    };
    let mut c = Cond::Eq(Operand::Var(v), Operand::Const(x));
    for (v, x) in it {
        c = Cond::And(
            Box::new(c),
            Box::new(Cond::Eq(Operand::Var(v), Operand::Const(x))),
        );
    }
    c
}

/// The same test with condition `exists (state)`: a final state as a litmus test.
pub fn with_target(t: &LitmusTest, state: &[i64]) -> LitmusTest {
    let vars = t.observed();
    let mut u = t.clone();
    u.condition.quantifier = Quantifier::Exists;
    u.condition.cond = conj(vars.into_iter().zip(state.iter().copied()).collect());
    u
}

/// Some location is written by one thread and accessed by another.
fn communicates(t: &LitmusTest) -> bool {
    let acc = |th: &Thread, writes: bool| -> Vec<String> {
        th.instrs
            .iter()
            .filter_map(|i| match &i.node {
                Instr::Store { loc, .. } | Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => {
                    Some(loc.clone())
                }
                Instr::Load { loc, .. } if !writes => Some(loc.clone()),
                _ => None,
            })
            .collect()
    };
    t.threads.iter().any(|a| {
        let w = acc(a, true);
        t.threads
            .iter()
            .any(|b| b.id != a.id && acc(b, false).iter().any(|l| w.contains(l)))
    })
}

/// The program as text (see [`crate::print`]).
pub fn text(t: &LitmusTest) -> String {
    print(t)
}

// ---- shapes ----

/// The access skeleton of a program with locations renamed in order of first use and
/// threads in the order that makes it smallest: `W0 W1 | R1 R0` is message passing.
/// `W` store, `R` load, `A` atomic; fences and barriers are left out.
pub fn skeleton(t: &LitmusTest) -> String {
    let per: Vec<Vec<(char, String)>> = t
        .threads
        .iter()
        .map(|th| {
            th.instrs
                .iter()
                .filter_map(|i| match &i.node {
                    Instr::Load { loc, .. } => Some(('R', loc.clone())),
                    Instr::Store { loc, .. } => Some(('W', loc.clone())),
                    Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => Some(('A', loc.clone())),
                    _ => None,
                })
                .collect()
        })
        .filter(|v: &Vec<_>| !v.is_empty())
        .collect();
    let mut best: Option<String> = None;
    for perm in permutations(per.len()) {
        let mut names: Vec<String> = Vec::new();
        let s: Vec<String> = perm
            .iter()
            .map(|&k| {
                per[k]
                    .iter()
                    .map(|(c, l)| {
                        let i = match names.iter().position(|n| n == l) {
                            Some(i) => i,
                            None => {
                                names.push(l.clone());
                                names.len() - 1
                            }
                        };
                        format!("{c}{i}")
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let s = s.join(" | ");
        if best.as_ref().is_none_or(|b| s < *b) {
            best = Some(s);
        }
    }
    best.unwrap_or_default()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Classic shapes by their access skeleton (as written here; compared after the same
/// canonicalisation as [`skeleton`]).
const NAMED: &[(&str, &str)] = &[
    ("MP", "W0 W1 | R1 R0"),
    ("SB", "W0 R1 | W1 R0"),
    ("LB", "R0 W1 | R1 W0"),
    ("S", "W0 W1 | R1 W0"),
    ("R", "W0 W1 | W1 R0"),
    ("2+2W", "W0 W1 | W1 W0"),
    ("CoRR", "W0 | R0 R0"),
    ("CoWR", "W0 R0 | W0"),
    ("CoRW", "R0 W0 | W0"),
    ("CoWW", "W0 W0 | R0"),
    ("CoRR2", "W0 | W0 | R0 R0 | R0 R0"),
    ("IRIW", "W0 | W1 | R0 R1 | R1 R0"),
    ("WRC", "W0 | R0 W1 | R1 R0"),
    ("RWC", "W0 | R0 R1 | W1 R0"),
    ("ISA2", "W0 W1 | R1 W2 | R2 R0"),
    ("3.SB", "W0 R1 | W1 R2 | W2 R0"),
    ("3.LB", "R0 W1 | R1 W2 | R2 W0"),
    ("Z6.0", "W0 W1 | R1 W2 | W2 R0"),
    ("W+RWC", "W0 W1 | R1 R2 | W2 R0"),
    ("MP+RMW", "W0 W1 | A1 | R1 R0"),
    ("RMW-RMW", "A0 | A0"),
];

/// The name of a program's shape: a classic name when its skeleton is exactly one of
/// them, else the skeleton itself.
pub fn shape(t: &LitmusTest) -> String {
    let sk = skeleton(t);
    for (name, pattern) in NAMED {
        if canonical(pattern) == sk {
            return name.to_string();
        }
    }
    sk
}

/// The classic shapes a program *contains*: for each of [`NAMED`], whether some of its
/// threads, with some renaming of locations, make the shape's accesses in order (other
/// accesses may come between; an atomic counts as a read and as a write). A program
/// usually contains several (an `MP` thread pair inside a 3-thread program, say).
pub fn idioms(t: &LitmusTest) -> Vec<&'static str> {
    let acc: Vec<Vec<(char, String)>> = t
        .threads
        .iter()
        .map(|th| {
            th.instrs
                .iter()
                .filter_map(|i| match &i.node {
                    Instr::Load { loc, .. } => Some(('R', loc.clone())),
                    Instr::Store { loc, .. } => Some(('W', loc.clone())),
                    Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => Some(('A', loc.clone())),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for (name, pattern) in NAMED {
        let pat: Vec<Vec<(char, usize)>> = pattern
            .split('|')
            .map(|col| {
                col.split_whitespace()
                    .map(|a| (a.as_bytes()[0] as char, a[1..].parse().unwrap_or(0)))
                    .collect()
            })
            .collect();
        if pat.len() <= acc.len() && contains(&acc, &pat, 0, &mut Vec::new(), &mut Vec::new()) {
            out.push(*name);
        }
    }
    out
}

/// Can pattern threads `k..` be matched to unused program threads, extending the
/// location map `locs` (pattern location `i` ↦ `locs[i]`)?
fn contains(
    acc: &[Vec<(char, String)>],
    pat: &[Vec<(char, usize)>],
    k: usize,
    used: &mut Vec<usize>,
    locs: &mut Vec<Option<String>>,
) -> bool {
    if k == pat.len() {
        return true;
    }
    for th in 0..acc.len() {
        if used.contains(&th) {
            continue;
        }
        let saved = locs.clone();
        if embed(&acc[th], &pat[k], 0, 0, locs) {
            used.push(th);
            if contains(acc, pat, k + 1, used, locs) {
                return true;
            }
            used.pop();
        }
        *locs = saved;
    }
    false
}

/// Is pattern thread `p[j..]` a subsequence of `a[i..]` under (an extension of) `locs`?
fn embed(
    a: &[(char, String)],
    p: &[(char, usize)],
    i: usize,
    j: usize,
    locs: &mut Vec<Option<String>>,
) -> bool {
    if j == p.len() {
        return true;
    }
    for x in i..a.len() {
        let (kind, ref loc) = a[x];
        let (pk, pl) = p[j];
        if !(kind == pk || kind == 'A') {
            continue;
        }
        if locs.len() <= pl {
            locs.resize(pl + 1, None);
        }
        match &locs[pl] {
            Some(l) if l != loc => continue,
            Some(_) => {
                if embed(a, p, x + 1, j + 1, locs) {
                    return true;
                }
            }
            None => {
                if locs.iter().any(|m| m.as_deref() == Some(loc.as_str())) {
                    continue;
                }
                locs[pl] = Some(loc.clone());
                if embed(a, p, x + 1, j + 1, locs) {
                    return true;
                }
                locs[pl] = None;
            }
        }
    }
    false
}

/// [`skeleton`] of a skeleton written by hand.
fn canonical(pattern: &str) -> String {
    let threads: Vec<Thread> = pattern
        .split('|')
        .enumerate()
        .map(|(i, col)| Thread {
            id: i as u32,
            cta: i as u32,
            gpu: 0,
            warp: None,
            pos: Pos::default(),
            instrs: col
                .split_whitespace()
                .map(|a| {
                    let loc = format!("l{}", &a[1..]);
                    Spanned {
                        pos: Pos::default(),
                        node: match a.as_bytes()[0] {
                            b'R' => Instr::Load {
                                mo: Mo::Weak,
                                scope: None,
                                dst: "r".into(),
                                loc,
                            },
                            b'W' => Instr::Store {
                                mo: Mo::Weak,
                                scope: None,
                                loc,
                                val: Value::Const(1),
                            },
                            _ => Instr::Rmw {
                                mo: Mo::Relaxed,
                                scope: Some(Scope::Gpu),
                                op: RmwOp::Add,
                                dst: None,
                                loc,
                                val: Value::Const(1),
                            },
                        },
                    }
                })
                .collect(),
        })
        .collect();
    skeleton(&LitmusTest {
        name: String::new(),
        init_mem: Vec::new(),
        init_regs: Vec::new(),
        threads,
        condition: Condition {
            quantifier: Quantifier::Exists,
            cond: Cond::True,
            pos: Pos::default(),
        },
    })
}

/// The synchronization a program uses, for the coverage table: its fences, ordering
/// annotations, atomics and barriers, in a fixed order (`plain` when none).
pub fn sync_mix(t: &LitmusTest) -> String {
    let mut has = [false; 7];
    for th in &t.threads {
        for i in &th.instrs {
            match &i.node {
                Instr::Fence { mo: Mo::Sc, .. } => has[0] = true,
                Instr::Fence { .. } => has[1] = true,
                Instr::Load {
                    mo: Mo::Acquire, ..
                }
                | Instr::Store {
                    mo: Mo::Release, ..
                } => has[2] = true,
                Instr::Rmw { mo, .. } | Instr::Cas { mo, .. } => {
                    has[3] = true;
                    if *mo != Mo::Relaxed {
                        has[2] = true;
                    }
                }
                Instr::Barrier { .. } => has[4] = true,
                Instr::WarpSync { .. } => has[5] = true,
                Instr::Load { mo, .. } | Instr::Store { mo, .. } if *mo != Mo::Weak => {
                    has[6] = true
                }
                _ => {}
            }
        }
    }
    let names = [
        "fence.sc",
        "fence.acq_rel",
        "rel/acq",
        "atomic",
        "bar.sync",
        "bar.warp.sync",
    ];
    let v: Vec<&str> = names[..6]
        .iter()
        .zip(has)
        .filter(|(_, h)| *h)
        .map(|(n, _)| *n)
        .collect();
    match (v.is_empty(), has[6]) {
        (true, true) => "none (strong accesses)".into(),
        (true, false) => "none (weak only)".into(),
        _ => v.join("+"),
    }
}

/// Where the threads run: `warp` if two share a warp, else `cta` if two share a CTA,
/// else `ctas` (all in different CTAs).
pub fn placement(t: &LitmusTest) -> &'static str {
    let n = t.threads.len();
    for i in 0..n {
        for j in 0..i {
            let (a, b) = (&t.threads[i], &t.threads[j]);
            if a.cta == b.cta && a.warp.is_some() && a.warp == b.warp {
                return "warp";
            }
        }
    }
    for i in 0..n {
        for j in 0..i {
            if t.threads[i].cta == t.threads[j].cta {
                return "cta";
            }
        }
    }
    "ctas"
}
