// Integer, bit and SIMD-in-a-word intrinsics on the virtual GPU against host
// implementations of their documented meaning (CUDA Math API, "Integer Intrinsics",
// "SIMD Intrinsics" and the DPX functions of CUDA 12). The kernel corpus' int_* kernels
// are compared with golden runs of the vgpu itself; this program checks every result
// against an independent reference. Prints OK and exits 0, or MISMATCH lines and exits 1.
#include <cstdint>
#include <cstdio>
#include <vector>

#define NOPS 61

__global__ void ints(const unsigned *xa, const unsigned *xb, const unsigned *xc, unsigned long long *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = xa[i], b = xb[i], c = xc[i];
  unsigned long long A = ((unsigned long long)b << 32) | a, B = ((unsigned long long)c << 32) | b;
  int sa = (int)a, sb = (int)b, sc = (int)c;
  unsigned long long *o = out + (size_t)i * NOPS;
  o[0] = __popc(a); o[1] = __popcll(A); o[2] = __clz(sa); o[3] = __clzll((long long)A);
  o[4] = __ffs(sa); o[5] = __ffsll((long long)A); o[6] = __brev(a); o[7] = __brevll(A);
  o[8] = __byte_perm(a, b, c & 0x7777);
  o[9] = __funnelshift_l(a, b, c & 63); o[10] = __funnelshift_lc(a, b, c & 63);
  o[11] = __funnelshift_r(a, b, c & 63); o[12] = __funnelshift_rc(a, b, c & 63);
  o[13] = (unsigned)__hadd(sa, sb); o[14] = (unsigned)__rhadd(sa, sb); o[15] = __uhadd(a, b); o[16] = __urhadd(a, b);
  o[17] = (unsigned)__mul24(sa, sb); o[18] = __umul24(a, b);
  o[19] = (unsigned)__mulhi(sa, sb); o[20] = __umulhi(a, b);
  o[21] = (unsigned long long)__mul64hi((long long)A, (long long)B); o[22] = __umul64hi(A, B);
  o[23] = __sad(sa, sb, c >> 4); o[24] = __usad(a, b, c >> 4);
  o[25] = (unsigned)__dp4a(sa, sb, sc); o[26] = __dp4a(a, b, c);
  o[27] = (unsigned)__dp2a_lo(sa, sb, sc); o[28] = (unsigned)__dp2a_hi(sa, sb, sc);
  o[29] = __vadd2(a, b); o[30] = __vadd4(a, b); o[31] = __vsub4(a, b); o[32] = __vaddss4(a, b);
  o[33] = __vaddus2(a, b); o[34] = __vsubus4(a, b); o[35] = __vabsdiffu4(a, b); o[36] = __vabsdiffs2(a, b);
  o[37] = __vmaxs4(a, b); o[38] = __vminu2(a, b); o[39] = __vcmpeq4(a, a ^ (b & 0x01000100u));
  o[40] = __vcmpgtu2(a, b); o[41] = __vcmpges4(a, b); o[42] = __vseteq2(a, a ^ (b & 0x00010000u));
  o[43] = __vsetltu4(a, b); o[44] = __vsadu4(a, b); o[45] = __vsads2(a, b); o[46] = __vneg4(a);
  o[47] = __vabs2(a); o[48] = __vabsss4(a | (b & 0x80808080u)); o[49] = __vhaddu4(a, b); o[50] = __vavgu4(a, b);
  o[51] = __vnegss2(a);
  o[52] = (unsigned)(sa / (sb | 1)); o[53] = (unsigned)(sa % (sb | 1)); o[54] = A / (B | 1); o[55] = (unsigned long long)((long long)A % (long long)(B | 1));
  o[56] = (unsigned)__vimax3_s32(sa, sb, sc); o[57] = (unsigned)__viaddmax_s32(sa, sb, sc);
  o[58] = (unsigned)__vimin_s32_relu(sa, sb); o[59] = __vimax3_u32(a, b, c); o[60] = __vimax_s16x2_relu(a, b);
}

