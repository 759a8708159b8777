//! An exhaustive axiomatic checker of the PTX memory model for small litmus programs:
//! the reference the operational models (`sc`, `bugaroo`, `scoped`, `weak`) are judged
//! against.
//!
//! # Which model
//!
//! The PTX memory consistency model of the PTX ISA (chapter "Memory Consistency Model",
//! §8 in the 7.x–8.x manuals; section numbers below are that chapter's), in the axiomatic
//! form of Lustig, Sahasrabuddhe and Giroux, "A Formal Analysis of the NVIDIA PTX Memory
//! Consistency Model" (ASPLOS'19), without proxies — the model Dat3M encodes in
//! `ptx-v7.5.cat`, whose verdicts on the Dat3M litmus tests are the cross-check
//! (`../shared/litmus/expected-ptx-v7.5.csv`; the test `tests/dat3m/axiom.rs` asserts
//! agreement). That encoding was read for facts where the manual leaves a choice open;
//! those choices are listed below.
//!
//! # How
//!
//! A *candidate execution* is: one [`trace`] per thread (a path through its code with a
//! value for every read), a way the barrier arrivals form barrier phases, a write for
//! every read to read from (`rf`: the initial write or any write of the same location and
//! value), an orientation of every pair of morally strong `fence.sc` (the Fence-SC order)
//! and of every pair of morally strong writes to one location that causality does not
//! already order (the coherence order). The checker enumerates them all, computes the
//! relations below, keeps the candidates that satisfy the six axioms, and reports the
//! final states: final registers of the traces, and for each location the value of a
//! write last in coherence order (any of them when coherence leaves several last).
//!
//! Enumeration is pruned where that cannot lose a state: reads only pick writes with the
//! value they guessed and not later writes of their own thread; a choice of traces whose
//! every possible final state is already known is skipped; coherence is built minimal
//! (see below), since every axiom only gets harder to satisfy with more coherence order.
//! Two-to-four-thread programs of a few operations take well under a millisecond to a
//! few milliseconds (`tests/it/axiom_shapes.rs`, BENCHMARKS.md).
//!
//! # The relations and axioms
//!
//! * **Strong** (§8.4): fences, atomics (`atom`, `red`, `cas`, also when a `cas` fails),
//!   and loads/stores whose semantics is not `.weak`; `volatile` is `.relaxed.sys`.
//! * **Morally strong** (§8.7): two different operations of the same thread, or two strong
//!   operations each of whose scope includes the other's thread (`.cta`: same CTA, `.gpu`:
//!   same GPU, `.sys`: all); two memory operations only if they access the same location
//!   (every location is one 32-bit word, so "overlap completely" is "same location").
//! * **Release pattern** on location M (§8.8), from its first operation to a strong write
//!   W on M: (a) a release operation W (`st.release`, `atom`/`red` `.release`/`.acq_rel`);
//!   (b) a release operation on M followed in program order by W; (c) a fence (`fence.sc`
//!   or `fence.acq_rel`) followed in program order by W. **Acquire pattern** on M, from a
//!   strong read R on M to its last operation: (a) an acquire operation R (`ld.acquire`,
//!   `atom` `.acquire`/`.acq_rel`); (b) R followed in program order by an acquire
//!   operation on M; (c) R followed in program order by a fence. [`Forms`] can switch the
//!   (b) forms off (to tell whether an unsound outcome is explained by a model that misses
//!   them).
//! * **Observation order** (§8.9.2): W precedes R if R reads W and they are morally
//!   strong, or through a chain of atomic read-modify-writes each observing the previous
//!   (release sequences through other threads' RMWs).
//! * **Fence-SC order** (§8.9.3): an acyclic order relating every pair of morally strong
//!   `fence.sc`; all orientations are enumerated.
//! * **Synchronizes-with** (§8.9.4): a `fence.sc` with every later one in Fence-SC order; a
//!   barrier arrival (`bar.sync`, `bar.arrive`, `bar.warp.sync`) with every waiting
//!   participant of the same barrier phase; a release pattern with an acquire pattern when
//!   the pattern's write precedes the pattern's read in observation order and the
//!   release pattern's first operation and the acquire pattern's last one are morally
//!   strong.
//! * **Base causality order** (§8.9.5): program order and synchronizes-with, transitively.
//!   **Causality order**: base causality order, or an observation followed by base
//!   causality order.
//! * **Coherence order** (§8.9.6): a partial order on the writes of a location; the initial
//!   write is first, writes ordered by causality are ordered the same way (axiom
//!   Coherence), morally strong writes are ordered one way or the other, and writes in a
//!   data race are not ordered. From-read: `fr = rf⁻¹; co`.
//! * Axioms (§8.10): **Coherence** (above); **Fence-SC**: Fence-SC order does not
//!   contradict causality order; **Atomicity**: no morally strong write W with an RMW A
//!   reading a write coherence-before W while A is coherence-after W; **No-Thin-Air**:
//!   `rf ∪ dep` acyclic, with data and control dependencies through registers (every
//!   event after a branch on a loaded value depends on it); **SC per location**: program
//!   order between same-location operations and morally strong `rf`, `co`, `fr` do not
//!   form a cycle; **Causality**: `(rf ∪ fr); cause` is irreflexive.
//!
//! # Barriers
//!
//! `bar.cta.sync C[, ID[, Q]]` and `bar.cta.arrive` use resource `ID` (a register is
//! read at run time), else the instance constant `C`, in the thread's CTA. Without a
//! thread count, a phase is every participating thread's k-th arrival and completes when
//! every thread that arrives at that resource in the execution has arrived (Dat3M's
//! barrier instance consists of the threads that execute it, which
//! `SB+named-bar-dyn-reg-const` needs); with count `Q`, any `Q` threads' next arrivals
//! form a phase, in every possible way. A phase that never completes leaves its waiting
//! threads stuck: such an execution has a final state only if every stuck thread's barrier
//! is its last instruction (the `quorum*-pass` tests). Arrivals and completions must not
//! wait on each other in a cycle (a deadlock has no final state). `bar.warp.sync` (a
//! fencehound extension, `@…,warp N`) is a barrier of the threads of one warp that
//! execute it (its member mask); the PTX ISA's description of `bar.warp.sync` states that
//! it orders memory among the participating threads.
//!
//! # Deliberate choices where the manual is open
//!
//! * Coherence order is partial (the manual's words; `Co-Total-3-threads-scope-same` is
//!   allowed only so), and the Causality axiom is the irreflexivity of `(rf ∪ fr); cause`
//!   with `fr` from that partial order — not the manual's sentence "R must read W or a
//!   write coherence-after W", which under a partial order would forbid that test.
//! * SC per location forbids any cycle of morally strong communication and same-location
//!   program order, not only cycles within a set of pairwise morally strong operations.
//! * The Causality axiom uses `rf ∪ fr`, not `rf ∪ co ∪ fr` (the Alloy model of PTX 7.5
//!   has the latter; `co; cause` cycles among writes are already excluded by Coherence).
//!
//! # Not modelled
//!
//! Proxies (`fence.proxy.*`, texture/surface/constant accesses: reported unsupported),
//! mixed-size and partially overlapping accesses, `.cluster` scope, `fence.acquire` /
//! `fence.release` (PTX 8.6), `membar`, `bar.red`, and barrier thread counts in registers
//! (unsupported). Loops are unrolled: a path may jump backwards at most
//! [`Options::loop_bound`] times, and longer paths are dropped ([`Outcomes::cut`]
//! says so) — for spin loops that only read, more iterations add no final state.

