// Several kernels and launches over two streams and the default stream, ordered with an
// event, timed with events.
#include <cstdio>

__global__ void fill(int *a, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = v + i;
}

__global__ void scale(int *a, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] *= k;
}

__global__ void add(const int *a, const int *b, int *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main() {
    const int n = 300;
    int *a, *b, *c;
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, n * sizeof(int));
    cudaMalloc(&c, n * sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t filled, start, stop;
    cudaEventCreate(&filled);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, 0);
    fill<<<3, 128, 0, s1>>>(a, n, 1);
    fill<<<3, 128, 0, s2>>>(b, n, 100);
    cudaEventRecord(filled, s1);
    cudaStreamWaitEvent(s2, filled, 0);
    scale<<<3, 128, 0, s2>>>(b, n, 2);
    cudaStreamSynchronize(s1);
    cudaStreamSynchronize(s2);
    add<<<3, 128>>>(a, b, c, n);
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = -1;
    cudaEventElapsedTime(&ms, start, stop);
    int h[n];
    cudaMemcpyAsync(h, c, sizeof h, cudaMemcpyDeviceToHost, s1);
    cudaStreamSynchronize(s1);
    for (int i = 0; i < n; i++) {
        if (h[i] != (1 + i) + 2 * (100 + i)) {
            printf("FAIL at %d: %d\n", i, h[i]);
            return 1;
        }
    }
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    printf("PASS (%s)\n", ms >= 0 ? "timed" : "untimed");
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
