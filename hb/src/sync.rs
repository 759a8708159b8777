//! The synchronization rules of the PTX memory model, as one engine that the `weak` memory
//! model (`handlers`) and the race check (`racecheck`) both feed with the events of an
//! execution, so that the two never disagree on what synchronizes.
//!
//! # The rules (PTX ISA §8 "Memory Consistency Model"; Lustig et al., ASPLOS'19; the
//! formalization in Dat3M's `ptx-v7.5.cat`)
//!
//! * **Morally strong.** Two operations are morally strong relative to each other when
//!   both are strong (`.relaxed`, `.acquire`, `.release`, `.acq_rel`, `.sc`, atomics,
//!   `volatile` = `.relaxed.sys`, fences) and each one's scope contains the other's thread.
//!   A `.cta` operation therefore only relates to threads of its own CTA. (`.cluster`
//!   counts as the CTA: the vgpu launches no multi-CTA clusters.)
//! * **Release pattern** on a location M — the PTX ISA (§8.8, "Release and Acquire
//!   Patterns") lists three forms: (1) a release operation on M (`st.release`,
//!   `atom.release` / `.acq_rel`, `red.release`); (2) a release operation on M followed in
//!   program order by a strong write on M (`st.release [M]; st.relaxed [M]`); (3) a
//!   release-capable fence (`fence.sc`, `fence.acq_rel`, `fence.release`, `membar`)
//!   followed in program order by a strong write on M. It orders what precedes its
//!   *first* operation. Form (2) is why a thread remembers, per location, the snapshot of
//!   its latest release operation there ([`ThreadSync::rel_ops`]): a later strong write
//!   to an overlapping location carries it, so `st.release [x],1; st.relaxed [x],2` read
//!   as 2 by an acquire pattern still publishes what preceded the release.
//! * **Acquire pattern** on M, three forms: (1) an acquire operation on M (`ld.acquire`,
//!   `atom.acquire` / `.acq_rel`); (2) a strong read on M followed in program order by an
//!   acquire operation on M; (3) a strong read on M followed in program order by an
//!   acquire-capable fence (`fence.sc`, `fence.acq_rel`, `fence.acquire`, `membar`). It
//!   orders what follows its *last* operation. Forms (2) and (3) share one mechanism:
//!   what a strong read observed waits in the reader's pending lists until an acquire
//!   fence or an acquire operation takes it (the latter on any location: an
//!   over-approximation, below).
//! * **Synchronizes**: a release pattern with an acquire pattern when the acquire's read
//!   observes the release's write — reads it through a morally strong read, or reads a
//!   chain of morally strong atomic read-modify-writes starting at it (the PTX
//!   *observation order*, i.e. release sequences through other threads' RMWs) — and the
//!   pattern's first operation is morally strong with the acquire's last one.
//! * **Fence-SC order**: morally strong `fence.sc` operations are totally ordered (we take
//!   the order the vgpu executed them in) and each synchronizes with the later ones.
//! * **Barriers** (`bar.sync`/`barrier.sync`/`bar.red`, named and counted; `bar.arrive`;
//!   `bar.warp.sync`): every arrival synchronizes with every waiting participant of the
//!   same barrier instance.
//! * **Kernel boundaries**: a launch starts with every earlier write visible.
//! * Causality order is the transitive closure of program order and these, possibly
//!   starting with one observation ([`crate::obs`]).
//!
//! # Representation
//!
//! A thread's [`Knowledge`] is what happens before its next operation: a vector clock
//! over epochs ([`crate::clock`]) plus a few single entries kept beside it (so publishing
//! one thread's new epoch does not copy its CTA's chunk), its observations, and how much
//! of the fence-SC order it has seen. A thread's epoch grows each time it publishes its
//! knowledge (a release, a release fence, a barrier arrival), so accesses after the
//! publication are not covered by it.
//!
//! A strong write carries a [`Message`]: what its release pattern(s) publish, split by who
//! may acquire it — `wide` (patterns whose first operation has scope ≥ `.gpu`: any
//! acquirer whose own scope is ≥ `.gpu`) and `local` per releasing CTA (every pattern begun
//! in that CTA: acquirers of that CTA whatever their scope). A CTA-scope publication is
//! kept per CTA for as long as the release sequence continues, whoever extends it, so one
//! CTA's `.cta` release survives another CTA's atomic on the same flag.
//!
//! **Fence-SC order without joins.** A `.gpu`/`.sys` `fence.sc` must make its thread know
//! everything every earlier such fence knew. Joining one ever-growing clock at every fence
//! costs O(threads) per fence. Instead the engine keeps, per writer, the fence number from
//! which the fence-SC order knows each of its epochs ([`ScOrder`]); a thread only records
//! the number of the last SC fence it has seen (`sc_seen`, carried by every publication),
//! and "does `T` know `w`'s epoch `e`" also asks whether the SC order knew it by fence
//! `sc_seen`. A fence folds only the clock chunks that changed since the last fence into
//! the order, so it costs O(threads per CTA). A fence's release snapshot is marked as
//! exactly what the order knew by its number (`Knowledge::sc_exact`): knowledge that has
//! seen that fence covers it, so a release sequence of RMWs each after its thread's
//! `__threadfence()` keeps the newest snapshot instead of joining them all.
//!
//! **Release sequences as labelled chains.** An RMW's message continues the chain of the
//! write it read by reference, and the chain collapses level by level
//! ([`Message::continued`]). A reader keeps what it read pending until an acquire, and
//! asks two questions of chains: does a newer message cover a pending older one, and where
//! does the part of a chain it has not joined yet end. Each node carries a [`Label`] —
//! its sequence and its place there — that answers both after the older nodes have
//! collapsed away (pointers alone cannot), and a collapsed node's CTA parts and spill
//! share the wide part's clock chunks where they are equal, so an acquirer that takes
//! both compares them by pointer. Neither changes what any thread knows.
//!
//! **Shared with `Rc`, not `Arc`.** Knowledge, clock chunks, observations and messages are
//! shared by reference counting, and an engine (with the race check or weak model around
//! it) lives and dies inside one execution on one OS thread: nothing is ever shared across
//! threads, so the counts need not be atomic. In `scale_fences` of the race-check
//! benchmark (65,536 threads, each a store, a fence and an RMW) a thread takes and drops
//! about twenty references, and the atomic `lock`-prefixed updates were 4–5 ms of
//! 36 ms (`cargo run --release -p fencehound-racecheck --example bench -- 9
//! scale_fences`: 36.1–37.2 ms with `Arc`, 32.1–32.6 ms with `Rc`). The price: an
//! [`Hb`] (and the checkers that hold one) is not `Send`, so build it on the thread that
//! runs the execution, as the fuzzer does.
//!
//! # Over-approximations (each adds synchronization, so it only removes behaviours)
//!
//! * A strong read followed by a later acquire *read* of any location acquires what the
//!   first read observed (PTX requires the same location).
//! * A release operation or fence publishes the thread's whole knowledge, including what a
//!   preceding acquire part of the same instruction just acquired.
//! * More than [`LOCAL_CAP`] releasing CTAs in one message node (or in the [`CHAIN`]
//!   nodes a chain collapses into one, see [`Message::continued`]) fold into one `spill`
//!   publication that every CTA-scope acquirer takes.
//! * Observations are thresholds ([`crate::obs`]).

use crate::clock::VClock;
use crate::fasthash::FastMap;
use crate::ids::{CtaId, Epoch, Tid, Tpb};
use crate::obs::Obs;
use crate::ord::{ReadOrd, WriteOrd};
use fencehound_vgpu::{Barrier, BarrierKind, FenceKind, Location, Scope, Sem, ThreadRef};
use smallvec::{smallvec, SmallVec};
use std::rc::Rc;

/// Releasing CTAs kept apart in one [`Message`]; more are joined into its `spill`.
pub const LOCAL_CAP: usize = 8;

/// Single entries a [`Knowledge`] keeps beside its clock before folding them in.
const EXTRA: usize = 4;

/// Whether a scope reaches threads of other CTAs (`.gpu`, `.sys`). `.cluster` counts as
/// the CTA: the vgpu launches no multi-CTA clusters.
#[inline]
pub fn wide(s: Scope) -> bool {
    s >= Scope::Gpu
}

/// Whether an access with these semantics is strong (morally strong with other strong
/// accesses at sufficient scope). `volatile` is `.relaxed.sys`.
///
/// This and [`acquires`] / [`releases`] classify an instruction as a whole, by the vgpu's
/// `Sem`; the engine itself takes a [`ReadOrd`] for a read and a [`WriteOrd`] for a write.
#[inline]
pub fn strong(sem: Sem) -> bool {
    sem != Sem::Weak
}

/// Whether an instruction with these semantics acquires (its read is an acquire).
#[inline]
pub fn acquires(sem: Sem) -> bool {
    matches!(sem, Sem::Acquire | Sem::AcqRel | Sem::Sc)
}

/// Whether an instruction with these semantics releases (its write is a release).
#[inline]
pub fn releases(sem: Sem) -> bool {
    matches!(sem, Sem::Release | Sem::AcqRel | Sem::Sc)
}

/// Whether two strong operations by threads of CTAs `a` and `b` with scopes `sa` and `sb`
/// are morally strong relative to each other (each scope contains the other thread).
#[inline]
pub fn scopes_meet(a: CtaId, sa: Scope, b: CtaId, sb: Scope) -> bool {
    a == b || (wide(sa) && wide(sb))
}

/// What a thread knows: the accesses that happen before its next operation, and the
/// stores it has observed ([`Obs`]).
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    clock: VClock,
    /// (cta, tid, epoch) entries beside the clock, sorted by (cta, tid).
    extra: [(CtaId, Tid, Epoch); EXTRA],
    extras: u8,
    pub obs: Obs,
    /// The fence-SC order is known up to (and including) this SC fence number.
    sc_seen: u32,
    /// This knowledge is exactly what the `.gpu`/`.sys` fence.sc number `sc_seen` folded
    /// into the fence-SC order (its release snapshot), so any knowledge whose `sc_seen` is
    /// at least as high covers it through the order ([`Knowledge::covers`]). Every change
    /// of the knowledge clears it. (A flag, not a number: it fits beside `extras`.)
    sc_exact: bool,
}

impl Knowledge {
    /// The clock entries of CTA `cta` (a lower bound of [`Knowledge::get`] for its
    /// threads: single entries and the SC order may add more).
    #[inline]
    pub fn clock_chunk(&self, cta: CtaId) -> Option<&[Epoch]> {
        self.clock.chunk(cta)
    }

    /// The epoch of thread (`cta`, `tid`) this knowledge covers (without the SC order).
    #[inline]
    pub fn get(&self, cta: CtaId, tid: Tid) -> Epoch {
        let mut e = self.clock.get(cta, tid);
        if self.extras == 0 {
            return e;
        }
        for &(c, t, x) in &self.extra[..self.extras as usize] {
            if c == cta && t == tid {
                e = e.max(x);
            }
        }
        e
    }

    pub fn sc_seen(&self) -> u32 {
        self.sc_seen
    }

    pub fn clock(&self) -> &VClock {
        &self.clock
    }

    /// Extra entries (cta, tid, epoch) kept beside the clock.
    pub fn extras(&self) -> &[(CtaId, Tid, Epoch)] {
        &self.extra[..self.extras as usize]
    }

    /// Raises the entry of (`cta`, `tid`) to at least `e`; `tpb` sizes clock chunks.
    pub fn raise(&mut self, cta: CtaId, tid: Tid, tpb: Tpb, e: Epoch) {
        self.sc_exact = false;
        // Already known, or into the clock when its chunk for `cta` is this knowledge's
        // alone (an accumulator: a collapsed release sequence, a barrier): no copy, and
        // the single entries stay free for threads whose chunk is shared.
        if self.clock.raise_in_place(cta, tid, e) {
            return;
        }
        let n = self.extras as usize;
        for x in &mut self.extra[..n] {
            if x.0 == cta && x.1 == tid {
                x.2 = x.2.max(e);
                return;
            }
        }
        if n == EXTRA {
            self.fold(tpb);
            self.clock.raise(cta, tid, tpb, e);
            return;
        }
        self.extra[n] = (cta, tid, e);
        self.extras += 1;
    }

    /// Moves the extra entries into the clock.
    fn fold(&mut self, tpb: Tpb) {
        self.sc_exact = false;
        let n = self.extras as usize;
        self.clock.raise_all(tpb, &self.extra[..n]);
        self.extras = 0;
    }

    /// Whether joining `o` into `self` changes nothing because `o` is made of what `self`
    /// holds (the same clock by reference, no single entries, observations none or the
    /// same by reference, no later SC fence): cheap, may say false.
    #[inline(always)]
    fn holds_same(&self, o: &Knowledge) -> bool {
        o.extras == 0
            && o.sc_seen <= self.sc_seen
            && self.clock.same(&o.clock)
            && o.obs.same_or_empty(&self.obs)
    }

    /// `self := self ⊔ o`. Inline when `o` holds nothing beyond `self` by reference
    /// ([`Knowledge::holds_same`]: every barrier arrival after the first between two
    /// barriers — the call itself was a sixth of an arrival), out of line otherwise.
    #[inline]
    pub fn join(&mut self, o: &Knowledge, tpb: Tpb) {
        if !self.holds_same(o) {
            self.join_slow(o, tpb);
        }
    }

