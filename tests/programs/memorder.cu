// The C++ memory orders through libcu++, each in a shape the PTX memory model decides:
//  sb_seq_cst     store buffering between two blocks with seq_cst atomics (r0 == r1 == 0
//                 forbidden: libcu++ gives a seq_cst load a fence.sc first);
//  sb_fence       the same with relaxed atomics and atomic_thread_fence(seq_cst);
//  iriw           two writers, two readers reading in opposite orders with seq_cst loads
//                 (the readers disagreeing on the order of the writes is forbidden);
//  release_seq    a release store of a flag continued by relaxed fetch_adds of other
//                 blocks: an acquire that reads the last add synchronizes with the store
//                 (PTX's observation order runs through the RMWs), so the payload is seen;
//  flag_lock      an atomic_flag spin lock (test_and_set acquire, clear release) around
//                 plain read-modify-writes of a counter, one thread per warp of 8 blocks;
//  peterson       Peterson's lock between two blocks in the classic CUDA form (volatile
//                 words, __threadfence());
//  ticket         a last-block reduction whose ticket is a fetch_add(acq_rel): the last
//                 block's thread 0 acquires every partial, the block reads them after
//                 __syncthreads().
// All correct: they pass under every model and the race check is silent — sb_fence's
// words and Peterson's `turn` are store-buffering handshakes, unordered by design
// (racecheck: `RaceCheck::handshake`). -DRELAXED makes every order relaxed and drops the
// fences: then each forbidden outcome is allowed, the lock and the payloads race, the
// default model fails the program and the race check reports it.
// Every result is checked on the host; exit 1 on any mismatch. Built with
// `fencehound nvcc -arch=sm_80`, run by tests/it/cli_programs.rs.
#include <cuda/atomic>
#include <cuda/std/atomic>
#include <cstdio>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("MISMATCH CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

#ifdef RELAXED
#define SC cuda::memory_order_relaxed
#define REL cuda::memory_order_relaxed
#define ACQ cuda::memory_order_relaxed
#define ACQ_REL cuda::memory_order_relaxed
#define FENCE() do { } while (0)
#else
#define SC cuda::memory_order_seq_cst
#define REL cuda::memory_order_release
#define ACQ cuda::memory_order_acquire
#define ACQ_REL cuda::memory_order_acq_rel
#define FENCE() cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device)
#endif

using ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
constexpr int ROUNDS = 64;

// Block 2k and 2k+1 play round k: each stores its own variable and loads the other's.
__global__ void sb_seq_cst(int *x, int *y, int *r) {
  int k = blockIdx.x / 2, side = blockIdx.x % 2;
  if (threadIdx.x != 0) return;
  ref mine(side ? y[k] : x[k]), theirs(side ? x[k] : y[k]);
  mine.store(1, SC);
  r[2 * k + side] = theirs.load(SC);
}

__global__ void sb_fence(int *x, int *y, int *r) {
  int k = blockIdx.x / 2, side = blockIdx.x % 2;
  if (threadIdx.x != 0) return;
  ref mine(side ? y[k] : x[k]), theirs(side ? x[k] : y[k]);
  mine.store(1, cuda::memory_order_relaxed);
  FENCE();
  r[2 * k + side] = theirs.load(cuda::memory_order_relaxed);
}

// Blocks 4k..4k+3: 0 writes x, 1 writes y, 2 reads x then y, 3 reads y then x.
__global__ void iriw(int *x, int *y, int *r) {
  int k = blockIdx.x / 4, role = blockIdx.x % 4;
  if (threadIdx.x != 0) return;
  ref a(x[k]), b(y[k]);
  if (role == 0) a.store(1, SC);
  if (role == 1) b.store(1, SC);
  if (role == 2) { r[4 * k + 0] = a.load(SC); r[4 * k + 1] = b.load(SC); }
  if (role == 3) { r[4 * k + 2] = b.load(SC); r[4 * k + 3] = a.load(SC); }
}

constexpr int WORDS = 32;
constexpr int ADDERS = 6;

