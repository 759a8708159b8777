// A kernel that writes one element past the end of its buffer (an off-by-one bound).
// The program checks for errors as CUDA programs should, and reports what it got.
#include <cstdio>

__global__ void init(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)  // BUG: should be i < n
        a[i] = i;
}

int main() {
    const int n = 256;
    int *a;
    cudaMalloc(&a, n * sizeof(int));
    init<<<2, 256>>>(a, n);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("launch: %s, synchronize: %s (%s)\n", cudaGetErrorName(launch), cudaGetErrorName(sync),
           cudaGetErrorString(sync));
    return sync == cudaSuccess ? 0 : 3;
}
