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
//! **Samples first.** Hashing a whole state costs a pass over the warp's register file;
//! a warp that makes progress (a grid-stride loop over millions of elements, whose only
//! stores come at the end) paid it at every turn once detection had started: 40% of
//! `bench/programs/reduce` at 16 M elements. So a warp is first followed by a *sample*
//! of its state — every lane's pc, the ready and exited masks, and every register of its
//! first and last ready lanes — and only once a sample repeats (or the samples fill
//! their set) is it *exact*: from then on its whole states are hashed as above. Equal
//! states have equal samples, so a warp that cycles repeats a sample (within one turn of
//! its cycle, as above), becomes exact, and repeats a whole state one turn later: every
//! cycle is still seen, at most one more turn late, and a warp is cycling only on a
//! repeated whole state, as before. A warp that makes progress changes its sample at
//! every turn (the loop's index is in a register of every lane) and is never hashed.
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
//! (b) ended at the pc it started at (a cycle of one step; several: below), (c) executed
//! no event instruction (below), read no clock, and saw no event by anyone, and (d) left
//! the hooks' load-effect count
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
//! **Cycles of several steps.** CUB's look-back poll is three steps (the load, the
//! `vote.any`, the `__threadfence_block()` before the next load: each ends a step). A
//! probe starts after a qualifying step that ends at the pc where one of the last
//! [`MAX_CYCLE`] qualifying steps began, records the state after each of the next `n`
//! steps (`n` that cycle's length), and parks the warp when the last state equals the
//! first, all in one epoch: each step ran from the state the one before left (nothing
//! but a barrier release, an event, changes a warp's state besides its own steps) under
//! unchanged memory, so from there the same `n` steps repeat, with the same
//! intermediate states and counts, until an event. Applying a step adds its counts and
//! writes back the words in which its end state differs from its start state — pcs,
//! statuses (between ready and waiting at a collective), the ready mask, registers; a
//! cycle that differs anywhere else is not parked — so at every step the warp's state is
//! exactly the one interpreting leaves: what a woken warp resumes from, what the
//! livelock detector hashes, what a dump prints. A warp woken from such a cycle resumes
//! in its phase and is checked against the recorded cycle step by step, comparing its
//! state in place with the recorded one: when a whole turn from the wake matches, in
//! one epoch, it is parked on the cycle again (the same argument; the cost of a wake
//! is one turn of interpreted steps and comparisons, not a new probe).
//!
//! **Hooks that count what others can see**
//! ([`Hooks::shared_effects`](crate::hooks::Hooks::shared_effects); the write-buffer
//! models under the native drain policy). Then a fence is no event: a fence that drains
//! moves that count, and one with nothing to drain changes nothing, so the look-back's
//! fence can be inside a parked cycle. A store, a CTA barrier and a warp barrier only
//! keep their own step from parking: a store that waits in its thread's buffer changes
//! nothing another warp's loads read (one that reaches memory or an overlay moves the
//! count), a warp barrier completes inside its warp, and a CTA barrier's release wakes
//! that CTA's warps only ([`Parking::wake`]) — the warps whose lanes it releases. A load
//! whose effects moved keeps its own warp from parking (a forwarded load's statistics)
//! without waking the others. Atomics and exits stay events for everyone.
//! Before this, every buffered store of every warp woke every parked warp.
//!
//! **Wakes by address** (hooks that also name the blocks of their changes,
//! [`Hooks::changed_blocks`](crate::hooks::Hooks::changed_blocks), with the memory's
//! write log). Then a counted change — a fence's drain, a liveness drain of `stalled`, a
//! store that reaches memory — is an event only for the warps whose *counting reads*
//! include one of its 8-byte blocks, and for the warp whose step made it. A warp's
//! counting reads are the blocks its interpreted steps read while a probe of it runs or a
//! woken cycle is checked ([`Parking::begin_step`]), kept for as long as its own epoch
//! ([`Parking::epoch_of`]) stays: those are the steps whose repeats a parking applies.
//! Each step of such a warp is a function of the warp's state and of what its loads
//! return, and a load's value and effects are functions of what memory and the hooks
//! hold for its own block (the hooks' contract), so a change to any other block leaves
//! the cycle the warp is parked on, or probed for, exactly as it was: every argument
//! above holds with "no event" read as "no event for this warp". Each warp has its own
//! epoch: it moves at every event for everyone and at every change by address that
//! touches the warp, and every state a probe records, a parking and a check are bound to
//! it. A warp whose counting reads exceed [`MAX_READS`] blocks is touched by every change
//! by address. Before this, each liveness drain of one entry (of a CUB scan's hundreds of
//! thousands) woke every parked look-back warp, which then compared its whole register
//! file to find it had nothing new to read: a third of `exec --model scoped` on
//! `cub_scan`.
//!
//! **Stalls with every warp parked** (with [`crate::LaunchOptions::quick_stalls`]). The
//! liveness rule drains one buffered entry when nothing has progressed for a while
//! (`Hooks::stalled`); under `scoped` at `p_w = 1` a look-back spinning on one status
//! store among thousands buffered waited for that store's turn one drain at a time, and
//! between two drains every runnable warp ran hundreds of parked steps: 1.38 G lane
//! instructions in one launch of CUB's onesweep radix sort, where `sc` runs 26 M. Once
//! every runnable warp is parked — an interpreted step just parked the last of them, or
//! a drain moved no warp's epoch ([`Parking::moves`]) — the steps the rule would let
//! pass before its next drain are all parked steps: each applies counts and the words
//! its cycle already wrote, no value anyone reads changes, and no warp becomes runnable
//! (only a barrier's release or an exit, both events, does that). So the drain may come
//! at once: the executions this makes are executions the rule allows (the same drains in
//! the same order, with fewer parked steps before them), the same outcomes are
//! reachable, and each still replays from its seed. What moves is the schedule after the
//! stall: the scheduler's random stream is drawn fewer times, the counts and `%clock`
//! are smaller.
//!
//! With the same option, in a spin (256 steps without progress, or a step that parked
//! its warp, until a step makes progress: working code pays nothing), the scheduler does
//! not pick parked warps while any runnable warp is not parked (`Machine::live_pool`),
//! and the stall rule also fires after the unparked warps' share of its period in their
//! own steps, `(256 + 8 × runnable) × unparked / runnable`, so each warp that runs gets
//! the steps between two stalls it got before, in expectation. On the onesweep sort about five warps of 270 were unparked at each stall (woken by
//! the last drain, re-probing their poll loop, or a poll whose lanes diverged into two
//! groups, which is never parked), and they got a step in 50. A parked warp's steps are
//! applied counts that change nothing anyone reads, so leaving them out leaves out no
//! interleaving of the other warps' steps; a parked warp runs again as soon as its epoch
//! moves. The livelock verdict then asks that the warps picked cycle: a parked warp
//! cycles by construction, under memory that has not changed since detection started
//! (any change starts it over). So it is an option: without it parking is invisible to
//! a run (the tests of `tests/it/parking.rs` compare runs with and without
//! parking, statistic for statistic), and seeded campaigns keep the interleavings their
//! seeds always named; `fencehound exec` turns it on.
//!
//! **Not parked**: a step with several groups (intra-warp scheduling is a choice), a step
//! that reads `%clock`/`%globaltimer` (its next value differs although the registers
//! repeat), loops of more than [`MAX_CYCLE`] steps — they keep running as before — and
//! hooks whose loads cannot be shown effect-free:
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
use std::collections::{HashMap, HashSet};
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
    /// Per warp: the samples of its states seen since detection started, while it is not
    /// `exact` (see "Samples first" in the module docs).
    samples: Vec<Seen>,
    /// Per warp: a sample repeated (or could not be kept), so its whole states are hashed.
    exact: Vec<bool>,
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
            self.samples.clear();
            self.exact.clear();
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
            self.samples = (0..self.cycling.len()).map(|_| Seen::default()).collect();
            self.exact = vec![false; self.cycling.len()];
        }
        self.active
    }

    /// Whether warp `w`'s whole states are hashed now (a sample of its repeated).
    #[inline]
    pub(super) fn exact(&self, w: u32) -> bool {
        self.exact.get(w as usize).copied().unwrap_or(true)
    }

    /// Records a sample of warp `w`'s state; true when the warp is `exact` from now on:
    /// the sample was seen before (the state may repeat), or the set is full.
    pub(super) fn record_sample(&mut self, w: u32, sample: u64) -> bool {
        let w = w as usize;
        let (Some(samples), Some(exact)) = (self.samples.get_mut(w), self.exact.get_mut(w)) else {
            return true;
        };
        if !*exact {
            if samples.contains(&sample) || samples.len() >= MAX_STATES {
                *exact = true;
                *samples = Seen::default();
            } else {
                samples.insert(sample);
            }
        }
        *exact
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
/// Longest cycle of steps a warp is parked on (CUB's look-back poll is three: the load,
/// the `vote.any`, the `__threadfence_block()` before the next load).
pub(super) const MAX_CYCLE: usize = 4;
/// Turns of a cycle of several steps before it is first probed.
const MIN_TURNS: u32 = 8;

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
/// Most blocks a warp's counting reads keep apart ([`Parking::read`]); a warp that reads
/// more is touched by every change by address.
const MAX_READS: usize = 64;
/// Most (warp, block) pairs kept before an event for every warp starts over.
const MAX_WATCHED: usize = 1 << 16;

/// A warp's counting reads ([`Parking::read`]): the blocks, in the warp's `epoch`;
/// `gen` tells the `watch` pairs of this set from those of earlier ones.
#[derive(Default)]
struct Reads {
    blocks: Vec<u64>,
    wide: bool,
    gen: u32,
    epoch: u64,
}

impl Reads {
    fn reset(&mut self) {
        if !self.blocks.is_empty() || self.wide {
            self.blocks.clear();
            self.wide = false;
            self.gen = self.gen.wrapping_add(1);
        }
    }
}

/// What a word of `Machine::park_state` stands for, as far as a parked cycle of several
/// steps may change it (see [`Parking::probe`]): the words that differ between the
/// states of one cycle must all be of the restorable kinds, which a parked step writes
/// back into the warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Word {
    /// Anything else (exited mask, register and local bases, call frames, copy state,
    /// local memory): a cycle whose states differ here is not parked.
    Fixed,
    /// The warp's ready mask (low half; the exited mask, high half, must not change).
    Ready,
    /// A lane's pc (low half; its function, high half, must not change).
    Pc(u32),
    /// A lane's status (only between ready and waiting at a warp collective).
    Status(u32),
    /// A register word: its index in the warp's register file.
    Reg(u32),
}

