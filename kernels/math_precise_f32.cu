// fencehound-corpus: precise libdevice f32 math (sinf, cosf, tanf, expf, logf, powf, tanhf, atan2f, erff): long code paths (incl. the Payne-Hanek slow path for huge arguments)
// categories: math, float, local
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:f32[320] zero, a:f32[32] random(37,-1e4,1e4), b:f32[32] random(38,0.001,100)
// expect: coverage only (compare with sc golden run; bitwise identical since the code is exact integer/float ops)

extern "C" __global__ void math_precise_f32(float *out, const float *a, const float *b)
{
    unsigned i = threadIdx.x;
    float x = a[i], y = b[i];
    if (i == 0) x = 1.0e30f;            /* forces the Payne-Hanek slow path (table lookup) */
    float *o = out + 10 * i;
    o[0] = sinf(x);
    o[1] = cosf(x);
    o[2] = tanf(x * 1.0e-3f);
    o[3] = expf(y * 0.5f - 20.0f);
    o[4] = logf(y);
    o[5] = powf(y, x * 1.0e-4f);
    o[6] = tanhf(x * 1.0e-3f);
    o[7] = atan2f(x, y);
    o[8] = erff(x * 1.0e-4f) + cbrtf(x);
    o[9] = sqrtf(y) + hypotf(x, y);
}
