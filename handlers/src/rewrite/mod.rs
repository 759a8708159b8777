//! The PTX→PTX rewrite: the write buffers of [`crate::buffers`], moved onto the device.
//!
//! Every global/shared (or generic) load, store and atomic of a module, every draining
//! fence (`fence.sc`/`acq_rel`/`release`, `membar`), every barrier (`bar`/`barrier`,
//! `bar.warp.sync`) and every thread exit (`exit`, `ret` of a kernel) becomes a short
//! *block* that calls the device runtime (`runtime.cu`, committed as `runtime.ptx`). The
//! runtime implements the drain table of [`crate::buffers`] under
//! [`DrainPolicy::Device`](crate::DrainPolicy::Device) with the same selection function
//! ([`crate::select`]), per-thread buffers and CTA overlays in global memory that the host
//! allocates ([`layout`]), and statistics counters the host reads back. Original
//! instructions keep their `.loc`, and every instruction of a block carries the `.loc` of
//! the instruction it replaces, so faults and traces still name CUDA lines.
//!
//! | original | block |
//! |---|---|
//! | `st` (scalar or vector) | per element: `__fencehound_store(t, g, value, meta)`; the original store (one element, same qualifiers) only when it returned 0 |
//! | `ld`, `ldu` | per element (a vector of at most 8 bytes: once): `__fencehound_load(t, g, meta)` returns `g` or the thread's scratch word holding the forwarded value; the original load (one element, same qualifiers, `.nc`/`ldu` dropped: the scratch word is written) reads from there |
//! | `atom`, `red` | `__fencehound_atom(t, g, meta)` (drains; for a `.cta` atomic on global memory under `scoped` the scratch word holds the CTA-visible value); the original atomic on the returned address; `__fencehound_atom_done` leaves a `.cta` result in the CTA overlay |
//! | fence, barrier, `exit`/kernel `ret` | `__fencehound_drain(t, meta)` (`__fencehound_exit(t)` at an exit), then the original instruction |
//!
//! In a kernel (of a module whose other functions never `exit`) every block is guarded by
//! one predicated branch: the kernel reads at entry the launch's *mode* the host wrote into
//! the control block ([`layout`]'s `launch_mode`). A *full* launch takes the blocks above.
//! A *quiet* one — it buffers, but its selection function never selects (`p_w = 0`) and,
//! under `scoped`, the module has no `.cta` atomic that could use a CTA overlay, so no
//! buffer, overlay or orphan queue can ever hold an entry — runs the original instruction
//! only; its stores are counted per space in two registers that the thread's exit adds to
//! the runtime's counters (the `stores_seen` statistics). An inactive launch runs the
//! original instructions. The lockstep flavour reads the mode inside each block.
//!
//! In a full launch the kernel also sets its thread's header up once, in the kernel
//! itself (what `__fencehound_begin` does, without the call; the lockstep flavour calls
//! the runtime's in each block): at entry, or, when the body begins with branches that
//! only return (`if (threadIdx.x != 0) return;`), after them, so that threads which return
//! at once skip it (`emit::setup_point`: an exit is the one site such a thread reaches,
//! and it needs no header), and keeps the header's hot words in registers (the
//! *cache*: the entry count, per-space counts, liveness ticks, store count and address
//! filter, and the few constants every fast path compares against; what only rarer paths
//! read stays in the header and the control block, since each register kept for the whole
//! kernel is one the original's values compete with). The runtime reads and changes those
//! words too, so the kernel writes the changing ones back to the header before every
//! runtime call (and call of the module's functions, which may make runtime calls) and
//! reads them again after it; the statistics (stores seen and buffered per space, the
//! longest buffer) go to the header's words as they happen (`red` on the thread's own
//! header), where the host reads them with the runtime's own. The
//! lockstep flavour loads the cache at each block's start and writes it back at the
//! block's end, so the differential test checks the inlined paths on the header as the
//! runtime sees it; `RewriteOptions::eager_header` does the same in the device flavour, and
//! a test requires the same executions of both forms.
//!
//! A load of a `.global` or `.shared` address that makes one runtime call first runs
//! that call's fast path inline: when the thread holds no entry, no liveness drain is due
//! and (a global load under `scoped`) the own CTA's overlay is empty (the cache keeps
//! a pointer to the CTA's area), it counts the liveness tick and runs the original
//! instruction, which is what the call would have done (`__fencehound_load` then returns
//! the address itself); otherwise it makes the call. A scalar, non-release store to a
//! `.global` or `.shared` address runs `__fencehound_store`'s fast paths inline
//! (`emit::inline_store`): when it overlaps none of the thread's entries of its space, the
//! selection function (the header's `prefix` and per-space threshold) decides (a
//! threshold that selects every store, `p_w = 1`, without the hash); a selected store
//! with room is pushed to the thread's buffer there, an unselected one with no CTA overlay
//! to consult is counted and performed; anything else makes the call. A fence or barrier
//! likewise runs `__fencehound_drain` inline: a thread that holds no entry (and, for a
//! drain to memory under `scoped`, whose CTA overlay is empty) skips it, one that holds
//! entries writes them when the CTA overlay has no part in the drain. Every call passes
//! the header as its first argument `t`, so the runtime does not look it up again
//! (`fh_self`: about 25 lane instructions per call); other functions, and the lockstep
//! flavour, pass 0 and the runtime looks it up.
//!
//! `g` is the generic address (`cvta` of a state-space address), so one runtime serves
//! every state space; addresses in local, const or param memory are left alone, as the
//! native hooks never see them. Which model (`bugaroo`, `scoped`), `p_w`, seed and launch
//! index apply is read at run time from the control block the host fills
//! ([`layout::control_bytes`]); a launch the host marks inactive behaves like the original.
//!
//! # Two flavours
//!
//! [`Flavor::Device`] is what a GPU runs: a warp executes a block with its lanes in
//! SIMT fashion. [`Flavor::Lockstep`] wraps the same per-lane code for the differential
//! test on the vgpu: a marker load (`__fencehound_mark[0]`) opens the block, the active
//! lanes run the per-lane code one at a time in lane order (a loop over `activemask`
//! with a `bar.warp.sync` per turn), and a marker (`[1]`, or `[2]` before a fence,
//! barrier or exit, which then closes the block) ends it. With the scheduler of
//! [`lockstep`], which keeps running a warp while any of its lanes is inside a block and
//! draws random choices only outside blocks, the rewritten kernel takes exactly the
//! interleaving of the original (steps between blocks have the same length; a block
//! replaces one preemption point of the original and runs as one step of it, lanes in the
//! order the vgpu executes a warp instruction). So the rewritten PTX on plain memory must
//! give, for the same seeds, the same memory writes in the same order, outputs and
//! statistics as the original under [`crate::WriteBuffers`] with the device policy, and
//! any difference is a bug in one of the two. The per-lane code is the same in both
//! flavours; what only the device flavour exercises is lanes of a warp running blocks
//! concurrently, which touches nothing shared but the CTA overlay, taken under a lock.
//!
//! # Why the device policy
//!
//! The native handlers have rules a thread on a GPU cannot follow, because they need a
//! view of the whole launch: an exited thread's entries stay buffered until the vgpu sees
//! that nothing can progress (then one random entry drains) or the kernel ends (random
//! order). The device policy ([`crate::DrainPolicy::Device`]) replaces them by rules
//! threads can apply themselves, and the differential test compares against the native
//! handlers running that policy (so the two are equal by construction of the test, and
//! the policy's soundness is checked on its own: `litmus/tests/dat3m/rewrite.rs` runs the
//! litmus suite under it, 0 unsound):
//! - thread exit: the thread's entries move, still invisible, to its CTA's *orphan queue*;
//!   the launch's last thread to exit (a counter in the control block) drains every CTA.
//!   Draining at exit instead would be simpler, but an underfenced critical section just
//!   before a thread's exit (cbe_dot's lock) would then never show its lost update: the
//!   first version did that and found no bug in cbe_dot. Keeping an exited thread's
//!   stores invisible for a while is what the native handlers do, and allowed;
//! - liveness: every `liveness_period`-th load or atomic of a thread first drains one
//!   entry to memory. Like the native stall rule it picks a *holder*, then one of its
//!   entries (replaced by the oldest of its 8-byte block, so each address keeps its
//!   order), but only among the holders a thread can reach: itself, each CTA overlay that
//!   is not empty, and each exited thread whose entries wait in an orphan queue (the queue
//!   weighs as many holders as threads put entries into it since it was last empty, at
//!   most its length). Its own buffer weighs as many holders as there are live threads
//!   holding entries (`FhCtl.holders`, counted as buffers fill and empty): each live
//!   holder drains only itself, at its own ticks, so together they get the share of the
//!   drains the native rule's uniform pick gives them. With weight 1, eight spinning
//!   look-back threads each published their own stores about eight times less often than
//!   natively, against the same orphans: `cub_scan no_fence_2` under `scoped` at
//!   `p_w = 1` found its bug 16-20 times in 40 instrumented, 38 natively (35 with the
//!   weight). A thread spinning on a flag executes loads, so the store it waits
//!   for — held by a thread that spins (its own liveness), waits at a barrier (barriers
//!   drain, to the CTA's overlay at least), or has exited (an orphan) — reaches memory;
//!   only a state with nothing buffered can hang. A store may become visible at any time,
//!   so the rule is sound;
//! - CTA overlays and orphan queues have a bound (device memory is allocated up front);
//!   a full one drains to memory, a publication earlier than required: sound;
//! - a launch that does not complete loses what is still buffered, as on a device.
//!
//! # Where the device differs from the native handlers
//!
//! `fuzz --instrumented` and `fuzz` run the same model with the same selection function,
//! but not the same drain *order* when the program does not force one, so their failure
//! rates can differ (`scripts/parity.py` compares them cell by cell; `tests/it/parity.rs`
//! checks a sample in the suite). By construction:
//! - the native stall rule drains an entry of *any* thread once nothing can progress,
//!   including a thread that is still running or waits at a barrier; a GPU thread can only
//!   drain its own buffer and the CTA queues (overlays, orphans), so the device picks
//!   among those holders only, and other live threads' stores wait for their owners
//!   (fence, barrier, own liveness, exit). The own buffer stands in for all live holders
//!   in the pick (see above), so live and exited holders are drained in the native
//!   proportion, though a live one only when it runs loads;
//! - the native rule fires only when the whole launch is stuck; the device's fires every
//!   `liveness_period` loads of a thread, so publications happen while other threads
//!   still progress;
//! - an exited thread's entries lose their thread boundaries in the orphan queue: the
//!   entry is uniform in the queue, not a uniform thread then one of its entries.
//!
//! Not a difference by construction, but one the vgpu made until it was told: every
//! access of the runtime's calls and of the code the rewrite adds to the kernel was a
//! preemption point of the vgpu's scheduler, and a step starting in that code ended again
//! at the original instruction, so an instrumented kernel met several scheduling decisions
//! per original access where the native handlers run their hook within the access, and
//! its interleavings came from another distribution (`cub_scan no_fence_3` under `bugaroo`
//! at `p_w = 0.25`: native 17/80, instrumented 1/80). `fuzz --instrumented` now makes the
//! runtime's functions ([`runtime_functions`]), the generated code (its instructions have
//! PTX line 0, `emit::GENERATED`) quiet (`fencehound_vgpu::Quiet`): the vgpu decides
//! where, and as often as, it does for the original kernel — also at an original load
//! that reads the thread's scratch word (a forwarded value), which natively is a
//! preemption point like any load. At `p_w = 0` an
//! instrumented execution runs the native one's interleaving exactly (the same outputs
//! for every campaign variant, `fuzzer/tests/it/instrumented_equivalence.rs`), and the cell
//! above finds 13/80. At `p_w > 0` lanes of a warp can take different paths through the
//! runtime (one holds entries, another not); a divergence ends a vgpu step even in quiet
//! code, so the instrumented kernel still meets some scheduling decisions the native one
//! does not, and a change to the shape of the runtime's code changes which interleavings
//! a seed gives (not which ones can occur). A kernel's `ret` stays a `ret` in the device flavour for the same
//! reason (an `exit` is a preemption point, a `ret` is not), and the runtime's CTA lock
//! backs off with `nanosleep`, which stays a preemption point in quiet code, so a lane
//! waiting for another lane of its warp yields to it. On a GPU nothing is atomic; the
//! vgpu's scheduler is a sampling choice, not a model of a GPU's timing.
//!
//! Measured (BENCHMARKS.md, issue 25): with the holder pick, every cell of the sweep
//! agrees within the 95% intervals. Before it (own buffer drained on every tick, one CTA
//! entry besides), `cub_scan no_fence_3` under `scoped` found its bug 0 in 40 times at
//! `p_w = 1` (native 10 in 40): a spinning thread published its own status word long
//! before an exited thread's orphaned ones. The price is time: a look-back that waits for
//! one particular orphan now waits for about one drain per holder (`cub_scan no_fence_3`
//! under `scoped` at `p_w = 1`: 3,372× the original's lane instructions, ~190 M per
//! execution, against 357× in the 2026-11-24 overhead table).
//!
//! # Soundness on hardware
//!
//! A buffered store is performed later, by the same thread, before the next fence,
//! barrier, release or exit of that thread in program order (or earlier: liveness,
//! full buffer, a later access to the same address). The drain writes come before the
//! original fence/barrier instruction, which still executes, so it orders them as it
//! ordered the original stores. An entry drains with the strength it was stored with: a
//! buffered `st.release` is written with `st.release` (so the writes drained before it stay
//! ordered before it), a relaxed one with `st.relaxed` of its scope. Loads see the
//! thread's own newest store (forwarding) or memory; CTA-overlay reads happen under the
//! overlay lock. `weak`-model loads (reading older values) would need per-location store
//! histories on the device and are not implemented: the rewrite refuses that model.

