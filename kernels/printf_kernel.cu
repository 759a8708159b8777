// fencehound-corpus: device printf (vprintf) with int, unsigned, long long, hex, char, string, float and double arguments; only lane 0 of each warp prints
// categories: printf, call, local, module-var
// nvrtc-flags: none
// launch: grid=2 block=64 dynamic_shared=0
// args: scale:f32=1.5, tag:u32=7
// expect: captured output has exactly 4 lines, one per (block, warp): "block B warp W: tid=T id=0xHEX ll=-N c=Z s=fencehound f=F d=D tag=7"; with F == T*1.5 formatted %.2f and D == -T/4 formatted %.3f

extern "C" __global__ void printf_kernel(float scale, unsigned tag)
{
    unsigned t = threadIdx.x;
    if ((t & 31) != 0) return;
    unsigned gid = blockIdx.x * blockDim.x + t;
    long long big = -(long long)gid * 1000000007ll;
    printf("block %d warp %u: tid=%u id=0x%08x ll=%lld c=%c s=%s f=%.2f d=%.3f tag=%u\n",
           (int)blockIdx.x, t / 32, gid, gid * 0x01010101u, big, 'Z', "fencehound",
           (float)gid * scale, -(double)gid / 4.0, tag);
}
