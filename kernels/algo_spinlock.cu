// fencehound-corpus: lock-protected critical section: one thread per block takes an atomicCAS spin lock, updates a non-atomic shared record, __threadfence, releases with atomicExch; -DFENCEHOUND_NO_FENCE drops the fences (bug variant)
// categories: algorithm, atomic, fence
// nvrtc-flags: none
// launch: grid=8 block=32 dynamic_shared=0
// args: lock:u32[1] zero, record:u32[3] zero, order:u32[8] zero
// expect: record[0] == 8 (plain increments under the lock); record[1] == sum of blockIdx+1 == 36; record[2] == 8; lock[0] == 0; order[] is a permutation of 0..7

extern "C" __global__ void algo_spinlock(unsigned *lock, unsigned *record, unsigned *order)
{
    if (threadIdx.x != 0) return;                    /* one thread per block: no intra-warp deadlock */
    while (atomicCAS(lock, 0u, 1u) != 0u) {
        __nanosleep(32);
    }
#ifndef FENCEHOUND_NO_FENCE
    __threadfence();                                 /* acquire side: see the previous owner's writes */
#endif
    volatile unsigned *r = record;
    unsigned n = r[0];
    r[0] = n + 1;
    r[1] = r[1] + blockIdx.x + 1;
    r[2] = r[2] + 1;
    order[n] = blockIdx.x;
#ifndef FENCEHOUND_NO_FENCE
    __threadfence();                                 /* release side: publish before unlocking */
#endif
    atomicExch(lock, 0u);
}
