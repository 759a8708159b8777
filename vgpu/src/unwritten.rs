//! Loads of memory that no thread of the launch writes need no scheduling decision
//! (issue 24: scheduling points only where an interleaving can change an outcome).
//!
//! # The argument
//!
//! The scheduler chooses a warp before every global or shared access (see `exec`). A
//! choice before a load `L` of warp `w` matters only because another warp may run first
//! and change what `L` reads, or observe something `w` does before `L` — but `L` changes
//! nothing another warp can see (a load writes no memory, and the models' bookkeeping of a
//! read depends only on the write it reads from). If no thread of the launch writes the
//! bytes `L` reads, every write `L` can read from is the one the launch started with,
//! whatever runs between `w`'s previous instruction and `L`. So the execution in which the
//! scheduler is *not* asked before `L` (w simply goes on) is the execution in which it was
//! asked and picked `w` again; and any execution in which it picked another warp `v` first
//! gives the same values to every thread as one in which `L` runs first and `v` right after:
//! `L` commutes with everything `v` does. Dropping the decision removes interleavings that
//! differ only in where `L` falls among actions it commutes with: no outcome of any model
//! is lost, and every execution is still one the full scheduler could produce (no outcome
//! is added). Replay is unaffected: the decisions that remain are a function of the seed.
//!
//! # What "no thread writes" rests on
//!
//! The future writes of a launch are not known when a load runs, so they are bounded
//! before it starts: [`kernel_writes`] follows, through the kernel's code and the
//! functions it calls, where each global write's address comes from (flow-insensitively:
//! a register's *roots* are everything any write of it in the function could carry). An
//! address computed from kernel-parameter words and constants writes into the
//! allocations those words point into (the launch looks them up); one loaded from memory,
//! passed through a `.param` frame, or reached by an indirect call could be anywhere, and
//! then nothing is reduced. At run time a load skips its decision only when every lane's
//! bytes lie outside those allocations (or in `.const` memory), checked lane by lane.
//!
//! The bound assumes what CUDA C++ requires: pointer arithmetic stays inside the
//! allocation the pointer came from (global allocations are separated by unmapped gaps, so
//! small overruns fault anyway). A write that lands outside the bound anyway is caught
//! ([`crate::memory::Memory`]'s write guard): the bound grows by that allocation from then
//! on and the launch counts an *escape* ([`crate::ExecStats::unwritten_escapes`]). Loads
//! that skipped their decision before the escape are still part of a schedule the full
//! scheduler could produce; only interleavings of that undefined-behaviour write with
//! them may have been missed.
//!
//! # The models skip such loads too
//!
//! The same bound lets a weak load skip the hooks ([`crate::Hooks::unwritten_loads`]):
//! with no write to its bytes in the launch, a write-buffer model has no entry to forward
//! or drain, the `weak` model no older value to offer and no message to deliver, and the
//! race check no write for the read to race with — `load` would only read memory. This
//! changes no decision and no value (the interpreter reads what `load` would have), so it
//! holds in every launch whose hooks agree, not only where decisions are reduced. A model
//! that keeps a store in a buffer would make an escaping write known only when it drains,
//! while its own thread may already load the bytes: so the interpreter holds every store
//! and atomic to the guard *before* handing it to hooks that are not transparent.
//!
//! Shared memory has its own form of "no write reaches the load unordered": a CTA
//! interval (see below) in which no thread of the CTA has written shared memory since the
//! barrier that began it, and none can before the barrier that ends it, with every thread
//! settled. Every write to the CTA's shared memory is then ordered before the load or after
//! it by `bar.sync`: the load reads the newest value and races with nothing. The guard
//! keeps a flag per CTA, set by every shared write (at the store, before a model's buffer)
//! and cleared when a barrier of the whole CTA releases. (Tiled kernels: matmul's inner
//! product reads only tiles written before the barrier.)
//!
//! # Shared memory between barriers
//!
//! A CTA's shared memory is written in nearly every kernel that uses it, so a bound for the
//! whole launch says nothing there; what a tiled kernel's loads have instead is an
//! *interval*: stores, `bar.sync 0`, then only loads until the next barrier. Once no
//! thread of the CTA can write shared memory before the next barrier releases, and none
//! has a store that could still become visible later (`Hooks::settled`: always under
//! `sc`; under the write-buffer models once the CTA's buffers are empty, as after a
//! barrier), a shared load needs no decision either ([`shared_quiet`] has the argument and
//! the static part: for each instruction, whether a shared write is reachable from it
//! without passing a barrier). Only kernels whose barriers are all the whole CTA's take
//! part (no named barriers or counts, no calls).

