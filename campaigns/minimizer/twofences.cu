// Two fences, each redundant given the other: the producer writes the data, fences, writes
// a count (which the consumer does not check), fences, then raises the flag. The consumer
// checks the data after the flag. Either fence alone orders the data before the flag;
// without both, the consumer can see the flag before the data. An audit must not remove
// both.
extern "C" __global__ void produce(const int *in, int *data, int *count, int *flag, int *bad) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        data[i] = in[i] * 2;
        __threadfence();
        count[i] = 1;
        __threadfence();
        flag[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        if (((volatile int *)data)[i] != in[i] * 2)
            atomicAdd(bad, 1);
    }
}
