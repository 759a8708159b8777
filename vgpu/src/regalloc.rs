//! Register slots by liveness: two PTX virtual registers that are never live at the same
//! time share one slot.
//!
//! PTX from NVRTC names a fresh virtual register for nearly every value (`%r1` … `%r66`,
//! `%rd1` …), and the interpreter kept one 8-byte slot per name for every lane of every
//! warp. A launch of a million threads of a 66-register stencil held 528 MB of register
//! slots, zeroed at launch: a third of that launch's time was the page faults and the
//! memset of `Machine::new`. A warp's registers are also what a parking probe copies and
//! what the livelock detector hashes (a CUB kernel has hundreds per lane). Here, after a
//! function is decoded, its slots are renumbered so that most names share slots with
//! others, by the textbook method:
//!
//! 1. **Liveness** per instruction, backwards over the function's control-flow graph to a
//!    fixed point (successors: the next instruction, branch targets, none after `ret`,
//!    `exit` and `trap`). A write *kills* (ends the liveness above it) only when every lane
//!    that executes the instruction writes the slot: not under a guard predicate, whose
//!    false lanes keep the old value.
//! 2. **Interference**: a slot written by an instruction — guarded or not — interferes
//!    with every slot live after it (Chaitin's rule).
//! 3. **Colouring**, greedy in slot order (declaration order, which follows the program
//!    nearly in order): each slot takes the lowest slot number none of its neighbours has.
//!
//! Why the values are the same, lane by lane: a lane reads slot `s` only where `s` is live,
//! and between the write (or the frame's start) that gave `s` its value and that read, no
//! other name sharing the slot is written — such a write would be an interference. What a
//! lane observes therefore does not change; the slot numbers are invisible outside the
//! warp (the parking and livelock comparisons see fewer stale words, never a different
//! live value).
//!
//! **Slots that keep their own number or their own slot** (*pinned*): slot 0 (`CC.CF`,
//! read and written implicitly by the carry instructions) and a device function's `.reg`
//! parameters and return values (slots 1…, which a caller's `call` fills and reads by
//! number) keep their numbers; vector registers (`.reg .v4`, consecutive slots) and every
//! slot another lane reads or writes — the source of `shfl` (a lane may read from a lane
//! that is not taking part, whose slot then holds whatever that lane left there), the
//! operands of `mma` and `ldmatrix`, the result of `bar.red` — get a slot of their own, so
//! what another lane finds there is what it found before.
//!
//! One observable difference is left, in code that reads a register nothing has written:
//! a kernel's slots start at zero, as before (an unwritten name interferes with everything
//! written while it is live, so its slot is still zero when it is read), but a device
//! function's frame starts with what the previous call left in that part of the warp's
//! register file, as it did before — with slots laid out differently, that leftover is a
//! different value. Both are garbage (PTX leaves such a read undefined).
//!
//! Functions whose liveness would not fit in [`MAX_BITS`] bits are left as they are.

use crate::alu::{Tag, NO_SLOT};
use crate::operand::{Slot, Src};
use crate::program::{AddrBase, CallArg, CallRet, Inst, Op};

/// The most liveness bits (slots × instructions, and slots², each) a function may need
/// before it is left uncompacted: 64 Mi bits, 8 MiB per table.
const MAX_BITS: u64 = 1 << 26;

/// How an instruction touches a slot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Use,
    Def,
    /// Read or written by other lanes than the one executing: keeps a slot of its own.
    CrossUse,
    CrossDef,
}

impl Role {
    fn is_use(self) -> bool {
        matches!(self, Role::Use | Role::CrossUse)
    }
    fn cross(self) -> bool {
        matches!(self, Role::CrossUse | Role::CrossDef)
    }
}

fn src(s: &mut Src, role: Role, f: &mut impl FnMut(&mut Slot, Role)) {
    match s {
        Src::Reg(r) | Src::NotReg(r) => f(r, role),
        Src::Imm(_) | Src::Special(..) | Src::LocalAddr(_) => {}
    }
}

