// Grid-wide synchronization (issue 22):
// 1. a cooperative launch (cudaLaunchCooperativeKernel) sized by the occupancy API —
//    blocks per SM x SM count, 1,024 threads each — whose grid.sync() separates a
//    grid-stride partial sum from the final sum;
// 2. the "last block" reduction: each block stores its partial sum, __threadfence(), takes
//    a ticket with atomicInc; the block that draws the last ticket adds every partial sum.
//    The last block's thread 0 also fences after its ticket (an acquire: `__syncthreads()`
//    alone is CTA-scoped and orders nothing against other blocks' partial sums in PTX).
//    Build with -DNO_FENCE to remove the writer's __threadfence(): the partial sums may
//    then reach the last block after its ticket, which `fencehound exec` shows.
// Exit 1 on any mismatch. Built with `fencehound nvcc`, run by tests/cli_programs.rs.
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

__global__ void grid_sum(const int *in, int n, int *partial, int *out) {
  cg::grid_group g = cg::this_grid();
  int s = 0;
  for (long i = g.thread_rank(); i < n; i += g.size()) s += in[i];
  atomicAdd(&partial[blockIdx.x], s);
  g.sync();
  if (g.thread_rank() == 0) {
    int t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
    *out = t;
  }
}

__device__ unsigned tickets = 0;

__global__ void last_block(const int *in, int n, volatile int *partial, int *out) {
  __shared__ int sums[256];
  __shared__ bool last;
  int s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) sums[threadIdx.x] += sums[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = sums[0];
#ifndef NO_FENCE
    __threadfence();
#endif
    unsigned ticket = atomicInc(&tickets, gridDim.x);
    last = ticket == gridDim.x - 1;
    // The acquire side: the last block orders every other block's partial sum (released
    // by that block's fence before its ticket) before its reads.
    if (last) __threadfence();
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    int t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
    *out = t;
    tickets = 0;
  }
}

int main() {
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, 1024, 0);
  int blocks = sms * per_sm;
  const int n = 1 << 20;
  int *h = new int[n];
  long want = 0;
  for (int i = 0; i < n; i++) {
    h[i] = (i * 31 + 7) % 17;
    want += h[i];
  }
  int *in, *partial, *out;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&partial, blocks * sizeof(int));
  cudaMalloc(&out, 2 * sizeof(int));
  cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(partial, 0, blocks * sizeof(int));
  cudaMemset(out, 0, 2 * sizeof(int));
  int nn = n;
  void *args[] = {&in, &nn, &partial, &out};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)grid_sum, blocks, 1024, args, 0, 0);
  if (e != cudaSuccess) {
    printf("cooperative launch of %d x 1024 failed: %s\n", blocks, cudaGetErrorString(e));
    return 1;
  }
  int fails = 0;
  int got = 0;
  cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost);
  if (got != want) {
    printf("MISMATCH grid.sync sum over %d blocks: got %d, want %ld\n", blocks, got, want);
    fails++;
  }

  const int lb = 64;
  cudaMemset(partial, 0, lb * sizeof(int));
  last_block<<<lb, 256>>>(in, n, partial, out + 1);
  cudaMemcpy(&got, out + 1, sizeof got, cudaMemcpyDeviceToHost);
  if (got != want) {
    printf("MISMATCH last-block sum: got %d, want %ld\n", got, want);
    fails++;
  }
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  delete[] h;
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: grid.sync over %d blocks of 1024 threads, last-block reduction\n", blocks);
  return 0;
}