/// A state a probe recorded: the words, the epoch it was taken in (and whether the warp
/// was settled then), and the counts of the step that ended in it.
struct Rec {
    words: Vec<u64>,
    epoch: u64,
    settled: bool,
    lanes: u64,
    insts: u64,
}

/// What a qualifying step's state is for ([`Parking::wants_probe`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ProbeAt {
    /// Nothing.
    No,
    /// Record it ([`Parking::probe`]).
    Record,
    /// Nothing yet: a screened cycle's turn goes on.
    Count,
    /// Compare it with the screened cycle's first state ([`Parking::screened`]).
    Screen,
}

/// What a parked step writes back into its warp, by kind (so that applying a step of a
/// CUB look-back cycle — a pc and a few registers for each of 32 lanes — is two tight
/// loops, not a dispatch per word: that dispatch was over half of `Machine::run` on
/// `cub_scan` under `scoped` once wakes went by address).
#[derive(Default)]
pub(super) struct Writes {
    /// Register words as runs of consecutive indices in the warp's register file (a
    /// register's 32 lanes are one row: one run), each `(start, len)` with its values
    /// next in `reg_vals`: a run is one slice copy.
    pub(super) reg_runs: Vec<(u32, u32)>,
    pub(super) reg_vals: Vec<u64>,
    /// Lane pcs: the lanes (a mask) that move to a pc, and that pc (the low half of a
    /// `Word::Pc` word). The lanes of a warp mostly move together: one entry.
    pub(super) pcs: Vec<(u32, u32)>,
    /// The ready mask and statuses (each word is a different place: any order).
    pub(super) other: Vec<(Word, u64)>,
}

