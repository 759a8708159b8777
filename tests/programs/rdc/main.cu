// Relocatable device code (`nvcc -rdc=true`, CMake's separable compilation), unit 1 of 2:
// the kernels here call `__device__` functions and use `__device__` variables defined in
// lib.cu; both units have a `static` function and a printf string of the same name, a
// kernel each, and line information. Built with -DRACE, lib.cu's `bump` writes the
// shared counter without an atomic: the race is reported with lib.cu's line.
#include <cstdio>

extern __device__ int scale(int x);
extern __device__ int total;
extern __device__ int table[64];
__global__ void fill(int *out);

static __device__ int twice(int x) { return 2 * x; }

__global__ void use(int *out) {
    int t = threadIdx.x;
    out[t] = scale(t) + twice(table[t]);
    if (t == 0) printf("unit main: %d\n", out[0]);
}

int main() {
    int *out;
    cudaMalloc(&out, 2 * 64 * sizeof(int));
    fill<<<1, 64>>>(out + 64);
    use<<<1, 64>>>(out);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("CUDA error\n");
        return 2;
    }
    int h[128], tot = 0;
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    cudaMemcpyFromSymbol(&tot, total, sizeof(int));
    int bad = 0;
    for (int t = 0; t < 64; ++t) {
        int fill_want = 3 * t * t;  // lib's twice is a different function: 3x
        int use_want = (5 * t + 1) + 2 * fill_want;
        if (h[64 + t] != fill_want || h[t] != use_want) {
            if (bad++ < 4)
                printf("MISMATCH t %d: fill %d use %d, want %d %d\n", t, h[64 + t], h[t],
                       fill_want, use_want);
        }
    }
    if (tot != 64) {
        printf("MISMATCH total %d, want 64\n", tot);
        bad++;
    }
    if (bad) return 1;
    printf("OK: two relocatable units linked\n");
    return 0;
}
