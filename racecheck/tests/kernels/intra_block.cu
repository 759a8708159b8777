// Intra-block races: a barrier (all forms) is missing between warps of one CTA.
// case: ib_shared_no_barrier; expect: intra-block; grid: 1; block: 64; args: out:u32[64]
// case: ib_shared_barrier; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: ib_global_no_barrier; expect: intra-block; grid: 2; block: 64; args: g:u32[128], out:u32[128]
// case: ib_global_barrier; expect: none; grid: 2; block: 64; args: g:u32[128], out:u32[128]
// case: ib_war_no_barrier; expect: intra-block; grid: 1; block: 64; args: out:u32[64]
// case: ib_war_barrier; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: ib_waw_leaders; expect: intra-block:WAW; grid: 1; block: 64; args: out:u32[1]
// case: ib_named_arrive_sync; expect: none; grid: 1; block: 64; args: out:u32[32]
// case: ib_named_not_participant; expect: intra-block; grid: 1; block: 96; args: out:u32[96]
// case: ib_vector_overlap; expect: intra-block; grid: 1; block: 64; args: out:u32[1]
// case: ib_adjacent_bytes; expect: none; grid: 1; block: 64; args: out:u32[64]

extern "C" __global__ void ib_shared_no_barrier(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    out[t] = s[(t + 32) % 64];
}

extern "C" __global__ void ib_shared_barrier(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[(t + 32) % 64];
}

extern "C" __global__ void ib_global_no_barrier(unsigned *g, unsigned *out)
{
    unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
    g[base + t] = t;
    out[base + t] = g[base + 63 - t];
}

extern "C" __global__ void ib_global_barrier(unsigned *g, unsigned *out)
{
    unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
    g[base + t] = t;
    __syncthreads();
    out[base + t] = g[base + 63 - t];
}

extern "C" __global__ void ib_war_no_barrier(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    unsigned v = s[(t + 32) % 64];
    s[t] = v + 1;
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void ib_war_barrier(unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    unsigned v = s[(t + 32) % 64];
    __syncthreads();
    s[t] = v + 1;
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void ib_waw_leaders(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t % 32 == 0) s[0] = t;
    __syncthreads();
    if (t == 0) out[0] = s[0];
}

/* Warp 0 produces and arrives on named barrier 1 (64 threads); warp 1 waits on it. */
extern "C" __global__ void ib_named_arrive_sync(unsigned *out)
{
    __shared__ unsigned s[32];
    unsigned t = threadIdx.x;
    if (t < 32) {
        s[t] = t * 3;
        asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[t - 32] = s[t - 32];
    }
}

/* Warps 0 and 1 synchronize on named barrier 1; warp 2 is not a participant. */
extern "C" __global__ void ib_named_not_participant(unsigned *out)
{
    __shared__ unsigned s[32];
    unsigned t = threadIdx.x;
    if (t < 32) s[t] = t + 1;
    if (t < 64) {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        if (t >= 32) out[t] = s[t - 32];
    } else {
        out[t] = s[t - 64];
    }
}

/* A 16-byte vector store by thread 0 against a 4-byte load of its last word by thread 32. */
extern "C" __global__ void ib_vector_overlap(unsigned *out)
{
    __shared__ uint4 s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = make_uint4(1, 2, 3, 4);
    if (t == 32) out[0] = ((volatile unsigned *)s)[3];
}

/* Every thread writes its own byte: byte-precise shadow sees no conflict. */
extern "C" __global__ void ib_adjacent_bytes(unsigned *out)
{
    __shared__ unsigned char b[64];
    unsigned t = threadIdx.x;
    b[t] = (unsigned char)t;
    __syncthreads();
    out[t] = b[63 - t];
}