/// A step that writes nothing (a cycle of one step).
static NO_WRITES: Writes = Writes {
    reg_runs: Vec::new(),
    reg_vals: Vec::new(),
    pcs: Vec::new(),
    other: Vec::new(),
};

/// One step of a parked cycle of several steps: the state it starts from, its counts,
/// and what it changes in the warp.
#[derive(Default)]
pub(super) struct CycleStep {
    pub(super) state: Vec<u64>,
    pub(super) lanes: u64,
    pub(super) insts: u64,
    pub(super) writes: Writes,
}

/// Spin parking (see the module docs): the probes and the parked warps.
pub(super) struct Parking {
    /// Whether the hooks allow parking in this launch.
    pub(super) on: bool,
    /// Advances at every event, for every warp or by address; a warp is parked for one
    /// value of its own epoch ([`Parking::epoch_of`]).
    epoch: u64,
    /// `epoch` at the last event for every warp.
    global: u64,
    /// Per warp: `epoch` at the last event by address that touched a block it reads
    /// ([`Parking::addressed`]).
    touched: Vec<u64>,
    /// Per warp: the blocks its interpreted steps read while they count for a probe, a
    /// check or a parking ([`Parking::begin_step`]).
    reads: Vec<Reads>,
    /// Who reads each block: (warp, its `Reads::gen` then); stale pairs are skipped and
    /// dropped when the block changes, all of them at an event for every warp.
    watch: HashMap<u64, Vec<(u32, u32)>, BuildHasherDefault<StateHasher>>,
    watched: usize,
    /// Warps that read more blocks than are kept: any change by address touches them.
    wide: Vec<(u32, u32)>,
    /// The hooks' load-effect count after the last step.
    effects: u64,
    /// Whether the hooks count the changes other threads can see
    /// ([`Hooks::shared_effects`](crate::hooks::Hooks::shared_effects)), and that count
    /// after the last step.
    pub(super) fine: bool,
    shared: u64,
    warps: Vec<ParkWarp>,
    /// Per warp: the states as `Machine::park_state` writes them, taken after its last
    /// qualifying steps in a row (at most `MAX_CYCLE + 1`, oldest first, while a probe
    /// runs). Compared word for word: exact, and several times cheaper than the two
    /// 64-bit hashes it replaced (a multiply chain over a warp's whole register file,
    /// about a third of `Machine::run` on a spinning ring-buffer campaign, at every
    /// wake-up of every parked consumer).
    hist: Vec<Vec<Rec>>,
    /// Per warp: the steps of the cycle it is parked on (a cycle of several steps only;
    /// a one-step cycle's counts are in its `ParkWarp`).
    cycles: Vec<Vec<CycleStep>>,
    /// Buffers of dropped states, for the next probes.
    spare: Vec<Vec<u64>>,
    /// Counts every move of any warp's epoch (an event, a touch by address): while it
    /// stands, every warp parked before is parked still ([`Parking::moves`]).
    moves: u64,
}

