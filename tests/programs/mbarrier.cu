// mbarrier objects (PTX ISA §9.7.13.15): libcu++'s cuda::barrier and cuda::pipeline compile
// to `mbarrier.*` and `cp.async.mbarrier.arrive` for sm_80 and later (`test_wait` on sm_80,
// `try_wait` on sm_90). Each result is checked on the host; exit 1 on a mismatch. Built
// with `fencehound nvcc -arch=sm_80` / `sm_90` by tests/it/cli_programs.rs.
// `cuda::memcpy_async` of a tile with a `cuda::barrier` is a bulk copy on sm_90
// (`cp.async.bulk ... mbarrier::complete_tx::bytes`, `elect.sync`, `expect_tx`).
// -DNO_WAIT: a thread reads its neighbour's value after arriving, without waiting for the
// phase to complete, and the tile is read after `__syncthreads()` instead of the
// barrier's wait (which does not wait for the copy) — races the race check must report.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cstdio>
#include <utility>
namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void exchange(int *out, int rounds) {
  __shared__ block_barrier bar;
  __shared__ int vals[128];
  unsigned t = threadIdx.x, n = blockDim.x;
  if (t == 0) init(&bar, n);
  __syncthreads();
  int acc = 0;
  for (int r = 0; r < rounds; r++) {
    vals[t] = (int)(t * 7 + r * 1000 + blockIdx.x * 100000);
    block_barrier::arrival_token token = bar.arrive();
#ifndef NO_WAIT
    bar.wait(std::move(token));
#endif
    acc += vals[(t + 1) % n];
#ifndef NO_WAIT
    bar.arrive_and_wait();  // every read done before the next round's writes
#else
    (void)token;
    break;
#endif
  }
  out[blockIdx.x * n + t] = acc;
}

// Four stages of 128 ints per block through a two-slot pipeline (cp.async with mbarrier
// completion), summed per thread.
__global__ void staged_sum(const int *in, int *out) {
  __shared__ int buf[2][128];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  const int *base = in + blockIdx.x * 512;
  for (int s = 0; s < 2; s++) {
    pipe.producer_acquire();
    cuda::memcpy_async(block, buf[s], base + s * 128, sizeof(int) * 128, pipe);
    pipe.producer_commit();
  }
  int acc = 0;
  for (int s = 0; s < 4; s++) {
    pipe.consumer_wait();
    acc += buf[s % 2][threadIdx.x];
    block.sync();
    pipe.consumer_release();
    if (s + 2 < 4) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[s % 2], base + (s + 2) * 128, sizeof(int) * 128, pipe);
      pipe.producer_commit();
    }
  }
  out[blockIdx.x * 128 + threadIdx.x] = acc;
}

// One 256-int tile per block, copied with cuda::memcpy_async and read reversed.
__global__ void bulk_tile(const int *in, int *out) {
  __shared__ alignas(16) int tile[256];
  __shared__ block_barrier bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * 512, cuda::aligned_size_t<16>(sizeof(int) * 256), bar);
#ifdef NO_WAIT
  __syncthreads();
#else
  bar.arrive_and_wait();
#endif
  out[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x] * 2;
}

int main() {
  const int blocks = 3, n = 128;
#ifdef NO_WAIT
  const int rounds = 1;
#else
  const int rounds = 3;
#endif
  int fails = 0;
  int *out, *in;
  cudaMalloc(&out, blocks * 512 * sizeof(int));
  exchange<<<blocks, n>>>(out, rounds);
  int h[blocks * n];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < n; t++) {
      int want = 0;
      for (int r = 0; r < rounds; r++) want += (int)(((t + 1) % n) * 7 + r * 1000 + b * 100000);
      if (h[b * n + t] != want && fails++ < 10)
        printf("MISMATCH exchange block %d thread %d: got %d, want %d\n", b, t, h[b * n + t], want);
    }
  static int hin[blocks * 512];
  for (int i = 0; i < blocks * 512; i++) hin[i] = (i * 37) % 101;
  cudaMalloc(&in, sizeof hin);
  cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice);
  staged_sum<<<blocks, 128>>>(in, out);
  int hs[blocks * 128];
  cudaMemcpy(hs, out, sizeof hs, cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < 128; t++) {
      int want = 0;
      for (int s = 0; s < 4; s++) want += hin[b * 512 + s * 128 + t];
      if (hs[b * 128 + t] != want && fails++ < 10)
        printf("MISMATCH pipeline block %d thread %d: got %d, want %d\n", b, t, hs[b * 128 + t], want);
    }
  bulk_tile<<<blocks, 256>>>(in, out);
  int hb[blocks * 256], bulk_fails = 0;
  cudaMemcpy(hb, out, sizeof hb, cudaMemcpyDeviceToHost);
  for (int i = 0; i < blocks * 256; i++) {
    int want = 2 * hin[(i / 256) * 512 + 255 - i % 256];
    if (hb[i] != want && bulk_fails++ < 5) printf("MISMATCH bulk_tile [%d]: got %d, want %d\n", i, hb[i], want);
  }
  fails += bulk_fails;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("error: %s\n", cudaGetErrorString(e));
    fails++;
  }
  if (!fails) printf("OK: cuda::barrier, cuda::pipeline and memcpy_async on mbarrier objects\n");
  return fails ? 1 : 0;
}
