//! The classic shapes under the write-buffer models: each weak outcome that a missing
//! or too-narrow fence allows appears, and never appears once the right fence is there.

mod common;
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
                &[Buf(1, 0), Buf(1, 0), Buf(1, 0)],
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
                    &[Buf(1, 0), Buf(1, 0), Buf(2, 9)],
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
                    &[Buf(1, 0), Buf(1, 0)],
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