#[derive(Clone, Copy)]
struct ParkWarp {
    /// The epoch the warp is parked for (`NONE`: not parked) and its step's counts.
    parked: u64,
    lanes: u64,
    insts: u64,
    /// The parked cycle's length (1: the one step in `lanes`, `insts`; more: the steps
    /// in [`Parking::cycles`]) and the step the warp takes next.
    cycle: u8,
    phase: u8,
    /// Steps applied since the warp was last parked.
    applied: u32,
    /// Qualifying steps to let pass before the next probe, and the current gap.
    skip: u32,
    gap: u32,
    /// Cycles of several steps closed to let pass before the next probe of one: after
    /// a failed one, `MAX_GAP` (kept apart from `skip`, so that a loop of several steps
    /// that works, failing its probes, does not delay the probes of a spin of one step).
    multi_skip: u32,
    /// A probe of a cycle of several steps that is screening (see
    /// [`Parking::wants_probe`]), and the steps counted since its first state.
    screening: bool,
    screened: u8,
    /// Qualifying steps in a row (reset by one that does not qualify).
    streak: u32,
    /// The first pcs of the last qualifying steps in a row (newest at `pcs[0]`), and the
    /// cycle length the running probe looks for (0: no probe runs).
    pcs: [u32; MAX_CYCLE],
    period: u8,
    /// Woken by a barrier's release ([`Parking::wake`]) since its last interpreted step.
    kicked: bool,
    /// A cycle of several steps the warp was parked on and has been woken from by an
    /// event: its steps are being checked again under the new memory (see
    /// [`Parking::verify`]), in epoch `verify_epoch`, `verified` of them so far.
    verifying: bool,
    verified: u8,
    verify_epoch: u64,
}

impl Parking {
    pub(super) fn new(warps: usize, effects: Option<u64>, shared: Option<u64>) -> Parking {
        let n = if effects.is_some() { warps } else { 0 };
        Parking {
            on: effects.is_some(),
            epoch: 0,
            global: 0,
            touched: vec![0; n],
            reads: (0..n).map(|_| Reads::default()).collect(),
            watch: HashMap::default(),
            watched: 0,
            wide: Vec::new(),
            effects: effects.unwrap_or(0),
            fine: effects.is_some() && shared.is_some(),
            shared: shared.unwrap_or(0),
            warps: vec![
                ParkWarp {
                    parked: NONE,
                    lanes: 0,
                    insts: 0,
                    cycle: 1,
                    phase: 0,
                    applied: 0,
                    skip: 0,
                    gap: 0,
                    multi_skip: 0,
                    screening: false,
                    screened: 0,
                    streak: 0,
                    pcs: [u32::MAX; MAX_CYCLE],
                    period: 0,
                    kicked: false,
                    verifying: false,
                    verified: 0,
                    verify_epoch: NONE,
                };
                n
            ],
            hist: (0..n).map(|_| Vec::new()).collect(),
            cycles: (0..n).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            moves: 0,
        }
    }

    /// An event: every parked warp runs again.
    #[inline]
    pub(super) fn event(&mut self) {
        self.epoch = self.epoch.wrapping_add(1) % NONE;
        self.global = self.epoch;
        self.moves = self.moves.wrapping_add(1);
        // Every warp's reads are of an epoch that has passed.
        if self.watched != 0 || !self.wide.is_empty() {
            self.watch.clear();
            self.watched = 0;
            self.wide.clear();
        }
    }

    /// Warp `w`'s epoch: it moves at every event for every warp and at every change by
    /// address of a block the warp read ([`Parking::addressed`]), and at nothing else.
    #[inline]
    pub(super) fn epoch_of(&self, w: u32) -> u64 {
        self.global
            .max(self.touched.get(w as usize).copied().unwrap_or(0))
    }

    /// Changes whose blocks are known ([`Hooks::changed_blocks`]), made in a step of warp
    /// `own` (or between steps: `None`): an event for `own` and for the warps whose
    /// counting reads ([`Parking::read`]) include one of `blocks`, no one else.
    ///
    /// Why that is enough: a parked warp's steps are functions of its state and of what
    /// its loads return, and each load's value and effects are functions of what memory
    /// and the hooks hold for the load's own 8-byte block (the contract of
    /// [`Hooks::changed_blocks`]). A warp's counting reads are every block its
    /// interpreted steps read since its epoch last moved, from the step after a probe
    /// started (the steps whose repeat a parking applies, or a check verifies), so a
    /// change elsewhere leaves every one of those loads as it was: the cycle the warp
    /// is parked on, or being probed for, is still the one it would run.
    ///
    /// [`Hooks::changed_blocks`]: crate::hooks::Hooks::changed_blocks
    pub(super) fn addressed(&mut self, blocks: &[u64], own: Option<u32>) {
        self.epoch = self.epoch.wrapping_add(1) % NONE;
        let epoch = self.epoch;
        if let Some(w) = own {
            self.touch(w, epoch);
        }
        if blocks.is_empty() {
            return;
        }
        for b in blocks {
            if self.watch.is_empty() {
                break;
            }
            if let Some(v) = self.watch.remove(b) {
                self.watched -= v.len();
                for (w, g) in v {
                    if self.reads[w as usize].gen == g {
                        self.touch(w, epoch);
                    }
                }
            }
        }
        for (w, g) in std::mem::take(&mut self.wide) {
            if self.reads[w as usize].gen == g {
                self.touch(w, epoch);
            }
        }
    }

