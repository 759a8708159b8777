// fencehound-corpus: f64 arithmetic with explicit rounding (__dadd_rz, __dmul_ru, __fma_rd, __ddiv_rn, __drcp_rn, __dsqrt_rn), fmin/fmax/fabs/copysign on double
// categories: double
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:f64[512] zero, a:f64[32] random(25,-1e6,1e6), b:f64[32] random(26,-1,1)
// expect: coverage only (compare bitwise with sc golden run)

extern "C" __global__ void double_rounding_modes(double *out, const double *a, const double *b)
{
    unsigned i = threadIdx.x;
    double x = a[i], y = b[i];
    if (i == 0) { x = 4.9e-324; y = -0.0; }
    double *o = out + 16 * i;
    o[0] = __dadd_rn(x, y); o[1] = __dadd_rz(x, y); o[2] = __dadd_ru(x, y); o[3] = __dadd_rd(x, y);
    o[4] = __dsub_rz(x, y); o[5] = __dmul_ru(x, y); o[6] = __dmul_rd(x, y);
    o[7] = __fma_rn(x, y, 1.0) + __fma_rz(y, y, x) - __fma_rd(x, x, y);
    o[8] = __ddiv_rn(x, y) + __ddiv_ru(y, x);
    o[9] = __drcp_rn(x) + __drcp_rz(y);
    o[10] = __dsqrt_rn(fabs(x)) + __dsqrt_rd(fabs(y));
    o[11] = fmin(x, y) * fmax(x, y);
    o[12] = copysign(x, y);
    o[13] = x / y;
    o[14] = (double)(isnan(x / y) + 2 * isinf(x / y) + 4 * signbit(y));
    o[15] = __longlong_as_double(__double_as_longlong(x) ^ (long long)__double2hiint(y));
}
