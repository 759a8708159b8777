//! Candidate executions and the axioms (see the module documentation of [`super`]).

use super::rel::{members, Rel, Set, MAX};
use super::trace::{LKind, Res, Trace};
use super::{AxiomError, Options, Outcomes};
use crate::ast::{LitmusTest, Mo, Scope, Var};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The initial write of a location.
    Init,
    Read,
    Write,
    /// The read of a read-modify-write; its write (`Rmw`) is the next event.
    RmwR,
    /// The write of a read-modify-write.
    Rmw,
    FailedCas,
    Fence {
        sc: bool,
    },
    Arrive {
        waits: bool,
    },
    Leave,
}

#[derive(Debug, Clone, Copy)]
struct Ev {
    kind: Kind,
    /// Index of the thread (`usize::MAX` for initial writes and phases).
    thread: usize,
    loc: usize,
    mo: Mo,
    scope: Scope,
    rval: i64,
    wval: i64,
    /// Index of the instruction in its thread (`usize::MAX` for initial writes).
    instr: usize,
}

impl Ev {
    fn is_mem(&self) -> bool {
        matches!(
            self.kind,
            Kind::Read | Kind::Write | Kind::RmwR | Kind::Rmw | Kind::FailedCas
        )
    }
    fn is_op(&self) -> bool {
        self.is_mem() || matches!(self.kind, Kind::Fence { .. })
    }
    /// PTX "strong": fences, atomics, and loads/stores other than `.weak`.
    fn strong(&self) -> bool {
        match self.kind {
            Kind::Read | Kind::Write => self.mo != Mo::Weak,
            Kind::RmwR | Kind::Rmw | Kind::FailedCas | Kind::Fence { .. } => true,
            _ => false,
        }
    }
}

/// Which set a consistent candidate's final states go to.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// Allowed by PTX; `in_order`: no read reads a write that depends on it through
    /// program order and reads-from (po ∪ rf acyclic).
    Allowed {
        in_order: bool,
    },
    Sc,
    /// Allowed with a total coherence order.
    TotalCo {
        in_order: bool,
    },
}

/// Where a thread runs: (gpu, cta).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    gpu: u32,
    cta: u32,
}

/// Does an operation of scope `s` by a thread at `a` include a thread at `b`?
fn includes(s: Scope, a: Place, b: Place) -> bool {
    match s {
        Scope::Cta => a == b,
        Scope::Gpu => a.gpu == b.gpu,
        Scope::Sys => true,
    }
}

/// One phase of a barrier resource: its arrivals (event indices) and whether it
/// completed (enough arrivals).
#[derive(Debug, Clone)]
struct Phase {
    arrivals: Vec<usize>,
    complete: bool,
}

/// A barrier resource in one candidate: per thread, its arrivals in program order.
#[derive(Debug, Clone)]
struct Resource {
    per_thread: Vec<(usize, Vec<usize>)>,
    /// `None`: every participant's k-th arrival forms phase k; `Some(q)`: phases of `q`
    /// arrivals, formed in any order.
    quorum: Option<u32>,
    /// Participants when fixed in advance (`bar.warp.sync`'s member mask); else the
    /// threads that arrive.
    participants: Option<usize>,
}

/// The events of one choice of traces, and what does not depend on reads-from.
struct Base<'a> {
    evs: Vec<Ev>,
    /// Index of the first barrier-phase node; nodes `phase0..n` stand for the completion
    /// of a barrier phase (every arrival of the phase precedes it, every waiting
    /// participant leaves after it) and have no entry in `evs`.
    phase0: usize,
    n: usize,
    po: Rel,
    ms: Rel,
    dep: Rel,
    reads: Vec<usize>,
    writes_at: Vec<Set>,
    /// (read, write) of every read-modify-write.
    rmw: Vec<(usize, usize)>,
    sc_fences: Set,
    /// Pairs (first operation, write) of release patterns.
    relpat: Vec<(usize, usize)>,
    /// Pairs (read, last operation) of acquire patterns.
    acqpat: Rel,
    /// Memory events per location (initial write included).
    at_loc: Vec<Set>,
    traces: Vec<&'a Trace>,
    /// Global index of each thread's first event.
    start: Vec<usize>,
    resources: Vec<Resource>,
}

pub(super) struct Checker<'a> {
    pub test: &'a LitmusTest,
    pub locs: &'a [String],
    pub init: &'a [i64],
    pub opts: &'a Options,
    pub vars: Vec<Var>,
    places: Vec<Place>,
    /// Per thread: the warp it shares (index of its first thread), for `bar.warp.sync`.
    warp_of: Vec<usize>,
    /// Per warp leader: threads of the warp with a `bar.warp.sync`.
    /// Threads per (warp, `bar.warp.sync` group) that take part in that group's barrier.
    warp_members: HashMap<(usize, u32), usize>,
    pub out: Outcomes,
}

