// A record written by a short loop that NVRTC unrolls, then published by a flag. One
// fence after the loop orders all four stores before the flag; the search moves its
// fences to the end of each run of copies, so the fix goes after the loop, not into its
// body (there it would compile to a fence after every store).
#ifndef RECORD_FENCE
#define RECORD_FENCE __threadfence()
#endif

extern "C" __global__ void publish(int *record, int *flag, int *out) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        for (int k = 0; k < 4; k++)
            record[i * 4 + k] = 10 * i + k + 1;
        RECORD_FENCE;
        ((volatile int *)flag)[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        int sum = 0;
        for (int k = 0; k < 4; k++)
            sum += ((volatile int *)record)[i * 4 + k];
        out[i] = sum;
    }
}
