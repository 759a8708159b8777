// fencehound-corpus: matrix transpose through a padded tile in dynamic shared memory (size from the launch), float4 global loads, 2-D blocks
// categories: algorithm, dyn-shared, vector, barrier, float
// nvrtc-flags: none
// launch: grid=2,2,1 block=8,32,1 dynamic_shared=4224
// args: in:f32[4096] iota, out:f32[4096] zero, n:u32=64
// expect: out[c*64 + r] == in[r*64 + c] for r, c in 0..63

extern __shared__ float tile[];                  /* 32 rows x 33 floats (padded) = 4224 bytes */

extern "C" __global__ void algo_transpose_dyn_shared(const float *in, float *out, unsigned n)
{
    const unsigned T = 32, P = 33;
    unsigned bx = blockIdx.x * T, by = blockIdx.y * T;
    unsigned ty = threadIdx.y, tx4 = threadIdx.x * 4;          /* 8 threads x float4 = 32 columns */
    float4 v = *reinterpret_cast<const float4 *>(&in[(by + ty) * n + bx + tx4]);
    tile[ty * P + tx4 + 0] = v.x;
    tile[ty * P + tx4 + 1] = v.y;
    tile[ty * P + tx4 + 2] = v.z;
    tile[ty * P + tx4 + 3] = v.w;
    __syncthreads();
    /* write: output row (bx + ty) gets input column (bx + ty) */
    float4 w;
    w.x = tile[(tx4 + 0) * P + ty];
    w.y = tile[(tx4 + 1) * P + ty];
    w.z = tile[(tx4 + 2) * P + ty];
    w.w = tile[(tx4 + 3) * P + ty];
    *reinterpret_cast<float4 *>(&out[(bx + ty) * n + by + tx4]) = w;
}
