// fencehound-corpus: tiled matrix multiply C = A*B with 16x16 shared-memory tiles, 2-D grid and block, bounds checks for non-multiple sizes
// categories: algorithm, shared, barrier, float
// nvrtc-flags: none
// launch: grid=3,2,1 block=16,16,1 dynamic_shared=0
// args: A:f32[1200] random(46,-1,1), B:f32[1600] random(47,-1,1), C:f32[1200] zero, M:u32=30, K:u32=40, N:u32=40
// expect: C (M x N, row-major) == A (M x K) * B (K x N) within 1e-4 absolute

#define TILE 16

extern "C" __global__ void algo_matmul_tiled(const float *A, const float *B, float *C,
                                             unsigned M, unsigned K, unsigned N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];            /* padded to avoid bank conflicts */
    unsigned row = blockIdx.y * TILE + threadIdx.y;
    unsigned col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += TILE) {
        unsigned ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (unsigned k = 0; k < TILE; ++k)
            acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
