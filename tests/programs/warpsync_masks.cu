// __syncwarp(mask) / bar.warp.sync with partial member masks orders memory among the lanes
// that take part (PTX ISA, bar.warp.sync). Each shape splits every warp into groups that
// synchronize on their own, at one instruction at once; each lane then reads a word another
// lane of its own group wrote. Built with -DCROSS each lane reads from the *next* group
// instead: nothing orders that pair (a race; `weak` may read the old value).
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

#define SHAPES 7

// Group size and layout of shape s for `lane`: its member mask and the lane it reads.
__host__ __device__ static void shape(int s, unsigned lane, unsigned *mask, unsigned *peer) {
    unsigned m, p;
    switch (s) {
    case 0: // halves
        m = lane < 16 ? 0x0000ffffu : 0xffff0000u;
        p = (lane & ~15u) | ((lane + 1) & 15u);
        break;
    case 1: // even and odd lanes
        m = (lane & 1) ? 0xaaaaaaaau : 0x55555555u;
        p = (lane + 2) & 31u;
        break;
    case 2: // groups of 8
        m = 0xffu << (lane & ~7u);
        p = (lane & ~7u) | ((lane + 3) & 7u);
        break;
    case 3: // groups of 4
        m = 0xfu << (lane & ~3u);
        p = (lane & ~3u) | ((lane + 1) & 3u);
        break;
    case 4: // uneven: lanes 0-2, then 3-31
        m = lane < 3 ? 0x7u : 0xfffffff8u;
        p = lane < 3 ? (lane + 1) % 3 : 3 + (lane - 3 + 5) % 29;
        break;
    case 5: // lanes by residue mod 3 (three interleaved groups)
        m = 0;
        for (unsigned l = lane % 3; l < 32; l += 3) m |= 1u << l;
        p = lane + 3 < 32 ? lane + 3 : lane % 3;
        break;
    default: // the whole warp
        m = 0xffffffffu;
        p = (lane + 5) & 31u;
        break;
    }
#ifdef CROSS
    // A lane of another group (the reader's own group is still the one it syncs with).
    if (s == 0) p = lane ^ 16u;
    else if (s == 1) p = lane ^ 1u;
    else if (s == 2) p = lane ^ 8u;
    else if (s == 3) p = lane ^ 4u;
    else if (s == 4) p = lane < 3 ? 3 + lane : 0;
    else if (s == 5) p = lane % 3 == 2 ? lane - 2 : lane + 1;
    else p = lane; // (whole warp: nothing to cross; reads its own word)
#endif
    *mask = m;
    *peer = p;
}

__global__ void sync_masks(int *out, int s) {
    __shared__ int sh[128];
    unsigned t = threadIdx.x, lane = t % 32, mask, peer;
    shape(s, lane, &mask, &peer);
    sh[t] = (int)t * 7 + s + 1;
    __syncwarp(mask);
    out[t] = sh[(t & ~31u) | peer];
}

// Cooperative-groups tiles: tile.sync() is bar.warp.sync with the tile's mask.
template <int N>
__global__ void tile_sync(int *out) {
    __shared__ int sh[128];
    auto b = cg::this_thread_block();
    auto tile = cg::tiled_partition<N>(b);
    unsigned t = b.thread_rank();
    sh[t] = (int)t * 3 + N;
    tile.sync();
    unsigned base = t - tile.thread_rank();
#ifdef CROSS
    out[t] = sh[(base + N + tile.thread_rank()) % 128];
#else
    out[t] = sh[base + (tile.thread_rank() + 1) % N];
#endif
}

int main() {
    const int n = 128;
    int *d;
    cudaMalloc(&d, n * sizeof(int));
    int h[n], bad = 0;
    for (int s = 0; s < SHAPES; ++s) {
        cudaMemset(d, 0, n * sizeof(int));
        sync_masks<<<1, n>>>(d, s);
        cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
        for (int t = 0; t < n; ++t) {
            unsigned mask, peer;
            shape(s, t % 32, &mask, &peer);
            int want = (int)((t & ~31) | peer) * 7 + s + 1;
            if (h[t] != want) {
                if (bad < 8) printf("MISMATCH shape %d thread %d: %d, want %d\n", s, t, h[t], want);
                bad++;
            }
        }
    }
    int tiles[3] = {4, 8, 16};
    for (int k = 0; k < 3; ++k) {
        int N = tiles[k];
        cudaMemset(d, 0, n * sizeof(int));
        if (N == 4) tile_sync<4><<<1, n>>>(d);
        if (N == 8) tile_sync<8><<<1, n>>>(d);
        if (N == 16) tile_sync<16><<<1, n>>>(d);
        cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
        for (int t = 0; t < n; ++t) {
            int base = t - t % N;
#ifdef CROSS
            int src = (base + N + t % N) % n;
#else
            int src = base + (t % N + 1) % N;
#endif
            if (h[t] != src * 3 + N) {
                if (bad < 8) printf("MISMATCH tile %d thread %d: %d, want %d\n", N, t, h[t], src * 3 + N);
                bad++;
            }
        }
    }
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("CUDA error\n"); return 2; }
    if (bad) { printf("FAILED: %d mismatches\n", bad); return 1; }
    printf("OK: %d mask shapes and 3 tile sizes\n", SHAPES);
    return 0;
}
