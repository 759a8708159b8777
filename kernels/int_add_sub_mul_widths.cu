// fencehound-corpus: add, sub, mul on 8/16/32/64-bit signed and unsigned integers (wrap-around)
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u64[512] zero, a:u32[64] random(1), b:u32[64] random(2)
// expect: coverage only (compare with sc golden run); out[8*i+k] holds the k-th result for thread i

extern "C" __global__ void int_add_sub_mul_widths(unsigned long long *out,
                                                  const unsigned *a, const unsigned *b)
{
    unsigned i = threadIdx.x;
    unsigned x = a[i], y = b[i];
    unsigned long long *o = out + 8 * i;

    unsigned char u8 = (unsigned char)x + (unsigned char)y;
    signed char s8 = (signed char)((signed char)x * (signed char)y);
    unsigned short u16 = (unsigned short)((unsigned short)x - (unsigned short)y);
    short s16 = (short)((short)x * (short)y);
    int s32 = (int)x * (int)y - (int)(x >> 3);
    unsigned u32 = x * y + (x ^ y);
    long long s64 = (long long)(int)x * (long long)(int)y - (long long)x;
    unsigned long long u64 = ((unsigned long long)x << 32 | y) * 0x9E3779B97F4A7C15ull
                           + ((unsigned long long)y << 17);

    o[0] = u8;
    o[1] = (unsigned long long)(long long)s8;
    o[2] = u16;
    o[3] = (unsigned long long)(long long)s16;
    o[4] = (unsigned long long)(long long)s32;
    o[5] = u32;
    o[6] = (unsigned long long)s64;
    o[7] = u64 - (unsigned long long)s64;
}
