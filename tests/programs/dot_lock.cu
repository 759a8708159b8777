// The dot product of "CUDA by Example" (appendix A.1), written from its description, as a
// whole program: every block reduces its share in shared memory, then one thread per
// block takes a global spin lock (atomicCAS), adds the block's partial sum to the result
// and unlocks (atomicExch). The host checks the result and prints PASS or FAIL.
//
// UNLOCK_FENCE publishes the critical section's store to *c before the lock is released;
// building with -DUNLOCK_FENCE= removes it, and then the next lock holder can read a stale
// *c (a lost update) when stores are delayed. LOCK_FENCE, after the lock is taken, keeps
// the holder's read of *c from being satisfied by an older value (needed under the PTX
// memory model, which the `weak` model checks; store buffering alone never delays loads). Inputs are small integers, so every partial
// sum is exact and the correct result does not depend on the order blocks take the lock.
// EXTRA_FENCE adds a fence the barrier after it makes unneeded (for `audit`).
#include <cstdio>

#ifndef LOCK_FENCE
#define LOCK_FENCE __threadfence()
#endif
#ifndef UNLOCK_FENCE
#define UNLOCK_FENCE __threadfence()
#endif

#define N 2048
#define THREADS 64
#define BLOCKS 8

struct Lock {
    int *mutex;
    __device__ void lock() {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        LOCK_FENCE;
    }
    __device__ void unlock() {
        UNLOCK_FENCE;
        atomicExch(mutex, 0);
    }
};

__global__ void dot(Lock lock, const float *a, const float *b, float *c) {
    __shared__ float cache[THREADS];
    float temp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
        temp += a[i] * b[i];
    cache[threadIdx.x] = temp;
#ifdef EXTRA_FENCE
    __threadfence();
#endif
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        lock.lock();
        *c += cache[0];
        lock.unlock();
    }
}

int main() {
    static float a[N], b[N];
    double expected = 0;
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i % 7 + 1);
        b[i] = (float)(i % 5 + 1);
        expected += (double)a[i] * b[i];
    }
    float *da, *db, *dc;
    Lock lock;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dc, sizeof(float));
    cudaMalloc(&lock.mutex, sizeof(int));
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemset(dc, 0, sizeof(float));
    cudaMemset(lock.mutex, 0, sizeof(int));
    dot<<<BLOCKS, THREADS>>>(lock, da, db, dc);
    float c = 0;
    cudaError_t err = cudaMemcpy(&c, dc, sizeof c, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        printf("CUDA error: %s\n", cudaGetErrorString(err));
        return 2;
    }
    if (c != (float)expected) {
        printf("FAIL: dot = %.1f, expected %.1f\n", c, expected);
        return 1;
    }
    printf("PASS: dot = %.1f\n", c);
    return 0;
}
