// fencehound-corpus: __trap() on a data-dependent condition (after some stores), and a brkpt-free trap path via inline asm
// categories: trap
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: in:u32[32] iota, out:u32[32] zero, limit:u32=100
// expect: with limit=100 and in=iota: out[i] == in[i] + 1, no trap; with limit=10: trap verdict (threads with in[i] > 10 execute trap)

extern "C" __global__ void trap_kernel(const unsigned *in, unsigned *out, unsigned limit)
{
    unsigned i = threadIdx.x;
    unsigned v = in[i];
    out[i] = v + 1;
    if (v > limit) {
        __trap();
    }
    if (v == 0xffffffffu) {
        asm volatile("trap;");
    }
}