fn addr(a: &mut AddrBase, role: Role, f: &mut impl FnMut(&mut Slot, Role)) {
    if let AddrBase::Reg(r) = a {
        f(r, role);
    }
}

fn def(d: &mut Slot, role: Role, f: &mut impl FnMut(&mut Slot, Role)) {
    if *d != NO_SLOT {
        f(d, role);
    }
}

/// Calls `f` on every slot of this function's frame that `inst` names, with its role:
/// uses before definitions. Exhaustive over [`Op`] (no wildcard arm), so a new
/// instruction cannot be missed: a slot not visited here would be renumbered wrongly.
/// A `call`'s callee-side slots (`CallArg::Reg::to`, `CallRet::Reg::from`) are the
/// callee's, not visited (they are pinned in the callee and keep their numbers).
fn visit(inst: &mut Inst, f: &mut impl FnMut(&mut Slot, Role)) {
    use Role::*;
    if let Some((p, _)) = &mut inst.guard {
        f(p, Use);
    }
    match &mut inst.op {
        Op::Alu(a) => {
            for i in 0..4 {
                if matches!(a.tag[i], Tag::Reg | Tag::NotReg) {
                    let mut s = a.src[i] as Slot;
                    f(&mut s, Use);
                    a.src[i] = s as u64;
                }
            }
            def(&mut a.d, Def, f);
            def(&mut a.d2, Def, f);
        }
        Op::Mov { d, a } => {
            src(a, Use, f);
            f(d, Def);
        }
        Op::Movs { pairs } => {
            for (_, a) in pairs.iter_mut() {
                src(a, Use, f);
            }
            for (d, _) in pairs.iter_mut() {
                f(d, Def);
            }
        }
        Op::Pack { d, parts, .. } => {
            for p in parts.iter_mut() {
                src(p, Use, f);
            }
            f(d, Def);
        }
        Op::Unpack { ds, a, .. } => {
            src(a, Use, f);
            for d in ds.iter_mut().flatten() {
                f(d, Def);
            }
        }
        Op::Ld { ds, addr: a, .. } => {
            addr(&mut a.base, Use, f);
            for d in ds.iter_mut().flatten() {
                f(d, Def);
            }
        }
        Op::St { addr: a, vals, .. } => {
            addr(&mut a.base, Use, f);
            for v in vals.iter_mut() {
                src(v, Use, f);
            }
        }
        Op::Atom {
            d, addr: a, b, c, ..
        } => {
            addr(&mut a.base, Use, f);
            src(b, Use, f);
            if let Some(c) = c {
                src(c, Use, f);
            }
            if let Some(d) = d {
                f(d, Def);
            }
        }
        Op::AtomVec {
            ds, addr: a, bs, ..
        } => {
            addr(&mut a.base, Use, f);
            for b in bs.iter_mut() {
                src(b, Use, f);
            }
            for d in ds.iter_mut().flatten() {
                f(d, Def);
            }
        }
        Op::Cvta { d, a, .. } | Op::Isspacep { d, a, .. } => {
            src(a, Use, f);
            f(d, Def);
        }
        Op::Bra { .. } => {}
        Op::Brx { index, .. } => src(index, Use, f),
        Op::CallIndirect { target, .. } => src(target, Use, f),
        Op::Call { args, rets, .. } => {
            for a in args.iter_mut() {
                match a {
                    CallArg::Reg { value, .. } => src(value, Use, f),
                    CallArg::Frame { .. } => {}
                }
            }
            for r in rets.iter_mut() {
                match r {
                    CallRet::Reg { to, .. } => f(to, Def),
                    CallRet::Frame { .. } => {}
                }
            }
        }
        Op::Vprintf { .. } | Op::AssertFail { .. } | Op::DevMalloc { .. } | Op::DevFree { .. } => {}
        Op::Ret | Op::Exit | Op::Trap | Op::Brkpt => {}
        Op::Bar {
            id, count, d, pred, ..
        } => {
            src(id, Use, f);
            if let Some(c) = count {
                src(c, Use, f);
            }
            if let Some(p) = pred {
                src(p, Use, f);
            }
            if let Some(d) = d {
                f(d, CrossDef);
            }
        }
        Op::WarpSync { mask } => src(mask, Use, f),
        Op::Fence { .. } => {}
        Op::Shfl {
            d,
            p,
            a,
            b,
            c,
            mask,
            ..
        } => {
            src(a, CrossUse, f);
            src(b, Use, f);
            src(c, Use, f);
            src(mask, Use, f);
            f(d, Def);
            if let Some(p) = p {
                f(p, Def);
            }
        }
        Op::Vote { d, a, mask, .. } | Op::Redux { d, a, mask, .. } => {
            src(a, Use, f);
            src(mask, Use, f);
            f(d, Def);
        }
        Op::Match { d, p, a, mask, .. } => {
            src(a, Use, f);
            src(mask, Use, f);
            f(d, Def);
            if let Some(p) = p {
                f(p, Def);
            }
        }
        Op::Activemask { d } => f(d, Def),
        Op::Suld {
            ds, surf, coords, ..
        } => {
            src(surf, Use, f);
            for c in coords.iter_mut() {
                src(c, Use, f);
            }
            for d in ds.iter_mut().flatten() {
                f(d, Def);
            }
        }
        Op::Sust {
            surf, coords, vals, ..
        } => {
            src(surf, Use, f);
            for c in coords.iter_mut().chain(vals.iter_mut()) {
                src(c, Use, f);
            }
        }
        Op::Tex {
            ds, tex, coords, ..
        } => {
            src(tex, Use, f);
            for c in coords.iter_mut() {
                src(c, Use, f);
            }
            for d in ds.iter_mut().flatten() {
                f(d, Def);
            }
        }
        Op::Ldmatrix { ds, addr: a, .. } => {
            addr(&mut a.base, CrossUse, f);
            for d in ds.iter_mut() {
                f(d, CrossDef);
            }
        }
        Op::WmmaLoad {
            ds,
            addr: a,
            stride,
            ..
        } => {
            addr(&mut a.base, CrossUse, f);
            if let Some(s) = stride {
                src(s, CrossUse, f);
            }
            for d in ds.iter_mut() {
                f(d, CrossDef);
            }
        }
        Op::WmmaStore {
            vals,
            addr: a,
            stride,
            ..
        } => {
            addr(&mut a.base, CrossUse, f);
            for s in vals.iter_mut().chain(stride.iter_mut()) {
                src(s, CrossUse, f);
            }
        }
        Op::Mma { d, a, b, c, .. } | Op::WmmaMma { d, a, b, c, .. } => {
            for s in a.iter_mut().chain(b.iter_mut()).chain(c.iter_mut()) {
                src(s, CrossUse, f);
            }
            for d in d.iter_mut() {
                f(d, CrossDef);
            }
        }
        Op::CpAsync {
            dst,
            src: s,
            src_size,
            ignore_src,
            ..
        } => {
            addr(&mut dst.base, Use, f);
            addr(&mut s.base, Use, f);
            if let Some(v) = src_size {
                src(v, Use, f);
            }
            if let Some(v) = ignore_src {
                src(v, Use, f);
            }
        }
        Op::BulkCopy {
            dst,
            src: s,
            size,
            mbar,
        } => {
            addr(&mut dst.base, Use, f);
            addr(&mut s.base, Use, f);
            addr(&mut mbar.base, Use, f);
            src(size, Use, f);
        }
        Op::Elect { d, p, mask } => {
            src(mask, Use, f);
            if let Some(d) = d {
                f(d, Def);
            }
            if let Some(p) = p {
                f(p, Def);
            }
        }
        Op::Mbar { addr: a, d, b, .. } => {
            addr(&mut a.base, Use, f);
            if let Some(b) = b {
                src(b, Use, f);
            }
            if let Some(d) = d {
                f(d, Def);
            }
        }
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } | Op::Nanosleep | Op::Nop => {}
    }
}