impl<'a> Checker<'a> {
    pub fn new(
        test: &'a LitmusTest,
        locs: &'a [String],
        init: &'a [i64],
        opts: &'a Options,
    ) -> Self {
        let places: Vec<Place> = test
            .threads
            .iter()
            .map(|t| Place {
                gpu: t.gpu,
                cta: t.cta,
            })
            .collect();
        let warp_of: Vec<usize> = test
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| match t.warp {
                Some(w) => test
                    .threads
                    .iter()
                    .position(|u| u.warp == Some(w) && u.cta == t.cta && u.gpu == t.gpu)
                    .unwrap_or(i),
                None => i,
            })
            .collect();
        // Threads per (warp, group) that take part in that group's `bar.warp.sync`.
        let mut warp_members = HashMap::new();
        for (i, t) in test.threads.iter().enumerate() {
            let groups: BTreeSet<u32> = t
                .instrs
                .iter()
                .filter_map(|x| match x.node {
                    crate::ast::Instr::WarpSync { group } => Some(group),
                    _ => None,
                })
                .collect();
            for g in groups {
                *warp_members.entry((warp_of[i], g)).or_insert(0) += 1;
            }
        }
        let vars = test.observed();
        Checker {
            test,
            locs,
            init,
            opts,
            out: Outcomes {
                vars: vars.clone(),
                ..Outcomes::default()
            },
            vars,
            places,
            warp_of,
            warp_members,
        }
    }

    /// Runs over every choice of one trace per thread.
    pub fn run(&mut self, traces: &'a [Vec<Trace>]) -> Result<(), AxiomError> {
        if traces.iter().any(|t| t.is_empty()) {
            return Ok(());
        }
        let mut idx = vec![0usize; traces.len()];
        loop {
            let combo: Vec<&Trace> = idx.iter().zip(traces).map(|(i, t)| &t[*i]).collect();
            self.out.stats.trace_choices += 1;
            self.combo(combo)?;
            // Odometer.
            let mut k = 0;
            loop {
                if k == idx.len() {
                    return Ok(());
                }
                idx[k] += 1;
                if idx[k] < traces[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    fn combo(&mut self, traces: Vec<&'a Trace>) -> Result<(), AxiomError> {
        // Every outcome this choice could give is known already: nothing to learn.
        // (Race facts need every consistent execution, not only new final states.)
        let potential = if self.opts.races {
            None
        } else {
            self.potential(&traces)
        };
        if let Some(p) = &potential {
            let known_allowed = p.iter().all(|s| self.out.allowed.contains(s));
            let known_sc = !self.opts.sc || p.iter().all(|s| self.out.sc.contains(s));
            if known_allowed && known_sc {
                self.out.stats.pruned += 1;
                return Ok(());
            }
        }
        let Some(base) = self.base(traces)? else {
            return Ok(());
        };
        // Barrier phases.
        let mut assignments: Vec<Vec<Vec<Phase>>> = vec![Vec::new()];
        for r in &base.resources {
            let opts = phases(r);
            let mut next = Vec::new();
            for a in &assignments {
                for o in &opts {
                    let mut x = a.clone();
                    x.push(o.clone());
                    next.push(x);
                }
            }
            assignments = next;
        }
        for a in assignments {
            let mut phases = Vec::new();
            let mut seq = Vec::new();
            for per_resource in a {
                let first = phases.len();
                for (i, p) in per_resource.into_iter().enumerate() {
                    if i > 0 {
                        seq.push((first + i - 1, first + i));
                    }
                    phases.push(p);
                }
            }
            self.with_phases(&base, &phases, &seq)?;
        }
        Ok(())
    }

    /// The final states a choice of traces could have, if few.
    fn potential(&self, traces: &[&Trace]) -> Option<Vec<Vec<i64>>> {
        let mut states: Vec<Vec<i64>> = vec![Vec::new()];
        for v in &self.vars {
            let vals: Vec<i64> = match v {
                Var::Reg { thread, name } => vec![self.reg(traces, *thread, name)],
                Var::Loc(l) => {
                    let li = self.locs.iter().position(|x| x == l)?;
                    let mut vals = vec![self.init[li]];
                    for t in traces {
                        for e in &t.evs {
                            if matches!(e.kind, LKind::Write | LKind::Rmw)
                                && e.loc == li
                                && !vals.contains(&e.wval)
                            {
                                vals.push(e.wval);
                            }
                        }
                    }
                    vals
                }
            };
            let mut next = Vec::new();
            for s in &states {
                for x in &vals {
                    let mut s = s.clone();
                    s.push(*x);
                    next.push(s);
                }
            }
            if next.len() > 256 {
                return None;
            }
            states = next;
        }
        Some(states)
    }

    fn reg(&self, traces: &[&Trace], thread: u32, name: &str) -> i64 {
        let Some(ti) = self.test.threads.iter().position(|t| t.id == thread) else {
            return 0;
        };
        traces[ti].regs.get(name).copied().unwrap_or_else(|| {
            self.test
                .init_regs
                .iter()
                .rev()
                .find(|(t, r, _)| *t == thread && r == name)
                .map_or(0, |(_, _, v)| super::trace::wrap(*v))
        })
    }

    fn base(&self, traces: Vec<&'a Trace>) -> Result<Option<Base<'a>>, AxiomError> {
        let nl = self.locs.len();
        let mut evs: Vec<Ev> = (0..nl)
            .map(|l| Ev {
                kind: Kind::Init,
                thread: usize::MAX,
                loc: l,
                mo: Mo::Weak,
                scope: Scope::Sys,
                rval: 0,
                wval: self.init[l],
                instr: usize::MAX,
            })
            .collect();
        let mut start = Vec::new();
        let mut arrivals = 0;
        for (ti, t) in traces.iter().enumerate() {
            start.push(evs.len());
            for e in &t.evs {
                let kind = match e.kind {
                    LKind::Read => Kind::Read,
                    LKind::Write => Kind::Write,
                    LKind::RmwRead => Kind::RmwR,
                    LKind::Rmw => Kind::Rmw,
                    LKind::FailedCas => Kind::FailedCas,
                    LKind::Fence { sc } => Kind::Fence { sc },
                    LKind::Arrive { waits, .. } => {
                        arrivals += 1;
                        Kind::Arrive { waits }
                    }
                    LKind::Leave => Kind::Leave,
                };
                evs.push(Ev {
                    kind,
                    thread: ti,
                    loc: e.loc,
                    mo: e.mo,
                    scope: e.scope.unwrap_or(Scope::Sys),
                    rval: e.rval,
                    wval: e.wval,
                    instr: e.instr,
                });
            }
        }
        let phase0 = evs.len();
        let n = phase0 + arrivals;
        if n > MAX {
            return Err(AxiomError::Limit(format!(
                "{n} events and barrier phases in one execution (at most {MAX})"
            )));
        }
        let mut po = Rel::new(n);
        let mut dep = Rel::new(n);
        for (ti, t) in traces.iter().enumerate() {
            let s = start[ti];
            for (i, e) in t.evs.iter().enumerate() {
                for j in i + 1..t.evs.len() {
                    po.add(s + i, s + j);
                }
                for d in members(e.deps as u128) {
                    dep.add(s + d, s + i);
                }
            }
        }
        let mut at_loc = vec![0 as Set; nl];
        let mut writes_at = vec![0 as Set; nl];
        let mut reads = Vec::new();
        let mut rmw = Vec::new();
        let mut sc_fences: Set = 0;
        for (i, e) in evs.iter().enumerate() {
            if e.is_mem() || e.kind == Kind::Init {
                at_loc[e.loc] |= 1 << i;
            }
            match e.kind {
                Kind::Init | Kind::Write => writes_at[e.loc] |= 1 << i,
                Kind::Rmw => {
                    writes_at[e.loc] |= 1 << i;
                    rmw.push((i - 1, i));
                }
                Kind::Read | Kind::RmwR | Kind::FailedCas => reads.push(i),
                Kind::Fence { sc: true } => sc_fences |= 1 << i,
                _ => {}
            }
        }
        // Morally strong (PTX ISA §8.7): same thread, or both strong with each scope
        // including the other's thread; memory operations on the same location.
        let mut ms = Rel::new(n);
        for a in 0..phase0 {
            for b in 0..phase0 {
                let (x, y) = (evs[a], evs[b]);
                if a == b || !x.is_op() || !y.is_op() {
                    continue;
                }
                if x.is_mem() && y.is_mem() && x.loc != y.loc {
                    continue;
                }
                let (px, py) = (self.places[x.thread], self.places[y.thread]);
                let related = x.thread == y.thread
                    || (x.strong()
                        && y.strong()
                        && includes(x.scope, px, py)
                        && includes(y.scope, py, px));
                if related {
                    ms.add(a, b);
                }
            }
        }
        // Release and acquire patterns (PTX ISA §8.8).
        let is_write = |e: &Ev| matches!(e.kind, Kind::Write | Kind::Rmw);
        let is_read = |e: &Ev| matches!(e.kind, Kind::Read | Kind::RmwR | Kind::FailedCas);
        let rel_op = |e: &Ev| match e.kind {
            Kind::Write => e.mo == Mo::Release,
            Kind::Rmw => matches!(e.mo, Mo::Release | Mo::AcqRel),
            _ => false,
        };
        let acq_op = |e: &Ev| match e.kind {
            Kind::Read => e.mo == Mo::Acquire,
            Kind::RmwR | Kind::FailedCas => matches!(e.mo, Mo::Acquire | Mo::AcqRel),
            _ => false,
        };
        let fence = |e: &Ev| matches!(e.kind, Kind::Fence { .. });
        let mut relpat = Vec::new();
        let mut acqpat = Rel::new(n);
        for w in 0..phase0 {
            let ew = evs[w];
            if is_write(&ew) && ew.strong() {
                if rel_op(&ew) {
                    relpat.push((w, w));
                }
                for (x, ex) in evs.iter().enumerate().take(phase0) {
                    if !po.has(x, w) {
                        continue;
                    }
                    let same = ex.is_mem() && ex.loc == ew.loc;
                    if (self.opts.forms.release_then_write && rel_op(ex) && same) || fence(ex) {
                        relpat.push((x, w));
                    }
                }
            }
            if is_read(&ew) && ew.strong() {
                let r = w;
                if acq_op(&ew) {
                    acqpat.add(r, r);
                }
                for (y, ey) in evs.iter().enumerate().take(phase0) {
                    if !po.has(r, y) {
                        continue;
                    }
                    let same = ey.is_mem() && ey.loc == ew.loc;
                    if (self.opts.forms.read_then_acquire && acq_op(ey) && same) || fence(ey) {
                        acqpat.add(r, y);
                    }
                }
            }
        }
        // Barrier resources.
        let mut keyed: Vec<((u32, u32, usize, Res), Resource)> = Vec::new();
        for (ti, t) in traces.iter().enumerate() {
            let p = self.places[ti];
            for (i, e) in t.evs.iter().enumerate() {
                let LKind::Arrive { res, quorum, .. } = e.kind else {
                    continue;
                };
                let (key, participants) = match res {
                    Res::Cta(_) => ((p.gpu, p.cta, usize::MAX, res), None),
                    Res::Warp(g) => {
                        let w = self.warp_of[ti];
                        (
                            (p.gpu, p.cta, w, res),
                            self.warp_members.get(&(w, g)).copied(),
                        )
                    }
                };
                let pos = match keyed.iter().position(|(k, _)| *k == key) {
                    Some(x) => x,
                    None => {
                        keyed.push((
                            key,
                            Resource {
                                per_thread: Vec::new(),
                                quorum,
                                participants,
                            },
                        ));
                        keyed.len() - 1
                    }
                };
                let r = &mut keyed[pos].1;
                if r.quorum != quorum {
                    return Err(AxiomError::Unsupported {
                        pos: self.test.threads[ti].instrs[e.instr].pos,
                        what: "one barrier used with different thread counts (undefined in PTX)"
                            .into(),
                    });
                }
                match r.per_thread.iter_mut().find(|(x, _)| *x == ti) {
                    Some((_, v)) => v.push(start[ti] + i),
                    None => r.per_thread.push((ti, vec![start[ti] + i])),
                }
            }
        }
        Ok(Some(Base {
            evs,
            phase0,
            n,
            po,
            ms,
            dep,
            reads,
            writes_at,
            rmw,
            sc_fences,
            relpat,
            acqpat,
            at_loc,
            traces,
            start,
            resources: keyed.into_iter().map(|(_, r)| r).collect(),
        }))
    }

    fn with_phases(
        &mut self,
        b: &Base,
        phases: &[Phase],
        seq: &[(usize, usize)],
    ) -> Result<(), AxiomError> {
        // Barrier edges: every arrival of a complete phase precedes the phase node, which
        // precedes every waiting participant's `Leave`; a resource's phases complete in
        // order, and one phase's arrivals follow the previous phase's completion.
        let mut bar = Rel::new(b.n);
        let mut order = b.po.clone();
        for (k, ph) in phases.iter().enumerate() {
            let node = b.phase0 + k;
            if !ph.complete {
                // Waiting arrivals never leave: the thread is stuck; a final state exists
                // only if nothing but the barrier's own `Leave` follows.
                for &a in &ph.arrivals {
                    if b.evs[a].kind == (Kind::Arrive { waits: true }) {
                        let t = b.evs[a].thread;
                        let last = b.start[t] + b.traces[t].evs.len() - 1;
                        if a + 1 != last {
                            return Ok(());
                        }
                    }
                }
                continue;
            }
            for &a in &ph.arrivals {
                bar.add(a, node);
                if b.evs[a].kind == (Kind::Arrive { waits: true }) {
                    bar.add(node, a + 1);
                }
            }
        }
        order.union_with(&bar);
        // A resource's next phase gathers arrivals only after the previous one completed.
        for &(p, q) in seq {
            if phases[p].complete {
                for &a in &phases[q].arrivals {
                    order.add(b.phase0 + p, a);
                }
            }
        }
        let closed = order.closure();
        if !closed.irreflexive() {
            // A deadlock: the phases cannot complete in this way.
            return Ok(());
        }
        // Reads-from: every read picks a write of the same location and value.
        let mut cands: Vec<Vec<usize>> = Vec::new();
        for &r in &b.reads {
            let er = b.evs[r];
            let c: Vec<usize> = members(b.writes_at[er.loc])
                .filter(|&w| {
                    w != r
                        && b.evs[w].wval == er.rval
                        && !(b.evs[w].thread == er.thread && b.po.has(r, w))
                })
                .collect();
            if c.is_empty() {
                return Ok(());
            }
            cands.push(c);
        }
        let sc_orders = self.sc_orders(b);
        let mut pick = vec![0usize; cands.len()];
        let consistent_before = self.out.stats.consistent;
        loop {
            let mut rf = Rel::new(b.n);
            for (i, &r) in b.reads.iter().enumerate() {
                rf.add(cands[i][pick[i]], r);
            }
            self.out.stats.rf_choices += 1;
            self.candidate(b, &bar, &rf, &sc_orders)?;
            let mut k = 0;
            loop {
                if k == pick.len() {
                    // Every SC execution is allowed by PTX: only look for interleavings
                    // of traces PTX found consistent.
                    if self.opts.sc && self.out.stats.consistent > consistent_before {
                        self.sc_search(b, phases, &closed)?;
                    }
                    return Ok(());
                }
                pick[k] += 1;
                if pick[k] < cands[k].len() {
                    break;
                }
                pick[k] = 0;
                k += 1;
            }
        }
    }

    /// Every Fence-SC order (PTX ISA §8.9.3): an orientation of each pair of morally
    /// strong `fence.sc` operations of different threads (program order orients the
    /// others), acyclic; returned transitively closed.
    fn sc_orders(&self, b: &Base) -> Vec<Rel> {
        let fences: Vec<usize> = members(b.sc_fences).collect();
        let mut fixed = Rel::new(b.n);
        let mut free = Vec::new();
        for (i, &f) in fences.iter().enumerate() {
            for &g in &fences[i + 1..] {
                if b.evs[f].thread == b.evs[g].thread {
                    fixed.add(f, g);
                } else if b.ms.has(f, g) {
                    free.push((f, g));
                }
            }
        }
        let mut out = Vec::new();
        for mask in 0u64..1 << free.len() {
            let mut r = fixed.clone();
            for (i, &(f, g)) in free.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    r.add(f, g);
                } else {
                    r.add(g, f);
                }
            }
            let c = r.closure();
            if c.irreflexive() {
                out.push(c);
            }
        }
        out
    }

    fn candidate(
        &mut self,
        b: &Base,
        bar: &Rel,
        rf: &Rel,
        sc_orders: &[Rel],
    ) -> Result<(), AxiomError> {
        // Axiom 4, No-Thin-Air: rf ∪ dep is acyclic.
        if !rf.union(&b.dep).acyclic() {
            return Ok(());
        }
        // Observation order (§8.9.2): a morally strong read of a write, extended through
        // atomic read-modify-writes.
        let obs1 = {
            let mut o = rf.clone();
            for (a, row) in o.rows.iter_mut().enumerate() {
                *row &= b.ms.rows[a];
            }
            o
        };
        let mut obs = obs1.clone();
        // Through an atomic: its read observes, its write is observed.
        let mut through = Rel::new(b.n);
        for &(r, w) in &b.rmw {
            through.rows[r] = obs1.rows[w];
        }
        loop {
            let mut next = obs.then(&through);
            next.union_with(&obs);
            if next == obs {
                break;
            }
            obs = next;
        }
        // Synchronizes-with through patterns (§8.9.4 rule 4).
        let mut sync = Rel::new(b.n);
        for &(x, w) in &b.relpat {
            for r in members(obs.rows[w]) {
                for y in members(b.acqpat.rows[r]) {
                    if b.ms.has(x, y) {
                        sync.add(x, y);
                    }
                }
            }
        }
        sync.union_with(bar);
        let mut base_po = b.po.clone();
        if !self.opts.rmw_publishes_acquired {
            // Weakened (`crate::known`): an RMW's write does not follow its own read.
            for &(r, w) in &b.rmw {
                base_po.rows[r] &= !(1u128 << w);
            }
        }
        base_po.union_with(&sync);
        for so in sc_orders {
            // Base causality order (§8.9.5): po, synchronizes-with (patterns, fence-SC
            // order, barriers), transitively.
            let mut bc = base_po.clone();
            if self.opts.sc_wide_to_cta {
                bc.union_with(so);
            } else {
                // Weakened (`crate::known`): a .gpu/.sys fence.sc does not synchronize
                // with a later .cta one.
                for (f, row) in so.rows.iter().enumerate() {
                    let mut r = *row;
                    if b.evs.get(f).is_some_and(|e| e.scope != Scope::Cta) {
                        for g in members(r) {
                            if b.evs.get(g).is_some_and(|e| e.scope == Scope::Cta) {
                                r &= !(1u128 << g);
                            }
                        }
                    }
                    bc.rows[f] |= r;
                }
            }
            let bc = bc.closure();
            // Axiom 2, Fence-SC: the fence-SC order does not contradict causality.
            if members(b.sc_fences).any(|f| bc.has(f, f)) {
                continue;
            }
            // Causality order: base causality, possibly after one observation.
            let mut cause = obs.then(&bc);
            cause.union_with(&bc);
            // Axiom 6, Causality (its rf half): a read does not read a write it causes.
            if rf.pairs().any(|(w, r)| cause.has(r, w)) {
                continue;
            }
            self.with_cause(b, rf, &cause)?;
        }
        Ok(())
    }

    fn with_cause(&mut self, b: &Base, rf: &Rel, cause: &Rel) -> Result<(), AxiomError> {
        // Coherence order (§8.9.6): initial writes first; axiom 1, Coherence, puts
        // causality-ordered writes in order; morally strong writes are ordered one way
        // or the other; nothing else is (more order only forbids more).
        let mut co0 = Rel::new(b.n);
        let mut free = Vec::new();
        for l in 0..self.locs.len() {
            let ws: Vec<usize> = members(b.writes_at[l]).collect();
            for &w in &ws {
                if b.evs[w].kind == Kind::Init {
                    for &v in &ws {
                        if v != w {
                            co0.add(w, v);
                        }
                    }
                    continue;
                }
                for &v in &ws {
                    if v != w && b.evs[v].kind != Kind::Init && cause.has(w, v) {
                        co0.add(w, v);
                    }
                }
            }
        }
        let tr = self.opts.co_transitive;
        let co0 = if tr { co0.closure() } else { co0 };
        if !(if tr { co0.irreflexive() } else { co0.acyclic() }) {
            return Ok(());
        }
        for l in 0..self.locs.len() {
            let ws: Vec<usize> = members(b.writes_at[l])
                .filter(|w| b.evs[*w].kind != Kind::Init)
                .collect();
            for (i, &w) in ws.iter().enumerate() {
                for &v in &ws[i + 1..] {
                    if b.ms.has(w, v) && !co0.has(w, v) && !co0.has(v, w) {
                        free.push((w, v));
                    }
                }
            }
        }
        if free.len() > 16 {
            return Err(AxiomError::Limit(format!(
                "{} unordered pairs of morally strong writes",
                free.len()
            )));
        }
        let mut in_order: Option<bool> = None;
        let mut poloc = Rel::new(b.n);
        for l in 0..self.locs.len() {
            let m = b.at_loc[l];
            for a in members(m) {
                poloc.rows[a] |= b.po.rows[a] & m;
            }
        }
        for mask in 0u64..1 << free.len() {
            let mut co = co0.clone();
            for (i, &(w, v)) in free.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    co.add(w, v);
                } else {
                    co.add(v, w);
                }
            }
            let co = if free.is_empty() || !tr {
                co
            } else {
                co.closure()
            };
            if !axioms_hold(b, rf, cause, &co, &poloc, tr, self.opts.sc_per_location) {
                continue;
            }
            self.out.stats.consistent += 1;
            if self.opts.races {
                self.race_facts(b, rf, cause, &co, false);
            }
            let in_order = *in_order.get_or_insert_with(|| rf.union(&b.po).acyclic());
            self.record(b, &co, Target::Allowed { in_order })?;
            if (self.opts.total_co || self.opts.races) && tr {
                self.totals(b, rf, cause, &co, &poloc, in_order)?;
            }
        }
        Ok(())
    }

    /// The consistent total extensions of a consistent coherence order `co` (ordering the
    /// writes that race too) in which every RMW's write follows the write its read
    /// returns, for [`Outcomes::total_co`].
    fn totals(
        &mut self,
        b: &Base,
        rf: &Rel,
        cause: &Rel,
        co: &Rel,
        poloc: &Rel,
        in_order: bool,
    ) -> Result<(), AxiomError> {
        let mut open = Vec::new();
        for l in 0..self.locs.len() {
            let ws: Vec<usize> = members(b.writes_at[l]).collect();
            for (i, &w) in ws.iter().enumerate() {
                for &v in &ws[i + 1..] {
                    if !co.has(w, v) && !co.has(v, w) {
                        open.push((w, v));
                    }
                }
            }
        }
        if open.len() > 12 {
            return Err(AxiomError::Limit(format!(
                "{} racing pairs of writes to order",
                open.len()
            )));
        }
        for mask in 0u64..1 << open.len() {
            let mut t = co.clone();
            for (i, &(w, v)) in open.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    t.add(w, v);
                } else {
                    t.add(v, w);
                }
            }
            let t = if open.is_empty() { t } else { t.closure() };
            // A memory that serializes stores puts an RMW's write after what it read
            // (PTX does not, between operations that are not morally strong).
            let serial = b
                .rmw
                .iter()
                .all(|&(r, a)| members(rf.inverse().rows[r]).all(|src| t.has(src, a)));
            if serial && axioms_hold(b, rf, cause, &t, poloc, true, self.opts.sc_per_location) {
                if self.opts.total_co {
                    self.record(b, &t, Target::TotalCo { in_order })?;
                }
                if self.opts.races {
                    self.race_facts(b, rf, cause, &t, true);
                }
            }
        }
        Ok(())
    }

    /// Sequential consistency (for telling weak behaviours from interleavings): the
    /// final states of every interleaving of the events that respects program order and
    /// the barriers, where each read returns the latest write to its location (which must
    /// carry the value the trace guessed) and an RMW's read and write are adjacent. A
    /// depth-first search over (events done, last write per location), memoized.
    fn sc_search(&mut self, b: &Base, phases: &[Phase], closed: &Rel) -> Result<(), AxiomError> {
        // Waiting arrivals of incomplete phases never leave: their `Leave` never happens.
        let mut stuck: Set = 0;
        for ph in phases.iter().filter(|p| !p.complete) {
            for &a in &ph.arrivals {
                if b.evs[a].kind == (Kind::Arrive { waits: true }) {
                    stuck |= 1 << (a + 1);
                }
            }
        }
        let nl = self.locs.len();
        let below = |k: usize| if k >= 128 { !0 } else { (1u128 << k) - 1 };
        let all: Set = below(b.phase0) & !below(nl) & !stuck;
        let preds: Vec<Set> = (0..b.phase0)
            .map(|e| {
                let mut m: Set = 0;
                for d in members(all) {
                    if closed.has(d, e) {
                        m |= 1 << d;
                    }
                }
                m
            })
            .collect();
        // The last write of each location, 7 bits per location.
        if nl > 18 {
            return Err(AxiomError::Limit(format!(
                "{nl} locations (at most 18 for the SC search)"
            )));
        }
        let get = |last: u128, l: usize| (last >> (7 * l) & 0x7f) as usize;
        let set =
            |last: u128, l: usize, w: usize| last & !(0x7fu128 << (7 * l)) | (w as u128) << (7 * l);
        let mut start: u128 = 0;
        for l in 0..nl {
            start = set(start, l, l);
        }
        let mut seen: std::collections::HashSet<(Set, u128)> = Default::default();
        let mut stack: Vec<(Set, u128)> = vec![(0, start)];
        let mut finals: BTreeSet<u128> = BTreeSet::new();
        while let Some((done, last)) = stack.pop() {
            if !seen.insert((done, last)) {
                continue;
            }
            if done == all {
                finals.insert(last);
                continue;
            }
            for e in members(all & !done) {
                if preds[e] & !done != 0 {
                    continue;
                }
                let ev = b.evs[e];
                let mut d = done | 1 << e;
                let mut l = last;
                match ev.kind {
                    Kind::Read | Kind::FailedCas if b.evs[get(last, ev.loc)].wval != ev.rval => {
                        continue;
                    }
                    Kind::RmwR => {
                        // The write follows at once.
                        if b.evs[get(last, ev.loc)].wval != ev.rval || preds[e + 1] & !d != 0 {
                            continue;
                        }
                        d |= 1 << (e + 1);
                        l = set(l, ev.loc, e + 1);
                    }
                    Kind::Rmw => continue,
                    Kind::Write => l = set(l, ev.loc, e),
                    _ => {}
                }
                stack.push((d, l));
            }
        }
        for packed in finals {
            let last: Vec<usize> = (0..nl).map(|l| get(packed, l)).collect();
            let mut co = Rel::new(b.n);
            for (l, &w) in last.iter().enumerate() {
                // Only "which write is last" matters for the final state.
                for v in members(b.writes_at[l]) {
                    if v != w {
                        co.add(v, w);
                    }
                }
            }
            self.record(b, &co, Target::Sc)?;
        }
        Ok(())
    }

    /// Adds the final states of a consistent candidate: registers from the traces, each
    /// location's value from a write last in coherence order.
    fn record(&mut self, b: &Base, co: &Rel, to: Target) -> Result<(), AxiomError> {
        if let Some(u) = b.traces.iter().find_map(|t| t.undefined.clone()) {
            return Err(AxiomError::Undefined(u));
        }
        let mut states: Vec<Vec<i64>> = vec![Vec::new()];
        for v in &self.vars {
            let vals: Vec<i64> = match v {
                Var::Reg { thread, name } => vec![self.reg(&b.traces, *thread, name)],
                Var::Loc(l) => {
                    let li = self.locs.iter().position(|x| x == l).unwrap_or(0);
                    let ws = b.writes_at[li];
                    let mut vals: Vec<i64> = members(ws)
                        .filter(|&w| co.rows[w] & ws == 0)
                        .map(|w| b.evs[w].wval)
                        .collect();
                    vals.sort_unstable();
                    vals.dedup();
                    vals
                }
            };
            let mut next = Vec::new();
            for s in &states {
                for x in &vals {
                    let mut s = s.clone();
                    s.push(*x);
                    next.push(s);
                }
            }
            states = next;
        }
        match to {
            Target::Sc => self.out.sc.extend(states),
            Target::TotalCo { in_order } => {
                if in_order {
                    self.out.plain.extend(states.iter().cloned());
                }
                self.out.total_co.extend(states)
            }
            Target::Allowed { in_order } => {
                if in_order {
                    self.out.in_order.extend(states.iter().cloned());
                }
                self.out.allowed.extend(states);
            }
        }
        Ok(())
    }
}

