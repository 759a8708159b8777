// fencehound-corpus: shifts by variable amounts, including amounts >= the operand width (PTX clamps), all widths
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=80 dynamic_shared=0
// args: out:u64[640] zero, v:u64[80] random(11)
// expect: coverage only (compare with sc golden run); thread i shifts by i (0..79) so widths are exceeded

__device__ __forceinline__ unsigned shl_b32_raw(unsigned x, unsigned n)
{
    unsigned r;
    asm("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(n));   /* n >= 32 gives 0 */
    return r;
}
__device__ __forceinline__ int shr_s32_raw(int x, unsigned n)
{
    int r;
    asm("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(n));   /* n >= 32 gives sign fill */
    return r;
}
__device__ __forceinline__ unsigned long long shr_u64_raw(unsigned long long x, unsigned n)
{
    unsigned long long r;
    asm("shr.u64 %0, %1, %2;" : "=l"(r) : "l"(x), "r"(n));
    return r;
}
__device__ __forceinline__ unsigned short shl_b16_raw(unsigned short x, unsigned n)
{
    unsigned short r;
    asm("shl.b16 %0, %1, %2;" : "=h"(r) : "h"(x), "r"(n));
    return r;
}

extern "C" __global__ void int_shifts(unsigned long long *out, const unsigned long long *v)
{
    unsigned n = threadIdx.x;           /* 0..79 */
    unsigned long long x = v[n];
    unsigned long long *o = out + 8 * n;
    unsigned m = n & 31, m64 = n & 63;
    o[0] = (unsigned)x << m;                                  /* C-defined shifts */
    o[1] = (unsigned long long)(long long)((int)x >> m);
    o[2] = x >> m64;
    o[3] = (unsigned long long)((long long)x << m64) ^ (unsigned long long)((long long)x >> (m64 ^ 7));
    o[4] = shl_b32_raw((unsigned)x, n);                       /* raw PTX, n may exceed width */
    o[5] = (unsigned long long)(long long)shr_s32_raw((int)x, n);
    o[6] = shr_u64_raw(x, n);
    o[7] = shl_b16_raw((unsigned short)x, n) | ((unsigned long long)((unsigned char)x >> (n & 7)) << 32);
}
