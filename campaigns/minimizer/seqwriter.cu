// Issue 23: a seqlock writer whose data store line (line 17) sits in a loop that
// `#pragma unroll` turns into four PTX copies. The fence after it is missing
// (WRITER_FENCE is empty in the `unfenced` variant); the readers run in other CTAs, so
// only a device-scope fence fixes it. Under `bugaroo` every fence scope drains the same
// buffer, so whether block scope would do cannot be judged there: minimize must insert
// one `__threadfence();` after line 17 (not one fence per copy and strength) and say that
// the scope question needs `--model scoped` or `weak`.
#ifndef WRITER_FENCE
#define WRITER_FENCE __threadfence()
#endif
extern "C" __global__ void seqwriter(int *seq, int *d, int *bad) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
#pragma unroll
            for (int v = 1; v <= 4; v++) {
                *(volatile int *)seq = 2 * v - 1; __threadfence();
                ((volatile int *)d)[0] = v; ((volatile int *)d)[1] = v;
                WRITER_FENCE;
                *(volatile int *)seq = 2 * v;
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