    #[inline(never)]
    fn join_slow(&mut self, o: &Knowledge, tpb: Tpb) {
        self.sc_exact = false;
        self.clock.join(&o.clock);
        for &(c, t, e) in o.extras() {
            self.raise(c, t, tpb, e);
        }
        self.obs.join(&o.obs);
        self.sc_seen = self.sc_seen.max(o.sc_seen);
    }

    /// `self := self ⊔ o` for every `o` in `others`, their single entries raised in one
    /// batch: a collapsing release sequence joins [`CHAIN`] single-thread releases,
    /// and one copy-on-write per touched chunk replaces a lookup and a uniqueness check
    /// per entry. (Same knowledge as joining them one by one; only how the entries are
    /// split between the clock and the single entries differs.)
    fn join_many(&mut self, others: &[&Knowledge], tpb: Tpb) {
        self.sc_exact = false;
        let mut batch: SmallVec<[(CtaId, Tid, Epoch); 64]> = SmallVec::new();
        for o in others {
            self.clock.join(&o.clock);
            self.obs.join(&o.obs);
            self.sc_seen = self.sc_seen.max(o.sc_seen);
            batch.extend(o.extras().iter().copied());
        }
        if batch.len() + self.extras as usize <= EXTRA {
            for (c, t, e) in batch {
                self.raise(c, t, tpb, e);
            }
            return;
        }
        batch.extend(self.extras().iter().copied());
        self.extras = 0;
        // Grouped by CTA (usually already: a chain is mostly one CTA's threads at a time)
        // so that each chunk is looked up and copied once.
        if !batch.is_sorted_by_key(|x| x.0) {
            batch.sort_unstable_by_key(|x| x.0);
        }
        // More entries than fit beside the clock: it changes (or is copied) anyway.
        self.clock.raise_all_unchecked(tpb, &batch);
    }

    /// Whether `self` already covers everything in `o` (cheap, may say false): directly,
    /// or through the fence-SC order when `o` is the release snapshot of a fence.sc that
    /// `self` has seen — what the order knew by that fence, `self` knows
    /// ([`Hb::covers`] asks the order), and that snapshot's observations are what
    /// `self` must hold itself (the order does not carry them into `sc_seen`).
    fn covers(&self, o: &Knowledge) -> bool {
        if o.sc_exact && o.sc_seen <= self.sc_seen && (o.obs.is_empty() || o.obs == self.obs) {
            return true;
        }
        o.sc_seen <= self.sc_seen
            && (o.obs.is_empty() || o.obs == self.obs)
            && o.extras().iter().all(|&(c, t, e)| self.get(c, t) >= e)
            && self.clock.dominates(&o.clock)
    }
}

/// `dst := dst ⊔ s` for every `s` in `srcs` (at most one copy on write). When the newest
/// source left covers `dst` and the other sources (a chain of RMWs each after its thread's
/// `__threadfence()`: every later snapshot covers the earlier ones through the fence-SC
/// order, [`Knowledge::covers`]), `dst` becomes that source, shared: no copy, no join.
fn join_all_into(dst: &mut Rc<Knowledge>, srcs: &[&Rc<Knowledge>], tpb: Tpb) {
    let todo: SmallVec<[&Rc<Knowledge>; CHAIN as usize]> = srcs
        .iter()
        .filter(|s| !Rc::ptr_eq(dst, s) && !dst.covers(s))
        .copied()
        .collect();
    if let Some((last, rest)) = todo.split_last() {
        if last.covers(dst) && rest.iter().all(|s| Rc::ptr_eq(s, last) || last.covers(s)) {
            *dst = Rc::clone(last);
            return;
        }
    }
    let todo: SmallVec<[&Knowledge; CHAIN as usize]> = todo.iter().map(|s| &***s).collect();
    match todo.len() {
        0 => {}
        1 => Rc::make_mut(dst).join(todo[0], tpb),
        _ => Rc::make_mut(dst).join_many(&todo, tpb),
    }
}

/// Makes `k`'s clock chunks that equal `w`'s the very chunks of `w` (the same knowledge).
fn share_chunks_of(k: &mut Rc<Knowledge>, w: &Rc<Knowledge>) {
    if Rc::ptr_eq(k, w) {
        return;
    }
    let mut c = k.clock.clone();
    if c.share_equal_chunks(&w.clock) {
        Rc::make_mut(k).clock = c;
    }
}

/// [`join_all_into`] for an optional destination (the first source is taken as it is).
fn join_all(dst: &mut Option<Rc<Knowledge>>, srcs: &[&Rc<Knowledge>], tpb: Tpb) {
    match dst {
        Some(d) => join_all_into(d, srcs, tpb),
        None => {
            if let Some((first, rest)) = srcs.split_first() {
                let mut d = Rc::clone(first);
                join_all_into(&mut d, rest, tpb);
                *dst = Some(d);
            }
        }
    }
}

/// Who may take one publication of a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Release patterns of scope ≥ `.gpu`: acquire patterns of scope ≥ `.gpu` anywhere.
    Wide,
    /// Release patterns begun in this CTA: its acquire patterns of any scope.
    Cta(CtaId),
    /// Several CTAs' publications joined: taken by every acquirer (over-approximation).
    Spill,
}

impl Part {
    /// Whether an acquire pattern of a thread of `cta` whose last operation has scope
    /// `scope` synchronizes with this publication.
    #[inline]
    pub fn reaches(self, cta: CtaId, scope: Scope) -> bool {
        match self {
            Part::Wide => wide(scope),
            Part::Cta(c) => c == cta,
            Part::Spill => true,
        }
    }
}

/// Where a [`Message`] node stands in its release sequence: sequence `chain` (0: none
/// known), up to and including its RMW number `hi` there.
///
/// The nodes of one sequence id form one line: a write's message starts a sequence, the
/// *first* RMW that continues a node takes the node's id and `hi + 1`, and any later one
/// (two RMWs that read one write: an old value matched again) starts a new id; a node
/// that collapses the nodes below it takes the label of the newest; a copy
/// ([`Message`]'s `Clone`) has none. So a node labelled (`chain`, `h`) publishes at least
/// what every node (`chain`, `h' ≤ h`) publishes — it continues that node, or the node it
/// collapsed into — and the two comparisons that used pointer identity (does a newer
/// message of a counter cover a pending older one; where does a chain's unknown part
/// end) still hold after the older nodes collapsed away: with pointers alone, a poller of
/// a counter every CTA increments joined its whole chain again after each collapse
/// (`scale_reduce`, racecheck bench).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Label {
    chain: u64,
    hi: u32,
}

impl Label {
    /// A new sequence.
    fn fresh() -> Label {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Label {
            chain: NEXT.fetch_add(1, Ordering::Relaxed),
            hi: 0,
        }
    }

    /// Whether a node labelled `self` publishes everything a node labelled `older` does.
    #[inline]
    fn covers(self, older: Label) -> bool {
        self.chain != 0 && self.chain == older.chain && self.hi >= older.hi
    }
}

/// What a strong write publishes to the acquire patterns that observe it.
#[derive(Debug, Default)]
pub struct Message {
    /// Release patterns whose first operation has scope ≥ `.gpu`.
    wide: Option<Rc<Knowledge>>,
    /// Per releasing CTA (sorted), every release pattern begun by its threads (one CTA
    /// inline: a write message has exactly one, and most continuations too).
    local: SmallVec<[(CtaId, Rc<Knowledge>); 1]>,
    /// Local publications of CTAs beyond [`LOCAL_CAP`], joined.
    spill: Option<Rc<Knowledge>>,
    tpb: Tpb,
    /// The message of the write this RMW read (its release sequence): its publications
    /// are this message's too. Kept by reference — so an RMW on a counter every thread
    /// increments costs a pointer, not a copy of a clock that spans every CTA (the old
    /// eager join copied O(CTAs) per RMW) — and collapsed level by level (see
    /// [`Message::continued`]).
    prev: Option<Rc<Message>>,
    /// 0 for a write's own node; a node that collapsed [`CHAIN`] nodes of level `l` has
    /// level `l + 1`. Levels never decrease along `prev`.
    level: u8,
    /// Nodes of this node's level from it down `prev`, itself included.
    run: u32,
    /// Its place in its release sequence.
    label: Label,
    /// An RMW has continued this node (the next one that does starts a new sequence id).
    extended: std::cell::Cell<bool>,
}

/// A copy publishes what the original does, but is not the original's node in its
/// sequence: it has no label (so it never claims to cover another node by label), and a
/// continuation of it starts a new sequence.
impl Clone for Message {
    fn clone(&self) -> Message {
        Message {
            wide: self.wide.clone(),
            local: self.local.clone(),
            spill: self.spill.clone(),
            tpb: self.tpb,
            prev: self.prev.clone(),
            level: self.level,
            run: self.run,
            label: Label::default(),
            extended: std::cell::Cell::new(false),
        }
    }
}

/// Nodes of one level a [`Message`] chain keeps before they collapse into one node of
/// the next level (so a chain has fewer than `CHAIN` nodes per level).
pub const CHAIN: u32 = 64;

impl Message {
    pub fn is_empty(&self) -> bool {
        self.nodes().all(Message::own_empty)
    }

    fn own_empty(&self) -> bool {
        self.wide.is_none() && self.local.is_empty() && self.spill.is_none()
    }

    /// This node and the ones it continues, newest first.
    fn nodes(&self) -> impl Iterator<Item = &Message> {
        std::iter::successors(Some(self), |m| m.prev.as_deref())
    }

    /// The message of an RMW that continues the release sequence of `chain` (the message
    /// of the write it read) with its own release `own`. Built on the chain: its
    /// publications are shared, not copied.
    ///
    /// The chain is a counter in base [`CHAIN`]: when the top `CHAIN` nodes have the
    /// same level they collapse into one node of the next level (their publications
    /// joined, the rest of the chain below it, untouched). So an RMW costs O(1)
    /// amortized joins whatever the chain holds — collapsing everything into one node
    /// every `CHAIN` RMWs copied the clock of every CTA the sequence had gone through,
    /// O(CTAs) — and a chain has fewer than `CHAIN` nodes per level for an acquire to
    /// join.
    pub fn continued(chain: &Rc<Message>, own: Option<Message>) -> Message {
        let Some(o) = own.filter(|o| !o.is_empty()) else {
            return (**chain).clone();
        };
        // A fresh write message (one node) becomes the new head as it is; a chain of its
        // own is joined into one node first.
        let own = if o.prev.is_none() {
            o
        } else {
            let mut m = Message::default();
            m.merge(&o);
            m
        };
        let label = if chain.label.chain != 0 && !chain.extended.replace(true) {
            Label {
                chain: chain.label.chain,
                hi: chain.label.hi.saturating_add(1),
            }
        } else {
            Label::fresh()
        };
        let mut head = Message {
            tpb: own.tpb.max(chain.tpb),
            prev: Some(chain.clone()),
            level: 0,
            run: if chain.level == 0 { chain.run + 1 } else { 1 },
            label,
            extended: std::cell::Cell::new(false),
            ..own
        };
        while head.run >= CHAIN {
            head = head.collapse();
        }
        head
    }

    /// The top [`CHAIN`] nodes (all of `self`'s level, `self` the newest) as one node of
    /// the next level above the rest of the chain.
    fn collapse(self) -> Message {
        let level = self.level;
        let mut top: SmallVec<[&Message; CHAIN as usize]> = SmallVec::new();
        top.push(&self);
        let mut below = self.prev.as_deref();
        while top.len() < CHAIN as usize {
            match below {
                Some(n) if n.level == level => {
                    top.push(n);
                    below = n.prev.as_deref();
                }
                _ => break,
            }
        }
        // What lies below the collapsed nodes (`below`, as an owned reference).
        let prev = top.last().and_then(|n| n.prev.clone());
        let mut m = Message {
            level: level.saturating_add(1),
            label: self.label,
            ..Message::default()
        };
        m.merge_nodes(&top);
        m.run = match &prev {
            Some(p) if p.level == m.level => p.run + 1,
            _ => 1,
        };
        m.prev = prev;
        m
    }

    /// `self := self ⊔ other` (a release sequence continued by an RMW): `other`'s whole
    /// chain is joined into this node.
    pub fn merge(&mut self, other: &Message) {
        let nodes: SmallVec<[&Message; CHAIN as usize]> = other.nodes().collect();
        self.merge_nodes(&nodes);
    }

