// Atomic read-modify-writes of every width and type against their documented results:
// atomicInc/atomicDec wrap-around, 64-bit min/max (signed and unsigned), and/or/xor, CAS
// loops on 64-bit and 16-bit words (the neighbouring halfword untouched), half2 and
// bfloat162 adds (the bf16 sum stalls where the addend is under half an ulp: any order
// gives the sequential result), float exchange and add, double add on global and shared
// memory, and the _block/_system variants. Every result is order-independent, so it is
// the same under every model and schedule — except `atomicAdd_block` from eight blocks:
// a .cta-scoped RMW is atomic only within its CTA, so increments from other blocks may be
// lost (printed as NOTE, not a failure: it is the program's bug, which `scoped` and
// `weak` expose and the race check reports as an insufficient-scope race).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>

struct R {
  unsigned inc, dec;
  unsigned long long umax, umin, andv, orv, xorv, cas64;
  long long smax, smin;
  unsigned short cas16, pad16;
  __half2 h2;
  __nv_bfloat162 b2;
  float fexch, fadd;
  double dadd, dshared;
  unsigned blk, sys;
};

__global__ void k(R *r, int n) {
  __shared__ double sd;
  if (threadIdx.x == 0) sd = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicInc(&r->inc, 99u);
    atomicDec(&r->dec, 76u);
    unsigned long long v = 0x9e3779b97f4a7c15ull * (i + 1);
    atomicMax(&r->umax, v); atomicMin(&r->umin, v);
    long long sv = (long long)v;
    atomicMax(&r->smax, sv); atomicMin(&r->smin, sv);
    atomicAnd(&r->andv, ~(1ull << (i % 64))); atomicOr(&r->orv, 1ull << ((i * 7) % 64)); atomicXor(&r->xorv, v);
    unsigned long long old = r->cas64, assumed;
    do { assumed = old; old = atomicCAS(&r->cas64, assumed, assumed + (unsigned long long)i); } while (old != assumed);
    unsigned short o16 = r->cas16, a16;
    do { a16 = o16; o16 = atomicCAS(&r->cas16, a16, (unsigned short)(a16 + 3)); } while (o16 != a16);
    atomicAdd(&r->h2, __halves2half2(__float2half(1.0f), __float2half(-2.0f)));
    atomicAdd(&r->b2, __floats2bfloat162_rn(0.5f, 1.0f));
    atomicExch(&r->fexch, (float)i);
    atomicAdd(&r->fadd, 0.25f);
    atomicAdd(&r->dadd, 1.5);
    atomicAdd(&sd, 2.0);
    atomicAdd_block(&r->blk, 1u);
    atomicAdd_system(&r->sys, 2u);
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&r->dshared, sd);
}

int main() {
  const int n = 1000;  // blocks of 128, last partial
  R h = {};
  h.umin = ~0ull; h.smin = INT64_MAX; h.smax = INT64_MIN; h.andv = ~0ull; h.dec = 0;
  h.h2 = __halves2half2(__float2half(0.0f), __float2half(0.0f));
  h.b2 = __floats2bfloat162_rn(0.0f, 0.0f);
  h.fexch = -1.0f;
  R *d; cudaMalloc(&d, sizeof(R));
  cudaMemcpy(d, &h, sizeof(R), cudaMemcpyHostToDevice);
  k<<<(n + 127) / 128, 128>>>(d, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("MISMATCH launch\n"); return 1; }
  R g; cudaMemcpy(&g, d, sizeof(R), cudaMemcpyDeviceToHost);
  int bad = 0;
  auto chk = [&](bool ok, const char *what) { if (!ok) { printf("MISMATCH %s\n", what); bad++; } };
  chk(g.inc == n % 100, "atomicInc wraps at 99");
  // atomicDec from 0 with 76: 0 -> 76 -> 75 ... (cycle of 77)
  chk(g.dec == (unsigned)((77 - n % 77) % 77), "atomicDec wraps at 76");
  unsigned long long umax = 0, umin = ~0ull, xo = 0, orv = 0; long long smax = INT64_MIN, smin = INT64_MAX;
  unsigned long long andv = ~0ull, cas = 0;
  for (int i = 0; i < n; i++) {
    unsigned long long v = 0x9e3779b97f4a7c15ull * (i + 1);
    umax = v > umax ? v : umax; umin = v < umin ? v : umin;
    smax = (long long)v > smax ? (long long)v : smax; smin = (long long)v < smin ? (long long)v : smin;
    andv &= ~(1ull << (i % 64)); orv |= 1ull << ((i * 7) % 64); xo ^= v; cas += i;
  }
  chk(g.umax == umax, "atomicMax u64"); chk(g.umin == umin, "atomicMin u64");
  chk(g.smax == smax, "atomicMax s64"); chk(g.smin == smin, "atomicMin s64");
  chk(g.andv == andv, "atomicAnd u64"); chk(g.orv == orv, "atomicOr u64"); chk(g.xorv == xo, "atomicXor u64");
  chk(g.cas64 == cas, "atomicCAS u64 loop");
  chk(g.cas16 == (unsigned short)(3 * n), "atomicCAS u16 loop");
  chk(g.pad16 == 0, "16-bit CAS left its neighbour alone");
  chk(__low2float(g.h2) == (float)n && __high2float(g.h2) == -2.0f * n, "atomicAdd half2");
  // bf16 keeps 8 significant bits: the sum stalls where 0.5 (1.0) is below half an ulp;
  // every add is the same, so any order gives the sequential result.
  __nv_bfloat16 lo = __float2bfloat16_rn(0.0f), hi = __float2bfloat16_rn(0.0f);
  for (int i = 0; i < n; i++) { lo = __float2bfloat16_rn(__bfloat162float(lo) + 0.5f); hi = __float2bfloat16_rn(__bfloat162float(hi) + 1.0f); }
  chk(__low2float(g.b2) == __bfloat162float(lo) && __high2float(g.b2) == __bfloat162float(hi), "atomicAdd bfloat162");
  chk(g.fexch >= 0.0f && g.fexch < (float)n && g.fexch == (float)(int)g.fexch, "atomicExch float");
  chk(g.fadd == 0.25f * n, "atomicAdd float");
  chk(g.dadd == 1.5 * n, "atomicAdd double");
  chk(g.dshared == 2.0 * n, "atomicAdd double on shared");
  if (g.blk != (unsigned)n) printf("NOTE atomicAdd_block from %d blocks: %u of %d increments\n", (n + 127) / 128, g.blk, n);
  chk(g.sys == 2u * n, "atomicAdd_system");
  if (bad) return 1;
  printf("OK: atomics\n");
  return 0;
}
