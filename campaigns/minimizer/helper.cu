// The fence that is missing belongs inside an #included helper (publish.cuh), which this
// kernel calls twice: CTA 0 publishes two values, CTA 1 waits for each flag.
#include "publish.cuh"

extern "C" __global__ void two(int *slot, int *flag, int *bad) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        publish(&slot[2 * i], &flag[2 * i], i + 1);
        publish(&slot[2 * i + 1], &flag[2 * i + 1], i + 2);
    } else {
        for (int k = 0; k < 2; k++) {
            while (((volatile int *)flag)[2 * i + k] == 0) {
            }
            __threadfence();
            if (((volatile int *)slot)[2 * i + k] != i + 1 + k)
                atomicAdd(bad, 1);
        }
    }
}
