//! What each thread may do on its own: its *traces*. A trace is one path through the
//! thread's code with a value guessed for every read; the candidate executions then pick
//! one trace per thread and a write for every read to read from, with the same value.
//!
//! Guessing is exact, not an approximation, because the guesses are only kept when a write
//! with that value is read from and the No-Thin-Air axiom (rf ∪ dependencies acyclic)
//! holds; what has to be finite is the set of values to guess from. [`domains`] computes,
//! per read instruction, an over-approximation of the values it can return in any
//! execution without a thin-air cycle: the initial value, and every value some write
//! instruction can produce, where a value carries the set of read instructions it was
//! computed from and a read may not return a value computed from itself. Iterated to a
//! fixed point this terminates (each round adds a read to a derivation) unless a loop
//! keeps producing new values, which is reported as a limit.

use super::{AxiomError, Options};
use crate::ast::*;
use std::collections::{BTreeMap, HashMap};

/// Values are 32-bit, as on the GPU and in the lowering (read back sign-extended).
pub fn wrap(v: i64) -> i64 {
    v as u32 as i32 as i64
}

/// A barrier resource as a thread names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Res {
    /// `bar.cta.sync C[, ID]`: the resource value (`ID`, else `C`).
    Cta(i64),
    /// `bar.warp.sync G`: its group.
    Warp(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LKind {
    Read,
    Write,
    /// The read of a read-modify-write that writes (`atom`, `red`, a successful `cas`);
    /// its write, [`LKind::Rmw`], follows it at once. As in the formal model (and herd,
    /// Dat3M), an atomic is a read and a write joined by the `rmw` relation.
    RmwRead,
    /// The write of a read-modify-write.
    Rmw,
    /// A `cas` whose comparison failed: an atomic read.
    FailedCas,
    Fence {
        sc: bool,
    },
    /// Arrival at a barrier; `waits` for `bar.sync` / `bar.warp.sync`, not `bar.arrive`.
    Arrive {
        res: Res,
        waits: bool,
        quorum: Option<u32>,
    },
    /// Leaving a barrier after waiting (follows its `Arrive`).
    Leave,
}

/// One event of a trace.
#[derive(Debug, Clone)]
pub struct LEv {
    pub kind: LKind,
    pub loc: usize,
    /// Normalised: `volatile` is `relaxed` at `sys` scope.
    pub mo: Mo,
    pub scope: Option<Scope>,
    pub rval: i64,
    pub wval: i64,
    /// Earlier events of the trace this one depends on (data and control), by index.
    pub deps: u64,
    /// Index of the instruction in the thread.
    pub instr: usize,
}

#[derive(Debug, Clone)]
pub struct Trace {
    pub evs: Vec<LEv>,
    pub regs: BTreeMap<String, i64>,
    /// The path computes something PTX leaves undefined (division by zero).
    pub undefined: Option<String>,
}

/// A test prepared for the checker.
pub struct Prog<'t> {
    pub test: &'t LitmusTest,
    pub locs: Vec<String>,
    pub init: Vec<i64>,
    /// Per thread: label → instruction index.
    labels: Vec<HashMap<String, usize>>,
    /// Per thread, per instruction: the global read-instruction id, if it reads memory.
    read_id: Vec<Vec<Option<usize>>>,
    /// Per thread, per instruction: inside a loop (between a backward jump and its target).
    in_loop: Vec<Vec<bool>>,
}

fn unsupported(t: &Thread, pos: Pos, what: impl Into<String>) -> AxiomError {
    AxiomError::Unsupported {
        pos,
        what: format!("P{}: {}", t.id, what.into()),
    }
}

