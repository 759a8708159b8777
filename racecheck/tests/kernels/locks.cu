// Lock misuse: per-thread locks (iGUARD), lock without fences, unprotected access.
// case: lk_one_lock; expect: none; grid: 4; block: 32; args: locks:u32[4], counter:u32[1]
// case: lk_per_block_locks; expect: lock-misuse; grid: 4; block: 32; args: locks:u32[4], counter:u32[1]
// case: lk_no_fences; expect: lock-misuse; grid: 4; block: 32; args: locks:u32[4], counter:u32[1]
// case: lk_unprotected; expect: lock-misuse; grid: 4; block: 32; args: locks:u32[4], counter:u32[1]
// case: lk_lock_in_shared; expect: none; grid: 1; block: 128; args: counter:u32[1]
// case: lk_plain_release; expect: lock-misuse; grid: 4; block: 32; args: locks:u32[4], counter:u32[1]

__device__ void lock(unsigned *l, bool fence)
{
    while (atomicCAS(l, 0u, 1u) != 0u) { __nanosleep(16); }
    if (fence) __threadfence();
}
__device__ void unlock(unsigned *l, bool fence)
{
    if (fence) __threadfence();
    atomicExch(l, 0u);
}

extern "C" __global__ void lk_one_lock(unsigned *locks, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    lock(&locks[0], true);
    counter[0] += 1;
    unlock(&locks[0], true);
}

/* Each CTA takes its own lock: the critical sections exclude nothing (iGUARD). */
extern "C" __global__ void lk_per_block_locks(unsigned *locks, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    lock(&locks[blockIdx.x], true);
    counter[0] += 1;
    unlock(&locks[blockIdx.x], true);
}

extern "C" __global__ void lk_no_fences(unsigned *locks, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    lock(&locks[0], false);
    counter[0] += 1;
    unlock(&locks[0], false);
}

extern "C" __global__ void lk_unprotected(unsigned *locks, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        counter[0] += 1;
    } else {
        lock(&locks[0], true);
        counter[0] += 1;
        unlock(&locks[0], true);
    }
}

/* Fenced on both sides, but released with a plain store: the store races with the other
   CTAs' atomicCAS on the lock word (and is no release pattern). Under `weak` the spinning
   CASes may read the stale "held" until the liveness rule makes the store visible. */
extern "C" __global__ void lk_plain_release(unsigned *locks, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    lock(&locks[0], true);
    counter[0] += 1;
    __threadfence();
    locks[0] = 0u;
}

/* One leader per warp takes a shared-memory lock with block-scope fences. */
extern "C" __global__ void lk_lock_in_shared(unsigned *counter)
{
    __shared__ unsigned l;
    __shared__ unsigned c;
    if (threadIdx.x == 0) { l = 0; c = 0; }
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS(&l, 0u, 1u) != 0u) { }
        __threadfence_block();
        c += 1;
        __threadfence_block();
        atomicExch(&l, 0u);
    }
    __syncthreads();
    if (threadIdx.x == 0) counter[0] = c;
}