    /// Joins the publications of `nodes` (newest first; not what lies below them).
    fn merge_nodes(&mut self, nodes: &[&Message]) {
        self.tpb = nodes.iter().map(|n| n.tpb).fold(self.tpb, Tpb::max);
        let tpb = self.tpb;
        // The wide parts and the spills oldest first: the oldest nodes hold the most (a
        // collapsed node spans every CTA it collapsed), and the newer single-thread
        // releases are joined into (one copy of) it.
        let wides: SmallVec<[&Rc<Knowledge>; CHAIN as usize]> =
            nodes.iter().rev().filter_map(|n| n.wide.as_ref()).collect();
        let wide_fresh = self.wide.is_none();
        join_all(&mut self.wide, &wides, tpb);
        let mut spills: SmallVec<[&Rc<Knowledge>; CHAIN as usize]> = nodes
            .iter()
            .rev()
            .filter_map(|n| n.spill.as_ref())
            .collect();
        // CTA-local parts: which CTAs keep their own entry (up to `LOCAL_CAP`, the others
        // go to the spill) is decided newest first; then each entry's releases are
        // joined at once. A group is (CTA, whether its entry is new in this node, its
        // releases — for a new entry, the first one is the entry as inserted).
        type Group<'a> = (CtaId, bool, SmallVec<[&'a Rc<Knowledge>; 8]>);
        let mut groups: SmallVec<[Group; LOCAL_CAP]> = SmallVec::new();
        for n in nodes {
            for (c, k) in &n.local {
                match self.local.binary_search_by_key(c, |(x, _)| *x) {
                    Ok(_) => match groups.iter_mut().find(|g| g.0 == *c) {
                        Some(g) => g.2.push(k),
                        None => groups.push((*c, false, smallvec![k])),
                    },
                    Err(i) if self.local.len() < LOCAL_CAP => {
                        self.local.insert(i, (*c, k.clone()));
                        groups.push((*c, true, smallvec![k]));
                    }
                    Err(_) => spills.push(k),
                }
            }
        }
        for (c, fresh, ks) in &groups {
            let Ok(i) = self.local.binary_search_by_key(c, |(x, _)| *x) else {
                continue;
            };
            // A thread whose release fence was `.gpu` publishes the same snapshot as its
            // wide and its CTA's part: when a new entry's releases are exactly the wide
            // ones (a collapse of one CTA's RMWs after `__threadfence()`), their join is
            // the wide part's, already made — share it instead of making it again.
            if *fresh
                && wide_fresh
                && ks.len() == wides.len()
                && ks
                    .iter()
                    .zip(wides.iter().rev())
                    .all(|(a, b)| Rc::ptr_eq(a, b))
            {
                if let Some(w) = &self.wide {
                    self.local[i].1 = w.clone();
                    continue;
                }
            }
            let rest = if *fresh { &ks[1..] } else { &ks[..] };
            join_all_into(&mut self.local[i].1, rest, tpb);
        }
        join_all(&mut self.spill, &spills, tpb);
        // The CTA parts and the spill were joined apart from the wide part, from the same
        // releases: their chunks equal to the wide part's become the wide part's own, so
        // an acquirer that takes both compares them by pointer (`VClock::share_equal_chunks`).
        if let Some(w) = &self.wide {
            for (_, k) in self.local.iter_mut() {
                share_chunks_of(k, w);
            }
            if let Some(s) = &mut self.spill {
                share_chunks_of(s, w);
            }
        }
    }

    /// Every publication of the message with who may take it.
    pub fn parts(&self) -> impl Iterator<Item = (Part, &Rc<Knowledge>)> {
        self.nodes().flat_map(Message::own_parts)
    }

    /// The publications of this node alone (not of the nodes it continues).
    fn own_parts(&self) -> impl Iterator<Item = (Part, &Rc<Knowledge>)> {
        self.wide
            .iter()
            .map(|k| (Part::Wide, k))
            .chain(self.local.iter().map(|(c, k)| (Part::Cta(*c), k)))
            .chain(self.spill.iter().map(|k| (Part::Spill, k)))
    }

    /// Bytes of this node (a chain's earlier nodes are shared with earlier writes).
    pub fn heap_bytes(&self) -> usize {
        let spilled = if self.local.spilled() {
            self.local.capacity() * 16
        } else {
            0
        };
        spilled + std::mem::size_of::<Message>()
    }
}

/// Per-thread synchronization state.
#[derive(Debug, Clone, Default)]
struct ThreadSync {
    know: Knowledge,
    /// What only threads that read strong writes, make release operations or execute
    /// release fences have: 1 + its index in [`ThreadTable::rares`], 0 for none, so a
    /// thread that does none of these (most threads of a data-parallel kernel) costs 80
    /// bytes here instead of 192 (issue 24: per-thread state at 1 M threads). An index
    /// rather than a `Box`: a kernel whose every thread fences (`scale_fences`, racecheck
    /// bench) paid an allocation per thread and a free each when the checker was dropped.
    rare: u32,
}

// Issue 24: per-thread state at 1 M threads.
const _: () = assert!(std::mem::size_of::<ThreadSync>() <= 80);

/// The launch's per-thread states, each made on the thread's first use of it and handed
/// back when the thread exits (issue 24: per-thread state at 1 M threads).
///
/// A thread that never synchronizes — no barrier, fence, release or strong read of a
/// write that publishes something: every thread of a data-parallel kernel without
/// `__syncthreads()` — costs 4 bytes here instead of a [`ThreadSync`] (80 bytes), and an
/// exited thread's state goes to the threads that start after it, so the table holds
/// about as many states as there are live synchronizing threads. A thread without a state
/// reads as [`ThreadSync::default`], which is what it would hold: nothing known.
#[derive(Debug, Default, Clone)]
struct ThreadTable {
    /// Per thread of the launch: 1 + the index of its state in `states`; 0: none.
    slot: Vec<u32>,
    states: Vec<ThreadSync>,
    /// The rare parts of states ([`ThreadSync::rare`]). A state handed back keeps its rare
    /// part, emptied, for the next thread that takes the state.
    rares: Vec<ThreadRare>,
    /// Indices of `states` handed back (each reset to the default).
    free: Vec<u32>,
    /// What a thread without a state reads as.
    empty: ThreadSync,
}

impl ThreadTable {
    /// `n` threads, none with a state.
    fn reset(&mut self, n: usize) {
        self.slot.clear();
        self.slot.resize(n, 0);
        self.states.clear();
        // Room for every thread: pages a launch never uses are never touched (so cost no
        // memory), and a barrier that gives every thread of a CTA its first state does not
        // move the ones before it.
        self.states.reserve(n);
        self.rares.clear();
        self.rares.reserve(n);
        self.free.clear();
    }

    fn len(&self) -> usize {
        self.slot.len()
    }

    /// Thread `g`'s state (the default when it has none); `None` outside the launch.
    #[inline(always)]
    fn get(&self, g: usize) -> Option<&ThreadSync> {
        let s = *self.slot.get(g)?;
        Some(match s.checked_sub(1) {
            Some(i) => &self.states[i as usize],
            None => &self.empty,
        })
    }

    /// Thread `g`'s state, made now if it has none; `None` outside the launch.
    #[inline(always)]
    fn get_mut(&mut self, g: usize) -> Option<&mut ThreadSync> {
        let s = self.slot.get_mut(g)?;
        if *s == 0 {
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.states.push(ThreadSync::default());
                    (self.states.len() - 1) as u32
                }
            };
            *s = i + 1;
        }
        Some(&mut self.states[*s as usize - 1])
    }

    /// Thread `g`'s rare part, if it has a state with one.
    #[inline]
    fn rare_of(&self, g: usize) -> Option<&ThreadRare> {
        let i = self.slot.get(g)?.checked_sub(1)?;
        let r = self.states[i as usize].rare.checked_sub(1)?;
        self.rares.get(r as usize)
    }

    /// Thread `g`'s state and its rare part, both made now if missing; `None` outside
    /// the launch.
    #[inline]
    fn split_mut(&mut self, g: usize) -> Option<(&mut ThreadSync, &mut ThreadRare)> {
        self.get_mut(g)?;
        let i = self.slot[g] as usize - 1;
        let ts = &mut self.states[i];
        if ts.rare == 0 {
            self.rares.push(ThreadRare::default());
            ts.rare = self.rares.len() as u32;
        }
        let r = ts.rare as usize - 1;
        Some((ts, &mut self.rares[r]))
    }

    /// Thread `g`'s state, if it has one, with its rare part if it has one.
    #[inline]
    fn existing_split_mut(
        &mut self,
        g: usize,
    ) -> Option<(&mut ThreadSync, Option<&mut ThreadRare>)> {
        let i = self.slot.get(g)?.checked_sub(1)?;
        let ts = &mut self.states[i as usize];
        let r = ts
            .rare
            .checked_sub(1)
            .and_then(|r| self.rares.get_mut(r as usize));
        Some((ts, r))
    }

    /// Thread `g` no longer needs its state: it is reset and kept for another thread.
    fn drop_state(&mut self, g: usize) {
        let Some(s) = self.slot.get_mut(g) else {
            return;
        };
        if let Some(i) = s.checked_sub(1) {
            let st = &mut self.states[i as usize];
            // The rare part stays with the state for the next thread (emptied, it reads
            // as no rare part: every use of it treats an empty one as absent).
            let rare = st.rare;
            *st = ThreadSync::default();
            st.rare = rare;
            if let Some(r) = rare
                .checked_sub(1)
                .and_then(|r| self.rares.get_mut(r as usize))
            {
                r.clear();
            }
            self.free.push(i);
            *s = 0;
        }
    }

    fn heap_bytes(&self) -> usize {
        self.slot.capacity() * 4
            + self.states.capacity() * std::mem::size_of::<ThreadSync>()
            + self.rares.len() * std::mem::size_of::<ThreadRare>()
            + self.free.capacity() * 4
            + self
                .states
                .iter()
                .map(|t| t.know.obs.heap_bytes())
                .sum::<usize>()
    }
}

#[derive(Debug, Clone, Default)]
struct ThreadRare {
    /// Snapshots at the latest release fence of any scope, and of scope ≥ `.gpu`: the
    /// release patterns that later strong writes complete.
    rel_any: Option<Rc<Knowledge>>,
    rel_wide: Option<Rc<Knowledge>>,
    /// Publications observed by strong reads, waiting for an acquire fence: those a
    /// CTA-scope fence takes, and those only a `.gpu`/`.sys` fence takes.
    pending_local: Pending,
    pending_wide: Pending,
    /// Release pattern form (2): per location, the snapshot at this thread's latest
    /// release operation there, which its later strong writes to the location complete.
    /// One entry per distinct location released. Never forgotten within a launch:
    /// dropping one would drop synchronization PTX guarantees, and let the `weak` model
    /// produce a forbidden outcome.
    rel_ops: Vec<RelOp>,
    /// The latest strong read's message, not yet added to the pending lists: (message,
    /// for `pending_wide`, for `pending_local`). Added before the next read's or before
    /// an acquire takes the lists ([`ThreadRare::flush`]), so the lists end up as if it had
    /// been added at once — but a thread whose last strong read is never followed by an
    /// acquire (an `atomicAdd` on a counter, then exit: `scale_fences`, racecheck bench)
    /// never pays for adding it.
    unread: Option<(Rc<Message>, bool, bool)>,
}

impl ThreadRare {
    /// Empties it, keeping the room of its lists.
    fn clear(&mut self) {
        self.rel_any = None;
        self.rel_wide = None;
        self.pending_local = Pending::default();
        self.pending_wide = Pending::default();
        self.rel_ops.clear();
        self.unread = None;
    }

    /// Adds the deferred read's message to the pending lists it belongs to.
    #[inline]
    fn flush(&mut self, cta: CtaId, tpb: Tpb) {
        if let Some((m, to_wide, to_local)) = self.unread.take() {
            if to_wide {
                self.pending_wide.add(&m, true, cta, tpb);
            }
            if to_local {
                self.pending_local.add(&m, false, cta, tpb);
            }
        }
    }
}

/// A release operation's snapshot, for release pattern form (2).
#[derive(Debug, Clone)]
struct RelOp {
    loc: Location,
    size: u32,
    snap: Rc<Knowledge>,
    /// The release operation's scope was `.gpu`/`.sys`.
    wide: bool,
}

impl RelOp {
    fn overlaps(&self, loc: Location, size: u32) -> bool {
        let same_space = match (self.loc, loc) {
            (Location::Global(_), Location::Global(_)) => true,
            (Location::Shared { cta: a, .. }, Location::Shared { cta: b, .. }) => a == b,
            _ => false,
        };
        same_space
            && self.loc.addr() < loc.addr() + size.max(1) as u64
            && loc.addr() < self.loc.addr() + self.size.max(1) as u64
    }
}

/// Of two snapshots of one thread's knowledge, the later in program order (snapshots only
/// grow, and each raises the thread's own epoch).
fn later<'a>(
    a: Option<&'a Rc<Knowledge>>,
    b: Option<&'a Rc<Knowledge>>,
    t: ThreadRef,
) -> Option<&'a Rc<Knowledge>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(
            if y.get(CtaId::of(t), Tid::of(t)) > x.get(CtaId::of(t), Tid::of(t)) {
                y
            } else {
                x
            },
        ),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Publications waiting for an acquire: the messages read, kept as shared references
