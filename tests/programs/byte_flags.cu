// Eight message passings whose byte flags share one 8-byte block: CTA b (1..8) writes
// data[b], release-stores flags[b-1] = 1, writes data[b+8], release-stores 2; thread t of
// CTA 0 acquires each value of flags[t] and reads the data after it. Every pair
// synchronizes. The `weak` model's history of a block holds fewer entries than the block
// has byte locations: a location whose only entry was dropped was read from memory without
// its message, and the data after the acquire read stale (UNSOUND.md, weak-byte-flags).
// Built with -DRELAXED the flags are relaxed: a real bug, which the default model exposes.
#include <cstdio>

__device__ int data[24];
__device__ unsigned char flags[8];

#ifdef RELAXED
#define ST "st.relaxed.gpu.global.u8"
#define LD "ld.relaxed.gpu.global.u8"
#else
#define ST "st.release.gpu.global.u8"
#define LD "ld.acquire.gpu.global.u8"
#endif

__device__ __forceinline__ void put(unsigned char *p, unsigned v) {
    asm volatile(ST " [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned get(const unsigned char *p) {
    unsigned v;
    asm volatile(LD " %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void byte_flags(int *out) {
    int t = threadIdx.x, b = blockIdx.x;
    if (b >= 1 && t == 0) {
        data[b] = 100 + b;
        put(&flags[b - 1], 1);
        data[b + 8] = 200 + b;
        put(&flags[b - 1], 2);
    }
    if (b == 0 && t < 8) {
        while (get(&flags[t]) == 0) {
        }
        out[t] = data[t + 1];
        while (get(&flags[t]) != 2) {
        }
        out[t + 8] = data[t + 9];
    }
}

int main() {
    int *d;
    cudaMalloc(&d, 16 * sizeof(int));
    cudaMemset(d, 0, 16 * sizeof(int));
    byte_flags<<<9, 64>>>(d);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("CUDA error\n");
        return 2;
    }
    int h[16], bad = 0;
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 8; ++i) {
        if (h[i] != 101 + i || h[i + 8] != 201 + i) {
            printf("MISMATCH flag %d: read %d and %d, want %d and %d\n", i, h[i], h[i + 8],
                   101 + i, 201 + i);
            bad++;
        }
    }
    if (bad) return 1;
    printf("OK: eight byte flags delivered their data twice\n");
    return 0;
}