// Block 0 writes the payload and release-stores 1; blocks 1..ADDERS wait for the flag
// (relaxed) and add 1 (relaxed); block ADDERS+1 waits for 1 + ADDERS with an acquire load
// and copies the payload.
__global__ void release_seq(int *payload, int *flag, int *copy) {
  ref f(*flag);
  if (blockIdx.x == 0) {
    if (threadIdx.x < WORDS) payload[threadIdx.x] = 7000 + threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) f.store(1, REL);
  } else if (blockIdx.x <= ADDERS) {
    if (threadIdx.x == 0) {
      while (f.load(cuda::memory_order_relaxed) == 0) {
      }
      f.fetch_add(1, cuda::memory_order_relaxed);
    }
  } else {
    __shared__ int go;
    if (threadIdx.x == 0) {
      while (f.load(ACQ) != 1 + ADDERS) {
      }
      go = 1;
    }
    __syncthreads();
    if (go && threadIdx.x < WORDS) copy[threadIdx.x] = payload[threadIdx.x];
  }
}

// One thread per warp takes the lock 4 times; the counter is a plain int.
__global__ void flag_lock(cuda::std::atomic_flag *lock, int *counter) {
  if (threadIdx.x % 32 != 0) return;
  for (int i = 0; i < 4; i++) {
#ifdef RELAXED
    while (lock->test_and_set(cuda::std::memory_order_relaxed)) {
    }
    *counter = *counter + 1;
    lock->clear(cuda::std::memory_order_relaxed);
#else
    while (lock->test_and_set(cuda::std::memory_order_acquire)) {
    }
    *counter = *counter + 1;
    lock->clear(cuda::std::memory_order_release);
#endif
  }
}


// Peterson's lock between two blocks in the classic CUDA form: volatile flags and turn,
// __threadfence() between the two announcing stores (PTX orders no two stores without
// one), between announcing and checking (the store-buffering fence), after the wait
// (acquire) and before the release.
__global__ void peterson(volatile int *flag, volatile int *turn, int *counter) {
  int me = blockIdx.x, other = 1 - me;
  if (threadIdx.x != 0) return;
  for (int i = 0; i < 8; i++) {
    flag[me] = 1;
#ifndef RELAXED
    __threadfence();  // the flag before the turn: PTX keeps two stores in no order
#endif
    *turn = other;
#ifndef RELAXED
    __threadfence();
#endif
    while (flag[other] && *turn == other) {
    }
#ifndef RELAXED
    __threadfence();
#endif
    *counter = *counter + 1;
#ifndef RELAXED
    __threadfence();
#endif
    flag[me] = 0;
  }
}

constexpr int TB = 64;

__global__ void ticket(const int *in, int *partial, int *count, int *out) {
  __shared__ int s[TB];
  __shared__ bool last;
  s[threadIdx.x] = in[blockIdx.x * TB + threadIdx.x];
  __syncthreads();
  for (int w = TB / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    last = ref(*count).fetch_add(1, ACQ_REL) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    // Each thread sums a strided part of the partials, thread 0 the rest after a barrier.
    int sum = 0;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += TB) sum += partial[b];
    s[threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      int total = 0;
      for (int t = 0; t < TB; t++) total += s[t];
      *out = total;
    }
  }
}

template <class T> static T *dev(size_t n) {
  T *p = nullptr;
  if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess || cudaMemset(p, 0, n * sizeof(T)) != cudaSuccess) return nullptr;
  return p;
}

static int bad = 0;
#define EXPECT(cond, ...) do { if (!(cond)) { printf("MISMATCH " __VA_ARGS__); printf("\n"); bad++; } } while (0)

