// Tensor cores through nvcuda::wmma (mma.h), every shape and type PTX's wmma has: .f16 in
// m16n16k16, m32n8k16 and m8n32k16 with f32 and f16 accumulators, .bf16, .tf32 (m16n16k8),
// .f64 (m8n8k4), .s8/.u8 with .satfinite, .s4/.u4 (m8n8k32) and .b1 (m8n8k128, xor and and
// popc), loaded and stored row- and column-major with padded strides, from global and
// shared memory, with an element-wise operation on a fragment in between. Every result is
// checked against a host reference (inputs are small integers, so every sum is exact).
// Exit 1 on a mismatch. -DNO_SYNC drops the __syncthreads() between the shared-memory
// staging of a tile and the warps' fragment loads (a data race, and stale tiles).
// Built with `fencehound nvcc -arch=sm_80` (and sm_90) by tests/it/cli_programs.rs.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
using namespace nvcuda;

static int bad = 0;
static void check(const char *what, const double *got, const double *want, int n) {
  int wrong = 0;
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (!wrong) printf("%s: element %d is %g, want %g\n", what, i, got[i], want[i]);
      wrong++;
    }
  printf("%s: %s\n", what, wrong ? "MISMATCH" : "ok");
  bad += wrong != 0;
}

// Element (r, c) of a matrix stored row- or column-major with leading dimension ld.
static int at(bool row, int ld, int r, int c) { return row ? r * ld + c : c * ld + r; }

// D = 2 * (A * B + C) for one tile: A, B, C as loaded with the given layouts and strides.
template <int M, int N, int K, typename Frag, typename T, typename Acc, typename LA, typename LB>
__global__ void tile(const T *a, int lda, const T *b, int ldb, const Acc *c, int ldc, bool c_row,
                     Acc *d, int ldd, bool d_row) {
  wmma::fragment<wmma::matrix_a, M, N, K, Frag, LA> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, Frag, LB> fb;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> fc;
  wmma::load_matrix_sync(fa, a, lda);
  wmma::load_matrix_sync(fb, b, ldb);
  wmma::load_matrix_sync(fc, c, ldc, c_row ? wmma::mem_row_major : wmma::mem_col_major);
  wmma::mma_sync(fc, fa, fb, fc);
  for (int i = 0; i < fc.num_elements; i++) fc.x[i] = fc.x[i] + fc.x[i];
  wmma::store_matrix_sync(d, fc, ldd, d_row ? wmma::mem_row_major : wmma::mem_col_major);
}

template <typename T> struct conv;
template <> struct conv<half> {
  static half to(int v) { return __float2half((float)v); }
};
template <> struct conv<__nv_bfloat16> {
  static __nv_bfloat16 to(int v) { return __float2bfloat16((float)v); }
};
template <> struct conv<float> {
  static float to(int v) { return (float)v; }
  static double from(float v) { return v; }
};
template <> struct conv<double> {
  static double to(int v) { return v; }
  static double from(double v) { return v; }
};
template <> struct conv<signed char> {
  static signed char to(int v) { return (signed char)v; }
};
template <> struct conv<unsigned char> {
  static unsigned char to(int v) { return (unsigned char)v; }
};
template <> struct conv<int> {
  static int to(int v) { return v; }
  static double from(int v) { return v; }
};
static double from_acc(half v) { return __half2float(v); }
static double from_acc(float v) { return v; }
static double from_acc(int v) { return v; }
static double from_acc(double v) { return v; }

