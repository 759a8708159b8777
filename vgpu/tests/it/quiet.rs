//! `Quiet` code is not a preemption point: no other warp runs between two stores of a
//! quiet function, or between two generated stores (PTX line 0). Each twin checks that
//! without `Quiet` the same kernel does show the intermediate value under some seed (so
//! the quiet run's silence is the rule's doing, not the schedule's).

use fencehound_ptx::{Item, Opcode, Pos, Statement};
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

/// The module, with the instructions `generated` picks (by opcode, in the kernel's inline
/// writer: between the labels `INLINE` and `READER`) at PTX line 0, as the rewrite marks
/// the code it generates.
fn module(generated: impl Fn(Opcode) -> bool) -> fencehound_ptx::Module {
    let mut m = fencehound_ptx::parse("quiet.ptx", PTX).expect("parse");
    for item in &mut m.items {
        let Item::Func(f) = item else { continue };
        let mut inline = false;
        for s in f.body.iter_mut().flatten() {
            match s {
                Statement::Label(l) => inline = l == "INLINE",
                Statement::Inst(i) if inline && generated(i.opcode) => {
                    i.pos = Pos { line: 0, col: 0 }
                }
                _ => {}
            }
        }
    }
    m
}

/// How many of 64 random schedules let the reader see the intermediate 1.
fn intermediate_seen(module: &fencehound_ptx::Module, inline: bool, quiet: Option<Quiet>) -> u64 {
    let mut seen = 0;
    for seed in 0..64 {
        let mut dev = Device::new();
        let m = dev.load_module(module).expect("load");
        let x = dev.alloc(4).unwrap();
        let saw = dev.alloc(4).unwrap();
        dev.set_quiet(quiet.clone());
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
    let m = module(|_| false);
    let none = intermediate_seen(&m, false, None);
    assert!(
        none > 0,
        "without Quiet no schedule showed the 1 in 64 seeds"
    );
    let quiet = Quiet {
        functions: vec!["twice".into()],
        generated: false,
    };
    assert_eq!(
        intermediate_seen(&m, false, Some(quiet)),
        0,
        "a quiet function was preempted between its stores"
    );
}

#[test]
fn generated_stores_are_not_preemption_points() {
    let generated = Some(Quiet {
        functions: Vec::new(),
        generated: true,
    });
    let stores = module(|op| matches!(op, Opcode::St | Opcode::Mov));
    let none = intermediate_seen(&stores, true, None);
    assert!(
        none > 0,
        "without Quiet no schedule showed the 1 in 64 seeds"
    );
    assert_eq!(
        intermediate_seen(&stores, true, generated.clone()),
        0,
        "a generated store was a preemption point"
    );
    // Generated code around original stores changes nothing.
    let around = module(|op| op == Opcode::Mov);
    assert!(intermediate_seen(&around, true, generated) > 0);
}
