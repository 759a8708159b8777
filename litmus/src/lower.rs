//! Lowering a litmus test to one PTX kernel for the vgpu (and ptxas).
//!
//! - One GPU thread per litmus thread, in a warp of its own unless placed in a shared
//!   warp (`@cta C,warp W,gpu G`, a fencehound extension): the threads of one CTA with the
//!   same `W` are lanes 0, 1, … of one warp, every other thread is lane 0 of a warp of its
//!   own ([`place`]); lanes without a litmus thread exit at once. CTAs are the test's CTA
//!   ids in increasing order; every CTA has `32 × (most warps in a CTA)` threads.
//! - `bar.warp.sync` gets the member mask of the lanes of its warp whose thread has a
//!   `bar.warp.sync`. Threads that share a warp cannot use CTA barriers (a counted
//!   barrier counts a warp's arrival once): that is reported unsupported.
//! - `ld.volatile`/`st.volatile` stay volatile (PTX treats them as `.relaxed.sys`).
//! - Memory locations are module `.global .u32` variables (8-byte aligned, so no two share
//!   a write-buffer block) with the test's initial values — or, with [`Layout::Packed`],
//!   consecutive words of one array, so locations share 8-byte blocks as a struct's
//!   fields do (the models keep per-block lists: a per-block approximation once hid the
//!   stale read of `struct { int flag; int data; }`, and the spread layout could not
//!   show it); registers are PTX registers
//!   `%tN_REG`. At the end each thread stores its registers to `fh_out`, and the host
//!   reads `fh_out` and the locations back.
//! - Memory semantics and scopes are kept exactly: `ld.acquire.gpu` becomes
//!   `ld.acquire.gpu.global.u32`, `st.weak` a plain `st.global.u32`, and so on. Two
//!   spellings have no direct PTX form and are mapped to the identical operation:
//!   `red` with `.acquire`/`.acq_rel` (PTX `red` allows only `.relaxed`/`.release`) is an
//!   `atom` whose result is discarded, and `.sub` is `.add` of the negated value.
//! - Barriers. The resource is `ID` when given (constant or register), else the instance
//!   constant `C`, so different instance constants never synchronise with each other
//!   (Dat3M's rule for `bar.cta.sync C`). Every barrier carries a thread count, because
//!   Dat3M's barrier instance consists of the threads that execute it, not of the whole
//!   CTA: a quorum `Q` counts litmus threads, each of which is a whole warp, so the PTX
//!   count is `32 × Q` (PTX counts barrier arrivals per warp); without a quorum the count
//!   is 32 × the CTA's litmus threads that have a barrier on the same constant resource
//!   (a register the thread never writes counts as its initial value) or on a register
//!   resource (a register may name any resource, so those threads are
//!   counted for every resource: that may make a barrier wait for a thread that goes
//!   elsewhere, which is a hang, never a missing synchronisation). A thread that never
//!   arrives leaves the others waiting: that execution is a hang (no final state) —
//!   unless every waiting thread waits at a `bar.sync` that is its last instruction: its
//!   registers are stored before that barrier, and the state is final
//!   ([`Lowered::trailing_barriers`]).

use crate::ast::*;
use crate::error::LitmusError;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

pub const KERNEL: &str = "litmus";
pub const OUT: &str = "fh_out";

/// A litmus test ready to run.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub ptx: String,
    pub module: fencehound_ptx::Module,
    pub grid: u32,
    pub block: u32,
    /// `(location, PTX variable, index of its 32-bit word in the variable)`.
    pub locations: Vec<(String, String, usize)>,
    /// Which register each `fh_out` word holds.
    pub out_slots: Vec<(u32, String)>,
    /// PTX lines of `bar.sync`s that are their thread's last instruction. An execution in
    /// which every unfinished thread waits at one of them forever has executed every
    /// memory operation and register write, so it has a final state (Dat3M's model,
    /// which does not model blocking, counts it: e.g. a quorum of 2 reached by two of
    /// three threads, `quorum1-pass`).
    pub trailing_barriers: Vec<u32>,
    /// Per thread (in [`LitmusTest::threads`] order), per instruction: the first and last
    /// PTX line it was lowered to (1-based; `first > last` if it became no PTX).
    pub instr_lines: Vec<Vec<(u32, u32)>>,
}

