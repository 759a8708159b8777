// Tiled matrix multiply C = A·B (16×16 shared-memory tiles), n×n ints. The argument is n
// (default 256: the work is cubic, 256³ multiply-adds). One launch.
#include "common.h"

#define T 16
__global__ void matmul(const int *a, const int *b, int *c, int n) {
  __shared__ int ta[T][T], tb[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  int acc = 0;
  for (int t = 0; t < n; t += T) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < T; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

int main(int argc, char **argv) {
  int n = (int)arg_n(argc, argv, 256) / T * T;
  size_t bytes = (size_t)n * n * 4;
  int *a = (int *)malloc(bytes), *b = (int *)malloc(bytes), *c = (int *)malloc(bytes);
  unsigned s = 6;
  for (long i = 0; i < (long)n * n; i++) { a[i] = lcg(s) % 10; b[i] = lcg(s) % 10; }
  int *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes)); CHECK(cudaMalloc(&db, bytes)); CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
  matmul<<<dim3(n / T, n / T), dim3(T, T)>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n && ok; i += 37)
    for (int j = 0; j < n; j++) {
      int w = 0;
      for (int k = 0; k < n; k++) w += a[i * n + k] * b[k * n + j];
      ok &= c[i * n + j] == w;
    }
  return verdict(ok, "matmul");
}
