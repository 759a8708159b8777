// Inter-block races: device-scope synchronization between CTAs is missing.
// case: xb_flag_no_fence; expect: inter-block; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: xb_flag_fence; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: xb_grid_barrier_no_fence; expect: inter-block; grid: 4; block: 32; args: data:u32[128], count:u32[1], out:u32[128]
// case: xb_grid_barrier_arrive_fence_only; expect: inter-block; grid: 4; block: 32; args: data:u32[128], count:u32[1], out:u32[128]
// case: xb_grid_barrier_leader_fences; expect: none; grid: 4; block: 32; args: data:u32[128], count:u32[1], out:u32[128]
// case: xb_last_block_no_fence; expect: inter-block; grid: 4; block: 32; args: partial:u32[4], ticket:u32[1], out:u32[4]
// case: xb_last_block_fence; expect: inter-block; grid: 4; block: 32; args: partial:u32[4], ticket:u32[1], out:u32[4]
// case: xb_last_block_both_fences; expect: none; grid: 4; block: 32; args: partial:u32[4], ticket:u32[1], out:u32[4]
// case: xb_release_acquire; expect: none; grid: 2; block: 32; args: data:u32[32], flag:u32[1], out:u32[32]
// case: xb_relaxed_flag; expect: inter-block:RAW; grid: 2; block: 32; args: data:u32[32], flag:u32[1], out:u32[32]
// case: xb_status_payload_word; expect: none; grid: 4; block: 32; args: status:u64[4], out:u32[4]
// case: xb_status_payload_wide; expect: none; grid: 2; block: 32; args: status:u64[2], sink:u32[1], out:u32[1]
// case: xb_status_separate_payload; expect: inter-block:RAW; grid: 4; block: 32; args: status:u32[4], value:u32[4], out:u32[4]
// case: xb_volatile_sum_in_loop; expect: unordered:RAW; grid: 2; block: 32; args: v:u32[1], out:u32[1]
// case: xb_acquire_reads_old_release; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], go:u32[1], out:u32[32]
// case: xb_relaxed_reads_old_write; expect: inter-block:RAW; grid: 2; block: 32; args: data:u32[1], flag:u32[1], go:u32[1], out:u32[32]
// case: xb_atomic_counter; expect: none; grid: 4; block: 32; args: counter:u32[1]
// case: xb_atomic_vs_plain_read; expect: inter-block; grid: 4; block: 32; args: counter:u32[1], out:u32[4]

extern "C" __global__ void xb_flag_no_fence(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        *(volatile unsigned *)flag = 1;
    } else {
        while (*(volatile unsigned *)flag == 0) { }
        out[0] = data[0];
    }
}

extern "C" __global__ void xb_flag_fence(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *(volatile unsigned *)flag = 1;
    } else {
        while (*(volatile unsigned *)flag == 0) { }
        __threadfence();
        out[0] = data[0];
    }
}

#define GRID_BARRIER(FENCE_BEFORE, FENCE_AFTER)                              \
    __syncthreads();                                                         \
    if (threadIdx.x == 0) {                                                  \
        if (FENCE_BEFORE) __threadfence();                                   \
        atomicAdd(count, 1u);                                                \
        while (*(volatile unsigned *)count < gridDim.x) { }                  \
        if (FENCE_AFTER) __threadfence();                                    \
    }                                                                        \
    __syncthreads();

extern "C" __global__ void xb_grid_barrier_no_fence(unsigned *data, unsigned *count, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    data[g] = g;
    GRID_BARRIER(0, 0)
    out[g] = data[(g + blockDim.x) % n];
}

/* The iGUARD shape: only the arriving side fences; nothing acquires after the wait. */
extern "C" __global__ void xb_grid_barrier_arrive_fence_only(unsigned *data, unsigned *count, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    data[g] = g;
    GRID_BARRIER(1, 0)
    /* Both neighbours: the first CTA to arrive learned nothing from either. */
    out[g] = data[(g + blockDim.x) % n] + data[(g + n - blockDim.x) % n];
}

