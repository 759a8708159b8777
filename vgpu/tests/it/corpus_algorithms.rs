//! The corpus's algorithm kernels (and printf/assert/trap), compiled by NVRTC and run with
//! their headers' launch and arguments, checked against expectations computed on the host
//! from the same inputs. Synchronisation-heavy ones also run under seeded random and PCT
//! schedulers: a correct kernel gives the right answer under every interleaving.

use crate::common;
use common::*;
use fencehound_vgpu::*;

/// Round-robin plus a few seeded random and PCT schedulers.
fn schedulers() -> Vec<Box<dyn Scheduler + Send>> {
    let mut v: Vec<Box<dyn Scheduler + Send>> = vec![Box::new(RoundRobin::new(1))];
    for seed in 1..=3 {
        v.push(SchedulerKind::Random.build(seed));
        v.push(SchedulerKind::Pct { depth: 3 }.build(seed));
    }
    v
}

/// Runs under every scheduler of [`schedulers`] and checks each run.
fn under_schedulers(stem: &str, check: impl Fn(&Run)) {
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

#[test]
fn reduce_shared_tree() {
    under_schedulers("algo_reduce_shared", |r| {
        let input = r.in_u32s("in");
        let want: Vec<u32> = input.chunks(256).map(|c| c.iter().sum()).collect();
        assert_eq!(r.u32s("partial"), want);
    });
}

#[test]
fn reduce_warp_shuffle() {
    under_schedulers("algo_reduce_warp", |r| {
        let sum: f64 = r.in_f32s("in").iter().map(|v| *v as f64).sum();
        assert_eq!(sum, 523776.0);
        assert_eq!(r.f32s("out"), vec![523776.0f32]);
    });
}

#[test]
fn scan_block_inclusive_and_exclusive() {
    under_schedulers("algo_scan_block", |r| {
        let input = r.in_u32s("in");
        let mut incl = Vec::new();
        let mut excl = Vec::new();
        for block in input.chunks(128) {
            let mut acc = 0u32;
            for v in block {
                excl.push(acc);
                acc += v;
                incl.push(acc);
            }
        }
        assert_eq!(r.u32s("incl"), incl);
        assert_eq!(r.u32s("excl"), excl);
    });
}

#[test]
fn matmul_tiled() {
    let mut c = Corpus::new("algo_matmul_tiled");
    let r = c.run();
    r.assert_completed();
    let (a, b) = (r.in_f32s("A"), r.in_f32s("B"));
    let (m, k, n) = (30, 40, 40);
    let got = r.f32s("C");
    for i in 0..m {
        for j in 0..n {
            // Same fmaf chain as the kernel (zero padding adds exact zeros), so exact.
            let want = (0..k).fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc));
            assert_eq!(got[i * n + j], want, "C[{i}][{j}]");
        }
    }
}

#[test]
fn histogram_with_atomics() {
    under_schedulers("algo_histogram", |r| {
        let input = r.input("in").values::<u8>().unwrap();
        let mut want = vec![0u32; 64];
        for v in input {
            want[(v % 64) as usize] += 1;
        }
        assert_eq!(r.u32s("hist"), want);
    });
}

#[test]
fn spinlock_critical_section() {
    under_schedulers("algo_spinlock", |r| {
        assert_eq!(r.u32s("record"), vec![8, 36, 8]);
        assert_eq!(r.u32s("lock"), vec![0]);
        let mut order = r.u32s("order");
        order.sort_unstable();
        assert_eq!(order, (0..8).collect::<Vec<u32>>());
    });
}

#[test]
fn last_block_ticket_reduction() {
    under_schedulers("algo_last_block_sum", |r| {
        let sum: u32 = r.in_u32s("in").iter().sum();
        assert_eq!(r.u32s("result"), vec![sum]);
        assert_eq!(r.u32s("ticket"), vec![0]);
        let partial = r.u32s("partial");
        let want: Vec<u32> = r.in_u32s("in").chunks(64).map(|c| c.iter().sum()).collect();
        assert_eq!(partial, want);
    });
}

