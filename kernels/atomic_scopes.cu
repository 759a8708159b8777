// fencehound-corpus: scoped atomics: _block (atom.cta) and _system (atom.sys) variants of add, exch, cas, min, max, and, or, xor, inc, dec; both results used and unused (NVRTC 13 emits atom even for unused results)
// categories: atomic
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: acc:u32[32] zero, old:u32[512] zero
// expect: per block b, with a = acc + 16*b: a[0] == 64 (add_block of 1); a[1] == 128 (add_system of 2); a[2] == 64 (cas_system counter); a[12] == 64 (unused add_block); a[13] == 192 (unused add_system of 3); a[14] == 0xffffffff; a[15] as f32 == 64. Each CTA uses its own slots, so block-scope atomics never meet atomics of another CTA

extern "C" __global__ void atomic_scopes(unsigned *acc, unsigned *old)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *o = old + 4 * t;
    acc += 16 * blockIdx.x;                         /* per-CTA slots: block scope is sufficient */
    o[0] = atomicAdd_block(&acc[0], 1u);
    o[1] = atomicAdd_system(&acc[1], 2u);
    unsigned cur = acc[2], seen;
    do {
        seen = cur;
        cur = atomicCAS_system(&acc[2], seen, seen + 1);
    } while (cur != seen);
    o[2] = seen;
    o[3] = atomicExch_block(&acc[3], t) + atomicCAS_block(&acc[4], 0u, t)
         + atomicMin_system(&acc[5], t) + atomicMax_block(&acc[6], t)
         + atomicAnd_system(&acc[7], ~t) + atomicOr_block(&acc[8], t)
         + atomicXor_system(&acc[9], t) + atomicInc_block(&acc[10], 100u)
         + atomicDec_system(&acc[11], 100u);
    /* results unused: red.cta / red.sys */
    atomicAdd_block(&acc[12], 1u);
    atomicAdd_system(&acc[13], 3u);
    atomicOr_system(&acc[14], 1u << (t & 31));
    atomicMax_block((unsigned long long *)&acc[14] + 0, 0ull);   /* 64-bit block-scope atomic on an 8-aligned slot */
    atomicAdd_system((float *)&acc[15], 1.0f);
}
