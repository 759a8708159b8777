//! Loads of memory no thread of the launch writes run without a scheduling decision
//! (`vgpu/src/unwritten.rs`): which loads qualify, that no outcome is lost, and that a
//! write past the bound is caught.

use fencehound_vgpu::*;
use std::collections::BTreeSet;

use crate::common::{ptx_device, read_words, words_in};

/// Launches `kernel` (one-dimensional) with the reduction on, under a random scheduler.
#[allow(clippy::too_many_arguments)]
fn run<H: Hooks>(
    dev: &mut Device,
    m: ModuleId,
    kernel: &str,
    grid: u32,
    block: u32,
    args: &[Arg],
    hooks: &mut H,
    seed: u64,
) -> LaunchResult {
    run_reducing(dev, m, kernel, (grid, block), args, hooks, seed, true)
}

/// [`run`], with the reduction of decisions on or off.
#[allow(clippy::too_many_arguments)]
fn run_reducing<H: Hooks>(
    dev: &mut Device,
    m: ModuleId,
    kernel: &str,
    (grid, block): (u32, u32),
    args: &[Arg],
    hooks: &mut H,
    seed: u64,
    reduce_unwritten: bool,
) -> LaunchResult {
    let r = dev
        .launch_with(
            m,
            kernel,
            Dim3::x(grid),
            Dim3::x(block),
            0,
            args,
            LaunchOptions {
                fuel: 50_000_000,
                reduce_unwritten,
                ..Default::default()
            },
            hooks,
            &mut RandomScheduler::new(seed),
        )
        .expect("launch");
    assert!(r.outcome.is_completed(), "{kernel}: {:?}", r.outcome);
    r
}

/// Each thread sums `in[tid]` four times (loads of memory nobody writes), adds a value
/// from a local array it wrote through a generic address, and stores to `out[tid]`.
const SUM: &str = r#"
.visible .entry sum(.param .u64 in, .param .u64 out)
{
    .local .align 4 .b8 depot[16];
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    mov.u64 %rd8, depot;
    cvta.local.u64 %rd9, %rd8;
    st.u32 [%rd9+4], %r1;
    ld.global.u32 %r2, [%rd6];
    ld.global.u32 %r3, [%rd6];
    ld.global.u32 %r4, [%rd6];
    ld.global.u32 %r5, [%rd6];
    ld.u32 %r6, [%rd9+4];
    add.u32 %r7, %r2, %r3;
    add.u32 %r7, %r7, %r4;
    add.u32 %r7, %r7, %r5;
    add.u32 %r7, %r7, %r6;
    st.global.u32 [%rd7], %r7;
    ret;
}
"#;

#[test]
fn loads_of_unwritten_memory_take_no_decision() {
    for seed in 0..4 {
        let (mut dev, m) = ptx_device(SUM);
        let input: Vec<u32> = (0..64).map(|i| 3 * i + 1).collect();
        let (i, o) = (words_in(&mut dev, 64, &input), words_in(&mut dev, 64, &[]));
        let r = run(
            &mut dev,
            m,
            "sum",
            1,
            64,
            &[Arg::Ptr(i), Arg::Ptr(o)],
            &mut NoHooks,
            seed,
        );
        for (t, v) in read_words(&dev, o, 64).iter().enumerate() {
            assert_eq!(*v, 4 * input[t] + t as u32, "out[{t}]");
        }
        // Two warps, four loads each of `in` (the first may start a step): at least
        // three per warp ran without a decision; the local store and load neither widen
        // the bound nor take a decision: the store to `out` and each warp's start do.
        assert!(r.stats.unwritten_loads >= 6, "{:?}", r.stats);
        assert_eq!(r.stats.unwritten_escapes, 0);
        assert!(r.stats.steps <= 6, "{:?}", r.stats);
    }
}