#[test]
fn bitonic_sort() {
    under_schedulers("algo_bitonic_sort", |r| {
        let input = r.input("keys").values::<u32>().unwrap();
        let got = r.u32s("keys");
        for b in 0..2 {
            let mut want = input[b * 256..b * 256 + 256].to_vec();
            want.sort_unstable();
            assert_eq!(&got[b * 256..b * 256 + 256], &want[..], "block {b}");
        }
    });
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it), bit by bit.
fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn crc32_with_constant_table() {
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    let r = Corpus::new("algo_crc32_const").run();
    r.assert_completed();
    let msgs = r.input("msgs").values::<u8>().unwrap();
    let want: Vec<u32> = msgs.chunks(64).map(crc32).collect();
    assert_eq!(r.u32s("crc"), want);
}

#[test]
fn transpose_through_dynamic_shared() {
    let r = Corpus::new("algo_transpose_dyn_shared").run();
    r.assert_completed();
    let (input, out) = (r.in_f32s("in"), r.f32s("out"));
    for row in 0..64 {
        for col in 0..64 {
            assert_eq!(out[col * 64 + row], input[row * 64 + col], "({row},{col})");
        }
    }
}

#[test]
fn collatz_divergent_loops() {
    under_schedulers("algo_collatz", |r| {
        let start = r.in_u32s("start");
        let steps: Vec<u32> = start
            .iter()
            .map(|&v| {
                let (mut n, mut s) = (v as u64, 0u32);
                while n != 1 {
                    n = if n & 1 == 1 { 3 * n + 1 } else { n / 2 };
                    s += 1;
                }
                s
            })
            .collect();
        assert_eq!(steps[26], 111);
        assert_eq!(r.u32s("steps"), steps);
        let kind: Vec<u32> = start
            .iter()
            .map(|&v| [10, 20, 30][(v % 3) as usize] + v.is_power_of_two() as u32)
            .collect();
        assert_eq!(r.u32s("kind"), kind);
        let warpmax: Vec<u32> = steps.chunks(32).map(|c| *c.iter().max().unwrap()).collect();
        assert_eq!(r.u32s("warpmax"), warpmax);
    });
}

#[test]
fn stencil_2d() {
    let r = Corpus::new("algo_stencil2d").run();
    r.assert_completed();
    let (input, out) = (r.in_f32s("in"), r.f32s("out"));
    let (w, h) = (32i32, 32i32);
    let at = |x: i32, y: i32| input[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize];
    for y in 0..h {
        for x in 0..w {
            let want = 0.2 * (at(x, y) + at(x, y - 1) + at(x, y + 1) + at(x + 1, y) + at(x - 1, y));
            let got = out[(y * w + x) as usize];
            assert!((got - want).abs() <= 1e-6, "({x},{y}): {got} vs {want}");
        }
    }
}

#[test]
fn saxpy_grid_stride() {
    let r = Corpus::new("algo_saxpy").run();
    r.assert_completed();
    let want: Vec<f32> = (0..1000).map(|i| 2.5f32.mul_add(i as f32, 1.0)).collect();
    assert_eq!(r.f32s("y"), want);
}

#[test]
fn printf_output_is_captured() {
    let r = Corpus::new("printf_kernel").run();
    r.assert_completed();
    let mut want = Vec::new();
    for block in 0..2u32 {
        for warp in 0..2u32 {
            let gid = block * 64 + warp * 32;
            want.push(format!(
                "block {block} warp {warp}: tid={gid} id=0x{:08x} ll={} c=Z s=fencehound f={:.2} d={:.3} tag=7",
                gid.wrapping_mul(0x0101_0101),
                -(gid as i64) * 1_000_000_007,
                gid as f32 * 1.5,
                -(gid as f64) / 4.0,
            ));
        }
    }
    let mut got: Vec<&str> = r.result.stdout.lines().collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "stdout:\n{}", r.result.stdout);
    assert!(r.result.stdout.ends_with('\n'));
}

