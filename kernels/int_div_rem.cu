// fencehound-corpus: division and remainder on all integer widths, signed and unsigned, incl. negative operands
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u64[256] zero, a:u64[32] random(5), b:u64[32] random(6)
// expect: coverage only (compare with sc golden run); divisors are forced non-zero in the kernel

extern "C" __global__ void int_div_rem(unsigned long long *out,
                                       const unsigned long long *a,
                                       const unsigned long long *b)
{
    unsigned i = threadIdx.x;
    unsigned long long x = a[i], y = b[i] | 1ull;   /* never zero */
    unsigned long long *o = out + 8 * i;
    unsigned char d8 = (unsigned char)y | 1;
    short d16 = (short)((short)y | 1);
    int d32 = (int)(y >> 7) | 1;

    o[0] = (unsigned char)x / d8 + (unsigned char)x % d8 * 1000u;
    o[1] = (unsigned long long)(long long)((short)x / d16);
    o[2] = (unsigned long long)(long long)((short)x % d16);
    o[3] = (unsigned long long)(long long)((int)x / d32);
    o[4] = (unsigned long long)(long long)((int)x % d32);
    o[5] = (unsigned)x / (unsigned)d32 + (unsigned)x % (unsigned)d32;
    o[6] = (unsigned long long)((long long)x / (long long)(y >> (i & 15)));
    o[7] = x % (y >> (i & 7)) + x / (y >> 33 | 1);
}
