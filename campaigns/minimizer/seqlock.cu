// A correctly fenced seqlock: the writer makes the sequence odd, fences, writes both words,
// fences, makes it even; a reader reads the sequence, fences, reads both words, fences,
// reads the sequence again, and keeps the snapshot only if both reads saw the same even
// value. A kept snapshot with two different words is a torn read. The words are volatile
// (morally strong) accesses: with plain stores, PTX lets a reader see them out of order.
extern "C" __global__ void seqlock(int *seq, int *d, int *bad) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            for (int v = 1; v <= 4; v++) {
                int s = *(volatile int *)seq;
                *(volatile int *)seq = s + 1;
                __threadfence();
                ((volatile int *)d)[0] = v;
                ((volatile int *)d)[1] = v;
                __threadfence();
                *(volatile int *)seq = s + 2;
            }
        }
    } else {
        int s1, s2, a, b;
        do {
            s1 = *(volatile int *)seq;
            __threadfence();
            a = ((volatile int *)d)[0];
            b = ((volatile int *)d)[1];
            __threadfence();
            s2 = *(volatile int *)seq;
            if (s1 == s2 && (s1 & 1) == 0 && a != b)
                atomicAdd(bad, 1);
        } while (s2 != 8);
    }
}
