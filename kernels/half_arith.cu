// fencehound-corpus: __half and __half2 arithmetic: add/sub/mul/fma/div, __hmax/__hmin, comparisons, __hneg, __habs, packed ops
// categories: half, convert
// nvrtc-flags: --use-bundled-headers=$NVRTC_BUNDLED_HEADERS
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f16[1024] zero, a:f16[128] random(27,-4,4), b:f16[128] random(28,-4,4)
// expect: coverage only (compare bitwise with sc golden run)

#include <cuda_fp16.h>

extern "C" __global__ void half_arith(__half *out, const __half *a, const __half *b)
{
    unsigned i = threadIdx.x;
    __half x = a[i], y = b[i];
    __half2 p = reinterpret_cast<const __half2 *>(a)[i];
    __half2 q = reinterpret_cast<const __half2 *>(b)[i];
    __half *o = out + 16 * i;
    o[0] = __hadd(x, y);
    o[1] = __hsub(x, y);
    o[2] = __hmul(x, y);
    o[3] = __hfma(x, y, __float2half_rn(0.5f));
    o[4] = __hdiv(x, y);
    o[5] = __hmax(x, y);
    o[6] = __hmin(x, y);
    o[7] = __hneg(__habs(x));
    o[8] = __hlt(x, y) ? x : y;
    o[9] = __float2half_rn((float)(__heq(x, y) + 2 * __hge(x, y) + 4 * __hisnan(x)));
    __half2 r = __hfma2(p, q, __hadd2(p, q));
    r = __hmax2(r, __hmul2(p, __float2half2_rn(-1.0f)));
    o[10] = __low2half(r);
    o[11] = __high2half(r);
    __half2 m = __hsub2_sat(p, q);
    o[12] = __low2half(m);
    o[13] = __hadd_sat(x, y);
    o[14] = __float2half_rn((float)__hbgt2(p, q));
    o[15] = x * y + x;                              /* operator overloads */
}
