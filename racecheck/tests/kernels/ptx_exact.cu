// PTX-exact synchronization (issue 12): one racy case and one correctly synchronized twin
// per cause. Labels follow the PTX memory model (PTX ISA §8), not what hardware happens
// to do.
// case: pe_cta_flag_other_cta_spins; expect: none; grid: 2; block: 64; args: data:u32[1], flag:u32[1], out:u32[2]
// case: pe_cta_flag_read_by_other_cta; expect: insufficient-scope; grid: 2; block: 64; args: data:u32[1], flag:u32[1], out:u32[2]
// case: pe_unlock_without_fence; expect: lock-misuse; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_store_after_unlock; expect: inter-block; grid: 4; block: 32; args: lock:u32[1], counter:u32[1], last:u32[1]
// case: pe_store_before_unlock; expect: none; grid: 4; block: 32; args: lock:u32[1], counter:u32[1], last:u32[1]
// case: pe_lock_relaxed_cas_no_fence; expect: lock-acquire; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_lock_relaxed_cas_fence; expect: none; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_lock_cas_block_fence_across; expect: lock-acquire; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_lock_cas_block_fence_one_cta; expect: none; grid: 1; block: 128; args: lock:u32[1], counter:u32[1]
// case: pe_lock_acquire_cas; expect: none; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_volatile_no_sync; expect: unordered; grid: 2; block: 32; args: a:u32[1], b:u32[1], out:u32[2]
// case: pe_volatile_fenced; expect: none; grid: 2; block: 32; args: a:u32[1], b:u32[1], out:u32[2]
// case: pe_warp_sync_shared_missing; expect: unordered; grid: 1; block: 32; args: out:u32[32]
// case: pe_warp_sync_shared; expect: none; grid: 1; block: 32; args: out:u32[32]
// case: pe_warp_sync_global_missing; expect: intra-warp; grid: 1; block: 32; args: buf:u32[32], out:u32[32]
// case: pe_warp_sync_global; expect: none; grid: 1; block: 32; args: buf:u32[32], out:u32[32]
// case: pe_lock_block_across_ctas; expect: insufficient-scope; grid: 4; block: 32; args: lock:u32[1], counter:u32[1]
// case: pe_lock_block_one_cta; expect: none; grid: 1; block: 128; args: lock:u32[1], counter:u32[1]

/* Cause 1. CTA 0 publishes `data` with a CTA-scope fence to its own thread 32 through
   `flag`, while CTA 1 spins on the same flag with atomicAdd(flag, 0): CTA 1's RMWs
   continue the release sequence and must not erase CTA 0's CTA-scope publication. */
extern "C" __global__ void pe_cta_flag_other_cta_spins(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t == 0) {
            data[0] = 42;
            __threadfence_block();
            atomicExch(flag, 1u);
        } else if (t == 32) {
            while (*(volatile unsigned *)flag == 0) { }
            __threadfence_block();
            out[0] = data[0];
        }
    } else if (t == 0) {
        while (atomicAdd(flag, 0u) == 0) { }
    }
}

/* Twin: CTA 1 reads `data` after seeing the flag; the CTA-scope fence does not publish
   to it, even with a device-scope fence on its side. */
extern "C" __global__ void pe_cta_flag_read_by_other_cta(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t == 0) {
            data[0] = 42;
            __threadfence_block();
            atomicExch(flag, 1u);
        }
    } else if (t == 0) {
        while (atomicAdd(flag, 0u) == 0) { }
        __threadfence();
        out[1] = data[0];
    }
}

__device__ void lock_fenced(unsigned *l)
{
    while (atomicCAS(l, 0u, 1u) != 0u) { }
    __threadfence();
}

/* Cause 2. Unlock by a bare atomicExch: the critical section's store is not published,
   however many fences the thread executed before (here: the one after locking). */
extern "C" __global__ void pe_unlock_without_fence(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    lock_fenced(lock);
    counter[0] += 1;
    atomicExch(lock, 0u);
}

/* A store after the unlock is outside the critical section: nothing orders it. */
extern "C" __global__ void pe_store_after_unlock(unsigned *lock, unsigned *counter, unsigned *last)
{
    if (threadIdx.x != 0) return;
    lock_fenced(lock);
    counter[0] += 1;
    __threadfence();
    atomicExch(lock, 0u);
    last[0] = blockIdx.x;
}

/* Twin: the same store inside the critical section. */
extern "C" __global__ void pe_store_before_unlock(unsigned *lock, unsigned *counter, unsigned *last)
{
    if (threadIdx.x != 0) return;
    lock_fenced(lock);
    counter[0] += 1;
    last[0] = blockIdx.x;
    __threadfence();
    atomicExch(lock, 0u);
}