/// Store buffering between thread 0 of CTA 0 and thread 0 of CTA 1, with a load of
/// `ro[k]` between each thread's store and its load (`k` = the third parameter's word):
/// `x = flags[0]`, `y = flags[1]`. Thread t stores 1 to its flag, loads `ro[k]`, loads
/// the other flag into `out[t]`.
const SB: &str = r#"
.visible .entry sb(.param .u64 flags, .param .u64 ro, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [flags];
    ld.param.u64 %rd2, [ro];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd1, %rd4;
    xor.b32 %r3, %r2, 1;
    mul.wide.u32 %rd6, %r3, 4;
    add.s64 %rd7, %rd1, %rd6;
    st.volatile.global.u32 [%rd5], 1;
    ld.volatile.global.u32 %r4, [%rd2];
    ld.volatile.global.u32 %r5, [%rd7];
    add.s64 %rd8, %rd3, %rd4;
    st.global.u32 [%rd8], %r5;
DONE:
    ret;
}
"#;

/// The outcomes (out[0], out[1]) of `SB` over `seeds` random schedules, and how many
/// loads ran without a decision in all.
fn sb_outcomes(ro_in_flags: bool, seeds: u64) -> (BTreeSet<(u32, u32)>, u64) {
    let mut seen = BTreeSet::new();
    let mut skipped = 0;
    for seed in 0..seeds {
        let (mut dev, m) = ptx_device(SB);
        let (flags, ro, out) = (
            words_in(&mut dev, 4, &[]),
            words_in(&mut dev, 4, &[]),
            words_in(&mut dev, 4, &[]),
        );
        // The middle load reads `ro[0]`, or `flags[2]`: a word nobody writes, but in an
        // allocation that the stores write.
        let ro = if ro_in_flags { flags + 8 } else { ro };
        let args = [Arg::Ptr(flags), Arg::Ptr(ro), Arg::Ptr(out)];
        let r = run(&mut dev, m, "sb", 2, 32, &args, &mut NoHooks, seed);
        assert_eq!(r.stats.unwritten_escapes, 0);
        skipped += r.stats.unwritten_loads;
        let o = read_words(&dev, out, 2);
        seen.insert((o[0], o[1]));
    }
    (seen, skipped)
}

#[test]
fn store_buffering_keeps_every_sc_outcome() {
    // A decision before each store and before each flag load, none before the load of
    // `ro`: every interleaving of the stores and flag loads is still there, so all three
    // outcomes SC allows appear (both stores before both loads: (1, 1)); (0, 0) never.
    let (seen, skipped) = sb_outcomes(false, 300);
    assert!(skipped > 0, "the load of ro took a decision");
    let want: BTreeSet<(u32, u32)> = [(0, 1), (1, 0), (1, 1)].into_iter().collect();
    assert_eq!(seen, want);
    // The same word of an allocation the launch writes: bounded by allocation, so the
    // load keeps its decision.
    let (seen, skipped) = sb_outcomes(true, 300);
    assert_eq!(skipped, 0);
    assert_eq!(seen, want);
}

/// Every thread loads a pointer from `ptrs[0]` and stores through it; then loads `data`.
const THROUGH: &str = r#"
.visible .entry through(.param .u64 ptrs, .param .u64 data, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [ptrs];
    ld.param.u64 %rd2, [data];
    ld.param.u64 %rd3, [out];
    ld.global.u64 %rd4, [%rd1];
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd4], %r1;
    ld.global.u32 %r2, [%rd2];
    ld.global.u32 %r3, [%rd2+4];
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.u32 %r4, %r2, %r3;
    st.global.u32 [%rd6], %r4;
    ret;
}
"#;

#[test]
fn writes_through_loaded_pointers_bound_nothing() {
    // `ptrs[0]` points at `data[1]`: a store through a pointer from memory could be
    // anywhere, so no load is reduced (the loads of `data` keep their decisions).
    let (mut dev, m) = ptx_device(THROUGH);
    let (p, d, o) = (
        words_in(&mut dev, 2, &[]),
        words_in(&mut dev, 2, &[]),
        words_in(&mut dev, 32, &[]),
    );
    dev.copy_to(p, &(d + 4).to_le_bytes()).unwrap();
    let args = [Arg::Ptr(p), Arg::Ptr(d), Arg::Ptr(o)];
    let r = run(&mut dev, m, "through", 1, 32, &args, &mut NoHooks, 1);
    assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
    assert_eq!(r.stats.unwritten_escapes, 0);
}

