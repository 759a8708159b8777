// ScoR-style scoped cases: .cta-scoped fences, atomics and release/acquire across CTAs.
// case: sc_fence_block_flag; expect: insufficient-scope:RAW; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: sc_fence_block_same_cta; expect: none; grid: 1; block: 64; args: data:u32[1], flag:u32[1], out:u32[1]
// case: sc_atomic_block_shared_counter; expect: insufficient-scope; grid: 4; block: 32; args: counter:u32[1]
// case: sc_atomic_block_per_block_counter; expect: none; grid: 4; block: 32; args: counter:u32[4]
// case: sc_release_cta_across; expect: insufficient-scope; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: sc_release_cta_same_cta; expect: none; grid: 1; block: 64; args: data:u32[1], flag:u32[1], out:u32[1]
// case: sc_atomic_block_flag_across; expect: insufficient-scope; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: sc_atomic_gpu_flag_across; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]

/* Producer in CTA 0 uses __threadfence_block(); the consumer is in CTA 1. */
extern "C" __global__ void sc_fence_block_flag(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence_block();
        *(volatile unsigned *)flag = 1;
    } else {
        while (*(volatile unsigned *)flag == 0) { }
        __threadfence();
        out[0] = data[0];
    }
}

/* The same with producer and consumer in one CTA (different warps): block scope suffices. */
extern "C" __global__ void sc_fence_block_same_cta(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x == 0) {
        data[0] = 42;
        __threadfence_block();
        *(volatile unsigned *)flag = 1;
    } else if (threadIdx.x == 32) {
        while (*(volatile unsigned *)flag == 0) { }
        __threadfence_block();
        out[0] = data[0];
    }
}

extern "C" __global__ void sc_atomic_block_shared_counter(unsigned *counter)
{
    if (threadIdx.x == 0) atomicAdd_block(counter, 1u);
}

extern "C" __global__ void sc_atomic_block_per_block_counter(unsigned *counter)
{
    atomicAdd_block(&counter[blockIdx.x], 1u);
}

__device__ void st_release_cta(unsigned *p, unsigned v)
{
    asm volatile("st.release.cta.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ unsigned ld_acquire_gpu(unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ unsigned ld_acquire_cta(unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

extern "C" __global__ void sc_release_cta_across(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        st_release_cta(flag, 1);
    } else {
        while (ld_acquire_gpu(flag) == 0) { }
        out[0] = data[0];
    }
}

extern "C" __global__ void sc_release_cta_same_cta(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x == 0) {
        data[0] = 42;
        st_release_cta(flag, 1);
    } else if (threadIdx.x == 32) {
        while (ld_acquire_cta(flag) == 0) { }
        out[0] = data[0];
    }
}

/* A flag raised with atomicExch_block and polled with a device-scope atomic. */
extern "C" __global__ void sc_atomic_block_flag_across(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicExch_block(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0) { }
        __threadfence();
        out[0] = data[0];
    }
}

extern "C" __global__ void sc_atomic_gpu_flag_across(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicExch(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0) { }
        __threadfence();
        out[0] = data[0];
    }
}
