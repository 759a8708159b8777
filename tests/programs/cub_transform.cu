// cub::DeviceTransform over 64 Ki elements (256 CTAs). Built for sm_90 its kernel loads
// each tile with a bulk copy completing on an mbarrier and every thread waits on the
// barrier's phase (`mbarrier.try_wait.parity` in a loop). Under `weak` at p = 1 each wait
// read stale barrier states until a liveness round; one round per CTA made the launch
// take minutes (over 2 G lane instructions for 4 M of work).
#include <cub/device/device_transform.cuh>
#include <cstdio>

struct Square {
    __device__ int operator()(int x) const { return x * x; }
};

int main() {
    const int n = 1 << 16;
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    int *h = new int[n];
    for (int i = 0; i < n; ++i) h[i] = i % 1000 - 500;
    cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaError_t e = cub::DeviceTransform::Transform(in, out, n, Square{});
    if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        printf("CUDA error\n");
        return 2;
    }
    cudaMemcpy(h, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        int x = i % 1000 - 500;
        if (h[i] != x * x && bad++ < 4) printf("MISMATCH %d: %d, want %d\n", i, h[i], x * x);
    }
    if (bad) return 1;
    printf("OK: %d elements squared\n", n);
    return 0;
}
