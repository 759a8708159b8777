// fencehound-corpus: 64-bit atomics: add/exch/min/max/and/or/xor/cas on unsigned long long and long long, atomicAdd on double, CAS-loop double multiply
// categories: atomic, int, double
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: acc:u64[10] zero, old:u64[1024] zero
// expect: acc[0] == sum(t+2^33 for t<128); acc[3] == 127<<40; acc[6] as f64 == 128*0.5; acc[7] == 128 (cas counter); acc[8] == 0; acc[9] == 0; acc[1], acc[2], acc[4], acc[5] and old[] are schedule-dependent

extern "C" __global__ void atomic_64bit(unsigned long long *acc, unsigned long long *old)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long *o = old + 8 * t;
    long long *sacc = (long long *)acc;
    unsigned long long v = ((unsigned long long)t << 40) | t;
    o[0] = atomicAdd(&acc[0], (unsigned long long)t + (1ull << 33));
    o[1] = atomicExch(&acc[1], v);
    o[2] = (unsigned long long)atomicMin(&sacc[2], -(long long)v);
    o[3] = atomicMax(&acc[3], (unsigned long long)t << 40);
    o[4] = atomicAnd(&acc[4], ~v) ^ atomicOr(&acc[4], 1ull << (t & 63));
    o[5] = atomicXor(&acc[5], v * 0x9E3779B97F4A7C15ull) + (unsigned long long)atomicMax(&sacc[5], (long long)v);
    double prev = atomicAdd((double *)&acc[6], 0.5);
    o[6] = __double_as_longlong(prev);
    unsigned long long cur = acc[7], seen;
    do {
        seen = cur;
        cur = atomicCAS(&acc[7], seen, seen + 1);
    } while (cur != seen);
    o[7] = seen + atomicMin(&acc[8], v) + (unsigned long long)atomicAnd(&sacc[9], (long long)v);
}
