//! Synchronisation between threads: CTA barriers (`bar`/`barrier` with ids, counts and
//! reductions) and warp collectives (`shfl`, `vote`, `match`, `redux`, `bar.warp.sync`),
//! which wait until every non-exited lane of their member mask has arrived.

use super::*;

impl<'p, 'm, H: Hooks, S: Scheduler> Machine<'p, 'm, H, S> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_bar(
        &mut self,
        w: u32,
        active: u32,
        pc: u32,
        site: SiteId,
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        _d: Option<Slot>,
        pred: Option<Src>,
    ) -> Result<Flow, LaunchOutcome> {
        let l0 = active.trailing_zeros() as usize;
        let bid = self.src(w, l0, id);
        if bid >= 16 {
            return Err(self.fault(
                w,
                l0,
                pc,
                FaultKind::Undefined,
                format!("barrier id {bid} is not in 0..16"),
            ));
        }
        let bid = bid as u32;
        let cnt = count.map(|c| self.src(w, l0, c) as u32);
        if let Some(c) = cnt {
            if c == 0 || c % WARP as u32 != 0 && c != self.tpb {
                // PTX: the count must be a multiple of the warp size.
                return Err(self.fault(
                    w,
                    l0,
                    pc,
                    FaultKind::Undefined,
                    format!("barrier thread count {c} is not a multiple of the warp size"),
                ));
            }
        }
        let cta = self.warps[w as usize].cta;
        for l in lanes(active) {
            let pv = pred.map(|p| self.src(w, l, p) != 0).unwrap_or(false);
            let t = self.thread_ref(w, l);
            let ev = Barrier {
                thread: t,
                kind: if kind == BarKind::Arrive {
                    BarrierKind::Arrive
                } else {
                    BarrierKind::Sync
                },
                id: bid,
                site,
            };
            self.hooks.barrier_arrive(self.mem, &ev);
            let c = &mut self.ctas[cta as usize];
            c.armed |= 1 << bid;
            let bs = &mut c.bars[bid as usize];
            if bs.arrived == 0 {
                bs.expected = cnt;
                bs.popc = 0;
                bs.all = true;
                bs.any = false;
            }
            bs.arrived += 1;
            if cnt.is_some() {
                // PTX counts a counted barrier's arrivals per warp ("marks warps' arrival"):
                // a warp whose other lanes exited still arrives as a whole warp, so its
                // lowest live lane also counts the exited lanes.
                let warp = &self.warps[w as usize];
                let live = warp.present & !warp.exited;
                if live.trailing_zeros() as usize == l {
                    bs.arrived += (warp.present & warp.exited).count_ones();
                }
            }
            bs.popc += pv as u32;
            bs.all &= pv;
            bs.any |= pv;
            let warp = &mut self.warps[w as usize];
            if kind == BarKind::Arrive {
                warp.pc[l] = pc + 1;
            } else {
                warp.status[l] = Status::Barrier(bid);
                warp.pc[l] = pc;
                warp.ready &= !(1 << l);
            }
        }
        self.set_runnable(w);
        self.try_release(cta, bid);
        Ok(Flow::PerLane)
    }

    pub(super) fn try_release(&mut self, cta: u32, bid: u32) {
        let c = &self.ctas[cta as usize];
        let bs = &c.bars[bid as usize];
        if bs.arrived == 0 || bs.arrived < bs.expected.unwrap_or(c.live) {
            return;
        }
        let (popc, all, any) = (bs.popc, bs.all, bs.any);
        let range = c.warps.clone();
        self.ctas[cta as usize].bars[bid as usize] = BarState::default();
        self.ctas[cta as usize].armed &= !(1 << bid);
        // A new interval: its threads may write shared memory again, and have not yet.
        self.ctas[cta as usize].quiet = false;
        // (Only where every barrier is the whole CTA's: a named barrier's release orders
        // only its own threads' writes.)
        if self.shared_quiet.is_some() {
            self.mem.shared_interval_begins(cta);
        }
        let mut released = std::mem::take(&mut self.released);
        released.clear();
        let mut first_site = 0;
        // The instruction of the lane before, decoded (lanes of a warp mostly wait at one
        // `bar.sync`: it is looked up once, not per lane).
        let mut last_pc = u32::MAX;
        let mut dv = None;
        for w in range {
            let mut woke = false;
            let warp = &self.warps[w as usize];
            // The lanes waiting at this barrier, in lane order as before.
            let waiting = (0..warp.nlanes())
                .filter(|&l| warp.status[l] == Status::Barrier(bid))
                .fold(0u32, |m, l| m | 1 << l);
            for l in lanes(waiting) {
                let pc = self.warps[w as usize].pc[l];
                if pc != last_pc {
                    last_pc = pc;
                    let inst = &self.prog.insts[pc as usize];
                    first_site = inst.site;
                    dv = bar_result(&inst.op, popc, all, any);
                }
                if let Some((d, v)) = dv {
                    self.set(w, l, d, v);
                }
                let warp = &mut self.warps[w as usize];
                warp.status[l] = Status::Ready;
                warp.pc[l] = pc + 1;
                warp.ready |= 1 << l;
                woke = true;
                released.push(self.thread_ref(w, l));
            }
            if woke {
                self.set_runnable(w);
            }
        }
        if let Some(t) = released.first() {
            let ev = Barrier {
                thread: *t,
                kind: BarrierKind::Sync,
                id: bid,
                site: first_site,
            };
            self.hooks.barrier_release(self.mem, &ev, &released);
        }
        self.released = released;
        self.since_progress = 0;
        self.changed();
        // The release changed the waiting warps' state: with hooks that count what others
        // can see, only those warps (of this CTA) are woken; otherwise `changed` made it
        // an event for every warp.
        if self.park.fine {
            for w in self.ctas[cta as usize].warps.clone() {
                self.park.wake(w);
            }
        }
    }

    pub(super) fn member_mask(&self, w: u32, l: usize, op: &Op) -> u32 {
        let m = match op {
            Op::WarpSync { mask }
            | Op::Shfl { mask, .. }
            | Op::Vote { mask, .. }
            | Op::Match { mask, .. }
            | Op::Elect { mask, .. }
            | Op::Redux { mask, .. } => *mask,
            // `.aligned` warp-wide instructions: every thread of the warp takes part.
            Op::Ldmatrix { .. }
            | Op::Mma { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. }
            | Op::WmmaMma { .. } => return u32::MAX,
            _ => return 0,
        };
        self.src(w, l, m) as u32
    }

    /// A lane arrives at a warp collective. Each lane brings its *own* member mask (PTX
    /// ISA, `shfl.sync`/`vote.sync`/`match.sync`/`redux.sync`/`bar.warp.sync`: the
    /// executing thread waits until every non-exited thread of *its* `membermask` has
    /// executed the instruction with the same mask). One converged warp may therefore hold
    /// several sub-warp groups at once — cooperative-groups tiles, CUB logical warps —
    /// with disjoint masks (`0x0000ffff` for lanes 0–15, `0xffff0000` for lanes 16–31),
    /// and each group completes on its own. A lane outside its own mask is undefined
    /// behaviour, reported with that lane and that mask.
    pub(super) fn exec_collective(
        &mut self,
        w: u32,
        active: u32,
        _group: u32,
        pc: u32,
        inst: &'p Inst,
    ) -> Result<Flow, LaunchOutcome> {
        let mut masks = [0u32; WARP];
        for l in lanes(active) {
            let member = self.member_mask(w, l, &inst.op);
            if member >> l & 1 == 0 {
                return Err(self.fault(
                    w,
                    l,
                    pc,
                    FaultKind::Undefined,
                    format!(
                        "thread executes `{}` but is not in its member mask {member:#010x}",
                        self.site(pc).text
                    ),
                ));
            }
            masks[l] = member;
        }
        if let Op::WarpSync { .. } = inst.op {
            // A lane's arrival is its release point (its earlier accesses are ordered
            // before the other members' later ones): hooks hear of it as it arrives.
            for l in lanes(active) {
                let ev = Barrier {
                    thread: self.thread_ref(w, l),
                    kind: BarrierKind::Warp,
                    id: masks[l],
                    site: inst.site,
                };
                self.hooks.barrier_arrive(self.mem, &ev);
            }
        }
        {
            let warp = &mut self.warps[w as usize];
            for l in lanes(active) {
                warp.status[l] = Status::Collective(masks[l]);
                warp.pc[l] = pc;
                warp.ready &= !(1 << l);
            }
        }
        self.set_runnable(w);
        self.complete_collective(w, pc)?;
        Ok(Flow::PerLane)
    }

    /// Completes every group of lanes waiting at `pc` (or, for `bar.warp.sync`, at any
    /// `bar.warp.sync`) whose member mask's live lanes are all waiting there with that
    /// same mask. Groups with different masks complete independently.
    pub(super) fn complete_collective(&mut self, w: u32, pc: u32) -> Result<(), LaunchOutcome> {
        let is_warpsync = matches!(self.prog.insts[pc as usize].op, Op::WarpSync { .. });
        // (mask, lanes waiting with it); at most one distinct mask per lane.
        let mut groups = [(0u32, 0u32); WARP];
        let mut n = 0;
        let warp = &self.warps[w as usize];
        for l in 0..warp.nlanes() {
            if let Status::Collective(m) = warp.status[l] {
                let lpc = warp.pc[l];
                let same = lpc == pc
                    || (is_warpsync
                        && matches!(self.prog.insts[lpc as usize].op, Op::WarpSync { .. }));
                if same {
                    match groups[..n].iter_mut().find(|g| g.0 == m) {
                        Some(g) => g.1 |= 1 << l,
                        None => {
                            groups[n] = (m, 1 << l);
                            n += 1;
                        }
                    }
                }
            }
        }
        let live = warp.present & !warp.exited;
        for &(member, waiting) in &groups[..n] {
            // Every lane waiting with `member` is in it (checked on arrival), so the
            // group is complete exactly when it holds all of the mask's live lanes.
            if member & live & !waiting == 0 {
                self.complete_group(w, pc, member, waiting)?;
            }
        }
        Ok(())
    }

    /// Performs the collective at `pc` for the lanes `have`, all waiting with member mask
    /// `member`, and lets them go on.
    fn complete_group(
        &mut self,
        w: u32,
        pc: u32,
        member: u32,
        have: u32,
    ) -> Result<(), LaunchOutcome> {
        let inst = &self.prog.insts[pc as usize];
        let site = inst.site;
        match &inst.op {
            Op::WarpSync { .. } => {
                let ev_threads: Vec<ThreadRef> =
                    lanes(have).map(|l| self.thread_ref(w, l)).collect();
                if let Some(t) = ev_threads.first() {
                    let ev = Barrier {
                        thread: *t,
                        kind: BarrierKind::Warp,
                        id: member,
                        site,
                    };
                    self.hooks.barrier_release(self.mem, &ev, &ev_threads);
                }
            }
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
                ..
            } => {
                let vals: Vec<u64> = (0..WARP)
                    .map(|l| {
                        if l < self.warps[w as usize].nlanes() {
                            self.src(w, l, *a)
                        } else {
                            0
                        }
                    })
                    .collect();
                let mut out = Vec::new();
                for l in lanes(have) {
                    // PTX ISA `shfl.sync`: `bval[4:0] = b[4:0]` in every mode, so a lane
                    // or delta of 32 acts as 0 (GPUs agree, issue 17).
                    let bv = self.src(w, l, *b) as u32 & 0x1f;
                    let cv = self.src(w, l, *c) as u32;
                    let segmask = (cv >> 8) & 0x1f;
                    let clamp = cv & 0x1f;
                    let lane = l as i32;
                    let max_lane = ((lane as u32 & segmask) | (clamp & !segmask)) as i32;
                    let min_lane = (lane as u32 & segmask) as i32;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = lane - bv as i32;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = lane + bv as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = lane ^ bv as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = min_lane | (bv & !segmask) as i32;
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval && (0..WARP as i32).contains(&j) {
                        j as usize
                    } else {
                        l
                    };
                    out.push((l, vals[j], pval));
                }
                for (l, v, pv) in out {
                    self.set(w, l, *d, v & 0xffff_ffff);
                    if let Some(p) = p {
                        self.set(w, l, *p, pv as u64);
                    }
                }
            }
            Op::Vote { mode, d, a, .. } => {
                let mut ballot = 0u32;
                for l in lanes(have) {
                    if self.src(w, l, *a) != 0 {
                        ballot |= 1 << l;
                    }
                }
                let v = match mode {
                    VoteMode::All => (ballot == have) as u64,
                    VoteMode::Any => (ballot != 0) as u64,
                    VoteMode::Uni => (ballot == have || ballot == 0) as u64,
                    VoteMode::Ballot => ballot as u64,
                };
                for l in lanes(have) {
                    self.set(w, l, *d, v);
                }
            }
            Op::Match {
                all, bits, d, p, a, ..
            } => {
                let m = mask_bits(*bits);
                let vals: Vec<(usize, u64)> =
                    lanes(have).map(|l| (l, self.src(w, l, *a) & m)).collect();
                let all_eq = vals.iter().all(|v| v.1 == vals[0].1);
                for (l, v) in &vals {
                    let r = if *all {
                        if all_eq {
                            have
                        } else {
                            0
                        }
                    } else {
                        vals.iter()
                            .filter(|x| x.1 == *v)
                            .fold(0u32, |acc, x| acc | 1 << x.0)
                    };
                    self.set(w, *l, *d, r as u64);
                    if let Some(p) = p {
                        self.set(w, *l, *p, all_eq as u64);
                    }
                }
            }
            Op::Elect { d, p, .. } => {
                // The same leader for the same member mask every time (PTX ISA: the
                // election is deterministic): its lowest lane.
                let leader = have.trailing_zeros() as usize;
                for l in lanes(have) {
                    if let Some(d) = d {
                        self.set(w, l, *d, leader as u64);
                    }
                    if let Some(p) = p {
                        self.set(w, l, *p, (l == leader) as u64);
                    }
                }
            }
            Op::Redux { op, d, a, .. } => {
                let vals: Vec<u32> = lanes(have).map(|l| self.src(w, l, *a) as u32).collect();
                let r = match op {
                    ReduxOp::Add => vals.iter().fold(0u32, |x, y| x.wrapping_add(*y)),
                    ReduxOp::MinU => vals.iter().copied().min().unwrap_or(0),
                    ReduxOp::MaxU => vals.iter().copied().max().unwrap_or(0),
                    ReduxOp::MinS => vals.iter().map(|v| *v as i32).min().unwrap_or(0) as u32,
                    ReduxOp::MaxS => vals.iter().map(|v| *v as i32).max().unwrap_or(0) as u32,
                    ReduxOp::And => vals.iter().fold(u32::MAX, |x, y| x & y),
                    ReduxOp::Or => vals.iter().fold(0, |x, y| x | y),
                    ReduxOp::Xor => vals.iter().fold(0, |x, y| x ^ y),
                };
                for l in lanes(have) {
                    self.set(w, l, *d, r as u64);
                }
            }
            Op::Ldmatrix {
                ds,
                addr,
                space,
                trans,
            } => self.complete_ldmatrix(w, pc, have, ds, *addr, *space, *trans)?,
            Op::Mma { kind, d, a, b, c } => self.complete_mma(w, pc, have, *kind, d, a, b, c)?,
            Op::WmmaLoad {
                frag,
                shape,
                elem,
                row,
                space,
                addr,
                stride,
                ds,
            } => self.complete_wmma_load(
                w, pc, have, *frag, *shape, *elem, *row, *space, *addr, *stride, ds,
            )?,
            Op::WmmaStore {
                shape,
                elem,
                row,
                space,
                addr,
                stride,
                vals,
            } => self.complete_wmma_store(
                w, pc, have, *shape, *elem, *row, *space, *addr, *stride, vals,
            )?,
            Op::WmmaMma { kind, d, a, b, c } => {
                self.complete_wmma_mma(w, pc, have, *kind, d, a, b, c)?
            }
            _ => {}
        }
        let warp = &mut self.warps[w as usize];
        for l in lanes(have) {
            warp.status[l] = Status::Ready;
            warp.pc[l] += 1;
            warp.ready |= 1 << l;
        }
        self.set_runnable(w);
        Ok(())
    }

    pub(super) fn try_collectives(&mut self, w: u32) {
        let warp = &self.warps[w as usize];
        let pcs: Vec<u32> = (0..warp.nlanes())
            .filter(|&i| matches!(warp.status[i], Status::Collective(_)))
            .map(|i| warp.pc[i])
            .collect();
        for pc in pcs {
            if let Err(o) = self.complete_collective(w, pc) {
                self.deferred.get_or_insert(o);
            }
        }
    }
}

/// What a released `bar.red` writes to its destination register (`bar.sync` with a
/// destination writes 0): the register and the value, or `None` without one.
fn bar_result(op: &Op, popc: u32, all: bool, any: bool) -> Option<(Slot, u64)> {
    let Op::Bar {
        kind, d: Some(d), ..
    } = op
    else {
        return None;
    };
    let v = match kind {
        BarKind::RedPopc => popc as u64,
        BarKind::RedAnd => all as u64,
        BarKind::RedOr => any as u64,
        _ => 0,
    };
    Some((*d, v))
}
