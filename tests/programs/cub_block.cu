// CUB's warp and block layers (issue 22): WarpReduce and WarpScan with logical warps of 4,
// 8 and 16 threads (each logical warp passes its own member mask to shfl.sync), and
// BlockReduce, BlockScan, BlockRadixSort. Every result is checked on the host; exit 1 on
// any mismatch. Built with `fencehound nvcc`, run by tests/cli_programs.rs.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>

constexpr int THREADS = 128;

template <int L>
__global__ void warp_ops(const int *in, int *sum, int *maxv, int *incl, int *excl) {
  using WR = cub::WarpReduce<int, L>;
  using WS = cub::WarpScan<int, L>;
  __shared__ typename WR::TempStorage rs[THREADS / L];
  __shared__ typename WS::TempStorage ss[THREADS / L];
  int w = threadIdx.x / L;
  int v = in[threadIdx.x];
  int s = WR(rs[w]).Sum(v);
  __syncwarp();
  int m = WR(rs[w]).Reduce(v, cuda::maximum<>{});
  if (threadIdx.x % L == 0) {
    sum[w] = s;
    maxv[w] = m;
  }
  int i, e;
  WS(ss[w]).InclusiveSum(v, i);
  __syncwarp();
  WS(ss[w]).ExclusiveSum(v, e);
  incl[threadIdx.x] = i;
  excl[threadIdx.x] = e;
}

constexpr int IPT = 4;

__global__ void block_ops(const int *in, int *sum, int *scan, int *sorted) {
  using BR = cub::BlockReduce<int, THREADS>;
  using BS = cub::BlockScan<int, THREADS>;
  using BRS = cub::BlockRadixSort<int, THREADS, IPT>;
  __shared__ union {
    typename BR::TempStorage r;
    typename BS::TempStorage s;
    typename BRS::TempStorage sort;
  } tmp;
  int v = in[blockIdx.x * THREADS + threadIdx.x];
  int total = BR(tmp.r).Sum(v);
  if (threadIdx.x == 0) sum[blockIdx.x] = total;
  __syncthreads();
  int x;
  BS(tmp.s).ExclusiveSum(v, x);
  scan[blockIdx.x * THREADS + threadIdx.x] = x;
  __syncthreads();
  int keys[IPT];
  for (int k = 0; k < IPT; k++) keys[k] = in[(blockIdx.x * THREADS + threadIdx.x) * IPT % (4 * THREADS) + k] - 500;
  BRS(tmp.sort).Sort(keys);
  for (int k = 0; k < IPT; k++) sorted[blockIdx.x * THREADS * IPT + threadIdx.x * IPT + k] = keys[k];
}

static int fails = 0;
static void check(const char *what, int i, long got, long want) {
  if (got != want) {
    if (fails < 20) printf("MISMATCH %s [%d]: got %ld, want %ld\n", what, i, got, want);
    fails++;
  }
}

static std::vector<int> get(const int *d, size_t n) {
  std::vector<int> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
  return h;
}

template <int L>
static void run_warp(const std::vector<int> &h, const int *din, int *a, int *b, int *c, int *d) {
  warp_ops<L><<<1, THREADS>>>(din, a, b, c, d);
  auto sum = get(a, THREADS / L), mx = get(b, THREADS / L);
  auto incl = get(c, THREADS), excl = get(d, THREADS);
  char name[64];
  for (int w = 0; w < THREADS / L; w++) {
    int s = 0, m = h[w * L];
    for (int j = 0; j < L; j++) {
      int x = h[w * L + j];
      snprintf(name, sizeof name, "WarpScan<%d>::ExclusiveSum", L);
      check(name, w * L + j, excl[w * L + j], s);
      s += x;
      m = std::max(m, x);
      snprintf(name, sizeof name, "WarpScan<%d>::InclusiveSum", L);
      check(name, w * L + j, incl[w * L + j], s);
    }
    snprintf(name, sizeof name, "WarpReduce<%d>::Sum", L);
    check(name, w, sum[w], s);
    snprintf(name, sizeof name, "WarpReduce<%d>::Reduce(max)", L);
    check(name, w, mx[w], m);
  }
}

int main() {
  const int blocks = 4, n = blocks * THREADS;
  std::vector<int> h(4 * THREADS);
  for (int i = 0; i < 4 * THREADS; i++) h[i] = (i * 7919 + 13) % 1000;
  int *din, *a, *b, *c, *d;
  cudaMalloc(&din, h.size() * sizeof(int));
  cudaMalloc(&a, n * IPT * sizeof(int));
  cudaMalloc(&b, n * IPT * sizeof(int));
  cudaMalloc(&c, n * IPT * sizeof(int));
  cudaMalloc(&d, n * IPT * sizeof(int));
  cudaMemcpy(din, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice);
  run_warp<4>(h, din, a, b, c, d);
  run_warp<8>(h, din, a, b, c, d);
  run_warp<16>(h, din, a, b, c, d);

  block_ops<<<blocks, THREADS>>>(din, a, b, c);
  auto sum = get(a, blocks), scan = get(b, n), sorted = get(c, n * IPT);
  for (int blk = 0; blk < blocks; blk++) {
    long s = 0;
    for (int t = 0; t < THREADS; t++) {
      check("BlockScan::ExclusiveSum", blk * THREADS + t, scan[blk * THREADS + t], s);
      s += h[blk * THREADS + t];
    }
    check("BlockReduce::Sum", blk, sum[blk], s);
    std::vector<int> keys;
    for (int t = 0; t < THREADS; t++)
      for (int k = 0; k < IPT; k++) keys.push_back(h[(blk * THREADS + t) * IPT % (4 * THREADS) + k] - 500);
    std::sort(keys.begin(), keys.end());
    for (int i = 0; i < THREADS * IPT; i++)
      check("BlockRadixSort::Sort", blk * THREADS * IPT + i, sorted[blk * THREADS * IPT + i], keys[i]);
  }
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: cub WarpReduce/WarpScan (4, 8, 16), BlockReduce, BlockScan, BlockRadixSort\n");
  return 0;
}
