// cub::DeviceRadixSort::SortKeys over N unsigned keys (CUB's onesweep/upsweep launches).
#include "common.h"
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

int main(int argc, char **argv) {
  long n = arg_n(argc, argv, 1 << 20);
  unsigned *h = (unsigned *)malloc(n * 4);
  unsigned s = 4;
  for (long i = 0; i < n; i++) h[i] = lcg(s) * 2654435761u;
  unsigned *in, *out;
  CHECK(cudaMalloc(&in, n * 4)); CHECK(cudaMalloc(&out, n * 4));
  CHECK(cudaMemcpy(in, h, n * 4, cudaMemcpyHostToDevice));
  void *tmp = nullptr; size_t bytes = 0;
  CHECK(cub::DeviceRadixSort::SortKeys(tmp, bytes, in, out, (int)n));
  CHECK(cudaMalloc(&tmp, bytes));
  CHECK(cub::DeviceRadixSort::SortKeys(tmp, bytes, in, out, (int)n));
  unsigned *got = (unsigned *)malloc(n * 4);
  CHECK(cudaMemcpy(got, out, n * 4, cudaMemcpyDeviceToHost));
  std::sort(h, h + n);
  bool ok = std::equal(h, h + n, got);
  return verdict(ok, "cub_radix");
}
