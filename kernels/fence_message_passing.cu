// fencehound-corpus: cross-CTA message passing (data, __threadfence, volatile flag; consumer spins, fences, reads); -DFENCEHOUND_NO_FENCE removes both fences (the bug variant)
// categories: fence, warp, algorithm
// nvrtc-flags: none
// launch: grid=2 block=32 dynamic_shared=0
// args: data:u32[32] zero, flag:u32[1] zero, out:u32[32] zero
// expect: out[i] == i*i + 1 for i in 0..31 (with the fences); the NO_FENCE variant may fail under buffering

extern "C" __global__ void fence_message_passing(unsigned *data, volatile unsigned *flag, unsigned *out)
{
    unsigned lane = threadIdx.x;
    if (blockIdx.x == 0) {
        data[lane] = lane * lane + 1;
#ifndef FENCEHOUND_NO_FENCE
        __threadfence();                 /* make the data visible before the flag */
#endif
        __syncwarp();
        if (lane == 0) *flag = 1;
    } else {
        if (lane == 0) {
            while (*flag == 0) { }
        }
        __syncwarp();
#ifndef FENCEHOUND_NO_FENCE
        __threadfence();
#endif
        out[lane] = ((volatile unsigned *)data)[lane];
    }
}
