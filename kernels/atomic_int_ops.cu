// fencehound-corpus: every 32-bit integer atomic op with results used (atom.global.*): add, sub, exch, min, max, and, or, xor, inc, dec, cas on int and unsigned
// categories: atomic, int
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: acc:u32[13] zero, old:u32[1536] zero
// expect: acc[0] == 128*129/2 (sum of tid+1); acc[1] == -(128); acc[3] == 0 (min of tid); acc[4] == 127; acc[5] == 0; acc[6] == 127 (or of tids); acc[8] == 128 % 1000 (inc wraps at 1000); acc[10] == 128 (cas counter); acc[11] == -127; acc[12] == 0; acc[2], acc[7], acc[9] and old[] are schedule-dependent

extern "C" __global__ void atomic_int_ops(unsigned *acc, unsigned *old)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *o = old + 12 * t;
    int *iacc = (int *)acc;
    o[0] = atomicAdd(&acc[0], t + 1);
    o[1] = (unsigned)atomicSub(&iacc[1], 1);
    o[2] = (unsigned)atomicExch(&iacc[2], (int)t);
    o[3] = (unsigned)atomicMin(&iacc[3], (int)t);          /* starts at 0, stays 0 */
    o[4] = atomicMax(&acc[4], t);
    o[5] = atomicAnd(&acc[5], ~(1u << (t & 31)));
    o[6] = (unsigned)atomicOr(&iacc[6], (int)t);
    o[7] = atomicXor(&acc[7], t * 2654435761u);
    o[8] = atomicInc(&acc[8], 999u);
    o[9] = atomicDec(&acc[9], 7u);
    /* lock-free counter with a CAS retry loop */
    unsigned cur = acc[10], seen;
    do {
        seen = cur;
        cur = atomicCAS(&acc[10], seen, seen + 1);
    } while (cur != seen);
    o[10] = seen;
    o[11] = (unsigned)atomicMin(&iacc[11], -(int)t) + atomicMin(&acc[12], t + 5u);
}
