// fencehound-corpus: __nv_bfloat16 / __nv_bfloat162 arithmetic, fma, max/min, comparisons, conversions to/from float
// categories: half, convert
// nvrtc-flags: --use-bundled-headers=$NVRTC_BUNDLED_HEADERS
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f32[512] zero, a:f32[64] random(29,-10,10), b:f32[64] random(30,-10,10)
// expect: coverage only (compare bitwise with sc golden run)

#include <cuda_bf16.h>

extern "C" __global__ void bf16_arith(float *out, const float *a, const float *b)
{
    unsigned i = threadIdx.x;
    __nv_bfloat16 x = __float2bfloat16(a[i]);
    __nv_bfloat16 y = __float2bfloat16_rz(b[i]);
    __nv_bfloat162 p = __floats2bfloat162_rn(a[i], b[i]);
    float *o = out + 8 * i;
    o[0] = __bfloat162float(__hadd(x, y));
    o[1] = __bfloat162float(__hmul(x, y));
#if __CUDA_ARCH__ >= 800
    o[2] = __bfloat162float(__hfma(x, y, __float2bfloat16(1.5f)));   /* fma.rn.bf16 */
#else
    o[2] = __bfloat162float(__hadd(__hmul(x, y), __float2bfloat16(1.5f)));
#endif
    o[3] = __bfloat162float(__hmax(x, y)) - __bfloat162float(__hmin(x, y));
    o[4] = (float)(__hlt(x, y) + 2 * __hge(x, y) + 4 * __heq(x, y));
    __nv_bfloat162 r = __hmul2(p, __hadd2(p, p));
    o[5] = __low2float(r) + __high2float(r);
    o[6] = __bfloat162float(__float2bfloat16_rn(a[i] * 3.0f)) + __bfloat162float(__double2bfloat16((double)b[i]));
    o[7] = (float)__bfloat162int_rn(__hsub(x, y)) + __bfloat162float(__hneg(x));
}
