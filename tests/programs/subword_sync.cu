// Release/acquire through sub-word and mixed-size accesses. Every form synchronizes on
// hardware and in CUDA C++; the tool's models used to see none of them:
//   form 0: libcu++ `cuda::atomic_ref<unsigned char>` store(release) / load(acquire) on a
//           byte flag array — compiled to a 32-bit `atom.cas.release` on the enclosing
//           word and a 16-bit `ld.acquire` of the enclosing half-word;
//   form 1: `cuda::atomic_ref<bool>`, the same code paths on a bool array;
//   form 2: an 8-bit `ld.acquire` of a byte of a 32-bit `st.release`;
//   form 3: a 32-bit `ld.acquire` of a half of a 64-bit `st.release`;
//   form 4: a 16-bit `ld.acquire` of a 64-bit `st.release`;
//   form 5: a 32-bit flag its producer first writes bytewise (plain stores, before its
//           first flag), then with a 32-bit `st.release`, read with a 32-bit `ld.acquire` (same size, complete
//           overlap, but an older mixed-size history of the word).
// The data is written as 64-bit words and read as 32-bit halves (mixed-size data after
// the synchronization). PTX's "morally strong" asks for complete overlap, so by its letter
// forms 0-4 are races; libcu++ relies on containment and so do we (handlers/src/weak.rs,
// `containing`). Built with -DRELAXED every flag access is relaxed: a real bug, which
// the default model exposes and the race check reports.
#include <cstdio>
#include <cuda/atomic>

#ifdef RELAXED
#define REL cuda::memory_order_relaxed
#define ACQ cuda::memory_order_relaxed
#define ST_REL "st.relaxed.gpu.global"
#define LD_ACQ "ld.relaxed.gpu.global"
#else
#define REL cuda::memory_order_release
#define ACQ cuda::memory_order_acquire
#define ST_REL "st.release.gpu.global"
#define LD_ACQ "ld.acquire.gpu.global"
#endif

constexpr int FORMS = 6, LANES = 8;

__device__ unsigned long long data[FORMS][LANES];
__device__ unsigned char byte_flags[LANES];
__device__ bool bool_flags[LANES];
__device__ unsigned word_flags[LANES];
__device__ unsigned long long wide_flags[LANES];
__device__ unsigned long long wide16_flags[LANES];
__device__ unsigned mixed_flags[LANES];

__device__ void st_rel32(unsigned *p, unsigned v) {
    asm volatile(ST_REL ".u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ void st_rel64(unsigned long long *p, unsigned long long v) {
    asm volatile(ST_REL ".u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ unsigned ld_acq8(const void *p) {
    unsigned short v;
    asm volatile(LD_ACQ ".u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
__device__ unsigned ld_acq16(const void *p) {
    unsigned short v;
    asm volatile(LD_ACQ ".u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
__device__ unsigned ld_acq32(const void *p) {
    unsigned v;
    asm volatile(LD_ACQ ".u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ unsigned long long value(int form, int lane) {
    return 0x0123456789abcdefull * (form + 1) + lane;
}

// Producer: CTA 1 + lane (thread 0) publishes data[form][lane] through each form's flag,
// each form's data after the previous form's flag (so that each form is checked alone: an
// earlier form's synchronization does not order a later form's data).
__device__ void produce(int lane) {
    // Form 5's older history, before the first flag: ordered before every consumer read.
    unsigned char *b = reinterpret_cast<unsigned char *>(&mixed_flags[lane]);
    for (int i = 0; i < 4; ++i) b[i] = 0x10 + i;
    data[0][lane] = value(0, lane);
    cuda::atomic_ref<unsigned char, cuda::thread_scope_device>(byte_flags[lane]).store(1, REL);
    data[1][lane] = value(1, lane);
    cuda::atomic_ref<bool, cuda::thread_scope_device>(bool_flags[lane]).store(true, REL);
    data[2][lane] = value(2, lane);
    st_rel32(&word_flags[lane], 0x01010101u);
    data[3][lane] = value(3, lane);
    st_rel64(&wide_flags[lane], 0x0000000100000001ull);
    data[4][lane] = value(4, lane);
    st_rel64(&wide16_flags[lane], 0x0001000100010001ull);
    data[5][lane] = value(5, lane);
    st_rel32(&mixed_flags[lane], 0x01000000u);
}

// Consumer: lane `lane` of CTA 0 acquires each flag, then checks the data as halves.
__device__ int consume(int lane) {
    while (cuda::atomic_ref<unsigned char, cuda::thread_scope_device>(byte_flags[lane]).load(ACQ) != 1) {
    }
    int bad = 0;
    auto check = [&](int f) {
        const unsigned *h = reinterpret_cast<const unsigned *>(&data[f][lane]);
        unsigned long long v = (unsigned long long)h[1] << 32 | h[0];
        if (v != value(f, lane)) {
            printf("MISMATCH form %d lane %d: read %llx, want %llx\n", f, lane, v, value(f, lane));
            bad++;
        }
    };
    check(0);
    while (!cuda::atomic_ref<bool, cuda::thread_scope_device>(bool_flags[lane]).load(ACQ)) {
    }
    check(1);
    while (ld_acq8(reinterpret_cast<const char *>(&word_flags[lane]) + 2) != 1) {
    }
    check(2);
    while (ld_acq32(reinterpret_cast<const unsigned *>(&wide_flags[lane]) + 1) != 1) {
    }
    check(3);
    while (ld_acq16(reinterpret_cast<const unsigned short *>(&wide16_flags[lane]) + 3) != 1) {
    }
    check(4);
    while (ld_acq32(&mixed_flags[lane]) != 0x01000000u) {
    }
    check(5);
    return bad;
}

__global__ void subword_sync(int *bad) {
    int lane = threadIdx.x;
    if (blockIdx.x >= 1 && lane == 0) produce(blockIdx.x - 1);
    if (blockIdx.x == 0 && lane < LANES) atomicAdd(bad, consume(lane));
}

int main() {
    int *bad;
    cudaMalloc(&bad, sizeof(int));
    cudaMemset(bad, 0, sizeof(int));
    subword_sync<<<1 + LANES, 32>>>(bad);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("CUDA error\n");
        return 2;
    }
    int h = 0;
    cudaMemcpy(&h, bad, sizeof(int), cudaMemcpyDeviceToHost);
    if (h) return 1;
    printf("OK: %d forms of sub-word release/acquire delivered their data\n", FORMS);
    return 0;
}
