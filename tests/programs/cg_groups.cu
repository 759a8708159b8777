// Cooperative groups inside a warp (issue 22): tiles of 2, 4, 8, 16 and 32 threads with
// sync, shuffles, ballot/any/all, match, reduce and scan; coalesced groups in divergent
// code; labeled and binary partitions. Each tile of a converged warp passes its own member
// mask to the warp collectives (`0xffff << (laneid & ~15)` for tiles of 16), which is what
// the virtual GPU must take per lane. Every result is checked on the host; exit 1 on any
// mismatch. Built with `fencehound nvcc`, run by tests/cli_programs.rs.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

// Results per thread.
constexpr int R = 12;
constexpr int THREADS = 128;

template <unsigned N>
__global__ void tiles(const int *in, int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> t = cg::tiled_partition<N>(block);
  int *o = out + threadIdx.x * R;
  int v = in[threadIdx.x];
  t.sync();
  o[0] = t.thread_rank();
  o[1] = t.meta_group_rank();
  o[2] = t.shfl(v, 0);                             // the tile's first value
  o[3] = t.shfl_down(v, 1);                        // the last rank keeps its own
  o[4] = t.shfl_xor(v, 1);
  o[5] = t.ballot(v & 1);
  o[6] = t.any(v == 7);
  o[7] = t.all(v >= 0);
  o[8] = cg::reduce(t, v, cg::plus<int>());
  o[9] = cg::inclusive_scan(t, v);
  o[10] = cg::reduce(t, v, cg::greater<int>());
  o[11] = t.match_any(v % 3);
  t.sync();
}

// Divergent code: odd threads form one coalesced group per warp, even threads with
// v % 4 == 0 another; labeled_partition splits each warp by v % 3, binary_partition by
// "v is even".
__global__ void coalesced(const int *in, int *out) {
  int *o = out + threadIdx.x * R;
  int v = in[threadIdx.x];
  for (int k = 0; k < R; k++) o[k] = -1;
  if (threadIdx.x & 1) {
    cg::coalesced_group g = cg::coalesced_threads();
    o[0] = g.size();
    o[1] = g.thread_rank();
    o[2] = cg::reduce(g, v, cg::plus<int>());
    o[3] = g.shfl(v, g.size() - 1);
    o[4] = g.ballot(v > 50);
  } else if (v % 4 == 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    o[0] = g.size();
    o[1] = g.thread_rank();
    o[2] = cg::reduce(g, v, cg::plus<int>());
    g.sync();
  }
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  cg::coalesced_group byLabel = cg::labeled_partition(warp, v % 3);
  o[5] = byLabel.size();
  o[6] = byLabel.thread_rank();
  o[7] = cg::reduce(byLabel, v, cg::plus<int>());
  cg::coalesced_group byParity = cg::binary_partition(warp, (v & 1) == 0);
  o[8] = byParity.size();
  o[9] = cg::reduce(byParity, v, cg::plus<int>());
  byParity.sync();
}

static int fails = 0;
static void check(const char *what, int tid, int k, int got, int want) {
  if (got != want) {
    if (fails < 20)
      printf("MISMATCH %s thread %d result %d: got %d, want %d\n", what, tid, k, got, want);
    fails++;
  }
}

