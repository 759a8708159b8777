// mp_queue: message passing through an append-only queue. One producer thread appends
// items and publishes the count after each; consumer threads in other blocks poll the
// count and read every item published so far (written for fencehound; the pattern of
// any single-producer queue, e.g. a work list filled by one block and drained by others).
//
//   PRODUCER_FENCE  between the item store and the count store (writer side)
//   CONSUMER_FENCE  between reading the count and reading the items (reader side): the
//                   volatile count read and this fence form PTX's acquire pattern.
//                   Without it the item reads may return values older than the count —
//                   which store-buffering models never produce (their loads read the
//                   newest value) and the weak model does.
#ifndef PRODUCER_FENCE
#define PRODUCER_FENCE __threadfence()
#endif
#ifndef CONSUMER_FENCE
#define CONSUMER_FENCE __threadfence()
#endif
#define ITEMS 32

extern "C" __global__ void mp_queue(int *items, volatile int *count, int *errors, int *sums) {
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        for (int i = 0; i < ITEMS; ++i) {
            items[i] = 7 * i + 3;
            PRODUCER_FENCE;
            *count = i + 1;
        }
        return;
    }
    int seen = 0, sum = 0, bad = 0;
    while (seen < ITEMS) {
        int c = *count;
        if (c == seen)
            continue;
        CONSUMER_FENCE;
        for (; seen < c; ++seen) {
            int v = items[seen];
            bad += v != 7 * seen + 3;
            sum += v;
        }
    }
    errors[blockIdx.x] = bad;
    sums[blockIdx.x] = sum;
}