/// and joined only when an acquire comes (a relaxed poll of a flag that accumulates many
/// releases — a counter every CTA increments after a fence — costs a pointer, not a
/// clock join). `wide` says which parts this list is for: `.gpu` ones, or those of the
/// reader's CTA and the spill.
///
/// `done` is the last message [`Pending::take_into`] joined: what its chain publishes to
/// this list is in the thread's knowledge, which only grows within a launch. A thread
/// that spins on a flag reads the same message again and again, and one that polls a
/// counter reads a chain that grows by a node or two between polls: the first is not
/// taken again, and for the second only the nodes above `done` are joined. (Every poll
/// joined the whole chain again — up to [`CHAIN`] nodes per level — and those joins were
/// a quarter of `fuzz --model weak` on the work-stealing campaign `ct_octree`, `perf`.)
/// The knowledge joined is the same, so every outcome is too.
#[derive(Debug, Clone, Default)]
struct Pending {
    msgs: SmallVec<[Rc<Message>; 1]>,
    joined: Option<Box<Knowledge>>,
    done: Option<Rc<Message>>,
}

/// Messages kept before they are joined into one knowledge.
const PENDING_MSGS: usize = 4;

/// Whether a pending list for `.gpu` parts (`wide`) or for CTA `cta`'s takes `part`.
#[inline]
fn takes(part: Part, wide: bool, cta: CtaId) -> bool {
    match part {
        Part::Wide => wide,
        Part::Cta(c) => !wide && c == cta,
        Part::Spill => !wide,
    }
}

impl Pending {
    fn add(&mut self, m: &Rc<Message>, wide: bool, cta: CtaId, tpb: Tpb) {
        // Already pending, or taken: the same node, or one that covers it.
        if self
            .msgs
            .iter()
            .chain(&self.done)
            .any(|x| Rc::ptr_eq(x, m) || x.label.covers(m.label))
        {
            return;
        }
        if !m.parts().any(|(p, _)| takes(p, wide, cta)) {
            return;
        }
        // A later message on the same release sequence continues the earlier one (it
        // holds it by reference): it covers it.
        if let Some(last) = self.msgs.last_mut() {
            if m.label.covers(last.label) || m.nodes().any(|n| std::ptr::eq(n, &**last)) {
                *last = m.clone();
                return;
            }
        }
        if self.msgs.len() >= PENDING_MSGS {
            let j = self.joined.get_or_insert_with(Box::default);
            for x in self.msgs.drain(..) {
                for (p, k) in x.parts() {
                    if takes(p, wide, cta) {
                        j.join(k, tpb);
                    }
                }
            }
        }
        self.msgs.push(m.clone());
    }

    /// Joins everything pending into `know`, leaving nothing pending.
    #[inline]
    fn take_into(&mut self, know: &mut Knowledge, wide: bool, cta: CtaId, tpb: Tpb) {
        if self.msgs.is_empty() && self.joined.is_none() {
            return;
        }
        self.take_into_slow(know, wide, cta, tpb);
    }

    #[inline(never)]
    fn take_into_slow(&mut self, know: &mut Knowledge, wide: bool, cta: CtaId, tpb: Tpb) {
        for x in self.msgs.drain(..) {
            let known = self.done.as_deref().map(|d| (d as *const Message, d.label));
            for n in x.nodes() {
                // `done` itself, or a node it covers (and so every node below it).
                if known.is_some_and(|(p, l)| std::ptr::eq(p, n) || l.covers(n.label)) {
                    break;
                }
                for (p, k) in n.own_parts() {
                    if takes(p, wide, cta) {
                        know.join(k, tpb);
                    }
                }
            }
            self.done = Some(x);
        }
        if let Some(j) = self.joined.take() {
            know.join(&j, tpb);
        }
    }
}

/// The fence-SC order of `.gpu`/`.sys` fences, kept per writer (see the module docs).
#[derive(Debug, Default, Clone)]
struct ScOrder {
    /// SC fences so far (they are numbered from 1).
    n: u32,
    /// Per writer (global id): the highest epoch the order knows (0: none).
    known: Vec<Epoch>,
    /// Per writer: (epoch, fence number from which the order knows it) — the first such
    /// pair; most writers get one.
    first: Vec<(Epoch, u32)>,
    /// Per writer: 0, or 1 + the index in `more` of its later pairs (increasing). Dense
    /// and four bytes a writer: a hash map here made every fence of a kernel that fences
    /// repeatedly (`fenced`) a probe that missed the cache, and a `Vec` per writer was
    /// 24 bytes to fill and drop for each of a launch's threads.
    more_at: Vec<u32>,
    more: Vec<Vec<(Epoch, u32)>>,
    /// Per CTA: the clock chunk folded last (kept alive so identity is meaningful).
    folded: Vec<Option<Rc<Vec<Epoch>>>>,
    obs: Obs,
}

impl ScOrder {
    fn reset(&mut self, threads: usize) {
        self.n = 0;
        self.known.clear();
        self.known.resize(threads, Epoch::NONE);
        self.first.clear();
        self.first.resize(threads, (Epoch::NONE, 0));
        self.more_at.clear();
        self.more_at.resize(threads, 0);
        self.more.clear();
        self.folded.clear();
        self.obs = Obs::default();
    }

    fn note(&mut self, g: usize, e: Epoch, k: u32) {
        if let Some(x) = self.known.get_mut(g) {
            if e > *x {
                let had = !x.is_none();
                *x = e;
                if had {
                    if let Some(at) = self.more_at.get_mut(g) {
                        if *at == 0 {
                            self.more.push(Vec::new());
                            *at = self.more.len() as u32;
                        }
                        if let Some(m) = self.more.get_mut(*at as usize - 1) {
                            m.push((e, k));
                        }
                    }
                } else {
                    self.first[g] = (e, k);
                }
            }
        }
    }

    /// Folds `know` into the order as fence number `k`.
    fn fold(&mut self, know: &Knowledge, tpb: Tpb, k: u32) {
        for (cta, chunk) in know.clock.chunks() {
            let at = cta.index();
            if self
                .folded
                .get(at)
                .is_some_and(|f| f.as_ref().is_some_and(|f| Rc::ptr_eq(f, chunk)))
            {
                continue;
            }
            for (tid, &e) in chunk.iter().enumerate() {
                if !e.is_none() {
                    self.note((cta.0 * tpb.0) as usize + tid, e, k);
                }
            }
            if self.folded.len() <= at {
                self.folded.resize(at + 1, None);
            }
            self.folded[at] = Some(chunk.clone());
        }
        for &(c, t, e) in know.extras() {
            self.note(tpb.global(c, t) as usize, e, k);
        }
        self.obs.join(&know.obs);
    }

    /// Whether the order knew writer `g`'s epoch `e` by fence number `seen`.
    #[inline]
    fn knows(&self, g: u32, e: Epoch, seen: u32) -> bool {
        if seen == 0 || self.known.get(g as usize).is_none_or(|k| *k < e) {
            return false;
        }
        let (e0, k0) = self.first[g as usize];
        if e <= e0 {
            return k0 <= seen;
        }
        let at = self.more_at.get(g as usize).copied().unwrap_or(0);
        let Some(f) = at.checked_sub(1).and_then(|i| self.more.get(i as usize)) else {
            return false;
        };
        let i = f.partition_point(|(x, _)| *x < e);
        f.get(i).is_some_and(|(_, k)| *k <= seen)
    }
}

/// Identifies a barrier instance being assembled: (kind, CTA or warp, barrier id).
type BarrierKey = (u8, u32, u32);

/// What the arrivals at one barrier instance published so far.
#[derive(Debug, Default, Clone)]
struct BarrierAcc {
    know: Knowledge,
    /// (cta, tid, epoch) of each arrival, raised into the clock at the release.
    arrivals: Vec<(CtaId, Tid, Epoch)>,
}

/// Happens-before for one launch. `Clone` gives an independent copy (the race check runs
/// a scope-blind twin from the point where scopes start to matter).
#[derive(Debug, Default, Clone)]
pub struct Hb {
    tpc: Tpb,
    /// log2(tpc) when it is a power of two (the common case: no division per lookup).
    tpc_shift: u32,
    threads: ThreadTable,
    /// Per thread: its current epoch (apart from `threads`: read on every store, and a
    /// dense array keeps that off the cache lines of the much larger `ThreadSync`).
    epochs: Vec<Epoch>,
    sc: ScOrder,
    /// Per CTA: what its `.cta` fence.sc published.
    sc_cta: Vec<Knowledge>,
    /// Per CTA: the number of its last `.gpu`/`.sys` fence.sc (a `.cta` fence.sc of the
    /// CTA is morally strong with it, and through it knows the order up to there).
    sc_last_gpu: Vec<u32>,
    /// Per CTA: the observations the fence-SC order held at that fence (the order knows
    /// epochs by fence number, observations only as a whole, so the `.cta` fence takes
    /// this snapshot: UNSOUND.md, `hb-sc-fence-wide-to-cta`).
    sc_obs_gpu: Vec<Obs>,
    /// (SipHash was a tenth of a barrier-heavy kernel's time.)
    barriers: FastMap<BarrierKey, BarrierAcc>,
    /// The barrier instance the latest arrival went to, held outside `barriers`: a warp's
    /// lanes arrive one after another, so 31 of every 32 arrivals find their instance
    /// here without a table lookup (the lookup was a third of `arrive` on a block scan).
    last_barrier: Option<(BarrierKey, BarrierAcc)>,
    /// An empty arrival list with room, for the next barrier instance.
    spare_arrivals: Vec<(CtaId, Tid, Epoch)>,
    /// Tests: a `.cta` fence.sc merges its snapshot into its CTA's knowledge as before
    /// b943c0e instead of taking it by reference (the two must answer alike).
    #[cfg(test)]
    merge_cta_sc: bool,
}

impl Hb {
    pub fn new() -> Hb {
        Hb::default()
    }

    /// Starts a launch: nothing is synchronized yet (everything before the launch is
    /// visible to every thread, which needs no clock entries).
    pub fn begin(&mut self, threads: u32, ctas: u32, threads_per_cta: u32) {
        self.tpc = Tpb(threads_per_cta.max(1));
        self.tpc_shift = if self.tpc.0.is_power_of_two() {
            self.tpc.0.trailing_zeros()
        } else {
            32
        };
        self.threads.reset(threads as usize);
        self.epochs.clear();
        self.epochs.resize(threads as usize, Epoch::FIRST);
        self.sc.reset(0);
        // Refilled with defaults, not `vec![x; n]` (n clones of `x`).
        self.sc_cta.clear();
        self.sc_cta.resize_with(ctas as usize, Knowledge::default);
        self.sc_last_gpu.clear();
        self.sc_last_gpu.resize(ctas as usize, 0);
        self.sc_obs_gpu.clear();
        self.sc_obs_gpu.resize_with(ctas as usize, Obs::default);
        self.barriers.clear();
        self.last_barrier = None;
    }

    /// The current epoch of thread `g` (what its next access is stamped with).
    #[inline]
    pub fn epoch(&self, g: u32) -> Epoch {
        self.epochs.get(g as usize).copied().unwrap_or(Epoch::NONE)
    }

    /// What thread `g` knows.
    #[inline(always)]
    pub fn knowledge(&self, g: u32) -> Option<&Knowledge> {
        self.threads.get(g as usize).map(|t| &t.know)
    }

    /// Whether `k` covers the access of thread `writer` at `epoch`, directly or through
    /// the fence-SC order.
    #[inline]
    pub fn covers(&self, k: &Knowledge, writer: u32, epoch: Epoch) -> bool {
        let tpc = self.tpc.0;
        let (cta, tid) = if self.tpc_shift < 32 {
            (writer >> self.tpc_shift, writer & (tpc - 1))
        } else {
            (writer / tpc, writer % tpc)
        };
        k.get(CtaId(cta), Tid(tid)) >= epoch
            || (k.sc_seen > 0 && self.sc.knows(writer, epoch, k.sc_seen))
    }

    /// Whether the access of thread `writer` at `epoch` happens before the next operation
    /// of thread `g` (program order included).
    #[inline]
    pub fn knows(&self, g: u32, writer: u32, epoch: Epoch) -> bool {
        writer == g
            || self
                .threads
                .get(g as usize)
                .is_some_and(|t| self.covers(&t.know, writer, epoch))
    }

    /// Whether a write of thread `g` with ordering `ord` may publish anything
    /// ([`Hb::write_message`] returns `None` when not): it is a release, or its thread has
    /// a release fence or a release operation a strong write can complete.
    #[inline]
    pub fn may_publish(&self, g: u32, ord: WriteOrd) -> bool {
        ord.releases()
            || self
                .threads
                .rare_of(g as usize)
                .is_some_and(|r| r.rel_any.is_some() || !r.rel_ops.is_empty())
    }

    /// Whether thread `g` executed a release-capable fence in this launch (its later strong
    /// writes complete release patterns), and whether one of scope ≥ `.gpu`
    /// ([`Hb::has_wide_release_fence`]): one lookup for both.
    #[inline]
    pub fn release_fences(&self, g: u32) -> (bool, bool) {
        self.threads
            .rare_of(g as usize)
            .map_or((false, false), |r| {
                (r.rel_any.is_some(), r.rel_wide.is_some())
            })
    }

    /// Whether thread `g` executed a release-capable fence of scope ≥ `.gpu`.
    #[inline]
    pub fn has_wide_release_fence(&self, g: u32) -> bool {
        self.threads
            .rare_of(g as usize)
            .is_some_and(|r| r.rel_wide.is_some())
    }

