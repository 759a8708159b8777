//! The classic shapes under the write-buffer models: each weak outcome that a missing
//! or too-narrow fence allows appears, and never appears once the right fence is there.

use crate::common;
use common::*;
use fencehound_handlers::Model;

const MP: &str = r#"
extern "C" __global__ void mp(volatile int *data, volatile int *flag, int *out) {
    int writer = (blockIdx.x == 0 && threadIdx.x == 0);
    int reader = (blockIdx.x == gridDim.x - 1 && threadIdx.x == blockDim.x - 1);
    if (writer) { data[0] = 42; FENCE; flag[0] = 1; }
    if (reader) { while (flag[0] == 0) {} out[0] = data[0]; }
}
"#;

fn mp_stale(fence: &str, model: Model, grid: u32, block: u32, seeds: u64) -> u64 {
    let k = compile("mp", MP, &[("FENCE", fence)]);
    let h = histogram(
        0..seeds,
        |s| {
            run(
                &k,
                model,
                1.0,
                s,
                grid,
                block,
                &[fill(1, 0), fill(1, 0), fill(1, 0)],
                &[],
            )
        },
        |r| r.bufs[2][0].to_string(),
    );
    eprintln!("mp {fence} {model:?} grid={grid} block={block}: {h:?}");
    h.iter().filter(|(k, _)| *k != "42").map(|(_, v)| v).sum()
}

#[test]
fn mp_across_ctas_without_fence_is_exposed() {
    assert!(mp_stale("(void)0", Model::Bugaroo, 2, 1, 200) > 0);
    assert!(mp_stale("(void)0", Model::Scoped, 2, 1, 200) > 0);
}

#[test]
fn mp_across_ctas_with_threadfence_never_fails() {
    assert_eq!(mp_stale("__threadfence()", Model::Bugaroo, 2, 1, 10_000), 0);
    assert_eq!(mp_stale("__threadfence()", Model::Scoped, 2, 1, 10_000), 0);
}

#[test]
fn mp_block_fence_across_ctas_fails_only_under_scoped() {
    assert!(mp_stale("__threadfence_block()", Model::Scoped, 2, 1, 400) > 0);
    assert_eq!(
        mp_stale("__threadfence_block()", Model::Bugaroo, 2, 1, 10_000),
        0
    );
}

#[test]
fn mp_block_fence_within_one_cta_never_fails() {
    assert_eq!(
        mp_stale("__threadfence_block()", Model::Scoped, 1, 64, 10_000),
        0
    );
    assert_eq!(
        mp_stale("__threadfence_block()", Model::Bugaroo, 1, 64, 10_000),
        0
    );
}

const SB: &str = r#"
extern "C" __global__ void sb(volatile int *x, volatile int *y, int *out) {
    if (blockIdx.x == 0) { x[0] = 1; FENCE; out[0] = y[0]; }
    else { y[0] = 1; FENCE; out[1] = x[0]; }
}
"#;

#[test]
fn store_buffering() {
    let both_zero = |fence: &str, model: Model, n: u64| {
        let k = compile("sb", SB, &[("FENCE", fence)]);
        let h = histogram(
            0..n,
            |s| {
                run(
                    &k,
                    model,
                    1.0,
                    s,
                    2,
                    1,
                    &[fill(1, 0), fill(1, 0), fill(2, 9)],
                    &[],
                )
            },
            |r| format!("{:?}", r.bufs[2]),
        );
        h.get("[0, 0]").copied().unwrap_or(0)
    };
    assert!(both_zero("(void)0", Model::Bugaroo, 50) > 0);
    assert_eq!(both_zero("__threadfence()", Model::Bugaroo, 10_000), 0);
    assert_eq!(both_zero("__threadfence()", Model::Scoped, 10_000), 0);
}

const W22: &str = r#"
extern "C" __global__ void w22(volatile int *x, volatile int *y) {
    if (blockIdx.x == 0) { x[0] = 1; FENCE; y[0] = 2; }
    else { y[0] = 1; FENCE; x[0] = 2; }
}
"#;

#[test]
fn two_plus_two_writes() {
    let weak = |fence: &str, n: u64| {
        let k = compile("w22", W22, &[("FENCE", fence)]);
        let h = histogram(
            0..n,
            |s| {
                run(
                    &k,
                    Model::Bugaroo,
                    1.0,
                    s,
                    2,
                    1,
                    &[fill(1, 0), fill(1, 0)],
                    &[],
                )
            },
            |r| format!("{}{}", r.bufs[0][0], r.bufs[1][0]),
        );
        h.get("11").copied().unwrap_or(0)
    };
    assert!(weak("(void)0", 200) > 0);
    assert_eq!(weak("__threadfence()", 10_000), 0);
}

/// Coherence: per-location order is never violated, whatever the model and seed.
const COHERENCE: &str = r#"
extern "C" __global__ void coh(volatile int *x, int *out) {
    unsigned me = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned last = gridDim.x * blockDim.x - 1;
    if (me == 0) {            // CoWW + CoWR: own writes in order, own read sees own write or later
        x[0] = 1; x[0] = 2; out[0] = x[0];
    } else if (me == last) {  // CoRR + CoRW: reads never go backwards; never read own later write
        int r1 = x[0]; int r2 = x[0]; x[1] = 5; int r3 = x[1];
        out[1] = r1; out[2] = r2; out[3] = r3;
        x[0] = 3;
        out[4] = x[0];
    }
}
"#;

