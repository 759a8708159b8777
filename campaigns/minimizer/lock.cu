// A correctly fenced spin lock: a fence after taking the lock (acquire side) and one before
// releasing it (release side). Under store-buffering models (bugaroo, scoped) loads are
// never delayed, so the acquire-side fence can never be shown necessary: audit must say it
// cannot judge it, not that it is redundant. Under `weak` both are necessary, and without
// LOCK_FENCE minimize puts the fence back on the reader's side, after the lock's CAS.
#ifndef LOCK_FENCE
#define LOCK_FENCE __threadfence()
#endif

__device__ void lock(int *mutex) {
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    LOCK_FENCE;
}

__device__ void unlock(int *mutex) {
    __threadfence();
    atomicExch(mutex, 0);
}

extern "C" __global__ void count(int *mutex, int *total) {
    if (threadIdx.x == 0) {
        lock(mutex);
        *total = *total + 1;
        unlock(mutex);
    }
}
