// fencehound-corpus: float/double -> integer conversions with every rounding mode and saturation on out-of-range and NaN inputs
// categories: convert
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u64[1024] zero, a:f32[64] random(31,-5e9,5e9), d:f64[64] random(32,-1e20,1e20)
// expect: coverage only (compare with sc golden run); thread 0..3 use NaN, +inf, -inf, 2.5

extern "C" __global__ void convert_float_to_int(unsigned long long *out, const float *a, const double *d)
{
    unsigned i = threadIdx.x;
    float x = a[i];
    double y = d[i];
    if (i == 0) { x = __int_as_float(0x7fc00000); y = __longlong_as_double(0x7ff8000000000000ll); }
    if (i == 1) { x = __int_as_float(0x7f800000); y = 1.0 / 0.0 + y * 0.0 * 0.0; }
    if (i == 2) { x = -__int_as_float(0x7f800000); y = -1.0e300; }
    if (i == 3) { x = 2.5f; y = -2.5; }
    unsigned long long *o = out + 16 * i;
    o[0] = (unsigned)__float2int_rn(x);  o[1] = (unsigned)__float2int_rz(x);
    o[2] = (unsigned)__float2int_ru(x);  o[3] = (unsigned)__float2int_rd(x);
    o[4] = __float2uint_rn(x) ^ __float2uint_rz(x) ^ __float2uint_ru(x) ^ __float2uint_rd(x);
    o[5] = (unsigned long long)__float2ll_rn(x); o[6] = (unsigned long long)__float2ll_rd(x);
    o[7] = __float2ull_ru(x) + __float2ull_rz(x);
    o[8] = (unsigned)__double2int_rn(y) + (unsigned)__double2int_rz(y);
    o[9] = __double2uint_ru(y) + __double2uint_rd(y);
    o[10] = (unsigned long long)__double2ll_rn(y) ^ __double2ull_rz(y);
    o[11] = (unsigned long long)(long long)x;          /* C casts: cvt.rzi */
    o[12] = (unsigned)(unsigned char)(int)x | ((unsigned)(short)(int)x << 8);
    o[13] = (unsigned long long)(int)y;
    o[14] = (unsigned long long)(unsigned long long)fabs(y);
    unsigned short h;
    asm("cvt.rzi.sat.u16.f32 %0, %1;" : "=h"(h) : "f"(x));      /* saturating narrow */
    o[15] = h;
}