int main() {
  // Store buffering, two forms.
  for (int form = 0; form < 2; form++) {
    int *x = dev<int>(ROUNDS), *y = dev<int>(ROUNDS), *r = dev<int>(2 * ROUNDS);
    if (!x || !y || !r) { printf("MISMATCH cudaMalloc\n"); return 1; }
    if (form == 0) sb_seq_cst<<<2 * ROUNDS, 32>>>(x, y, r);
    else sb_fence<<<2 * ROUNDS, 32>>>(x, y, r);
    CHECK(cudaDeviceSynchronize());
    std::vector<int> h(2 * ROUNDS);
    CHECK(cudaMemcpy(h.data(), r, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int k = 0; k < ROUNDS; k++)
      EXPECT(h[2 * k] || h[2 * k + 1], "%s round %d: both loads read 0", form ? "sb_fence" : "sb_seq_cst", k);
    cudaFree(x); cudaFree(y); cudaFree(r);
  }
  {
    int *x = dev<int>(ROUNDS), *y = dev<int>(ROUNDS), *r = dev<int>(4 * ROUNDS);
    if (!x || !y || !r) { printf("MISMATCH cudaMalloc\n"); return 1; }
    iriw<<<4 * ROUNDS, 32>>>(x, y, r);
    CHECK(cudaDeviceSynchronize());
    std::vector<int> h(4 * ROUNDS);
    CHECK(cudaMemcpy(h.data(), r, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int k = 0; k < ROUNDS; k++) {
      const int *q = &h[4 * k];
      EXPECT(!(q[0] == 1 && q[1] == 0 && q[2] == 1 && q[3] == 0), "iriw round %d: readers disagree on the order of the writes", k);
    }
    cudaFree(x); cudaFree(y); cudaFree(r);
  }
  {
    int *payload = dev<int>(WORDS), *flag = dev<int>(1), *copy = dev<int>(WORDS);
    if (!payload || !flag || !copy) { printf("MISMATCH cudaMalloc\n"); return 1; }
    release_seq<<<ADDERS + 2, 64>>>(payload, flag, copy);
    CHECK(cudaDeviceSynchronize());
    int h[WORDS];
    CHECK(cudaMemcpy(h, copy, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < WORDS; i++) EXPECT(h[i] == 7000 + i, "release_seq word %d: %d, expected %d", i, h[i], 7000 + i);
    cudaFree(payload); cudaFree(flag); cudaFree(copy);
  }
  {
    cuda::std::atomic_flag *lock = dev<cuda::std::atomic_flag>(1);
    int *counter = dev<int>(1);
    if (!lock || !counter) { printf("MISMATCH cudaMalloc\n"); return 1; }
    flag_lock<<<8, 128>>>(lock, counter);
    CHECK(cudaDeviceSynchronize());
    int h = 0;
    CHECK(cudaMemcpy(&h, counter, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h == 8 * 4 * 4, "flag_lock counter %d, expected %d", h, 8 * 4 * 4);
    cudaFree(lock); cudaFree(counter);
  }
  {
    int *flag = dev<int>(2), *turn = dev<int>(1), *counter = dev<int>(1);
    if (!flag || !turn || !counter) { printf("MISMATCH cudaMalloc\n"); return 1; }
    peterson<<<2, 32>>>(flag, turn, counter);
    CHECK(cudaDeviceSynchronize());
    int h = 0;
    CHECK(cudaMemcpy(&h, counter, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h == 16, "peterson counter %d, expected 16", h);
    cudaFree(flag); cudaFree(turn); cudaFree(counter);
  }
  {
    const int blocks = 40;
    std::vector<int> hin(blocks * TB);
    long expect = 0;
    for (int i = 0; i < blocks * TB; i++) { hin[i] = (i * 37) % 101; expect += hin[i]; }
    int *in = dev<int>(blocks * TB), *partial = dev<int>(blocks), *count = dev<int>(1), *out = dev<int>(1);
    if (!in || !partial || !count || !out) { printf("MISMATCH cudaMalloc\n"); return 1; }
    CHECK(cudaMemcpy(in, hin.data(), hin.size() * sizeof(int), cudaMemcpyHostToDevice));
    ticket<<<blocks, TB>>>(in, partial, count, out);
    CHECK(cudaDeviceSynchronize());
    int h = 0;
    CHECK(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h == expect, "ticket sum %d, expected %ld", h, expect);
    cudaFree(in); cudaFree(partial); cudaFree(count); cudaFree(out);
  }
  if (bad) return 1;
  printf("OK: memorder\n");
  return 0;
}
