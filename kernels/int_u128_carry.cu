// fencehound-corpus: 128-bit multiply/add via unsigned __int128 and manual carry chains (add.cc/addc/madc/mad.hi.cc)
// categories: int
// nvrtc-flags: --device-int128
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u64[192] zero, a:u64[64] random(9), b:u64[64] random(10)
// expect: out[6*i+0..1] == out[6*i+2..3] == low 128 bits of (a[2i+1]:a[2i]) * b[2i]; out[6*i+4..5] == (a[2i+1]:a[2i]) + (b[2i+1]:b[2i]) mod 2^128

__device__ __forceinline__ void mul_64x64_128_asm(unsigned long long x, unsigned long long y,
                                                  unsigned long long *lo, unsigned long long *hi)
{
    /* schoolbook with 32-bit limbs and explicit carries */
    unsigned x0 = (unsigned)x, x1 = (unsigned)(x >> 32);
    unsigned y0 = (unsigned)y, y1 = (unsigned)(y >> 32);
    unsigned r0, r1, r2, r3;
    asm("mul.lo.u32     %0, %4, %6;\n\t"
        "mul.hi.u32     %1, %4, %6;\n\t"
        "mad.lo.cc.u32  %1, %5, %6, %1;\n\t"
        "madc.hi.u32    %2, %5, %6, 0;\n\t"
        "mad.lo.cc.u32  %1, %4, %7, %1;\n\t"
        "madc.hi.cc.u32 %2, %4, %7, %2;\n\t"
        "addc.u32       %3, 0, 0;\n\t"
        "mad.lo.cc.u32  %2, %5, %7, %2;\n\t"
        "madc.hi.u32    %3, %5, %7, %3;"
        : "=&r"(r0), "=&r"(r1), "=&r"(r2), "=&r"(r3)
        : "r"(x0), "r"(x1), "r"(y0), "r"(y1));
    *lo = ((unsigned long long)r1 << 32) | r0;
    *hi = ((unsigned long long)r3 << 32) | r2;
}

extern "C" __global__ void int_u128_carry(unsigned long long *out,
                                          const unsigned long long *a,
                                          const unsigned long long *b)
{
    unsigned i = threadIdx.x;
    unsigned long long *o = out + 6 * i;
    unsigned __int128 x = ((unsigned __int128)a[2 * i + 1] << 64) | a[2 * i];
    unsigned __int128 y = ((unsigned __int128)b[2 * i + 1] << 64) | b[2 * i];
    unsigned __int128 p = x * (unsigned __int128)b[2 * i];
    o[0] = (unsigned long long)p;
    o[1] = (unsigned long long)(p >> 64);

    unsigned long long lo, hi, lo2, hi2;
    mul_64x64_128_asm(a[2 * i], b[2 * i], &lo, &hi);
    mul_64x64_128_asm(a[2 * i + 1], b[2 * i], &lo2, &hi2);
    o[2] = lo;
    o[3] = hi + lo2;

    unsigned __int128 s = x + y;
    o[4] = (unsigned long long)s;
    o[5] = (unsigned long long)(s >> 64);
}