pub fn loc_var(l: &str) -> String {
    format!("fh_loc_{l}")
}

/// The PTX array that holds every location under [`Layout::Packed`].
pub const PACKED: &str = "fh_mem";

/// Where a lowered test's locations live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Each location in an 8-byte block of its own.
    #[default]
    Spread,
    /// Location `i` (in [`LitmusTest::locations`] order) at byte `4 i` of one array: pairs
    /// of locations share an 8-byte block.
    Packed,
}

fn reg_name(t: u32, r: &str) -> String {
    format!("%t{t}_{r}")
}

fn unsupported(file: &str, pos: Pos, what: impl Into<String>) -> LitmusError {
    LitmusError::Unsupported {
        file: file.into(),
        pos,
        what: what.into(),
    }
}

fn to_u32(file: &str, pos: Pos, v: i64) -> Result<u32, LitmusError> {
    if (i32::MIN as i64..=u32::MAX as i64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(unsupported(
            file,
            pos,
            format!("value {v} does not fit in 32 bits"),
        ))
    }
}

pub fn lower(file: &str, t: &LitmusTest) -> Result<Lowered, LitmusError> {
    lower_with(file, t, Layout::Spread)
}

/// [`lower`] with the locations laid out as `layout` says.
pub fn lower_with(file: &str, t: &LitmusTest, layout: Layout) -> Result<Lowered, LitmusError> {
    if let Some(first) = t.threads.first() {
        if let Some(other) = t.threads.iter().find(|x| x.gpu != first.gpu) {
            return Err(unsupported(
                file,
                other.pos,
                format!(
                    "threads on different GPUs (P{} on gpu {}, P{} on gpu {}): the virtual GPU is one device",
                    first.id, first.gpu, other.id, other.gpu
                ),
            ));
        }
    } else {
        return Err(unsupported(file, t.condition.pos, "a test without threads"));
    }
    let ctas: Vec<u32> = t
        .threads
        .iter()
        .map(|x| x.cta)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let slots = place(t);
    let max_warps = slots.iter().map(|s| s.warp + 1).max().unwrap_or(1);
    let block = 32 * max_warps;
    if block > 1024 {
        return Err(unsupported(
            file,
            t.threads[0].pos,
            format!("{max_warps} warps in one CTA (at most 32)"),
        ));
    }
    let warp_mates = |i: usize| -> Vec<usize> {
        (0..slots.len())
            .filter(|j| slots[*j].cta == slots[i].cta && slots[*j].warp == slots[i].warp)
            .collect()
    };
    // The `bar.warp.sync` member masks of each thread, by group: the lanes of its warp
    // whose thread has a `bar.warp.sync` of that group.
    let mut warp_masks = vec![BTreeMap::<u32, u32>::new(); t.threads.len()];
    for (i, th) in t.threads.iter().enumerate() {
        let mates = warp_mates(i);
        if mates.len() > 32 {
            return Err(unsupported(
                file,
                th.pos,
                "more than 32 threads in one warp",
            ));
        }
        // A counted `bar.sync` counts arrivals per warp: a warp that holds several litmus
        // threads would arrive once for all of them, so they cannot use CTA barriers.
        let bar = th
            .instrs
            .iter()
            .find(|i| matches!(i.node, Instr::Barrier { .. }));
        if let (Some(b), true) = (bar, mates.len() > 1) {
            return Err(unsupported(
                file,
                b.pos,
                format!(
                    "P{} shares its warp with another thread and uses a CTA barrier (arrivals are counted per warp)",
                    th.id
                ),
            ));
        }
        for j in mates {
            for x in &t.threads[j].instrs {
                if let Instr::WarpSync { group } = x.node {
                    *warp_masks[i].entry(group).or_insert(0) |= 1 << slots[j].lane;
                }
            }
        }
    }
    let locations: Vec<(String, String, usize)> = t
        .locations()
        .into_iter()
        .enumerate()
        .map(|(i, l)| match layout {
            Layout::Spread => {
                let v = loc_var(&l);
                (l, v, 0)
            }
            Layout::Packed => (l, PACKED.to_string(), i),
        })
        .collect();
    // Each location's address operand.
    let addrs: BTreeMap<String, String> = locations
        .iter()
        .map(|(l, v, i)| {
            let a = match layout {
                Layout::Spread => v.clone(),
                Layout::Packed => format!("{v}+{}", 4 * i),
            };
            (l.clone(), a)
        })
        .collect();

    // Registers of each thread: named anywhere in its code, its initial state or the condition.
    let mut regs: Vec<BTreeSet<String>> = vec![BTreeSet::new(); t.threads.len()];
    for (i, th) in t.threads.iter().enumerate() {
        let set = &mut regs[i];
        let mut v = |x: &Value| {
            if let Value::Reg(r) = x {
                set.insert(r.clone());
            }
        };
        for ins in &th.instrs {
            match &ins.node {
                Instr::Load { dst, .. } => {
                    set_insert(&mut v, dst);
                }
                Instr::Store { val, .. } => v(val),
                Instr::Rmw { dst, val, .. } => {
                    if let Some(d) = dst {
                        set_insert(&mut v, d);
                    }
                    v(val)
                }
                Instr::Cas {
                    dst, expected, new, ..
                } => {
                    set_insert(&mut v, dst);
                    v(expected);
                    v(new);
                }
                Instr::Barrier { id, quorum, .. } => {
                    if let Some(x) = id {
                        v(x)
                    }
                    if let Some(x) = quorum {
                        v(x)
                    }
                }
                Instr::Move { dst, val } => {
                    set_insert(&mut v, dst);
                    v(val)
                }
                Instr::Arith { dst, a, b, .. } => {
                    set_insert(&mut v, dst);
                    v(a);
                    v(b)
                }
                Instr::Branch { a, b, .. } => {
                    v(a);
                    v(b)
                }
                Instr::Fence { .. }
                | Instr::Goto { .. }
                | Instr::Label { .. }
                | Instr::WarpSync { .. } => {}
            }
        }
    }
    for (th, r, _) in &t.init_regs {
        if let Some(s) = regs.get_mut(*th as usize) {
            s.insert(r.clone());
        }
    }
    for var in t.observed() {
        if let Var::Reg { thread, name } = var {
            if let Some(s) = regs.get_mut(thread as usize) {
                s.insert(name);
            }
        }
    }
    let mut out_slots = Vec::new();
    for (i, s) in regs.iter().enumerate() {
        for r in s {
            out_slots.push((i as u32, r.clone()));
        }
    }

    let mut p = String::new();
    let _ = writeln!(p, "// litmus test {}", t.name.replace('\n', " "));
    p.push_str(".version 7.5\n.target sm_80\n.address_size 64\n\n");
    let mut inits = Vec::with_capacity(locations.len());
    for (l, _, _) in &locations {
        let init = t
            .init_mem
            .iter()
            .rev()
            .find(|(n, _)| n == l)
            .map_or(0, |(_, x)| *x);
        inits.push(to_u32(file, t.condition.pos, init)?);
    }
    match layout {
        Layout::Spread => {
            for ((_, v, _), init) in locations.iter().zip(&inits) {
                let _ = writeln!(p, ".global .align 8 .u32 {v} = {init};");
            }
        }
        Layout::Packed => {
            let list: Vec<String> = inits.iter().map(u32::to_string).collect();
            let _ = writeln!(
                p,
                ".global .align 8 .u32 {PACKED}[{}] = {{{}}};",
                inits.len().max(1),
                if list.is_empty() {
                    "0".to_string()
                } else {
                    list.join(", ")
                }
            );
        }
    }
    let _ = writeln!(
        p,
        ".global .align 8 .u32 {OUT}[{}];\n",
        out_slots.len().max(1)
    );
    let _ = writeln!(p, ".visible .entry {KERNEL}()\n{{");
    // Registers one by one: the vgpu leaks the names a `%r<N>` range declares, and the
    // runner loads the module once per execution.
    p.push_str("\t.reg .pred %p0, %p1;\n\t.reg .b32 %s0, %s1, %s2, %s3;\n\t.reg .b32 %fh_tid, %fh_cta, %fh_key, %fh_lane, %fh_wkey, %fh_n;\n");
    for (i, s) in regs.iter().enumerate() {
        for r in s {
            let _ = writeln!(p, "\t.reg .b32 {};", reg_name(i as u32, r));
        }
    }
    // Lanes without a litmus role exit in the warp's first, converged, instructions: a
    // predicated `exit` retires them before the others run on, so every barrier sees
    // them as exited. A warp holds `n` litmus threads in lanes 0..n (1 by default).
    p.push_str("\tmov.u32 %fh_lane, %laneid;\n\tmov.u32 %fh_tid, %tid.x;\n\tmov.u32 %fh_cta, %ctaid.x;\n\tmad.lo.u32 %fh_key, %fh_cta, 1024, %fh_tid;\n\tsub.u32 %fh_wkey, %fh_key, %fh_lane;\n\tmov.u32 %fh_n, 1;\n");
    let mut wide_warps: Vec<(u32, u32)> = Vec::new();
    for s in &slots {
        let n = slots
            .iter()
            .filter(|x| x.cta == s.cta && x.warp == s.warp)
            .count() as u32;
        let wkey = s.cta * 1024 + 32 * s.warp;
        if n > 1 && !wide_warps.iter().any(|w| w.0 == wkey) {
            wide_warps.push((wkey, n));
        }
    }
    for (wkey, n) in &wide_warps {
        let _ = writeln!(
            p,
            "\tsetp.eq.u32 %p0, %fh_wkey, {wkey};\n\t@%p0 mov.u32 %fh_n, {n};"
        );
    }
    p.push_str("\tsetp.ge.u32 %p0, %fh_lane, %fh_n;\n\t@%p0 exit;\n");
    for (i, th) in t.threads.iter().enumerate() {
        let s = slots[i];
        let key = s.cta * 1024 + 32 * s.warp + s.lane;
        let _ = writeln!(
            p,
            "\tsetp.eq.u32 %p0, %fh_key, {key};\n\t@%p0 bra $T{};",
            th.id
        );
    }
    p.push_str("\texit;\n");
    let mut slot = 0usize;
    let mut trailing_barriers = Vec::new();
    let mut instr_lines = Vec::with_capacity(t.threads.len());
    for (i, th) in t.threads.iter().enumerate() {
        let tn = th.id;
        let _ = writeln!(p, "$T{tn}:");
        for r in &regs[i] {
            let init = t
                .init_regs
                .iter()
                .rev()
                .find(|(x, n, _)| *x == tn && n == r)
                .map_or(0, |(_, _, v)| *v);
            let init = to_u32(file, th.pos, init)?;
            let _ = writeln!(p, "\tmov.b32 {}, {init};", reg_name(tn, r));
        }
        let peers: Vec<&Thread> = t.threads.iter().filter(|x| x.cta == th.cta).collect();
        // A `bar.sync` that is the thread's last instruction changes no register: the
        // registers are stored before it, so an execution in which the thread waits there
        // forever still has a final state (see `Lowered::trailing_barriers`).
        let last = th
            .instrs
            .iter()
            .rposition(|i| !matches!(i.node, Instr::Label { .. }));
        let trailing = last.filter(|k| {
            matches!(
                th.instrs[*k].node,
                Instr::Barrier {
                    kind: BarKind::Sync,
                    ..
                }
            )
        });
        let store_regs = |p: &mut String, slot: &mut usize| {
            for r in &regs[i] {
                let _ = writeln!(
                    p,
                    "\tst.global.u32 [{OUT}+{}], {};",
                    *slot * 4,
                    reg_name(tn, r)
                );
                *slot += 1;
            }
        };
        let mut lines = Vec::with_capacity(th.instrs.len());
        for (k, ins) in th.instrs.iter().enumerate() {
            if Some(k) == trailing {
                store_regs(&mut p, &mut slot);
            }
            let first = p.matches('\n').count() as u32 + 1;
            lower_instr(
                file,
                &mut p,
                tn,
                ins,
                &peers,
                &t.init_regs,
                &warp_masks[i],
                &addrs,
            )?;
            let last = p.matches('\n').count() as u32;
            if Some(k) == trailing {
                trailing_barriers.push(last);
            }
            lines.push((first, last));
        }
        instr_lines.push(lines);
        if trailing.is_none() {
            store_regs(&mut p, &mut slot);
        }
        p.push_str("\texit;\n");
    }
    p.push_str("}\n");
    let module =
        fencehound_ptx::parse(&format!("{file}.ptx"), &p).map_err(|e| LitmusError::Lowering {
            file: file.into(),
            message: e.to_string(),
        })?;
    fencehound_vgpu::Device::new()
        .load_module(&module)
        .map_err(|e| LitmusError::Lowering {
            file: file.into(),
            message: e.to_string(),
        })?;
    Ok(Lowered {
        ptx: p,
        module,
        grid: ctas.len() as u32,
        block,
        locations,
        out_slots,
        trailing_barriers,
        instr_lines,
    })
}

