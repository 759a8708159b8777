// fencehound-corpus: atomics on shared memory (atom.shared.*), global atomics with unused results (NVRTC 13 still emits atom), and explicit red.global/red.shared/red.relaxed.gpu/red.release.gpu via inline PTX
// categories: atomic, shared, barrier
// nvrtc-flags: none
// launch: grid=2 block=128 dynamic_shared=0
// args: red:u64[10] zero, out:u32[8] zero
// expect: out[0+4b] == 128 (shared add per block b); out[1+4b] == 127 (shared max); red[0] == 256; red[1] == 2*sum(0..127) as u64; red[2] as f32 == 256*0.5; red[4] as f64 == 256*0.25; low32(red[7]) == 256 (asm red.global.add.u32); red[8] == 2*sum(0..127) (asm red.relaxed.gpu); low32(red[9]) == 2*sum(0..127) (asm red.release.gpu); out[2+4b] == sum(0..127) + 128 (shared sum plus asm red.shared)

extern "C" __global__ void atomic_shared_red(unsigned long long *red, unsigned *out)
{
    __shared__ unsigned s_cnt, s_max, s_or;
    __shared__ unsigned long long s_sum;
    __shared__ float s_f;
    unsigned t = threadIdx.x;
    if (t == 0) { s_cnt = 0; s_max = 0; s_or = 0; s_sum = 0; s_f = 0.0f; }
    __syncthreads();
    atomicAdd(&s_cnt, 1u);
    atomicMax(&s_max, t);
    unsigned prev = atomicOr(&s_or, 1u << (t & 31));       /* result used: atom.shared */
    atomicAdd(&s_sum, (unsigned long long)t);
    /* explicit red forms (NVRTC itself emits atom even when the result is unused) */
    asm volatile("red.shared.add.u64 [%0], %1;"
                 :: "r"((unsigned)__cvta_generic_to_shared(&s_sum)), "l"(1ull) : "memory");
    atomicAdd(&s_f, 0.5f);
    atomicInc(&s_or, 0xffffffffu);
    __syncthreads();
    if (t == 0) {
        out[4 * blockIdx.x + 0] = s_cnt;
        out[4 * blockIdx.x + 1] = s_max;
        out[4 * blockIdx.x + 2] = (unsigned)s_sum;
        out[4 * blockIdx.x + 3] = __float_as_uint(s_f) ^ (prev & 0);
    }
    /* global, results unused -> red */
    atomicAdd((unsigned *)&red[0], 1u);
    atomicAdd(&red[1], (unsigned long long)t);
    atomicAdd((float *)&red[2], 0.5f);
    atomicAnd((unsigned *)&red[3], 0u);
    atomicXor((unsigned *)&red[3] + 1, t);
    atomicAdd((double *)&red[4], 0.25);
    atomicMin((int *)&red[5], -(int)t);
    atomicInc((unsigned *)&red[6], 10u);
    atomicDec((unsigned *)&red[6] + 1, 10u);
    asm volatile("red.global.add.u32 [%0], %1;" :: "l"(&red[7]), "r"(1u) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" :: "l"(&red[8]), "l"((unsigned long long)t) : "memory");
    asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(&red[9]), "r"((int)t) : "memory");
}