typedef unsigned long long u64;
static unsigned lane(unsigned x, int k, int w) { return (x >> (k * w)) & ((1u << w) - 1); }
static int slane(unsigned x, int k, int w) { int v = (int)lane(x, k, w); return v >= (1 << (w - 1)) ? v - (1 << w) : v; }
template <class F> static unsigned simd(unsigned a, unsigned b, int w, F f) {
  unsigned r = 0;
  for (int k = 0; k < 32 / w; k++) r |= (f(a, b, k) & ((1u << w) - 1)) << (k * w);
  return r;
}
static int sat(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void reference(unsigned a, unsigned b, unsigned c, u64 *o) {
  u64 A = ((u64)b << 32) | a, B = ((u64)c << 32) | b;
  int sa = (int)a, sb = (int)b, sc = (int)c;
  o[0] = __builtin_popcount(a); o[1] = __builtin_popcountll(A);
  o[2] = a ? __builtin_clz(a) : 32; o[3] = A ? __builtin_clzll(A) : 64;
  o[4] = a ? __builtin_ctz(a) + 1 : 0; o[5] = A ? __builtin_ctzll(A) + 1 : 0;
  unsigned r = 0; for (int k = 0; k < 32; k++) r |= ((a >> k) & 1u) << (31 - k); o[6] = r;
  u64 R = 0; for (int k = 0; k < 64; k++) R |= ((A >> k) & 1ull) << (63 - k); o[7] = R;
  u64 bytes = ((u64)b << 32) | a; unsigned s = c & 0x7777, p = 0;
  for (int k = 0; k < 4; k++) p |= (unsigned)((bytes >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k);
  o[8] = p;
  unsigned sh = c & 63;
  o[9] = (unsigned)((A << (sh & 31)) >> 32); o[10] = (unsigned)((A << (sh < 32 ? sh : 32)) >> 32);
  o[11] = (unsigned)(A >> (sh & 31)); o[12] = (unsigned)(A >> (sh < 32 ? sh : 32));
  o[13] = (unsigned)(int)(((long long)sa + sb) >> 1); o[14] = (unsigned)(int)(((long long)sa + sb + 1) >> 1);
  o[15] = (unsigned)(((u64)a + b) >> 1); o[16] = (unsigned)(((u64)a + b + 1) >> 1);
  auto s24 = [](int v) { v &= 0xffffff; return v >= 0x800000 ? v - 0x1000000 : v; };
  o[17] = (unsigned)((long long)s24(sa) * s24(sb)); o[18] = (unsigned)((u64)(a & 0xffffff) * (b & 0xffffff));
  o[19] = (unsigned)(((long long)sa * sb) >> 32); o[20] = (unsigned)(((u64)a * b) >> 32);
  o[21] = (u64)(long long)(((__int128)(long long)A * (long long)B) >> 64);
  o[22] = (u64)(((unsigned __int128)A * B) >> 64);
  unsigned z = c >> 4;
  o[23] = (unsigned)((sa > sb ? (long long)sa - sb : (long long)sb - sa) + z);
  o[24] = (a > b ? a - b : b - a) + z;
  int d4 = sc; unsigned du = c;
  for (int k = 0; k < 4; k++) { d4 += slane(a, k, 8) * slane(b, k, 8); du += lane(a, k, 8) * lane(b, k, 8); }
  o[25] = (unsigned)d4; o[26] = du;
  o[27] = (unsigned)(sc + slane(a, 0, 16) * slane(b, 0, 8) + slane(a, 1, 16) * slane(b, 1, 8));
  o[28] = (unsigned)(sc + slane(a, 0, 16) * slane(b, 2, 8) + slane(a, 1, 16) * slane(b, 3, 8));
  o[29] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { return lane(x, k, 16) + lane(y, k, 16); });
  o[30] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return lane(x, k, 8) + lane(y, k, 8); });
  o[31] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return lane(x, k, 8) - lane(y, k, 8); });
  o[32] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return (unsigned)sat(slane(x, k, 8) + slane(y, k, 8), -128, 127); });
  o[33] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { return (unsigned)sat((int)(lane(x, k, 16) + lane(y, k, 16)), 0, 65535); });
  o[34] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return (unsigned)sat((int)lane(x, k, 8) - (int)lane(y, k, 8), 0, 255); });
  o[35] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { int d = (int)lane(x, k, 8) - (int)lane(y, k, 8); return (unsigned)(d < 0 ? -d : d); });
  o[36] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { int d = slane(x, k, 16) - slane(y, k, 16); return (unsigned)(d < 0 ? -d : d); });
  o[37] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { int p = slane(x, k, 8), q = slane(y, k, 8); return (unsigned)(p > q ? p : q); });
  o[38] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { unsigned p = lane(x, k, 16), q = lane(y, k, 16); return p < q ? p : q; });
  unsigned e4 = a ^ (b & 0x01000100u), e2 = a ^ (b & 0x00010000u);
  o[39] = simd(a, e4, 8, [](unsigned x, unsigned y, int k) { return lane(x, k, 8) == lane(y, k, 8) ? 0xffu : 0u; });
  o[40] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { return lane(x, k, 16) > lane(y, k, 16) ? 0xffffu : 0u; });
  o[41] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return slane(x, k, 8) >= slane(y, k, 8) ? 0xffu : 0u; });
  o[42] = simd(a, e2, 16, [](unsigned x, unsigned y, int k) { return lane(x, k, 16) == lane(y, k, 16) ? 1u : 0u; });
  o[43] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return lane(x, k, 8) < lane(y, k, 8) ? 1u : 0u; });
  unsigned sad = 0; for (int k = 0; k < 4; k++) { int d = (int)lane(a, k, 8) - (int)lane(b, k, 8); sad += d < 0 ? -d : d; }
  o[44] = sad;
  unsigned sads = 0; for (int k = 0; k < 2; k++) { int d = slane(a, k, 16) - slane(b, k, 16); sads += d < 0 ? -d : d; }
  o[45] = sads;
  o[46] = simd(a, 0, 8, [](unsigned x, unsigned, int k) { return 0u - lane(x, k, 8); });
  o[47] = simd(a, 0, 16, [](unsigned x, unsigned, int k) { int v = slane(x, k, 16); return (unsigned)(v < 0 ? -v : v); });
  unsigned as = a | (b & 0x80808080u);
  o[48] = simd(as, 0, 8, [](unsigned x, unsigned, int k) { int v = slane(x, k, 8); return (unsigned)sat(v < 0 ? -v : v, 0, 127); });
  o[49] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return (lane(x, k, 8) + lane(y, k, 8)) >> 1; });
  o[50] = simd(a, b, 8, [](unsigned x, unsigned y, int k) { return (lane(x, k, 8) + lane(y, k, 8) + 1) >> 1; });
  o[51] = simd(a, 0, 16, [](unsigned x, unsigned, int k) { return (unsigned)sat(-slane(x, k, 16), -32768, 32767); });
  int db = sb | 1;
  o[52] = (sa == INT32_MIN && db == -1) ? (unsigned)sa : (unsigned)(sa / db);
  o[53] = (sa == INT32_MIN && db == -1) ? 0u : (unsigned)(sa % db);
  o[54] = A / (B | 1);
  long long lA = (long long)A, lB = (long long)(B | 1);
  o[55] = (lA == INT64_MIN && lB == -1) ? 0 : (u64)(lA % lB);
  auto mx = [](int p, int q) { return p > q ? p : q; };
  o[56] = (unsigned)mx(mx(sa, sb), sc);
  o[57] = (unsigned)mx((int)((unsigned)sa + (unsigned)sb), sc);
  o[58] = (unsigned)mx(sa < sb ? sa : sb, 0);
  unsigned m3 = a > b ? a : b; o[59] = m3 > c ? m3 : c;
  o[60] = simd(a, b, 16, [](unsigned x, unsigned y, int k) { int p = slane(x, k, 16), q = slane(y, k, 16), m = p > q ? p : q; return (unsigned)(m < 0 ? 0 : m); });
}

