// fencehound-corpus: integer min/max/abs on all widths, averaging and saturating add/sub (add.sat, sub.sat, cvt.sat)
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u32[384] zero, a:u32[32] random(7), b:u32[32] random(8)
// expect: coverage only (compare with sc golden run)

__device__ __forceinline__ int add_sat_s32(int x, int y)
{
    int r;
    asm("add.sat.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    return r;
}
__device__ __forceinline__ int sub_sat_s32(int x, int y)
{
    int r;
    asm("sub.sat.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    return r;
}

extern "C" __global__ void int_minmax_abs_sat(unsigned *out, const unsigned *a, const unsigned *b)
{
    unsigned i = threadIdx.x;
    unsigned x = a[i], y = b[i];
    unsigned *o = out + 12 * i;
    long long lx = ((long long)x << 20) - (long long)y * 977;
    long long ly = (long long)(int)y * 31;

    o[0] = (unsigned)min((int)x, (int)y);
    o[1] = max(x, y);
    o[2] = (unsigned)abs((int)x);
    o[3] = (unsigned)(llmin(lx, ly) >> 8) ^ (unsigned)llmax(lx, ly);
    o[4] = (unsigned)(umin(x >> 4, y) + ullmax((unsigned long long)x, (unsigned long long)y << 1));
    o[5] = (unsigned)llabs(lx);
    o[6] = (unsigned)add_sat_s32((int)x, (int)y);
    o[7] = (unsigned)sub_sat_s32((int)x, (int)y);
    o[8] = __hadd((int)x, (int)y) ^ __rhadd((int)x, (int)y);
    o[9] = __uhadd(x, y) + __urhadd(x, y);
    /* 8- and 16-bit min/max/abs */
    signed char c = (signed char)x, d = (signed char)y;
    short s = (short)x, t = (short)y;
    o[10] = (unsigned)(unsigned char)(c < d ? c : d) | ((unsigned)(unsigned short)(s > t ? s : t) << 8);
    /* clamp to signed 8-bit (saturating narrow) */
    int w = (int)x >> 20;
    o[11] = (unsigned)(w > 127 ? 127 : (w < -128 ? -128 : w)) + (unsigned)(abs(c) + abs(s));
}
