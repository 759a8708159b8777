// Relocatable device code, unit 2 of 2 (see main.cu).
#include <cstdio>

__device__ int total;
__device__ int table[64];

static __device__ int twice(int x) { return 3 * x; }  // same name as main.cu's, not the same

__device__ int scale(int x) { return 5 * x + 1; }

__device__ void bump() {
#ifdef RACE
    total = total + 1;
#else
    atomicAdd(&total, 1);
#endif
}

__global__ void fill(int *out) {
    int t = threadIdx.x;
    table[t] = twice(t * t);
    out[t] = table[t];
    bump();
    if (t == 0) printf("unit lib: %d\n", out[0]);
}