/* Correct: the leader fences before arriving and after the wait; barriers spread it. */
extern "C" __global__ void xb_grid_barrier_leader_fences(unsigned *data, unsigned *count, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    data[g] = g;
    GRID_BARRIER(1, 1)
    out[g] = data[(g + blockDim.x) % n];
}

/* The last block (the one drawing the last ticket) reads every partial. FENCE publishes
   the partial before the ticket; ACQUIRE makes the relaxed atomicInc an acquire pattern
   (PTX: a relaxed RMW alone acquires nothing, so FENCE alone is a race). */
#define LAST_BLOCK2(FENCE, ACQUIRE)                                          \
    __shared__ bool am_last;                                                 \
    unsigned t = threadIdx.x;                                                \
    if (t == 0) {                                                            \
        partial[blockIdx.x] = blockIdx.x + 1;                                \
        if (FENCE) __threadfence();                                          \
        am_last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;         \
        if (ACQUIRE && am_last) __threadfence();                             \
    }                                                                        \
    __syncthreads();                                                         \
    if (am_last && t < gridDim.x) out[t] = ((volatile unsigned *)partial)[t];
#define LAST_BLOCK(FENCE) LAST_BLOCK2(FENCE, 0)

extern "C" __global__ void xb_last_block_no_fence(unsigned *partial, unsigned *ticket, unsigned *out)
{
    LAST_BLOCK(0)
}

extern "C" __global__ void xb_last_block_fence(unsigned *partial, unsigned *ticket, unsigned *out)
{
    LAST_BLOCK(1)
}

extern "C" __global__ void xb_last_block_both_fences(unsigned *partial, unsigned *ticket, unsigned *out)
{
    LAST_BLOCK2(1, 1)
}

__device__ void st_release_gpu(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ unsigned ld_acquire_gpu(unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ void st_relaxed_gpu(unsigned *p, unsigned v)
{
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ unsigned ld_relaxed_gpu(unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

extern "C" __global__ void xb_release_acquire(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        data[t] = t + 7;
        __syncthreads();
        if (t == 0) st_release_gpu(flag, 1);
    } else {
        if (t == 0) while (ld_acquire_gpu(flag) == 0) { }
        __syncthreads();
        out[t] = data[t];
    }
}

/* Relaxed flag: the flag itself is fine (strong), the data is not ordered. */
extern "C" __global__ void xb_relaxed_flag(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        data[t] = t + 7;
        __syncthreads();
        if (t == 0) st_relaxed_gpu(flag, 1);
    } else {
        if (t == 0) while (ld_relaxed_gpu(flag) == 0) { }
        __syncthreads();
        out[t] = data[t];
    }
}

extern "C" __global__ void xb_atomic_counter(unsigned *counter)
{
    atomicAdd(counter, 1u);
}

extern "C" __global__ void xb_atomic_vs_plain_read(unsigned *counter, unsigned *out)
{
    if (threadIdx.x != 0) return;
    atomicAdd(counter, 1u);
    out[blockIdx.x] = *counter;
}

/* A status word that carries its own payload (CUB's single-word tile descriptors in the
   decoupled look-back): each CTA publishes (status, value) in one relaxed 64-bit store,
   with no fence, and its successor polls the word until the status is set. The polls
   and the store are unordered by happens-before, but nothing else is published: a poll
   that reads the old word just goes round again. No report. */
__device__ void st_relaxed_gpu_u64(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ unsigned long long ld_relaxed_gpu_u64(unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

extern "C" __global__ void xb_status_payload_word(unsigned long long *status, unsigned *out)
{
    if (threadIdx.x != 0) return;
    unsigned b = blockIdx.x;
    unsigned prefix = 0;
    if (b > 0) {
        unsigned long long w;
        do {
            w = ld_relaxed_gpu_u64(&status[b - 1]);
        } while ((w >> 32) == 0);
        prefix = (unsigned)w;
    }
    st_relaxed_gpu_u64(&status[b], (1ull << 32) | (prefix + b + 1));
    out[b] = prefix;
}

/* The same with a 16-byte descriptor (CUB's for 8-byte values): one relaxed
   `st.v2.u64` of (status, value) that the vgpu performs as two indivisible elements. The
   status half is not a "later write" than the value half: no report. */
__device__ void st_relaxed_gpu_v2(unsigned long long *p, unsigned long long s, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(s), "l"(v) : "memory");
}
__device__ void ld_relaxed_gpu_v2(unsigned long long *p, unsigned long long *s, unsigned long long *v)
{
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(*s), "=l"(*v) : "l"(p) : "memory");
}

extern "C" __global__ void xb_status_payload_wide(unsigned long long *status, unsigned *sink,
                                                 unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        /* A partial descriptor, then (after a while) the inclusive one, with no fence:
           CUB's SetPartial / SetInclusive of one tile. */
        st_relaxed_gpu_v2(status, 1, 10);
        unsigned x = 0;
        for (unsigned i = 0; i < 64; ++i) x += i * i;
        sink[0] = x;
        st_relaxed_gpu_v2(status, 2, 20);
    } else {
        /* The look-back's wait: it reads the partial descriptor again and again. */
        unsigned long long s, v;
        do {
            ld_relaxed_gpu_v2(status, &s, &v);
        } while (s != 2);
        out[0] = (unsigned)v;
    }
}

/* The same hand-off with the value in a separate plain word and no fences: the value's
   store and its read after the polls are a data race (the polls themselves are not
   reported: the race is the value's). */
extern "C" __global__ void xb_status_separate_payload(unsigned *status, unsigned *value, unsigned *out)
{
    if (threadIdx.x != 0) return;
    unsigned b = blockIdx.x;
    unsigned prefix = 0;
    if (b > 0) {
        while (ld_relaxed_gpu(&status[b - 1]) == 0) { }
        prefix = value[b - 1];
    }
    value[b] = prefix + b + 1;
    st_relaxed_gpu(&status[b], 1);
    out[b] = prefix;
}

/* A volatile read in a loop whose value is only data (summed, never tested): not a poll,
   so the unordered pair with the other CTA's volatile store is reported. */
extern "C" __global__ void xb_volatile_sum_in_loop(unsigned *v, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *(volatile unsigned *)v = 5;
    } else {
        unsigned acc = 0;
        for (unsigned i = 0; i < 4; ++i) acc += *(volatile unsigned *)v;
        out[0] = acc;
    }
}

