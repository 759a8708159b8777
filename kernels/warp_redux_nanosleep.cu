// fencehound-corpus: __reduce_add/min/max/and/or/xor_sync (redux.sync, sm_80+, shuffle fallback below), __nanosleep back-off loop, __syncwarp
// categories: warp, int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: in:u32[64] iota, out:u32[384] zero
// expect: for warp w (lanes i = 32w..32w+31): out[6i+0] == sum(i over warp); out[6i+1] == 32w; out[6i+2] == 32w+31; out[6i+3] == AND of the warp's values; out[6i+4] == OR; out[6i+5] == XOR

__device__ __forceinline__ unsigned shfl_reduce_add(unsigned v)
{
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

extern "C" __global__ void warp_redux_nanosleep(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned *o = out + 6 * i;
    const unsigned full = 0xffffffffu;
    __nanosleep(100 + (i & 7) * 10);    /* a back-off hint; no semantic effect */
#if __CUDA_ARCH__ >= 800
    o[0] = __reduce_add_sync(full, v);
    o[1] = (unsigned)__reduce_min_sync(full, (int)v);
    o[2] = __reduce_max_sync(full, v);
    o[3] = __reduce_and_sync(full, v);
    o[4] = __reduce_or_sync(full, v);
    o[5] = __reduce_xor_sync(full, v);
#else
    unsigned mn = v, mx = v, an = v, orr = v, x = v;
    for (int m = 16; m > 0; m >>= 1) {
        mn = min(mn, __shfl_xor_sync(full, mn, m));
        mx = max(mx, __shfl_xor_sync(full, mx, m));
        an &= __shfl_xor_sync(full, an, m);
        orr |= __shfl_xor_sync(full, orr, m);
        x ^= __shfl_xor_sync(full, x, m);
    }
    o[0] = shfl_reduce_add(v);
    o[1] = mn; o[2] = mx; o[3] = an; o[4] = orr; o[5] = x;
#endif
    __syncwarp();
}