    /// Warp `w`'s epoch moves to `epoch`; its reads start over.
    fn touch(&mut self, w: u32, epoch: u64) {
        if let Some(t) = self.touched.get_mut(w as usize) {
            *t = epoch;
            self.moves = self.moves.wrapping_add(1);
            self.reads[w as usize].reset();
        }
    }

    /// Before warp `w`'s interpreted step (after [`Parking::woken`]): whether its loads
    /// count ([`Parking::read`]) — while a probe runs (its states after the first are
    /// compared), while a woken cycle is checked again, and so while the warp is parked
    /// on what they found. Otherwise the warp's reads are dropped.
    #[inline]
    pub(super) fn begin_step(&mut self, w: u32) -> bool {
        let Some(p) = self.warps.get(w as usize) else {
            return false;
        };
        let counting = p.period != 0 || p.verifying;
        let epoch = self.epoch_of(w);
        let r = &mut self.reads[w as usize];
        if !counting || r.epoch != epoch {
            r.reset();
            r.epoch = epoch;
        }
        counting
    }

    /// Warp `w`'s counting step reads block `b` ([`crate::memory::block_key`]).
    #[inline]
    pub(super) fn read(&mut self, w: u32, b: u64) {
        let r = &mut self.reads[w as usize];
        if r.wide || r.blocks.contains(&b) {
            return;
        }
        if r.blocks.len() >= MAX_READS {
            r.wide = true;
            self.wide.push((w, r.gen));
            return;
        }
        r.blocks.push(b);
        self.watch.entry(b).or_default().push((w, r.gen));
        self.watched += 1;
        if self.watched > MAX_WATCHED {
            // Mostly stale pairs of blocks that never changed: starting over costs one
            // wake of every parked warp.
            self.event();
        }
    }

    /// After a step: an event if the hooks' load-effect count moved — or, with hooks
    /// that count the changes others can see (`shared`, [`Hooks::shared_effects`]), the
    /// second result says whether that count moved (the caller then makes it an event,
    /// by address where it can: [`Parking::addressed`]). The first result says whether
    /// the step's own warp must not park on it (its loads did more than read; an event
    /// does that by itself).
    ///
    /// [`Hooks::shared_effects`]: crate::hooks::Hooks::shared_effects
    #[inline]
    pub(super) fn effects(&mut self, count: Option<u64>, shared: Option<u64>) -> (bool, bool) {
        let c = count.unwrap_or(self.effects.wrapping_add(1));
        let moved = c != self.effects;
        self.effects = c;
        match shared {
            Some(s) if self.fine => {
                let changed = s != self.shared;
                self.shared = s;
                (moved, changed)
            }
            _ => {
                if moved {
                    self.event();
                }
                (false, false)
            }
        }
    }

    /// The hooks' count of what others can see is `shared` now, after changes made
    /// outside a step (a stall's drain, exits) that the caller has made events.
    #[inline]
    pub(super) fn sync_shared(&mut self, shared: Option<u64>) {
        if let Some(s) = shared {
            self.shared = s;
        }
    }

    /// Hints the CPU to fetch what [`Parking::parked`] reads of warp `w`.
    #[inline(always)]
    pub(super) fn prefetch(&self, w: u32) {
        if let Some(p) = self.warps.get(w as usize) {
            super::prefetch(p);
        }
        if let Some(t) = self.touched.get(w as usize) {
            super::prefetch(t);
        }
    }

    /// Whether warp `w` is parked now (its next step would be applied), without
    /// counting a step as [`Parking::parked`] does.
    #[inline]
    pub(super) fn is_parked(&self, w: u32) -> bool {
        self.warps
            .get(w as usize)
            .is_some_and(|p| p.parked == self.epoch_of(w) && !p.kicked)
    }

    /// How many times any warp's epoch has moved: an event moves every warp's, a change
    /// by address those of the warps it touches. Equal counts before and after a change
    /// mean the change woke no parked warp.
    #[inline]
    pub(super) fn moves(&self) -> u64 {
        self.moves
    }

    /// The (lane, warp) instruction counts of warp `w`'s step while it is parked (and
    /// one more applied step counted), and what the step writes into the warp (a step
    /// of a cycle of several; empty otherwise).
    #[inline]
    pub(super) fn parked(&mut self, w: u32) -> Option<(u64, u64, &Writes)> {
        let epoch = self.epoch_of(w);
        let p = self.warps.get_mut(w as usize)?;
        if p.parked != epoch || p.kicked {
            return None;
        }
        p.applied = p.applied.saturating_add(1);
        if p.cycle == 1 {
            return Some((p.lanes, p.insts, &NO_WRITES));
        }
        let step = &self.cycles[w as usize][p.phase as usize];
        p.phase = if p.phase + 1 == p.cycle {
            0
        } else {
            p.phase + 1
        };
        Some((step.lanes, step.insts, &step.writes))
    }

