// Two message passings in opposite directions between two CTAs, each with its flag in one
// 8-byte block (flag[0], flag[1]) and its data in another (data[0], data[1]):
//   CTA 0 thread 0:  data[0] = 44; __threadfence(); atomicExch(&flag[0], 1)
//   CTA 1 thread 0:  spin on atomicAdd(&flag[0], 0); __threadfence(); read data[0]
//   CTA 1 thread 32: data[1] = 55; atomic_ref(flag[1]).store(1, release)
//   CTA 0 thread 32: spin on atomic_ref(flag[1]).load(acquire); read data[1]
// Every pair is synchronized (PTX: release/acquire patterns at .gpu scope), so both reads
// see the data. The `weak` model keeps a bounded history per 8-byte block: the spinning
// RMWs on flag[0] pushed the release store to flag[1] out of it, and the acquire that
// then read flag[1] took no message — data[1] read stale (fixed: a location's newest
// entry is kept). Built with -DRELAXED the flag[1] pair is relaxed: a real bug, which
// the default model exposes.
#include <cuda/atomic>
#include <cstdio>

__device__ int data[2], flag[2];

__global__ void two_way(int *out) {
    int t = threadIdx.x;
    if (blockIdx.x == 0) __syncthreads();
    if (blockIdx.x == 0 && t == 0) {
        data[0] = 44;
        __threadfence();
        atomicExch(&flag[0], 1);
    }
    if (blockIdx.x == 1 && t == 0) {
        while (atomicAdd(&flag[0], 0) == 0) {
        }
        __threadfence();
        out[0] = data[0];
    }
#ifdef RELAXED
    const auto rel = cuda::memory_order_relaxed, acq = cuda::memory_order_relaxed;
#else
    const auto rel = cuda::memory_order_release, acq = cuda::memory_order_acquire;
#endif
    cuda::atomic_ref<int, cuda::thread_scope_device> f1(flag[1]);
    if (blockIdx.x == 1 && t == 32) {
        data[1] = 55;
        f1.store(1, rel);
    }
    if (blockIdx.x == 0 && t == 32) {
        while (f1.load(acq) == 0) {
        }
        out[1] = data[1];
    }
}

int main() {
    int *d;
    cudaMalloc(&d, 2 * sizeof(int));
    cudaMemset(d, 0, 2 * sizeof(int));
    two_way<<<2, 128>>>(d);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("CUDA error\n");
        return 2;
    }
    int h[2];
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    if (h[0] != 44 || h[1] != 55) {
        printf("MISMATCH: data read %d and %d, want 44 and 55\n", h[0], h[1]);
        return 1;
    }
    printf("OK: both message passings delivered their data\n");
    return 0;
}
