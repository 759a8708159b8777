//! Hangs decided by lack of progress, not by an instruction count.
//!
//! A GPU-sized launch may run for billions of lane instructions, so a fixed fuel budget
//! calls honest work hung. What makes a launch hung is that it *cannot* progress: every
//! warp that can run repeats what it did, reading values nobody changes, and nothing is
//! pending (a buffered store, a stale view) that could change them. This module decides
//! exactly that.
//!
//! **Changes.** The interpreter reports every event that can change what another warp
//! observes: a store, an atomic that changes memory (a failing `atomicCAS` in a spin lock
//! changes nothing), a completed asynchronous copy, a thread exit, a CTA barrier
//! releasing, and a model draining buffered stores (`Hooks::stalled` returning true).
//!
//! **Quiet period.** After `QUIET` lane instructions (at least, and more for a large
//! launch) without a change, detection starts: after every scheduling step of a warp the
//! warp's complete state (every lane's program counter, status, call frames, local memory,
//! and all its registers) is hashed, and a warp whose state repeats a state it had since
//! detection started is *cycling*. Between the two equal states memory did not change
//! (any change restarts detection), so the warp's future from the second state is the
//! future it had from the first: it will keep cycling for as long as memory does not
//! change. Collectives and warp-internal state are part of the hashed state; special
//! registers that move with time (`%clock`, `%globaltimer`) make a delay loop's states
//! differ, so such loops are never taken for hangs.
//!
//! **Sampling.** Hashing a warp's whole state after every step made a long store-free
//! loop (a grid-stride reduction) three times slower once detection started. A warp's
//! state is hashed only after a step that did not move its lowest live pc forward (a
//! backward branch, a call's return, a step that stayed put). That loses no cycle: along
//! a cycle of states the lowest pc returns to where it was, so it cannot rise at every
//! step, and the state after a step where it did not rise recurs with the cycle — it is
//! seen a second time one turn later at most. States of the cycle that are not sampled
//! were never needed: one repeated state is what makes the warp cycling.
//!
//! **Verdict.** When every runnable warp is cycling, the model is asked once more whether
//! anything pending could change memory (`Hooks::stalled`: a buffered store drains, the
//! `weak` model starts reading newest values); if so, detection starts over, otherwise no
//! warp can ever progress: the launch is a deadlock whose dump says so. A warp the
//! scheduler never runs never cycles, so an unfair schedule is never called a hang.
//! Hash collisions (64-bit) are the only way to be wrong, with probability about
//! `states² / 2⁶⁴`.

