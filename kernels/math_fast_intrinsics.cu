// fencehound-corpus: approximate f32 intrinsics: __sinf, __cosf, __sincosf, __tanf, __expf, __exp10f, __logf, __log2f, __log10f, __powf, __fdividef, rsqrtf, ex2/lg2/sin/cos.approx
// categories: math, float
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f32[768] zero, a:f32[64] random(35,0.01,8), b:f32[64] random(36,-3,3)
// expect: coverage only (compare with sc golden run with tolerance 1e-3 relative)

extern "C" __global__ void math_fast_intrinsics(float *out, const float *a, const float *b)
{
    unsigned i = threadIdx.x;
    float x = a[i], y = b[i];
    float *o = out + 12 * i;
    float s, c;
    __sincosf(y, &s, &c);
    o[0] = __sinf(y);
    o[1] = __cosf(y);
    o[2] = s * c;
    o[3] = __tanf(y * 0.3f);
    o[4] = __expf(y);
    o[5] = __exp10f(y * 0.5f);
    o[6] = __logf(x);
    o[7] = __log2f(x) + __log10f(x);
    o[8] = __powf(x, y);
    o[9] = __fdividef(y, x);
    o[10] = rsqrtf(x);
    o[11] = exp2f(y) + log2f(x);
}
