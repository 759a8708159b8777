// fencehound-corpus: vector loads/stores (float4, int2, double2, uint4, uint2), __ldg, const __restrict__ (ld.global.nc), volatile pointers
// categories: vector
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: a:f32[256] iota, b:i32[128] iota, c:f64[128] iota, out_f:f32[256] zero, out_i:i32[128] zero, out_d:f64[128] zero, out_u:u32[256] zero
// expect: out_f[4t+k] == 2*a[4t+k] + 1; out_i[2t+k] == b[2t+k]*3; out_d[2t+k] == c[2t+k] + 0.5; out_u[4t+k] == (4t+k) ^ 0xff

extern "C" __global__ void vector_ldst(const float *__restrict__ a, const int *__restrict__ b,
                                       const double *c, float *out_f, int *out_i, double *out_d,
                                       unsigned *out_u)
{
    unsigned t = threadIdx.x;
    float4 f = reinterpret_cast<const float4 *>(a)[t];             /* ld.global.nc.v4.f32 */
    f.x = 2.0f * f.x + 1.0f; f.y = 2.0f * f.y + 1.0f; f.z = 2.0f * f.z + 1.0f; f.w = 2.0f * f.w + 1.0f;
    reinterpret_cast<float4 *>(out_f)[t] = f;                      /* st.global.v4.f32 */

    int2 iv = reinterpret_cast<const int2 *>(b)[t];
    reinterpret_cast<int2 *>(out_i)[t] = make_int2(iv.x * 3, iv.y * 3);

    double2 dv = __ldg(reinterpret_cast<const double2 *>(c) + t); /* explicit __ldg, v2.f64 */
    dv.x += 0.5; dv.y += 0.5;
    reinterpret_cast<double2 *>(out_d)[t] = dv;

    uint4 u = make_uint4(4 * t, 4 * t + 1, 4 * t + 2, 4 * t + 3);
    u.x ^= 0xff; u.y ^= 0xff; u.z ^= 0xff; u.w ^= 0xff;
    volatile uint4 *vp = reinterpret_cast<volatile uint4 *>(out_u) + t;
    vp->x = u.x; vp->y = u.y;                                      /* st.volatile scalars */
    reinterpret_cast<uint2 *>(out_u)[2 * t + 1] = make_uint2(u.z, u.w);
    unsigned seen = vp->x;                                         /* ld.volatile */
    if (seen != u.x) out_u[4 * t] = 0;                             /* never taken */
}
