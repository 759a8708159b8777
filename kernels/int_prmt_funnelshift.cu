// fencehound-corpus: __byte_perm (prmt) with computed selectors and __funnelshift_l/r/lc/rc (shf.l/r.wrap/clamp)
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u32[512] zero, a:u32[64] random(13), b:u32[64] random(14)
// expect: coverage only (compare with sc golden run); shift amounts range over 0..63

__device__ __forceinline__ unsigned prmt_mode(unsigned x, unsigned y, unsigned s)
{
    unsigned r;
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(s));
    return r;
}

extern "C" __global__ void int_prmt_funnelshift(unsigned *out, const unsigned *a, const unsigned *b)
{
    unsigned i = threadIdx.x;
    unsigned x = a[i], y = b[i];
    unsigned *o = out + 8 * i;
    o[0] = __byte_perm(x, y, 0x3210 + i);          /* selector from data, incl. sign-replicate bits */
    o[1] = __byte_perm(x, y, y);                    /* fully dynamic selector */
    o[2] = __byte_perm(x, 0, 0x0123);               /* byte swap */
    o[3] = __funnelshift_l(x, y, i);                /* wrap: shift mod 32 */
    o[4] = __funnelshift_r(x, y, i);
    o[5] = __funnelshift_lc(x, y, i);               /* clamp: shift min 32 */
    o[6] = __funnelshift_rc(x, y, i);
    o[7] = prmt_mode(x, y, i);
}
