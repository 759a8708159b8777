// fencehound-corpus: module-scope __device__ variables (scalar, initialized array, struct), __constant__ arrays and structs, host-visible by name; read-modify-write of module globals
// categories: module-var, const, atomic
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:u32[64] zero
// expect: out[i] == g_table[i % 8] * c_scale[i % 4] + c_params.offset for i in 0..31 (g_table = {1,2,3,5,8,13,21,34}, c_scale = {1,10,100,1000}, offset = 7); out[32+i] == g_state.a + g_state.b*i (a=11, b=3); after the launch g_counter == 32 and g_last in 0..31

struct State {
    unsigned a;
    unsigned b;
    float f[2];
};
struct Params {
    unsigned offset;
    unsigned mask;
    double d;
};

__device__ unsigned g_counter;                                   /* zero-initialized */
__device__ unsigned g_last = 0xffffffffu;
__device__ unsigned g_table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
__device__ State g_state = {11, 3, {0.5f, 1.5f}};
__device__ unsigned long long g_wide[2] = {0x0123456789abcdefull, 42};
__constant__ unsigned c_scale[4] = {1, 10, 100, 1000};
__constant__ Params c_params = {7, 0xff, 2.25};
__constant__ float c_poly[5] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f};

extern "C" __global__ void module_vars_const(unsigned *out)
{
    unsigned i = threadIdx.x;
    out[i] = g_table[i % 8] * c_scale[i % 4] + c_params.offset;
    out[32 + i] = g_state.a + g_state.b * i + (unsigned)(g_state.f[i & 1] * 0.0f)
                + (unsigned)(c_poly[i % 5] * 0.0f) + (unsigned)(g_wide[i & 1] & 0) + (unsigned)(c_params.d * 0.0);
    atomicAdd(&g_counter, 1u);
    g_last = i;
}