pub mod layout;
pub mod lockstep;
pub mod regcap;
pub mod runtime;

mod emit;

use fencehound_ptx as ptx;

/// Names the rewrite adds to a module; a module that already has them was instrumented.
pub const PREFIX: &str = "__fencehound_";
/// The control-block pointer the host sets (`.global .u64`).
pub const CTL: &str = "__fencehound_ctl";
/// The lockstep markers (`.global .u32[4]`): begin, end, end before a final instruction.
pub const MARK: &str = "__fencehound_mark";

/// Which code a block gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// What runs on a GPU.
    Device,
    /// The same per-lane code, serialised per lane between markers, for the differential
    /// test on the vgpu.
    Lockstep,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteOptions {
    pub flavor: Flavor,
    /// A test seam of the device flavour: the header's words a fast kernel keeps in
    /// registers are written back at the end of every block (as the lockstep flavour
    /// does) instead of only before runtime calls and at the thread's exit. The same
    /// executions, with more instructions: a test compares the two
    /// (`fuzzer/tests/it/instrumented_equivalence.rs`).
    pub eager_header: bool,
    /// The write-buffer model the kernels are for. `None`: one module for `bugaroo` and
    /// `scoped`, a flag of the launch's control block choosing at each site whether CTA
    /// overlays take part; `Some(m)`: the device flavour's fast paths are emitted for `m`
    /// alone (no per-site test of the flag: under `bugaroo` no overlay code at all), and
    /// the host must run the module under `m` only (`fencehound instrument --model`, the
    /// instrumented backends, which build one module per model).
    pub model: Option<crate::Model>,
}

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions {
            flavor: Flavor::Device,
            eager_header: false,
            model: None,
        }
    }
}

