// What host code around kernels uses (issue 22): cuda_profiler_api.h with
// cudaProfilerStart/Stop, streams with asynchronous copies and launches, events with
// cudaEventElapsedTime, stream/event synchronization, and printf from a kernel; launch
// configurations a GPU refuses, and more than 48 KB of dynamic shared memory before and
// after the kernel opts in.
// Exit 1 on any mismatch or CUDA error. Built with `fencehound nvcc`, run by
// tests/cli_programs.rs.
#include <cuda_profiler_api.h>
#include <cstdio>

#define CK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(e_), __LINE__, #call);   \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

__global__ void scale(int *x, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
  if (i == 0) printf("scale by %d on %d elements\n", k, n);
}

// Sums 64 KB of dynamic shared memory: above the 48 KB a kernel gets without opting in.
__global__ void big_shared(int *out) {
  extern __shared__ int s[];
  const int n = 64 * 1024 / 4;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long sum = 0;
    for (int i = 0; i < n; i++) sum += s[i];
    *out = (int)(sum % 1000003);
  }
}

int main() {
  CK(cudaProfilerStart());
  const int n = 4096, streams = 3;
  cudaStream_t s[streams];
  for (int k = 0; k < streams; k++) CK(cudaStreamCreate(&s[k]));
  int *h;
  CK(cudaMallocHost(&h, streams * n * sizeof(int)));
  for (int i = 0; i < streams * n; i++) h[i] = i;
  int *d;
  CK(cudaMalloc(&d, streams * n * sizeof(int)));
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventRecord(start, s[0]));
  for (int k = 0; k < streams; k++) {
    CK(cudaMemcpyAsync(d + k * n, h + k * n, n * sizeof(int), cudaMemcpyHostToDevice, s[k]));
    scale<<<n / 256, 256, 0, s[k]>>>(d + k * n, n, k + 2);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(h + k * n, d + k * n, n * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
  }
  // Launch configurations a GPU refuses, each reported by cudaGetLastError as
  // cudaErrorInvalidConfiguration (and cleared by it).
  const dim3 bad_grid[3] = {dim3(1, 70000), dim3(0), dim3(1)};
  const dim3 bad_block[3] = {dim3(32), dim3(32), dim3(1025)};
  for (int b = 0; b < 3; b++) {
    scale<<<bad_grid[b], bad_block[b]>>>(d, 0, 1);
    cudaError_t e = cudaGetLastError();
    if (e != cudaErrorInvalidConfiguration) {
      printf("MISMATCH bad launch %d: %s\n", b, cudaGetErrorName(e));
      return 1;
    }
  }
  CK(cudaGetLastError());
  // More than 48 KB of dynamic shared memory: refused (cudaErrorInvalidValue) until the
  // kernel opts in with cudaFuncSetAttribute, then it runs.
  int *sum;
  CK(cudaMalloc(&sum, sizeof(int)));
  big_shared<<<1, 256, 64 * 1024>>>(sum);
  cudaError_t refused = cudaGetLastError();
  if (refused != cudaErrorInvalidValue) {
    printf("MISMATCH 64 KB without the opt-in: %s\n", cudaGetErrorName(refused));
    return 1;
  }
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, big_shared));
  if (fa.maxDynamicSharedSizeBytes != 48 * 1024) {
    printf("MISMATCH maxDynamicSharedSizeBytes %d before the opt-in\n", fa.maxDynamicSharedSizeBytes);
    return 1;
  }
  CK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  big_shared<<<1, 256, 64 * 1024>>>(sum);
  CK(cudaGetLastError());
  int got = 0;
  CK(cudaMemcpy(&got, sum, sizeof(int), cudaMemcpyDeviceToHost));
  const long long m = 64 * 1024 / 4;
  if (got != (int)((m * (m - 1) / 2) % 1000003)) {
    printf("MISMATCH 64 KB shared sum %d\n", got);
    return 1;
  }
  cudaEvent_t done;
  CK(cudaEventCreate(&done));
  CK(cudaEventRecord(done, s[streams - 1]));
  CK(cudaStreamWaitEvent(s[0], done, 0));
  CK(cudaEventRecord(stop, s[0]));
  CK(cudaEventSynchronize(stop));
  float ms = -1;
  CK(cudaEventElapsedTime(&ms, start, stop));
  for (int k = 0; k < streams; k++) CK(cudaStreamSynchronize(s[k]));
  int fails = 0;
  for (int k = 0; k < streams; k++)
    for (int i = 0; i < n; i++)
      if (h[k * n + i] != (k * n + i) * (k + 2) && fails++ < 10)
        printf("MISMATCH stream %d element %d: got %d\n", k, i, h[k * n + i]);
  if (ms < 0) {
    printf("MISMATCH elapsed time %f ms\n", ms);
    fails++;
  }
  for (int k = 0; k < streams; k++) CK(cudaStreamDestroy(s[k]));
  CK(cudaEventDestroy(start));
  CK(cudaEventDestroy(stop));
  CK(cudaEventDestroy(done));
  CK(cudaFreeHost(h));
  CK(cudaFree(d));
  CK(cudaProfilerStop());
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: streams, events, printf, profiler API\n");
  return 0;
}