/// One access of a consistent candidate, for [`Checker::race_facts`]: an RMW is its read
/// event (`first`) and its write event (`last`).
#[derive(Debug, Clone, Copy)]
struct Acc {
    first: usize,
    last: usize,
    /// A store or an atomic that wrote (a failed `cas` did not).
    writes: bool,
    /// An atomic that wrote the value it read: a read for the `unordered` rules.
    same_value: bool,
    atomic: bool,
    /// The event that reads, if any.
    read: Option<usize>,
}

impl Checker<'_> {
    /// Adds the facts of one consistent candidate to [`Outcomes::races`]. With `total`,
    /// `co` is a total serial extension ([`Checker::totals`]) and only rule 2 (two
    /// writes) is judged: the race check compares a write with the one it overwrote in a
    /// memory that serializes each location's writes, where an RMW reads the write just
    /// before its own. The rest is judged on the partial coherence order.
    fn race_facts(&mut self, b: &Base, rf: &Rel, cause: &Rel, co: &Rel, total: bool) {
        let mut accs = Vec::new();
        for (i, e) in b.evs.iter().enumerate().take(b.phase0) {
            let a = match e.kind {
                Kind::Read => (i, false, false, false, Some(i)),
                Kind::FailedCas => (i, false, false, true, Some(i)),
                Kind::Write => (i, true, false, false, None),
                Kind::Rmw => (i - 1, true, b.evs[i - 1].rval == e.wval, true, Some(i - 1)),
                _ => continue,
            };
            accs.push(Acc {
                first: a.0,
                last: i,
                writes: a.1,
                same_value: a.2,
                atomic: a.3,
                read: a.4,
            });
        }
        let rf_src = |r: usize| members(rf.inverse().rows[r]).next();
        let is_cas = |t: usize, instr: usize| {
            matches!(
                self.test.threads[t].instrs[instr].node,
                crate::ast::Instr::Cas { .. }
            )
        };
        let just_before = |v: usize, w: usize| {
            co.has(v, w)
                && !members(b.writes_at[b.evs[w].loc]).any(|u| co.has(v, u) && co.has(u, w))
        };
        let serial = b
            .rmw
            .iter()
            .all(|&(r, w)| rf_src(r).is_some_and(|s| just_before(s, w)));
        if total && !serial {
            return;
        }
        for (i, x) in accs.iter().enumerate() {
            for y in &accs[i + 1..] {
                let (ex, ey) = (b.evs[x.last], b.evs[y.last]);
                if ex.thread == ey.thread || ex.loc != ey.loc || !(x.writes || y.writes) {
                    continue;
                }
                let (kx, ky) = ((ex.thread, ex.instr), (ey.thread, ey.instr));
                let key = (kx.min(ky), kx.max(ky));
                let ms = b.ms.has(x.last, y.last);
                let (wx, wy) = (x.writes && !x.same_value, y.writes && !y.same_value);
                if total != (ms && wx && wy && !(x.atomic && y.atomic)) {
                    // Rule 2 on total orders only; everything else on partial ones.
                    if total {
                        continue;
                    }
                }
                let f = self.out.races.entry(key).or_default();
                f.morally_strong = ms;
                let ordered = cause.has(x.last, y.first) || cause.has(y.last, x.first);
                if ordered {
                    continue;
                }
                f.unordered = true;
                if f.must_report {
                    continue;
                }
                // The CAS loop: a load whose value a later `cas` of its thread on the
                // location checks.
                let cas_checked = |l: &Acc| {
                    let el = b.evs[l.last];
                    el.kind == Kind::Read
                        && b.traces[el.thread].evs.iter().enumerate().any(|(k, e)| {
                            b.po.has(l.last, b.start[el.thread] + k)
                                && e.loc == el.loc
                                && is_cas(el.thread, e.instr)
                        })
                };
                if !ms {
                    // Data races: a weak load of a location an atomic changes.
                    let validated = |l: &Acc, other: &Acc| {
                        other.atomic && b.evs[l.last].mo == Mo::Weak && cas_checked(l)
                    };
                    if !validated(x, y) && !validated(y, x) {
                        f.must_report = true;
                    }
                    continue;
                }
                if x.atomic && y.atomic || (wx && wy && !total) {
                    continue;
                }
                // The store-buffering handshake (Dekker, Peterson; the race check's
                // `handshake`): `p` followed in program order by a fence.sc, `q` preceded
                // by one, the two fences morally strong. Fence-SC order orders the fences,
                // so one side's accesses before its fence happen before the other's after
                // its own: the pair being unordered is the handshake deciding who goes
                // first, and every outcome is a sequentially consistent one.
                let handshake = |p: &Acc, q: &Acc| {
                    members(b.sc_fences).any(|f| {
                        b.po.has(p.last, f)
                            && members(b.sc_fences).any(|g| b.po.has(g, q.first) && b.ms.has(f, g))
                    })
                };
                let must = match (wx, wy) {
                    (false, false) => false,
                    (true, true) => {
                        // Rule 2: the coherence-later writer overwrote a different value
                        // blindly (on a total, serial coherence order; see above).
                        let (first, second) = if co.has(x.last, y.last) {
                            (x, y)
                        } else {
                            (y, x)
                        };
                        let t = b.evs[second.last].thread;
                        let seen = members(b.at_loc[ex.loc]).any(|r| {
                            b.evs[r].thread == t
                                && matches!(
                                    b.evs[r].kind,
                                    Kind::Read | Kind::RmwR | Kind::FailedCas
                                )
                                && (b.po.has(r, second.first) || r == second.first)
                                && rf_src(r)
                                    .is_some_and(|s| s == first.last || co.has(first.last, s))
                        });
                        // The second overwrote the first: nothing in between.
                        just_before(first.last, second.last)
                            && !second.atomic
                            && !seen
                            && ex.wval != ey.wval
                            && !handshake(first, second)
                    }
                    _ => {
                        // Rule 3: neither side is synchronization.
                        let (w, r) = if wx { (x, y) } else { (y, x) };
                        let read_ev = r.read.unwrap_or(r.first);
                        let acquire = b.acqpat.rows[read_ev] != 0;
                        let release = b.relpat.iter().any(|&(_, v)| v == w.last);
                        !acquire && !release && !cas_checked(r) && !handshake(w, r)
                    }
                };
                if let Some(f) = self.out.races.get_mut(&key).filter(|_| must) {
                    f.must_report = true;
                }
            }
        }
    }
}

