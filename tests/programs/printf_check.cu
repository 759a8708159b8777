// Device printf against the host's: every line is printed twice, "D" from a kernel and
// "H" from the host's printf with the same format and arguments (CUDA formats device
// printf on the host, with the host's C library). The test compares the two sets of
// lines, in order: flags, widths, precisions and `*`, every length modifier (h and hh
// narrow their argument), every conversion CUDA accepts (%a and %A included), zeros,
// infinities, NaN, ties, null pointers and strings.
#include <cstdio>
#include <cmath>
#define CASES(P, T, F)                                                                        \
  P(T "%d|%5d|%-5d|%05d|%+d|% d|%.3d|%.0d|%i\n", -42, -42, -42, -42, 42, 42, 7, 0, 9);          \
  P(T "%u|%x|%X|%#x|%#X|%o|%#o|%#x|%8.4x\n", 3735928559u, 3735928559u, 3735928559u, 255u, 255u, 8u, 8u, 0u, 255u); \
  P(T "%lld|%llu|%llx|%20lld|%-20lld|\n", -1234567890123LL, 18446744073709551615ULL, 0xfedcba9876543210ULL, -5LL, -5LL); \
  P(T "%hhd|%hhu|%hd|%hu|%ld|%lu|%zu|%hhx\n", 300, 300, 70000, 70000, -7L, 7UL, (size_t)12, 0x1234); \
  P(T "%f|%.3f|%10.2f|%-10.1f|%010.3f|%+f|% f|%#.0f|%.0f\n", F(3.14159265), F(3.14159265), F(-2.5), F(2.5), F(-1.5), F(1.0), F(1.0), F(2.0), F(2.5)); \
  P(T "%e|%.2E|%.0e|%#.0e|%12.4e|%e|%e\n", F(6.02214076e23), F(6.02214076e23), F(15.0), F(15.0), F(-0.000123), F(0.0), F(-0.0)); \
  P(T "%g|%G|%.10g|%g|%g|%g|%g|%#g|%.3g\n", F(6.02214076e23), F(1e-5), F(1.0/3), F(100000.0), F(1000000.0), F(999999.5), F(0.0001), F(1.5), F(0.0009995)); \
  P(T "%g|%g|%.0g|%.1g|%g|%G\n", F(123456789.0), F(0.00012345), F(25.0), F(0.05), F(-0.0), F(1e100)); \
  P(T "%a|%A|%.3a|%a|%a|%a\n", F(6.02214076e23), F(-0.1), F(1.0), F(0.0), F(1.0), F(5e-324)); \
  P(T "%f|%e|%g|%F|%E|%G|%5.1f|%-6f|\n", F(INFINITY), F(-INFINITY), F(NAN), F(INFINITY), F(NAN), F(-INFINITY), F(INFINITY), F(NAN)); \
  P(T "%s|%10s|%-10s|%.3s|%c|%5c|%-3c|%%\n", "fencehound", "abc", "abc", "fencehound", 'Q', 'R', 'S'); \
  P(T "%*d|%-*d|%.*f|%*.*f|%.*d\n", 6, 42, 6, 42, 2, F(3.14159), 9, 3, F(2.71828), -3, 5); \
  P(T "%.1a|%.0a|%#a|%#.0a|%010a|%-12a|%+a|%.2a\n", F(1.96875), F(1.5), F(1.0), F(2.0), F(1.0), F(1.0), F(3.0), F(1.0 + 1.0 / 512)); \
  P(T "%#010x|%#o|%.0f|%.0f|%.0f|%.1f|%.2e|%.3g|%g\n", 255u, 0u, F(0.5), F(1.5), F(2.5), F(0.25), F(1.125), F(2.0625), F(1e-300)); \
  P(T "%p|%s|%10p|%.3s|%.6s|%-8s|\n", (void *)0, (const char *)0, (void *)0, (const char *)0, (const char *)0, (const char *)0); \
  P(T "%+.3e|% .2f|%+g|%#x|%#.3o|%-+8d|%+08.2f|%x\n", F(-1234.5678), F(-0.0), F(0.0), 0u, 8u, 17, F(-3.14159), -1);
#define DEV(x) (x)
__global__ void k() { CASES(printf, "D ", DEV) }
int main() {
  k<<<1, 1>>>();
  cudaDeviceSynchronize();
  CASES(printf, "H ", DEV)
  return 0;
}
