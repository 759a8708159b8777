// Thrust on device_vector (issue 22): sort, reduce, inclusive_scan and transform, each
// through Thrust's CUDA backend (CUB kernels underneath). Every result is checked on the
// host; exit 1 on any mismatch. Built with `fencehound nvcc`, run by tests/cli_programs.rs.
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <cstdio>
#include <vector>

struct Affine {
  __host__ __device__ int operator()(int x) const { return 3 * x - 7; }
};

static int fails = 0;
static void check(const char *what, long i, long got, long want) {
  if (got != want) {
    if (fails < 20) printf("MISMATCH %s [%ld]: got %ld, want %ld\n", what, i, got, want);
    fails++;
  }
}

int main() {
  const int n = 20000;
  std::vector<int> h(n);
  for (int i = 0; i < n; i++) h[i] = (int)((i * 2246822519u) >> 9) % 5000 - 2500;
  thrust::device_vector<int> d(h.begin(), h.end());

  thrust::device_vector<int> t(n);
  thrust::transform(d.begin(), d.end(), t.begin(), Affine{});
  thrust::host_vector<int> ht = t;
  for (int i = 0; i < n; i++) check("transform", i, ht[i], 3 * h[i] - 7);

  long sum = thrust::reduce(d.begin(), d.end(), 0L, thrust::plus<long>());
  long want = 0;
  for (int x : h) want += x;
  check("reduce", 0, sum, want);

  thrust::device_vector<int> s(n);
  thrust::inclusive_scan(d.begin(), d.end(), s.begin());
  thrust::host_vector<int> hs = s;
  int acc = 0;
  for (int i = 0; i < n; i++) {
    acc += h[i];
    check("inclusive_scan", i, hs[i], acc);
  }

  thrust::sort(d.begin(), d.end());
  thrust::host_vector<int> hd = d;
  std::vector<int> sorted = h;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < n; i++) check("sort", i, hd[i], sorted[i]);

  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (fails) {
    printf("FAIL: %d mismatches\n", fails);
    return 1;
  }
  printf("OK: thrust transform, reduce, inclusive_scan, sort on device_vector\n");
  return 0;
}
