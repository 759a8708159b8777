//! Warp collectives whose lanes pass different member masks (issue 22): one converged warp
//! holding several sub-warp groups at once, as cooperative-groups tiles
//! (`tiled_partition<N>` computes `mask << (laneid & ~(N-1))`), CUB logical warps and
//! `__activemask()`-based code produce.
//!
//! PTX ISA, `shfl.sync` / `vote.sync` / `match.sync` / `redux.sync` / `bar.warp.sync`: the
//! executing thread waits until every non-exited thread of *its own* `membermask` has
//! executed the same instruction with the same mask; `vote.ballot` sets the bits of the
//! mask's threads whose predicate is true, `redux` combines the mask's threads' values,
//! `match.any` returns the mask's threads holding the same value. A thread that is not in
//! its own mask is undefined behaviour. Every expected value below is derived from those
//! definitions for the group each lane belongs to, not from the implementation.

use crate::common;

use fencehound_vgpu::{Arg, Device, Dim3, LaunchOutcome};

/// Words each lane writes.
const W: usize = 8;

/// A kernel `k(out)` whose body starts with `%lane` = `%laneid`, `%tidx` = `%tid.x` and
/// `%o` = `out + 4 * W * tid`; `body` stores its results at `[%o + 4k]`.
fn module(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %lane, %tidx, %m, %r<16>;\n .reg .b64 %o, %t;\n .reg .pred %p<8>;\n\
         mov.u32 %lane, %laneid;\n mov.u32 %tidx, %tid.x;\n\
         ld.param.u64 %o, [out];\n cvta.to.global.u64 %o, %o;\n\
         mul.wide.u32 %t, %tidx, {};\n add.s64 %o, %o, %t;\n{body}\n ret;\n}}\n",
        4 * W
    )
}