int main() {
  const int n = 4096;
  std::vector<unsigned> a(n), b(n), c(n);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  auto rnd = [&]() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (unsigned)(s >> 16); };
  for (int i = 0; i < n; i++) { a[i] = rnd(); b[i] = rnd(); c[i] = rnd(); }
  // Edge values: zeros, all ones, the most negative int, one bit.
  const unsigned edge[] = {0u, 0xffffffffu, 0x80000000u, 1u, 0x7fffffffu, 0x00800000u, 0x80808080u, 0x7f7f7f7fu};
  for (int i = 0; i < 8 * 8; i++) { a[i] = edge[i % 8]; b[i] = edge[i / 8]; c[i] = edge[(i * 3) % 8]; }
  unsigned *da, *db, *dc; unsigned long long *dout;
  cudaMalloc(&da, n * 4); cudaMalloc(&db, n * 4); cudaMalloc(&dc, n * 4); cudaMalloc(&dout, (size_t)n * NOPS * 8);
  cudaMemcpy(da, a.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(db, b.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), n * 4, cudaMemcpyHostToDevice);
  ints<<<n / 128, 128>>>(da, db, dc, dout, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("MISMATCH launch failed\n"); return 1; }
  std::vector<unsigned long long> out((size_t)n * NOPS);
  cudaMemcpy(out.data(), dout, out.size() * 8, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    u64 want[NOPS];
    reference(a[i], b[i], c[i], want);
    for (int k = 0; k < NOPS; k++) {
      if (out[(size_t)i * NOPS + k] != want[k]) {
        if (bad < 40) printf("MISMATCH op %d (a=0x%08x b=0x%08x c=0x%08x): 0x%llx, want 0x%llx\n", k, a[i], b[i], c[i], out[(size_t)i * NOPS + k], want[k]);
        bad++;
      }
    }
  }
  if (bad) { printf("MISMATCH %d in all\n", bad); return 1; }
  printf("OK: %d integer intrinsics match the host on %d inputs\n", NOPS, n);
  return 0;
}