impl<'t> Prog<'t> {
    pub fn new(test: &'t LitmusTest) -> Result<Prog<'t>, AxiomError> {
        if test.threads.is_empty() {
            return Err(AxiomError::Unsupported {
                pos: test.condition.pos,
                what: "a test without threads".into(),
            });
        }
        let locs = test.locations();
        let init = locs
            .iter()
            .map(|l| {
                wrap(
                    test.init_mem
                        .iter()
                        .rev()
                        .find(|(n, _)| n == l)
                        .map_or(0, |(_, v)| *v),
                )
            })
            .collect();
        let mut labels = Vec::new();
        let mut read_id = Vec::new();
        let mut in_loop = Vec::new();
        let mut next_read = 0;
        for th in &test.threads {
            let mut lab = HashMap::new();
            for (k, i) in th.instrs.iter().enumerate() {
                if let Instr::Label { name } = &i.node {
                    lab.insert(name.clone(), k);
                }
            }
            let mut ids = Vec::new();
            for i in &th.instrs {
                check_instr(th, i)?;
                let reads = matches!(
                    i.node,
                    Instr::Load { .. } | Instr::Rmw { .. } | Instr::Cas { .. }
                );
                ids.push(reads.then(|| {
                    next_read += 1;
                    next_read - 1
                }));
            }
            let mut lp = vec![false; th.instrs.len()];
            for (k, i) in th.instrs.iter().enumerate() {
                let target = match &i.node {
                    Instr::Branch { label, .. } | Instr::Goto { label } => lab.get(label),
                    _ => None,
                };
                match target {
                    Some(&t) if t <= k => lp[t..=k].iter_mut().for_each(|x| *x = true),
                    Some(_) => {}
                    None if matches!(i.node, Instr::Branch { .. } | Instr::Goto { .. }) => {
                        return Err(unsupported(th, i.pos, "jump to an undefined label"))
                    }
                    None => {}
                }
            }
            labels.push(lab);
            read_id.push(ids);
            in_loop.push(lp);
        }
        if next_read > 128 {
            return Err(AxiomError::Limit(format!(
                "{next_read} read instructions (at most 128)"
            )));
        }
        Ok(Prog {
            test,
            locs,
            init,
            labels,
            read_id,
            in_loop,
        })
    }

    pub fn loc(&self, l: &str) -> usize {
        self.locs.iter().position(|x| x == l).unwrap_or(0)
    }
}

/// Rejects what the checker does not model (the same forms the lowering rejects, and
/// register quorums).
fn check_instr(th: &Thread, i: &Spanned<Instr>) -> Result<(), AxiomError> {
    let need_scope = |mo: Mo, scope: Option<Scope>, what: &str| {
        if !matches!(mo, Mo::Weak | Mo::Volatile) && scope.is_none() {
            Err(unsupported(
                th,
                i.pos,
                format!("`{what}.{}` without a scope", mo.name()),
            ))
        } else {
            Ok(())
        }
    };
    match &i.node {
        Instr::Load { mo, scope, .. } => {
            if !matches!(mo, Mo::Weak | Mo::Volatile | Mo::Relaxed | Mo::Acquire) {
                return Err(unsupported(th, i.pos, format!("`ld.{}`", mo.name())));
            }
            need_scope(*mo, *scope, "ld")
        }
        Instr::Store { mo, scope, .. } => {
            if !matches!(mo, Mo::Weak | Mo::Volatile | Mo::Relaxed | Mo::Release) {
                return Err(unsupported(th, i.pos, format!("`st.{}`", mo.name())));
            }
            need_scope(*mo, *scope, "st")
        }
        Instr::Rmw { mo, scope, .. } | Instr::Cas { mo, scope, .. } => {
            if !matches!(mo, Mo::Relaxed | Mo::Acquire | Mo::Release | Mo::AcqRel) {
                return Err(unsupported(th, i.pos, format!("`atom.{}`", mo.name())));
            }
            if scope.is_none() {
                return Err(unsupported(th, i.pos, "an atomic without a scope"));
            }
            Ok(())
        }
        Instr::Fence { mo, .. } => {
            if !matches!(mo, Mo::Sc | Mo::AcqRel) {
                return Err(unsupported(th, i.pos, format!("`fence.{}`", mo.name())));
            }
            Ok(())
        }
        Instr::Barrier { quorum, .. } => match quorum {
            Some(Value::Reg(_)) => Err(unsupported(th, i.pos, "a barrier quorum in a register")),
            Some(Value::Const(q)) if !(1..=1024).contains(q) => {
                Err(unsupported(th, i.pos, format!("barrier quorum {q}")))
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Per location: the values writes may produce, each with the read instructions it was
/// computed from.
pub type Entries = Vec<Vec<(i64, u128)>>;

/// Values each read instruction may return, by global read id.
pub struct Domains {
    /// Per location, `(value, depset)`.
    pub entries: Entries,
}

impl Domains {
    /// The values read `q` of location `l` may return, with the read instructions each
    /// is computed from: every derivation apart while the domains grow (`derivations`),
    /// else each value once (its derivations no longer matter).
    fn choices(
        &self,
        prog: &Prog,
        l: usize,
        q: usize,
        looped: bool,
        derivations: bool,
    ) -> Vec<(i64, u128)> {
        let mut out: Vec<(i64, u128)> = vec![(prog.init[l], 0)];
        for &(v, ds) in &self.entries[l] {
            if !looped && ds >> q & 1 == 1 {
                continue;
            }
            if derivations {
                if !out.contains(&(v, ds)) {
                    out.push((v, ds));
                }
            } else if !out.iter().any(|(x, _)| *x == v) {
                out.push((v, ds));
            }
        }
        out
    }
}

/// A trace with the writes it makes: `(location, value, derivation)`.
type Walked = (Trace, Vec<(usize, i64, u128)>);

/// Register state during a path: value, events it depends on, reads it derives from.
#[derive(Clone, Copy, Default)]
struct RegVal {
    v: i64,
    taint: u64,
    ds: u128,
}

struct Walker<'a, 'p> {
    prog: &'a Prog<'p>,
    dom: &'a Domains,
    th: usize,
    opts: &'a Options,
    /// Paths cut at the loop bound.
    cut: bool,
    /// The value domains are still growing: follow every derivation of a value.
    growing: bool,
    out: Vec<Walked>,
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: HashMap<String, RegVal>,
    ctrl: u64,
    evs: Vec<LEv>,
    /// Writes made: `(loc, value, depset)`.
    writes: Vec<(usize, i64, u128)>,
    jumps: u32,
    undefined: Option<String>,
}

impl Walker<'_, '_> {
    fn val(&self, st: &State, v: &Value) -> RegVal {
        match v {
            Value::Const(c) => RegVal {
                v: wrap(*c),
                taint: 0,
                ds: 0,
            },
            Value::Reg(r) => st.regs.get(r).copied().unwrap_or_default(),
        }
    }

    fn push(&self, st: &mut State, mut e: LEv) -> Result<usize, AxiomError> {
        if st.evs.len() >= 64 {
            return Err(AxiomError::Limit(format!(
                "P{}: more than 64 events on one path",
                self.prog.test.threads[self.th].id
            )));
        }
        e.deps |= st.ctrl;
        st.evs.push(e);
        Ok(st.evs.len() - 1)
    }

    fn walk(&mut self, mut st: State) -> Result<(), AxiomError> {
        let th = &self.prog.test.threads[self.th];
        loop {
            if self.out.len() > self.opts.max_traces {
                return Err(AxiomError::Limit(format!(
                    "P{}: more than {} paths",
                    th.id, self.opts.max_traces
                )));
            }
            let Some(ins) = th.instrs.get(st.pc) else {
                let regs = st.regs.iter().map(|(k, r)| (k.clone(), r.v)).collect();
                self.out.push((
                    Trace {
                        evs: st.evs,
                        regs,
                        undefined: st.undefined,
                    },
                    st.writes,
                ));
                return Ok(());
            };
            let k = st.pc;
            st.pc += 1;
            match &ins.node {
                Instr::Load {
                    mo,
                    scope,
                    dst,
                    loc,
                } => {
                    let l = self.prog.loc(loc);
                    let q = self.prog.read_id[self.th][k].unwrap_or(0);
                    let (mo, scope) = norm(*mo, *scope);
                    for (v, ds) in self.dom.choices(
                        self.prog,
                        l,
                        q,
                        self.prog.in_loop[self.th][k],
                        self.growing,
                    ) {
                        let mut s = st.clone();
                        let e = self.push(
                            &mut s,
                            LEv {
                                kind: LKind::Read,
                                loc: l,
                                mo,
                                scope,
                                rval: v,
                                wval: 0,
                                deps: 0,
                                instr: k,
                            },
                        )?;
                        s.regs.insert(
                            dst.clone(),
                            RegVal {
                                v,
                                taint: 1 << e,
                                ds: ds | 1 << q,
                            },
                        );
                        self.walk(s)?;
                    }
                    return Ok(());
                }
                Instr::Store {
                    mo,
                    scope,
                    loc,
                    val,
                } => {
                    let l = self.prog.loc(loc);
                    let x = self.val(&st, val);
                    let (mo, scope) = norm(*mo, *scope);
                    self.push(
                        &mut st,
                        LEv {
                            kind: LKind::Write,
                            loc: l,
                            mo,
                            scope,
                            rval: 0,
                            wval: x.v,
                            deps: x.taint,
                            instr: k,
                        },
                    )?;
                    st.writes.push((l, x.v, x.ds));
                }
                Instr::Rmw {
                    mo,
                    scope,
                    op,
                    dst,
                    loc,
                    val,
                } => {
                    let l = self.prog.loc(loc);
                    let q = self.prog.read_id[self.th][k].unwrap_or(0);
                    let x = self.val(&st, val);
                    for (old, ds) in self.dom.choices(
                        self.prog,
                        l,
                        q,
                        self.prog.in_loop[self.th][k],
                        self.growing,
                    ) {
                        let mut s = st.clone();
                        let new = rmw(*op, old, x.v);
                        let e = self.push(
                            &mut s,
                            LEv {
                                kind: LKind::RmwRead,
                                loc: l,
                                mo: *mo,
                                scope: *scope,
                                rval: old,
                                wval: 0,
                                deps: 0,
                                instr: k,
                            },
                        )?;
                        self.push(
                            &mut s,
                            LEv {
                                kind: LKind::Rmw,
                                loc: l,
                                mo: *mo,
                                scope: *scope,
                                rval: 0,
                                wval: new,
                                deps: x.taint | 1 << e,
                                instr: k,
                            },
                        )?;
                        let wds = ds | x.ds | 1 << q;
                        s.writes.push((l, new, wds));
                        if let Some(d) = dst {
                            s.regs.insert(
                                d.clone(),
                                RegVal {
                                    v: old,
                                    taint: 1 << e,
                                    ds: ds | 1 << q,
                                },
                            );
                        }
                        self.walk(s)?;
                    }
                    return Ok(());
                }
                Instr::Cas {
                    mo,
                    scope,
                    dst,
                    loc,
                    expected,
                    new,
                } => {
                    let l = self.prog.loc(loc);
                    let q = self.prog.read_id[self.th][k].unwrap_or(0);
                    let ex = self.val(&st, expected);
                    let nw = self.val(&st, new);
                    for (old, ds) in self.dom.choices(
                        self.prog,
                        l,
                        q,
                        self.prog.in_loop[self.th][k],
                        self.growing,
                    ) {
                        let mut s = st.clone();
                        let ok = old == ex.v;
                        let e = self.push(
                            &mut s,
                            LEv {
                                kind: if ok || self.opts.failed_cas_writes {
                                    LKind::RmwRead
                                } else {
                                    LKind::FailedCas
                                },
                                loc: l,
                                mo: *mo,
                                scope: *scope,
                                rval: old,
                                wval: 0,
                                deps: 0,
                                instr: k,
                            },
                        )?;
                        // A failing CAS writes nothing, unless it is taken to write back
                        // what it read (`Options::failed_cas_writes`).
                        if ok || self.opts.failed_cas_writes {
                            let v = if ok { nw.v } else { old };
                            self.push(
                                &mut s,
                                LEv {
                                    kind: LKind::Rmw,
                                    loc: l,
                                    mo: *mo,
                                    scope: *scope,
                                    rval: 0,
                                    wval: v,
                                    deps: ex.taint | nw.taint | 1 << e,
                                    instr: k,
                                },
                            )?;
                            s.writes.push((l, v, nw.ds | ex.ds | ds | 1 << q));
                        }
                        s.regs.insert(
                            dst.clone(),
                            RegVal {
                                v: old,
                                taint: 1 << e,
                                ds: ds | 1 << q,
                            },
                        );
                        self.walk(s)?;
                    }
                    return Ok(());
                }
                Instr::Fence { mo, scope } => {
                    self.push(
                        &mut st,
                        LEv {
                            kind: LKind::Fence { sc: *mo == Mo::Sc },
                            loc: 0,
                            mo: *mo,
                            scope: Some(*scope),
                            rval: 0,
                            wval: 0,
                            deps: 0,
                            instr: k,
                        },
                    )?;
                }
                Instr::Barrier {
                    kind,
                    instance,
                    id,
                    quorum,
                } => {
                    let res = match id {
                        Some(v) => self.val(&st, v).v,
                        None => wrap(*instance),
                    };
                    let quorum = match quorum {
                        Some(Value::Const(q)) => Some(*q as u32),
                        _ => None,
                    };
                    let waits = *kind == BarKind::Sync;
                    self.barrier(&mut st, k, Res::Cta(res), waits, quorum)?;
                }
                Instr::WarpSync { group } => {
                    self.barrier(&mut st, k, Res::Warp(*group), true, None)?
                }
                Instr::Move { dst, val } => {
                    let x = self.val(&st, val);
                    st.regs.insert(dst.clone(), x);
                }
                Instr::Arith { op, dst, a, b } => {
                    let x = self.val(&st, a);
                    let y = self.val(&st, b);
                    let v = match arith(*op, x.v, y.v) {
                        Some(v) => v,
                        None => {
                            st.undefined.get_or_insert_with(|| {
                                format!("P{}: division by zero (line {})", th.id, ins.pos.line)
                            });
                            0
                        }
                    };
                    st.regs.insert(
                        dst.clone(),
                        RegVal {
                            v,
                            taint: x.taint | y.taint,
                            ds: x.ds | y.ds,
                        },
                    );
                }
                Instr::Branch { eq, a, b, label } => {
                    let x = self.val(&st, a);
                    let y = self.val(&st, b);
                    st.ctrl |= x.taint | y.taint;
                    if (x.v == y.v) == *eq && !self.jump(&mut st, label) {
                        return Ok(());
                    }
                }
                Instr::Goto { label } => {
                    if !self.jump(&mut st, label) {
                        return Ok(());
                    }
                }
                Instr::Label { .. } => {}
            }
        }
    }

    fn barrier(
        &self,
        st: &mut State,
        k: usize,
        res: Res,
        waits: bool,
        quorum: Option<u32>,
    ) -> Result<(), AxiomError> {
        let ev = |kind| LEv {
            kind,
            loc: 0,
            mo: Mo::Weak,
            scope: None,
            rval: 0,
            wval: 0,
            deps: 0,
            instr: k,
        };
        self.push(st, ev(LKind::Arrive { res, waits, quorum }))?;
        if waits {
            self.push(st, ev(LKind::Leave))?;
        }
        Ok(())
    }

    /// Jumps to `label`; false when a backward jump exceeds the loop bound (path cut).
    fn jump(&mut self, st: &mut State, label: &str) -> bool {
        let target = self.prog.labels[self.th].get(label).copied().unwrap_or(0);
        if target < st.pc {
            st.jumps += 1;
            if st.jumps > self.opts.loop_bound {
                self.cut = true;
                return false;
            }
        }
        st.pc = target;
        true
    }
}

fn norm(mo: Mo, scope: Option<Scope>) -> (Mo, Option<Scope>) {
    match mo {
        Mo::Volatile => (Mo::Relaxed, Some(Scope::Sys)),
        m => (m, scope),
    }
}

/// `atom` operations on 32-bit values, as the lowering's PTX types compute them.
pub fn rmw(op: RmwOp, old: i64, v: i64) -> i64 {
    let (o, x) = (old as i32, v as i32);
    let r = match op {
        RmwOp::Add => o.wrapping_add(x),
        RmwOp::Sub => o.wrapping_sub(x),
        RmwOp::And => o & x,
        RmwOp::Or => o | x,
        RmwOp::Xor => o ^ x,
        RmwOp::Min => o.min(x),
        RmwOp::Max => o.max(x),
        RmwOp::Inc => {
            if o as u32 >= x as u32 {
                0
            } else {
                o.wrapping_add(1)
            }
        }
        RmwOp::Dec => {
            if o == 0 || o as u32 > x as u32 {
                x
            } else {
                o.wrapping_sub(1)
            }
        }
        RmwOp::Exch => x,
    };
    r as i64
}

fn arith(op: ArithOp, a: i64, b: i64) -> Option<i64> {
    let (x, y) = (a as i32, b as i32);
    Some(match op {
        ArithOp::Add => x.wrapping_add(y),
        ArithOp::Sub => x.wrapping_sub(y),
        ArithOp::Mul => x.wrapping_mul(y),
        ArithOp::Div => {
            if y == 0 {
                return None;
            }
            x.wrapping_div(y)
        }
        ArithOp::And => x & y,
        ArithOp::Or => x | y,
        ArithOp::Xor => x ^ y,
    } as i64)
}

/// Every path of thread `th` with every guess allowed by `dom`, and the writes each makes.
fn walk_thread(
    prog: &Prog,
    dom: &Domains,
    th: usize,
    opts: &Options,
    growing: bool,
) -> Result<(Vec<Walked>, bool), AxiomError> {
    let t = &prog.test.threads[th];
    let mut regs = HashMap::new();
    for (x, r, v) in &prog.test.init_regs {
        if *x == t.id {
            regs.insert(
                r.clone(),
                RegVal {
                    v: wrap(*v),
                    taint: 0,
                    ds: 0,
                },
            );
        }
    }
    for v in prog.test.observed() {
        if let Var::Reg { thread, name } = v {
            if thread == t.id {
                regs.entry(name).or_default();
            }
        }
    }
    let mut w = Walker {
        prog,
        dom,
        th,
        opts,
        cut: false,
        growing,
        out: Vec::new(),
    };
    w.walk(State {
        pc: 0,
        regs,
        ctrl: 0,
        evs: Vec::new(),
        writes: Vec::new(),
        jumps: 0,
        undefined: None,
    })?;
    Ok((w.out, w.cut))
}

/// The value domains (fixed point) and every thread's traces under them. The flag says
/// whether a path was cut at the loop bound.
pub fn traces(prog: &Prog, opts: &Options) -> Result<(Vec<Vec<Trace>>, bool), AxiomError> {
    let mut dom = Domains {
        entries: vec![Vec::new(); prog.locs.len()],
    };
    let mut settled = false;
    for _round in 0..=opts.max_rounds {
        let mut changed = false;
        for th in 0..prog.test.threads.len() {
            let (ts, _) = walk_thread(prog, &dom, th, opts, true)?;
            for (_, writes) in &ts {
                for &(l, v, ds) in writes {
                    let e = &mut dom.entries[l];
                    // Keep only the most general derivations of a value.
                    if e.iter().any(|&(x, d)| x == v && d & ds == d) {
                        continue;
                    }
                    e.retain(|&(x, d)| !(x == v && d & ds == ds));
                    e.push((v, ds));
                    changed = true;
                }
            }
        }
        let total: usize = dom.entries.iter().map(|e| e.len()).sum();
        if total > opts.max_values {
            return Err(AxiomError::Limit(format!(
                "more than {} distinct written values",
                opts.max_values
            )));
        }
        if !changed {
            settled = true;
            break;
        }
    }
    if !settled {
        return Err(AxiomError::Limit(format!(
            "written values still growing after {} rounds (a loop computing new values?)",
            opts.max_rounds
        )));
    }
    let mut all = Vec::new();
    let mut cut = false;
    for th in 0..prog.test.threads.len() {
        let (ts, c) = walk_thread(prog, &dom, th, opts, false)?;
        cut |= c;
        all.push(ts.into_iter().map(|(t, _)| t).collect::<Vec<_>>());
    }
    Ok((all, cut))
}
