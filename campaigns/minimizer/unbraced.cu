// The store that needs a fence is the body of an unbraced `if` with an `else`: a fence
// line inserted after it would leave the `if` (and orphan the `else`); the patch must add
// braces. Thread 0 of every CTA publishes its CTA's sum and takes a ticket; the last CTA
// to take one adds up the partial sums.
extern "C" __global__ void last(const int *in, int *partial, int *count, int *total, int *scratch) {
    __shared__ bool is_last;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int sum = __reduce_add_sync(0xffffffffu, v);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = sum;
    else
        scratch[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    if (threadIdx.x == 0)
        is_last = atomicAdd(count, 1) == gridDim.x - 1;
    __syncthreads();
    if (is_last && threadIdx.x == 0) {
        __threadfence();
        int t = 0;
        for (int b = 0; b < gridDim.x; b++)
            t += ((volatile int *)partial)[b];
        *total = t;
    }
}
