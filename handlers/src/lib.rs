//! Bugaroo-style write buffers for fencehound's virtual GPU (Bugaroo: Ben-Nun et al.; the
//! algorithm buffers stores per thread and flushes them at fences, barriers, atomics and
//! kernel exit, so that a missing fence shows up as a wrong result).
//!
//! | event in thread T | effect on T's buffers |
//! |---|---|
//! | load | newest own entry forwarded; a partial overlap drains the overlapping entries first; `scoped`: then own CTA overlay; then memory |
//! | store to an address already buffered | the older entries drain first (write-after-write), then the store is selected or not |
//! | `atom`/`red` | own entries (and the CTA overlay's) for that address drain first; the atomic acts on memory — except a `.cta` atomic on global memory under `scoped`, which reads and writes its CTA's overlay (atomic only within the CTA) |
//! | release semantics (`st.release`, `atom.release`/`acq_rel`/`sc`) | drain up to the operation's scope first |
//! | `fence.sc`, `fence.acq_rel`, `fence.release`, `membar` | drain up to the fence's scope |
//! | `bar.sync`/`barrier.sync`/`bar.red`/`bar.arrive`, `bar.warp.sync` | drain both spaces to CTA visibility |
//! | `ld.acquire`, `fence.acquire`, shuffles, votes | nothing |
//! | buffer full | that space drains to memory |
//! | thread exit | nothing: its entries stay buffered until liveness or kernel exit (device policy: they move, still invisible, to the CTA's orphan queue) |
//! | nothing can progress (all blocked, or spinning without stores) | one entry drains: chosen at random (seeded) among the oldest entries per address (liveness); device policy: nothing, instead every `liveness_period`-th load or atomic of a thread drains it and every CTA's overlay and orphans |
//! | kernel exit | everything drains, in a random order that keeps each address's order (device policy: the last thread to exit drains every CTA) |
//!
//! The same table runs on a GPU through [`rewrite`] (a PTX→PTX rewrite calling a device
//! runtime), under [`DrainPolicy::Device`]: the rules a thread can follow without a view of
//! the whole launch. The rewrite's differential test (see [`rewrite::lockstep`]) checks
//! the two implementations agree write for write.
//!
//! Models ([`model`] names them; [`hooks::ModelHooks`] is the one `Hooks` implementation
//! that runs any of them, dispatching to its family): `sc` (no buffering), `bugaroo`
//! (every drain goes to memory regardless of scope; unlike the paper, barriers drain
//! global stores too), `scoped` (CTA-scope drains go to a per-CTA overlay, which is what
//! exposes `__threadfence_block()` used where `__threadfence()` is needed) — the write
//! buffers of [`buffers`], which also states the invariants that keep them sound — and
//! `weak` (loads read older stores wherever PTX allows it: [`weak`]).

pub mod buffers;
pub mod hooks;
pub mod model;
pub mod rewrite;
pub mod select;
pub mod stats;
pub mod weak;

pub use buffers::{BufferConfig, DrainPolicy, Level, StoreBuffers, TraceEvent};
pub use hooks::{ModelHooks, ScHooks, WriteBuffers};
pub use model::Model;
pub use stats::{BufferStats, DrainReason, SpaceStats, WeakStats};
pub use weak::WeakHooks;