// Runs `tile` on an M x N x K problem; the element type T of A and B (Tin on the
// host side: float for tf32), accumulator Acc.
template <int M, int N, int K, typename Frag, typename T, typename Acc, typename LA, typename LB>
static void run(const char *what, int lo, int hi, bool c_row, bool d_row) {
  const bool a_row = std::is_same<LA, wmma::row_major>::value;
  const bool b_row = std::is_same<LB, wmma::row_major>::value;
  // Padded leading dimensions (multiples of 16 bytes for every element type here).
  const int pad = 32 / sizeof(T) > 8 ? 32 / (int)sizeof(T) : 8;
  const int lda = (a_row ? K : M) + pad, ldb = (b_row ? N : K) + pad;
  const int ldc = (c_row ? N : M) + 8, ldd = (d_row ? N : M) + 8;
  const int na = lda * (a_row ? M : K), nb = ldb * (b_row ? K : N);
  const int nc = ldc * (c_row ? M : N), nd = ldd * (d_row ? M : N);
  T *ha = new T[na], *hb = new T[nb];
  Acc *hc = new Acc[nc], *hd = new Acc[nd];
  int *ia = new int[M * K], *ib = new int[K * N], *ic = new int[M * N];
  unsigned s = 12345;
  auto rnd = [&]() { s = s * 1103515245u + 12345u; return lo + (int)((s >> 16) % (unsigned)(hi - lo + 1)); };
  for (int i = 0; i < na; i++) ha[i] = conv<T>::to(0);
  for (int i = 0; i < nb; i++) hb[i] = conv<T>::to(0);
  for (int i = 0; i < nc; i++) hc[i] = conv<Acc>::to(0);
  for (int r = 0; r < M; r++)
    for (int k = 0; k < K; k++) { ia[r * K + k] = rnd(); ha[at(a_row, lda, r, k)] = conv<T>::to(ia[r * K + k]); }
  for (int k = 0; k < K; k++)
    for (int c = 0; c < N; c++) { ib[k * N + c] = rnd(); hb[at(b_row, ldb, k, c)] = conv<T>::to(ib[k * N + c]); }
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) { ic[r * N + c] = rnd(); hc[at(c_row, ldc, r, c)] = conv<Acc>::to(ic[r * N + c]); }
  T *da, *db; Acc *dc, *dd;
  cudaMalloc(&da, na * sizeof(T)); cudaMalloc(&db, nb * sizeof(T));
  cudaMalloc(&dc, nc * sizeof(Acc)); cudaMalloc(&dd, nd * sizeof(Acc));
  cudaMemcpy(da, ha, na * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, nb * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dc, hc, nc * sizeof(Acc), cudaMemcpyHostToDevice);
  cudaMemset(dd, 0, nd * sizeof(Acc));
  tile<M, N, K, Frag, T, Acc, LA, LB><<<1, 32>>>(da, lda, db, ldb, dc, ldc, c_row, dd, ldd, d_row);
  cudaMemcpy(hd, dd, nd * sizeof(Acc), cudaMemcpyDeviceToHost);
  double *got = new double[M * N], *want = new double[M * N];
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      long long v = ic[r * N + c];
      for (int k = 0; k < K; k++) v += (long long)ia[r * K + k] * ib[k * N + c];
      want[r * N + c] = 2.0 * (double)v;
      got[r * N + c] = from_acc(hd[at(d_row, ldd, r, c)]);
    }
  check(what, got, want, M * N);
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dd);
  delete[] ha; delete[] hb; delete[] hc; delete[] hd; delete[] ia; delete[] ib; delete[] ic;
  delete[] got; delete[] want;
}

// .s8 with .satfinite: every sum overflows .s32 upward or downward after the multiply.
__global__ void saturate(const signed char *a, const signed char *b, const int *c, int *d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc, true);
  wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}

// Sub-byte: .s4 (8 per 32-bit word) m8n8k32 and .b1 m8n8k128, A row-major, B col-major.
__global__ void subbyte(const int *a4, const int *b4, int *d4, const unsigned *a1, const unsigned *b1,
                        int *dx, int *dand) {
  using namespace wmma::experimental;
  wmma::fragment<wmma::matrix_a, 8, 8, 32, precision::s4, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, precision::s4, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> fc;
  wmma::fill_fragment(fc, 0);
  wmma::load_matrix_sync(fa, a4, 32);
  wmma::load_matrix_sync(fb, b4, 32);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d4, fc, 8, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 8, 8, 128, precision::b1, wmma::row_major> ga;
  wmma::fragment<wmma::matrix_b, 8, 8, 128, precision::b1, wmma::col_major> gb;
  wmma::fragment<wmma::accumulator, 8, 8, 128, int> gc, gd;
  wmma::fill_fragment(gc, 1);
  wmma::load_matrix_sync(ga, a1, 128);
  wmma::load_matrix_sync(gb, b1, 128);
  wmma::bmma_sync(gd, ga, gb, gc, bmmaBitOpXOR, bmmaAccumulateOpPOPC);
  wmma::store_matrix_sync(dx, gd, 8, wmma::mem_row_major);
  wmma::bmma_sync(gd, ga, gb, gc, bmmaBitOpAND, bmmaAccumulateOpPOPC);
  wmma::store_matrix_sync(dand, gd, 8, wmma::mem_row_major);
}