use crate::memory::{window_of, Heap, Window};
use crate::program::{Addr, AddrBase, BarKind, Inst, MemSpace, Op, ParamLoc, Program, Src};

/// Bits 0..WORDS: kernel-parameter words (bit k: bytes `8k..8k+8` of the parameter buffer).
const WORDS: u32 = 120;
const WORD_MASK: u128 = (1u128 << WORDS) - 1;
/// A value that may come from anywhere (memory, a frame `.param`, the caller).
const ANY: u128 = 1 << 120;
/// A local-memory address (the frame's `__local_depot`, `cvta.local`).
const LOCAL: u128 = 1 << 121;
/// A shared-memory address (`cvta.shared`).
const SHARED: u128 = 1 << 122;

/// Where a kernel's global writes may land, before its parameters are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writes {
    /// Some write's address cannot be traced: any global location.
    Anywhere,
    /// Every write's address comes from one of these: the parameter words of a mask
    /// (and constants), or an absolute address.
    From(Vec<Target>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Words(u128),
    Abs(u64),
}

impl Writes {
    /// `From` the distinct targets.
    fn from(mut targets: Vec<Target>) -> Writes {
        targets.sort_unstable();
        targets.dedup();
        Writes::From(targets)
    }
}

/// The parameter words of `len` bytes at kernel-parameter offset `off`.
fn words(off: u64, len: u64) -> u128 {
    let first = off / 8;
    let last = (off + len.max(1) - 1) / 8;
    if last >= WORDS as u64 {
        return ANY;
    }
    let mut m = 0u128;
    for k in first..=last {
        m |= 1 << k;
    }
    m
}

fn src_roots(s: &Src, roots: &[u128]) -> u128 {
    match s {
        Src::Reg(r) | Src::NotReg(r) => roots.get(*r as usize).copied().unwrap_or(ANY),
        Src::LocalAddr(_) => LOCAL,
        Src::Imm(_) | Src::Special(..) => 0,
    }
}

/// A value a load of at most 4 bytes produced: an integer, never a global or generic
/// address (those are 64-bit, and global allocations lie above 2^32) — unless two of them
/// are packed into one 64-bit register.
const NARROW: u128 = 1 << 123;