//!
//! # Spin parking
//!
//! A warp spinning on a flag that a buffered store has not published yet runs the same
//! step (load the flag, compare, branch back) again and again: under `scoped` at
//! `p_w = 1` a ring-buffer consumer spends most of an execution doing it, until the
//! liveness rule drains the store. Such a warp is *parked*: while parked, a step the
//! scheduler gives it is *applied* instead of interpreted — the step's instruction counts
//! and clocks are added, its registers, memory and the hooks are not touched — and it
//! stays parked until the next *event*. The scheduler, the liveness rule, the fuel, the
//! livelock verdict and the hooks see exactly what they saw before: parking changes no
//! scheduling decision and no value, so every execution is the one it was, bit for bit
//! (same seed, same interleaving, same outcome), and the set of outcomes each model can
//! produce is unchanged because each single execution is.
//!
//! **Parked.** After a step of warp `w` that (a) ran one group holding every ready lane
//! (no diverged group was picked, so the scheduler made no choice inside the warp),
//! (b) ended at the pc it started at, (c) executed no event instruction (below), read no
//! clock, and saw no event by anyone, and (d) left the hooks' load-effect count
//! ([`Hooks::load_effects`](crate::hooks::Hooks::load_effects)) where it was, the warp's
//! whole state is recorded (pcs, statuses, call frames, local memory, registers of every
//! lane that has not exited, as words). If the state before the step was the same, word for
//! word, the step took the warp from a state `S` back to `S`. The state before the step is known
//! from the warp's previous step when that one qualified too and no other warp can have
//! changed the state since. Only a barrier release changes another warp's lanes, and a
//! release is an event: so a state taken while a lane of the warp waits at a CTA barrier
//! stands for the state before the next step only if no event happened in between (the
//! epoch is the one it was taken in). For a warp with every live lane ready the epoch may
//! have moved between the two steps — after a wake, the first step that leaves the warp
//! where it was parks it again — but not during the step. During that step nothing else
//! changed: memory and the hooks' state are what they were (only events change them), its
//! loads returned values that are functions of those (the hooks say so by not counting
//! them) and its other instructions are functions of `S`. So the same step from `S` does
//! exactly the same again — same values, same counts, ending in `S` — for as long as no
//! event happens: applying its counts is executing it. Other warps' steps in between that
//! are not events are loads, arithmetic and branches, which change nothing this warp
//! reads, and nothing of its state.
//!
//! **Events** end every parking (the epoch advances): every store, atomic or reduction
//! (also a failing compare-and-swap, which may drain a buffer), fence, CTA or warp
//! barrier, `cp.async` operation, `printf`, trap and exit, everything
//! [`Detector::change`] hears of (memory writes, barrier releases, completed copies,
//! [`Hooks::stalled`](crate::hooks::Hooks::stalled) returning true: the liveness rule's
//! drains and `weak` starting to read newest values), and any step after which the
//! hooks' load-effect count moved (a drain inside a load, which the interpreter does not
//! see). So a parked warp runs again — really interpreted — as soon as anything could
//! change what its loads return, and is parked again by its next step that leaves its
//! state unchanged.
//!
//! So a look-back spin run by one lane while the warp's other lanes wait at
//! `__syncthreads()` (CUB's decoupled look-back) is parked too, for as long as no event
//! happens; the steps after each event are interpreted until two states in one epoch
//! agree.
//!
//! (A lane waiting at a warp collective is recorded in full: the warp's own steps are what
//! complete a collective.)
//!
//! **Not parked**: a step with several groups (intra-warp scheduling is a choice), a step
//! that reads `%clock`/`%globaltimer` (its next value differs although the registers
//! repeat), loops of more than one step (e.g. two loads per iteration) — they keep
//! running as before — and hooks whose loads cannot be shown effect-free:
//! `weak` (every load counts itself in the statistics and a load that may read stale
//! draws its seeded choice from the thread's load counter, so skipping a load would
//! change later choices), the device drain policy (its liveness tick drains inside
//! loads), observers (they must see every access) and hooks that do not implement
//! `load_effects`. Those run as before.
//!
//! **Cost.** A probe records every lane of the warp but those waiting at a barrier (a CUB
//! kernel's warp has hundreds of registers per lane), so probing must pay for itself. A
//! warp is probed only after qualifying steps, and first after `MIN_STREAK` of them in a
//! row (a loop of two iterations is not probed at all); a probe that did not pay — a
//! failed compare, one discarded because the next step did not qualify, a parking that
//! applied fewer than 8 steps before an event woke it — doubles the number of qualifying steps the warp lets
//! pass before its next probe (up to 64), and a parking that paid resets that. So a long
//! load-only loop is probed about once per 64 iterations, and a spinner woken by every
//! step of a busy neighbour soon stops being probed. The comparison is exact (it was two
//! 64-bit hashes, whose multiply chain over the registers was about a third of
//! `Machine::run` on a spinning ring-buffer campaign; copying and comparing words costs
//! several times less and cannot collide).

use crate::program::{MemSpace, Op};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Lane instructions without a change before detection starts, at least.
const QUIET: u64 = 1 << 20;
/// States remembered per warp; a warp whose cycle is longer is never called cycling.
const MAX_STATES: usize = 1 << 12;