/// Axioms 3 (Atomicity), 5 (SC per location) and 6 (Causality, its fr half) for a
/// candidate coherence order `co` (closed transitively unless [`Options::co_transitive`]
/// is off); axiom 1 holds by construction.
fn axioms_hold(
    b: &Base,
    rf: &Rel,
    cause: &Rel,
    co: &Rel,
    poloc: &Rel,
    transitive: bool,
    sc_per_location: bool,
) -> bool {
    if !(if transitive {
        co.irreflexive()
    } else {
        co.acyclic()
    }) {
        return false;
    }
    let fr = rf.inverse().then(co);
    // Atomicity: no morally strong write between an RMW's read and its write.
    let atomic_ok = b.rmw.iter().all(|&(r, a)| {
        members(fr.rows[r] & b.ms.rows[r]).all(|w| !(co.has(w, a) && b.ms.has(w, a)))
    });
    if !atomic_ok {
        return false;
    }
    // SC per location: po-loc and morally strong communication acyclic.
    if sc_per_location {
        let mut com = rf.union(co);
        com.union_with(&fr);
        for (a, row) in com.rows.iter_mut().enumerate() {
            *row &= b.ms.rows[a];
        }
        com.union_with(poloc);
        if !com.acyclic() {
            return false;
        }
    }
    // Causality, fr half: a read does not miss a write it follows in causality order.
    let missed = fr.pairs().any(|(r, w)| cause.has(w, r));
    !missed
}

