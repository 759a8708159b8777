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

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Lane instructions without a change before detection starts, at least.
const QUIET: u64 = 1 << 20;
/// States remembered per warp; a warp whose cycle is longer is never called cycling.
const MAX_STATES: usize = 1 << 12;

/// FxHash-style word hasher: the states are hashed once each and compared only by hash.
#[derive(Default)]
pub(super) struct StateHasher(u64);

impl Hasher for StateHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(b) ^ (rest.len() as u64) << 56);
        }
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
