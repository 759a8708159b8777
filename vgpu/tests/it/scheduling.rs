//! Scheduler coverage: CTA barriers (incl. named barriers with counts and `bar.arrive`),
//! warp collectives under divergence, `__syncwarp`, and independent thread scheduling
//! (kernels that only finish if diverged lanes of one warp make progress independently).
//! Every kernel runs under round-robin and several seeded random and PCT schedulers.

use crate::common;
use common::*;
use fencehound_argspec::{self as argspec, HostBuffer};
use fencehound_vgpu::*;

fn schedulers() -> Vec<Box<dyn Scheduler + Send>> {
    let mut v: Vec<Box<dyn Scheduler + Send>> =
        vec![Box::new(RoundRobin::new(1)), Box::new(RoundRobin::new(64))];
    for seed in 1..=4 {
        v.push(SchedulerKind::Random.build(seed));
        v.push(SchedulerKind::Pct { depth: 3 }.build(seed));
    }
    v
}

/// Compiles `source`, then runs `kernel` under every scheduler; `check` sees the buffers.
fn run_everywhere(
    file: &str,
    source: &str,
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    args: &str,
    check: impl Fn(&[HostBuffer]),
) {
    let ptx = nvrtc(source, file, &[], &[]);
    let module = fencehound_ptx::parse(file, &ptx).expect("parse");
    let specs = argspec::parse_args(args).unwrap();
    for mut s in schedulers() {
        let what = s.describe();
        let mut dev = Device::new();
        let m = dev.load_module(&module).unwrap_or_else(|e| panic!("{e}"));
        let bound = argspec::bind(&mut dev, &specs).unwrap();
        let r = dev
            .launch_with(
                m,
                kernel,
                grid,
                block,
                0,
                &bound.args,
                LaunchOptions {
                    fuel: 20_000_000,
                    ..Default::default()
                },
                &mut NoHooks,
                &mut s,
            )
            .unwrap();
        assert!(
            r.outcome.is_completed(),
            "{kernel} under {what}: {:?}",
            r.outcome
        );
        check(&bound.read_all(&dev).unwrap());
    }
}

fn corpus_everywhere(stem: &str, check: impl Fn(&Run)) {
    let mut c = Corpus::new(stem);
    for mut s in schedulers() {
        let what = s.describe();
        let r = c.run_with(LaunchOptions::default(), &mut NoHooks, &mut s);
        assert!(
            r.result.outcome.is_completed(),
            "{stem} under {what}: {:?}",
            r.result.outcome
        );
        check(&r);
    }
}

fn u32s(b: &HostBuffer) -> Vec<u32> {
    b.values::<u32>().unwrap()
}

#[test]
fn named_barriers_arrive_and_sync_with_counts() {
    corpus_everywhere("barrier_named", |r| {
        let out = r.u32s("out");
        for i in 0..64u32 {
            assert_eq!(out[i as usize], 2 * i + 1, "producer→consumer {i}");
            assert_eq!(out[64 + i as usize], 63 - i, "producer-only barrier {i}");
            assert_eq!(out[128 + i as usize], 128, "bar.red.popc {i}");
        }
    });
}

const PINGPONG: &str = r#"
extern "C" __global__ void pingpong(unsigned *out, unsigned rounds)
{
    __shared__ unsigned slot;
    unsigned t = threadIdx.x;
    for (unsigned r = 0; r < rounds; ++r) {
        if (t < 32) {                                          /* producer warp */
            if (t == 0) slot = r * 7 + 1;
            asm volatile("bar.arrive 1, 64;" ::: "memory");    /* full */
            asm volatile("bar.sync 2, 64;" ::: "memory");      /* wait until empty */
        } else if (t < 64) {                                   /* consumer warp */
            asm volatile("bar.sync 1, 64;" ::: "memory");      /* wait until full */
            if (t == 32) out[r] = slot;
            asm volatile("bar.arrive 2, 64;" ::: "memory");    /* empty */
        }
    }
    __syncthreads();                                           /* warp 2 joins here */
    if (t == 64) out[rounds] = 0xdone;
}
"#;

#[test]
fn named_barrier_ping_pong_reuses_barriers() {
    let src = PINGPONG.replace("0xdone", "0xd0e");
    run_everywhere(
        "pingpong.cu",
        &src,
        "pingpong",
        Dim3::x(1),
        Dim3::x(96),
        "out:u32[17] zero, rounds:u32=16",
        |b| {
            let out = u32s(&b[0]);
            let want: Vec<u32> = (0..16).map(|r| r * 7 + 1).chain([0xd0e]).collect();
            assert_eq!(out, want);
        },
    );
}

#[test]
fn cta_barrier_variants_and_syncwarp() {
    corpus_everywhere("barrier_sync_variants", |r| {
        let out = r.u32s("out");
        for b in 0..2 {
            let o = &out[8 * b..8 * b + 5];
            let sum = if b == 0 { 8128 } else { 24512 };
            assert_eq!(o, [64, 1, (b == 0) as u32, sum, 120], "block {b}");
        }
    });
}

