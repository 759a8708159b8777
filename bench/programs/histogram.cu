// 64-bin histogram of N bytes: per-block shared-memory atomics, then one global atomicAdd
// per bin and block. One launch.
#include "common.h"

__global__ void hist64(const unsigned char *in, long n, unsigned *bins) {
  __shared__ unsigned local[64];
  if (threadIdx.x < 64) local[threadIdx.x] = 0;
  __syncthreads();
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    atomicAdd(&local[in[i] & 63], 1u);
  __syncthreads();
  if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

int main(int argc, char **argv) {
  long n = arg_n(argc, argv, 1 << 22);
  unsigned char *h = (unsigned char *)malloc(n);
  unsigned s = 1, want[64] = {0};
  for (long i = 0; i < n; i++) { h[i] = lcg(s) & 255; want[h[i] & 63]++; }
  unsigned char *d; unsigned *bins;
  CHECK(cudaMalloc(&d, n)); CHECK(cudaMalloc(&bins, 64 * 4));
  CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(bins, 0, 64 * 4));
  hist64<<<256, 256>>>(d, n, bins);
  CHECK(cudaGetLastError());
  unsigned got[64];
  CHECK(cudaMemcpy(got, bins, sizeof got, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int b = 0; b < 64; b++) ok &= got[b] == want[b];
  return verdict(ok, "histogram");
}
