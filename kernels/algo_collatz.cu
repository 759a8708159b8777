// fencehound-corpus: divergent branches and data-dependent loops: Collatz step count per thread, early exits, a switch, and a per-warp max via ballot-free shuffles
// categories: algorithm, int, warp, call
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: start:u32[128] iota_from(1), steps:u32[128] zero, kind:u32[128] zero, warpmax:u32[4] zero
// expect: steps[i] == number of Collatz steps from start[i] to 1 (start = 1..128, e.g. steps[26] == 111 for 27); kind[i] == start[i] % 3 mapped {0->10, 1->20, 2->30} + (start[i] is a power of two ? 1 : 0); warpmax[w] == max(steps over warp w)

__device__ __noinline__ unsigned collatz_steps(unsigned long long n)
{
    unsigned s = 0;
    while (n != 1) {
        if (n & 1) n = 3 * n + 1;
        else n >>= 1;
        ++s;
        if (s > 10000) break;                       /* safety net */
    }
    return s;
}

extern "C" __global__ void algo_collatz(const unsigned *start, unsigned *steps, unsigned *kind,
                                        unsigned *warpmax)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = start[i];
    unsigned s = v == 0 ? 0 : collatz_steps(v);
    steps[i] = s;
    unsigned k;
    switch (v % 3) {
    case 0: k = 10; break;
    case 1: k = 20; break;
    default: k = 30; break;
    }
    if ((v & (v - 1)) == 0) k += 1;
    kind[i] = k;
    unsigned m = s;
    for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0) warpmax[i >> 5] = m;
}
