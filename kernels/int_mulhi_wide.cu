// fencehound-corpus: high-half and widening multiplies: __umulhi, __mulhi, __mul64hi, __umul64hi, __mul24, __umul24, mul.wide
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u64[256] zero, a:u64[32] random(3), b:u64[32] random(4)
// expect: coverage only (compare with sc golden run)

extern "C" __global__ void int_mulhi_wide(unsigned long long *out,
                                          const unsigned long long *a,
                                          const unsigned long long *b)
{
    unsigned i = threadIdx.x;
    unsigned long long x = a[i], y = b[i];
    unsigned long long *o = out + 8 * i;
    unsigned xl = (unsigned)x, yl = (unsigned)y;
    o[0] = __umulhi(xl, yl);
    o[1] = (unsigned long long)(long long)__mulhi((int)xl, (int)yl);
    o[2] = __umul64hi(x, y);
    o[3] = (unsigned long long)__mul64hi((long long)x, (long long)y);
    o[4] = (unsigned long long)(long long)__mul24((int)xl, (int)yl);
    o[5] = __umul24(xl, yl);
    o[6] = (unsigned long long)xl * yl;                       /* mul.wide.u32 */
    o[7] = (unsigned long long)((long long)(int)xl * (int)(y >> 40)); /* mul.wide.s32 */
}
