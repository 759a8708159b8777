// Shared by the real-program benchmark (scripts/bench-programs.py): argument parsing,
// error checks and a verdict line. Every program checks its own result on the host and
// exits 1 on a mismatch, so a fast wrong answer cannot pass as a speed-up.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));   \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

static inline long arg_n(int argc, char **argv, long dflt) {
  return argc > 1 ? atol(argv[1]) : dflt;
}

static inline unsigned lcg(unsigned &s) {
  s = s * 1664525u + 1013904223u;
  return s >> 8;
}

static inline int verdict(bool ok, const char *what) {
  printf("%s: %s\n", what, ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