    /// The observations of thread `g`.
    #[inline]
    pub fn obs(&self, g: u32) -> Option<&Obs> {
        self.threads.get(g as usize).map(|t| &t.know.obs)
    }

    /// Thread `g` observed store `seq` of block `key` through a morally strong read.
    pub fn observe(&mut self, g: u32, key: u64, seq: u64) {
        if let Some(t) = self.threads.get_mut(g as usize) {
            t.know.obs.record(key, seq);
        }
    }

    /// Publishes `t`'s knowledge: its own entry is raised to the current epoch, and later
    /// accesses get the next one.
    fn snapshot(&mut self, t: ThreadRef) -> Option<Rc<Knowledge>> {
        self.snapshot_into(t, None)
    }

    /// [`Hb::snapshot`], written into `reuse`'s allocation when nothing else holds that
    /// one. A release fence passes the snapshot it supersedes: a thread that spins with a
    /// fence in its loop (CUB's look-back) otherwise paid an allocation and a free per
    /// turn, in the race check's happens-before and again in its scope-blind twin. The
    /// same knowledge either way.
    fn snapshot_into(
        &mut self,
        t: ThreadRef,
        reuse: Option<Rc<Knowledge>>,
    ) -> Option<Rc<Knowledge>> {
        let tpc = self.tpc;
        let ts = self.threads.get_mut(t.global as usize)?;
        let ep = self.epochs.get_mut(t.global as usize)?;
        ts.know.raise(CtaId::of(t), Tid::of(t), tpc, *ep);
        ep.advance();
        Some(
            match reuse.filter(|r| Rc::strong_count(r) == 1 && Rc::weak_count(r) == 0) {
                Some(mut rc) => {
                    Rc::make_mut(&mut rc).clone_from(&ts.know);
                    rc
                }
                None => Rc::new(ts.know.clone()),
            },
        )
    }

    #[inline]
    fn acquire_pending(&mut self, g: usize, wide_scope: bool) {
        let tpc = self.tpc;
        let Some((ts, Some(rare))) = self.threads.existing_split_mut(g) else {
            return;
        };
        let cta = CtaId((g as u32) / tpc.0);
        rare.flush(cta, tpc);
        rare.pending_local.take_into(&mut ts.know, false, cta, tpc);
        if wide_scope {
            rare.pending_wide.take_into(&mut ts.know, true, cta, tpc);
        }
    }

    /// A fence (`fence.*`, `membar.*`).
    pub fn fence(&mut self, t: ThreadRef, kind: FenceKind, scope: Scope) {
        let g = t.global as usize;
        let cta = t.cta as usize;
        let tpc = self.tpc;
        let w = wide(scope);
        if matches!(kind, FenceKind::Sc | FenceKind::AcqRel | FenceKind::Acquire) {
            self.acquire_pending(g, w);
        }
        // Whether the thread's knowledge took its CTA's fence-SC knowledge (below).
        let mut joined_cta = false;
        if kind == FenceKind::Sc {
            if self.sc.known.is_empty() {
                self.sc.reset(self.threads.len());
            }
            if let Some(ts) = self.threads.get_mut(g) {
                // Earlier `.cta` fence.sc of this CTA are morally strong with this one
                // whatever its scope; `.gpu` ones are read lazily through the order: all
                // of them for a `.gpu` fence, those of this CTA for a `.cta` one.
                if let Some(c) = self.sc_cta.get(cta) {
                    ts.know.join(c, tpc);
                    joined_cta = true;
                }
                let upto = if w {
                    self.sc.n
                } else {
                    self.sc_last_gpu.get(cta).copied().unwrap_or(0)
                };
                ts.know.sc_seen = ts.know.sc_seen.max(upto);
                if w {
                    ts.know.obs.join(&self.sc.obs);
                } else if let Some(o) = self.sc_obs_gpu.get(cta) {
                    ts.know.obs.join(o);
                }
            }
        }
        if kind == FenceKind::Acquire {
            // Accesses after an acquire fence get a new epoch too, so that "was this read
            // followed by an acquire" can be told from epochs (the race check's rule).
            if let Some(ep) = self.epochs.get_mut(g) {
                ep.advance();
            }
            return;
        }
        // The snapshot this fence supersedes (a wide one replaces the wide snapshot too),
        // whose allocation the new one reuses when no write's message holds it.
        let superseded = self.threads.existing_split_mut(g).and_then(|(_, r)| {
            let r = r?;
            if w && r
                .rel_wide
                .as_ref()
                .zip(r.rel_any.as_ref())
                .is_some_and(|(a, b)| Rc::ptr_eq(a, b))
            {
                r.rel_wide = None;
            }
            r.rel_any.take()
        });
        let Some(mut snap) = self.snapshot_into(t, superseded) else {
            return;
        };
        if kind == FenceKind::Sc {
            if w {
                let k = self.sc.n.checked_add(1).expect(
                    "fencehound-hb: more than 2^32 - 1 fence.sc in one launch (fence numbers \
                     would wrap)",
                );
                self.sc.fold(&snap, tpc, k);
                self.sc.n = k;
                if let Some(l) = self.sc_last_gpu.get_mut(cta) {
                    *l = k;
                }
                if let Some(o) = self.sc_obs_gpu.get_mut(cta) {
                    *o = self.sc.obs.clone();
                }
                if let Some(ts) = self.threads.get_mut(g) {
                    ts.know.sc_seen = k;
                }
                // Folded above as fence `k`: exactly what the order knows by `k`.
                let s = Rc::make_mut(&mut snap);
                s.sc_seen = k;
                s.sc_exact = true;
            } else if let Some(c) = self.sc_cta.get_mut(cta) {
                // The thread joined `c` above, so the snapshot already holds all of it
                // (clock, single entries, SC fence number): `c ⊔ snap` is `snap`, taken
                // by reference instead of merged chunk by chunk again; the observations,
                // whose join is not a plain maximum (thresholds, folded past a cap), are
                // joined as before. On a look-back whose 32 lanes each poll and
                // `__threadfence_block()` in turn, this was one of the two 256-entry chunk
                // merges of every turn (`exec --race --model scoped`, CUB's onesweep sort).
                #[cfg(test)]
                let joined_cta = joined_cta && !self.merge_cta_sc;
                if joined_cta {
                    let obs = std::mem::take(&mut c.obs);
                    *c = Knowledge {
                        obs,
                        ..(*snap).clone()
                    };
                    c.obs.join(&snap.obs);
                } else {
                    c.join(&snap, tpc);
                }
            }
        }
        let Some((_, rare)) = self.threads.split_mut(g) else {
            return;
        };
        if w {
            rare.rel_wide = Some(snap.clone());
        }
        rare.rel_any = Some(snap);
    }

    /// What a strong write by `t` with ordering `ord` and scope `scope` to `size` bytes at
    /// `loc` publishes: its own release (when `ord` releases: form 1), the latest release
    /// fence before it (form 3) and the latest release operation on the same location
    /// before it (form 2). Call it when the write happens, before stamping the write with
    /// [`Hb::epoch`]: a release raises the epoch. (Only `ord.releases()` matters here: the
    /// caller has decided that the write is strong.)
    pub fn write_message(
        &mut self,
        t: ThreadRef,
        ord: WriteOrd,
        scope: Scope,
        loc: Location,
        size: u32,
    ) -> Option<Message> {
        let own = if ord.releases() {
            self.snapshot(t)
        } else {
            None
        };
        // Without a release of its own, a thread with no state has no release fence or
        // operation for the write to complete: it publishes nothing (and gets no state).
        let (local, wide_part) = match &own {
            Some(o) => {
                let (_, rare) = self.threads.split_mut(t.global as usize)?;
                let w = wide(scope);
                let rel_ops = &mut rare.rel_ops;
                rel_ops.retain(|r| !(r.loc == loc && r.size == size));
                rel_ops.push(RelOp {
                    loc,
                    size,
                    snap: o.clone(),
                    wide: w,
                });
                let wide_part = if w {
                    Some(o.clone())
                } else {
                    rare.rel_wide.clone()
                };
                (Some(o.clone()), wide_part)
            }
            None => {
                // Every form (2) pattern this write completes, with the fence (form 3):
                // the latest of them covers the others.
                let rare = self.threads.rare_of(t.global as usize)?;
                let mut local = rare.rel_any.as_ref();
                let mut wide_part = rare.rel_wide.as_ref();
                for r in rare.rel_ops.iter().filter(|r| r.overlaps(loc, size)) {
                    local = later(local, Some(&r.snap), t);
                    if r.wide {
                        wide_part = later(wide_part, Some(&r.snap), t);
                    }
                }
                (local.cloned(), wide_part.cloned())
            }
        };
        let local = local?;
        Some(Message {
            wide: wide_part,
            local: smallvec![(CtaId::of(t), local)],
            spill: None,
            tpb: self.tpc,
            prev: None,
            level: 0,
            run: 1,
            label: Label::fresh(),
            extended: std::cell::Cell::new(false),
        })
    }

    /// A strong read by `t` with ordering `ord` and scope `scope` of a write that carries
    /// `msg`; the caller has checked that the read observes that write (they are morally
    /// strong, or the chain of RMWs leading to it is). Without a message: an acquire read
    /// of a write that publishes nothing to it, which still completes the acquire patterns
    /// of earlier strong reads. (Only `ord.acquires()` matters here.)
    pub fn read(&mut self, t: ThreadRef, ord: ReadOrd, scope: Scope, msg: Option<&Rc<Message>>) {
        let g = t.global as usize;
        let tpc = self.tpc;
        let cta = CtaId::of(t);
        let acq = ord.acquires();
        if let Some(m) = msg {
            let Some(ts) = self.threads.get_mut(g) else {
                return;
            };
            if acq {
                for (part, k) in m.parts() {
                    if part.reaches(cta, scope) {
                        ts.know.join(k, tpc);
                    }
                }
            }
            // What the read did not acquire waits for an acquire fence: a `.gpu`
            // publication for a `.gpu`/`.sys` fence (a strong read followed by a fence is
            // an acquire pattern of the fence's scope), CTA-local ones of this CTA (and the
            // spill) for any.
            // (Deferred: [`ThreadRare::unread`].)
            let (to_wide, to_local) = (!(acq && wide(scope)), !acq);
            if to_wide || to_local {
                if let Some((_, rare)) = self.threads.split_mut(g) {
                    rare.flush(cta, tpc);
                    rare.unread = Some((m.clone(), to_wide, to_local));
                }
            }
        }
        if acq {
            // Over-approximation: an acquire read also completes the acquire patterns of
            // earlier strong reads (PTX: of the same location).
            self.acquire_pending(g, wide(scope));
        }
    }

    /// One instance per CTA barrier id, and per warp *and member mask* for
    /// `bar.warp.sync` (its `id`): sub-warp groups of one warp — cooperative-groups tiles,
    /// CUB logical warps, any partial `__syncwarp(mask)` — synchronize on their own, often
    /// at one instruction at once (lanes 0–15 with `0x0000ffff`, 16–31 with `0xffff0000`).
    /// Keyed by the warp alone, every arrival went to one instance, the first group's
    /// release took it whole and the others' found none: their lanes learnt nothing, and
    /// `weak` read stale values and the race check reported the pairs the `__syncwarp`
    /// orders.
    fn barrier_key(b: &Barrier) -> BarrierKey {
        match b.kind {
            BarrierKind::Warp => (1, b.thread.warp, b.id),
            BarrierKind::Sync | BarrierKind::Arrive => (0, b.thread.cta, b.id),
        }
    }

    /// A thread arrives at a barrier: it publishes what it knows to the barrier instance.
    pub fn arrive(&mut self, b: &Barrier) {
        let t = b.thread;
        let tpc = self.tpc;
        let (Some(ts), Some(ep)) = (
            self.threads.get(t.global as usize),
            self.epochs.get_mut(t.global as usize),
        ) else {
            return;
        };
        let key = Self::barrier_key(b);
        let acc = match &mut self.last_barrier {
            Some((k, acc)) if *k == key => acc,
            slot => {
                if let Some((k, acc)) = slot.take() {
                    self.barriers.insert(k, acc);
                }
                let acc = self.barriers.remove(&key).unwrap_or_else(|| BarrierAcc {
                    know: Knowledge::default(),
                    // The list of the last released instance, with its room (it grew
                    // by doubling up to a CTA's arrivals, each barrier again).
                    arrivals: std::mem::take(&mut self.spare_arrivals),
                });
                &mut slot.insert((key, acc)).1
            }
        };
        // Between two barriers most threads' clocks are still the one the last barrier
        // handed out, so the join is a pointer comparison — as long as the accumulator's
        // clock is not modified by the arrivals' own epochs, which wait in a list.
        acc.know.join(&ts.know, tpc);
        acc.arrivals.push((CtaId::of(t), Tid::of(t), *ep));
        ep.advance();
    }