fn launch(ptx: &str, threads: u32) -> (LaunchOutcome, Vec<u32>) {
    let mut dev = Device::new();
    let id = common::load(&mut dev, "warp_groups.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let words = threads as usize * W;
    let o = dev.alloc(4 * words as u64).unwrap();
    dev.copy_to(o, &vec![0xee; 4 * words]).unwrap();
    let r = dev
        .launch(id, "k", Dim3::x(1), Dim3::x(threads), 0, &[Arg::Ptr(o)])
        .unwrap();
    let mut bytes = vec![0u8; 4 * words];
    dev.copy_from(o, &mut bytes).unwrap();
    let out = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (r.outcome, out)
}

fn run(ptx: &str, threads: u32) -> Vec<u32> {
    let (outcome, out) = launch(ptx, threads);
    assert!(outcome.is_completed(), "{outcome:?}");
    out
}

/// The printed module is valid PTX for ptxas (the test fails, never skips, without it).
fn ptxas_accepts(ptx: &str) {
    let m = fencehound_ptx::parse("warp_groups.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let printed = fencehound_ptx::print(&m);
    if let Err(e) = fencehound_toolchain::assemble(&printed, "sm_80") {
        panic!("ptxas rejects the printed PTX: {e}\n{printed}");
    }
}

/// Tiles of `n` lanes: lane `l` belongs to the tile starting at `l & !(n-1)`, with member
/// mask `(2^n - 1) << start`. Each lane runs, with that mask: `bar.warp.sync`; a ballot
/// of "my lane is odd"; `redux.add` of the lane ids; `shfl.idx` of lane 3 of the tile
/// (segment width `n`, so `c = ((32-n) << 8) | 31`); `shfl.bfly` by 1; `match.any` of
/// `lane / 4`; `vote.all` of "lane < 16"; `vote.any` of "lane == start + n - 1".
fn tiles_kernel(n: u32) -> String {
    let ones: u64 = (1u64 << n) - 1;
    let c = ((32 - n) << 8) | 31;
    module(&format!(
        "
 and.b32 %r1, %lane, {start_mask};
 shl.b32 %m, {ones}, %r1;
 bar.warp.sync %m;
 and.b32 %r2, %lane, 1;
 setp.ne.u32 %p1, %r2, 0;
 vote.sync.ballot.b32 %r3, %p1, %m;
 st.global.u32 [%o], %r3;
 redux.sync.add.u32 %r4, %lane, %m;
 st.global.u32 [%o+4], %r4;
 shfl.sync.idx.b32 %r5, %lane, 3, {c}, %m;
 st.global.u32 [%o+8], %r5;
 shfl.sync.bfly.b32 %r6, %lane, 1, {c}, %m;
 st.global.u32 [%o+12], %r6;
 shr.u32 %r7, %lane, 2;
 match.any.sync.b32 %r8, %r7, %m;
 st.global.u32 [%o+16], %r8;
 setp.lt.u32 %p2, %lane, 16;
 vote.sync.all.pred %p3, %p2, %m;
 selp.u32 %r9, 1, 0, %p3;
 st.global.u32 [%o+20], %r9;
 add.u32 %r10, %r1, {last};
 setp.eq.u32 %p4, %lane, %r10;
 vote.sync.any.pred %p5, %p4, %m;
 selp.u32 %r11, 1, 0, %p5;
 st.global.u32 [%o+24], %r11;
 st.global.u32 [%o+28], %m;
",
        start_mask = !(n - 1) & 31,
        last = n - 1,
    ))
}

fn check_tiles(n: u32, threads: u32) {
    let ptx = tiles_kernel(n);
    ptxas_accepts(&ptx);
    let out = run(&ptx, threads);
    for tid in 0..threads {
        let lane = tid % 32;
        let start = lane & !(n - 1);
        let ones = ((1u64 << n) - 1) as u32;
        let mask = ones << start;
        let got = &out[tid as usize * W..][..W];
        let ballot = mask & 0xaaaa_aaaa;
        let sum: u32 = (start..start + n).sum();
        let bfly = lane ^ 1;
        let quad = if n >= 4 {
            0xf << (lane & !3)
        } else {
            // Tiles of 2: the lanes of the tile share `lane / 4`.
            mask
        };
        let all_low = (start + n <= 16) as u32;
        let want = [
            ballot,
            sum,
            start | (3 & (n - 1)),
            bfly,
            quad,
            all_low,
            1,
            mask,
        ];
        assert_eq!(got, want, "tiles of {n}, thread {tid}");
    }
}

#[test]
fn half_warp_groups() {
    check_tiles(16, 64);
}

#[test]
fn quarter_warp_groups() {
    check_tiles(8, 64);
}

#[test]
fn tiles_of_two_and_four_and_the_whole_warp() {
    check_tiles(2, 32);
    check_tiles(4, 32);
    check_tiles(32, 64);
}

/// A warp of 24 threads (the CTA's size is not a multiple of 32): the upper half-warp
/// group's mask names lanes 16–31, of which only 16–23 exist; they complete without the
/// absent lanes (PTX: "non-exited threads"), and the ballot sees only them.
#[test]
fn groups_in_a_partial_warp() {
    let out = run(&tiles_kernel(16), 24);
    for tid in 16..24usize {
        let got = &out[tid * W..][..W];
        assert_eq!(got[0], 0xaaaa_0000 & 0x00ff_0000, "ballot, thread {tid}");
        assert_eq!(got[1], (16..24).sum::<u32>(), "redux, thread {tid}");
    }
}

/// Diverged groups at different instructions: lanes 0–19 take one branch and shuffle
/// with mask 0x000fffff, lanes 20–31 the other with 0xfff00000; inside the first branch
/// lanes 0, 5 and 9 go on alone and vote with `activemask`, which must be exactly the
/// three of them.
#[test]
fn diverged_groups() {
    let ptx = module(
        "
 setp.lt.u32 %p1, %lane, 20;
 @%p1 bra LOW;
 shfl.sync.idx.b32 %r1, %lane, 31, 31, 0xfff00000;
 redux.sync.add.u32 %r2, %lane, 0xfff00000;
 st.global.u32 [%o], %r1;
 st.global.u32 [%o+4], %r2;
 bra.uni DONE;
LOW:
 shfl.sync.idx.b32 %r1, %lane, 0, 31, 0x000fffff;
 redux.sync.add.u32 %r2, %lane, 0x000fffff;
 st.global.u32 [%o], %r1;
 st.global.u32 [%o+4], %r2;
 setp.eq.u32 %p2, %lane, 0;
 setp.eq.u32 %p3, %lane, 5;
 or.pred %p2, %p2, %p3;
 setp.eq.u32 %p3, %lane, 9;
 or.pred %p2, %p2, %p3;
 @!%p2 bra DONE;
 activemask.b32 %r3;
 st.global.u32 [%o+8], %r3;
 vote.sync.ballot.b32 %r4, %p2, %r3;
 st.global.u32 [%o+12], %r4;
DONE:
",
    );
    ptxas_accepts(&ptx);
    let out = run(&ptx, 32);
    let three = 1 | 1 << 5 | 1 << 9;
    for lane in 0..32usize {
        let got = &out[lane * W..][..W];
        if lane < 20 {
            assert_eq!(got[0], 0, "shfl, lane {lane}");
            assert_eq!(got[1], (0..20).sum::<u32>(), "redux, lane {lane}");
            if three >> lane & 1 == 1 {
                assert_eq!(got[2], three, "activemask, lane {lane}");
                assert_eq!(got[3], three, "ballot, lane {lane}");
            } else {
                assert_eq!(got[2], 0xeeee_eeee, "lane {lane} must not vote");
            }
        } else {
            assert_eq!(got[0], 31, "shfl, lane {lane}");
            assert_eq!(got[1], (20..32).sum::<u32>(), "redux, lane {lane}");
        }
    }
}

/// A lane that really is outside its own mask is still a fault naming that lane and that
/// mask — here lane 16 passes the lower half-warp's mask while lanes 0–15 pass it rightly.
#[test]
fn a_lane_outside_its_own_mask_faults() {
    let ptx = module(
        "
 setp.le.u32 %p1, %lane, 16;
 @!%p1 bra DONE;
 bar.warp.sync 0x0000ffff;
DONE:
",
    );
    match launch(&ptx, 32).0 {
        LaunchOutcome::Fault(f) => {
            assert_eq!(f.thread.lane, 16, "{f}");
            assert!(f.message.contains("0x0000ffff"), "{f}");
            assert!(f.message.contains("bar.warp.sync"), "{f}");
        }
        o => panic!("expected a fault, got {o:?}"),
    }
}