/// FxHash-style word hasher: the states are hashed once each and compared only by hash.
#[derive(Default)]
pub(super) struct StateHasher(u64);

/// `bytes` as little-endian words, a short last one zero-padded and tagged with its length
/// in the top byte (so that trailing zero bytes still count), each passed to `f`.
#[inline]
pub(super) fn le_words(bytes: &[u8], mut f: impl FnMut(u64)) {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        f(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        f(u64::from_le_bytes(b) ^ (rest.len() as u64) << 56);
    }
}

impl Hasher for StateHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        le_words(bytes, |x| self.write_u64(x));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // One more round so that the last word is mixed into the high bits too.
        (self.0 ^ (self.0 >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
    }
}

type Seen = HashSet<u64, BuildHasherDefault<IdHasher>>;

/// The set's keys are already hashes.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ *b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Default)]
pub(super) struct Detector {
    /// `lane_instructions` at the last change.
    last_change: u64,
    active: bool,
    /// Per warp: the states seen since detection started (allocated when it starts).
    seen: Vec<Seen>,
    cycling: Vec<bool>,
    ncycling: usize,
}

impl Detector {
    pub(super) fn new(warps: usize) -> Detector {
        Detector {
            cycling: vec![false; warps],
            ..Detector::default()
        }
    }

    /// Something changed that other warps may observe.
    #[inline]
    pub(super) fn change(&mut self, lane_instructions: u64) {
        self.last_change = lane_instructions;
        if self.active {
            self.active = false;
            self.seen.clear();
            self.cycling.iter_mut().for_each(|c| *c = false);
            self.ncycling = 0;
        }
    }

    /// Whether detection runs now (after a quiet period that grows with the launch, so
    /// a large launch's spinning warps are not hashed while work still happens).
    #[inline]
    pub(super) fn watching(&mut self, lane_instructions: u64, threads: u64) -> bool {
        if !self.active && lane_instructions - self.last_change > QUIET.max(threads * 64) {
            self.active = true;
            self.seen = (0..self.cycling.len()).map(|_| Seen::default()).collect();
        }
        self.active
    }

    /// Whether warp `w` is known to cycle (then [`Detector::record`] ignores its state).
    #[inline]
    pub(super) fn cycling(&self, w: u32) -> bool {
        self.cycling[w as usize]
    }

    /// Whether detection runs now (without starting it).
    #[inline]
    pub(super) fn active(&self) -> bool {
        self.active
    }

    /// Whether every warp in `runnable` cycles.
    #[inline]
    pub(super) fn all_cycling(&self, runnable: &[u32]) -> bool {
        self.ncycling >= runnable.len() && runnable.iter().all(|&r| self.cycling[r as usize])
    }

    /// Records warp `w`'s state hash; returns true when every warp in `runnable` now
    /// cycles.
    pub(super) fn record(&mut self, w: u32, state: u64, runnable: &[u32]) -> bool {
        let w = w as usize;
        if !self.cycling[w] {
            let seen = &mut self.seen[w];
            if seen.contains(&state) {
                self.cycling[w] = true;
                self.ncycling += 1;
            } else if seen.len() < MAX_STATES {
                seen.insert(state);
            }
        }
        self.all_cycling(runnable)
    }
}

/// Most qualifying steps a warp whose probe failed waits before the next probe.
const MAX_GAP: u32 = 64;
/// A parking that applied fewer steps than this did not pay for its hash.
const MIN_APPLIED: u32 = 8;
/// Qualifying steps in a row before a warp is first hashed: a loop of a few iterations
/// (a grid-stride loop over two elements per thread) is not worth one hash of a warp's
/// whole register file, a spinner makes thousands.
const MIN_STREAK: u32 = 2;

impl ParkWarp {
    /// A probe that did not pay: the next one waits twice as long (up to `MAX_GAP`
    /// qualifying steps); one that did resets the wait.
    fn back_off(&mut self) {
        self.gap = (self.gap * 2).clamp(1, MAX_GAP);
        self.skip = self.gap;
    }
}
/// No epoch (a warp not parked).
const NONE: u64 = u64::MAX;