    /// A barrier completed: every released (waiting) thread learns what every arrival
    /// published. (A waiting thread did nothing since it arrived, so what it knows is in
    /// the barrier's knowledge already.)
    pub fn release(&mut self, b: &Barrier, threads: &[ThreadRef]) {
        let key = Self::barrier_key(b);
        let instance = match &self.last_barrier {
            Some((k, _)) if *k == key => self.last_barrier.take().map(|(_, acc)| acc),
            _ => self.barriers.remove(&key),
        };
        let Some(BarrierAcc {
            know: mut acc,
            mut arrivals,
        }) = instance
        else {
            return;
        };
        // Every released thread starts from this knowledge: fold the single entries and
        // the arrivals' epochs into the clock once (one chunk copy), so lookups need not
        // scan them.
        acc.fold(self.tpc);
        acc.clock.raise_all(self.tpc, &arrivals);
        for t in threads {
            if let Some(ts) = self.threads.get_mut(t.global as usize) {
                ts.know = acc.clone();
            }
        }
        arrivals.clear();
        self.spare_arrivals = arrivals;
    }

    /// Thread `g` exited: nothing it knows or waits for can matter any more (it makes no
    /// further access, fence or barrier arrival), so its state is dropped now rather than
    /// at the end of the launch. Its pending lists would otherwise keep whole release
    /// sequences alive (a counter every thread increments after a fence kept one message
    /// per thread until the launch ended), and memory freed now is reused by the threads
    /// that run next. Its epoch stays: shadow memory holds accesses stamped with it.
    pub fn exit(&mut self, g: u32) {
        self.threads.drop_state(g as usize);
    }

