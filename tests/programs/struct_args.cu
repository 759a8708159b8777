// Structs passed to kernels by value, larger than 8 bytes and with padding: the runtime
// must size and align each argument as the kernel's PTX `.param` list says.
#include <cstdio>

struct Affine {
    double scale;  // 8
    int offset;    // 4
    char tag;      // 1, then padding
    float3 shift;  // 12
};

struct alignas(16) Table {
    int v[5];
};

__global__ void apply(Affine f, const float *in, Table t, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (float)(f.scale * in[i]) + f.offset + f.shift.z + t.v[i % 5] + f.tag;
}

int main() {
    const int n = 200;
    float in[n], out[n];
    for (int i = 0; i < n; i++)
        in[i] = (float)i;
    Affine f = {2.0, 7, 1, make_float3(0.0f, 0.0f, 0.5f)};
    Table t = {{10, 20, 30, 40, 50}};
    float *din, *dout;
    cudaMalloc(&din, sizeof in);
    cudaMalloc(&dout, sizeof out);
    cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
    apply<<<2, 128>>>(f, din, t, dout, n);
    cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        float want = (float)(2.0 * i) + 7 + 0.5f + t.v[i % 5] + 1;
        if (out[i] != want) {
            printf("FAIL at %d: %f, expected %f\n", i, out[i], want);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
