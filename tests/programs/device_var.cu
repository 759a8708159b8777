// Results kept in __device__ variables: the kernel accumulates into `total` and counts
// into `hits`; the host sets `scale` (__constant__) and reads the results back with
// cudaMemcpyFromSymbol and through cudaGetSymbolAddress.
#include <cstdio>

__device__ int total;
__device__ unsigned int hits[2];
__constant__ int scale;

__global__ void accumulate(const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&total, in[i] * scale);
        atomicAdd(&hits[in[i] & 1], 1u);
    }
}

int main() {
    const int n = 500;
    int h[n], want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = i % 13;
        want += 3 * h[i];
    }
    int *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    int three = 3, zero = 0;
    cudaMemcpyToSymbol(scale, &three, sizeof three);
    cudaMemcpyToSymbol(total, &zero, sizeof zero);
    accumulate<<<(n + 127) / 128, 128>>>(d, n);
    int got = 0;
    cudaMemcpyFromSymbol(&got, total, sizeof got);
    unsigned int *dhits = nullptr;
    cudaGetSymbolAddress((void **)&dhits, hits);
    unsigned int hh[2];
    cudaMemcpy(hh, dhits, sizeof hh, cudaMemcpyDeviceToHost);
    size_t size = 0;
    cudaGetSymbolSize(&size, hits);
    bool ok = got == want && hh[0] + hh[1] == (unsigned)n && size == sizeof hh;
    printf("total = %d (want %d), hits %u + %u, %s\n", got, want, hh[0], hh[1], ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