pub mod check;
pub mod rel;
pub mod trace;

use crate::ast::{LitmusTest, Pos, Quantifier, Var};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum AxiomError {
    /// Valid litmus that the checker does not model.
    #[error("{pos}: not modelled by the axiomatic checker: {what}")]
    Unsupported { pos: Pos, what: String },
    /// Too large to enumerate.
    #[error("beyond the axiomatic checker's limits: {0}")]
    Limit(String),
    /// A consistent execution computes something PTX leaves undefined.
    #[error("an allowed execution is undefined in PTX: {0}")]
    Undefined(String),
}

/// Which forms of release and acquire patterns count (all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Forms {
    /// A release operation on M followed in program order by a strong write on M.
    pub release_then_write: bool,
    /// A strong read on M followed in program order by an acquire operation on M.
    pub read_then_acquire: bool,
}

impl Default for Forms {
    fn default() -> Self {
        Forms {
            release_then_write: true,
            read_then_acquire: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Backward jumps one path may take.
    pub loop_bound: u32,
    /// Paths per thread.
    pub max_traces: usize,
    /// Distinct (value, derivation) pairs written.
    pub max_values: usize,
    /// Rounds of the value-domain fixed point.
    pub max_rounds: usize,
    /// Also compute the final states of sequentially consistent executions.
    pub sc: bool,
    /// Also compute [`Outcomes::total_co`] and [`Outcomes::plain`].
    pub total_co: bool,
    /// A failing `atom.cas` writes back the value it read, as the PTX ISA's description of
    /// `atom` reads (`cas(r,s,t) = (r == s) ? t : r`, stored), instead of only reading (the
    /// default: Dat3M's encoding, C++'s failed compare-exchange). Off for verdicts; used to
    /// tell which unsound outcomes this difference explains ([`crate::known`]).
    pub failed_cas_writes: bool,
    /// Coherence order is closed transitively (the default, as the manual says: "a partial
    /// transitive order"). Off only to tell which unsound outcomes a model that misses
    /// transitive coherence explains ([`crate::known`]).
    pub co_transitive: bool,
    /// Check axiom 5, SC per location (the default). Off only to tell which unsound
    /// outcomes a model that checks reads against known writes alone explains.
    pub sc_per_location: bool,
    /// An RMW's write follows its own read in base causality order (the default: program
    /// order). Off only to tell which unsound outcomes a model explains whose RMW releases
    /// publish what the thread knew before the RMW's acquire, not what it acquired.
    pub rmw_publishes_acquired: bool,
    /// A `.gpu`/`.sys` `fence.sc` synchronizes with every later morally strong `fence.sc`,
    /// `.cta` ones included (the default). Off only to tell which unsound outcomes a model
    /// explains that does not pass a wide SC fence's knowledge on to a later `.cta` one.
    pub sc_wide_to_cta: bool,
    pub forms: Forms,
    /// Also compute [`Outcomes::races`] (turns off the pruning of trace choices whose
    /// final states are all known: race facts need every consistent execution).
    pub races: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            loop_bound: 2,
            max_traces: 20_000,
            max_values: 256,
            max_rounds: 32,
            sc: false,
            total_co: false,
            failed_cas_writes: false,
            co_transitive: true,
            sc_per_location: true,
            rmw_publishes_acquired: true,
            sc_wide_to_cta: true,
            forms: Forms::default(),
            races: false,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Choices of one trace per thread.
    pub trace_choices: u64,
    /// Of those, skipped because every state they could end in was known.
    pub pruned: u64,
    /// Reads-from choices examined.
    pub rf_choices: u64,
    /// Consistent candidates (with their coherence orders).
    pub consistent: u64,
}

/// The final states of a test, over [`LitmusTest::observed`] (in that order).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcomes {
    pub vars: Vec<Var>,
    /// Final states of executions the PTX model allows.
    pub allowed: BTreeSet<Vec<i64>>,
    /// Final states of sequentially consistent executions (with [`Options::sc`]).
    pub sc: BTreeSet<Vec<i64>>,
    /// Final states of allowed executions in which `po ∪ rf` is acyclic: no read returns
    /// a value from a write that comes later in program order and reads-from (load
    /// buffering). A model whose loads only read stores already executed reaches at most
    /// these; the others need a load to see the future.
    pub in_order: BTreeSet<Vec<i64>>,
    /// Final states of allowed executions whose coherence order is total (each
    /// location's final value is the last of all its writes) and puts every RMW's write
    /// after the write its read returned (with [`Options::total_co`]). The others need
    /// writes that race to stay unordered (the final value is then any write last in the
    /// partial coherence order) or an RMW whose write precedes what it read (PTX allows
    /// both between operations that are not morally strong) — no memory that serializes
    /// each location's stores ends that way.
    pub total_co: BTreeSet<Vec<i64>>,
    /// Final states of allowed executions that are both in order (`po ∪ rf` acyclic) and
    /// serial as for [`Outcomes::total_co`] (with [`Options::total_co`]): what a model
    /// whose loads read stores already executed, in a memory that serializes each
    /// location's stores, can produce at most.
    pub plain: BTreeSet<Vec<i64>>,
    /// Some path exceeded [`Options::loop_bound`] and was dropped.
    pub cut: bool,
    pub stats: Stats,
    /// With [`Options::races`]: every pair of accesses of different threads to one
    /// location that conflict in some consistent execution, and what the executions say
    /// about them (the reference the race check is judged against,
    /// [`crate::racejudge`]).
    pub races: BTreeMap<(InstrRef, InstrRef), PairFacts>,
}

/// An instruction of a test: (index of its thread in [`LitmusTest::threads`], index of
/// the instruction in that thread).
pub type InstrRef = (usize, usize);

/// What the consistent executions say about a pair of conflicting accesses (two memory
/// instructions of different threads, one location, at least one an instruction that
/// writes: a store or an atomic).
///
/// *Ordered* means causality order (§8.9.5) relates them, one way or the other: the
/// later one's first event follows the earlier one's last event (an RMW is its read and
/// its write). PTX calls a pair that is not morally strong and unordered in some
/// consistent execution a *data race*; the race check's `unordered` class (issue 23.3,
/// `racecheck/src/check.rs`) reports a subset of the morally strong unordered pairs,
/// which [`PairFacts::must_report`] states in terms of the axiomatic relations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PairFacts {
    /// Morally strong (§8.7): strong, each scope including the other's thread.
    pub morally_strong: bool,
    /// Some consistent execution leaves the pair unordered. A report of the race check,
    /// of any class, on a pair where this is false is a false alarm.
    pub unordered: bool,
    /// The race check must report the pair (in some execution it observes), as:
    /// * a data race: not morally strong and unordered — unless the read is a `.weak`
    ///   load its thread validates with a later `atom.cas` on the location (the CAS loop
    ///   of the CUDA programming guide, which the race check deliberately exempts);
    /// * `unordered`, for a morally strong pair unordered in some consistent execution
    ///   in which (rule 2) both write different values, not both atomics, the later in
    ///   coherence order is no atomic, comes right after the earlier one (nothing written
    ///   between them), and its thread read nothing of the location
    ///   coherence-after-or-equal the earlier write before it — judged on total coherence
    ///   orders in which every RMW reads the write just before its own, the executions of
    ///   a memory that serializes each location's writes, which is what the race check
    ///   compares a write against; or
    ///   (rule 3) one writes and the other only reads, not both atomics, the write
    ///   completes no release pattern and the read starts no acquire pattern (§8.8, every
    ///   form), and the read is no load that a later `cas` of its thread on the
    ///   location checks (the CAS loop, exempt as for data races). An atomic that wrote
    ///   the value it read counts as a read here.
    ///   Neither rule requires a pair that is a store-buffering *handshake*: the earlier
    ///   write (rule 2; the write, rule 3) followed in program order by a `fence.sc`, the
    ///   other access preceded by one, the two fences morally strong (Dekker's and
    ///   Peterson's words: fence-SC order decides which side goes first, and every
    ///   outcome is a sequentially consistent one).
    pub must_report: bool,
}

