// A loop NVRTC unrolls into four copies, of which this campaign (n = 2) runs two. The
// fence after each slot store is needed: the consumer reads the slots after the flag.
// The scratch fence is not needed by the copies that run — but two of its copies never
// run, so nothing is known about them: the line is "not exercised", never "redundant".
#ifndef SLOT_FENCE
#define SLOT_FENCE __threadfence()
#endif

extern "C" __global__ void fill(int *slot, int *scratch, int *flag, int *bad, int n) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            if (j < n) {
                slot[i * 4 + j] = i + j + 1;
                SLOT_FENCE;
                scratch[i * 4 + j] = j;
                __threadfence_block();
            }
        }
        flag[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        for (int j = 0; j < n; j++)
            if (((volatile int *)slot)[i * 4 + j] != i + j + 1)
                atomicAdd(bad, 1);
    }
}
