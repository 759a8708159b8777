// Bitonic sort in shared memory: each block of 512 threads sorts 1,024 keys. One launch.
#include "common.h"
#include <algorithm>

__global__ void bitonic(unsigned *keys) {
  __shared__ unsigned s[1024];
  unsigned *k = keys + blockIdx.x * 1024;
  s[threadIdx.x] = k[threadIdx.x];
  s[threadIdx.x + 512] = k[threadIdx.x + 512];
  __syncthreads();
  for (unsigned size = 2; size <= 1024; size <<= 1) {
    for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
      unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      bool up = (pos & size) == 0;
      unsigned a = s[pos], b = s[pos + stride];
      if ((a > b) == up) { s[pos] = b; s[pos + stride] = a; }
      __syncthreads();
    }
  }
  k[threadIdx.x] = s[threadIdx.x];
  k[threadIdx.x + 512] = s[threadIdx.x + 512];
}

int main(int argc, char **argv) {
  long n = arg_n(argc, argv, 1 << 20) / 1024 * 1024;
  unsigned *h = (unsigned *)malloc(n * 4);
  unsigned s = 5;
  for (long i = 0; i < n; i++) h[i] = lcg(s);
  unsigned *d;
  CHECK(cudaMalloc(&d, n * 4));
  CHECK(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
  bitonic<<<n / 1024, 512>>>(d);
  CHECK(cudaGetLastError());
  unsigned *got = (unsigned *)malloc(n * 4);
  CHECK(cudaMemcpy(got, d, n * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (long b = 0; b < n; b += 1024) {
    std::sort(h + b, h + b + 1024);
    ok &= std::equal(h + b, h + b + 1024, got + b);
  }
  return verdict(ok, "bitonic");
}
