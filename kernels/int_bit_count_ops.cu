// fencehound-corpus: popc, clz, brev, ffs (and 64-bit forms) plus __fns-free find-leading-one via bfind
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u32[512] zero, v:u64[64] random(12)
// expect: out[8*i+0] == popcount(low32(v[i])); other slots coverage only (compare with sc golden run)

__device__ __forceinline__ unsigned bfind_u32(unsigned x)
{
    unsigned r;
    asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(x));
    return r;
}

extern "C" __global__ void int_bit_count_ops(unsigned *out, const unsigned long long *v)
{
    unsigned i = threadIdx.x;
    unsigned long long x = v[i];
    if (i == 0) x = 0;                  /* edge cases: zero input */
    if (i == 1) x = ~0ull;
    unsigned lo = (unsigned)x;
    unsigned *o = out + 8 * i;
    o[0] = __popc(lo);
    o[1] = __popcll(x);
    o[2] = __clz((int)lo) | (__clzll((long long)x) << 8);
    o[3] = __brev(lo);
    o[4] = (unsigned)(__brevll(x) >> 16);
    o[5] = __ffs((int)lo) | (__ffsll((long long)x) << 8);
    o[6] = bfind_u32(lo);
    o[7] = 31 - __clz((int)(lo | 1));
}