/// Where a litmus thread runs: CTA index (0-based, in increasing CTA id), warp of that
/// CTA, lane of that warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub cta: u32,
    pub warp: u32,
    pub lane: u32,
}

/// The slot of every thread (indexed by thread id): threads with the same `warp N` of a
/// CTA share a warp (lanes in thread order), every other thread has a warp of its own;
/// warps are numbered in order of first appearance.
pub fn place(t: &LitmusTest) -> Vec<Slot> {
    let ctas: Vec<u32> = t
        .threads
        .iter()
        .map(|x| x.cta)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Per CTA: the warp keys seen so far (`Some(w)` named warps, `None` a private one).
    let mut warps: Vec<Vec<Option<u32>>> = vec![Vec::new(); ctas.len()];
    let mut lanes: Vec<Vec<u32>> = vec![Vec::new(); ctas.len()];
    let mut out = Vec::with_capacity(t.threads.len());
    for th in &t.threads {
        let ci = ctas.iter().position(|c| *c == th.cta).unwrap_or(0);
        let w = match th.warp {
            Some(n) => match warps[ci].iter().position(|k| *k == Some(n)) {
                Some(i) => i,
                None => {
                    warps[ci].push(Some(n));
                    lanes[ci].push(0);
                    warps[ci].len() - 1
                }
            },
            None => {
                warps[ci].push(None);
                lanes[ci].push(0);
                warps[ci].len() - 1
            }
        };
        let lane = lanes[ci][w];
        lanes[ci][w] += 1;
        out.push(Slot {
            cta: ci as u32,
            warp: w as u32,
            lane,
        });
    }
    out
}

