// CUB's device-wide layer (issue 22): DeviceScan (CUB's decoupled look-back, the
// fence-sensitive single-pass scan), DeviceReduce, DeviceRadixSort, DeviceHistogram,
// DeviceSelect and DeviceSegmentedReduce, each with the usual two calls (size query, then
// the run). Every result is checked on the host; exit 1 on any mismatch or CUDA error.
// Built with `fencehound nvcc`, run by tests/cli_programs.rs.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>

static int fails = 0;
#define CK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(e_), __LINE__, #call);   \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static void check(const char *what, long i, long got, long want) {
  if (got != want) {
    if (fails < 20) printf("MISMATCH %s [%ld]: got %ld, want %ld\n", what, i, got, want);
    fails++;
  }
}

template <class T>
static std::vector<T> get(const T *d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

template <class T>
static T *put(const std::vector<T> &h) {
  T *d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

struct IsOdd {
  __host__ __device__ bool operator()(int x) const { return x & 1; }
};

int main() {
  const int n = 20000;
  std::vector<int> h(n);
  for (int i = 0; i < n; i++) h[i] = (int)((i * 2654435761u) >> 7) % 1000;
  int *din = put(h);
  int *dout;
  CK(cudaMalloc(&dout, n * sizeof(int)));
  void *tmp = nullptr;
  size_t bytes = 0, have = 0;
  auto temp = [&](size_t want) -> int {
    if (want > have) {
      if (tmp) cudaFree(tmp);
      if (cudaMalloc(&tmp, want) != cudaSuccess) return 1;
      have = want;
    }
    return 0;
  };

  // DeviceScan: inclusive and exclusive sums over 20,000 ints (many tiles, so the
  // look-back crosses tiles of other thread blocks).
  bytes = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, din, dout, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceScan::InclusiveSum(tmp, bytes, din, dout, n));
  {
    auto o = get(dout, n);
    long s = 0;
    for (int i = 0; i < n; i++) { s += h[i]; check("DeviceScan::InclusiveSum", i, o[i], s); }
  }
  bytes = 0;
  CK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, din, dout, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceScan::ExclusiveSum(tmp, bytes, din, dout, n));
  {
    auto o = get(dout, n);
    long s = 0;
    for (int i = 0; i < n; i++) { check("DeviceScan::ExclusiveSum", i, o[i], s); s += h[i]; }
  }

  // DeviceScan over 64-bit values: CUB passes each tile's status and value as one
  // 16-byte `st.relaxed.gpu.v2.u64` read by one `ld.relaxed.gpu.v2.u64`, which no model
  // may tear (vgpu `Access::indivisible`; torn, `weak` failed this scan falsely).
  {
    std::vector<long long> h64(n);
    for (int i = 0; i < n; i++) h64[i] = (1ll << 33) + h[i] - 500;
    long long *in64 = put(h64), *out64;
    CK(cudaMalloc(&out64, n * sizeof(long long)));
    bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in64, out64, n));
    if (temp(bytes)) return 1;
    CK(cub::DeviceScan::InclusiveSum(tmp, bytes, in64, out64, n));
    auto o = get(out64, n);
    long long s = 0;
    for (int i = 0; i < n; i++) {
      s += h64[i];
      if (o[i] != s) {
        check("DeviceScan::InclusiveSum<long long>", i, 0, 1);
        break;
      }
    }
  }

  // DeviceReduce: sum and max.
  int *dres;
  CK(cudaMalloc(&dres, 2 * sizeof(int)));
  bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, bytes, din, dres, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceReduce::Sum(tmp, bytes, din, dres, n));
  bytes = 0;
  CK(cub::DeviceReduce::Max(nullptr, bytes, din, dres + 1, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceReduce::Max(tmp, bytes, din, dres + 1, n));
  {
    auto o = get(dres, 2);
    long s = 0;
    int m = h[0];
    for (int x : h) { s += x; m = std::max(m, x); }
    check("DeviceReduce::Sum", 0, o[0], s);
    check("DeviceReduce::Max", 0, o[1], m);
  }

  // DeviceRadixSort: keys, and pairs (values follow their keys).
  std::vector<int> vals(n);
  for (int i = 0; i < n; i++) vals[i] = i;
  int *dvals = put(vals), *dvals_out;
  CK(cudaMalloc(&dvals_out, n * sizeof(int)));
  bytes = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, din, dout, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceRadixSort::SortKeys(tmp, bytes, din, dout, n));
  {
    auto o = get(dout, n);
    auto want = h;
    std::sort(want.begin(), want.end());
    for (int i = 0; i < n; i++) check("DeviceRadixSort::SortKeys", i, o[i], want[i]);
  }
  bytes = 0;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, din, dout, dvals, dvals_out, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceRadixSort::SortPairs(tmp, bytes, din, dout, dvals, dvals_out, n));
  {
    auto k = get(dout, n);
    auto v = get(dvals_out, n);
    std::vector<std::pair<int, int>> want(n);
    for (int i = 0; i < n; i++) want[i] = {h[i], i};
    // Radix sort is stable: equal keys keep their input order.
    std::stable_sort(want.begin(), want.end(),
                     [](auto a, auto b) { return a.first < b.first; });
    for (int i = 0; i < n; i++) {
      check("DeviceRadixSort::SortPairs key", i, k[i], want[i].first);
      check("DeviceRadixSort::SortPairs value", i, v[i], want[i].second);
    }
  }

  // DeviceHistogram: 10 even bins over [0, 1000).
  int *dhist;
  CK(cudaMalloc(&dhist, 10 * sizeof(int)));
  bytes = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, din, dhist, 11, 0, 1000, n));
  if (temp(bytes)) return 1;
  CK(cub::DeviceHistogram::HistogramEven(tmp, bytes, din, dhist, 11, 0, 1000, n));
  {
    auto o = get(dhist, 10);
    std::vector<long> want(10, 0);
    for (int x : h) want[x / 100]++;
    for (int b = 0; b < 10; b++) check("DeviceHistogram::HistogramEven", b, o[b], want[b]);
  }

  // DeviceSelect: the odd values, in order, and their count.
  int *dcount;
  CK(cudaMalloc(&dcount, sizeof(int)));
  bytes = 0;
  CK(cub::DeviceSelect::If(nullptr, bytes, din, dout, dcount, n, IsOdd{}));
  if (temp(bytes)) return 1;
  CK(cub::DeviceSelect::If(tmp, bytes, din, dout, dcount, n, IsOdd{}));
  {
    std::vector<int> want;
    for (int x : h) if (x & 1) want.push_back(x);
    auto c = get(dcount, 1);
    check("DeviceSelect::If count", 0, c[0], (long)want.size());
    auto o = get(dout, want.size());
    for (size_t i = 0; i < want.size(); i++) check("DeviceSelect::If", i, o[i], want[i]);
  }

  // DeviceSegmentedReduce: sums of 100 segments of varying length.
  const int segs = 100;
  std::vector<int> offsets(segs + 1);
  for (int s = 0; s <= segs; s++) offsets[s] = (int)((long)n * s * s / (segs * segs));
  int *doff = put(offsets);
  bytes = 0;
  CK(cub::DeviceSegmentedReduce::Sum(nullptr, bytes, din, dout, segs, doff, doff + 1));
  if (temp(bytes)) return 1;
  CK(cub::DeviceSegmentedReduce::Sum(tmp, bytes, din, dout, segs, doff, doff + 1));
  {
    auto o = get(dout, segs);
    for (int s = 0; s < segs; s++) {
      long want = 0;
      for (int i = offsets[s]; i < offsets[s + 1]; i++) want += h[i];
      check("DeviceSegmentedReduce::Sum", s, o[s], want);
    }
  }

  CK(cudaDeviceSynchronize());
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: cub DeviceScan, DeviceReduce, DeviceRadixSort, DeviceHistogram, DeviceSelect, DeviceSegmentedReduce\n");
  return 0;
}
