// fencehound-corpus: CTA barriers __syncthreads, __syncthreads_count/_and/_or (bar.red.popc/and/or), __syncwarp with full and partial masks (bar.warp.sync)
// categories: barrier, shared, warp
// nvrtc-flags: none
// launch: grid=2 block=128 dynamic_shared=0
// args: in:u32[256] iota, out:u32[16] zero
// expect: per block b: out[8b+0] == 64 (odd count); out[8b+1] == 1 (all < 1000); out[8b+2] == (b == 0 ? 1 : 0) (some in[] == 5); out[8b+3] == sum of the block's 128 in[] values (8128 for b=0, 24512 for b=1); out[8b+4] == 120 (half-warp sum of 0..15)

extern "C" __global__ void barrier_sync_variants(const unsigned *in, unsigned *out)
{
    __shared__ unsigned s[128];
    unsigned t = threadIdx.x;
    unsigned v = in[blockIdx.x * blockDim.x + t];
    s[t] = v;
    int odd = __syncthreads_count(v & 1);
    int all_small = __syncthreads_and(v < 1000);
    int any_five = __syncthreads_or(v == 5);
    for (unsigned stride = 64; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    unsigned total = s[0];
    __syncthreads();
    /* half-warp partial barrier: only lanes 0..15 of warp 0 take part */
    if (t < 16) {
        s[t] = t;
        __syncwarp(0x0000ffffu);
        unsigned acc = 0;
        for (unsigned k = 0; k < 16; ++k) acc += s[k];
        __syncwarp(0x0000ffffu);
        if (t == 0) out[8 * blockIdx.x + 4] = acc;
    }
    __syncwarp();
    if (t == 0) {
        out[8 * blockIdx.x + 0] = (unsigned)odd;
        out[8 * blockIdx.x + 1] = (unsigned)all_small;
        out[8 * blockIdx.x + 2] = (unsigned)any_five;
        out[8 * blockIdx.x + 3] = total;
    }
}
