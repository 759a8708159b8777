//! CTA-local scheduling: while every runnable warp of the CTA that ran last is about to
//! touch nothing outside its CTA, the next warp is picked among that CTA's warps only.
//!
//! **Why.** A launch of a million threads has 32,768 warps, and a random scheduler that
//! picks among all of them at every preemption point finds each warp's state — its pcs,
//! its register rows, its CTA's shared memory and barriers — cold in every cache: `perf`
//! of a shared-memory bitonic sort (1,024 CTAs of 512 threads, `exec --model sc`) had its
//! steps (1.5 warp instructions each on average, a shared access or a barrier between
//! two) cost ~0.9 µs, most of it waiting for memory. Between its global accesses a CTA
//! of such a kernel talks only to itself.
//!
//! **The argument (partial-order reduction, persistent sets).** A step of warp `w` is
//! its pending instruction (the one it stopped before: a preemption point, or any
//! instruction when the step bound cut the step) and the instructions after it up to the
//! next preemption point, which touch only `w`'s registers and local, parameter and
//! constant memory, or memory no thread of the launch writes (`crate::unwritten`). Call
//! a step *CTA-local* when its pending instruction is [`Op::is_cta_local`] (a shared
//! access, a CTA barrier, a warp collective, or no preemption point at all) and is not
//! quiet code (a quiet step runs on into the next instruction, which may be anything).
//! A CTA-local step of CTA `c` reads and writes only state of `c` (its shared memory,
//! barriers, warps' registers and pcs) and memory nobody writes; no step of another CTA
//! reads or writes any of that (clusters are one CTA in the vgpu, so `.shared::cluster`
//! is the CTA's own). So a CTA-local step of `c` is *independent* of every step of every
//! other CTA: the two commute, from any state where both can run, to the same state.
//!
//! Let `P` be the runnable warps of `c` at a scheduling point, and suppose every one of
//! them has a CTA-local step pending. Any run from here that starts with steps of other
//! CTAs only, `u₁ … uₖ`, and then a step `p` of `P` (it must come eventually in a run
//! where `c` does anything more) can be reordered to `p u₁ … uₖ` with the same final
//! state: `p` commutes with each `uᵢ`, and each `uᵢ` stays enabled (no CTA-local step
//! of `c` unblocks or blocks another CTA's warp; `c`'s warps that were not runnable —
//! at a barrier, a collective, exited — can only be made runnable by `c`'s own steps).
//! (A warp of `P` that is runnable is picked again with probability 1 under the random
//! scheduler, so a run in which `c` never steps again is not one whose outcome a test
//! can see.) `P` is a *persistent set* (Godefroid, "Partial-Order Methods for the
//! Verification of Concurrent Systems", LNCS 1032, 1996, ch. 4): exploring only its
//! steps at this point loses no reachable final state — memory at the end, a fault, a
//! deadlock — and so no outcome a test compares.
//!
//! The uniformly random scheduler ([`crate::sched::RandomScheduler`]) restricted to `P`
//! is the uniform choice among `c`'s runnable warps. Conditioned on the pick landing in
//! `c`, a pick among all runnable warps is that same choice, so the sequence of `c`'s
//! own steps — the interleaving of `c`'s warps that decides a shared-memory race — has
//! the same distribution with or without the reduction; what changes is only how far
//! the other CTAs got meanwhile, which the argument above says no outcome can depend on
//! while `c`'s steps are CTA-local. A pick among all warps resumes at the first point
//! where some runnable warp of `c` has a step pending that is not CTA-local (a global
//! access, a fence, an exit …), so cross-CTA interleavings are decided as before.
//!
//! **Hooks.** Under [`Hooks::transparent`] hooks a step's effects are the instructions'
//! own. Other hooks keep state of their own that a step reads and changes (a write-buffer
//! model's per-thread queues, a CTA's overlay, `weak`'s store histories), so the steps
//! above are CTA-local only while the hooks say so for the CTA
//! ([`Hooks::cta_steps_local`]). A write-buffer model does while no thread of the CTA
//! holds a buffered *global* store: the next barrier or warp sync drains a thread's whole
//! buffer, and a global store made visible there is a step another CTA's loads do not
//! commute with (and, under `scoped`, while the CTA's overlay is empty: a shared store
//! releasing at `.gpu` scope publishes it). `weak` does while no stall is being resolved
//! and no thread of the CTA may hold an observation of a location outside the CTA's
//! shared memory (`WeakMemory::cta_steps_local` has the argument). Only a step of the
//! CTA that is not CTA-local (a global store, load or fence), or a stall, can make such
//! an answer false again, so it is asked with the warps' check and kept with it
//! (`cta_clean`). Choices such hooks make at random
//! are functions of the thread and its own history (the buffers' store selection and
//! `weak`'s stale choices hash the seed, the thread and its own count:
//! `fencehound_handlers::select`), so they do not depend on how far other CTAs got; and
//! what the hooks do at [`Hooks::stalled`] (a drain picked among every thread's entries,
//! `weak`'s liveness rule) happens only after `256 + 8 ×` the runnable warps' steps
//! without progress, when picks are global again (below), or when nothing is runnable or
//! the fuel is spent; every stall forgets `cta_clean`, so the hooks are asked again.
//!
//! **Where it is off.** Hooks that do not say so (the race check: its clocks and pending
//! candidates see every access in execution order), schedulers other than the random one
//! ([`Scheduler::cta_local`]: round-robin's and PCT's picks are defined over all warps),
//! launches of one CTA (nothing to gain), and spins: after 256 steps without progress,
//! or while quick stalls pick among unparked warps, every pick is a global one again,
//! so a CTA that spins on its own shared memory (a bug, or a wait for a warp blocked
//! elsewhere) lets the livelock detector see every warp as before.
//!
//! **Cost.** The check reads the pcs of the CTA's runnable warps (one comparison of 32
//! pcs per warp for the common converged case) at each pick; the CTA is the one that
//! just ran, so they are in cache.

