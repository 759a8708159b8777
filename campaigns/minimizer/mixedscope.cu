// Issue 23: one source line whose unrolled PTX copies need different fence strengths.
// The store on line 15 is unrolled into four copies; slot 0 is read by another warp of
// the writer's CTA (a block-scope fence would do for that copy), slots 1-3 by another
// CTA (device scope needed). One line gets one fence: the strongest, once.
#ifndef SLOT_FENCE
#define SLOT_FENCE __threadfence()
#endif

extern "C" __global__ void mixed(int *data, int *flag, int *bad) {
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t == 0) {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                data[j] = j + 1;
                SLOT_FENCE;
                ((volatile int *)flag)[j] = 1;
            }
        } else if (t == 32) {
            while (((volatile int *)flag)[0] == 0) {
            }
            __threadfence();
            if (((volatile int *)data)[0] != 1)
                atomicAdd(bad, 1);
        }
    } else if (t >= 1 && t <= 3) {
        while (((volatile int *)flag)[t] == 0) {
        }
        __threadfence();
        if (((volatile int *)data)[t] != t + 1)
            atomicAdd(bad, 1);
    }
}
