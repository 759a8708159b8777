// fencehound-corpus: SIMD-in-a-word intrinsics (__vadd4, __vsub2, __vabsdiffu4, __vmaxs4, ...), __sad/__usad, __dp4a/__dp2a
// categories: int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: out:u32[640] zero, a:u32[64] random(18), b:u32[64] random(19), c:u32[64] random(20)
// expect: out[10*i+8] == sum over bytes k of int8(a[i].k)*int8(b[i].k) + int32(c[i]); rest coverage only

extern "C" __global__ void int_simd_video(unsigned *out, const unsigned *a, const unsigned *b,
                                          const unsigned *c)
{
    unsigned i = threadIdx.x;
    unsigned x = a[i], y = b[i], z = c[i];
    unsigned *o = out + 10 * i;
    o[0] = __vadd4(x, y);
    o[1] = __vsub2(x, y);
    o[2] = __vabsdiffu4(x, y);
    o[3] = __vmaxs4(x, y) ^ __vminu2(x, y);
    o[4] = __vaddss4(x, y) + __vsubus2(x, y);       /* saturating lanes */
    o[5] = __vcmpgtu4(x, y) | __vseteq2(x, y);
    o[6] = __sad((int)x, (int)y, z);
    o[7] = __usad(x, y, z);
    o[8] = (unsigned)__dp4a((int)x, (int)y, (int)z);
    o[9] = __dp2a_lo(x, y, z) + __dp2a_hi(x, y, z);
}
