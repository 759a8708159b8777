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

/// Code inlined from a header through another header (`mma.h`'s `load_matrix_sync` calls
/// an inner function; libcu++'s atomics go several levels deep) names the kernel file's
/// line that called it: the inline stack is followed through the `.loc … inlined_at`
/// chain to the frame in the outermost frame's file. Before, only the innermost header
/// line was known, and a race report pointed into the header.
#[test]
fn inline_stack_names_the_kernel_line_that_called_a_header() {
    let ptx = r#".version 8.0
.target sm_80
.address_size 64
.file 1 "/src/k.cu"
.file 2 "/usr/include/h.hpp"

.visible .entry k(.param .u64 p)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    .loc 1 5 0
    ld.param.u64 %rd1, [p];
    .loc 2 20 5, inlined_at 1 7 3
    mov.u32 %r1, 1;
    .loc 2 10 3, inlined_at 2 20 5
    st.global.u32 [%rd1], %r1;
    .loc 2 20 5, inlined_at 1 9 3
    mov.u32 %r1, 2;
    .loc 2 10 3, inlined_at 2 20 5
    st.global.u32 [%rd1], %r1;
    .loc 1 11 0
    ret;
}
"#;
    let m = fencehound_ptx::parse("inline.ptx", ptx).expect("parse");
    let mut dev = Device::new();
    let id = dev.load_module(&m).unwrap_or_else(|e| panic!("{e}"));
    // (file, line, the inlining caller's (file, line)).
    type Site = (String, u32, Option<(String, u32)>);
    let sites: Vec<Site> = (0..)
        .map_while(|s| dev.site(id, s))
        .map(|s| {
            let c = s.cuda.as_ref().expect("line info");
            (c.file.clone(), c.line, c.caller.clone())
        })
        .collect();
    let caller = |l: u32| Some(("/src/k.cu".to_string(), l));
    assert_eq!(
        sites,
        vec![
            ("/src/k.cu".into(), 5, None),
            ("/usr/include/h.hpp".into(), 20, caller(7)),
            ("/usr/include/h.hpp".into(), 10, caller(7)),
            // The same header lines inlined again from line 9: the latest call site counts.
            ("/usr/include/h.hpp".into(), 20, caller(9)),
            ("/usr/include/h.hpp".into(), 10, caller(9)),
            ("/src/k.cu".into(), 11, None),
        ]
    );
}
