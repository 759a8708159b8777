// Treiber-stack push: the link store and the CAS that publishes the node sit on ONE line
// of a do-while. The fence belongs between them, inside the loop body: after the whole
// loop (after the CAS) it comes too late. CTA 0 pushes nodes 0..7; CTA 1 watches the top
// of the stack and checks that the node it sees already has its link (not the -2 that
// `next` starts with).
extern "C" __global__ void push(int *top, int *next, int *bad) {
    int me = threadIdx.x;
    if (blockIdx.x == 0) {
        int old;
        do { old = *(volatile int *)top; next[me] = old; } while (atomicCAS(top, old, me) != old);
    } else {
        int seen = 0;
        for (int k = 0; k < 400 && seen < 8; k++) {
            int t = *(volatile int *)top;
            __threadfence();
            if (t >= 0) {
                seen++;
                if (((volatile int *)next)[t] == -2)
                    atomicAdd(bad, 1);
            }
        }
    }
}