// A 64 x 64 GEMM in 16 x 16 tiles, four warps per block: each step, the block stages
// a 16-wide strip of A and B in shared memory with plain stores, then each warp loads its
// fragments from shared memory.
__global__ void gemm(const half *a, const half *b, float *c, int n) {
  __shared__ __align__(32) half sa[64 * 16];
  __shared__ __align__(32) half sb[16 * 64];
  int warp = threadIdx.x / 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
  for (int j = 0; j < 4; j++) wmma::fill_fragment(acc[j], 0.0f);
  for (int k0 = 0; k0 < n; k0 += 16) {
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
      sa[i] = a[(blockIdx.y * 64 + i / 16) * n + k0 + i % 16];
      sb[i] = b[(k0 + i / 64) * n + blockIdx.x * 64 + i % 64];
    }
#ifndef NO_SYNC
    __syncthreads();
#endif
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, sa + warp * 16 * 16, 16);
    for (int j = 0; j < 4; j++) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
      wmma::load_matrix_sync(fb, sb + j * 16, 64);
      wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
    __syncthreads();
  }
  for (int j = 0; j < 4; j++)
    wmma::store_matrix_sync(c + (blockIdx.y * 64 + warp * 16) * n + blockIdx.x * 64 + j * 16, acc[j], n,
                            wmma::mem_row_major);
}

