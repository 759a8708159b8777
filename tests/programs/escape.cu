// A kernel that writes through pointer arithmetic from one allocation into another
// (undefined behaviour in CUDA C++): `exec` notes that the write left the bound of what
// the kernel's pointer parameters point into (vgpu `unwritten` module).
#include <cstdio>

__global__ void k(int *a, long delta, const int *c, int *out) {
  int t = threadIdx.x;
  int before = c[t];
  if (t == 0) a[delta] = 7;  // lands in c[0]
  __syncthreads();
  out[t] = before + c[t];
}

int main() {
  int *a, *c, *o;
  cudaMalloc(&a, 1024);
  cudaMalloc(&c, 1024);
  cudaMalloc(&o, 1024);
  cudaMemset(c, 0, 1024);
  k<<<1, 32>>>(a, (long)(c - a), c, o);
  int h[32];
  cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
  printf("out[0]=%d out[1]=%d\n", h[0], h[1]);
  return h[0] == 7 && h[1] == 0 ? 0 : 1;
}
