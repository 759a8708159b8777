//! `Quiet` code and memory are not preemption points: no other warp runs between two
//! stores of a quiet function, or between two stores to a quiet range. Each twin checks
//! that without `Quiet` the same kernel does show the intermediate value under some seed
//! (so the quiet run's silence is the rule's doing, not the schedule's).

use fencehound_vgpu::*;

/// Thread 0 writes 1 then 2 to `x` (in `twice`, or inline when `INLINE`); thread 32 (the
/// second warp) reads `x` until it reads 2 and writes to `saw[0]` whether it ever read 1.
const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64

.func twice(.param .b64 p)
{
    .reg .b64 %a;
    .reg .b32 %v;
    ld.param.b64 %a, [p];
    mov.b32 %v, 1;
    st.global.u32 [%a], %v;
    mov.b32 %v, 2;
    st.global.u32 [%a], %v;
    ret;
}

.visible .entry k(.param .u64 px, .param .u64 psaw, .param .u32 inline)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [px];
    ld.param.u64 %rd2, [psaw];
    ld.param.u32 %r5, [inline];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra READER;
    setp.ne.u32 %p2, %r5, 0;
    @%p2 bra INLINE;
    {
        .param .b64 a0;
        st.param.b64 [a0], %rd1;
        call.uni twice, (a0);
    }
    ret;
INLINE:
    mov.b32 %r6, 1;
    st.global.u32 [%rd1], %r6;
    mov.b32 %r6, 2;
    st.global.u32 [%rd1], %r6;
    ret;
READER:
    setp.ne.u32 %p3, %r1, 32;
    @%p3 ret;
    mov.b32 %r3, 0;
LOOP:
    ld.volatile.global.u32 %r2, [%rd1];
    setp.eq.u32 %p2, %r2, 1;
    selp.b32 %r4, 1, 0, %p2;
    or.b32 %r3, %r3, %r4;
    setp.ne.u32 %p2, %r2, 2;
    @%p2 bra LOOP;
    st.global.u32 [%rd2], %r3;
    ret;
}
"#;

/// How many of `seeds` random schedules let the reader see the intermediate 1.
fn intermediate_seen(inline: bool, quiet: impl Fn(u64) -> Option<Quiet>, seeds: u64) -> u64 {
    let module = fencehound_ptx::parse("quiet.ptx", PTX).expect("parse");
    let mut seen = 0;
    for seed in 0..seeds {
        let mut dev = Device::new();
        let m = dev.load_module(&module).expect("load");
        let x = dev.alloc(4).unwrap();
        let saw = dev.alloc(4).unwrap();
        dev.set_quiet(quiet(x));
        let r = dev
            .launch_with(
                m,
                "k",
                Dim3::x(1),
                Dim3::x(64),
                0,
                &[Arg::Ptr(x), Arg::Ptr(saw), Arg::U32(inline as u32)],
                LaunchOptions::default(),
                &mut NoHooks,
                &mut RandomScheduler::new(seed),
            )
            .unwrap();
        assert!(r.outcome.is_completed(), "seed {seed}: {:?}", r.outcome);
        let mut b = [0u8; 4];
        dev.copy_from(saw, &mut b).unwrap();
        seen += u32::from_le_bytes(b) as u64;
    }
    seen
}

#[test]
fn a_quiet_function_runs_as_one_step() {
    let none = intermediate_seen(false, |_| None, 64);
    assert!(
        none > 0,
        "without Quiet no schedule showed the 1 in 64 seeds"
    );
    let quiet = intermediate_seen(
        false,
        |_| {
            Some(Quiet {
                functions: vec!["twice".into()],
                ranges: Vec::new(),
                generated: false,
            })
        },
        64,
    );
    assert_eq!(
        quiet, 0,
        "a quiet function was preempted between its stores"
    );
}

#[test]
fn stores_to_a_quiet_range_are_not_preemption_points() {
    let none = intermediate_seen(true, |_| None, 64);
    assert!(
        none > 0,
        "without Quiet no schedule showed the 1 in 64 seeds"
    );
    let quiet = intermediate_seen(
        true,
        |x| {
            Some(Quiet {
                functions: Vec::new(),
                ranges: vec![(x, x + 4)],
                generated: false,
            })
        },
        64,
    );
    assert_eq!(quiet, 0, "a store to a quiet range was a preemption point");
    // A range that does not cover the address changes nothing.
    let elsewhere = intermediate_seen(
        true,
        |x| {
            Some(Quiet {
                functions: Vec::new(),
                ranges: vec![(x + 4, x + 8)],
                generated: false,
            })
        },
        64,
    );
    assert!(elsewhere > 0);
}