/// Every final state the PTX model allows (and, with `opts.sc`, the SC ones).
pub fn outcomes(test: &LitmusTest, opts: &Options) -> Result<Outcomes, AxiomError> {
    let prog = trace::Prog::new(test)?;
    let (traces, cut) = trace::traces(&prog, opts)?;
    let mut c = check::Checker::new(test, &prog.locs, &prog.init, opts);
    c.run(&traces)?;
    c.out.cut = cut;
    Ok(c.out)
}

/// The checker's verdict on a test's condition.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Some allowed final state is the test's target (satisfies the condition for
    /// `exists`/`~exists`, violates it for `forall`).
    pub target_allowed: bool,
    /// The verdict as `expected-ptx-v7.5.csv` writes it: whether the condition holds as
    /// quantified (`exists`: some allowed state satisfies it; `~exists`: none does;
    /// `forall`: all do).
    pub holds: bool,
    pub outcomes: Outcomes,
}

pub fn verdict(test: &LitmusTest, opts: &Options) -> Result<Verdict, AxiomError> {
    let outcomes = outcomes(test, opts)?;
    let target_allowed = outcomes
        .allowed
        .iter()
        .any(|s| crate::expect::is_target(test, s));
    let holds = match test.condition.quantifier {
        Quantifier::Exists => target_allowed,
        Quantifier::NotExists | Quantifier::Forall => !target_allowed,
    };
    Ok(Verdict {
        target_allowed,
        holds,
        outcomes,
    })
}