/// What one function's global writes may address, from its instructions as decoded
/// (before register slots are shared: the analysis is flow-insensitive, so it wants PTX's
/// nearly single-assignment virtual registers) with `nregs` slots. Only a kernel reads
/// kernel-parameter words; a device function's `.reg` parameters and every value a call
/// returns may be anything.
pub(crate) fn function_writes(
    insts: &[Inst],
    kernel: bool,
    nregs: usize,
    params: &[ParamLoc],
) -> Writes {
    let mut roots = vec![0u128; nregs.max(1)];
    if !kernel {
        for p in params {
            if let ParamLoc::Reg(s) = p {
                if let Some(r) = roots.get_mut(*s as usize) {
                    *r = ANY;
                }
            }
        }
    }
    // Each instruction's slots, found once (`uses_defs` copies the instruction).
    let slots: Vec<(Vec<u32>, Vec<u32>)> = insts
        .iter()
        .map(|inst| {
            let (mut uses, mut defs) = (Vec::new(), Vec::new());
            crate::regalloc::uses_defs(inst, &mut uses, &mut defs);
            (uses, defs)
        })
        .collect();
    // Roots only grow: iterate to a fixed point.
    loop {
        let mut changed = false;
        for (inst, (uses, defs)) in insts.iter().zip(&slots) {
            let of = |u: &u32| roots.get(*u as usize).copied().unwrap_or(ANY);
            let from: u128 = match &inst.op {
                Op::Ld {
                    space: MemSpace::KernelParam,
                    addr:
                        Addr {
                            base: AddrBase::Abs(o),
                            offset,
                        },
                    size,
                    ds,
                    ..
                } if kernel => words(
                    o.wrapping_add(*offset as u64),
                    *size as u64 * ds.len() as u64,
                ),
                Op::Ld { size, .. } | Op::Atom { size, .. } | Op::AtomVec { size, .. } => {
                    if *size <= 4 {
                        NARROW
                    } else {
                        ANY
                    }
                }
                // Matrix fragments: 32-bit registers of data.
                Op::WmmaLoad { .. } | Op::Ldmatrix { .. } => NARROW,
                // What a call returns (the rest of its `uses_defs` defs).
                Op::Call { .. } | Op::CallIndirect { .. } => ANY,
                Op::Pack { parts, .. } => {
                    let r = parts.iter().fold(0, |r, a| r | src_roots(a, &roots));
                    if r & NARROW != 0 {
                        r | ANY
                    } else {
                        r
                    }
                }
                op => {
                    let mut r = uses.iter().fold(0, |r, u| r | of(u));
                    match op {
                        Op::Mov { a, .. } | Op::Unpack { a, .. } => r |= src_roots(a, &roots),
                        Op::Movs { pairs } => {
                            for (_, a) in pairs {
                                r |= src_roots(a, &roots);
                            }
                        }
                        Op::Cvta { space, .. } => match space {
                            MemSpace::Shared => r |= SHARED,
                            MemSpace::Local => r |= LOCAL,
                            MemSpace::Global => {}
                            _ => r |= ANY,
                        },
                        _ => {}
                    }
                    r
                }
            };
            for d in defs {
                if let Some(x) = roots.get_mut(*d as usize) {
                    if *x | from != *x {
                        *x |= from;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut targets = Vec::new();
    for inst in insts {
        // A surface store writes the array behind a handle, which no pointer names.
        if let Op::Sust { .. } = inst.op {
            return Writes::Anywhere;
        }
        let (space, addr) = match &inst.op {
            Op::St { space, addr, .. }
            | Op::Atom { space, addr, .. }
            | Op::AtomVec { space, addr, .. }
            | Op::WmmaStore { space, addr, .. } => (*space, *addr),
            _ => continue,
        };
        if !matches!(space, MemSpace::Global | MemSpace::Generic) {
            continue;
        }
        match addr.base {
            AddrBase::Abs(a) => {
                let a = a.wrapping_add(addr.offset as u64);
                match window_of(a) {
                    Some((w, _)) if w != Window::Global && space == MemSpace::Generic => {}
                    _ => targets.push(Target::Abs(a)),
                }
            }
            AddrBase::Frame(_) => {}
            AddrBase::Reg(s) => {
                let r = roots.get(s as usize).copied().unwrap_or(ANY);
                if r & ANY != 0 {
                    return Writes::Anywhere;
                }
                if space == MemSpace::Generic && r & WORD_MASK == 0 && r & (LOCAL | SHARED) != 0 {
                    continue;
                }
                targets.push(Target::Words(r & WORD_MASK));
            }
        }
    }
    Writes::from(targets)
}

/// The bound on kernel `func`'s global writes: its own and those of every function it
/// can call (see the module docs).
pub(crate) fn kernel_writes(prog: &Program, func: u32) -> Writes {
    let mut reach = vec![false; prog.funcs.len()];
    let mut todo = vec![func as usize];
    let mut targets = Vec::new();
    while let Some(f) = todo.pop() {
        if std::mem::replace(&mut reach[f], true) {
            continue;
        }
        let Some(fu) = prog.funcs.get(f) else {
            return Writes::Anywhere;
        };
        match &fu.writes {
            Writes::Anywhere => return Writes::Anywhere,
            Writes::From(t) => targets.extend_from_slice(t),
        }
        for inst in prog
            .insts
            .get(fu.entry as usize..fu.end as usize)
            .unwrap_or(&[])
        {
            match &inst.op {
                Op::Call { callee, .. } => todo.push(*callee as usize),
                Op::CallIndirect { .. } => return Writes::Anywhere,
                _ => {}
            }
        }
    }
    Writes::from(targets)
}

/// The global byte ranges `[start, end)` a launch with parameter buffer `params` may
/// write, sorted and merged; `None` when they cannot be bounded.
pub(crate) fn written_ranges(
    writes: &Writes,
    params: &[u8],
    heap: &Heap,
    globals: &[(String, u64, u64, bool)],
) -> Option<Vec<(u64, u64)>> {
    let Writes::From(targets) = writes else {
        return None;
    };
    let mut out: Vec<(u64, u64)> = Vec::new();
    let holder = |a: u64| heap.holding(a).map(|x| x.range());
    for t in targets {
        let before = out.len();
        match *t {
            Target::Abs(a) => out.extend(holder(a)),
            Target::Words(m) => {
                for k in 0..WORDS as usize {
                    if m >> k & 1 == 0 {
                        continue;
                    }
                    let mut b = [0u8; 8];
                    for (i, x) in b.iter_mut().enumerate() {
                        *x = params.get(8 * k + i).copied().unwrap_or(0);
                    }
                    let v = u64::from_le_bytes(b);
                    // A pointer into an allocation, or one past its end.
                    out.extend(holder(v));
                    out.extend(holder(v.wrapping_sub(1)));
                }
            }
        }
        if out.len() == before {
            // Constants and integers only: a module variable's address, or garbage.
            out.extend(
                globals
                    .iter()
                    .filter(|g| !g.3)
                    .map(|g| (g.1, g.1.saturating_add(g.2))),
            );
        }
    }
    out.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(out.len());
    for (s, e) in out {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    Some(merged)
}

/// Shared memory between CTA barriers, for loads that need no decision under plain
/// memory (see [`SharedQuiet`]).
#[derive(Debug, Clone, Default)]
pub struct SharedQuiet {
    /// Per instruction: a write that may reach shared memory can run from here (this
    /// instruction included) before the thread next waits at a CTA barrier.
    pub(crate) may_write: Vec<bool>,
    /// Per function: a kernel whose barriers are all `bar.sync 0` / `bar.red` of the whole
    /// CTA (no named barriers, thread counts, `bar.arrive`), that calls no function and
    /// makes no asynchronous copy and no `mbarrier` operation.
    pub(crate) eligible: Vec<bool>,
}

/// Whether `op` may write shared memory (any access that may resolve there, and the
/// asynchronous copies and `mbarrier` objects that live there).
fn writes_shared(op: &Op) -> bool {
    match op {
        Op::St { space, .. }
        | Op::Atom { space, .. }
        | Op::AtomVec { space, .. }
        | Op::WmmaStore { space, .. } => matches!(space, MemSpace::Shared | MemSpace::Generic),
        Op::CpAsync { .. }
        | Op::CpAsyncWait { .. }
        | Op::BulkCopy { .. }
        | Op::Mbar { .. }
        | Op::Call { .. }
        | Op::CallIndirect { .. } => true,
        _ => false,
    }
}

/// A barrier every thread of the CTA waits at (an interval of the CTA ends there).
fn full_barrier(op: &Op) -> Option<bool> {
    match op {
        Op::Bar {
            kind, id, count, ..
        } => Some(*kind != BarKind::Arrive && count.is_none() && matches!(id, Src::Imm(0))),
        _ => None,
    }
}

/// [`SharedQuiet`] of every function of `prog`.
///
/// # Why a shared load may then skip its decision
///
/// While the CTA's threads are settled (`Hooks::settled`: nothing they stored is
/// buffered, every write of theirs is visible already, their loads read memory) a load of
/// shared memory reads what the CTA's writes so far left there. If no thread of the CTA can write shared memory again before the CTA's next
/// barrier completes — every thread that has not exited is waiting at the barrier or at
/// an instruction from which no shared write is reachable without passing a barrier —
/// then nothing any warp does until that barrier changes what the load reads (other CTAs
/// cannot reach this CTA's shared memory), and the argument of the module docs applies.
/// Within one interval a thread only moves forward through code whose reachable writes
/// are a subset of what it could reach before, so once the whole CTA is past its writes
/// it stays so until the barrier releases: the interpreter keeps that per CTA and forgets
/// it at each release.
pub(crate) fn shared_quiet(prog: &Program) -> SharedQuiet {
    let mut may_write = vec![true; prog.insts.len()];
    let mut eligible = vec![false; prog.funcs.len()];
    let mut succ = Vec::new();
    for (f, fu) in prog.funcs.iter().enumerate() {
        let (entry, end) = (fu.entry as usize, (fu.end as usize).min(prog.insts.len()));
        let Some(insts) = prog.insts.get(entry..end) else {
            continue;
        };
        let n = insts.len();
        let mut w: Vec<bool> = insts
            .iter()
            .map(|i| writes_shared(&i.op) || (!fu.is_kernel && matches!(i.op, Op::Ret)))
            .collect();
        // Backwards to a fixed point: a write reachable without passing a barrier.
        loop {
            let mut changed = false;
            for i in (0..n).rev() {
                if w[i] || full_barrier(&insts[i].op) == Some(true) {
                    continue;
                }
                crate::regalloc::successors(&insts[i], i, n, fu.entry, &mut succ);
                if matches!(insts[i].op, Op::Brx { .. })
                    || succ.iter().any(|&s| w[s])
                    || (succ.is_empty() && !matches!(insts[i].op, Op::Exit | Op::Ret | Op::Trap))
                {
                    w[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        may_write[entry..end].copy_from_slice(&w);
        // Asynchronous copies may land at a later wait or when the thread exits, and
        // `mbarrier` phases are not CTA intervals: such kernels do not take part.
        eligible[f] = fu.is_kernel
            && insts.iter().all(|i| {
                full_barrier(&i.op) != Some(false)
                    && !matches!(
                        i.op,
                        Op::Call { .. }
                            | Op::CallIndirect { .. }
                            | Op::CpAsync { .. }
                            | Op::CpAsyncWait { .. }
                            | Op::BulkCopy { .. }
                            | Op::Mbar { .. }
                    )
            });
    }
    SharedQuiet {
        may_write,
        eligible,
    }
}
