// fencehound-corpus: 64-bin histogram with per-block shared-memory privatization (shared atomics), merged into the global histogram with global atomics; grid-stride input loop
// categories: algorithm, atomic, shared, barrier
// nvrtc-flags: none
// launch: grid=4 block=128 dynamic_shared=0
// args: in:u8[4096] random(48), hist:u32[64] zero, n:u32=4096
// expect: hist[k] == count of i with in[i] % 64 == k; sum(hist) == 4096

#define BINS 64

extern "C" __global__ void algo_histogram(const unsigned char *in, unsigned *hist, unsigned n)
{
    __shared__ unsigned local_hist[BINS];
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x) local_hist[b] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local_hist[in[i] % BINS], 1u);
    __syncthreads();
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local_hist[b]) atomicAdd(&hist[b], local_hist[b]);
}