#[test]
fn warp_votes_and_matches() {
    corpus_everywhere("warp_vote_match", |r| {
        let out = r.u32s("out");
        for i in 0..64usize {
            let lane = (i % 32) as u32;
            let o = &out[8 * i..8 * i + 8];
            assert_eq!(o[0], 0x5555_5555);
            assert_eq!((o[1], o[2]), (1, 0));
            let half = if lane < 16 { 0x0000_ffff } else { 0xffff_0000 };
            assert!(
                o[3] & (1 << lane) != 0 && o[3] & !half == 0,
                "activemask {:#x}",
                o[3]
            );
            assert_eq!(o[4], 0xf << (4 * (lane / 4)));
            assert_eq!((o[5], o[6]), (u32::MAX, 1));
            assert_eq!(
                o[7],
                if lane.is_multiple_of(2) {
                    0x5555_5555
                } else {
                    0xaaaa_aaaa
                }
            );
        }
    });
}

#[test]
fn warp_reductions_and_nanosleep() {
    corpus_everywhere("warp_redux_nanosleep", |r| {
        let out = r.u32s("out");
        for w in 0..2u32 {
            let vals: Vec<u32> = (32 * w..32 * w + 32).collect();
            let want = [
                vals.iter().sum::<u32>(),
                32 * w,
                32 * w + 31,
                vals.iter().fold(u32::MAX, |a, b| a & b),
                vals.iter().fold(0, |a, b| a | b),
                vals.iter().fold(0, |a, b| a ^ b),
            ];
            for i in vals {
                assert_eq!(
                    &out[6 * i as usize..6 * i as usize + 6],
                    &want,
                    "thread {i}"
                );
            }
        }
    });
}

const DIVERGENT_COLLECTIVES: &str = r#"
extern "C" __global__ void divergent_collectives(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x, lane = t & 31;
    unsigned v = lane * 3;
    if (lane < 16) {
        out[t] = __shfl_down_sync(0x0000ffffu, v, 1, 16);
        out[64 + t] = __ballot_sync(0x0000ffffu, lane & 1);
        s[t] = lane * 20;
    } else {
        out[t] = __shfl_xor_sync(0xffff0000u, v, 1);
        out[64 + t] = __ballot_sync(0xffff0000u, lane & 1);
        s[t] = lane * 10;
    }
    __syncwarp();                                  /* makes the other half's s[] visible */
    out[128 + t] = s[(t & ~31u) | (31 - lane)];
    out[192 + t] = __reduce_add_sync(0xffffffffu, lane);
}
"#;

#[test]
fn warp_collectives_under_divergence_and_syncwarp() {
    run_everywhere(
        "divergent_collectives.cu",
        DIVERGENT_COLLECTIVES,
        "divergent_collectives",
        Dim3::x(1),
        Dim3::x(64),
        "out:u32[256] zero",
        |b| {
            let out = u32s(&b[0]);
            for t in 0..64usize {
                let lane = (t % 32) as u32;
                let shfl = if lane < 15 {
                    (lane + 1) * 3
                } else if lane == 15 {
                    45
                } else {
                    (lane ^ 1) * 3
                };
                assert_eq!(out[t], shfl, "shfl {t}");
                let ballot = if lane < 16 { 0x0000_aaaa } else { 0xaaaa_0000 };
                assert_eq!(out[64 + t], ballot, "ballot {t}");
                let other = 31 - lane;
                let seen = if other < 16 { other * 20 } else { other * 10 };
                assert_eq!(out[128 + t], seen, "syncwarp {t}");
                assert_eq!(out[192 + t], 496, "redux {t}");
            }
        },
    );
}

const ITS: &str = r#"
/* Every lane of every warp takes the same spin lock. Before Volta this deadlocks: the lanes
   that lost the CAS keep the warp busy spinning and the winner never runs its critical
   section. With independent thread scheduling it completes. */
extern "C" __global__ void intra_warp_lock(unsigned *lock, volatile unsigned *count,
                                           unsigned *order)
{
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence();
    unsigned n = count[0];
    order[n] = blockIdx.x * blockDim.x + threadIdx.x;
    count[0] = n + 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* Lane 0 waits for a value lane 31 of the same warp publishes later in program order. */
extern "C" __global__ void intra_warp_handoff(volatile unsigned *flag, volatile unsigned *data,
                                              unsigned *out)
{
    unsigned lane = threadIdx.x & 31;
    if (lane == 0) {
        while (flag[0] == 0) { }
        __threadfence();
        out[0] = data[0];
    } else if (lane == 31) {
        data[0] = 42;
        __threadfence();
        flag[0] = 1;
    }
}
"#;

#[test]
fn independent_thread_scheduling_intra_warp_spin_lock() {
    run_everywhere(
        "its.cu",
        ITS,
        "intra_warp_lock",
        Dim3::x(2),
        Dim3::x(64),
        "lock:u32[1] zero, count:u32[1] zero, order:u32[128] zero",
        |b| {
            assert_eq!(u32s(&b[0]), vec![0]);
            assert_eq!(u32s(&b[1]), vec![128]);
            let mut order = u32s(&b[2]);
            order.sort_unstable();
            assert_eq!(order, (0..128).collect::<Vec<u32>>());
        },
    );
}

#[test]
fn independent_thread_scheduling_intra_warp_handoff() {
    run_everywhere(
        "its.cu",
        ITS,
        "intra_warp_handoff",
        Dim3::x(1),
        Dim3::x(32),
        "flag:u32[1] zero, data:u32[1] zero, out:u32[1] zero",
        |b| assert_eq!(u32s(&b[2]), vec![42]),
    );
}