/// Every way the arrivals at one resource can form phases.
fn phases(r: &Resource) -> Vec<Vec<Phase>> {
    match r.quorum {
        None => {
            // Phase k: every participant's k-th arrival; complete when all arrived.
            let parts = r.participants.unwrap_or(r.per_thread.len());
            let most = r.per_thread.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
            let mut out = Vec::new();
            for k in 0..most {
                let arrivals: Vec<usize> = r
                    .per_thread
                    .iter()
                    .filter_map(|(_, v)| v.get(k).copied())
                    .collect();
                out.push(Phase {
                    complete: arrivals.len() >= parts,
                    arrivals,
                });
            }
            vec![out]
        }
        Some(q) => {
            let mut out = Vec::new();
            let queues: Vec<&[usize]> = r.per_thread.iter().map(|(_, v)| v.as_slice()).collect();
            quorum_phases(&queues, q as usize, &mut Vec::new(), &mut out);
            out
        }
    }
}

/// Phases of `q` arrivals formed from the heads of the per-thread queues (at most one
/// arrival per thread per phase), until fewer than `q` threads still arrive; what is left
/// is an incomplete last phase.
fn quorum_phases(queues: &[&[usize]], q: usize, acc: &mut Vec<Phase>, out: &mut Vec<Vec<Phase>>) {
    let live: Vec<usize> = (0..queues.len())
        .filter(|i| !queues[*i].is_empty())
        .collect();
    if live.len() < q {
        let mut v = acc.clone();
        let rest: Vec<usize> = live
            .iter()
            .flat_map(|i| queues[*i].iter().copied())
            .collect();
        if !rest.is_empty() {
            v.push(Phase {
                arrivals: rest,
                complete: false,
            });
        }
        out.push(v);
        return;
    }
    for pick in combinations(&live, q) {
        let mut qs: Vec<&[usize]> = queues.to_vec();
        let mut arrivals = Vec::new();
        for &i in &pick {
            arrivals.push(qs[i][0]);
            qs[i] = &qs[i][1..];
        }
        acc.push(Phase {
            arrivals,
            complete: true,
        });
        quorum_phases(&qs, q, acc, out);
        acc.pop();
    }
}

fn combinations(xs: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    if xs.len() < k {
        return Vec::new();
    }
    let mut out = Vec::new();
    for mut c in combinations(&xs[1..], k - 1) {
        c.insert(0, xs[0]);
        out.push(c);
    }
    out.extend(combinations(&xs[1..], k));
    out
}