    /// Before warp `w`'s interpreted step: if it was parked and has been woken, a parking
    /// that saved fewer steps than a hash costs makes its probes wait longer, one that
    /// saved more lets it probe at once again.
    #[inline]
    pub(super) fn woken(&mut self, w: u32) {
        let epoch = self.epoch_of(w);
        let p = &mut self.warps[w as usize];
        let kicked = std::mem::replace(&mut p.kicked, false);
        if p.parked != NONE {
            p.parked = NONE;
            let multi = p.cycle > 1;
            // A cycle of several steps is checked again from the phase the warp woke in
            // (its state is that phase's, exactly), unless a barrier's release changed
            // the state.
            if p.cycle > 1 && !kicked {
                p.verifying = true;
                p.verified = 0;
                p.verify_epoch = epoch;
            } else {
                self.drop_cycle(w);
            }
            let p = &mut self.warps[w as usize];
            // The pcs of the steps before the parking say nothing about the phase the
            // warp wakes in: the next probe waits for a cycle of pcs again.
            p.pcs = [u32::MAX; MAX_CYCLE];
            if multi {
                // (`verify` parks it again, or drops the cycle.)
            } else if p.applied < MIN_APPLIED {
                p.back_off();
            } else {
                p.gap = 0;
            }
            p.applied = 0;
        }
    }

    /// A barrier's release changed warp `w`'s state (the lanes that waited): it is
    /// parked no more, and the states its probe recorded say nothing about the state
    /// now (without it being an event for every warp: [`Parking::fine`]).
    pub(super) fn wake(&mut self, w: u32) {
        let Some(p) = self.warps.get_mut(w as usize) else {
            return;
        };
        p.kicked = true;
        if p.verifying {
            self.drop_cycle(w);
        }
        if self.warps[w as usize].period != 0 {
            self.clear(w);
        }
    }

    /// Whether warp `w` is checking the cycle it was parked on again: then the state
    /// its next step must end in, and the counts it must take (see [`Parking::verify`]).
    #[inline]
    pub(super) fn verifying(&self, w: u32) -> Option<(&[u64], u64, u64)> {
        let p = self.warps.get(w as usize)?;
        if !p.verifying {
            return None;
        }
        let steps = &self.cycles[w as usize];
        let step = steps.get(p.phase as usize)?;
        let next = steps.get((p.phase as usize + 1) % steps.len())?;
        Some((&next.state, step.lanes, step.insts))
    }

    /// The result of warp `w`'s qualifying step while it checks its cycle again:
    /// `same` when the step took the counts the cycle's step took and ended in the
    /// state it ended in. When every step of the cycle has done so in one epoch, from
    /// the state the warp woke in, the warp is parked on it again: as for a new cycle
    /// (see [`Parking::probe`]), the steps ran from the states the previous ones left
    /// under the same memory and returned to the first, with the same intermediate
    /// states and counts, so the recorded writes are still the steps' writes. Anything
    /// else drops the cycle.
    pub(super) fn verify(&mut self, w: u32, same: bool) {
        let epoch = self.epoch_of(w);
        let p = &mut self.warps[w as usize];
        if !same || p.verify_epoch != epoch {
            self.drop_cycle(w);
            return;
        }
        p.phase = if p.phase + 1 == p.cycle {
            0
        } else {
            p.phase + 1
        };
        p.verified += 1;
        if p.verified == p.cycle {
            p.verifying = false;
            p.parked = epoch;
            p.applied = 0;
        }
    }

    /// Forgets the cycle warp `w` was parked on (its buffers kept for later probes).
    fn drop_cycle(&mut self, w: u32) {
        let p = &mut self.warps[w as usize];
        p.verifying = false;
        p.cycle = 1;
        let steps = &mut self.cycles[w as usize];
        self.spare.extend(steps.drain(..).map(|s| s.state));
    }

    /// Drops warp `w`'s recorded states (their buffers kept for later probes).
    fn clear(&mut self, w: u32) {
        let hist = &mut self.hist[w as usize];
        self.spare.extend(hist.drain(..).map(|r| r.words));
        let p = &mut self.warps[w as usize];
        p.period = 0;
        p.screening = false;
        p.screened = 0;
    }

    /// Warp `w`'s step did not qualify: its next probe starts over (a probe running for
    /// it was wasted, which makes the probes wait longer).
    #[inline]
    pub(super) fn forget(&mut self, w: u32) {
        let p = &mut self.warps[w as usize];
        p.streak = 0;
        p.pcs = [u32::MAX; MAX_CYCLE];
        if p.verifying {
            self.drop_cycle(w);
        }
        let p = &mut self.warps[w as usize];
        if p.period > 1 {
            p.multi_skip = MAX_GAP;
            self.clear(w);
        } else if p.period != 0 {
            p.back_off();
            self.clear(w);
        }
    }