/// Thread 0 stores 7 at `a + delta` (past `a`'s allocation: into `c` when the host passes
/// `c - a`); then every thread loads `c[0]` twice into `out[tid]`, `out[32 + tid]`.
const PAST: &str = r#"
.visible .entry past(.param .u64 a, .param .u64 delta, .param .u64 c, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [delta];
    ld.param.u64 %rd3, [c];
    ld.param.u64 %rd4, [out];
    mov.u32 %r1, %tid.x;
    ld.global.u32 %r2, [%rd3];
    setp.ne.u32 %p1, %r1, 0;
    add.s64 %rd5, %rd1, %rd2;
    @!%p1 st.global.u32 [%rd5], 7;
    ld.global.u32 %r3, [%rd3];
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd4, %rd6;
    st.global.u32 [%rd7], %r2;
    st.global.u32 [%rd7+128], %r3;
    ret;
}
"#;

/// [`PAST`] loaded, with `a`, `c` and `out` allocated: the device, module, `c`, `out` and
/// the arguments (`delta` = `c - a`).
fn past() -> (Device, ModuleId, u64, u64, [Arg; 4]) {
    let (mut dev, m) = ptx_device(PAST);
    let (a, c, o) = (
        words_in(&mut dev, 1, &[]),
        words_in(&mut dev, 1, &[]),
        words_in(&mut dev, 64, &[]),
    );
    let args = [Arg::Ptr(a), Arg::U64(c - a), Arg::Ptr(c), Arg::Ptr(o)];
    (dev, m, c, o, args)
}

#[test]
fn a_write_past_its_allocation_widens_the_bound() {
    for seed in 0..8 {
        let (mut dev, m, c, _, args) = past();
        let r = run(&mut dev, m, "past", 1, 32, &args, &mut NoHooks, seed);
        // The bound was `a` and `out`: the store into `c` is an escape, counted once (the
        // bound then holds `c`).
        assert_eq!(r.stats.unwritten_escapes, 1, "{:?}", r.stats);
        assert_eq!(read_words(&dev, c, 1), [7]);
    }
}

/// Thread 0 of each CTA stores its CTA number to the module variable `g` (a constant
/// address); every thread then loads `g` into `out`.
const GLOBAL_VAR: &str = r#"
.global .align 4 .u32 g;
.visible .entry gvar(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @!%p1 st.global.u32 [g], %r2;
    ld.global.u32 %r3, [g];
    mov.u64 %rd2, g;
    ld.global.u32 %r4, [%rd2];
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.u32 %r5, %r3, %r4;
    st.global.u32 [%rd4], %r5;
    ret;
}
"#;

#[test]
fn a_module_variable_written_by_address_keeps_its_loads_decisions() {
    let (mut dev, m) = ptx_device(GLOBAL_VAR);
    let o = words_in(&mut dev, 4, &[]);
    let r = run(&mut dev, m, "gvar", 4, 32, &[Arg::Ptr(o)], &mut NoHooks, 3);
    assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
    assert_eq!(r.stats.unwritten_escapes, 0, "{:?}", r.stats);
}

/// Hooks that change nothing but do not say so: the interpreter must treat them as a
/// model that may buffer stores.
struct Opaque;
impl Hooks for Opaque {}

/// A 64-thread CTA: each thread stores `tid` to `s[tid]`, then (`bar.sync 0`) sums `s[0]`
/// … `s[7]` and `s[63 - tid]`, and stores the sum to `out[tid]`.
const TILE: &str = r#"
.visible .entry tile(.param .u64 out)
{
    .shared .align 4 .b8 s[256];
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.u32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    ld.shared.u32 %r5, [s];
    ld.shared.u32 %r6, [s+4];
    ld.shared.u32 %r7, [s+8];
    ld.shared.u32 %r8, [s+12];
    sub.u32 %r9, 252, %r2;
    add.u32 %r10, %r3, %r9;
    ld.shared.u32 %r11, [%r10];
    add.u32 %r12, %r5, %r6;
    add.u32 %r12, %r12, %r7;
    add.u32 %r12, %r12, %r8;
    add.u32 %r12, %r12, %r11;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r12;
    ret;
}
"#;

