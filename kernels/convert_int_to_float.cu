// fencehound-corpus: integer -> float/double conversions with rounding intrinsics, double<->float narrowing, __saturatef, rintf/truncf/floorf/ceilf/roundf
// categories: convert, float, double
// nvrtc-flags: --use-bundled-headers=$NVRTC_BUNDLED_HEADERS
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f64[1024] zero, v:u64[64] random(33), f:f32[64] random(34,-3,3)
// expect: coverage only (compare bitwise with sc golden run)

#include <cuda_fp16.h>

extern "C" __global__ void convert_int_to_float(double *out, const unsigned long long *v, const float *f)
{
    unsigned i = threadIdx.x;
    unsigned long long u = v[i];
    int s = (int)u;
    float g = f[i] * 2.5f;
    double *o = out + 16 * i;
    o[0] = __int2float_rn(s) + __int2float_rz(s) + __int2float_ru(s) + __int2float_rd(s);
    o[1] = __uint2float_rn((unsigned)u) - __uint2float_rz((unsigned)u);
    o[2] = __ll2float_rn((long long)u) - __ll2float_ru((long long)u);
    o[3] = __ull2float_rd(u) + __ull2float_rz(u);
    o[4] = __ll2double_rn((long long)u) - __ull2double_ru(u) + __int2double_rn(s);
    o[5] = __double2float_rn((double)u * 1.0e-10) + __double2float_rz((double)s / 3.0);
    o[6] = __double2float_ru(1.0 / (double)(s | 1)) - __double2float_rd(1.0 / (double)(s | 1));
    o[7] = __saturatef(g) + __saturatef(__int_as_float(0x7fc00000 + (int)i));
    o[8] = rintf(g) + 10.0f * truncf(g);
    o[9] = floorf(g) + 10.0f * ceilf(g);
    o[10] = roundf(g) + nearbyintf(g * 0.5f);
    o[11] = rint((double)g) + floor((double)g * 7.0) + ceil((double)g * 3.0) + trunc((double)g);
    o[12] = (double)(float)(double)u;
    o[13] = (double)(unsigned short)u + (double)(signed char)u;   /* cvt.rn.f64.u16 / .s8 */
    o[14] = (double)__half2float(__ushort_as_half((unsigned short)u));
    o[15] = (double)(g > 0.0f ? __float2half_rn(g) : __float2half_rz(g));
}
