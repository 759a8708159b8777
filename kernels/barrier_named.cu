// fencehound-corpus: named barriers via inline PTX: producer warps bar.arrive, consumer warps bar.sync with a thread count; barrier.sync, barrier.sync.aligned, bar.sync 0, bar.red.popc with a count
// categories: barrier, shared
// nvrtc-flags: none
// launch: grid=1 block=128 dynamic_shared=0
// args: out:u32[192] zero
// expect: out[i] == 2*i + 1 for i in 0..63 (consumers read what producers wrote after bar.arrive/bar.sync 1,128); out[64+i] == 63 - i for i in 0..63 (producer-only barrier 2,64); out[128+k] == 128 for k in 0..63 (bar.red.popc count)

extern "C" __global__ void barrier_named(unsigned *out)
{
    __shared__ unsigned buf[64];
    __shared__ unsigned buf2[64];
    unsigned t = threadIdx.x;
    if (t < 64) {
        /* producers: warps 0-1 */
        buf[t] = 2 * t + 1;
        asm volatile("bar.arrive 1, 128;" ::: "memory");      /* signal consumers, don't wait */
        buf2[t] = t;
        asm volatile("bar.sync 2, 64;" ::: "memory");          /* producers only */
        out[64 + t] = buf2[63 - t];                            /* written by another producer */
    } else {
        /* consumers: warps 2-3 */
        asm volatile("barrier.sync 1, 128;" ::: "memory");     /* wait for producers' arrive */
        out[t - 64] = buf[t - 64];
    }
    asm volatile("barrier.sync.aligned 3;" ::: "memory");     /* all 128 threads */
    asm volatile("bar.sync 0;" ::: "memory");
    unsigned cnt;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 1000;\n\t"
                 "bar.red.popc.u32 %0, 4, 128, p;\n\t}"
                 : "=r"(cnt) : "r"(t) : "memory");
    if (t < 64) out[128 + t] = cnt;
}