/// Why a module cannot be instrumented.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error("{function}: PTX line {line}: `{text}`: {why}")]
    Unsupported {
        function: String,
        line: u32,
        text: String,
        why: String,
    },
    #[error("the module is already instrumented (it defines `{0}`)")]
    AlreadyInstrumented(String),
    #[error("internal error: generated PTX does not parse: {0}")]
    Generated(String),
}

/// A rewritten module and what was instrumented.
#[derive(Debug, Clone)]
pub struct Rewritten {
    pub module: ptx::Module,
    /// Instrumented instructions: loads, stores, atomics, drain points (fences, barriers,
    /// exits).
    pub counts: SiteCounts,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiteCounts {
    pub loads: u32,
    pub stores: u32,
    pub atomics: u32,
    pub drains: u32,
}

/// Instruments every function of `m`.
pub fn rewrite(m: &ptx::Module, opts: &RewriteOptions) -> Result<Rewritten, RewriteError> {
    emit::rewrite_module(m, opts)
}

/// The names of the device runtime's functions (those the rewrite adds to a module with a
/// body). A vgpu running the instrumented kernel makes them quiet (`fencehound_vgpu::Quiet`),
/// so their calls run as one step, as the native hooks do.
pub fn runtime_functions() -> Result<Vec<String>, RewriteError> {
    Ok(emit::runtime_module()?
        .functions()
        .filter(|f| f.body.is_some())
        .map(|f| f.name.clone())
        .collect())
}

/// A rewritten module as two modules: the kernels' part, which declares the device
/// runtime's visible variables and functions `.extern` instead of defining them, and the
/// runtime's part, which is the runtime as [`runtime::PTX`] has it under `m`'s own
/// `.version`/`.target`/`.address_size`. Linked (`fencehound_toolchain::assemble_linked`),
/// they are `m`: tests that assemble many instrumented modules assemble the runtime's part
/// once per architecture (ptxas spent 70% of each whole module on it). `None` when `m`
/// does not hold the runtime's items verbatim (then only the whole module can be
/// assembled).
pub fn split_runtime(m: &ptx::Module) -> Option<(ptx::Module, ptx::Module)> {
    use ptx::{Item, Linkage};
    let rt = emit::runtime_module().ok()?;
    let header = |i: &Item| {
        matches!(
            i,
            Item::Version { .. } | Item::Target(_) | Item::AddressSize(_)
        )
    };
    let mut from_runtime = vec![false; m.items.len()];
    for r in rt.items.iter().filter(|i| !header(i)) {
        let at = m.items.iter().position(|x| x == r)?;
        from_runtime[at] = true;
    }
    let mut runtime: Vec<Item> = m.items.iter().filter(|i| header(i)).cloned().collect();
    let mut kernels = Vec::new();
    for (it, rt_item) in m.items.iter().zip(from_runtime) {
        if !rt_item {
            kernels.push(it.clone());
            continue;
        }
        runtime.push(it.clone());
        // Module-local runtime functions are not reachable from the kernels' part.
        match it {
            Item::Var(v) if v.linkage == Some(Linkage::Visible) => {
                kernels.push(Item::Var(ptx::VarDecl {
                    linkage: Some(Linkage::Extern),
                    init: None,
                    ..v.clone()
                }))
            }
            Item::Func(f) if f.linkage == Some(Linkage::Visible) => {
                kernels.push(Item::Func(ptx::Function {
                    linkage: Some(Linkage::Extern),
                    body: None,
                    ..f.clone()
                }))
            }
            _ => {}
        }
    }
    Some((
        ptx::Module { items: kernels },
        ptx::Module { items: runtime },
    ))
}

/// [`split_runtime`]'s two modules as PTX text: the kernels' part and the runtime's part,
/// for `fencehound_toolchain::assemble_linked(&kernels, &[&runtime], arch)`.
pub fn assembly_parts(m: &ptx::Module) -> Option<(String, String)> {
    let (kernels, runtime) = split_runtime(m)?;
    Some((ptx::print(&kernels), ptx::print(&runtime)))
}

/// The module the differential test runs natively: `ret` of a kernel written as `exit`
/// (the same operation), and the runtime's variables declared where the rewrite puts them
/// (unused, so the module's own variables get the same addresses in both runs). `exit` is a
/// preemption point of the vgpu and `ret` is not; the rewrite puts a drain block, which
/// begins with a preemption point, before a kernel's `ret`, so the reference needs that
/// point too for the interleavings to correspond.
pub fn normalize_reference(m: &ptx::Module) -> Result<ptx::Module, RewriteError> {
    emit::normalize_reference(m)
}
