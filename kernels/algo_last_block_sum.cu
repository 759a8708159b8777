// fencehound-corpus: "threadfence reduction": each block writes its partial sum, __threadfence, takes an atomicInc ticket; the last block sums all partials; -DFENCEHOUND_NO_FENCE removes the fence (bug variant)
// categories: algorithm, atomic, fence, shared, barrier
// nvrtc-flags: none
// launch: grid=8 block=64 dynamic_shared=0
// args: in:u32[512] random(49,0,1000), partial:u32[8] zero, ticket:u32[1] zero, result:u32[1] zero
// expect: result[0] == sum(in); ticket[0] == 0 (atomicInc wraps at gridDim.x-1)

extern "C" __global__ void algo_last_block_sum(const unsigned *in, volatile unsigned *partial,
                                               unsigned *ticket, unsigned *result)
{
    __shared__ unsigned s[64];
    __shared__ bool am_last;
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = 32; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
#ifndef FENCEHOUND_NO_FENCE
        __threadfence();                             /* partial must be visible before the ticket */
#endif
        unsigned my = atomicInc(ticket, gridDim.x - 1);
        am_last = (my == gridDim.x - 1);
    }
    __syncthreads();
    if (am_last) {
        unsigned v = t < gridDim.x ? partial[t] : 0;
        s[t] = v;
        __syncthreads();
        for (unsigned stride = 32; stride > 0; stride >>= 1) {
            if (t < stride) s[t] += s[t + stride];
            __syncthreads();
        }
        if (t == 0) result[0] = s[0];
    }
}
