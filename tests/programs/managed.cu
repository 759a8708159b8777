// Managed memory (cudaMallocManaged), as tutorials and many research codes use it: the
// host initialises arrays in place, kernels read and write them through the same
// pointers, the host reads results after cudaDeviceSynchronize; prefetch and advice
// hints; a cudaMemcpy from managed to device memory and back; a struct with a managed
// pointer inside it read by a kernel; cudaPointerGetAttributes says "managed"; freeing
// and allocating again; __managed__ variables (an initial value the host reads before any
// launch, host writes a kernel sees, a kernel's atomics the host reads); zero-copy memory
// (cudaHostAlloc with cudaHostAllocMapped, the kernel working through the pointer
// cudaHostGetDevicePointer gives, the host reading the results in place). Exit 1 on a
// wrong result.
// -DNO_SYNC: the block reduction loses the __syncthreads() between its steps (a race the
// race check reports, through managed memory as through any other).
#include <cstdio>

struct Vec { int n; float *data; };

__managed__ int blocks_done = 7;
__managed__ float scale_by;

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * scale_by * x[i] + y[i];
}

__global__ void block_sum(const Vec v, float *out) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < v.n ? v.data[i] : 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
#ifndef NO_SYNC
    __syncthreads();
#endif
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = s[0];
    atomicAdd(&blocks_done, 1);
  }
}

// Zero-copy: doubles and counts through the device's pointer to mapped host memory.
__global__ void zero_copy(int *p, int n, int *count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] = 2 * p[i] + 1;
    atomicAdd(count, 1);
  }
}

int main() {
  const int n = 4096;
  int bad = 0;
  float *x, *y, *sums;
  Vec *v;
  if (cudaMallocManaged(&x, n * sizeof(float)) || cudaMallocManaged(&y, n * sizeof(float)) ||
      cudaMallocManaged(&sums, 16 * sizeof(float)) || cudaMallocManaged(&v, sizeof(Vec))) {
    printf("MISMATCH: cudaMallocManaged failed\n");
    return 1;
  }
  for (int i = 0; i < n; i++) { x[i] = (float)(i % 10); y[i] = 1.0f; }
  bad += blocks_done != 7;
  blocks_done = 0;
  scale_by = 0.5f;
  cudaMemLocation dev = {cudaMemLocationTypeDevice, 0};
  if (cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetReadMostly, dev) ||
      cudaMemPrefetchAsync(y, n * sizeof(float), dev, 0, 0)) bad++;
  saxpy<<<n / 256, 256>>>(n, 4.0f, x, y);
  cudaDeviceSynchronize();
  for (int i = 0; i < n; i++) bad += y[i] != 2.0f * (i % 10) + 1.0f;
  // The host changes y between launches; the next kernel sees it.
  for (int i = 0; i < n; i++) y[i] += 1.0f;
  v->n = n;
  v->data = y;
  block_sum<<<16, 256>>>(*v, sums);
  cudaDeviceSynchronize();
  float total = 0, want = 0;
  for (int b = 0; b < 16; b++) total += sums[b];
  for (int i = 0; i < n; i++) want += 2.0f * (i % 10) + 2.0f;
  bad += total != want;
  bad += blocks_done != 16;
  // Managed to device memory and back, by pointer kind and with cudaMemcpyDefault.
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, y, n * sizeof(float), cudaMemcpyDefault);
  for (int i = 0; i < n; i++) y[i] = 0.0f;
  cudaMemcpy(y, d, n * sizeof(float), cudaMemcpyDeviceToDevice);
  for (int i = 0; i < n; i++) bad += y[i] != 2.0f * (i % 10) + 2.0f;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, x) || a.type != cudaMemoryTypeManaged || a.devicePointer != x ||
      a.hostPointer != x) bad++;
  cudaFree(d);
  cudaFree(x);
  float *z;
  cudaMallocManaged(&z, 100 * sizeof(float));
  for (int i = 0; i < 100; i++) bad += z[i] != 0.0f;
  cudaFree(z);
  // Zero-copy memory: written by the host, changed by a kernel through the device's
  // pointer (with unified addressing, the host's), read back in place.
  int *h = nullptr, *hd = nullptr;
  // (Implied with unified addressing; a device already in use may refuse the flag.)
  (void)cudaSetDeviceFlags(cudaDeviceMapHost);
  (void)cudaGetLastError();
  if (cudaHostAlloc(&h, 1001 * sizeof(int), cudaHostAllocMapped) || !h) {
    printf("MISMATCH: cudaHostAlloc(cudaHostAllocMapped) failed\n");
    return 1;
  }
  for (int i = 0; i < 1000; i++) h[i] = i;
  h[1000] = 0;
  if (cudaHostGetDevicePointer(&hd, h, 0) || hd != h) bad++;
  zero_copy<<<4, 256>>>(hd, 1000, hd + 1000);
  cudaDeviceSynchronize();
  for (int i = 0; i < 1000; i++) bad += h[i] != 2 * i + 1;
  bad += h[1000] != 1000;
  if (cudaPointerGetAttributes(&a, h) || a.type != cudaMemoryTypeHost || a.devicePointer != h) bad++;
  if (cudaFreeHost(h)) bad++;
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { printf("error %s\n", cudaGetErrorString(e)); bad++; }
  printf("%s: total %g want %g, %d wrong\n", bad ? "MISMATCH" : "OK", total, want, bad);
  return bad != 0;
}
