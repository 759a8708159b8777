// fencehound-corpus: bitonic sort of 256 keys per block in shared memory (compare-exchange network with __syncthreads between stages)
// categories: algorithm, shared, barrier
// nvrtc-flags: none
// launch: grid=2 block=128 dynamic_shared=0
// args: keys:u32[512] random(50)
// expect: keys[b*256 .. b*256+255] is sorted ascending and a permutation of its input, for b in 0..1

#define N 256

extern "C" __global__ void algo_bitonic_sort(unsigned *keys)
{
    __shared__ unsigned s[N];
    unsigned t = threadIdx.x;
    unsigned *k = keys + blockIdx.x * N;
    s[t] = k[t];
    s[t + N / 2] = k[t + N / 2];
    __syncthreads();
    for (unsigned size = 2; size <= N; size <<= 1) {
        for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
            /* each thread handles one compare-exchange pair */
            unsigned lo = 2 * t - (t & (stride - 1));
            unsigned hi = lo + stride;
            bool ascending = (lo & size) == 0;
            unsigned a = s[lo], b = s[hi];
            if ((a > b) == ascending) {
                s[lo] = b;
                s[hi] = a;
            }
            __syncthreads();
        }
    }
    k[t] = s[t];
    k[t + N / 2] = s[t + N / 2];
}
