// Matrix transpose through a padded 32×33 shared tile (32×8 threads per block), n×n
// floats; the argument is the element count (default 1M: 1024×1024). One launch.
#include "common.h"
#include <cmath>

__global__ void transpose(const float *in, float *out, int n) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char **argv) {
  int n = (int)sqrt((double)arg_n(argc, argv, 1 << 20)) / 32 * 32;
  size_t bytes = (size_t)n * n * 4;
  float *h = (float *)malloc(bytes), *g = (float *)malloc(bytes);
  for (long i = 0; i < (long)n * n; i++) h[i] = (float)i;
  float *di, *dout;
  CHECK(cudaMalloc(&di, bytes)); CHECK(cudaMalloc(&dout, bytes));
  CHECK(cudaMemcpy(di, h, bytes, cudaMemcpyHostToDevice));
  transpose<<<dim3(n / 32, n / 32), dim3(32, 8)>>>(di, dout, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(g, dout, bytes, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) ok &= g[j * n + i] == h[i * n + j];
  return verdict(ok, "transpose");
}