fn tile_run<H: Hooks>(src: &str, hooks: &mut H, seed: u64) -> (LaunchResult, Vec<u32>) {
    let (mut dev, m) = ptx_device(src);
    let o = words_in(&mut dev, 64, &[]);
    let r = run(&mut dev, m, "tile", 1, 64, &[Arg::Ptr(o)], hooks, seed);
    (r, read_words(&dev, o, 64))
}

#[test]
fn shared_loads_after_the_last_write_of_an_interval_take_no_decision() {
    for seed in 0..4 {
        let (r, out) = tile_run(TILE, &mut NoHooks, seed);
        for (t, v) in out.iter().enumerate() {
            assert_eq!(*v, 6 + (63 - t as u32), "out[{t}]");
        }
        // After the barrier no thread can write `s` again: of the five shared loads of
        // each of the two warps, those after the first of a step need no decision.
        assert!(r.stats.unwritten_loads >= 8, "{:?}", r.stats);
        // A model that may buffer stores keeps every decision (a buffered store can
        // become visible later in the interval).
        let (r, out2) = tile_run(TILE, &mut Opaque, seed);
        assert_eq!(out2, out);
        assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
    }
    // With a named barrier in the kernel, intervals are not the CTA's: no reduction.
    let named = TILE.replace("bar.sync 0;", "bar.sync 1, 64;");
    let (r, _) = tile_run(&named, &mut NoHooks, 0);
    assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
}

/// Thread 0 of warp 0 stores 1 to `s[0]` after a few instructions; thread 0 of warp 1
/// loads `s[0]` twice with no barrier between: the loads race with the store.
const RACE: &str = r#"
.visible .entry race(.param .u64 out)
{
    .shared .align 4 .b8 s[256];
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra WRITER;
    setp.eq.u32 %p2, %r1, 32;
    @%p2 bra READER;
    ret;
WRITER:
    mov.u32 %r2, 1;
    st.shared.u32 [s], %r2;
    ret;
READER:
    ld.shared.u32 %r3, [s+4];
    ld.shared.u32 %r4, [s];
    ld.shared.u32 %r5, [s];
    st.global.u32 [%rd1], %r4;
    st.global.u32 [%rd1+4], %r5;
    ret;
}
"#;

#[test]
fn shared_loads_racing_with_a_write_of_their_interval_keep_their_decisions() {
    let mut seen = BTreeSet::new();
    for seed in 0..200 {
        let (mut dev, m) = ptx_device(RACE);
        let o = words_in(&mut dev, 2, &[]);
        run(
            &mut dev,
            m,
            "race",
            1,
            64,
            &[Arg::Ptr(o)],
            &mut NoHooks,
            seed,
        );
        let v = read_words(&dev, o, 2);
        seen.insert((v[0], v[1]));
    }
    // Before the store, between the loads, after both.
    let want: BTreeSet<(u32, u32)> = [(0, 0), (0, 1), (1, 1)].into_iter().collect();
    assert_eq!(seen, want);
}

/// Counts the loads that reach it; lets unwritten loads read memory directly when `agree`.
/// Says its threads are settled when `settled` (the race check's shape over plain memory).
#[derive(Default)]
struct CountLoads {
    agree: bool,
    settled: bool,
    loads: u64,
    asked: u64,
}
impl Hooks for CountLoads {
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.loads += 1;
        mem.read(a.loc, buf)
    }
    fn settled(&self, _cta: u32, _first: u32, _lanes: u32) -> bool {
        self.settled
    }
    fn unwritten_loads(&mut self, _first: u32, lanes: u32) -> bool {
        self.asked += lanes.count_ones() as u64;
        self.agree
    }
}

/// With or without the reduction of decisions (the bypass changes no decision, so every
/// launch with such hooks takes it).
#[test]
fn unwritten_loads_bypass_only_hooks_that_agree() {
    for (agree, reduce) in [(false, true), (true, true), (false, false), (true, false)] {
        let (mut dev, m) = ptx_device(SUM);
        let input: Vec<u32> = (0..64).map(|i| 5 * i + 2).collect();
        let (i, o) = (words_in(&mut dev, 64, &input), words_in(&mut dev, 64, &[]));
        let mut h = CountLoads {
            agree,
            ..Default::default()
        };
        let args = [Arg::Ptr(i), Arg::Ptr(o)];
        let r = run_reducing(&mut dev, m, "sum", (1, 64), &args, &mut h, 1, reduce);
        for (t, v) in read_words(&dev, o, 64).iter().enumerate() {
            assert_eq!(*v, 4 * input[t] + t as u32, "out[{t}]");
        }
        if !reduce {
            assert_eq!(r.stats.unwritten_loads, 0, "{:?}", r.stats);
        }
        // Four loads of `in` per thread are asked about; they reach `load` only when the
        // hooks do not agree. (The local load never reaches the hooks.)
        assert_eq!(h.asked, 4 * 64, "agree {agree}");
        assert_eq!(h.loads, if agree { 0 } else { 4 * 64 }, "agree {agree}");
    }
}

