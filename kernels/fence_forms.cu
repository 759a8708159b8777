// fencehound-corpus: every fence form: __threadfence_block/__threadfence/__threadfence_system, membar.{cta,gl,sys}, fence.{sc,acq_rel}.{cta,gpu,sys}, fence.acquire/release (sm_90), fence.proxy.alias
// categories: fence
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: out:u32[1536] zero
// expect: out[12*t + k] == t*16 + k for every global thread t and k in 0..11 (each store is followed by a different fence)

extern "C" __global__ void fence_forms(unsigned *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *o = out + 12 * t;
    unsigned v = t * 16;
    o[0] = v + 0;  __threadfence_block();
    o[1] = v + 1;  __threadfence();
    o[2] = v + 2;  __threadfence_system();
    o[3] = v + 3;  asm volatile("membar.cta;" ::: "memory");
    o[4] = v + 4;  asm volatile("membar.gl;" ::: "memory");
    o[5] = v + 5;  asm volatile("membar.sys;" ::: "memory");
    o[6] = v + 6;  asm volatile("fence.sc.cta;" ::: "memory");
    o[7] = v + 7;  asm volatile("fence.sc.gpu;" ::: "memory");
    o[8] = v + 8;  asm volatile("fence.sc.sys;" ::: "memory");
    o[9] = v + 9;  asm volatile("fence.acq_rel.cta;" ::: "memory");
    o[10] = v + 10; asm volatile("fence.acq_rel.gpu;" ::: "memory");
    o[11] = v + 11; asm volatile("fence.acq_rel.sys;" ::: "memory");
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.release.gpu;" ::: "memory");
    asm volatile("fence.acquire.cta;" ::: "memory");
#endif
    asm volatile("fence.proxy.alias;" ::: "memory");
}
