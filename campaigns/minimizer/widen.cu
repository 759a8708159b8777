// The producer has a fence, but of block scope: __threadfence_block() orders the data
// before the flag only for its own CTA, and the consumer is in another CTA. The cheapest
// fix widens it to __threadfence() (no new fence), not a second fence beside it.
extern "C" __global__ void handoff(int *data, int *flag, int *bad) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        data[i] = 3 * i + 1;
        __threadfence_block();
        flag[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        if (((volatile int *)data)[i] != 3 * i + 1)
            atomicAdd(bad, 1);
    }
}
