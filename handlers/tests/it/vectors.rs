//! A strong 16-byte vector access is one message (vgpu `Access::indivisible`): a reader's
//! `ld.relaxed.gpu.v2.u64` never sees half of a writer's `st.relaxed.gpu.v2.u64`, under
//! any model — CUB's decoupled look-back over 64-bit values relies on it, and tearing it
//! made `cub::DeviceScan<long long>` fail falsely. The plain twin (`st.global.v2.u64`) is
//! still two accesses, and the models do tear it: that shows the test can see a tear.

use crate::common;
use common::*;
use fencehound_handlers::Model;

const PAIRS: &str = r#"
#ifdef STRONG
#define ST "st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};"
#define LD "ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
#else
#define ST "st.global.v2.u64 [%0], {%1, %2};"
#define LD "ld.global.v2.u64 {%0, %1}, [%2];"
#endif
extern "C" __global__ void pairs(unsigned long long *p, unsigned *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long v = 1; v <= 8; v++)
            asm volatile(ST :: "l"(p), "l"(v), "l"(v) : "memory");
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        unsigned torn = 0;
        for (int i = 0; i < 16; i++) {
            unsigned long long a, b;
            asm volatile(LD : "=l"(a), "=l"(b) : "l"(p) : "memory");
            torn += a != b;
        }
        out[0] = torn;
    }
}
"#;

/// Executions (of `seeds`) in which the reader saw a torn pair.
fn torn(strong: bool, model: Model, seeds: u64) -> u64 {
    let defines: &[(&str, &str)] = if strong { &[("STRONG", "1")] } else { &[] };
    let k = compile("pairs", PAIRS, defines);
    let h = histogram(
        0..seeds,
        |s| run(&k, model, 0.5, s, 2, 1, &[fill(4, 0), fill(1, 0)], &[]),
        |r| (r.bufs[1][0] > 0).to_string(),
    );
    eprintln!("pairs strong={strong} {model:?}: {h:?}");
    h.iter().filter(|(k, _)| *k == "true").map(|(_, v)| v).sum()
}

#[test]
fn strong_16_byte_vectors_are_never_torn() {
    for model in [Model::Bugaroo, Model::Scoped, Model::Weak] {
        assert_eq!(torn(true, model, 2000), 0, "{model:?}");
    }
}

#[test]
fn plain_16_byte_vectors_are_two_accesses_and_can_tear() {
    assert!(torn(false, Model::Weak, 2000) > 0);
    assert!(torn(false, Model::Bugaroo, 2000) > 0);
}
