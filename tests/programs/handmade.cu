// Hand-written synchronization as CUDA programmers write it without a library:
//  grid_barrier   a sense-reversing grid barrier (atomicAdd on a counter, the last block
//                 resets it and flips a volatile sense word; __threadfence() around),
//                 used twice by a stencil that reads its neighbours' blocks after it;
//  lookback       a single-pass prefix sum over blocks with a hand-made decoupled
//                 look-back: each block publishes (value << 2 | status) in one 64-bit
//                 word with atomicExch, its successors poll the words with volatile loads;
//  warp_agg       warp-aggregated atomics: __match_any_sync groups the lanes of a warp by
//                 bin, the group's leader adds the group's count (one atomicAdd per bin);
//  shared_flags   message passing between warps of one block through shared memory with
//                 cuda::atomic_ref<int, thread_scope_block> release/acquire, no barrier;
//  max64          a float maximum with a 64-bit atomicCAS loop on a packed (value, index).
// All correct: they pass under every model and the race check is silent. -DBROKEN drops
// the __threadfence() before the barrier's arrival (the stencil then reads its
// neighbours' old values) and makes the shared flags relaxed (warp 1 copies stale
// words): the default model fails it and the race check reports both. (It also drops
// the look-back's fences, which its words do not need: each carries its own payload.)
// Every result is checked on the host; exit 1 on any mismatch. Built with
// `fencehound nvcc -arch=sm_80`, run by tests/it/cli_programs.rs.
#include <cuda/atomic>
#include <cstdio>
#include <vector>
#include <cstring>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("MISMATCH CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

#ifdef BROKEN
#define FENCE() do { } while (0)
#define REL cuda::memory_order_relaxed
#define ACQ cuda::memory_order_relaxed
#else
#define FENCE() __threadfence()
#define REL cuda::memory_order_release
#define ACQ cuda::memory_order_acquire
#endif

__device__ void grid_barrier(unsigned *count, volatile unsigned *sense, unsigned *local_sense) {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned s = !*local_sense;
    *local_sense = s;
    FENCE();
    if (atomicAdd(count, 1u) == gridDim.x - 1) {
      *count = 0;
      __threadfence();
      *sense = s;
    } else {
      while (*sense != s) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

constexpr int SB = 64;

// Two steps of a 1-D three-point average over blocks of SB, ping-ponging between a and b;
// each step reads the neighbouring blocks' edge values written in the previous step.
__global__ void stencil(float *a, float *b, unsigned *count, unsigned *sense) {
  __shared__ unsigned local_sense;
  if (threadIdx.x == 0) local_sense = 0;
  int n = gridDim.x * SB, i = blockIdx.x * SB + threadIdx.x;
  float *src = a, *dst = b;
  for (int step = 0; step < 2; step++) {
    float l = src[(i + n - 1) % n], c = src[i], r = src[(i + 1) % n];
    dst[i] = (l + c + r) / 3.0f;
    grid_barrier(count, sense, &local_sense);
    float *t = src; src = dst; dst = t;
  }
}

constexpr int LB = 128;

// Inclusive prefix sum of in[] over blocks: each block sums its tile, publishes its
// aggregate (status 1), looks back over its predecessors' words until it meets an
// inclusive prefix (status 2), then publishes its own inclusive prefix.
__global__ void lookback(const unsigned *in, unsigned *out, unsigned long long *status, unsigned *ticket) {
  __shared__ unsigned tile[LB];
  __shared__ unsigned block_id;
  __shared__ unsigned long long exclusive;
  if (threadIdx.x == 0) block_id = atomicAdd(ticket, 1u);  // blocks in the order they start
  __syncthreads();
  unsigned b = block_id;
  tile[threadIdx.x] = in[b * LB + threadIdx.x];
  __syncthreads();
  for (int off = 1; off < LB; off *= 2) {
    unsigned v = threadIdx.x >= off ? tile[threadIdx.x - off] : 0;
    __syncthreads();
    tile[threadIdx.x] += v;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    unsigned long long agg = tile[LB - 1];
    if (b == 0) {
      FENCE();
      atomicExch(&status[0], agg << 2 | 2);
      exclusive = 0;
    } else {
      FENCE();
      atomicExch(&status[b], agg << 2 | 1);
      unsigned long long sum = 0;
      for (int p = (int)b - 1; p >= 0; p--) {
        unsigned long long w;
        do {
          w = *(volatile unsigned long long *)&status[p];
        } while ((w & 3) == 0);
        sum += w >> 2;
        if ((w & 3) == 2) break;
      }
      exclusive = sum;
      FENCE();
      atomicExch(&status[b], (sum + agg) << 2 | 2);
    }
  }
  __syncthreads();
  out[b * LB + threadIdx.x] = (unsigned)exclusive + tile[threadIdx.x];
}

constexpr int BINS = 16;

__global__ void warp_agg(const unsigned *keys, unsigned *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned bin = keys[i] % BINS;
  unsigned peers = __match_any_sync(__activemask(), bin);
  int leader = __ffs(peers) - 1;
  if ((threadIdx.x & 31) == leader) atomicAdd(&hist[bin], __popc(peers));
}

// Warp 0 writes 32 words and sets the flag (block-scope release); warp 1 waits for it
// (block-scope acquire) and copies the words. Round k uses flag k.
__global__ void shared_flags(unsigned *out) {
  __shared__ unsigned data[4][32];
  __shared__ int flag[4];
  if (threadIdx.x < 4) flag[threadIdx.x] = 0;
  __syncthreads();
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 0; k < 4; k++) {
    cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[k]);
    if (warp == 0) {
      data[k][lane] = 1000 * k + lane + blockIdx.x;
      __syncwarp();
      if (lane == 0) f.store(1, REL);
    } else if (warp == 1) {
      if (lane == 0) {
        while (f.load(ACQ) == 0) {
        }
      }
      __syncwarp();
      out[(blockIdx.x * 4 + k) * 32 + lane] = data[k][lane];
    }
  }
}

