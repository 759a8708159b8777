// cub::DeviceScan::InclusiveSum over N ints (decoupled look-back: the fence-sensitive
// single-pass scan). CUB's own launches.
#include "common.h"
#include <cub/device/device_scan.cuh>

int main(int argc, char **argv) {
  long n = arg_n(argc, argv, 1 << 20);
  int *h = (int *)malloc(n * sizeof(int));
  unsigned s = 3;
  for (long i = 0; i < n; i++) h[i] = (int)(lcg(s) % 7) - 3;
  int *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(int))); CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice));
  void *tmp = nullptr; size_t bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, (int)n));
  CHECK(cudaMalloc(&tmp, bytes));
  CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, (int)n));
  int *got = (int *)malloc(n * sizeof(int));
  CHECK(cudaMemcpy(got, out, n * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  int run = 0;
  for (long i = 0; i < n; i++) { run += h[i]; ok &= got[i] == run; }
  return verdict(ok, "cub_scan");
}