/// Buffers every store until the launch ends, forwarding a thread's own stores to its
/// loads; agrees to unwritten loads (the write-buffer models' shape).
#[derive(Default)]
struct HoldStores {
    held: Vec<(u32, Location, Vec<u8>)>,
}
impl Hooks for HoldStores {
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        mem.read(a.loc, buf)?;
        if let Some(h) = self
            .held
            .iter()
            .rev()
            .find(|h| h.0 == a.thread.global && h.1 == a.loc && h.2.len() == buf.len())
        {
            buf.copy_from_slice(&h.2);
        }
        Ok(())
    }
    fn store(&mut self, _mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.held.push((a.thread.global, a.loc, data.to_vec()));
        Ok(())
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        for (_, loc, data) in std::mem::take(&mut self.held) {
            mem.write(loc, &data).expect("write");
        }
    }
    fn unwritten_loads(&mut self, _first: u32, _lanes: u32) -> bool {
        true
    }
}

/// A store past its allocation that the hooks keep in a buffer widens the bound when it
/// is made, not when it reaches memory: the thread's next load of those bytes still goes
/// to the hooks and sees its own store.
#[test]
fn a_buffered_write_past_its_allocation_is_seen_by_its_own_next_load() {
    for seed in 0..8 {
        let (mut dev, m, c, o, args) = past();
        let r = run(
            &mut dev,
            m,
            "past",
            1,
            32,
            &args,
            &mut HoldStores::default(),
            seed,
        );
        assert_eq!(r.stats.unwritten_escapes, 1, "{:?}", r.stats);
        let out = read_words(&dev, o, 64);
        assert_eq!(out[0], 0, "thread 0's load before its store");
        assert_eq!(out[32], 7, "thread 0's load after its store");
        assert_eq!(read_words(&dev, c, 1), [7]);
    }
}

/// Shared loads skip the hooks in an interval no thread of the CTA has written shared
/// memory in since its barrier and none can before the next — with or without the
/// reduction of decisions; not when a thread wrote in the interval (even the value that
/// was there), nor when the hooks do not say the CTA's threads are settled.
#[test]
fn shared_loads_of_a_clean_interval_skip_the_hooks() {
    let dirty = TILE
        .replace(
            ".reg .b64 %rd<8>;",
            ".reg .b64 %rd<8>;\n    .reg .pred %p<2>;",
        )
        .replace(
            "    bar.sync 0;\n",
            "    bar.sync 0;\n    setp.eq.u32 %p1, %r1, 0;\n    @%p1 st.shared.u32 [s+252], 63;\n",
        );
    for reduce in [true, false] {
        for seed in 0..4 {
            for (src, settled, want) in [
                (TILE, true, 0),
                (TILE, false, 5 * 64),
                (dirty.as_str(), true, 5 * 64),
            ] {
                let (mut dev, m) = ptx_device(src);
                let o = words_in(&mut dev, 64, &[]);
                let mut h = CountLoads {
                    agree: true,
                    settled,
                    ..Default::default()
                };
                let args = [Arg::Ptr(o)];
                run_reducing(&mut dev, m, "tile", (1, 64), &args, &mut h, seed, reduce);
                for (t, v) in read_words(&dev, o, 64).iter().enumerate() {
                    assert_eq!(*v, 6 + (63 - t as u32), "out[{t}]");
                }
                assert_eq!(
                    h.loads,
                    want,
                    "settled {settled}, reduce {reduce}, seed {seed}, dirty {}",
                    src != TILE
                );
            }
        }
    }
}