int main() {
  using R = wmma::row_major;
  using C = wmma::col_major;
  run<16, 16, 16, half, half, float, R, C>("f16 m16n16k16 f32", -3, 3, true, true);
  run<16, 16, 16, half, half, half, C, R>("f16 m16n16k16 f16", -2, 2, false, true);
  run<32, 8, 16, half, half, float, R, R>("f16 m32n8k16 f32", -3, 3, true, false);
  run<8, 32, 16, half, half, half, C, C>("f16 m8n32k16 f16", -2, 2, false, false);
  run<16, 16, 16, __nv_bfloat16, __nv_bfloat16, float, R, C>("bf16 m16n16k16", -3, 3, true, true);
  run<32, 8, 16, __nv_bfloat16, __nv_bfloat16, float, C, R>("bf16 m32n8k16", -3, 3, false, true);
  run<8, 32, 16, __nv_bfloat16, __nv_bfloat16, float, R, R>("bf16 m8n32k16", -3, 3, true, true);
  run<16, 16, 8, wmma::precision::tf32, float, float, R, C>("tf32 m16n16k8", -4, 4, true, false);
  run<8, 8, 4, double, double, double, R, C>("f64 m8n8k4", -5, 5, false, true);
  run<16, 16, 16, signed char, signed char, int, R, C>("s8 m16n16k16", -100, 100, true, true);
  run<32, 8, 16, unsigned char, unsigned char, int, C, R>("u8 m32n8k16", 0, 255, true, false);
  run<8, 32, 16, signed char, signed char, int, R, R>("s8 m8n32k16", -128, 127, false, true);

  {
    signed char ha[256], hb[256];
    int hc[256], hd[256];
    for (int i = 0; i < 256; i++) { ha[i] = 127; hb[i] = (i / 16) % 2 ? -128 : 127; hc[i] = (i % 2) ? -2147400000 : 2147400000; }
    signed char *da, *db; int *dc, *dd;
    cudaMalloc(&da, 256); cudaMalloc(&db, 256); cudaMalloc(&dc, 1024); cudaMalloc(&dd, 1024);
    cudaMemcpy(da, ha, 256, cudaMemcpyHostToDevice); cudaMemcpy(db, hb, 256, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc, 1024, cudaMemcpyHostToDevice);
    saturate<<<1, 32>>>(da, db, dc, dd);
    cudaMemcpy(hd, dd, 1024, cudaMemcpyDeviceToHost);
    double got[256], want[256];
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 16; c++) {
        long long v = hc[r * 16 + c];
        for (int k = 0; k < 16; k++) v += 127LL * hb[c * 16 + k];
        want[r * 16 + c] = v > 2147483647LL ? 2147483647.0 : v < -2147483648LL ? -2147483648.0 : (double)v;
        got[r * 16 + c] = hd[r * 16 + c];
      }
    check("s8 satfinite", got, want, 256);
  }

  {
    // s4: A 8x32 row-major, B 32x8 col-major (each column 32 nibbles = 4 words).
    int qa[8][32], qb[8][32];
    unsigned ha4[32] = {}, hb4[32] = {};
    unsigned s = 777;
    for (int r = 0; r < 8; r++)
      for (int k = 0; k < 32; k++) {
        s = s * 1103515245u + 12345u; qa[r][k] = (int)((s >> 16) % 16) - 8;
        s = s * 1103515245u + 12345u; qb[r][k] = (int)((s >> 16) % 16) - 8;
        ha4[(r * 32 + k) / 8] |= (unsigned)(qa[r][k] & 15) << (4 * (k % 8));
        hb4[(r * 32 + k) / 8] |= (unsigned)(qb[r][k] & 15) << (4 * (k % 8));
      }
    // b1: A 8x128 row-major, B 128x8 col-major, 4 words per row (column).
    unsigned ha1[32], hb1[32];
    for (int i = 0; i < 32; i++) { s = s * 1103515245u + 12345u; ha1[i] = s; s = s * 1103515245u + 12345u; hb1[i] = s ^ (s << 7); }
    int *da4, *db4, *dd4, *ddx, *dda; unsigned *da1, *db1;
    cudaMalloc(&da4, 128); cudaMalloc(&db4, 128); cudaMalloc(&dd4, 256);
    cudaMalloc(&da1, 128); cudaMalloc(&db1, 128); cudaMalloc(&ddx, 256); cudaMalloc(&dda, 256);
    cudaMemcpy(da4, ha4, 128, cudaMemcpyHostToDevice); cudaMemcpy(db4, hb4, 128, cudaMemcpyHostToDevice);
    cudaMemcpy(da1, ha1, 128, cudaMemcpyHostToDevice); cudaMemcpy(db1, hb1, 128, cudaMemcpyHostToDevice);
    subbyte<<<1, 32>>>(da4, db4, dd4, da1, db1, ddx, dda);
    int hd4[64], hdx[64], hda[64];
    cudaMemcpy(hd4, dd4, 256, cudaMemcpyDeviceToHost);
    cudaMemcpy(hdx, ddx, 256, cudaMemcpyDeviceToHost);
    cudaMemcpy(hda, dda, 256, cudaMemcpyDeviceToHost);
    double g4[64], w4[64], gx[64], wx[64], ga[64], wa[64];
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < 8; c++) {
        int v = 0, x = 1, n = 1;
        for (int k = 0; k < 32; k++) v += qa[r][k] * qb[c][k];
        for (int w = 0; w < 4; w++) {
          x += __builtin_popcount(ha1[r * 4 + w] ^ hb1[c * 4 + w]);
          n += __builtin_popcount(ha1[r * 4 + w] & hb1[c * 4 + w]);
        }
        w4[r * 8 + c] = v; g4[r * 8 + c] = hd4[r * 8 + c];
        wx[r * 8 + c] = x; gx[r * 8 + c] = hdx[r * 8 + c];
        wa[r * 8 + c] = n; ga[r * 8 + c] = hda[r * 8 + c];
      }
    check("s4 m8n8k32", g4, w4, 64);
    check("b1 xor.popc", gx, wx, 64);
    check("b1 and.popc", ga, wa, 64);
  }

  {
    const int n = 128;
    half *ha = new half[n * n], *hb = new half[n * n];
    float *hc = new float[n * n];
    int *ia = new int[n * n], *ib = new int[n * n];
    for (int i = 0; i < n * n; i++) {
      ia[i] = (i * 7 + 3) % 5 - 2; ib[i] = (i * 11 + 1) % 7 - 3;
      ha[i] = __float2half((float)ia[i]); hb[i] = __float2half((float)ib[i]);
    }
    half *da, *db; float *dc;
    cudaMalloc(&da, n * n * 2); cudaMalloc(&db, n * n * 2); cudaMalloc(&dc, n * n * 4);
    cudaMemcpy(da, ha, n * n * 2, cudaMemcpyHostToDevice); cudaMemcpy(db, hb, n * n * 2, cudaMemcpyHostToDevice);
    gemm<<<dim3(n / 64, n / 64), 128>>>(da, db, dc, n);
    cudaMemcpy(hc, dc, n * n * 4, cudaMemcpyDeviceToHost);
    double *got = new double[n * n], *want = new double[n * n];
    for (int r = 0; r < n; r++)
      for (int c = 0; c < n; c++) {
        int v = 0;
        for (int k = 0; k < n; k++) v += ia[r * n + k] * ib[k * n + c];
        want[r * n + c] = v; got[r * n + c] = hc[r * n + c];
      }
    check("gemm 128x128 via shared memory", got, want, n * n);
  }
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { printf("error %s\n", cudaGetErrorString(e)); bad++; }
  printf("%s: %d of 17 checks wrong\n", bad ? "MISMATCH" : "OK", bad);
  return bad != 0;
}