/// Successors of instruction `i` (function-relative) among `n`; `out` is cleared first.
pub(crate) fn successors(inst: &Inst, i: usize, n: usize, entry: u32, out: &mut Vec<usize>) {
    out.clear();
    let guarded = inst.guard.is_some();
    let rel = |pc: u32| pc.checked_sub(entry).map(|p| p as usize).filter(|&p| p < n);
    let next = (i + 1 < n).then_some(i + 1);
    match &inst.op {
        Op::Bra { target } => {
            out.extend(rel(*target));
            if guarded {
                out.extend(next);
            }
        }
        Op::Brx { targets, .. } => {
            out.extend(targets.iter().filter_map(|&t| rel(t)));
            if guarded {
                out.extend(next);
            }
        }
        Op::Ret | Op::Exit | Op::Trap => {
            if guarded {
                out.extend(next);
            }
        }
        _ => out.extend(next),
    }
}

struct Bits {
    words: usize,
    v: Vec<u64>,
}

impl Bits {
    fn new(rows: usize, bits: usize) -> Bits {
        let words = bits.div_ceil(64);
        Bits {
            words,
            v: vec![0; rows * words],
        }
    }
    fn row(&self, r: usize) -> &[u64] {
        &self.v[r * self.words..(r + 1) * self.words]
    }
    fn row_mut(&mut self, r: usize) -> &mut [u64] {
        &mut self.v[r * self.words..(r + 1) * self.words]
    }
    fn set(&mut self, r: usize, b: usize) {
        self.v[r * self.words + b / 64] |= 1 << (b % 64);
    }
}

