// fencehound-corpus: floating-point and narrow atomics: atomicAdd float/__half2/__half/__nv_bfloat162, atomicExch float, atomicCAS on unsigned short, float atomic max via CAS
// categories: atomic, float, half
// nvrtc-flags: --use-bundled-headers=$NVRTC_BUNDLED_HEADERS
// launch: grid=1 block=128 dynamic_shared=0
// args: acc:u32[8] zero, old:u32[512] zero
// expect: acc[0] as f32 == 128*0.25; acc[1] as half2 == (128*0.5, 128*1.0); low 16 bits of acc[4] == 128 (CAS16 counter); acc[5] as f32 == 127*1.5

#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ float atomic_max_float(float *addr, float v)
{
    unsigned *ua = (unsigned *)addr;
    unsigned cur = *ua, seen;
    do {
        seen = cur;
        if (__uint_as_float(seen) >= v) break;
        cur = atomicCAS(ua, seen, __float_as_uint(v));
    } while (cur != seen);
    return __uint_as_float(seen);
}

extern "C" __global__ void atomic_float_half(unsigned *acc, unsigned *old)
{
    unsigned t = threadIdx.x;
    unsigned *o = old + 4 * t;
    float f = atomicAdd((float *)&acc[0], 0.25f);
    __half2 h = atomicAdd((__half2 *)&acc[1], __floats2half2_rn(0.5f, 1.0f));
    o[0] = __float_as_uint(f);
    o[1] = *(unsigned *)&h;
    o[2] = __float_as_uint(atomicExch((float *)&acc[2], (float)t));
    atomicAdd((__half *)&acc[3], __float2half_rn(1.0f));
#if __CUDA_ARCH__ >= 800
    atomicAdd((__nv_bfloat162 *)&acc[6], __floats2bfloat162_rn(1.0f, 2.0f));
#endif
    /* 16-bit CAS counter in the low half of acc[4] */
    unsigned short *p16 = (unsigned short *)&acc[4];
    unsigned short cur = *(volatile unsigned short *)p16, seen;
    do {
        seen = cur;
        cur = atomicCAS(p16, seen, (unsigned short)(seen + 1));
    } while (cur != seen);
    o[3] = seen;
    atomic_max_float((float *)&acc[5], (float)t * 1.5f);
}