/// Spin parking (see the module docs): the probes and the parked warps.
pub(super) struct Parking {
    /// Whether the hooks allow parking in this launch.
    pub(super) on: bool,
    /// Advances at every event; a warp is parked for one value of it.
    epoch: u64,
    /// The hooks' load-effect count after the last step.
    effects: u64,
    warps: Vec<ParkWarp>,
    /// Per warp: its state as `Machine::park_state` writes it, taken after its previous
    /// qualifying step (valid while `ParkWarp::known`). Compared word for word: exact,
    /// and several times cheaper than the two 64-bit hashes it replaced (a multiply
    /// chain over a warp's whole register file, about a third of `Machine::run` on a
    /// spinning ring-buffer campaign, at every wake-up of every parked consumer). Memory:
    /// a warp that has been probed keeps one copy of its running lanes' registers and
    /// local memory until the launch ends — at most its register file again, for the
    /// warps that spin.
    states: Vec<Vec<u64>>,
}

#[derive(Clone, Copy)]
struct ParkWarp {
    /// Whether [`Parking::states`] holds the warp's state after its previous step: that
    /// step qualified and no other warp can have changed the state since. A state taken
    /// while a lane of the warp waited at a CTA barrier holds only in the epoch it was
    /// taken in (`epoch`; `NONE`: in every epoch), since the barrier's release, an event,
    /// is the only way another warp changes this warp's state.
    known: bool,
    epoch: u64,
    /// The epoch the warp is parked for (`NONE`: not parked) and its step's counts.
    parked: u64,
    lanes: u64,
    insts: u64,
    /// Steps applied since the warp was last parked.
    applied: u32,
    /// Qualifying steps to let pass before the next probe, and the current gap.
    skip: u32,
    gap: u32,
    /// Qualifying steps in a row (reset by one that does not qualify).
    streak: u32,
}

impl Parking {
    pub(super) fn new(warps: usize, effects: Option<u64>) -> Parking {
        Parking {
            on: effects.is_some(),
            epoch: 0,
            effects: effects.unwrap_or(0),
            warps: if effects.is_some() {
                vec![
                    ParkWarp {
                        known: false,
                        epoch: NONE,
                        parked: NONE,
                        lanes: 0,
                        insts: 0,
                        applied: 0,
                        skip: 0,
                        gap: 0,
                        streak: 0,
                    };
                    warps
                ]
            } else {
                Vec::new()
            },
            states: if effects.is_some() {
                vec![Vec::new(); warps]
            } else {
                Vec::new()
            },
        }
    }

    /// An event: every parked warp runs again.
    #[inline]
    pub(super) fn event(&mut self) {
        self.epoch = self.epoch.wrapping_add(1) % NONE;
    }

    #[inline]
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// After a step: an event if the hooks' load-effect count moved.
    #[inline]
    pub(super) fn effects(&mut self, count: Option<u64>) {
        let c = count.unwrap_or(self.effects.wrapping_add(1));
        if c != self.effects {
            self.effects = c;
            self.event();
        }
    }

    /// The (lane, warp) instruction counts of warp `w`'s step while it is parked (and
    /// one more applied step counted).
    #[inline]
    pub(super) fn parked(&mut self, w: u32) -> Option<(u64, u64)> {
        let epoch = self.epoch;
        let p = self.warps.get_mut(w as usize)?;
        if p.parked != epoch {
            return None;
        }
        p.applied = p.applied.saturating_add(1);
        Some((p.lanes, p.insts))
    }

    /// Before warp `w`'s interpreted step: if it was parked and has been woken, a parking
    /// that saved fewer steps than a hash costs makes its probes wait longer, one that
    /// saved more lets it probe at once again.
    #[inline]
    pub(super) fn woken(&mut self, w: u32) {
        let p = &mut self.warps[w as usize];
        if p.parked != NONE {
            p.parked = NONE;
            if p.applied < MIN_APPLIED {
                p.back_off();
            } else {
                p.gap = 0;
            }
            p.applied = 0;
        }
    }

