// fencehound-corpus: device-side assert (__assertfail) that fails for a chosen input: every thread checks in[i] != bad
// categories: assert, call, module-var
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: in:u32[64] iota, out:u32[64] zero, bad:u32=13
// expect: trap verdict with an assertion message naming "in[i] != bad" (thread 13 fails when bad=13); with bad=1000 the kernel passes and out[i] == 2*in[i]

extern "C" __global__ void assert_kernel(const unsigned *in, unsigned *out, unsigned bad)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    assert(v != bad);
    out[i] = 2 * v;
}
