//! Regression tests for bugs found in the vgpu core (each names what was wrong).

use fencehound_vgpu::*;

fn run_ptx(ptx: &str, kernel: &str, out_words: usize) -> Vec<u32> {
    let m = fencehound_ptx::parse("regression.ptx", ptx).expect("parse");
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap_or_else(|e| panic!("{e}"));
    let out = dev.alloc(4 * out_words as u64).unwrap();
    let r = dev
        .launch(id, kernel, Dim3::x(1), Dim3::x(32), 0, &[Arg::Ptr(out)])
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut b = vec![0u8; 4 * out_words];
    dev.copy_from(out, &mut b).unwrap();
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Registers declared in a `{ }` block shadow the function's registers of the same name
/// only inside the block. The decoder used one namespace per function, so NVRTC's inline
/// 128-bit multiply blocks (`.reg .u32 %r0, %r1, %r2, %r3;`) clobbered the function's
/// `%r3`, and libdevice's `__internal_trig_reduction_slowpathd` (math_precise_f64) then
/// stored to a wild local address.
#[test]
fn block_scoped_registers_shadow_only_inside_the_block() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry shadow(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r3, 7;
    {
        .reg .u32 %r3, %r5;
        mov.u32 %r3, 100;
        add.u32 %r4, %r3, 1;
        {
            .reg .u32 %r3;
            mov.u32 %r3, 1000;
            add.u32 %r5, %r3, 2;
        }
        add.u32 %r4, %r4, %r3;
        st.global.u32 [%rd2+12], %r5;
    }
    st.global.u32 [%rd2], %r3;
    st.global.u32 [%rd2+4], %r4;
    st.global.u32 [%rd2+8], %r5;
    ret;
}
"#;
    // outer %r3 = 7; %r4 = 101 + 100; inner-block %r5 = 1002; the function's %r5 is untouched.
    assert_eq!(run_ptx(ptx, "shadow", 4), vec![7, 201, 0, 1002]);
}
