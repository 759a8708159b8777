// Warp-synchronous code: each lane writes its value to shared memory and reads its
// neighbour's, all within one warp. What is missing is __syncwarp() between the write and
// the read — the cheapest fix for threads of one warp.
extern "C" __global__ void rotate(const int *in, int *out) {
    __shared__ int buf[32];
    int lane = threadIdx.x;
    buf[lane] = in[lane] * 3;
    out[lane] = buf[(lane + 1) % 32];
}
