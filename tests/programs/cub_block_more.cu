// CUB's block layer beyond cub_block.cu, warp intrinsics with half-warp masks, and Thrust's
// by-key algorithms (issue 22/23's "real-world code, tried as an outsider would"):
// BlockLoad/BlockStore with WARP_TRANSPOSE, BlockMergeSort, BlockHistogram (shared
// atomics), BlockDiscontinuity; __reduce_add_sync and __match_all_sync on each half of a
// warp, __match_any_sync; thrust sort_by_key, reduce_by_key, unique, copy_if. Every result
// is checked on the host; exit 1 on any mismatch. Built with `fencehound nvcc -arch=sm_80`
// (redux.sync), run by tests/cli_programs.rs.
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <thrust/copy.h>
#include <thrust/sequence.h>
#include <cstdio>
#include <vector>
#include <algorithm>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("MISMATCH CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

constexpr int BT = 128, IPT = 4;

struct NotEqual {
  __device__ bool operator()(int a, int b) const { return a != b; }
};
struct IsOdd {
  __host__ __device__ bool operator()(int x) const { return (x & 1) != 0; }
};

__global__ void block_ops(const int *in, int *sorted, int *hist, int *flags, int *adj) {
  using Load = cub::BlockLoad<int, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, BT, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Sort = cub::BlockMergeSort<int, BT, IPT>;
  using Hist = cub::BlockHistogram<unsigned char, BT, IPT, 16>;
  using Disc = cub::BlockDiscontinuity<int, BT>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Sort::TempStorage sort;
    typename Disc::TempStorage disc;
  } tmp;
  __shared__ typename Hist::TempStorage htmp;
  __shared__ unsigned int bins[16];
  int base = blockIdx.x * BT * IPT;
  int v[IPT];
  Load(tmp.load).Load(in + base, v);
  __syncthreads();
  unsigned char c[IPT];
  for (int i = 0; i < IPT; i++) c[i] = (unsigned char)(v[i] & 15);
  Hist(htmp).Histogram(c, bins);
  __syncthreads();
  if (threadIdx.x < 16) atomicAdd(&hist[threadIdx.x], (int)bins[threadIdx.x]);
  Sort(tmp.sort).Sort(v, [](int a, int b) { return a < b; });
  __syncthreads();
  int f[IPT];
  Disc(tmp.disc).FlagHeads(f, v, NotEqual());
  __syncthreads();
  for (int i = 0; i < IPT; i++) flags[base + threadIdx.x * IPT + i] = f[i];
  Store(tmp.store).Store(sorted + base, v);
  // warp-level intrinsics with lane-dependent masks
  unsigned lane = threadIdx.x & 31;
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  int r = __reduce_add_sync(half, (int)lane);
  unsigned m = __match_any_sync(0xffffffffu, lane / 8);
  int pred;
  unsigned ma = __match_all_sync(half, (int)(lane < 16), &pred);
  adj[blockIdx.x * BT + threadIdx.x] = r + __popc(m) + (ma != 0) * 1000 + pred * 10000;
}

int main() {
  const int blocks = 8, n = blocks * BT * IPT;
  std::vector<int> h(n);
  unsigned s = 12345;
  for (auto &x : h) { s = s * 1103515245u + 12345u; x = (s >> 8) % 1000; }
  int *din, *dsorted, *dhist, *dflags, *dadj;
  CHECK(cudaMalloc(&din, n * 4)); CHECK(cudaMalloc(&dsorted, n * 4)); CHECK(cudaMalloc(&dhist, 64));
  CHECK(cudaMalloc(&dflags, n * 4)); CHECK(cudaMalloc(&dadj, blocks * BT * 4));
  CHECK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dhist, 0, 64));
  block_ops<<<blocks, BT>>>(din, dsorted, dhist, dflags, dadj);
  CHECK(cudaGetLastError());
  std::vector<int> sorted(n), hist(16), flags(n), adj(blocks * BT);
  CHECK(cudaMemcpy(sorted.data(), dsorted, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hist.data(), dhist, 64, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(flags.data(), dflags, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(adj.data(), dadj, blocks * BT * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  std::vector<int> wh(16, 0);
  for (int x : h) wh[x & 15]++;
  for (int i = 0; i < 16; i++) ok &= wh[i] == hist[i];
  if (!ok) printf("MISMATCH BlockHistogram\n");
  for (int b = 0; b < blocks; b++) {
    std::vector<int> seg(h.begin() + b * BT * IPT, h.begin() + (b + 1) * BT * IPT);
    std::sort(seg.begin(), seg.end());
    for (int i = 0; i < BT * IPT; i++) {
      if (seg[i] != sorted[b * BT * IPT + i]) { ok = false; printf("MISMATCH BlockMergeSort block %d [%d]\n", b, i); break; }
      int want = i == 0 || seg[i] != seg[i - 1];
      if (want != flags[b * BT * IPT + i]) { ok = false; printf("MISMATCH BlockDiscontinuity block %d [%d]\n", b, i); break; }
    }
  }
  for (int t = 0; t < blocks * BT; t++) {
    int lane = t % 32;
    int r = lane < 16 ? 120 : (16 + 31) * 16 / 2;
    int want = r + 8 + 1000 + 10000;
    if (adj[t] != want) { ok = false; printf("MISMATCH warp intrinsics thread %d: got %d, want %d\n", t, adj[t], want); break; }
  }
  // thrust by-key
  thrust::device_vector<int> keys(h.begin(), h.begin() + 2048), vals(2048, 1);
  for (int i = 0; i < 2048; i++) keys[i] = h[i] % 37;
  thrust::sort_by_key(keys.begin(), keys.end(), vals.begin());
  thrust::device_vector<int> ok_keys(37), sums(37);
  auto end = thrust::reduce_by_key(keys.begin(), keys.end(), vals.begin(), ok_keys.begin(), sums.begin());
  int groups = end.first - ok_keys.begin();
  std::vector<int> cnt(37, 0);
  for (int i = 0; i < 2048; i++) cnt[h[i] % 37]++;
  int want_groups = 0;
  for (int k = 0; k < 37; k++) want_groups += cnt[k] > 0;
  if (groups != want_groups) { ok = false; printf("MISMATCH reduce_by_key: %d groups, want %d\n", groups, want_groups); }
  thrust::host_vector<int> hk = ok_keys, hs = sums;
  for (int g = 0; g < groups; g++) if (hs[g] != cnt[hk[g]]) { ok = false; printf("MISMATCH reduce_by_key key %d\n", hk[g]); break; }
  thrust::device_vector<int> u(keys);
  auto ue = thrust::unique(u.begin(), u.end());
  if (ue - u.begin() != want_groups) { ok = false; printf("MISMATCH unique\n"); }
  thrust::device_vector<int> odd(2048);
  auto oe = thrust::copy_if(keys.begin(), keys.end(), odd.begin(), IsOdd());
  int want_odd = 0;
  for (int k = 1; k < 37; k += 2) want_odd += cnt[k];
  if (oe - odd.begin() != want_odd) { ok = false; printf("MISMATCH copy_if\n"); }
  if (ok) printf("OK: cub BlockLoad/Store, BlockMergeSort, BlockHistogram, BlockDiscontinuity, redux/match on half warps, thrust by-key\n");
  return ok ? 0 : 1;
}
