// CSR sparse matrix × vector, one thread per row: N rows, 3–7 nonzeros each (ints). One
// launch.
#include "common.h"

__global__ void spmv(const int *rowptr, const int *col, const int *val, const int *x, int *y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int acc = 0;
  for (int k = rowptr[r]; k < rowptr[r + 1]; k++) acc += val[k] * x[col[k]];
  y[r] = acc;
}

int main(int argc, char **argv) {
  int rows = (int)arg_n(argc, argv, 1 << 20);
  unsigned s = 8;
  int *rowptr = (int *)malloc((rows + 1) * 4);
  int *col = (int *)malloc((size_t)rows * 7 * 4), *val = (int *)malloc((size_t)rows * 7 * 4);
  int *x = (int *)malloc(rows * 4), *y = (int *)malloc(rows * 4);
  int nnz = 0;
  for (int r = 0; r < rows; r++) {
    rowptr[r] = nnz;
    int k = 3 + lcg(s) % 5;
    for (int j = 0; j < k; j++) { col[nnz] = lcg(s) % rows; val[nnz] = lcg(s) % 9 - 4; nnz++; }
    x[r] = lcg(s) % 11 - 5;
  }
  rowptr[rows] = nnz;
  int *drp, *dc, *dv, *dx, *dy;
  CHECK(cudaMalloc(&drp, (rows + 1) * 4)); CHECK(cudaMalloc(&dc, nnz * 4));
  CHECK(cudaMalloc(&dv, nnz * 4)); CHECK(cudaMalloc(&dx, rows * 4)); CHECK(cudaMalloc(&dy, rows * 4));
  CHECK(cudaMemcpy(drp, rowptr, (rows + 1) * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, col, nnz * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, val, nnz * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x, rows * 4, cudaMemcpyHostToDevice));
  spmv<<<(rows + 255) / 256, 256>>>(drp, dc, dv, dx, dy, rows);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(y, dy, rows * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int r = 0; r < rows; r++) {
    int w = 0;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++) w += val[k] * x[col[k]];
    ok &= y[r] == w;
  }
  return verdict(ok, "spmv");
}
