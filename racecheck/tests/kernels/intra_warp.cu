// Intra-warp races under independent thread scheduling: __syncwarp() is missing.
// case: iw_volatile_reduce; expect: unordered; grid: 1; block: 32; args: in:u32[32] iota, out:u32[1]
// case: iw_syncwarp_reduce; expect: none; grid: 1; block: 32; args: in:u32[32] iota, out:u32[1]
// case: iw_neighbor; expect: intra-warp; grid: 2; block: 64; args: out:u32[128]
// case: iw_neighbor_syncwarp; expect: none; grid: 2; block: 64; args: out:u32[128]
// case: iw_half_mask; expect: none; grid: 1; block: 32; args: out:u32[32]
// case: iw_outside_mask; expect: intra-warp:RAW; grid: 1; block: 32; args: out:u32[32]
// case: iw_broadcast_waw; expect: intra-warp:WAW; grid: 1; block: 32; args: out:u32[1]

/* The pre-Volta warp reduction: volatile shared memory, lockstep assumed (iGUARD). */
extern "C" __global__ void iw_volatile_reduce(const unsigned *in, unsigned *out)
{
    __shared__ unsigned s[32];
    volatile unsigned *vs = s;
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    if (t < 16) vs[t] += vs[t + 16];
    if (t < 8) vs[t] += vs[t + 8];
    if (t < 4) vs[t] += vs[t + 4];
    if (t < 2) vs[t] += vs[t + 2];
    if (t < 1) vs[t] += vs[t + 1];
    if (t == 0) out[0] = vs[0];
}

extern "C" __global__ void iw_syncwarp_reduce(const unsigned *in, unsigned *out)
{
    __shared__ unsigned s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    for (unsigned off = 16; off > 0; off >>= 1) {
        unsigned v = 0;
        if (t < off) v = s[t] + s[t + off];
        __syncwarp();
        if (t < off) s[t] = v;
        __syncwarp();
    }
    if (t == 0) out[0] = s[0];
}

extern "C" __global__ void iw_neighbor(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x, w = t & ~31u;
    s[t] = t;
    out[blockIdx.x * 64 + t] = s[w + ((t + 1) & 31)];
}

extern "C" __global__ void iw_neighbor_syncwarp(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x, w = t & ~31u;
    s[t] = t;
    __syncwarp();
    out[blockIdx.x * 64 + t] = s[w + ((t + 1) & 31)];
}

/* Lanes 0..15 exchange among themselves under a partial mask. */
extern "C" __global__ void iw_half_mask(unsigned *out)
{
    __shared__ unsigned s[16];
    unsigned t = threadIdx.x;
    if (t < 16) {
        s[t] = t;
        __syncwarp(0x0000ffffu);
        out[t] = s[15 - t];
    }
}

/* Lanes 16..31 read what lanes 0..15 wrote, but are not in the mask of their sync. */
extern "C" __global__ void iw_outside_mask(unsigned *out)
{
    __shared__ unsigned s[16];
    unsigned t = threadIdx.x;
    if (t < 16) {
        s[t] = t;
        __syncwarp(0x0000ffffu);
    } else {
        out[t] = s[t - 16];
    }
}

/* Every lane stores to the same word. */
extern "C" __global__ void iw_broadcast_waw(unsigned *out)
{
    __shared__ unsigned s[1];
    s[0] = threadIdx.x;
    __syncwarp();
    if (threadIdx.x == 0) out[0] = s[0];
}
