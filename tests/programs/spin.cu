// A kernel that waits for a flag nobody sets: on a GPU it hangs forever. fencehound's
// runtime ends the program with its timeout status once it sees that no warp can make
// progress (or, with `--fuel`, once the launch's fuel is spent).
#include <cstdio>

__global__ void wait_for(volatile int *flag) {
    while (*flag == 0) {
    }
}

int main() {
    int *flag;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    wait_for<<<1, 32>>>(flag);
    cudaError_t e = cudaDeviceSynchronize();
    printf("returned: %s\n", cudaGetErrorName(e));
    return 0;
}