    /// Warp `w`'s step qualified, from `pc0` to `end`: what to do with its state now.
    /// A probe starts after a step that closes a cycle of pcs of at most `MAX_CYCLE`
    /// qualifying steps (its end is where one of them began: the one before `n - 1`
    /// others for a cycle of `n`), unless the warp waits after a failed probe. A cycle
    /// of one step records the state after each step. A cycle of `n` steps is screened
    /// first — the state recorded once, compared in place `n` steps later ([`Parking::
    /// screened`]) — and only a cycle that passed records its next `n` states: a loop
    /// that works (its state moves on every turn) costs one copy and one comparison
    /// per failed probe, not `n + 1` copies.
    #[inline]
    pub(super) fn wants_probe(&mut self, w: u32, pc0: u32, end: u32) -> ProbeAt {
        let p = &mut self.warps[w as usize];
        p.pcs.copy_within(0..MAX_CYCLE - 1, 1);
        p.pcs[0] = pc0;
        p.streak = p.streak.saturating_add(1);
        // (`screened` counts from 0 at a screened cycle's first state: `clear` and
        // `screened` reset it, and only this branch counts.)
        if p.period != 0 && p.screening && !self.hist[w as usize].is_empty() {
            p.screened += 1;
            return if p.screened == p.period {
                ProbeAt::Screen
            } else {
                ProbeAt::Count
            };
        }
        if p.period != 0 {
            return ProbeAt::Record;
        }
        if p.streak < MIN_STREAK {
            return ProbeAt::No;
        }
        // Every cycle of pcs has a step that ends at or before its start (a backward
        // branch, or staying put): the probes start at such steps, and the others
        // (straight-line code) do not search the pcs.
        if end > pc0 {
            return ProbeAt::No;
        }
        let Some(n) = p.pcs.iter().position(|&q| q == end) else {
            return ProbeAt::No;
        };
        // A cycle of several steps is probed only after this many of its turns in a
        // row (as far as the step count says): each of its probes records `n + 1`
        // states, and a loop of a few turns that does real work (a consumer draining
        // a queue of four items) fails every one of them.
        if n > 0 && p.streak < MIN_TURNS * (n as u32 + 1) {
            return ProbeAt::No;
        }
        if n > 0 {
            if p.multi_skip > 0 {
                p.multi_skip -= 1;
                return ProbeAt::No;
            }
        } else if p.skip > 0 {
            p.skip -= 1;
            return ProbeAt::No;
        }
        p.period = n as u8 + 1;
        p.screening = n > 0;
        ProbeAt::Record
    }

    /// The state a screened cycle of warp `w` started from (see [`Parking::screened`]).
    pub(super) fn first_state(&self, w: u32) -> &[u64] {
        self.hist[w as usize].first().map_or(&[], |r| &r.words)
    }

    /// The end of warp `w`'s screening turn: `same` when its state is the one the turn
    /// started from. If so, and no event happened since, the cycle is recorded over its
    /// next turn (from this state, which is the recorded first one); otherwise the probe
    /// failed.
    pub(super) fn screened(&mut self, w: u32, same: bool) {
        let epoch = self.epoch_of(w);
        let wi = w as usize;
        let first = self.hist[wi].first().map(|r| r.epoch);
        if same && first == Some(epoch) {
            let p = &mut self.warps[wi];
            p.screening = false;
            p.screened = 0;
            return;
        }
        self.warps[wi].multi_skip = MAX_GAP;
        self.clear(w);
    }

    /// A buffer for `Machine::park_state`.
    pub(super) fn buffer(&mut self) -> Vec<u64> {
        self.spare.pop().unwrap_or_default()
    }

