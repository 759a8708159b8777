// cbe_dot: the dot product of "CUDA by Example" (ch. A.1), written from its description:
// every block reduces its share in shared memory, then ONE thread per block takes a
// global spin lock (atomicCAS), adds the block's partial sum to the result and unlocks
// (atomicExch). The lock protects a plain read-modify-write of `*c`, so the critical
// section's store must be visible before the lock is released.
//
// Inputs are small integers (stored as int, multiplied as float), so every partial sum is
// an exactly representable integer and the result does not depend on the order in which
// blocks take the lock: a `golden` oracle with tolerance 0 works.
//
// Fences (each is a macro so that a campaign variant can remove it):
//   LOCK_FENCE    after the lock is taken: with the relaxed CAS, PTX's acquire pattern;
//                 without it *c may be read stale (only the `weak` model shows that)
//   UNLOCK_FENCE  before the lock is released: publishes `*c` before the next holder
//                 reads it. Without it, the next block reads a stale `*c` (lost update).
#ifndef LOCK_FENCE
#define LOCK_FENCE __threadfence()
#endif
#ifndef UNLOCK_FENCE
#define UNLOCK_FENCE __threadfence()
#endif
#define THREADS 64

__device__ void lock(int *mutex) {
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    LOCK_FENCE;
}

__device__ void unlock(int *mutex) {
    UNLOCK_FENCE;
    atomicExch(mutex, 0);
}

extern "C" __global__ void dot(const int *a, const int *b, float *c, int *mutex, int n) {
    __shared__ float cache[THREADS];
    float temp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        temp += (float)a[i] * (float)b[i];
    cache[threadIdx.x] = temp;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        lock(mutex);
        *c += cache[0];
        unlock(mutex);
    }
}
