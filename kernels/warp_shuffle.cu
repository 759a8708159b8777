// fencehound-corpus: __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync on int, unsigned, float, double, long long; width < 32; partial masks
// categories: warp
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: in:u32[64] iota, out:u64[576] zero
// expect: with in[i] == i and lane = i % 32, base = i - lane: out[9i+0] == base + 31 - lane (broadcast from mirrored lane); out[9i+1] == (lane >= 1 ? i - 1 : i); out[9i+2] == (lane + 2 < 32 ? i + 2 : i); out[9i+3] == base + (lane ^ 5); out[9i+4] as f64 == base + (lane ^ 1) (double xor); out[9i+5] == (base + (lane ^ 3)) << 33; out[9i+6] as f32 == (i & ~7) (width-8 broadcast of segment lane 0); out[9i+7] == sum of in over the warp (xor butterfly); out[9i+8] == (lane even ? (lane + 2 < 32 ? i + 2 : i) : 0) (shuffle among even lanes, mask 0x55555555)

extern "C" __global__ void warp_shuffle(const unsigned *in, unsigned long long *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    unsigned v = in[i];
    unsigned long long *o = out + 9 * i;
    const unsigned full = 0xffffffffu;
    o[0] = (unsigned)__shfl_sync(full, (int)v, 31 - lane);
    o[1] = __shfl_up_sync(full, v, 1);
    o[2] = __shfl_down_sync(full, v, 2);
    o[3] = __shfl_xor_sync(full, v, 5);
    double d = (double)v;
    o[4] = __double_as_longlong(__shfl_xor_sync(full, d, 1));
    long long w = (long long)v << 33;
    o[5] = (unsigned long long)__shfl_xor_sync(full, w, 3);
    float f = (float)v;
    o[6] = __float_as_uint(__shfl_sync(full, f, 0, 8));
    unsigned s = v;
    for (int m = 16; m > 0; m >>= 1)
        s += __shfl_xor_sync(full, s, m);
    o[7] = s;
    /* shuffles among the even lanes only (partial mask, divergent) */
    unsigned e = 0;
    if ((lane & 1) == 0)
        e = __shfl_down_sync(0x55555555u, v, 2);
    o[8] = e;
}