use super::*;

/// Steps without progress after which picks are global again.
const PATIENCE: u64 = 256;

impl<H: Hooks, S: Scheduler> Machine<'_, '_, H, S> {
    /// The warp ids of the CTA of the warp picked last and how many of them are runnable,
    /// when the next pick may be made among those only (see the module docs); `None`
    /// when it must be made among all.
    #[inline]
    pub(super) fn cta_pool(&mut self) -> Option<(std::ops::Range<u32>, usize)> {
        if !self.cta_steps || self.spinning || self.since_progress >= PATIENCE {
            self.cta_clean = u32::MAX;
            return None;
        }
        let last = self.picked?;
        let c = self.warps.get(last as usize)?.cta;
        let warps = self.ctas[c as usize].warps.clone();
        let k = self.runnable.count_in(warps.start, warps.end);
        if k == 0 || k == self.runnable.len() {
            self.cta_clean = u32::MAX;
            return None;
        }
        // When the CTA's other warps were all found CTA-local at the last pick and none
        // of them changed since (`set_runnable` of a warp other than the one picked
        // forgets it), the warp that just ran is the only one to look at again.
        let all = if self.cta_clean == c {
            !self.runnable.contains(last) || self.local_pending(last)
        } else {
            // (A CTA has at most 32 warps: 1,024 threads.)
            let mut ws = [0u32; 64];
            let n = self.runnable.members_in(warps.start, warps.end, &mut ws);
            // (Global thread ids are `cta * tpb + tid`; transparent hooks say yes.)
            ws[..n].iter().all(|&w| self.local_pending(w))
                && self.hooks.cta_steps_local(c, c * self.tpb, self.tpb)
        };
        self.cta_clean = if all { c } else { u32::MAX };
        all.then_some((warps, k))
    }

    /// Whether every ready lane of warp `w` has a CTA-local step pending.
    #[inline]
    fn local_pending(&self, w: u32) -> bool {
        let warp = &self.warps[w as usize];
        let ready = warp.ready;
        let first = ready.trailing_zeros() as usize;
        if first >= WARP {
            return true;
        }
        let ok = |pc: u32| {
            self.cta_local_pc.get(pc as usize).copied().unwrap_or(false) && !self.quiet(pc)
        };
        // One look-up per group of lanes (one group when converged), groups as `step`
        // forms them.
        let (mut left, mut l) = (ready, first);
        loop {
            if !ok(warp.pc[l]) {
                return false;
            }
            left &= !lanes_at(&warp.pc, &warp.reg_base, warp.pc[l], warp.reg_base[l]);
            if left == 0 {
                return true;
            }
            l = left.trailing_zeros() as usize;
        }
    }
}
