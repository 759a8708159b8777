// fencehound-corpus: 2-D 5-point Jacobi stencil with a shared-memory tile plus halo, 2-D grid/block, clamped borders
// categories: algorithm, shared, barrier, float
// nvrtc-flags: none
// launch: grid=2,2,1 block=16,16,1 dynamic_shared=0
// args: in:f32[1024] random(51,0,1), out:f32[1024] zero, W:u32=32, H:u32=32
// expect: out[y*W+x] == 0.2*(c + n + s + e + w) of in with coordinates clamped to the image (within 1e-6)

#define T 16

__device__ __forceinline__ unsigned clampu(int v, unsigned hi) { return v < 0 ? 0u : (v >= (int)hi ? hi - 1 : (unsigned)v); }

extern "C" __global__ void algo_stencil2d(const float *in, float *out, unsigned W, unsigned H)
{
    __shared__ float tile[T + 2][T + 2];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    unsigned tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    tile[ty][tx] = in[clampu(y, H) * W + clampu(x, W)];
    if (threadIdx.x == 0)     tile[ty][0]     = in[clampu(y, H) * W + clampu(x - 1, W)];
    if (threadIdx.x == T - 1) tile[ty][T + 1] = in[clampu(y, H) * W + clampu(x + 1, W)];
    if (threadIdx.y == 0)     tile[0][tx]     = in[clampu(y - 1, H) * W + clampu(x, W)];
    if (threadIdx.y == T - 1) tile[T + 1][tx] = in[clampu(y + 1, H) * W + clampu(x, W)];
    __syncthreads();
    if ((unsigned)x < W && (unsigned)y < H) {
        float v = tile[ty][tx] + tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][tx - 1] + tile[ty][tx + 1];
        out[y * W + x] = 0.2f * v;
    }
}
