// fencehound-corpus: warp-shuffle reduction of floats (shfl.down), per-warp partials in shared memory, final warp reduces them; block result added to the output with atomicAdd
// categories: algorithm, warp, shared, atomic, barrier
// nvrtc-flags: none
// launch: grid=4 block=256 dynamic_shared=0
// args: in:f32[1024] iota, out:f32[1] zero, n:u32=1024
// expect: out[0] == sum(in) == 523776 (exact: all partial sums are integers < 2^24)

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void algo_reduce_warp(const float *in, float *out, unsigned n)
{
    __shared__ float warp_part[32];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned nwarps = blockDim.x >> 5;
        float w = lane < nwarps ? warp_part[lane] : 0.0f;
        w = warp_sum(w);
        if (lane == 0) atomicAdd(out, w);
    }
}
