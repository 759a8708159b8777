//! A warp's registers and lane records are made at its first step and handed to the next
//! warp to start when its last lane exits (`Machine::start_warp`). What a starting warp
//! sees must not depend on that: every register it reads before writing is 0, its local
//! memory is zeroed, and a partial warp (fewer than 32 lanes) takes a full warp's
//! records, and the other way round, with nothing left over.

use fencehound_vgpu::*;

/// Each thread stores a register nothing wrote (`%r9`) and the first word of a local
/// array nothing wrote, then fills its registers and that local word with values that
/// are not 0 (which a reused register file or lane record would carry to the next warp),
/// and stores a checksum of them.
const SRC: &str = r#".version 7.0
.target sm_80
.address_size 64

.visible .entry start_clean(.param .u64 out)
{
    .local .align 4 .b8 buf[16];
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    mul.wide.u32 %rd3, %r4, 12;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r9;
    mov.u64 %rd5, buf;
    ld.local.u32 %r5, [%rd5];
    st.global.u32 [%rd4+4], %r5;
    add.u32 %r6, %r4, 1000;
    st.local.u32 [%rd5], %r6;
    mul.lo.u32 %r7, %r6, 3;
    xor.b32 %r8, %r7, 0x5a5a;
    add.u32 %r9, %r8, %r6;
    ld.local.u32 %r10, [%rd5];
    add.u32 %r11, %r9, %r10;
    st.global.u32 [%rd4+8], %r11;
    ret;
}
"#;

fn expected(g: u32) -> u32 {
    let r6 = g + 1000;
    let r9 = ((r6 * 3) ^ 0x5a5a) + r6;
    r9 + r6
}

#[test]
fn a_starting_warp_sees_zeroed_registers_and_local_memory() {
    let m = fencehound_ptx::parse("start.ptx", SRC).expect("parse");
    // 48 threads per CTA: a full warp and a warp of 16 lanes in each.
    let (ctas, tpb) = (96u32, 48u32);
    let n = (ctas * tpb) as usize;
    let mut scheds: Vec<Box<dyn Scheduler + Send>> = vec![Box::new(RoundRobin::new(1))];
    for seed in 1..=6 {
        scheds.push(SchedulerKind::Random.build(seed));
    }
    for mut s in scheds {
        let what = s.describe();
        let mut dev = Device::new();
        let id = dev.load_module(&m).unwrap_or_else(|e| panic!("{e}"));
        // Twice on one device and thread: the second launch takes the first one's
        // register files from the pool between launches.
        for launch in 0..2 {
            let out = dev.alloc(12 * n as u64).unwrap();
            let r = dev
                .launch_with(
                    id,
                    "start_clean",
                    Dim3::x(ctas),
                    Dim3::x(tpb),
                    0,
                    &[Arg::Ptr(out)],
                    LaunchOptions::default(),
                    &mut NoHooks,
                    &mut s,
                )
                .unwrap();
            assert!(r.outcome.is_completed(), "{what}: {:?}", r.outcome);
            let mut b = vec![0u8; 12 * n];
            dev.copy_from(out, &mut b).unwrap();
            for g in 0..n {
                let w = |k: usize| {
                    u32::from_le_bytes(b[12 * g + 4 * k..12 * g + 4 * k + 4].try_into().unwrap())
                };
                assert_eq!(
                    w(0),
                    0,
                    "{what}, launch {launch}, thread {g}: unwritten %r9"
                );
                assert_eq!(
                    w(1),
                    0,
                    "{what}, launch {launch}, thread {g}: unwritten local"
                );
                assert_eq!(
                    w(2),
                    expected(g as u32),
                    "{what}, launch {launch}, thread {g}"
                );
            }
        }
    }
}