fn set_insert(v: &mut impl FnMut(&Value), r: &str) {
    v(&Value::Reg(r.to_string()))
}

/// A PTX operand for `v`: a register, or the constant moved into scratch `%sN` first.
fn operand(
    p: &mut String,
    t: u32,
    v: &Value,
    scratch: u32,
    file: &str,
    pos: Pos,
) -> Result<String, LitmusError> {
    Ok(match v {
        Value::Reg(r) => reg_name(t, r),
        Value::Const(c) => {
            let c = to_u32(file, pos, *c)?;
            let _ = writeln!(p, "\tmov.b32 %s{scratch}, {c};");
            format!("%s{scratch}")
        }
    })
}

fn sem_scope(
    file: &str,
    pos: Pos,
    mo: Mo,
    scope: Option<Scope>,
    what: &str,
    allowed: &[Mo],
) -> Result<String, LitmusError> {
    if !allowed.contains(&mo) {
        return Err(unsupported(
            file,
            pos,
            format!("`{what}` with `.{}` semantics (no PTX form)", mo.name()),
        ));
    }
    if mo == Mo::Weak {
        return Ok(String::new());
    }
    if mo == Mo::Volatile {
        return Ok(".volatile".into());
    }
    let Some(s) = scope else {
        return Err(unsupported(
            file,
            pos,
            format!("`{what}.{}` without a scope", mo.name()),
        ));
    };
    Ok(format!(".{}.{}", mo.name(), s.name()))
}