#[test]
fn assert_traps_with_message_and_line() {
    let mut c = Corpus::new("assert_kernel");
    let line = line_of(&c.header.source, "assert(v != bad)");
    let r = c.run();
    let LaunchOutcome::Trap(t) = &r.result.outcome else {
        panic!("expected a trap, got {:?}", r.result.outcome);
    };
    assert!(
        t.message.contains("Assertion `v != bad` failed"),
        "{}",
        t.message
    );
    assert!(t.message.contains("thread [13,0,0]"), "{}", t.message);
    assert_eq!(t.thread.tid, 13);
    assert_eq!(cuda_line(&t.site), Some(line), "{:?}", t.site);

    c.set_arg("bad:u32=1000");
    let r = c.run();
    r.assert_completed();
    let want: Vec<u32> = r.in_u32s("in").iter().map(|v| 2 * v).collect();
    assert_eq!(r.u32s("out"), want);
}

#[test]
fn trap_reports_the_trapping_line() {
    let mut c = Corpus::new("trap_kernel");
    let r = c.run();
    r.assert_completed();
    let want: Vec<u32> = (1..=32).collect();
    assert_eq!(r.u32s("out"), want);

    c.set_arg("limit:u32=10");
    let line = line_of(&c.header.source, "__trap();");
    let r = c.run();
    let LaunchOutcome::Trap(t) = &r.result.outcome else {
        panic!("expected a trap, got {:?}", r.result.outcome);
    };
    assert!(r.in_u32s("in")[t.thread.tid as usize] > 10);
    assert_eq!(cuda_line(&t.site), Some(line), "{:?}", t.site);

    // The inline-asm trap path.
    c.set_arg("in:u32[32] fill(0xffffffff)");
    c.set_arg("limit:u32=0xffffffff");
    let line = line_of(&c.header.source, "asm volatile(\"trap;\")");
    let r = c.run();
    let LaunchOutcome::Trap(t) = &r.result.outcome else {
        panic!("expected a trap, got {:?}", r.result.outcome);
    };
    assert_eq!(cuda_line(&t.site), Some(line), "{:?}", t.site);
}

/// Local arrays, recursion, a struct returned through `.param`, and an indirect call
/// through a function pointer (`mov.u64 %rd, func` + `call (r), %rd, (a, b), proto`):
/// lanes with odd inputs call `op_add`, even ones `op_xor`, so the warp diverges at the
/// call and reconverges after it.
#[test]
fn local_arrays_recursion_and_function_pointers() {
    fn fib(n: u32) -> u32 {
        if n < 2 {
            n
        } else {
            fib(n - 1) + fib(n - 2)
        }
    }
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    under_schedulers("local_array_calls", |r| {
        let input = r.in_u32s("in");
        let out = r.u32s("out");
        for (i, &x) in input.iter().enumerate() {
            let i32_ = i as u32;
            let mut buf: Vec<u32> = (0..16).map(|k| x.wrapping_mul(k) % 7).collect();
            let acc: u32 = (0..16).map(|k| buf[((x + k) & 15) as usize]).sum();
            buf[(x & 15) as usize] += 100;
            let p = (x as u64) * (x as u64 + 3) + (i as u64) * 0xdead_beef;
            let lo = (p as u32).wrapping_add((-7i32) as u32);
            let hi = (p >> 32) as u32;
            let ratio = 0.5f32 * (x + 1) as f32 / (x + 4) as f32;
            let want = [
                acc,
                buf[((x >> 4) & 15) as usize],
                fib(i32_ % 20),
                gcd(x, 360),
                lo ^ hi ^ ratio.to_bits(),
                if x & 1 == 1 {
                    x.wrapping_add(i32_)
                } else {
                    x ^ i32_
                },
            ];
            assert_eq!(&out[6 * i..6 * i + 6], &want, "thread {i}, x = {x}");
        }
    });
}
