// Pitched 3-D memory and stream-ordered memory pools, as stencil codes and modern
// allocation code use them: cudaMalloc3D, a kernel writing through the cudaPitchedPtr,
// cudaMemset3D of a sub-volume, cudaMemcpy3D of a sub-box device→host and host→device
// with source and destination positions, cudaMemcpy3DAsync; the default memory pool's
// release threshold, a pool of our own, cudaMallocFromPoolAsync; and a kernel with 100 KiB
// of dynamic shared memory after cudaFuncSetAttribute. Exit 1 on a wrong result.
#include <cstdio>
#include <cstring>

__global__ void fill(cudaPitchedPtr p, int w, int h, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  float *row = (float *)((char *)p.ptr + (z * h + y) * p.pitch);
  if (x < w) row[x] = x + 10 * y + 100 * z;
}

__global__ void big_shared(int *out) {
  extern __shared__ int s[];
  const int n = 100 * 1024 / 4;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i % 1000;
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int i = 0; i < n; i++) t += s[i];
    *out = t;
  }
}

int main() {
  int bad = 0;
  const int w = 30, h = 5, d = 4;
  cudaExtent ext = make_cudaExtent(w * sizeof(float), h, d);
  cudaPitchedPtr p;
  if (cudaMalloc3D(&p, ext) || p.pitch < w * sizeof(float) || p.xsize != w * sizeof(float) || p.ysize != h) bad++;
  fill<<<dim3(h, d), 32>>>(p, w, h, d);
  // Zero the sub-volume x < 8 floats, y < 2, z < 2 (cudaMemset3D works on the pointer's
  // origin).
  cudaMemset3D(p, 0, make_cudaExtent(8 * sizeof(float), 2, 2));
  static float host[4][5][30];
  cudaMemcpy3DParms cp = {};
  cp.srcPtr = p;
  cp.dstPtr = make_cudaPitchedPtr(host, w * sizeof(float), w, h);
  cp.extent = ext;
  cp.kind = cudaMemcpyDeviceToHost;
  if (cudaMemcpy3D(&cp)) bad++;
  for (int z = 0; z < d; z++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        float want = (x < 8 && y < 2 && z < 2) ? 0.0f : (float)(x + 10 * y + 100 * z);
        bad += host[z][y][x] != want;
      }
  // A 3x2x2 box from the host array (at x=4, y=1, z=1) to the device (at x=20, y=3, z=2),
  // then back into a small host box.
  for (int z = 0; z < d; z++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) host[z][y][x] = -(x + 10 * y + 100 * z);
  cudaMemcpy3DParms up = {};
  up.srcPtr = make_cudaPitchedPtr(host, w * sizeof(float), w, h);
  up.srcPos = make_cudaPos(4 * sizeof(float), 1, 1);
  up.dstPtr = p;
  up.dstPos = make_cudaPos(20 * sizeof(float), 3, 2);
  up.extent = make_cudaExtent(3 * sizeof(float), 2, 2);
  up.kind = cudaMemcpyHostToDevice;
  cudaStream_t s;
  cudaStreamCreate(&s);
  if (cudaMemcpy3DAsync(&up, s)) bad++;
  float box[2][2][3];
  cudaMemcpy3DParms down = {};
  down.srcPtr = p;
  down.srcPos = make_cudaPos(20 * sizeof(float), 3, 2);
  down.dstPtr = make_cudaPitchedPtr(box, 3 * sizeof(float), 3, 2);
  down.extent = make_cudaExtent(3 * sizeof(float), 2, 2);
  down.kind = cudaMemcpyDefault;
  if (cudaMemcpy3D(&down)) bad++;
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 3; x++) bad += box[z][y][x] != -((x + 4) + 10 * (y + 1) + 100 * (z + 1));

  // Memory pools.
  cudaMemPool_t pool, mine;
  unsigned long long threshold = ~0ull, got = 0, used = 0;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) ||
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got) || got != threshold) bad++;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  int *q;
  if (cudaMemPoolCreate(&mine, &props) || cudaMallocFromPoolAsync((void **)&q, 4096, mine, s)) bad++;
  int reuse = 0;
  cudaMemPoolGetAttribute(mine, cudaMemPoolReuseAllowOpportunistic, &reuse);
  cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &used);
  bad += reuse != 1 || used < 4096;
  cudaMemsetAsync(q, 0, 4096, s);
  if (cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024)) bad++;
  big_shared<<<1, 256, 100 * 1024, s>>>(q);
  int sum = 0, want = 0;
  cudaMemcpyAsync(&sum, q, 4, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  for (int i = 0; i < 100 * 1024 / 4; i++) want += i % 1000;
  bad += sum != want;
  cudaFreeAsync(q, s);
  if (cudaMemPoolDestroy(mine)) bad++;
  cudaFree(p.ptr);
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { printf("error %s\n", cudaGetErrorString(e)); bad++; }
  printf("%s: %d wrong, shared sum %d\n", bad ? "MISMATCH" : "OK", bad, sum);
  return bad != 0;
}
