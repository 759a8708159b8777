// 2-D 5-point Jacobi step on an n×n grid of ints (16×16 blocks, global loads); the
// argument is the element count (default 1M). One launch.
#include "common.h"
#include <cmath>

__global__ void stencil(const int *in, int *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n || y >= n) return;
  int c = in[y * n + x];
  int l = x > 0 ? in[y * n + x - 1] : 0, r = x < n - 1 ? in[y * n + x + 1] : 0;
  int u = y > 0 ? in[(y - 1) * n + x] : 0, d = y < n - 1 ? in[(y + 1) * n + x] : 0;
  out[y * n + x] = 4 * c - l - r - u - d;
}

int main(int argc, char **argv) {
  int n = (int)sqrt((double)arg_n(argc, argv, 1 << 20));
  size_t bytes = (size_t)n * n * 4;
  int *h = (int *)malloc(bytes), *g = (int *)malloc(bytes);
  unsigned s = 7;
  for (long i = 0; i < (long)n * n; i++) h[i] = lcg(s) % 100;
  int *di, *dout;
  CHECK(cudaMalloc(&di, bytes)); CHECK(cudaMalloc(&dout, bytes));
  CHECK(cudaMemcpy(di, h, bytes, cudaMemcpyHostToDevice));
  stencil<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(di, dout, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(g, dout, bytes, cudaMemcpyDeviceToHost));
  bool ok = true;
  auto at = [&](int x, int y) { return x < 0 || y < 0 || x >= n || y >= n ? 0 : h[y * n + x]; };
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      ok &= g[y * n + x] == 4 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1);
  return verdict(ok, "stencil");
}
