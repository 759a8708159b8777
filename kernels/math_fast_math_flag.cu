// fencehound-corpus: ordinary math compiled with -use_fast_math: sinf/expf/logf/powf/tanhf map to approx intrinsics, ftz and approximate division/sqrt
// categories: math, float
// nvrtc-flags: -use_fast_math
// launch: grid=1 block=64 dynamic_shared=0
// args: out:f32[512] zero, a:f32[64] random(41,0.01,4), b:f32[64] random(42,-2,2)
// expect: coverage only (compare with sc golden run with tolerance 1e-3 relative)

extern "C" __global__ void math_fast_math_flag(float *out, const float *a, const float *b)
{
    unsigned i = threadIdx.x;
    float x = a[i], y = b[i];
    float *o = out + 8 * i;
    o[0] = sinf(y) + cosf(y);
    o[1] = expf(y);
    o[2] = logf(x);
    o[3] = powf(x, y);
    o[4] = tanhf(y);                    /* tanh.approx.f32 on sm_75+ */
    o[5] = y / x;                       /* div.approx.ftz */
    o[6] = sqrtf(x) + 1.0f / x;         /* sqrt.approx.ftz, rcp.approx.ftz */
    o[7] = x * y + 1.0e-39f;            /* ftz */
}
