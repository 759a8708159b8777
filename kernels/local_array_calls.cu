// fencehound-corpus: dynamically indexed local arrays (.local depot, ld/st.local), __noinline__ device functions with many params, struct returns via .param, recursion, function pointers
// categories: local, call, vector
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: in:u32[32] random(43,0,1000), out:u32[192] zero
// expect: out[6i+0] == sum_{k<16} (in[i] * k) % 7 ... see kernel comments; out[6i+2] == fib(i % 20); out[6i+3] == gcd(in[i], 360); coverage otherwise (compare with sc golden run)

struct Pair {
    unsigned lo;
    unsigned hi;
    float ratio;
};

__device__ __noinline__ Pair split_mul(unsigned a, unsigned b, unsigned c, unsigned d, float scale, int bias)
{
    unsigned long long p = (unsigned long long)a * b + (unsigned long long)c * d;
    Pair r;
    r.lo = (unsigned)p + (unsigned)bias;
    r.hi = (unsigned)(p >> 32);
    r.ratio = scale * (float)(a + 1) / (float)(b + 1);
    return r;
}

__device__ __noinline__ unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);      /* real recursion: call stack in .local */
}

__device__ __noinline__ unsigned gcd(unsigned a, unsigned b)
{
    return b == 0 ? a : gcd(b, a % b);
}

__device__ __noinline__ unsigned op_add(unsigned a, unsigned b) { return a + b; }
__device__ __noinline__ unsigned op_xor(unsigned a, unsigned b) { return a ^ b; }
typedef unsigned (*binop_t)(unsigned, unsigned);

extern "C" __global__ void local_array_calls(const unsigned *in, unsigned *out)
{
    unsigned i = threadIdx.x;
    unsigned x = in[i];
    unsigned buf[16];                                  /* indexed by data: stays in local memory */
    for (unsigned k = 0; k < 16; ++k) buf[k] = (x * k) % 7;
    unsigned acc = 0;
    for (unsigned k = 0; k < 16; ++k) acc += buf[(x + k) & 15];
    buf[x & 15] += 100;                                /* dynamic store */
    out[6 * i + 0] = acc;
    out[6 * i + 1] = buf[(x >> 4) & 15];
    out[6 * i + 2] = fib(i % 20);
    out[6 * i + 3] = gcd(x, 360);
    Pair p = split_mul(x, x + 3, i, 0xdeadbeefu, 0.5f, -7);
    out[6 * i + 4] = p.lo ^ p.hi ^ __float_as_uint(p.ratio);
    binop_t f = (x & 1) ? op_add : op_xor;             /* indirect call (call with a prototype) */
    out[6 * i + 5] = f(x, i);
}
