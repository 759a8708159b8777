// Calls the CUDA driver API (cuInit, cuDeviceGet) besides the runtime: fencehound replaces
// libcudart.so.13 only. Linked against libcuda.so.1 (the test links a stub of it); run
// where no driver is installed, the dynamic loader cannot start it.
#include <cuda.h>
#include <cstdio>

int main() {
    CUresult r = cuInit(0);
    CUdevice d;
    if (r == CUDA_SUCCESS) r = cuDeviceGet(&d, 0);
    int *p = nullptr;
    cudaMalloc(&p, 64);
    printf("driver: %d\n", (int)r);
    return r == CUDA_SUCCESS ? 0 : 3;
}
