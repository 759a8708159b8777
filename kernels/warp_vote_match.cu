// fencehound-corpus: warp votes and matches: __ballot_sync, __any_sync, __all_sync, __activemask under divergence, __match_any_sync, __match_all_sync (int and 64-bit), __popc of ballots
// categories: warp
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: in:u32[64] iota, out:u32[512] zero
// expect: with lane = i % 32: out[8i+0] == 0x55555555 (ballot of even lanes); out[8i+1] == 1; out[8i+2] == 0; out[8i+3] contains bit lane and is a subset of (lane < 16 ? 0x0000ffff : 0xffff0000) (activemask in a divergent branch; exact on a converged scheduler); out[8i+4] == mask of lanes with equal (lane / 4) i.e. 0xf << (4*(lane/4)); out[8i+5] == 0xffffffff (match_all of a uniform value); out[8i+6] == 1 (pred of match_all); out[8i+7] == (lane even ? 0x55555555 : 0xaaaaaaaa) (64-bit match_any on lane parity)

extern "C" __global__ void warp_vote_match(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    unsigned v = in[i];
    unsigned *o = out + 8 * i;
    const unsigned full = 0xffffffffu;
    o[0] = __ballot_sync(full, (v & 1) == 0);
    o[1] = (unsigned)__any_sync(full, lane == 7);
    o[2] = (unsigned)__all_sync(full, lane != 7);
    if (lane < 16) {
        o[3] = __activemask();
    } else {
        o[3] = __activemask();
    }
    o[4] = __match_any_sync(full, lane / 4);
    int pred = 0;
    o[5] = __match_all_sync(full, v / 64, &pred);
    o[6] = (unsigned)pred;
    unsigned long long key = (unsigned long long)(lane & 1) << 40;
    o[7] = __match_any_sync(full, key);
}
