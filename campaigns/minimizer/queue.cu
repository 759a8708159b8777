// A correctly fenced single-producer single-consumer ring buffer: the producer writes a
// slot, fences, then advances the tail; the consumer waits for the tail, fences, reads the
// slot, fences, then advances the head (so the producer does not overwrite a slot before
// it was read).
#define CAP 2
#define N 6

extern "C" __global__ void queue(int *items, int *head, int *tail, int *bad) {
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        for (int k = 0; k < N; k++) {
            while (k - *(volatile int *)head >= CAP) {
            }
            items[k % CAP] = k + 1;
            __threadfence();
            *(volatile int *)tail = k + 1;
        }
    } else {
        for (int k = 0; k < N; k++) {
            while (*(volatile int *)tail <= k) {
            }
            __threadfence();
            if (((volatile int *)items)[k % CAP] != k + 1)
                atomicAdd(bad, 1);
            __threadfence();
            *(volatile int *)head = k + 1;
        }
    }
}
