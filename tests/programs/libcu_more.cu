// libcu++ synchronization beyond libcu_sync.cu: cuda::latch and cuda::counting_semaphore
// at block scope, atomic_ref wait/notify with release/acquire, and a chained scan in which
// each block waits for its predecessor's prefix through a relaxed flag between
// cuda::atomic_thread_fence release/acquire. -DNO_FENCE drops the two fences (a stale
// prefix: the race check reports it, `weak`/`scoped` fail it). Every result is checked on
// the host; exit 1 on any mismatch. Built with `fencehound nvcc -arch=sm_80`, run by
// tests/cli_programs.rs.
#include <cuda/atomic>
#include <cuda/latch>
#include <cuda/semaphore>
#include <cstdio>
#include <vector>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("MISMATCH CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

__global__ void block_sync(int *out) {
  __shared__ cuda::latch<cuda::thread_scope_block> *lp;
  __shared__ alignas(cuda::latch<cuda::thread_scope_block>) char lbuf[sizeof(cuda::latch<cuda::thread_scope_block>)];
  __shared__ alignas(cuda::counting_semaphore<cuda::thread_scope_block, 4>) char sbuf[sizeof(cuda::counting_semaphore<cuda::thread_scope_block, 4>)];
  __shared__ int data[64];
  __shared__ int inside, maxin;
  auto *sem = reinterpret_cast<cuda::counting_semaphore<cuda::thread_scope_block, 4> *>(sbuf);
  if (threadIdx.x == 0) {
    lp = new (lbuf) cuda::latch<cuda::thread_scope_block>(blockDim.x);
    new (sbuf) cuda::counting_semaphore<cuda::thread_scope_block, 4>(4);
    inside = 0; maxin = 0;
  }
  __syncthreads();
  data[threadIdx.x] = threadIdx.x * 3;
  lp->arrive_and_wait();
  int sum = 0;
  for (int i = 0; i < 64; i++) sum += data[i];
  sem->acquire();
  int now = atomicAdd(&inside, 1) + 1;
  atomicMax(&maxin, now);
  atomicSub(&inside, 1);
  sem->release();
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = sum + (maxin <= 4 ? 0 : 1000000);
}

__global__ void chained(const int *in, int *incl, int *prefix, int *ready) {
  __shared__ int s[128];
  __shared__ int carry;
  int b = blockIdx.x, t = threadIdx.x;
  s[t] = in[b * 128 + t];
  __syncthreads();
  for (int off = 1; off < 128; off <<= 1) {
    int x = t >= off ? s[t - off] : 0;
    __syncthreads();
    s[t] += x;
    __syncthreads();
  }
  if (t == 0) {
    int c = 0;
    if (b > 0) {
      cuda::atomic_ref<int, cuda::thread_scope_device> r(ready[b - 1]);
      while (r.load(cuda::memory_order_relaxed) == 0) { }
#ifndef NO_FENCE
      cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
#endif
      c = prefix[b - 1];
    }
    carry = c;
    prefix[b] = c + s[127];
#ifndef NO_FENCE
    cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
#endif
    cuda::atomic_ref<int, cuda::thread_scope_device>(ready[b]).store(1, cuda::memory_order_relaxed);
  }
  __syncthreads();
  incl[b * 128 + t] = s[t] + carry;
}

__global__ void waiter(int *flag, int *val, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *val = 42;
    f.store(1, cuda::memory_order_release);
    f.notify_all();
  } else if (threadIdx.x == 0) {
    f.wait(0, cuda::memory_order_acquire);
    out[blockIdx.x] = *val;
  }
}

int main() {
  bool ok = true;
  int *out; CHECK(cudaMalloc(&out, 4 * 64 * 4));
  block_sync<<<4, 64>>>(out);
  CHECK(cudaGetLastError());
  std::vector<int> h(256);
  CHECK(cudaMemcpy(h.data(), out, 1024, cudaMemcpyDeviceToHost));
  int want = 0; for (int i = 0; i < 64; i++) want += 3 * i;
  for (int x : h) if (x != want) { ok = false; printf("MISMATCH latch/semaphore: got %d, want %d\n", x, want); break; }
  const int nb = 16, n = nb * 128;
  std::vector<int> hin(n);
  for (int i = 0; i < n; i++) hin[i] = (i * 7) % 11;
  int *in, *incl, *prefix, *ready;
  CHECK(cudaMalloc(&in, n * 4)); CHECK(cudaMalloc(&incl, n * 4)); CHECK(cudaMalloc(&prefix, nb * 4)); CHECK(cudaMalloc(&ready, nb * 4));
  CHECK(cudaMemcpy(in, hin.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(ready, 0, nb * 4));
  chained<<<nb, 128>>>(in, incl, prefix, ready);
  CHECK(cudaGetLastError());
  std::vector<int> hi(n);
  CHECK(cudaMemcpy(hi.data(), incl, n * 4, cudaMemcpyDeviceToHost));
  int run = 0;
  for (int i = 0; i < n; i++) { run += hin[i]; if (hi[i] != run) { ok = false; printf("MISMATCH chained scan [%d]: got %d, want %d (stale prefix)\n", i, hi[i], run); break; } }
  int *flag, *val, *wout;
  CHECK(cudaMalloc(&flag, 4)); CHECK(cudaMalloc(&val, 4)); CHECK(cudaMalloc(&wout, 8 * 4));
  CHECK(cudaMemset(flag, 0, 4)); CHECK(cudaMemset(wout, 0, 32));
  waiter<<<8, 32>>>(flag, val, wout);
  CHECK(cudaGetLastError());
  int hw[8]; CHECK(cudaMemcpy(hw, wout, 32, cudaMemcpyDeviceToHost));
  for (int b = 1; b < 8; b++) if (hw[b] != 42) { ok = false; printf("MISMATCH wait/notify block %d: got %d, want 42\n", b, hw[b]); }
  if (ok) printf("OK: cuda::latch, counting_semaphore, atomic_ref wait/notify, fenced chained scan\n");
  return ok ? 0 : 1;
}
