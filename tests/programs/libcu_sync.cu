// libcu++ synchronization (issue 22): cuda::barrier<thread_scope_block> (whose arrival
// uses match.any.sync on __activemask()), cuda::atomic_ref fetch_add, and a message passed
// between two thread blocks with a release store and an acquire load on a flag.
//
// Build with -DRELAXED_FLAG to weaken both flag operations to memory_order_relaxed: the
// consumer may then read the payload before the producer's stores reach it, which the PTX
// memory model allows and `fencehound exec` (default model, weak) shows within a few seeds.
// Every result is checked on the host; exit 1 on any mismatch. Built with
// `fencehound nvcc`, run by tests/cli_programs.rs.
#include <cuda/atomic>
#include <cuda/barrier>
#include <cstdio>

#ifdef RELAXED_FLAG
#define PUBLISH cuda::memory_order_relaxed
#define OBSERVE cuda::memory_order_relaxed
#else
#define PUBLISH cuda::memory_order_release
#define OBSERVE cuda::memory_order_acquire
#endif

constexpr int THREADS = 96;
constexpr int PHASES = 4;

// Each phase every thread writes its slot, waits at the barrier and reads its neighbour's.
// Each block writes its own row of `out` (two blocks storing one word would be a data race).
__global__ void phases(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[THREADS];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  int seen = 0;
  for (int p = 0; p < PHASES; p++) {
    slot[threadIdx.x] = 100 * p + threadIdx.x;
    bar.arrive_and_wait();
    seen += slot[(threadIdx.x + 1) % THREADS];
    bar.arrive_and_wait();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = seen;
}

__global__ void count(int *counter, int per_thread) {
  cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
  for (int i = 0; i < per_thread; i++) c.fetch_add(1, cuda::memory_order_relaxed);
}

constexpr int WORDS = 32;

// Block 0 writes the payload and publishes the flag; block 1 waits for it and copies the
// payload it sees.
__global__ void message(int *payload, int *flag, int *copy) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  if (blockIdx.x == 0) {
    if (threadIdx.x < WORDS) payload[threadIdx.x] = 1000 + threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) f.store(1, PUBLISH);
  } else {
    if (threadIdx.x == 0) {
      while (f.load(OBSERVE) == 0) {
      }
    }
    __syncthreads();
    if (threadIdx.x < WORDS) copy[threadIdx.x] = payload[threadIdx.x];
  }
}

int main() {
  int *out, *counter, *payload, *flag, *copy;
  cudaMalloc(&out, 2 * THREADS * sizeof(int));
  cudaMalloc(&counter, sizeof(int));
  cudaMalloc(&payload, WORDS * sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&copy, WORDS * sizeof(int));
  cudaMemset(counter, 0, sizeof(int));
  cudaMemset(payload, 0, WORDS * sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  int fails = 0;

  phases<<<2, THREADS>>>(out);
  int h[2 * THREADS];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 2 * THREADS; i++) {
    int t = i % THREADS;
    int want = 0;
    for (int p = 0; p < PHASES; p++) want += 100 * p + (t + 1) % THREADS;
    if (h[i] != want) {
      if (fails++ < 10) printf("MISMATCH cuda::barrier block %d thread %d: got %d, want %d\n", i / THREADS, t, h[i], want);
    }
  }

  count<<<4, 128>>>(counter, 3);
  int c = 0;
  cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost);
  if (c != 4 * 128 * 3) {
    printf("MISMATCH cuda::atomic_ref fetch_add: got %d, want %d\n", c, 4 * 128 * 3);
    fails++;
  }

  message<<<2, 64>>>(payload, flag, copy);
  int m[WORDS];
  cudaMemcpy(m, copy, sizeof m, cudaMemcpyDeviceToHost);
  for (int i = 0; i < WORDS; i++) {
    if (m[i] != 1000 + i) {
      if (fails++ < 10) printf("MISMATCH message word %d: got %d, want %d (stale payload)\n", i, m[i], 1000 + i);
    }
  }

  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: cuda::barrier, cuda::atomic_ref, release/acquire message\n");
  return 0;
}
