// fencehound-corpus: block-level inclusive prefix scan (Hillis-Steele, double-buffered in shared memory) plus an exclusive Blelloch scan of the same data
// categories: algorithm, shared, barrier
// nvrtc-flags: none
// launch: grid=2 block=128 dynamic_shared=0
// args: in:u32[256] random(45,0,100), incl:u32[256] zero, excl:u32[256] zero
// expect: per block b (128 elements): incl[b*128+i] == sum(in[b*128 .. b*128+i]); excl[b*128+i] == incl[b*128+i] - in[b*128+i]

#define N 128

extern "C" __global__ void algo_scan_block(const unsigned *in, unsigned *incl, unsigned *excl)
{
    __shared__ unsigned buf[2][N];
    __shared__ unsigned tree[N];
    unsigned t = threadIdx.x, g = blockIdx.x * N + t;
    unsigned v = in[g];

    /* Hillis-Steele */
    int cur = 0;
    buf[0][t] = v;
    __syncthreads();
    for (unsigned off = 1; off < N; off <<= 1) {
        unsigned x = buf[cur][t];
        if (t >= off) x += buf[cur][t - off];
        buf[cur ^ 1][t] = x;
        cur ^= 1;
        __syncthreads();
    }
    incl[g] = buf[cur][t];

    /* Blelloch (work-efficient), exclusive */
    tree[t] = v;
    __syncthreads();
    for (unsigned d = 1; d < N; d <<= 1) {           /* up-sweep */
        unsigned idx = (t + 1) * 2 * d - 1;
        if (idx < N) tree[idx] += tree[idx - d];
        __syncthreads();
    }
    if (t == 0) tree[N - 1] = 0;
    __syncthreads();
    for (unsigned d = N / 2; d >= 1; d >>= 1) {      /* down-sweep */
        unsigned idx = (t + 1) * 2 * d - 1;
        if (idx < N) {
            unsigned l = tree[idx - d];
            tree[idx - d] = tree[idx];
            tree[idx] += l;
        }
        __syncthreads();
    }
    excl[g] = tree[t];
}
