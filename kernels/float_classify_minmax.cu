// fencehound-corpus: f32 fminf/fmaxf with NaN and signed zeros, fabsf, copysignf, isnan/isinf/isfinite/signbit, comparisons incl. unordered
// categories: float
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u32[256] zero, a:f32[32] special, b:f32[32] random(24,-2,2)
// expect: coverage only; a[] = {NaN, -NaN, +inf, -inf, +0, -0, 1e-40 (denormal), -1e-40, FLT_MAX, -FLT_MIN, then random}

extern "C" __global__ void float_classify_minmax(unsigned *out, const float *a, const float *b)
{
    unsigned i = threadIdx.x;
    float x = a[i], y = b[i];
    unsigned *o = out + 8 * i;
    o[0] = __float_as_uint(fminf(x, y));
    o[1] = __float_as_uint(fmaxf(x, y));
    o[2] = __float_as_uint(fabsf(x)) ^ __float_as_uint(-y);
    o[3] = __float_as_uint(copysignf(y, x));
    o[4] = (isnan(x) ? 1u : 0u) | (isinf(x) ? 2u : 0u) | (isfinite(x) ? 4u : 0u) | (signbit(x) ? 8u : 0u);
    o[5] = (x < y) | ((x <= y) << 1) | ((x == y) << 2) | ((x != y) << 3) | ((!(x >= y)) << 4) | ((x > y) << 5);
    o[6] = __float_as_uint(x > y ? x : y);          /* selp / setp.gt.f32 */
    o[7] = __float_as_uint(fmaxf(fminf(x, 1.0f), -1.0f)) + __float_as_uint(fdimf(x, y));
}
