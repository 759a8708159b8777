// A templated kernel launched from host code: a block-wide reduction whose element type
// and block size are template parameters, instantiated twice.
#include <cstdio>

template <typename T, int BLOCK>
__global__ void block_sum(const T *in, T *out, int n) {
    __shared__ T cache[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    cache[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = cache[0];
}

template <typename T, int BLOCK>
static bool check(int n) {
    int blocks = (n + BLOCK - 1) / BLOCK;
    T *h = new T[n], *sums = new T[blocks];
    for (int i = 0; i < n; i++)
        h[i] = T(i % 10);
    T *din, *dout;
    cudaMalloc(&din, n * sizeof(T));
    cudaMalloc(&dout, blocks * sizeof(T));
    cudaMemcpy(din, h, n * sizeof(T), cudaMemcpyHostToDevice);
    block_sum<T, BLOCK><<<blocks, BLOCK>>>(din, dout, n);
    cudaMemcpy(sums, dout, blocks * sizeof(T), cudaMemcpyDeviceToHost);
    T total = 0, want = 0;
    for (int b = 0; b < blocks; b++)
        total += sums[b];
    for (int i = 0; i < n; i++)
        want += h[i];
    cudaFree(din);
    cudaFree(dout);
    delete[] h;
    delete[] sums;
    return total == want;
}

int main() {
    bool ok = check<int, 128>(1000) && check<double, 64>(300);
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
