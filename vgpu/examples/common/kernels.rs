// The vgpu benchmark's kernels, shared by vgpu/examples/bench.rs and
// handlers/examples/bench.rs (included with `include!`, so both measure the same PTX).

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

const ALU: &str = r#"
.visible .entry alu(.param .u64 out, .param .u32 iters)
{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [iters];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mov.u32 %r6, %r5;
    mov.u32 %r7, 0;
LOOP:
    mad.lo.u32 %r6, %r6, 1664525, 1013904223;
    xor.b32 %r8, %r6, %r5;
    shr.u32 %r9, %r8, 7;
    add.u32 %r6, %r6, %r9;
    shl.b32 %r10, %r6, 3;
    xor.b32 %r6, %r6, %r10;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra LOOP;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r6;
    ret;
}
"#;

const MEM: &str = r#"
.visible .entry mem(.param .u64 buf, .param .u32 iters, .param .u32 mask)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [iters];
    ld.param.u32 %r11, [mask];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    mov.u32 %r6, %nctaid.x;
    mul.lo.u32 %r12, %r6, %r4;
    mov.u32 %r8, %r5;
    mov.u32 %r7, 0;
    mov.u32 %r10, 0;
LOOP:
    and.b32 %r8, %r8, %r11;
    mul.wide.u32 %rd4, %r8, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r9, [%rd5];
    add.u32 %r10, %r10, %r9;
    st.global.u32 [%rd5], %r10;
    add.u32 %r8, %r8, %r12;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra LOOP;
    ret;
}
"#;

const DIVERGENT: &str = r#"
.visible .entry divergent(.param .u64 out, .param .u32 iters)
{
    .reg .pred %p<4>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [iters];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    and.b32 %r13, %r2, 31;
    mul.lo.u32 %r14, %r13, 7;
    and.b32 %r14, %r14, 15;
    add.u32 %r15, %r1, %r14;
    and.b32 %r16, %r2, 1;
    setp.eq.u32 %p2, %r16, 0;
    mov.u32 %r6, %r5;
    mov.u32 %r7, 0;
LOOP:
    @%p2 bra EVEN;
    mad.lo.u32 %r6, %r6, 1664525, 1013904223;
    xor.b32 %r8, %r6, %r5;
    shr.u32 %r9, %r8, 7;
    add.u32 %r6, %r6, %r9;
    bra.uni JOIN;
EVEN:
    shl.b32 %r10, %r6, 3;
    xor.b32 %r6, %r6, %r10;
    add.u32 %r6, %r6, 12345;
    sub.u32 %r6, %r6, %r5;
JOIN:
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r15;
    @%p1 bra LOOP;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r6;
    ret;
}
"#;