__device__ unsigned long long pack(float v, unsigned idx) {
  unsigned bits;
  memcpy(&bits, &v, 4);
  return (unsigned long long)bits << 32 | idx;
}

// Every value is positive, so its bits order as the floats do.
__global__ void max64(const float *v, unsigned long long *best, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long mine = pack(v[i], i), old = *(volatile unsigned long long *)best;
  while (mine > old) {
    unsigned long long prev = atomicCAS(best, old, mine);
    if (prev == old) break;
    old = prev;
  }
}

template <class T> static T *dev(size_t n) {
  T *p = nullptr;
  if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess || cudaMemset(p, 0, n * sizeof(T)) != cudaSuccess) return nullptr;
  return p;
}

static int bad = 0;
#define EXPECT(cond, ...) do { if (!(cond)) { if (bad < 20) { printf("MISMATCH " __VA_ARGS__); printf("\n"); } bad++; } } while (0)

int main() {
  {
    const int blocks = 8, n = blocks * SB;
    std::vector<float> h(n);
    for (int i = 0; i < n; i++) h[i] = (float)((i * 7) % 13);
    std::vector<float> ref = h, tmp(n);
    for (int step = 0; step < 2; step++) {
      for (int i = 0; i < n; i++) tmp[i] = (ref[(i + n - 1) % n] + ref[i] + ref[(i + 1) % n]) / 3.0f;
      ref = tmp;
    }
    float *a = dev<float>(n), *b = dev<float>(n);
    unsigned *count = dev<unsigned>(1), *sense = dev<unsigned>(1);
    if (!a || !b || !count || !sense) { printf("MISMATCH cudaMalloc\n"); return 1; }
    CHECK(cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    stencil<<<blocks, SB>>>(a, b, count, sense);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == ref[i], "stencil %d: %f, expected %f", i, h[i], ref[i]);
  }
  {
    const int blocks = 12, n = blocks * LB;
    std::vector<unsigned> h(n), r(n);
    for (int i = 0; i < n; i++) h[i] = (i * 5) % 9;
    unsigned *in = dev<unsigned>(n), *out = dev<unsigned>(n), *ticket = dev<unsigned>(1);
    unsigned long long *status = dev<unsigned long long>(blocks);
    if (!in || !out || !ticket || !status) { printf("MISMATCH cudaMalloc\n"); return 1; }
    CHECK(cudaMemcpy(in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    lookback<<<blocks, LB>>>(in, out, status, ticket);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(r.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned s = 0;
    for (int i = 0; i < n; i++) { s += h[i]; EXPECT(r[i] == s, "lookback %d: %u, expected %u", i, r[i], s); }
  }
  {
    const int n = 1000;
    std::vector<unsigned> k(n);
    unsigned expect[BINS] = {0};
    for (int i = 0; i < n; i++) { k[i] = (i * 2654435761u) >> 7; expect[k[i] % BINS]++; }
    unsigned *keys = dev<unsigned>(n), *hist = dev<unsigned>(BINS);
    if (!keys || !hist) { printf("MISMATCH cudaMalloc\n"); return 1; }
    CHECK(cudaMemcpy(keys, k.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    warp_agg<<<(n + 127) / 128, 128>>>(keys, hist, n);
    CHECK(cudaDeviceSynchronize());
    unsigned h[BINS];
    CHECK(cudaMemcpy(h, hist, sizeof h, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BINS; b++) EXPECT(h[b] == expect[b], "warp_agg bin %d: %u, expected %u", b, h[b], expect[b]);
  }
  {
    const int blocks = 3;
    unsigned *out = dev<unsigned>(blocks * 4 * 32);
    if (!out) { printf("MISMATCH cudaMalloc\n"); return 1; }
    shared_flags<<<blocks, 64>>>(out);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> h(blocks * 4 * 32);
    CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
      for (int k = 0; k < 4; k++)
        for (int l = 0; l < 32; l++) {
          unsigned got = h[(b * 4 + k) * 32 + l], want = 1000 * k + l + b;
          EXPECT(got == want, "shared_flags block %d round %d lane %d: %u, expected %u", b, k, l, got, want);
        }
  }
  {
    const int n = 777;
    std::vector<float> v(n);
    int arg = 0;
    for (int i = 0; i < n; i++) { v[i] = 1.0f + (float)((i * 37) % 501); if (v[i] > v[arg]) arg = i; }
    float *dv = dev<float>(n);
    unsigned long long *best = dev<unsigned long long>(1);
    if (!dv || !best) { printf("MISMATCH cudaMalloc\n"); return 1; }
    CHECK(cudaMemcpy(dv, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    max64<<<(n + 63) / 64, 64>>>(dv, best, n);
    CHECK(cudaDeviceSynchronize());
    unsigned long long h = 0;
    CHECK(cudaMemcpy(&h, best, sizeof h, cudaMemcpyDeviceToHost));
    unsigned bits = (unsigned)(h >> 32);
    float got;
    memcpy(&got, &bits, 4);
    EXPECT(got == v[arg], "max64: %f, expected %f", got, v[arg]);
  }
  if (bad) return 1;
  printf("OK: handmade\n");
  return 0;
}
