//! Plain loads read straight from the one allocation (or CTA shared memory) holding every
//! lane's address (`direct_loads` in `vgpu/src/exec/memops.rs`). Differential: the same
//! kernels under plain memory (transparent hooks: the direct path) and under hooks that
//! are plain memory too but not transparent (every lane through `Hooks::load`) give the
//! same registers, and the same fault — kind, lane, address — when some lane is
//! misaligned or outside every allocation.

use crate::common::{ptx_device, words_in};
use fencehound_vgpu::*;

/// Plain memory, but not transparent: the interpreter hands every access to `load`.
struct Opaque;
impl Hooks for Opaque {}

/// Thread t loads `ty` at byte `idx[t]` of the global input (or of shared memory, after
/// the CTA copied the input's first 256 bytes there) and stores it, widened to 64 bits,
/// to `out[t]`.
fn kernel(space: &str, ty: &str) -> String {
    let (fill, base) = if space == "shared" {
        (
            r#"
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra FILLED;
    mov.u32 %r2, 0;
COPY:
    cvt.u64.u32 %rd10, %r2;
    add.s64 %rd11, %rd1, %rd10;
    ld.global.u32 %r3, [%rd11];
    mov.u32 %r5, buf;
    add.u32 %r6, %r5, %r2;
    st.shared.u32 [%r6], %r3;
    add.u32 %r2, %r2, 4;
    setp.lt.u32 %p1, %r2, 256;
    @%p1 bra COPY;
FILLED:
    bar.sync 0;
    mov.u64 %rd12, buf;"#,
            "%rd12",
        )
    } else {
        ("", "%rd1")
    };
    // (Into a 64-bit register: the load extends the value as its type says.)
    let ld = format!("ld.{space}.{ty} %rd21, [%rd13];");
    format!(
        r#"
.visible .entry k(.param .u64 in, .param .u64 idx, .param .u64 out)
{{
    .shared .align 8 .b8 buf[256];
    .reg .pred %p<2>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<24>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [idx];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    {fill}
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r4, [%rd5];
    cvt.u64.u32 %rd6, %r4;
    add.s64 %rd13, {base}, %rd6;
    {ld}
    mul.wide.u32 %rd7, %r1, 8;
    add.s64 %rd8, %rd3, %rd7;
    st.global.u64 [%rd8], %rd21;
    ret;
}}
"#
    )
}

/// The outcome (as text) and `out` of one launch of 64 threads.
fn run<H: Hooks>(src: &str, idx: &[u32], hooks: &mut H) -> (String, Vec<u64>) {
    let (mut dev, m) = ptx_device(src);
    let input: Vec<u8> = (0..256u32).map(|i| (i * 37 + 11) as u8).collect();
    let pin = dev.alloc(256).expect("alloc");
    dev.copy_to(pin, &input).expect("copy");
    let pidx = words_in(&mut dev, idx.len(), idx);
    let pout = words_in(&mut dev, 2 * idx.len(), &[]);
    let r = dev
        .launch_with(
            m,
            "k",
            Dim3::x(1),
            Dim3::x(idx.len() as u32),
            0,
            &[Arg::Ptr(pin), Arg::Ptr(pidx), Arg::Ptr(pout)],
            LaunchOptions::default(),
            hooks,
            &mut RoundRobin::new(1),
        )
        .expect("launch");
    let mut out = vec![0u8; 8 * idx.len()];
    dev.copy_from(pout, &mut out).expect("copy");
    (
        format!("{:?}", r.outcome),
        out.chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

#[test]
fn direct_loads_match_the_per_lane_path() {
    let types = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"];
    let mut faults = 0;
    for space in ["global", "shared"] {
        for ty in types {
            let size: u32 = ty[1..].parse::<u32>().unwrap() / 8;
            let src = kernel(space, ty);
            // In bounds and aligned (scattered, repeated, descending); one lane
            // misaligned; one lane past the end; every lane past the end.
            let spread: Vec<u32> = (0..64).map(|t| (t * 7 % 32) * size % 256).collect();
            let mut odd = spread.clone();
            if size > 1 {
                odd[37] += 1;
            }
            let mut past = spread.clone();
            past[21] = 256;
            let beyond: Vec<u32> = (0..64).map(|t| 4096 + t * size).collect();
            let desc: Vec<u32> = (0..64).map(|t| (255 - t) / size * size).collect();
            for idx in [&spread, &odd, &past, &beyond, &desc] {
                let direct = run(&src, idx, &mut NoHooks);
                let hooked = run(&src, idx, &mut Opaque);
                assert_eq!(direct, hooked, "{space} {ty} {idx:?}");
                faults += direct.0.starts_with("Fault") as u32;
            }
            let (outcome, out) = run(&src, &spread, &mut NoHooks);
            assert_eq!(outcome, "Completed", "{space} {ty}");
            assert!(out.iter().any(|&v| v != 0), "{space} {ty}");
        }
    }
    // The misaligned and out-of-bounds cases did fault (both paths alike).
    assert!(faults >= 2 * 8 * 2, "{faults}");
}
