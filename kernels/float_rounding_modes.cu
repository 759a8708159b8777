// fencehound-corpus: f32 arithmetic with explicit rounding: __fadd_rn/rz/ru/rd, __fsub_*, __fmul_*, __fmaf_*, __fdiv_*, __frcp_*, __fsqrt_*, __frsqrt_rn, ftz and sat forms
// categories: float
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f32[1536] zero, a:f32[64] random(21,-100,100), b:f32[64] random(22,-100,100), c:f32[64] random(23,-1,1)
// expect: coverage only (compare bitwise with sc golden run: rounding is exact)

__device__ __forceinline__ float add_ftz_sat(float x, float y)
{
    float r;
    asm("add.rn.ftz.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    return r;
}

extern "C" __global__ void float_rounding_modes(float *out, const float *a, const float *b,
                                                const float *c)
{
    unsigned i = threadIdx.x;
    float x = a[i], y = b[i], z = c[i];
    if (i == 0) { x = 1.0e-40f; y = -0.0f; }       /* denormal, negative zero */
    float *o = out + 24 * i;
    o[0] = __fadd_rn(x, y);  o[1] = __fadd_rz(x, y);  o[2] = __fadd_ru(x, y);  o[3] = __fadd_rd(x, y);
    o[4] = __fsub_rn(x, z);  o[5] = __fsub_rz(x, z);  o[6] = __fsub_ru(x, z);  o[7] = __fsub_rd(x, z);
    o[8] = __fmul_rn(x, y);  o[9] = __fmul_rz(x, y);  o[10] = __fmul_ru(x, y); o[11] = __fmul_rd(x, y);
    o[12] = __fmaf_rn(x, y, z); o[13] = __fmaf_rz(x, y, z); o[14] = __fmaf_ru(x, y, z); o[15] = __fmaf_rd(x, y, z);
    o[16] = __fdiv_rn(x, y);  o[17] = __fdiv_rz(x, y);
    o[18] = __frcp_rn(y) + __frcp_rd(z);
    o[19] = __fsqrt_rn(fabsf(x)) - __fsqrt_ru(fabsf(z));
    o[20] = __frsqrt_rn(fabsf(y));
    o[21] = x / y;                                  /* IEEE div.rn.f32 */
    o[22] = add_ftz_sat(z, 0.25f);
    o[23] = __fmaf_ieee_rn(x, z, y);
}