template <unsigned N>
static void run_tiles(const std::vector<int> &h, int *din, int *dout) {
  tiles<N><<<1, THREADS>>>(din, dout);
  std::vector<int> o(THREADS * R);
  cudaMemcpy(o.data(), dout, o.size() * sizeof(int), cudaMemcpyDeviceToHost);
  char name[32];
  snprintf(name, sizeof name, "tile<%u>", N);
  for (int t = 0; t < THREADS; t++) {
    int base = t - t % N, rank = t % N;
    int sum = 0, mx = h[base], scan = 0;
    unsigned ballot = 0, match = 0;
    bool any7 = false;
    for (int j = 0; j < (int)N; j++) {
      int x = h[base + j];
      sum += x;
      if (x > mx) mx = x;
      if (j <= rank) scan += x;
      if (x & 1) ballot |= 1u << j;
      if (x == 7) any7 = true;
      if (x % 3 == h[t] % 3) match |= 1u << j;
    }
    int *r = &o[t * R];
    check(name, t, 0, r[0], rank);
    check(name, t, 1, r[1], t / N);
    check(name, t, 2, r[2], h[base]);
    check(name, t, 3, r[3], rank + 1 < (int)N ? h[t + 1] : h[t]);
    check(name, t, 4, r[4], h[base + (rank ^ 1) % N]);
    check(name, t, 5, r[5], (int)ballot);
    check(name, t, 6, r[6], any7);
    check(name, t, 7, r[7], 1);
    check(name, t, 8, r[8], sum);
    check(name, t, 9, r[9], scan);
    check(name, t, 10, r[10], mx);
    // A tile's ballot and match_any are masks of the tile's ranks.
    check(name, t, 11, r[11], (int)match);
  }
}

int main() {
  std::vector<int> h(THREADS);
  for (int i = 0; i < THREADS; i++) h[i] = (i * 37 + 11) % 101;
  int *din, *dout;
  cudaMalloc(&din, THREADS * sizeof(int));
  cudaMalloc(&dout, THREADS * R * sizeof(int));
  cudaMemcpy(din, h.data(), THREADS * sizeof(int), cudaMemcpyHostToDevice);
  run_tiles<2>(h, din, dout);
  run_tiles<4>(h, din, dout);
  run_tiles<8>(h, din, dout);
  run_tiles<16>(h, din, dout);
  run_tiles<32>(h, din, dout);

  coalesced<<<1, THREADS>>>(din, dout);
  std::vector<int> o(THREADS * R);
  cudaMemcpy(o.data(), dout, o.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int t = 0; t < THREADS; t++) {
    int w = t - t % 32;
    int *r = &o[t * R];
    auto group = [&](auto member) {
      int size = 0, rank = 0, sum = 0, last = 0;
      unsigned ballot = 0;
      for (int j = 0; j < 32; j++) {
        if (!member(w + j)) continue;
        if (w + j < t) rank++;
        last = h[w + j];
        if (h[w + j] > 50) ballot |= 1u << size;
        size++;
        sum += h[w + j];
      }
      struct { int size, rank, sum, last; unsigned ballot; } g = {size, rank, sum, last, ballot};
      return g;
    };
    if (t & 1) {
      auto g = group([](int j) { return (j & 1) != 0; });
      check("coalesced odd", t, 0, r[0], g.size);
      check("coalesced odd", t, 1, r[1], g.rank);
      check("coalesced odd", t, 2, r[2], g.sum);
      check("coalesced odd", t, 3, r[3], g.last);
      check("coalesced odd", t, 4, r[4], (int)g.ballot);
    } else if (h[t] % 4 == 0) {
      auto g = group([&](int j) { return (j & 1) == 0 && h[j] % 4 == 0; });
      check("coalesced v%4", t, 0, r[0], g.size);
      check("coalesced v%4", t, 1, r[1], g.rank);
      check("coalesced v%4", t, 2, r[2], g.sum);
    } else {
      check("not coalesced", t, 0, r[0], -1);
    }
    auto lab = group([&](int j) { return h[j] % 3 == h[t] % 3; });
    check("labeled_partition", t, 5, r[5], lab.size);
    check("labeled_partition", t, 6, r[6], lab.rank);
    check("labeled_partition", t, 7, r[7], lab.sum);
    auto par = group([&](int j) { return (h[j] & 1) == (h[t] & 1); });
    check("binary_partition", t, 8, r[8], par.size);
    check("binary_partition", t, 9, r[9], par.sum);
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
  printf("OK: cooperative groups (tiles 2-32, coalesced, labeled, binary)\n");
  return 0;
}
