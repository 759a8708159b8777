//! Whole programs from the corpus under write buffers: correctly fenced programs give
//! exact results under every model; removing the fence exposes the bug.

use crate::common;
use common::*;
use fencehound_handlers::{BufferConfig, Model};
use fencehound_vgpu::Arg;

fn corpus(name: &str, defines: &[(&str, &str)]) -> Kernel {
    let path = format!("{}/../kernels/{name}.cu", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    compile(name, &src, defines)
}

fn input(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2654435761) ^ seed) % 1000)
        .collect()
}

#[test]
fn shared_reduction_is_exact_under_every_model() {
    let k = corpus("algo_reduce_shared", &[]);
    let data = input(1024, 7);
    let want: Vec<u32> = (0..4)
        .map(|b| data[b * 256..b * 256 + 256].iter().sum())
        .collect();
    for model in [Model::Sc, Model::Bugaroo, Model::Scoped] {
        for s in 0..3_334u64 {
            let p_w = [0.25, 0.5, 1.0][s as usize % 3];
            let r = run(
                &k,
                model,
                p_w,
                s,
                4,
                128,
                &[Buf(data.clone()), fill(4, 0)],
                &[Arg::U32(1024)],
            );
            assert!(
                r.outcome.is_completed(),
                "{model:?} seed {s}: {:?}",
                r.outcome
            );
            assert_eq!(r.bufs[1], want, "{model:?} seed {s}");
        }
    }
}

fn last_block(fenced: bool, model: Model, seeds: u64) -> u64 {
    let defs: &[(&str, &str)] = if fenced {
        &[]
    } else {
        &[("FENCEHOUND_NO_FENCE", "1")]
    };
    let k = corpus("algo_last_block_sum", defs);
    let data = input(512, 3);
    let want: u32 = data.iter().sum();
    let mut wrong = 0;
    for s in 0..seeds {
        let r = run(
            &k,
            model,
            1.0,
            s,
            8,
            64,
            &[Buf(data.clone()), fill(8, 0), fill(1, 0), fill(1, 0)],
            &[],
        );
        assert!(
            r.outcome.is_completed(),
            "{model:?} seed {s}: {:?}",
            r.outcome
        );
        wrong += (r.bufs[3][0] != want) as u64;
    }
    wrong
}

#[test]
fn last_block_reduction_with_its_fence_is_exact() {
    assert_eq!(last_block(true, Model::Bugaroo, 10_000), 0);
    assert_eq!(last_block(true, Model::Scoped, 10_000), 0);
}

#[test]
fn last_block_reduction_without_its_fence_fails() {
    assert!(last_block(false, Model::Bugaroo, 100) > 0);
}

/// Hand count of flush lengths: one thread buffers three global stores, a fence flushes
/// them (length 3), two more stores, exit + kernel end flush them one by one (random
/// order, per address), giving lengths {3: 1, 1: 2}.
#[test]
fn flush_length_histogram_matches_a_hand_count() {
    let k = compile(
        "flush",
        r#"extern "C" __global__ void flush(int *a) {
            a[0] = 1; a[1] = 2; a[2] = 3; __threadfence(); a[3] = 4; a[4] = 5;
        }"#,
        &[],
    );
    let r = run_cfg(
        &k,
        BufferConfig::new(Model::Bugaroo, 1.0, 1),
        1,
        1,
        1,
        &[fill(5, 0)],
        &[],
    );
    assert_eq!(r.bufs[0], vec![1, 2, 3, 4, 5]);
    let g = &r.stats.global;
    assert_eq!(g.stores_seen, 5);
    assert_eq!(g.stores_buffered, 5);
    assert_eq!(g.flush_lengths.get(&3), Some(&1), "{g:?}");
    assert_eq!(g.flush_lengths.get(&1), Some(&2), "{g:?}");
    assert_eq!(g.flush_lengths.len(), 2, "{g:?}");
    assert_eq!(r.stats.peak_occupancy, 3);
    assert_eq!(r.stats.shared.stores_seen, 0);
}

/// Filters: with shared memory not buffered, or with the faulty site filtered out, the
/// unfenced last-block reduction passes; the same seeds fail with everything buffered.
#[test]
fn space_and_site_filters() {
    let k = corpus("algo_last_block_sum", &[("FENCEHOUND_NO_FENCE", "1")]);
    let data = input(512, 3);
    let want: u32 = data.iter().sum();
    let bufs = || vec![Buf(data.clone()), fill(8, 0), fill(1, 0), fill(1, 0)];
    let mut all_fail = 0;
    for s in 0..100 {
        let mut shared_only = BufferConfig::new(Model::Bugaroo, 1.0, s);
        shared_only.buffer_global = false;
        let r = run_cfg(&k, shared_only, s, 8, 64, &bufs(), &[]);
        assert_eq!(
            r.bufs[3][0], want,
            "shared-only buffering cannot break a global handshake"
        );
        let r = run_cfg(
            &k,
            BufferConfig::new(Model::Bugaroo, 1.0, s),
            s,
            8,
            64,
            &bufs(),
            &[],
        );
        all_fail += (r.bufs[3][0] != want) as u32;
        let mut none = BufferConfig::new(Model::Bugaroo, 1.0, s);
        none.sites = Some(Default::default());
        let r = run_cfg(&k, none, s, 8, 64, &bufs(), &[]);
        assert_eq!(r.bufs[3][0], want);
        assert_eq!(r.stats.global.stores_buffered, 0);
    }
    assert!(all_fail > 0);
}