    /// Warp `w`'s step did not qualify: its next probe starts over (a hash taken for it
    /// was wasted, which makes the probes wait longer).
    #[inline]
    pub(super) fn forget(&mut self, w: u32) {
        let p = &mut self.warps[w as usize];
        p.streak = 0;
        if p.known {
            p.known = false;
            p.back_off();
        }
    }

    /// Warp `w`'s step qualified: whether to hash its state now (false while it waits
    /// after a failed probe).
    #[inline]
    pub(super) fn wants_probe(&mut self, w: u32) -> bool {
        let p = &mut self.warps[w as usize];
        p.streak = p.streak.saturating_add(1);
        if p.streak < MIN_STREAK {
            return false;
        }
        if p.skip > 0 {
            p.skip -= 1;
            p.known = false;
            return false;
        }
        true
    }

    /// The state after warp `w`'s qualifying step (`state`, as `Machine::park_state`
    /// writes it), which counted `lanes` lane and `insts` warp instructions, `settled`
    /// when every live lane of the warp is ready (so no other warp can change its state
    /// before it runs again: only a barrier release does that): parks the warp when the
    /// state before the step (known from its previous step) was the same. Returns whether
    /// it parked. `state` is left as a buffer for the next probe.
    pub(super) fn probe(
        &mut self,
        w: u32,
        state: &mut Vec<u64>,
        settled: bool,
        lanes: u64,
        insts: u64,
    ) -> bool {
        let epoch = self.epoch;
        let p = &mut self.warps[w as usize];
        let known_state = &mut self.states[w as usize];
        if p.known {
            // A state bound to an epoch that has passed says nothing about the state
            // before this step: a wasted probe, as a failed compare is.
            if *known_state == *state && (p.epoch == NONE || p.epoch == epoch) {
                p.parked = epoch;
                p.lanes = lanes;
                p.insts = insts;
                p.applied = 0;
                // After a wake the warp is still in this state: its first step that
                // leaves it there parks it again.
                return true;
            }
            p.known = false;
            p.back_off();
            return false;
        }
        std::mem::swap(known_state, state);
        p.known = true;
        p.epoch = if settled { NONE } else { epoch };
        false
    }
}

/// Whether executing `op` is an event for spin parking (see the module docs): anything
/// that may change what another warp's loads return or what the hooks hold, or that is
/// seen outside the warp (`printf`). Loads are not (their effects are the hooks' to
/// count); neither are arithmetic, control flow, calls, local and parameter memory, and
/// the collectives inside one warp. Written out for every operation, so that a new one
/// must be decided here.
pub(super) fn is_event(op: &Op) -> bool {
    match op {
        Op::Alu(_)
        | Op::Mov { .. }
        | Op::Movs { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::Ld { .. }
        | Op::Cvta { .. }
        | Op::Isspacep { .. }
        | Op::Bra { .. }
        | Op::Brx { .. }
        | Op::CallIndirect { .. }
        | Op::Call { .. }
        // A return from the kernel exits its lanes, which is an event by itself.
        | Op::Ret
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::Activemask { .. }
        | Op::Ldmatrix { .. }
        | Op::Mma { .. }
        | Op::Nanosleep
        | Op::Nop => false,
        Op::St { space, .. } => !matches!(space, MemSpace::Local | MemSpace::FrameParam),
        Op::Atom { .. }
        | Op::Vprintf { .. }
        | Op::AssertFail { .. }
        | Op::Exit
        | Op::Trap
        | Op::Brkpt
        | Op::Bar { .. }
        | Op::WarpSync { .. }
        | Op::Fence { .. }
        | Op::CpAsync { .. }
        | Op::CpAsyncCommit
        | Op::CpAsyncWait { .. } => true,
    }
}