/* Block 0 publishes data with a release store of flag = 1, then stores 2..5 to flag (each
   part of a release pattern: PTX's "release operation followed by a strong write") and
   only then raises go. Block 1's lanes wait for go, read flag with an acquire and copy
   data when flag is set. Under `weak` a lane's acquire may read any of the five stores
   (nothing orders go before flag for it), the release five stores back included: the
   race check must still find that store among the flag's remembered writes (its window
   is at least as long as what a weak load can reach), or it reports the copy as a race. */
#define OLD_RELEASE(ST_FIRST, LD_FLAG)                                        \
    unsigned t = threadIdx.x;                                                 \
    if (blockIdx.x == 0) {                                                    \
        if (t == 0) {                                                         \
            data[0] = 42;                                                     \
            ST_FIRST(flag, 1);                                                \
            for (unsigned v = 2; v <= 5; v++) st_relaxed_gpu(flag, v);        \
            st_relaxed_gpu(go, 1);                                            \
        }                                                                     \
    } else {                                                                  \
        while (ld_relaxed_gpu(go) == 0) { }                                   \
        ((volatile unsigned *)out)[t] = 1; /* ends the vgpu's liveness mode */ \
        out[t] = LD_FLAG(flag) != 0 ? data[0] : 0;                            \
    }

extern "C" __global__ void xb_acquire_reads_old_release(unsigned *data, unsigned *flag, unsigned *go, unsigned *out)
{
    OLD_RELEASE(st_release_gpu, ld_acquire_gpu)
}

/* Its racy twin: nothing releases data (every flag store relaxed), so the copy races. */
extern "C" __global__ void xb_relaxed_reads_old_write(unsigned *data, unsigned *flag, unsigned *go, unsigned *out)
{
    OLD_RELEASE(st_relaxed_gpu, ld_acquire_gpu)
}
