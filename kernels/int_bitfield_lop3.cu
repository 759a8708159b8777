// fencehound-corpus: bit-field extract/insert (bfe/bfi, incl. raw asm with out-of-range positions) and lop3-producing boolean expressions
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u32[512] zero, a:u32[64] random(15), b:u32[64] random(16), c:u32[64] random(17)
// expect: coverage only (compare with sc golden run)

__device__ __forceinline__ unsigned bfe_u32(unsigned x, unsigned pos, unsigned len)
{
    unsigned r;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}
__device__ __forceinline__ int bfe_s32(int x, unsigned pos, unsigned len)
{
    int r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}
__device__ __forceinline__ unsigned bfi_b32(unsigned ins, unsigned base, unsigned pos, unsigned len)
{
    unsigned r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(ins), "r"(base), "r"(pos), "r"(len));
    return r;
}

extern "C" __global__ void int_bitfield_lop3(unsigned *out, const unsigned *a, const unsigned *b,
                                             const unsigned *c)
{
    unsigned i = threadIdx.x;
    unsigned x = a[i], y = b[i], z = c[i];
    unsigned *o = out + 8 * i;
    /* C patterns the compiler turns into bfe / bfi */
    o[0] = (x >> (i & 15)) & 0xFFu;
    o[1] = (unsigned)(((int)x << 5) >> 20);
    o[2] = (y & ~(0x3Fu << 7)) | ((x & 0x3Fu) << 7);
    /* raw forms: pos/len taken from data, may be >= 32 */
    o[3] = bfe_u32(x, i, y & 63);
    o[4] = (unsigned)bfe_s32((int)x, i & 31, (z & 31) + 1);
    o[5] = bfi_b32(x, y, i, z & 63);
    /* three-input boolean functions -> lop3.b32 */
    o[6] = (x & y) ^ (~x & z) ^ (y | ~z);
    o[7] = (x & y) | (x & z) | (y & z);            /* majority */
}
