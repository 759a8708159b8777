// fencehound-corpus: shared-memory tree reduction (sequential addressing), one partial sum per block, then block 0's thread 0 does not combine (host sums partials)
// categories: algorithm, shared, barrier
// nvrtc-flags: none
// launch: grid=4 block=128 dynamic_shared=0
// args: in:u32[1024] random(44,0,1000), partial:u32[4] zero, n:u32=1024
// expect: sum(partial) == sum(in); partial[b] == sum(in[b*256 .. b*256+255]) (each thread loads two elements)

#define BLOCK 128

extern "C" __global__ void algo_reduce_shared(const unsigned *in, unsigned *partial, unsigned n)
{
    __shared__ unsigned s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned base = blockIdx.x * (2 * BLOCK);
    unsigned a = base + t < n ? in[base + t] : 0;
    unsigned b = base + t + BLOCK < n ? in[base + t + BLOCK] : 0;
    s[t] = a + b;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
