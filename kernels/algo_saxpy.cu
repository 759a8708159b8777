// fencehound-corpus: grid-stride SAXPY y = a*x + y (fma) with n not a multiple of the grid size
// categories: algorithm, float
// nvrtc-flags: none
// launch: grid=3 block=64 dynamic_shared=0
// args: n:u32=1000, a:f32=2.5, x:f32[1000] iota, y:f32[1000] fill(1)
// expect: y[i] == fmaf(2.5, i, 1) for i in 0..999

extern "C" __global__ void algo_saxpy(unsigned n, float a, const float *__restrict__ x, float *y)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = fmaf(a, x[i], y[i]);
}
