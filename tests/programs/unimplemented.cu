// Calls a runtime function fencehound does not implement (inter-process memory handles:
// one process, no IPC) and reports the error it gets, as a careful program would.
#include <cstdio>

int main() {
    int *p;
    cudaMalloc(&p, 64);
    cudaIpcMemHandle_t handle;
    cudaError_t e = cudaIpcGetMemHandle(&handle, p);
    printf("cudaIpcGetMemHandle: %s\n", cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 4;
}
