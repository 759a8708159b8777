// fencehound-corpus: dynamic shared memory (extern __shared__, sized at launch) alongside static shared arrays of several types; reverse through shared; generic pointers into shared (cvta, isspacep)
// categories: dyn-shared, shared, barrier, call
// nvrtc-flags: none
// launch: grid=2 block=128 dynamic_shared=1024
// args: in:f32[256] iota, out:f32[256] zero, flags:u32[256] zero
// expect: out[b*128 + t] == in[b*128 + 127 - t] * 2 + 1; flags[b*128+t] == (t odd ? 3 : 0) (odd threads classify a pointer into dynamic shared: shared=1 | not-global=2; even threads a global pointer: 0)

extern __shared__ float dyn[];                           /* 256 floats = 1024 bytes */

__device__ __noinline__ unsigned classify(const void *p)
{
    return (__isShared(p) ? 1u : 0u) | (__isGlobal(p) ? 0u : 2u);
}

extern "C" __global__ void shared_dynamic_static(const float *in, float *out, unsigned *flags)
{
    __shared__ float s_rev[128];
    __shared__ unsigned short s_small[128];
    __shared__ double s_d[4];
    unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    dyn[t] = in[g];
    dyn[128 + t] = 1.0f;
    s_small[t] = (unsigned short)t;
    if (t < 4) s_d[t] = (double)t;
    __syncthreads();
    s_rev[t] = dyn[127 - s_small[t]] * 2.0f;
    __syncthreads();
    out[g] = s_rev[t] + dyn[128 + ((t + 1) & 127)] + (float)(s_d[t & 3] * 0.0);
    const void *p = (t & 1) ? (const void *)&dyn[t] : (const void *)&in[g];   /* data-dependent space */
    flags[g] = classify(p);
}
