// sdk_red: single-pass "threadfence reduction" in the style of the CUDA SDK sample,
// written from its description. Each block reduces its slice of the input in shared
// memory, thread 0 writes the block's partial sum to `partial[blockIdx.x]`, takes a
// ticket with atomicInc, and the block that draws the last ticket sums all partials
// (here with its first warp and shuffles; the SDK sample uses the whole block behind a
// __syncthreads(), which under the flat model drains the buffers right after the ticket
// and hides the missing fence most of the time — see campaigns/README.md).
//
// The fence between the partial-sum store and the ticket (PARTIAL_FENCE) is what makes
// the last block see every other block's partial: without it, a partial may still sit in
// its writer's buffer when the last block reads it. With __threadfence_block() the store
// only becomes visible inside the writing CTA, which is not enough either (the last
// block is another CTA): the `scoped` model exposes that, the flat `bugaroo` model
// cannot.
//
// The last block also needs a fence on the *reader's* side (ACQUIRE_FENCE, after the
// ticket): PTX orders its reads of the partials after the other blocks' stores only if
// the ticket's relaxed atomicInc is followed by a fence (an acquire pattern). The SDK
// sample has no such fence; its hardware never shows the stale read, but PTX allows it,
// and the `weak` model (loads may read older values) does: variant `sdk`.
//
// Every partial and the final sum are computed in a fixed order (shared-memory trees and
// a sequential loop), so the float result is deterministic: `golden` with tolerance 0.
#ifndef PARTIAL_FENCE
#define PARTIAL_FENCE __threadfence()
#endif
#ifndef ACQUIRE_FENCE
#define ACQUIRE_FENCE __threadfence()
#endif
#define THREADS 128

__device__ unsigned int retirement_count = 0;

__device__ float block_sum(float v, float *cache) {
    cache[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    return cache[0];
}

extern "C" __global__ void reduce(const float *in, float *partial, float *result, unsigned n) {
    __shared__ float cache[THREADS];

    float v = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    float sum = block_sum(v, cache);

    // From here on only the first warp works: the partials fit in one warp (gridDim.x <=
    // 32), so the last block's final pass needs no __syncthreads(), and "am I last?" is
    // broadcast with a warp shuffle.
    if (threadIdx.x >= 32)
        return;
    unsigned ticket = 0;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
        PARTIAL_FENCE;
        ticket = atomicInc(&retirement_count, gridDim.x);
        if (ticket == gridDim.x - 1)
            ACQUIRE_FENCE; // only the reader (the last block) needs it
    }
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    if (ticket != gridDim.x - 1)
        return;
    // Lane 0's atomicInc observed every other block's ticket; __syncwarp() passes that on
    // to the other lanes before they read the partials (a shuffle orders no memory).
    __syncwarp();

    // The last block: sum the partials (volatile: they were written by other CTAs) in a
    // fixed order, lane i holding partial i, then a shuffle tree.
    // Our own partial comes from lane 0 by shuffle, not through memory: lane 0's store and
    // another lane's load would be an intra-warp race (a shuffle orders no memory).
    float own = __shfl_sync(0xffffffffu, sum, 0);
    float t = threadIdx.x >= gridDim.x ? 0.0f
            : threadIdx.x == blockIdx.x ? own
            : ((volatile float *)partial)[threadIdx.x];
    for (int d = 16; d > 0; d >>= 1)
        t += __shfl_down_sync(0xffffffffu, t, d);
    if (threadIdx.x == 0) {
        result[0] = t;
        retirement_count = 0; // ready for the next launch
    }
}