#[test]
fn coherence_is_never_violated() {
    let k = compile("coh", COHERENCE, &[]);
    for model in [Model::Bugaroo, Model::Scoped] {
        for (grid, block) in [(2, 1), (1, 64), (2, 32)] {
            for s in 0..2500u64 {
                let r = run(
                    &k,
                    model,
                    1.0,
                    s,
                    grid,
                    block,
                    &[fill(2, 0), fill(5, 9)],
                    &[],
                );
                assert!(r.outcome.is_completed());
                let (x, o) = (&r.bufs[0], &r.bufs[1]);
                let ctx =
                    format!("{model:?} grid={grid} block={block} seed={s}: x={x:?} out={o:?}");
                // Coherence order of x[0]: 0 < 1 < 2 (thread 0's program order); 3 is
                // unordered with 1 and 2 but after whatever `last` read.
                let rank = |v: u32| match v {
                    0 => 0,
                    1 => 1,
                    2 => 2,
                    3 => 3,
                    _ => 99,
                };
                assert!(o[0] == 2 || o[0] == 3, "CoWR: {ctx}");
                assert!(rank(o[1]) <= rank(o[2]) || o[2] == 3, "CoRR: {ctx}");
                assert!(o[1] != 3 && o[2] != 3, "CoRW (read own later write): {ctx}");
                assert_eq!(o[3], 5, "CoWR on x[1]: {ctx}");
                assert!(o[4] == 3 || o[4] == 2, "CoWR: {ctx}");
                // CoWW: the final value is the last write of some coherence order.
                assert!(x[0] == 2 || x[0] == 3, "CoWW: {ctx}");
                // If `last` read 2 before writing 3, its 3 is coherence-after 2: final is 3.
                if o[1] == 2 || o[2] == 2 {
                    assert_eq!(x[0], 3, "CoRW: {ctx}");
                }
            }
        }
    }
}

const LOCK: &str = r#"
__device__ void lock(int *m) { while (atomicCAS(m, 0, 1) != 0) {} LOCK_FENCE; }
__device__ void unlock(int *m) { UNLOCK_FENCE; atomicExch(m, 0); }
extern "C" __global__ void locked_count(int *mutex, volatile int *count) {
    if (threadIdx.x == 0) {
        lock(mutex);
        int c = count[0];
        count[0] = c + 1;
        unlock(mutex);
    }
}
"#;

fn lock_wrong(lock_fence: &str, unlock_fence: &str, model: Model, seeds: u64) -> u64 {
    let k = compile(
        "locked_count",
        LOCK,
        &[("LOCK_FENCE", lock_fence), ("UNLOCK_FENCE", unlock_fence)],
    );
    let h = histogram(
        0..seeds,
        |s| run(&k, model, 1.0, s, 8, 32, &[fill(1, 0), fill(1, 0)], &[]),
        |r| r.bufs[1][0].to_string(),
    );
    h.iter().filter(|(k, _)| *k != "8").map(|(_, v)| v).sum()
}

#[test]
fn cuda_by_example_lock_loses_updates_without_the_unlock_fence() {
    assert!(lock_wrong("(void)0", "(void)0", Model::Bugaroo, 200) > 0);
    assert!(lock_wrong("__threadfence()", "(void)0", Model::Bugaroo, 200) > 0);
}

#[test]
fn cuda_by_example_lock_with_the_unlock_fence_is_exact() {
    assert_eq!(
        lock_wrong("(void)0", "__threadfence()", Model::Bugaroo, 10_000),
        0
    );
    assert_eq!(
        lock_wrong("__threadfence()", "__threadfence()", Model::Scoped, 10_000),
        0
    );
}

#[test]
fn cuda_by_example_lock_with_a_block_fence_fails_under_scoped_only() {
    assert!(lock_wrong("(void)0", "__threadfence_block()", Model::Scoped, 400) > 0);
    assert_eq!(
        lock_wrong("(void)0", "__threadfence_block()", Model::Bugaroo, 2000),
        0
    );
}

/// `atomicAdd_block` (a `.cta` atomic) on one global counter from several CTAs: PTX does
/// not make `.cta` atomics of different CTAs atomic with respect to each other, so updates
/// can be lost — under `scoped` they are; under `bugaroo` (flat) and within one CTA never.
const CTA_ATOMIC: &str = r#"
extern "C" __global__ void count(unsigned *c) {
    if (threadIdx.x % 32 == 0) ATOMIC(c, 1u);
}
"#;

fn lost_updates(atomic: &str, model: Model, grid: u32, seeds: u64) -> u64 {
    let k = compile("count", CTA_ATOMIC, &[("ATOMIC", atomic)]);
    let want = grid * 2; // two warps per block
    let h = histogram(
        0..seeds,
        |s| run(&k, model, 1.0, s, grid, 64, &[fill(1, 0)], &[]),
        |r| r.bufs[0][0].to_string(),
    );
    h.iter()
        .filter(|(k, _)| **k != want.to_string())
        .map(|(_, v)| v)
        .sum()
}

#[test]
fn cta_scope_atomics_across_ctas_lose_updates_only_under_scoped() {
    assert!(lost_updates("atomicAdd_block", Model::Scoped, 4, 200) > 0);
    assert_eq!(lost_updates("atomicAdd_block", Model::Bugaroo, 4, 1000), 0);
    assert_eq!(lost_updates("atomicAdd_block", Model::Scoped, 1, 1000), 0);
    assert_eq!(lost_updates("atomicAdd", Model::Scoped, 4, 1000), 0);
}
