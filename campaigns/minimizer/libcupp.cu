// Code that already uses libcu++ atomics: the flag is stored through cuda::atomic_ref with
// memory_order_relaxed. The cheapest fix is a release store (memory_order_release), in the
// code's own idiom, rather than a __threadfence() beside it.
#include <cuda/atomic>

extern "C" __global__ void relaxed(int *data, int *flag, int *bad) {
    int i = threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[i]);
    if (blockIdx.x == 0) {
        data[i] = 5 * i + 2;
        f.store(1, cuda::memory_order_relaxed);
    } else {
        while (f.load(cuda::memory_order_relaxed) == 0) {
        }
        if (((volatile int *)data)[i] != 5 * i + 2)
            atomicAdd(bad, 1);
    }
}