/// The barrier resource an instruction uses: `ID` if given, else the instance `C`.
fn resource(id: &Option<Value>, instance: i64) -> Value {
    match id {
        Some(v) => v.clone(),
        None => Value::Const(instance),
    }
}

/// Whether thread `th` writes register `r` anywhere.
fn writes_reg(th: &Thread, r: &str) -> bool {
    th.instrs.iter().any(|i| match &i.node {
        Instr::Load { dst, .. }
        | Instr::Cas { dst, .. }
        | Instr::Move { dst, .. }
        | Instr::Arith { dst, .. } => dst == r,
        Instr::Rmw { dst, .. } => dst.as_deref() == Some(r),
        _ => false,
    })
}

/// The resource of a barrier of thread `th`, with a register that the thread never writes
/// replaced by its initial value (so `bar.cta.sync 1, r2` with `P0:r2=1` is barrier 1).
fn static_resource(
    th: &Thread,
    id: &Option<Value>,
    instance: i64,
    init: &[(u32, String, i64)],
) -> Value {
    match resource(id, instance) {
        Value::Reg(r) if !writes_reg(th, &r) => Value::Const(
            init.iter()
                .rev()
                .find(|(t, n, _)| *t == th.id && *n == r)
                .map_or(0, |(_, _, v)| *v),
        ),
        v => v,
    }
}