    /// Approximate heap bytes of the synchronization state.
    pub fn heap_bytes(&self) -> usize {
        self.threads.heap_bytes()
            + self.epochs.capacity() * 4
            + self.sc.known.capacity() * 4
            + self.sc.first.capacity() * 8
            + self.sc.more.iter().map(|f| f.capacity() * 8).sum::<usize>()
            + self.sc.more.capacity() * std::mem::size_of::<Vec<(Epoch, u32)>>()
            + self.sc.more_at.capacity() * 4
            + self.sc.folded.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flag location of the tests' message-passing shapes.
    const X: Location = Location::Global(0x1000);
    /// Another location.
    const Z: Location = Location::Global(0x2000);

    /// Every release/acquire pattern form of the PTX ISA (§8.8), each as a message-passing
    /// twin: the writer stores data, then completes a release pattern on the flag with
    /// `ops`; the reader (another CTA, `.gpu`) reads the flag's last write strongly and
    /// completes an acquire pattern with `acq`. Returns whether the data happens before
    /// the reader's next access.
    fn pattern(rel: &[(&str, Location)], acq: &[&str]) -> bool {
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let (w, r) = (t(0, 0, 2), t(1, 0, 2));
        let data = hb.epoch(w.global);
        let mut last = None;
        for (op, loc) in rel {
            match *op {
                "fence" => hb.fence(w, FenceKind::AcqRel, Scope::Gpu),
                "st.release" => {
                    last = hb
                        .write_message(w, WriteOrd::Release, Scope::Gpu, *loc, 4)
                        .map(Rc::new)
                }
                "st.relaxed" => {
                    last = hb
                        .write_message(w, WriteOrd::Relaxed, Scope::Gpu, *loc, 4)
                        .map(Rc::new)
                }
                o => panic!("{o}"),
            }
        }
        for op in acq {
            match *op {
                "ld.relaxed" => hb.read(r, ReadOrd::Relaxed, Scope::Gpu, last.as_ref()),
                "ld.acquire" => hb.read(r, ReadOrd::Acquire, Scope::Gpu, last.as_ref()),
                // A second read of the same write (acquire pattern form 2's last part).
                "ld.acquire again" => hb.read(r, ReadOrd::Acquire, Scope::Gpu, last.as_ref()),
                "fence" => hb.fence(r, FenceKind::AcqRel, Scope::Gpu),
                o => panic!("{o}"),
            }
        }
        hb.knows(r.global, w.global, data)
    }

    #[test]
    fn every_release_and_acquire_pattern_form() {
        // Release (1) release op / (2) release op then strong write on M / (3) fence then
        // strong write, each with acquire (1) acquire op / (2) strong read then acquire op
        // / (3) strong read then fence.
        let releases: [&[(&str, Location)]; 3] = [
            &[("st.release", X)],
            &[("st.release", X), ("st.relaxed", X)],
            &[("fence", X), ("st.relaxed", X)],
        ];
        let acquires: [&[&str]; 3] = [
            &["ld.acquire"],
            &["ld.relaxed", "ld.acquire again"],
            &["ld.relaxed", "fence"],
        ];
        for rel in releases {
            for acq in acquires {
                assert!(pattern(rel, acq), "{rel:?} with {acq:?} must synchronize");
            }
            // The forbidden twin's other half: a strong read with no acquire after it.
            assert!(!pattern(rel, &["ld.relaxed"]), "{rel:?} without an acquire");
        }
        // Not patterns: a relaxed write alone; a release on another location followed by
        // the strong write the reader reads; the release after the strong write.
        assert!(!pattern(&[("st.relaxed", X)], &["ld.acquire"]));
        assert!(!pattern(
            &[("st.release", Z), ("st.relaxed", X)],
            &["ld.acquire"]
        ));
    }

    fn t(cta: u32, tid: u32, tpc: u32) -> ThreadRef {
        ThreadRef {
            cta,
            tid,
            global: cta * tpc + tid,
            lane: tid % 32,
            warp: (cta * tpc + tid) / 32,
        }
    }

    /// Threads `0..writers` (of CTAs of `tpc` threads) each fence (.gpu) and increment
    /// one counter, each RMW continuing the release sequence it read. Returns the last
    /// RMW's message and each writer with its epoch before its fence.
    fn counter_chain(
        hb: &mut Hb,
        writers: u32,
        tpc: u32,
    ) -> (Rc<Message>, Vec<(ThreadRef, Epoch)>) {
        counter_chain_after(hb, writers, tpc, FenceKind::Sc)
    }

    /// [`counter_chain`] with each writer's fence of kind `kind` (`.gpu`).
    fn counter_chain_after(
        hb: &mut Hb,
        writers: u32,
        tpc: u32,
        kind: FenceKind,
    ) -> (Rc<Message>, Vec<(ThreadRef, Epoch)>) {
        let mut last: Option<Rc<Message>> = None;
        let mut epochs = Vec::new();
        for g in 0..writers {
            let w = t(g / tpc, g % tpc, tpc);
            epochs.push((w, hb.epoch(w.global)));
            hb.fence(w, kind, Scope::Gpu);
            let own = hb.write_message(w, WriteOrd::Relaxed, Scope::Gpu, X, 4);
            let m = match &last {
                Some(c) => Message::continued(c, own),
                None => own.unwrap_or_default(),
            };
            last = Some(Rc::new(m));
        }
        (last.unwrap_or_default(), epochs)
    }

    /// Message passing: writer `w` releases with `rel` (fence or op, given scope), reader
    /// `r` reads with `sem`/`scope` and then optionally fences. Returns whether the write
    /// of `data` (stamped before the release) happens before the reader's next access.
    #[allow(clippy::too_many_arguments)]
    fn mp(
        w: ThreadRef,
        rel_fence: Option<Scope>,
        rel_sem: WriteOrd,
        rel_scope: Scope,
        r: ThreadRef,
        read_sem: ReadOrd,
        read_scope: Scope,
        acq_fence: Option<(FenceKind, Scope)>,
    ) -> bool {
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let data_epoch = hb.epoch(w.global);
        if let Some(s) = rel_fence {
            hb.fence(w, FenceKind::AcqRel, s);
        }
        let msg = hb.write_message(w, rel_sem, rel_scope, X, 4).map(Rc::new);
        hb.read(r, read_sem, read_scope, msg.as_ref());
        if let Some((k, s)) = acq_fence {
            hb.fence(r, k, s);
        }
        hb.knows(r.global, w.global, data_epoch)
    }

    #[test]
    fn message_passing_patterns_and_scopes() {
        use Scope::*;
        use WriteOrd::{Relaxed, Release};
        let (w, same, other) = (t(0, 0, 2), t(0, 1, 2), t(1, 0, 2));
        // st.release / ld.acquire at gpu scope: synchronizes across CTAs.
        assert!(mp(
            w,
            None,
            Release,
            Gpu,
            other,
            ReadOrd::Acquire,
            Gpu,
            None
        ));
        // Relaxed write without a fence: nothing published.
        assert!(!mp(
            w,
            None,
            Relaxed,
            Gpu,
            other,
            ReadOrd::Acquire,
            Gpu,
            None
        ));
        // Fence + relaxed write; relaxed read + fence.
        assert!(mp(
            w,
            Some(Gpu),
            Relaxed,
            Gpu,
            other,
            ReadOrd::Relaxed,
            Gpu,
            Some((FenceKind::AcqRel, Gpu))
        ));
        // ... without the reader's fence: no synchronization.
        assert!(!mp(
            w,
            Some(Gpu),
            Relaxed,
            Gpu,
            other,
            ReadOrd::Relaxed,
            Gpu,
            None
        ));
        // Writer fence of CTA scope: only the same CTA synchronizes.
        assert!(!mp(
            w,
            Some(Cta),
            Relaxed,
            Gpu,
            other,
            ReadOrd::Relaxed,
            Gpu,
            Some((FenceKind::AcqRel, Gpu))
        ));
        assert!(mp(
            w,
            Some(Cta),
            Relaxed,
            Gpu,
            same,
            ReadOrd::Relaxed,
            Gpu,
            Some((FenceKind::AcqRel, Cta))
        ));
        // Reader fence of CTA scope cannot acquire another CTA's release ...
        assert!(!mp(
            w,
            Some(Gpu),
            Relaxed,
            Gpu,
            other,
            ReadOrd::Relaxed,
            Gpu,
            Some((FenceKind::AcqRel, Cta))
        ));
        // ... but an acquire op of CTA scope in the same CTA can.
        assert!(mp(w, None, Release, Gpu, same, ReadOrd::Acquire, Cta, None));
    }

    /// A thread that polls a counter every thread increments after a release fence
    /// (a chain of RMW messages, long enough to collapse levels), completing an acquire
    /// pattern with a `.cta` or `.gpu` fence after some polls, knows exactly what the
    /// PTX patterns give it after each one — whatever its pending lists skip as joined
    /// already (`Pending::done`): a writer's data once a read saw its increment and a
    /// later acquire fence reached its release (`.gpu` release: a `.gpu` fence, or any
    /// in its own CTA; `.cta` release: any fence in its own CTA).
    #[test]
    fn a_poller_of_a_growing_release_sequence_knows_what_the_patterns_give() {
        let (ctas, tpc) = (4u32, 64u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        let p = t(3, 63, tpc);
        // Per writer: (thread, data epoch, release scope, seen by a read, known).
        let mut writers: Vec<(ThreadRef, Epoch, Scope, bool, bool)> = Vec::new();
        let mut chain: Option<Rc<Message>> = None;
        let mut polls = 0;
        for g in 0..ctas * tpc - 1 {
            let w = t(g / tpc, g % tpc, tpc);
            let scope = if g % 3 == 0 { Scope::Cta } else { Scope::Gpu };
            let data = hb.epoch(w.global);
            hb.fence(w, FenceKind::AcqRel, scope);
            let own = hb.write_message(w, WriteOrd::Relaxed, Scope::Gpu, X, 4);
            chain = Some(Rc::new(match &chain {
                Some(c) => Message::continued(c, own),
                None => own.unwrap_or_default(),
            }));
            writers.push((w, data, scope, false, false));
            if g % 5 != 4 {
                continue;
            }
            polls += 1;
            // Poll: a relaxed read of the counter, then (not always) a fence.
            hb.read(p, ReadOrd::Relaxed, Scope::Gpu, chain.as_ref());
            for x in &mut writers {
                x.3 = true;
            }
            let fence = match polls % 4 {
                0 => None,
                1 | 2 => Some(Scope::Cta),
                _ => Some(Scope::Gpu),
            };
            if let Some(f) = fence {
                hb.fence(p, FenceKind::AcqRel, f);
                for x in &mut writers {
                    let same_cta = x.0.cta == p.cta;
                    if x.3 && (same_cta || (x.2 == Scope::Gpu && f == Scope::Gpu)) {
                        x.4 = true;
                    }
                }
            }
            for (w, data, scope, _, known) in &writers {
                assert_eq!(
                    hb.knows(p.global, w.global, *data),
                    *known,
                    "after poll {polls}: writer {} ({scope:?} release)",
                    w.global
                );
            }
        }
        assert!(polls > 40);
        assert!(writers.iter().filter(|x| x.4).count() > 100);
        assert!(writers.iter().any(|x| x.3 && !x.4));
    }

    #[test]
    fn sequence_labels_cover_only_what_a_node_publishes() {
        // A counter's chain through two collapses: every head covers every earlier node
        // of its line by label (the pointers of the collapsed ones are gone from it); a
        // second RMW on an already-continued node starts a new line, which covers neither
        // way; a copy claims nothing.
        let (ctas, tpc) = (4u32, 64u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        let (chain, _) = counter_chain(&mut hb, 2 * CHAIN + 5, tpc);
        let nodes: Vec<&Message> = chain.nodes().collect();
        assert!(nodes.iter().any(|n| n.level == 1));
        for n in &nodes[1..] {
            assert!(chain.label.covers(n.label));
            assert!(!n.label.covers(chain.label));
        }
        let w = t(3, 7, tpc);
        hb.fence(w, FenceKind::Sc, Scope::Gpu);
        let own = || hb_own(&mut Hb::clone(&hb), w);
        let first = Message::continued(&chain, own());
        let second = Message::continued(&chain, own());
        assert!(first.label.covers(chain.label));
        assert!(!second.label.covers(chain.label));
        assert!(!second.label.covers(first.label) && !first.label.covers(second.label));
        let copy = first.clone();
        assert!(!copy.label.covers(chain.label) && !first.label.covers(copy.label));
        // A poller that read the counter before the collapses and after them holds one
        // pending message, and its fence joins what the reference (a reader of the last
        // message only) knows.
        let mut a = Hb::new();
        a.begin(ctas * tpc, ctas, tpc);
        let mut msgs = Vec::new();
        let mut last: Option<Rc<Message>> = None;
        for g in 0..2 * CHAIN + 5 {
            let wr = t(g / tpc, g % tpc, tpc);
            a.fence(wr, FenceKind::Sc, Scope::Gpu);
            let own = a.write_message(wr, WriteOrd::Relaxed, Scope::Gpu, X, 4);
            let m = Rc::new(match &last {
                Some(c) => Message::continued(c, own),
                None => own.unwrap_or_default(),
            });
            msgs.push(m.clone());
            last = Some(m);
        }
        let mut b = a.clone();
        let p = t(3, 63, tpc);
        for i in [10usize, 70, 100, 132] {
            a.read(p, ReadOrd::Relaxed, Scope::Gpu, Some(&msgs[i]));
        }
        if let Some((_, Some(r))) = a.threads.existing_split_mut(p.global as usize) {
            r.flush(CtaId::of(p), a.tpc);
        }
        let pending = a.threads.rare_of(p.global as usize);
        assert_eq!(pending.map(|r| r.pending_wide.msgs.len()), Some(1));
        a.fence(p, FenceKind::AcqRel, Scope::Gpu);
        b.read(p, ReadOrd::Relaxed, Scope::Gpu, Some(&msgs[132]));
        b.fence(p, FenceKind::AcqRel, Scope::Gpu);
        for g in 0..2 * CHAIN + 5 {
            let wr = t(g / tpc, g % tpc, tpc);
            for e in 1..4 {
                let e = Epoch::new(e);
                assert_eq!(
                    a.knows(p.global, wr.global, e),
                    b.knows(p.global, wr.global, e)
                );
            }
        }
    }

    /// What thread `w` (which has fenced) publishes with a relaxed write to `X`.
    fn hb_own(hb: &mut Hb, w: ThreadRef) -> Option<Message> {
        hb.write_message(w, WriteOrd::Relaxed, Scope::Gpu, X, 4)
    }

    #[test]
    fn pending_survives_a_narrow_fence_until_a_wide_one() {
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let (w, r) = (t(0, 0, 2), t(1, 0, 2));
        let e = hb.epoch(w.global);
        hb.fence(w, FenceKind::AcqRel, Scope::Gpu);
        let m = hb
            .write_message(w, WriteOrd::Relaxed, Scope::Gpu, X, 4)
            .map(Rc::new);
        hb.read(r, ReadOrd::Relaxed, Scope::Gpu, m.as_ref());
        hb.fence(r, FenceKind::AcqRel, Scope::Cta);
        assert!(!hb.knows(r.global, w.global, e));
        hb.fence(r, FenceKind::AcqRel, Scope::Gpu);
        assert!(hb.knows(r.global, w.global, e));
    }

    #[test]
    fn cta_publication_survives_another_ctas_rmw() {
        // CTA 0: data; fence.cta; atomicExch(flag). CTA 1's atomicAdd(flag, 0) continues
        // the release sequence; thread 1 of CTA 0 reads it and fences: synchronized.
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let (w, r, x) = (t(0, 0, 2), t(0, 1, 2), t(1, 0, 2));
        let e = hb.epoch(w.global);
        hb.fence(w, FenceKind::AcqRel, Scope::Cta);
        let m = hb
            .write_message(w, WriteOrd::Relaxed, Scope::Gpu, X, 4)
            .unwrap();
        let mut chained = hb
            .write_message(x, WriteOrd::Relaxed, Scope::Gpu, X, 4)
            .unwrap_or_default();
        chained.merge(&m);
        let chained = Rc::new(chained);
        hb.read(r, ReadOrd::Relaxed, Scope::Gpu, Some(&chained));
        hb.fence(r, FenceKind::AcqRel, Scope::Cta);
        assert!(hb.knows(r.global, w.global, e));
        // The other CTA's thread does not synchronize with the `.cta` release.
        let y = t(1, 1, 2);
        hb.read(y, ReadOrd::Acquire, Scope::Gpu, Some(&chained));
        assert!(!hb.knows(y.global, w.global, e));
    }

    /// A `.cta` fence.sc takes its snapshot as its CTA's fence-SC knowledge by reference;
    /// merging it in (the earlier way) must give the same answers. Random programs of
    /// fences of every kind and scope, strong writes that publish, reads of them of every
    /// order and scope, observations and barriers, over 2 CTAs of 4 threads; after every
    /// operation, every thread's "knows writer w's epoch e" for every w and e agrees.
    #[test]
    fn cta_fence_sc_by_reference_answers_as_the_merge() {
        let kinds = [
            FenceKind::Sc,
            FenceKind::AcqRel,
            FenceKind::Acquire,
            FenceKind::Release,
        ];
        let scopes = [Scope::Cta, Scope::Gpu, Scope::Sys];
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let (ctas, tpc) = (2u32, 4u32);
        let threads = ctas * tpc;
        let mut cta_fences = 0;
        for _program in 0..200 {
            let mut by_ref = Hb::new();
            let mut merged = Hb::new();
            merged.merge_cta_sc = true;
            for h in [&mut by_ref, &mut merged] {
                h.begin(threads, ctas, tpc);
            }
            // The latest message at each of two locations, per engine.
            let mut msgs: [[Option<Rc<Message>>; 2]; 2] = Default::default();
            for _op in 0..40 {
                let g = next(threads as u64) as u32;
                let th = t(g / tpc, g % tpc, tpc);
                let scope = scopes[next(3) as usize];
                let loc = next(2) as usize;
                match next(5) {
                    0 | 1 => {
                        let kind = kinds[next(4) as usize];
                        cta_fences += (kind == FenceKind::Sc && scope == Scope::Cta) as u32;
                        by_ref.fence(th, kind, scope);
                        merged.fence(th, kind, scope);
                    }
                    2 => {
                        let ord = [WriteOrd::Relaxed, WriteOrd::Release][next(2) as usize];
                        let at = Location::Global(0x1000 + 8 * loc as u64);
                        for (i, h) in [&mut by_ref, &mut merged].into_iter().enumerate() {
                            msgs[i][loc] = h.write_message(th, ord, scope, at, 4).map(Rc::new);
                        }
                    }
                    3 => {
                        let ord = [ReadOrd::Relaxed, ReadOrd::Acquire][next(2) as usize];
                        for (i, h) in [&mut by_ref, &mut merged].into_iter().enumerate() {
                            h.read(th, ord, scope, msgs[i][loc].as_ref());
                        }
                        let seq = next(4);
                        by_ref.observe(g, loc as u64, seq);
                        merged.observe(g, loc as u64, seq);
                    }
                    _ => {
                        // The whole CTA of `th` meets at a barrier.
                        let cta = th.cta;
                        let members: Vec<ThreadRef> = (0..tpc).map(|i| t(cta, i, tpc)).collect();
                        for h in [&mut by_ref, &mut merged] {
                            for m in &members {
                                h.arrive(&Barrier {
                                    thread: *m,
                                    kind: BarrierKind::Sync,
                                    id: 0,
                                    site: 0,
                                });
                            }
                            let b = Barrier {
                                thread: members[0],
                                kind: BarrierKind::Sync,
                                id: 0,
                                site: 0,
                            };
                            h.release(&b, &members);
                        }
                    }
                }
                for g in 0..threads {
                    for w in 0..threads {
                        for e in 1..=by_ref.epoch(w).get() {
                            let e = Epoch::new(e);
                            assert_eq!(
                                by_ref.knows(g, w, e),
                                merged.knows(g, w, e),
                                "thread {g} on writer {w} epoch {e:?}"
                            );
                        }
                    }
                }
            }
        }
        // The programs exercise the shortcut.
        assert!(cta_fences > 200, "{cta_fences} .cta fence.sc");
    }

    #[test]
    fn fence_sc_order_is_transitive_and_scoped() {
        let mut hb = Hb::new();
        hb.begin(6, 3, 2);
        let (a, b, c, d) = (t(0, 0, 2), t(1, 0, 2), t(2, 0, 2), t(2, 1, 2));
        let ea = hb.epoch(a.global);
        hb.fence(a, FenceKind::Sc, Scope::Gpu);
        // A later gpu fence.sc knows a's earlier accesses, through the order.
        hb.fence(b, FenceKind::Sc, Scope::Gpu);
        assert!(hb.knows(b.global, a.global, ea));
        // A `.cta` fence.sc of another CTA is not morally strong with a's.
        hb.fence(d, FenceKind::Sc, Scope::Cta);
        assert!(!hb.knows(d.global, a.global, ea));
        // Transitivity: b releases to c with st.release / ld.acquire; c knows a's access.
        let eb = hb.epoch(b.global);
        let m = hb
            .write_message(b, WriteOrd::Release, Scope::Gpu, X, 4)
            .map(Rc::new);
        hb.read(c, ReadOrd::Acquire, Scope::Gpu, m.as_ref());
        assert!(hb.knows(c.global, b.global, eb));
        assert!(hb.knows(c.global, a.global, ea));
        // Accesses after a's fence are not known.
        assert!(!hb.knows(b.global, a.global, hb.epoch(a.global)));
        // A gpu fence.sc then a cta fence.sc of the same CTA: morally strong.
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let (x, y) = (t(1, 0, 2), t(1, 1, 2));
        hb.fence(a, FenceKind::Sc, Scope::Gpu);
        hb.fence(x, FenceKind::Sc, Scope::Gpu);
        hb.fence(y, FenceKind::Sc, Scope::Cta);
        assert!(hb.knows(y.global, a.global, ea));
    }

    #[test]
    fn barriers_publish_every_arrival() {
        let mut hb = Hb::new();
        hb.begin(4, 2, 2);
        let (b, c) = (t(1, 0, 2), t(1, 1, 2));
        let eb = hb.epoch(b.global);
        let ev = |th| Barrier {
            thread: th,
            kind: BarrierKind::Sync,
            id: 0,
            site: 0,
        };
        hb.arrive(&ev(b));
        hb.arrive(&ev(c));
        hb.release(&ev(c), &[b, c]);
        assert!(hb.knows(c.global, b.global, eb));
        assert!(!hb.knows(c.global, b.global, hb.epoch(b.global)));
    }

    /// `bar.warp.sync` with several member masks at once (PTX ISA: it orders memory
    /// among the threads that take part): each group's lanes learn every arrival of their
    /// own group, and nothing of another group's.
    #[test]
    fn warp_barriers_of_each_member_mask_publish_to_their_own_lanes() {
        for masks in [
            [0x0000_ffffu32, 0xffff_0000],
            [0x5555_5555, 0xaaaa_aaaa],
            [0x0000_00ff, 0xffff_ff00],
        ] {
            let mut hb = Hb::new();
            hb.begin(32, 1, 32);
            let lanes = |m: u32| (0..32).filter(move |l| m >> l & 1 != 0);
            let th = |l: u32| ThreadRef {
                cta: 0,
                tid: l,
                global: l,
                lane: l,
                warp: 0,
            };
            let ev = |l: u32, m: u32| Barrier {
                thread: th(l),
                kind: BarrierKind::Warp,
                id: m,
                site: 0,
            };
            let before: Vec<Epoch> = (0..32).map(|l| hb.epoch(l)).collect();
            // Every lane arrives (one warp step), then each group completes.
            for l in 0..32 {
                let m = masks.iter().copied().find(|m| m >> l & 1 != 0).unwrap();
                hb.arrive(&ev(l, m));
            }
            for &m in &masks {
                let threads: Vec<ThreadRef> = lanes(m).map(th).collect();
                hb.release(&ev(lanes(m).next().unwrap(), m), &threads);
            }
            for &m in &masks {
                for a in lanes(m) {
                    for b in 0..32u32 {
                        let same = m >> b & 1 != 0;
                        assert_eq!(
                            hb.knows(a, b, before[b as usize]),
                            same || a == b,
                            "masks {masks:08x?}: lane {a} of {m:#010x} and lane {b}"
                        );
                    }
                }
            }
        }
    }

    /// `k.raise` with plain numbers.
    fn kraise(k: &mut Knowledge, cta: u32, tid: u32, tpb: u32, e: u32) {
        k.raise(CtaId(cta), Tid(tid), Tpb(tpb), Epoch::new(e));
    }

    /// `k.get` with plain numbers.
    fn kget(k: &Knowledge, cta: u32, tid: u32) -> u32 {
        k.get(CtaId(cta), Tid(tid)).get()
    }

    #[test]
    fn many_extra_entries_fold_into_the_clock() {
        let mut k = Knowledge::default();
        for i in 0..10 {
            kraise(&mut k, 0, i, 16, i + 1);
        }
        for i in 0..10 {
            assert_eq!(kget(&k, 0, i), i + 1);
        }
        assert_eq!(kget(&k, 1, 0), 0);
    }

    #[test]
    fn joining_many_at_once_equals_joining_one_by_one() {
        // Single-thread releases of several CTAs (some repeated, some older than what the
        // accumulator knows), into an accumulator with and without a clock of its own.
        let tpb = 8;
        let mut others = Vec::new();
        for i in 0..40u32 {
            let mut k = Knowledge::default();
            kraise(&mut k, i % 3, (i * 5) % tpb, tpb, 1 + (i * 7) % 11);
            if i % 9 == 0 {
                kraise(&mut k, 3, i % tpb, tpb, 2);
            }
            k.sc_seen = i % 6;
            others.push(k);
        }
        for seeded in [false, true] {
            let mut base = Knowledge::default();
            if seeded {
                for t in 0..tpb {
                    kraise(&mut base, 1, t, tpb, 4);
                }
                kraise(&mut base, 2, 3, tpb, 9);
            }
            let mut one = base.clone();
            for o in &others {
                one.join(o, Tpb(tpb));
            }
            let mut many = base.clone();
            let refs: Vec<&Knowledge> = others.iter().collect();
            many.join_many(&refs, Tpb(tpb));
            for cta in 0..5 {
                for tid in 0..tpb {
                    assert_eq!(
                        kget(&one, cta, tid),
                        kget(&many, cta, tid),
                        "({cta}, {tid})"
                    );
                }
            }
            assert_eq!(one.sc_seen(), many.sc_seen());
            // The base it was copied from is unchanged (copy on write).
            if seeded {
                assert_eq!(kget(&base, 1, 0), 4);
                assert_eq!(kget(&base, 0, 0), 0);
            }
        }
    }

    #[test]
    fn raising_writes_in_place_only_into_unshared_chunks() {
        let mut a = Knowledge::default();
        for t in 0..8 {
            kraise(&mut a, 0, t, 8, 1);
        }
        let b = a.clone();
        kraise(&mut a, 0, 2, 8, 5);
        assert_eq!((kget(&a, 0, 2), kget(&b, 0, 2)), (5, 1));
        drop(b);
        kraise(&mut a, 0, 3, 8, 6);
        assert_eq!((kget(&a, 0, 2), kget(&a, 0, 3)), (5, 6));
    }

    #[test]
    fn collapsed_cta_parts_share_the_wide_join_and_stay_cta_local() {
        // CTAs 0 and 1 (64 threads each) fence (.gpu) and increment one counter: each
        // CTA's 64 RMWs collapse into one node whose CTA part is its wide part (the same
        // knowledge, made once). A `.cta` acquirer of CTA 0 still takes only CTA 0's
        // releases, one of CTA 2 none, and a `.gpu` acquirer all of them.
        let (ctas, tpc) = (3u32, 64u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        let (chain, epochs) = counter_chain(&mut hb, 2 * tpc, tpc);
        let collapsed: Vec<&Message> = chain.nodes().filter(|n| n.level == 1).collect();
        assert_eq!(collapsed.len(), 2);
        for n in &collapsed {
            assert_eq!(n.local.len(), 1);
            let wide = n.wide.as_ref().expect("a wide part");
            assert!(Rc::ptr_eq(wide, &n.local[0].1));
        }
        let (a, b, c) = (t(0, 5, tpc), t(2, 0, tpc), t(2, 1, tpc));
        for (r, s) in [(a, Scope::Cta), (b, Scope::Cta), (c, Scope::Gpu)] {
            hb.read(r, ReadOrd::Relaxed, Scope::Gpu, Some(&chain));
            hb.fence(r, FenceKind::AcqRel, s);
        }
        for &(w, e) in &epochs {
            if w.global != a.global {
                assert_eq!(hb.knows(a.global, w.global, e), w.cta == 0, "{w:?}");
            }
            assert!(!hb.knows(b.global, w.global, e), "{w:?}");
            assert!(hb.knows(c.global, w.global, e), "{w:?}");
        }
    }

    #[test]
    fn a_collapsed_spill_shares_the_wide_parts_chunks() {
        // 64 CTAs of one thread each fence (.gpu) and increment one counter: the collapse
        // keeps LOCAL_CAP CTAs' parts and joins the others into the spill, apart from the
        // wide part. Every spill chunk that equals the wide part's is the wide part's own,
        // so a `.gpu` acquirer, which takes both, compares them by pointer — and it knows
        // what it knew before: every writer. (`fence.acq_rel`: after `fence.sc` the
        // newest snapshot covers the others through the fence-SC order and no join is
        // made, `a_collapse_after_sc_fences_shares_the_newest_snapshot`.)
        let (ctas, tpc) = (65u32, 1u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        let (chain, epochs) = counter_chain_after(&mut hb, CHAIN, tpc, FenceKind::AcqRel);
        let node = chain
            .nodes()
            .find(|n| n.level == 1)
            .expect("a collapsed node");
        let wide = node.wide.as_ref().expect("a wide part");
        let spill = node.spill.as_ref().expect("a spill");
        let mut shared = 0;
        for (c, r) in spill.clock().chunks() {
            let w = wide
                .clock()
                .chunks()
                .find(|(x, _)| *x == c)
                .expect("in the wide part");
            assert_eq!(r[..], w.1[..]);
            assert!(Rc::ptr_eq(r, w.1), "CTA {} not shared", c.0);
            shared += 1;
        }
        assert_eq!(shared, CHAIN as usize - LOCAL_CAP);
        let r = t(64, 0, tpc);
        hb.read(r, ReadOrd::Relaxed, Scope::Gpu, Some(&chain));
        hb.fence(r, FenceKind::AcqRel, Scope::Gpu);
        for &(w, e) in &epochs {
            assert!(hb.knows(r.global, w.global, e), "{w:?}");
        }
    }

    #[test]
    fn a_collapse_after_sc_fences_shares_the_newest_snapshot() {
        // As above with `fence.sc.gpu` (`__threadfence()`): each writer's release snapshot
        // is what the fence-SC order knew by its fence, so the newest covers the others
        // through the order. The collapsed node's wide part is that snapshot itself, not
        // a join of 64 (no clock is copied), and an acquirer still knows every writer.
        let (ctas, tpc) = (65u32, 1u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        let (chain, epochs) = counter_chain(&mut hb, CHAIN, tpc);
        let node = chain
            .nodes()
            .find(|n| n.level == 1)
            .expect("a collapsed node");
        let wide = node.wide.as_ref().expect("a wide part");
        assert!(wide.sc_exact, "the wide part is a fence's own snapshot");
        assert_eq!(wide.sc_seen(), CHAIN, "the newest writer's fence");
        let r = t(64, 0, tpc);
        hb.read(r, ReadOrd::Relaxed, Scope::Gpu, Some(&chain));
        hb.fence(r, FenceKind::AcqRel, Scope::Gpu);
        for &(w, e) in &epochs {
            assert!(hb.knows(r.global, w.global, e), "{w:?}");
        }
        // A changed copy is no fence's snapshot any more.
        let mut k = (**wide).clone();
        k.raise(CtaId(0), Tid(0), Tpb(tpc), Epoch::new(1 << 20));
        assert!(!k.sc_exact);
    }

    #[test]
    fn long_release_sequences_keep_every_publication() {
        // 4,607 threads of 72 CTAs each fence (.gpu) and increment one counter, each RMW
        // continuing the sequence it read: chains of references whose top CHAIN nodes of
        // one level collapse into a node of the next (4,096 = CHAIN² RMWs reach level 2).
        // A reader of the last value that fences then knows every writer's data, and one
        // that does not fence knows none of it.
        let (ctas, tpc) = (72u32, 64u32);
        let mut hb = Hb::new();
        hb.begin(ctas * tpc, ctas, tpc);
        // The last thread stays out: it only reads.
        let (chain, epochs) = counter_chain(&mut hb, ctas * tpc - 1, tpc);
        // Fewer than CHAIN nodes per level: 4,606 = 1·64² + 7·64 + 62 RMWs after the
        // first write.
        let levels: Vec<u8> = chain.nodes().map(|n| n.level).collect();
        assert!(levels.windows(2).all(|w| w[0] <= w[1]), "{levels:?}");
        assert_eq!(levels.iter().filter(|l| **l == 2).count(), 1, "{levels:?}");
        assert!(levels.len() < 3 * CHAIN as usize);
        let (r, q) = (t(0, 0, tpc), t(ctas - 1, tpc - 1, tpc));
        hb.read(r, ReadOrd::Relaxed, Scope::Gpu, Some(&chain));
        hb.read(q, ReadOrd::Relaxed, Scope::Gpu, Some(&chain));
        hb.fence(r, FenceKind::AcqRel, Scope::Gpu);
        for &(w, e) in &epochs {
            if w.global != r.global {
                assert!(
                    hb.knows(r.global, w.global, e),
                    "reader misses writer {w:?}"
                );
            }
        }
        // `q` only read: no acquire pattern, so it knows nobody's data.
        assert!(epochs
            .iter()
            .all(|&(w, e)| !hb.knows(q.global, w.global, e)));
    }

    /// Knowledge (a clock, up to [`EXTRA`] single entries beside it, folded in when they
    /// overflow) against a plain dense vector clock, over random raises, joins, batch
    /// joins ([`Knowledge::join_many`]), folds and clones.
    mod knowledge_vs_plain {
        use super::*;
        use proptest::prelude::*;

        const CTAS: u32 = 10;
        const TPB: u32 = 4;
        const N: usize = 4;

        #[derive(Debug, Clone)]
        enum Op {
            Raise(usize, u32, u32, u32),
            Join(usize, usize),
            JoinMany(usize, Vec<usize>),
            Fold(usize),
            Clone(usize, usize),
        }

        fn op() -> impl Strategy<Value = Op> {
            let k = 0..N;
            prop_oneof![
                6 => (k.clone(), 0..CTAS, 0..TPB, 1u32..30)
                    .prop_map(|(i, c, t, e)| Op::Raise(i, c, t, e)),
                3 => (k.clone(), k.clone()).prop_map(|(i, j)| Op::Join(i, j)),
                2 => (k.clone(), prop::collection::vec(k.clone(), 0..6))
                    .prop_map(|(i, js)| Op::JoinMany(i, js)),
                1 => k.clone().prop_map(Op::Fold),
                1 => (k.clone(), k).prop_map(|(i, j)| Op::Clone(i, j)),
            ]
        }

        fn at(c: u32, t: u32) -> usize {
            (c * TPB + t) as usize
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn knowledge_behaves_like_a_plain_vector_clock(
                ops in prop::collection::vec(op(), 1..60)
            ) {
                let tpb = Tpb(TPB);
                let mut ks: Vec<Knowledge> = vec![Knowledge::default(); N];
                let mut ps: Vec<Vec<u32>> = vec![vec![0; (CTAS * TPB) as usize]; N];
                for op in ops {
                    match op {
                        Op::Raise(i, c, t, e) => {
                            ks[i].raise(CtaId(c), Tid(t), tpb, Epoch::new(e));
                            let x = &mut ps[i][at(c, t)];
                            *x = (*x).max(e);
                        }
                        Op::Join(i, j) => {
                            let (o, p) = (ks[j].clone(), ps[j].clone());
                            ks[i].join(&o, tpb);
                            for (a, b) in ps[i].iter_mut().zip(&p) {
                                *a = (*a).max(*b);
                            }
                        }
                        Op::JoinMany(i, js) => {
                            let others: Vec<Knowledge> =
                                js.iter().map(|&j| ks[j].clone()).collect();
                            let refs: Vec<&Knowledge> = others.iter().collect();
                            ks[i].join_many(&refs, tpb);
                            for &j in &js {
                                let p = ps[j].clone();
                                for (a, b) in ps[i].iter_mut().zip(&p) {
                                    *a = (*a).max(*b);
                                }
                            }
                        }
                        Op::Fold(i) => ks[i].fold(tpb),
                        Op::Clone(i, j) => {
                            ks[i] = ks[j].clone();
                            ps[i] = ps[j].clone();
                        }
                    }
                    for i in 0..N {
                        prop_assert!(ks[i].extras().len() <= EXTRA);
                        for c in 0..CTAS {
                            let chunk = ks[i].clock_chunk(CtaId(c));
                            for t in 0..TPB {
                                let got = ks[i].get(CtaId(c), Tid(t)).get();
                                prop_assert_eq!(got, ps[i][at(c, t)], "k{} ({}, {})", i, c, t);
                                // The clock chunk is a lower bound.
                                if let Some(ch) = chunk {
                                    prop_assert!(ch[t as usize].get() <= got);
                                }
                            }
                        }
                        for j in 0..N {
                            // `covers` may say false, never a wrong true.
                            if ks[i].covers(&ks[j]) {
                                prop_assert!(
                                    ps[i].iter().zip(&ps[j]).all(|(a, b)| a >= b),
                                    "k{} covers k{}", i, j
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
