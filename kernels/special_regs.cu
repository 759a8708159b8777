// fencehound-corpus: special registers: %tid/%ntid/%ctaid/%nctaid in 3-D, %laneid, %warpid, %nwarpid, %smid, %nsmid, %gridid, %lanemask_lt/le/eq/ge/gt, %clock, %clock64, %globaltimer, clock()/clock64(), %dynamic_smem_size
// categories: special-reg, module-var
// nvrtc-flags: none
// launch: grid=2,2,1 block=4,4,4 dynamic_shared=16
// args: out:u32[2048] zero
// expect: for linear global id g (block-major, x fastest): out[8g+0] == threadIdx.x | y<<8 | z<<16; out[8g+1] == 4|4<<8|4<<16 (blockDim); out[8g+2] == blockIdx.x | blockIdx.y<<8; out[8g+3] == 2|2<<8|1<<16 (gridDim); out[8g+4] == lane (linear tid % 32); out[8g+5] == (1<<lane)-1 (%lanemask_lt); out[8g+6] == 1<<lane (%lanemask_eq); out[8g+7] == 16 (%dynamic_smem_size); clocks/ids only in global scratch (nondeterministic)

__device__ unsigned long long g_clock_scratch[4];

__device__ __forceinline__ unsigned sreg_laneid() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_warpid() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_nwarpid() { unsigned r; asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_nsmid() { unsigned r; asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long sreg_gridid() { unsigned long long r; asm volatile("mov.u64 %0, %%gridid;" : "=l"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lanemask_lt() { unsigned r; asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lanemask_le() { unsigned r; asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lanemask_eq() { unsigned r; asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lanemask_ge() { unsigned r; asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lanemask_gt() { unsigned r; asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long sreg_globaltimer() { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); return r; }
__device__ __forceinline__ unsigned sreg_clock() { unsigned r; asm volatile("mov.u32 %0, %%clock;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_dyn_smem() { unsigned r; asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r; }

extern "C" __global__ void special_regs(unsigned *out)
{
    unsigned tid_lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned blk_lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned g = blk_lin * (blockDim.x * blockDim.y * blockDim.z) + tid_lin;
    unsigned *o = out + 8 * g;
    long long c0 = clock64();
    unsigned c1 = (unsigned)clock();
    o[0] = threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16;
    o[1] = blockDim.x | blockDim.y << 8 | blockDim.z << 16;
    o[2] = blockIdx.x | blockIdx.y << 8 | blockIdx.z << 16;
    o[3] = gridDim.x | gridDim.y << 8 | gridDim.z << 16;
    o[4] = sreg_laneid();
    o[5] = sreg_lanemask_lt();
    o[6] = sreg_lanemask_eq();
    o[7] = sreg_dyn_smem();
    if (g == 0) {
        /* nondeterministic values go to a scratch module variable, not the checked output */
        g_clock_scratch[0] = (unsigned long long)(clock64() - c0) + (c1 - sreg_clock());
        g_clock_scratch[1] = sreg_globaltimer();
        g_clock_scratch[2] = sreg_gridid();
        g_clock_scratch[3] = (unsigned long long)sreg_smid() | (unsigned long long)sreg_nsmid() << 16
                           | (unsigned long long)sreg_warpid() << 32 | (unsigned long long)sreg_nwarpid() << 48;
    }
    if ((sreg_lanemask_le() ^ sreg_lanemask_lt()) != sreg_lanemask_eq() ||
        (sreg_lanemask_ge() ^ sreg_lanemask_gt()) != sreg_lanemask_eq())
        o[6] = 0xdead;                       /* never taken */
}