/* Cause 3. A lock taken by a relaxed atomicCAS and released properly: without a fence
   after the CAS there is no acquire pattern. */
extern "C" __global__ void pe_lock_relaxed_cas_no_fence(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    counter[0] += 1;
    __threadfence();
    atomicExch(lock, 0u);
}

extern "C" __global__ void pe_lock_relaxed_cas_fence(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence();
    counter[0] += 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* Only __threadfence_block() after the CAS while the lock is shared across CTAs. */
extern "C" __global__ void pe_lock_cas_block_fence_across(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence_block();
    counter[0] += 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* The same inside one CTA (one lock taker per warp): a CTA-scope fence is enough. */
extern "C" __global__ void pe_lock_cas_block_fence_one_cta(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x % 32 != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence_block();
    counter[0] += 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* An acquire CAS (libcu++ style) needs no fence after it. */
extern "C" __global__ void pe_lock_acquire_cas(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    unsigned old;
    do {
        asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], 0, 1;"
                     : "=r"(old) : "l"(lock) : "memory");
    } while (old != 0u);
    counter[0] += 1;
    asm volatile("st.release.gpu.global.u32 [%0], 0;" ::"l"(lock) : "memory");
}

/* Cause 4. Volatile data handed between CTAs with no synchronization at all: PTX calls
   it no data race (volatile is .relaxed.sys), but nothing orders it. */
extern "C" __global__ void pe_volatile_no_sync(unsigned *a, unsigned *b, unsigned *out)
{
    if (threadIdx.x != 0) return;
    volatile unsigned *va = a, *vb = b;
    if (blockIdx.x == 0) {
        *va = 1;
        out[0] = *vb;
    } else {
        *vb = 1;
        out[1] = *va;
    }
}

/* Twin: the same accesses as release/acquire patterns (fences), SB-style. */
extern "C" __global__ void pe_volatile_fenced(unsigned *a, unsigned *b, unsigned *out)
{
    if (threadIdx.x != 0) return;
    volatile unsigned *va = a, *vb = b;
    if (blockIdx.x == 0) {
        __threadfence();
        *va = 1;
        __threadfence();
        out[0] = *vb;
        __threadfence();
    } else {
        __threadfence();
        *vb = 1;
        __threadfence();
        out[1] = *va;
        __threadfence();
    }
}

/* Warp-synchronous reduction in shared memory without __syncwarp(): under independent
   thread scheduling the lanes are not in lockstep. */
extern "C" __global__ void pe_warp_sync_shared_missing(unsigned *out)
{
    __shared__ volatile unsigned s[32];
    unsigned t = threadIdx.x;
    s[t] = t;
    for (unsigned d = 16; d > 0; d >>= 1)
        if (t < d) s[t] += s[t + d];
    out[t] = s[0];
}

extern "C" __global__ void pe_warp_sync_shared(unsigned *out)
{
    __shared__ unsigned s[32];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncwarp();
    for (unsigned d = 16; d > 0; d >>= 1) {
        unsigned v = t < d ? s[t + d] : 0;
        __syncwarp();
        if (t < d) s[t] += v;
        __syncwarp();
    }
    out[t] = s[0];
}

/* The same hand-off through global memory with plain accesses: a data race. */
extern "C" __global__ void pe_warp_sync_global_missing(unsigned *buf, unsigned *out)
{
    unsigned t = threadIdx.x;
    buf[t] = t * 3;
    out[t] = buf[t ^ 1];
}

extern "C" __global__ void pe_warp_sync_global(unsigned *buf, unsigned *out)
{
    unsigned t = threadIdx.x;
    buf[t] = t * 3;
    __syncwarp();
    out[t] = buf[t ^ 1];
}

/* Cause 5. A lock word taken with atomicCAS_block from several CTAs: the block-scope
   atomics are not atomic with respect to each other across CTAs. */
extern "C" __global__ void pe_lock_block_across_ctas(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS_block(lock, 0u, 1u) != 0u) { }
    __threadfence();
    counter[0] += 1;
    __threadfence();
    atomicExch_block(lock, 0u);
}

extern "C" __global__ void pe_lock_block_one_cta(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x % 32 != 0) return;
    while (atomicCAS_block(lock, 0u, 1u) != 0u) { }
    __threadfence_block();
    counter[0] += 1;
    __threadfence_block();
    atomicExch_block(lock, 0u);
}