/// Threads of the CTA (`peers`) that may arrive at resource `res`: those with a barrier
/// on the same constant resource, or on a register whose value we cannot know here.
fn participants(peers: &[&Thread], res: &Value, init: &[(u32, String, i64)]) -> u32 {
    peers
        .iter()
        .filter(|th| {
            th.instrs.iter().any(|i| match &i.node {
                Instr::Barrier { id, instance, .. } => {
                    match (static_resource(th, id, *instance, init), res) {
                        (Value::Reg(_), _) | (_, Value::Reg(_)) => true,
                        (Value::Const(a), Value::Const(b)) => a == *b,
                    }
                }
                _ => false,
            })
        })
        .count() as u32
}

#[allow(clippy::too_many_arguments)]
fn lower_instr(
    file: &str,
    p: &mut String,
    t: u32,
    ins: &Spanned<Instr>,
    peers: &[&Thread],
    init: &[(u32, String, i64)],
    warp_masks: &BTreeMap<u32, u32>,
    addrs: &BTreeMap<String, String>,
) -> Result<(), LitmusError> {
    let pos = ins.pos;
    let loc_var = |l: &str| addrs.get(l).cloned().unwrap_or_else(|| loc_var(l));
    match &ins.node {
        Instr::Load {
            mo,
            scope,
            dst,
            loc,
        } => {
            let ss = sem_scope(
                file,
                pos,
                *mo,
                *scope,
                "ld",
                &[Mo::Weak, Mo::Volatile, Mo::Relaxed, Mo::Acquire],
            )?;
            let _ = writeln!(
                p,
                "\tld{ss}.global.u32 {}, [{}];",
                reg_name(t, dst),
                loc_var(loc)
            );
        }
        Instr::Store {
            mo,
            scope,
            loc,
            val,
        } => {
            let ss = sem_scope(
                file,
                pos,
                *mo,
                *scope,
                "st",
                &[Mo::Weak, Mo::Volatile, Mo::Relaxed, Mo::Release],
            )?;
            let v = operand(p, t, val, 0, file, pos)?;
            let _ = writeln!(p, "\tst{ss}.global.u32 [{}], {v};", loc_var(loc));
        }
        Instr::Rmw {
            mo,
            scope,
            op,
            dst,
            loc,
            val,
        } => {
            let strong = [Mo::Relaxed, Mo::Acquire, Mo::Release, Mo::AcqRel];
            let ss = sem_scope(
                file,
                pos,
                *mo,
                *scope,
                if dst.is_some() { "atom" } else { "red" },
                &strong,
            )?;
            let mut v = operand(p, t, val, 0, file, pos)?;
            let (pop, ty) = match op {
                RmwOp::Add => ("add", "u32"),
                RmwOp::Sub => {
                    let _ = writeln!(p, "\tneg.s32 %s1, {v};");
                    v = "%s1".into();
                    ("add", "u32")
                }
                RmwOp::And => ("and", "b32"),
                RmwOp::Or => ("or", "b32"),
                RmwOp::Xor => ("xor", "b32"),
                RmwOp::Min => ("min", "s32"),
                RmwOp::Max => ("max", "s32"),
                RmwOp::Inc => ("inc", "u32"),
                RmwOp::Dec => ("dec", "u32"),
                RmwOp::Exch => ("exch", "b32"),
            };
            let as_red =
                dst.is_none() && matches!(mo, Mo::Relaxed | Mo::Release) && *op != RmwOp::Exch;
            if as_red {
                let _ = writeln!(p, "\tred{ss}.global.{pop}.{ty} [{}], {v};", loc_var(loc));
            } else {
                let d = dst.as_ref().map_or("%s3".to_string(), |d| reg_name(t, d));
                let _ = writeln!(
                    p,
                    "\tatom{ss}.global.{pop}.{ty} {d}, [{}], {v};",
                    loc_var(loc)
                );
            }
        }
        Instr::Cas {
            mo,
            scope,
            dst,
            loc,
            expected,
            new,
        } => {
            let strong = [Mo::Relaxed, Mo::Acquire, Mo::Release, Mo::AcqRel];
            let ss = sem_scope(file, pos, *mo, *scope, "atom", &strong)?;
            let e = operand(p, t, expected, 0, file, pos)?;
            let n = operand(p, t, new, 1, file, pos)?;
            let _ = writeln!(
                p,
                "\tatom{ss}.global.cas.b32 {}, [{}], {e}, {n};",
                reg_name(t, dst),
                loc_var(loc)
            );
        }
        Instr::Fence { mo, scope } => {
            if !matches!(mo, Mo::Sc | Mo::AcqRel) {
                return Err(unsupported(
                    file,
                    pos,
                    format!(
                        "`fence.{}` (PTX 7.5 has fence.sc and fence.acq_rel)",
                        mo.name()
                    ),
                ));
            }
            let _ = writeln!(p, "\tfence.{}.{};", mo.name(), scope.name());
        }
        Instr::Barrier {
            kind,
            instance,
            id,
            quorum,
        } => {
            let me = peers.iter().find(|th| th.id == t);
            let res = match me {
                Some(th) => static_resource(th, id, *instance, init),
                None => resource(id, *instance),
            };
            let a = match &res {
                Value::Const(c) if (0..16).contains(c) => c.to_string(),
                Value::Const(c) => {
                    return Err(unsupported(
                        file,
                        pos,
                        format!("barrier {c} (PTX has barriers 0..15)"),
                    ))
                }
                Value::Reg(r) => reg_name(t, r),
            };
            let count = match quorum {
                Some(Value::Const(q)) if (1..=32).contains(q) => Some((32 * q).to_string()),
                Some(Value::Const(q)) => {
                    return Err(unsupported(
                        file,
                        pos,
                        format!("barrier quorum {q} (1..32 threads)"),
                    ))
                }
                Some(Value::Reg(r)) => {
                    let _ = writeln!(p, "\tmul.lo.u32 %s2, {}, 32;", reg_name(t, r));
                    Some("%s2".to_string())
                }
                None => Some((32 * participants(peers, &res, init).max(1)).to_string()),
            };
            let op = match kind {
                BarKind::Sync => "bar.sync",
                BarKind::Arrive => "bar.arrive",
            };
            match count {
                Some(c) => {
                    let _ = writeln!(p, "\t{op} {a}, {c};");
                }
                None => {
                    let _ = writeln!(p, "\t{op} {a};");
                }
            }
        }
        Instr::Move { dst, val } => {
            let v = match val {
                Value::Reg(r) => reg_name(t, r),
                Value::Const(c) => to_u32(file, pos, *c)?.to_string(),
            };
            let _ = writeln!(p, "\tmov.b32 {}, {v};", reg_name(t, dst));
        }
        Instr::Arith { op, dst, a, b } => {
            let x = operand(p, t, a, 0, file, pos)?;
            let y = operand(p, t, b, 1, file, pos)?;
            let ins = match op {
                ArithOp::Add => "add.s32",
                ArithOp::Sub => "sub.s32",
                ArithOp::Mul => "mul.lo.s32",
                ArithOp::Div => "div.s32",
                ArithOp::And => "and.b32",
                ArithOp::Or => "or.b32",
                ArithOp::Xor => "xor.b32",
            };
            let _ = writeln!(p, "\t{ins} {}, {x}, {y};", reg_name(t, dst));
        }
        Instr::Branch { eq, a, b, label } => {
            let x = operand(p, t, a, 0, file, pos)?;
            let y = operand(p, t, b, 1, file, pos)?;
            let cmp = if *eq { "eq" } else { "ne" };
            let _ = writeln!(
                p,
                "\tsetp.{cmp}.s32 %p1, {x}, {y};\n\t@%p1 bra $L{t}_{label};"
            );
        }
        Instr::Goto { label } => {
            let _ = writeln!(p, "\tbra $L{t}_{label};");
        }
        Instr::WarpSync { group } => {
            let mask = warp_masks.get(group).copied().unwrap_or(0);
            let _ = writeln!(p, "\tbar.warp.sync {mask:#010x};");
        }
        Instr::Label { name } => {
            let _ = writeln!(p, "$L{t}_{name}:");
        }
    }
    Ok(())
}