    /// The state after warp `w`'s qualifying step (`state`, as `Machine::park_state`
    /// writes it), which counted `lanes` lane and `insts` warp instructions, `settled`
    /// when every live lane of the warp is ready (so no other warp can change its state
    /// before it runs again: only a barrier release does that). Parks the warp when the
    /// state `period` steps before (the cycle the probe looks for) was the same and
    /// still stands, and returns whether it parked.
    ///
    /// A cycle of one step parks when the state before the step (known from its
    /// previous step, in this epoch or, for a settled warp, any) was the same: the step
    /// took it from `S` back to `S` (module docs). A cycle of `n` steps parks when the
    /// state `n` steps back was the same and was taken in this epoch: no event since, so
    /// each of the `n` steps ran from the state the previous one left (only a barrier
    /// release, an event, changes a warp's state besides its own steps) under the same
    /// memory, and from there the same `n` steps repeat exactly, for as long as no event
    /// happens. Each applied step then writes back the words in which its state differs
    /// from the one before (`layout` says what each word is; a cycle whose states differ
    /// in a word that is not a pc, a status, the ready mask or a register is not parked),
    /// so the warp's state is the one interpreting would leave at every step — what a
    /// woken warp, the livelock detector and a dump see.
    pub(super) fn probe(
        &mut self,
        w: u32,
        state: Vec<u64>,
        settled: bool,
        lanes: u64,
        insts: u64,
        layout: impl FnOnce(&[u64]) -> Vec<Word>,
    ) -> bool {
        let epoch = self.epoch_of(w);
        let wi = w as usize;
        let period = self.warps[wi].period as usize;
        let hist = &mut self.hist[wi];
        hist.push(Rec {
            words: state,
            epoch,
            settled,
            lanes,
            insts,
        });
        if hist.len() <= period {
            return false;
        }
        let last = hist.len() - 1;
        let first = last - period;
        let (a, b) = (&hist[first], &hist[last]);
        // A state bound to an epoch that has passed says nothing about the state
        // before the next step: a wasted probe, as a failed compare is.
        let stands = if period == 1 {
            a.settled || a.epoch == epoch
        } else {
            a.epoch == epoch
        };
        if stands && a.words == b.words {
            let mut steps = Vec::new();
            if period > 1 {
                // (The warp is in the last state now.)
                let layout = layout(&b.words);
                // (Written part for part as the state; a mismatch would be a bug, and
                // the cycle is then not parked.)
                debug_assert_eq!(layout.len(), a.words.len());
                let fits = layout.len() == a.words.len();
                for i in (first..last).filter(|_| fits) {
                    let (x, y) = (&hist[i].words, &hist[i + 1].words);
                    let mut writes = Writes::default();
                    let mut regs: Vec<(u32, u64)> = Vec::new();
                    for (k, (u, v)) in x.iter().zip(y).enumerate() {
                        if u == v {
                            continue;
                        }
                        let ok = match layout.get(k) {
                            Some(Word::Ready) => u >> 32 == v >> 32,
                            Some(Word::Pc(_)) => u >> 32 == v >> 32,
                            // Ready (tag 0) or waiting at a collective (tag 3) only.
                            Some(Word::Status(_)) => {
                                u & 0xffff_ffff != 1
                                    && u & 0xffff_ffff != 2
                                    && v & 0xffff_ffff != 1
                                    && v & 0xffff_ffff != 2
                            }
                            Some(Word::Reg(_)) => true,
                            Some(Word::Fixed) | None => false,
                        };
                        if !ok {
                            self.warps[wi].multi_skip = MAX_GAP;
                            self.clear(w);
                            return false;
                        }
                        match layout[k] {
                            Word::Reg(i) => regs.push((i, *v)),
                            Word::Pc(l) => {
                                let (bit, pc) = (1u32 << (l % 32), *v as u32);
                                match writes.pcs.iter_mut().find(|(_, p)| *p == pc) {
                                    Some((m, _)) => *m |= bit,
                                    None => writes.pcs.push((bit, pc)),
                                }
                            }
                            word => writes.other.push((word, *v)),
                        }
                    }
                    regs.sort_unstable_by_key(|&(i, _)| i);
                    for (i, v) in regs {
                        match writes.reg_runs.last_mut() {
                            Some((start, len)) if *start + *len == i => *len += 1,
                            _ => writes.reg_runs.push((i, 1)),
                        }
                        writes.reg_vals.push(v);
                    }
                    let next = &hist[i + 1];
                    steps.push(CycleStep {
                        state: Vec::new(),
                        lanes: next.lanes,
                        insts: next.insts,
                        writes,
                    });
                }
            }
            if period > 1 && steps.len() != period {
                self.warps[wi].multi_skip = MAX_GAP;
                self.clear(w);
                return false;
            }
            // Each step keeps the state it starts from (for `verify`).
            if period > 1 {
                for (step, rec) in steps.iter_mut().zip(hist.drain(first..last)) {
                    step.state = rec.words;
                }
            }
            // After a wake a warp on a cycle of one step is still in this state: its
            // first step that leaves it there parks it again (the probe goes on from
            // this state). A longer cycle is checked again step by step (`verify`).
            let keep = if period == 1 { hist.pop() } else { None };
            self.clear(w);
            self.drop_cycle(w);
            if let Some(r) = keep {
                self.hist[wi].push(r);
                self.warps[wi].period = 1;
            }
            self.cycles[wi] = steps;
            let p = &mut self.warps[wi];
            p.parked = epoch;
            p.lanes = lanes;
            p.insts = insts;
            p.cycle = period as u8;
            p.phase = 0;
            p.applied = 0;
            return true;
        }
        // A failed probe of a cycle of several steps cost `n + 1` states: the next
        // probe waits as long as any may.
        let p = &mut self.warps[wi];
        if period > 1 {
            p.multi_skip = MAX_GAP;
        } else {
            p.back_off();
        }
        self.clear(w);
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
        | Op::Elect { .. }
        | Op::Redux { .. }
        | Op::Activemask { .. }
        | Op::Ldmatrix { .. }
        | Op::Mma { .. }
        | Op::WmmaLoad { .. }
        | Op::WmmaMma { .. }
        | Op::Nanosleep
        | Op::Nop => false,
        // A wait only reads the barrier; `pending_count` reads a register.
        Op::Mbar { kind, .. } => !matches!(
            kind,
            crate::program::MbarKind::Test { .. }
                | crate::program::MbarKind::PendingCount
                | crate::program::MbarKind::Inval
        ),
        Op::St { space, .. } => !matches!(space, MemSpace::Local | MemSpace::FrameParam),
        // A texture fetch reads memory without the load path that records what a parked
        // warp waits on: a loop with one is never parked.
        Op::Tex { .. } | Op::Suld { .. } | Op::Sust { .. } => true,
        // Stores to global or shared memory (local memory faults).
        Op::WmmaStore { .. } => true,
        Op::Atom { .. }
        | Op::AtomVec { .. }
        | Op::Vprintf { .. }
        | Op::AssertFail { .. }
        | Op::DevMalloc { .. }
        | Op::DevFree { .. }
        | Op::Exit
        | Op::Trap
        | Op::Brkpt
        | Op::Bar { .. }
        | Op::WarpSync { .. }
        | Op::Fence { .. }
        | Op::CpAsync { .. }
        | Op::BulkCopy { .. }
        | Op::CpAsyncCommit
        | Op::CpAsyncWait { .. } => true,
    }
}
