// fencehound-corpus: memory-operation semantics via inline PTX: st.release/ld.acquire (gpu, cta, sys), ld/st.relaxed, ld/st.volatile, ld.acquire.shared; C volatile pointers; message passing with release/acquire
// categories: fence, shared, barrier, warp
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: data:u32[64] zero, flag:u32[2] zero, out:u32[128] zero
// expect: out[i] == 3*i + 7 for i in 0..63 (block 1 reads what block 0 published); out[64+i] == i + 1 (shared handshake inside block 1)

__device__ __forceinline__ void st_release_gpu(unsigned *p, unsigned v)
{ asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned *p)
{ unsigned v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_relaxed_gpu(const unsigned *p)
{ unsigned v; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_relaxed_sys(unsigned *p, unsigned v)
{ asm volatile("st.relaxed.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ unsigned ld_acquire_sys(const unsigned *p)
{ unsigned v; asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_volatile(const unsigned *p)
{ unsigned v; asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_volatile(unsigned *p, unsigned v)
{ asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_release_cta_shared(unsigned *p, unsigned v)
{ asm volatile("st.release.cta.shared.u32 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(p)), "r"(v) : "memory"); }
__device__ __forceinline__ unsigned ld_acquire_cta_shared(unsigned *p)
{ unsigned v; asm volatile("ld.acquire.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory"); return v; }
__device__ __forceinline__ unsigned long long ld_relaxed_cta_generic_u64(const unsigned long long *p)
{ unsigned long long v; asm volatile("ld.relaxed.cta.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }

extern "C" __global__ void fence_ld_st_semantics(unsigned *data, unsigned *flag, unsigned *out)
{
    __shared__ __align__(8) unsigned s_data[64];
    __shared__ unsigned s_flag;
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        st_volatile(&data[t], 3 * t + 7);
        __syncthreads();                                 /* all data stored (cta scope) */
        if (t == 0) {
            __threadfence();                             /* cumulativity: make the CTA's stores gpu-visible */
            st_release_gpu(&flag[0], 1);
            st_relaxed_sys(&flag[1], 1);
        }
    } else {
        if (t == 0) s_flag = 0;
        __syncthreads();
        if (t == 0) {
            while (ld_acquire_gpu(&flag[0]) == 0) { }
            while (ld_relaxed_gpu(&flag[1]) == 0) { }
            (void)ld_acquire_sys(&flag[1]);
        }
        __syncthreads();
        out[t] = ld_volatile(&data[t]);
        /* intra-CTA handshake through shared memory: warp 0 publishes, warp 1 consumes */
        if (t < 32) {
            s_data[t] = t + 1;
            s_data[t + 32] = t + 33;
            __syncwarp();
            if (t == 0) st_release_cta_shared(&s_flag, 1);
        } else if (t == 32) {
            while (ld_acquire_cta_shared(&s_flag) == 0) { }
        }
        __syncthreads();
        volatile unsigned *vs = s_data;
        out[64 + t] = vs[t] + (unsigned)(ld_relaxed_cta_generic_u64((const unsigned long long *)&s_data[t & ~1u]) & 0);
    }
}
