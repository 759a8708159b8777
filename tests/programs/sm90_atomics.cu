// sm_90 features in one kernel: cooperative_groups::memcpy_async and a tile reduction, and
// the vector atomics of sm_90 (atomicAdd on float2, float4 and __half2: `atom.global.add.v2.f32`,
// `.v4.f32`, `.noftz.f16x2`) next to a cuda::atomic_ref fetch_max. Exit 1 on a wrong result.
// Built with `fencehound nvcc -arch=sm_90` by tests/it/cli_programs.rs.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>
#include <cuda_fp16.h>
#include <cstdio>
namespace cg = cooperative_groups;

__global__ void k(const float *in, float *out, float2 *v2, float4 *v4, __half2 *h2, int *maxv) {
  __shared__ float tile[256];
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, tile, in + blockIdx.x * 256, sizeof(float) * 256);
  cg::wait(block);
  auto warp = cg::tiled_partition<32>(block);
  float s = cg::reduce(warp, tile[threadIdx.x], cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(out, s);
  atomicAdd(v2, make_float2(1.0f, 2.0f));
  atomicAdd(v4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  atomicAdd(h2, __floats2half2_rn(1.0f, 0.5f));
  cuda::atomic_ref<int, cuda::thread_scope_device> m(*maxv);
  m.fetch_max((int)threadIdx.x + blockIdx.x * 1000, cuda::memory_order_relaxed);
}

int main() {
  float h[512]; for (int i = 0; i < 512; i++) h[i] = (float)(i % 7);
  float *in, *out; float2 *v2; float4 *v4; __half2 *h2; int *mx;
  cudaMalloc(&in, sizeof h); cudaMalloc(&out, 4); cudaMalloc(&v2, 8); cudaMalloc(&v4, 16); cudaMalloc(&h2, 4); cudaMalloc(&mx, 4);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, 4); cudaMemset(v2, 0, 8); cudaMemset(v4, 0, 16); cudaMemset(h2, 0, 4); cudaMemset(mx, 0, 4);
  k<<<2, 256>>>(in, out, v2, v4, h2, mx);
  float o; float2 a; float4 b; __half2 c; int m;
  cudaMemcpy(&o, out, 4, cudaMemcpyDeviceToHost); cudaMemcpy(&a, v2, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(&b, v4, 16, cudaMemcpyDeviceToHost); cudaMemcpy(&c, h2, 4, cudaMemcpyDeviceToHost); cudaMemcpy(&m, mx, 4, cudaMemcpyDeviceToHost);
  float want = 0; for (int i = 0; i < 512; i++) want += h[i];
  int bad = (o != want) + (a.x != 512 || a.y != 1024) + (b.x != 512 || b.w != 2048) + (__low2float(c) != 512.0f || __high2float(c) != 256.0f) + (m != 1255);
  printf("%s: sum %g/%g v2 %g,%g v4 %g,%g h2 %g,%g max %d\n", bad ? "MISMATCH" : "OK", o, want, a.x, a.y, b.x, b.w, __low2float(c), __high2float(c), m);
  cudaError_t e = cudaDeviceSynchronize();
  if (e) printf("error %s\n", cudaGetErrorString(e));
  return bad != 0;
}
