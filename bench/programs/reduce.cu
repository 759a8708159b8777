// Block + grid reduction of N ints: each block reduces in shared memory, thread 0 adds the
// block's sum to the total with atomicAdd. One launch.
#include "common.h"

__global__ void reduce(const int *in, long n, unsigned long long *total) {
  __shared__ long long part[256];
  long long acc = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    acc += in[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)part[0]);
}

int main(int argc, char **argv) {
  long n = arg_n(argc, argv, 1 << 22);
  int *h = (int *)malloc(n * sizeof(int));
  unsigned s = 2;
  long long want = 0;
  for (long i = 0; i < n; i++) { h[i] = (int)(lcg(s) % 1000); want += h[i]; }
  int *d; unsigned long long *t;
  CHECK(cudaMalloc(&d, n * sizeof(int))); CHECK(cudaMalloc(&t, 8));
  CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(t, 0, 8));
  reduce<<<512, 256>>>(d, n, t);
  CHECK(cudaGetLastError());
  unsigned long long got;
  CHECK(cudaMemcpy(&got, t, 8, cudaMemcpyDeviceToHost));
  return verdict(got == (unsigned long long)want, "reduce");
}
