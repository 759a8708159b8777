// The blamed store is inside a library: CUB's ThreadStore (cub/thread/thread_store.cuh),
// called from this kernel. The fence must go into this file, after the call — never into
// the library header — while the report still names the store inside CUB.
#include <cub/thread/thread_store.cuh>

extern "C" __global__ void lib(int *slot, int *flag, int *bad) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        cub::ThreadStore<cub::STORE_CG>(slot + i, i + 7);
        flag[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        if (((volatile int *)slot)[i] != i + 7)
            atomicAdd(bad, 1);
    }
}