fn ones(row: &[u64]) -> impl Iterator<Item = usize> + '_ {
    row.iter().enumerate().flat_map(|(w, &x)| {
        let mut m = x;
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                w * 64 + b
            })
        })
    })
}

/// Renumbers the slots of one decoded function, `insts` (its instructions, the first at
/// pc `entry`), which has `nregs` slots of which `[0, fixed)` keep their numbers and the
/// slots in `pinned` keep a slot of their own; returns the new number of slots.
pub(crate) fn compact(
    insts: &mut [Inst],
    entry: u32,
    nregs: u32,
    fixed: u32,
    pinned: &[Slot],
) -> u32 {
    let n = insts.len();
    let r = nregs as usize;
    if n == 0 || r as u64 * n as u64 > MAX_BITS || r as u64 * r as u64 > MAX_BITS || fixed > nregs {
        return nregs;
    }
    // Per instruction: the slots it uses, the slots it kills, the slots it defines.
    let mut uses = Bits::new(n, r);
    let mut kills = Bits::new(n, r);
    let mut defs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut referenced = vec![false; r];
    let mut own = vec![false; r];
    for &p in pinned {
        if let Some(o) = own.get_mut(p as usize) {
            *o = true;
        }
    }
    let mut bad = false;
    for (i, inst) in insts.iter_mut().enumerate() {
        let guarded = inst.guard.is_some();
        visit(inst, &mut |s, role| {
            let s = *s as usize;
            if s >= r {
                bad = true;
                return;
            }
            referenced[s] = true;
            if role.cross() {
                own[s] = true;
            }
            if role.is_use() {
                uses.set(i, s);
            } else {
                defs[i].push(s);
                if !guarded {
                    kills.set(i, s);
                }
            }
        });
    }
    if bad {
        return nregs;
    }
    // Liveness: live_in[i] = uses[i] | (live_out[i] & !kills[i]), to a fixed point.
    let mut live_in = Bits::new(n, r);
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut tmp = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        successors(inst, i, n, entry, &mut tmp);
        succ.push(tmp.clone());
    }
    let words = live_in.words;
    let mut out = vec![0u64; words];
    loop {
        let mut changed = false;
        for i in (0..n).rev() {
            out.iter_mut().for_each(|w| *w = 0);
            for &s in &succ[i] {
                for (o, x) in out.iter_mut().zip(live_in.row(s)) {
                    *o |= x;
                }
            }
            let (u, k) = (uses.row(i), kills.row(i));
            let row = live_in.row_mut(i);
            for w in 0..words {
                let v = u[w] | (out[w] & !k[w]);
                if v != row[w] {
                    row[w] = v;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Interference.
    let mut adj = Bits::new(r, r);
    for i in 0..n {
        if defs[i].is_empty() {
            continue;
        }
        out.iter_mut().for_each(|w| *w = 0);
        for &s in &succ[i] {
            for (o, x) in out.iter_mut().zip(live_in.row(s)) {
                *o |= x;
            }
        }
        for &d in &defs[i] {
            for x in ones(&out) {
                if x != d {
                    adj.set(d, x);
                    adj.set(x, d);
                }
            }
        }
    }
    // (Two slots both live at the entry need no edge of their own: each holds the
    // frame's initial contents until written, and a write to either while the other is
    // live is an edge above.)
    // Colours: fixed slots keep theirs; pinned ones (in slot order, so a vector
    // register's members stay consecutive) take the next ones; the rest greedily.
    let mut color: Vec<Slot> = (0..nregs).collect();
    let mut next = fixed;
    for s in fixed as usize..r {
        if own[s] {
            color[s] = next;
            next += 1;
        }
    }
    let base = next;
    let mut top = base;
    let mut colored = vec![false; r];
    let mut taken: Vec<bool> = Vec::new();
    for s in fixed as usize..r {
        if own[s] || !referenced[s] {
            continue;
        }
        taken.clear();
        for x in ones(adj.row(s)) {
            if colored[x] {
                let c = (color[x] - base) as usize;
                if taken.len() <= c {
                    taken.resize(c + 1, false);
                }
                taken[c] = true;
            }
        }
        let c = taken.iter().position(|t| !t).unwrap_or(taken.len()) as Slot + base;
        color[s] = c;
        colored[s] = true;
        top = top.max(c + 1);
    }
    debug_assert!((0..r)
        .all(|a| !colored[a] || ones(adj.row(a)).all(|b| !colored[b] || color[a] != color[b])));
    for inst in insts.iter_mut() {
        visit(inst, &mut |s, _| *s = color[*s as usize]);
    }
    top
}

/// The slots `inst` reads (its guard included) and the slots it writes.
pub(crate) fn uses_defs(inst: &Inst, uses: &mut Vec<Slot>, defs: &mut Vec<Slot>) {
    uses.clear();
    defs.clear();
    // `visit` renames in place; a copy is looked at, the program is not touched.
    let mut copy = inst.clone();
    visit(&mut copy, &mut |s, role| {
        if role.is_use() {
            uses.push(*s);
        } else {
            defs.push(*s);
        }
    });
}

/// The strong memory reads (`ld` that is not `.weak`, `atom`) of `insts[entry..end]` that
/// *poll*: the value read decides whether a loop goes round again. The loops are the
/// natural loops of the function's control-flow graph (a branch back to an earlier
/// instruction `k`, and every instruction that reaches it without passing through `k`); a
/// loop's *decisions* are its guarded branches (and guarded `ret`/`exit`) with one way out
/// of the loop and one way that stays in it. A read polls when what it wrote into its
/// registers flows — along the graph, through every instruction that reads a carried
/// register into the ones it writes (`setp`, `vote`, …), an unguarded write of a slot
/// ending what that slot carried — into the predicate of a decision. A spin-wait on a
/// flag or a status word polls, also when the compiler peeled the loop's first read out of
/// it (the value of that read decides whether the loop is entered at all); a read whose
/// value is only data (a reduction's, a copy's), or only chooses a path inside the loop, does
/// not. Returns their instruction indices.
pub(crate) fn poll_reads(insts: &[Inst], entry: usize, end: usize) -> Vec<usize> {
    let end = end.min(insts.len());
    if entry >= end {
        return Vec::new();
    }
    let f = &insts[entry..end];
    let n = f.len();
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut tmp = Vec::new();
    for (i, inst) in f.iter().enumerate() {
        successors(inst, i, n, entry as u32, &mut tmp);
        succ.push(tmp.clone());
    }
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ss) in succ.iter().enumerate() {
        for &t in ss {
            pred[t].push(i);
        }
    }
    // The decisions of every natural loop.
    let mut decides = vec![false; n];
    let mut stamp = vec![0u32; n];
    let mut loops = 0u32;
    let mut stack = Vec::new();
    for j in 0..n {
        for &k in succ[j].iter().filter(|&&k| k <= j) {
            loops += 1;
            let mark = loops;
            let mut body = vec![k];
            stamp[k] = mark;
            stack.clear();
            if stamp[j] != mark {
                stamp[j] = mark;
                body.push(j);
                stack.push(j);
            }
            while let Some(x) = stack.pop() {
                for &p in &pred[x] {
                    if stamp[p] != mark {
                        stamp[p] = mark;
                        body.push(p);
                        stack.push(p);
                    }
                }
            }
            for &b in &body {
                let inst = &f[b];
                if inst.guard.is_none() {
                    continue;
                }
                let leaves = matches!(inst.op, Op::Ret | Op::Exit);
                let branch = matches!(inst.op, Op::Bra { .. } | Op::Brx { .. });
                if !(leaves || branch) {
                    continue;
                }
                let out = leaves || succ[b].iter().any(|&s| stamp[s] != mark);
                let stay = succ[b].iter().any(|&s| stamp[s] == mark);
                if out && stay {
                    decides[b] = true;
                }
            }
        }
    }
    if loops == 0 {
        return Vec::new();
    }
    // Each instruction's slots read and written, once.
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    let slots: Vec<(Vec<Slot>, Vec<Slot>)> = f
        .iter()
        .map(|inst| {
            uses_defs(inst, &mut uses, &mut defs);
            (uses.clone(), defs.clone())
        })
        .collect();
    // Each strong read's value, followed forward.
    let mut out = Vec::new();
    let mut carried: Vec<Vec<Slot>> = vec![Vec::new(); n];
    let mut seen: Vec<usize> = Vec::new();
    for (i, inst) in f.iter().enumerate() {
        let strong_read = match &inst.op {
            Op::Ld { sem, .. } => *sem != crate::hooks::Sem::Weak,
            Op::Atom { .. } | Op::AtomVec { .. } => true,
            _ => false,
        };
        if !strong_read {
            continue;
        }
        let defs = &slots[i].1;
        if defs.is_empty() {
            continue;
        }
        for &x in &seen {
            carried[x].clear();
        }
        seen.clear();
        let mut work: Vec<usize> = Vec::new();
        for &s in &succ[i] {
            if carried[s].is_empty() {
                seen.push(s);
            }
            for d in defs {
                if !carried[s].contains(d) {
                    carried[s].push(*d);
                }
            }
            work.push(s);
        }
        let mut steps = 0;
        let mut polls = false;
        while let Some(x) = work.pop() {
            steps += 1;
            if steps > 20_000 {
                break;
            }
            let here = &f[x];
            if decides[x] && here.guard.is_some_and(|(p, _)| carried[x].contains(&p)) {
                polls = true;
                break;
            }
            let (uses, defs) = &slots[x];
            let mut next = carried[x].clone();
            if uses.iter().any(|u| next.contains(u)) {
                for d in defs {
                    if !next.contains(d) {
                        next.push(*d);
                    }
                }
            } else if here.guard.is_none() {
                next.retain(|c| !defs.contains(c));
            }
            if next.is_empty() {
                continue;
            }
            for &s in &succ[x] {
                let before = carried[s].len();
                if before == 0 {
                    seen.push(s);
                }
                for d in &next {
                    if !carried[s].contains(d) {
                        carried[s].push(*d);
                    }
                }
                if carried[s].len() > before {
                    work.push(s);
                }
            }
        }
        if polls {
            out.push(entry + i);
        }
    }
    out
}
