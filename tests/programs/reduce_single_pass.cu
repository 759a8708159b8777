// The single-pass reduction of the CUDA samples (threadFenceReduction): each block stores
// its partial sum, __threadfence(), takes a ticket with atomicInc; the block that draws
// the last ticket sums every partial and resets the ticket counter. Per PTX that read races with the other blocks'
// stores: the relaxed atomicInc acquires nothing and __syncthreads() is CTA-scoped, so
// nothing orders the other blocks' partials before the last block's reads.
// -DACQUIRE_FENCE: the fix, __threadfence() after the ticket in the last block.
#include <cstdio>

__device__ unsigned int retirementCount = 0;

template <unsigned BLOCK, bool LAST_SUMS>
__global__ void reduceSinglePass(const float *in, float *partial, unsigned n) {
    __shared__ float s[BLOCK];
    __shared__ bool amLast;
    unsigned t = threadIdx.x, i = blockIdx.x * BLOCK + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned d = BLOCK / 2; d > 0; d /= 2) {
        if (t < d)
            s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = ticket == gridDim.x - 1;
#ifdef ACQUIRE_FENCE
        if (amLast)
            __threadfence();
#endif
    }
    __syncthreads();
    if (LAST_SUMS && amLast) {
        float sum = 0.0f;
        for (unsigned b = t; b < gridDim.x; b += BLOCK)
            sum += partial[b];
        s[t] = sum;
        __syncthreads();
        if (t == 0) {
            for (unsigned k = 1; k < BLOCK; k++)
                sum += s[k];
            partial[gridDim.x] = sum;
            retirementCount = 0;
        }
    }
}

int main() {
    const unsigned n = 1024, blocks = n / 128;
    float h[n], *din, *dpartial, result = 0.0f;
    for (unsigned i = 0; i < n; i++)
        h[i] = float(i % 7);
    cudaMalloc(&din, n * sizeof(float));
    cudaMalloc(&dpartial, (blocks + 1) * sizeof(float));
    cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice);
    bool ok = true;
    for (int rep = 0; rep < 101; rep++) {
        reduceSinglePass<128, true><<<blocks, 128>>>(din, dpartial, n);
        cudaMemcpy(&result, dpartial + blocks, sizeof(float), cudaMemcpyDeviceToHost);
        float want = 0.0f;
        for (unsigned i = 0; i < n; i++)
            want += h[i];
        ok = ok && result == want;
    }
    cudaFree(din);
    cudaFree(dpartial);
    printf("%s %g\n", ok ? "PASS" : "FAIL", result);
    return ok ? 0 : 1;
}
