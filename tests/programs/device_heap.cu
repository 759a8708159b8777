// Device-side C++ that needs more than straight-line kernels: virtual functions (a vtable
// is a global initialised with function addresses; a class with a virtual destructor
// calls `free` from its deleting destructor), a table of device function pointers,
// recursion, and the device heap (`malloc`/`free`, `new`/`delete`, NULL once
// `cudaLimitMallocHeapSize` is used up). Modules with any of these did not load before
// ("initializer refers to unknown `_ZN5ShapeD1Ev`", "call to external function `free`").
// -DSHARED_RACE: one block's threads write one heap object without synchronization (a
// race on device-malloc'd memory); -DUSE_AFTER_FREE: a read of a freed object (a fault).
#include <cstdio>

struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    float s;
    __device__ explicit Square(float s) : s(s) {}
    __device__ float area() const override { return s * s; }
};
struct Tri : Shape {
    float b, h;
    __device__ Tri(float b, float h) : b(b), h(h) {}
    __device__ float area() const override { return 0.5f * b * h; }
};

__device__ int add(int a, int b) { return a + b; }
__device__ int mul(int a, int b) { return a * b; }
__device__ int (*const ops[2])(int, int) = {add, mul};
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void objects(float *area, int *calc, int *sums) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    Shape *s = (t & 1) ? static_cast<Shape *>(new Square(t)) : new Tri(t, 4);
    area[t] = s->area();
    delete s;
    calc[t] = ops[t & 1](t, 5) + fib(t % 10);
    int *buf = static_cast<int *>(malloc(32 * sizeof(int)));
    if (!buf) {
        sums[t] = -1;
        return;
    }
    for (int i = 0; i < 32; ++i) buf[i] = i + t;
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += buf[i];
    free(buf);
#ifdef USE_AFTER_FREE
    sum += buf[t % 32];
#endif
    sums[t] = sum;
}

// One heap object per block, made by thread 0 and shared through shared memory.
__global__ void shared_object(int *out) {
    __shared__ int *obj;
    if (threadIdx.x == 0) obj = static_cast<int *>(malloc(blockDim.x * sizeof(int)));
    __syncthreads();
#ifdef SHARED_RACE
    obj[0] += threadIdx.x;  // every thread, one word, no synchronization
#else
    obj[threadIdx.x] = threadIdx.x * 3;
#endif
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = obj[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    if (threadIdx.x == 0) free(obj);
}

// Allocations past the heap limit return NULL.
__global__ void exhaust(int *got) {
    int n = 0;
    void *p[16];
    for (int i = 0; i < 16; ++i)
        if ((p[i] = malloc(1024)) != nullptr) n++;
    for (int i = 0; i < 16; ++i) free(p[i]);
    *got = n;
}

int main() {
    const int T = 128;
    float *area;
    int *calc, *sums, *out, *got;
    cudaMalloc(&area, T * sizeof(float));
    cudaMalloc(&calc, T * sizeof(int));
    cudaMalloc(&sums, T * sizeof(int));
    cudaMalloc(&out, 256 * sizeof(int));
    cudaMalloc(&got, sizeof(int));
    objects<<<2, T / 2>>>(area, calc, sums);
    shared_object<<<2, 128>>>(out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("CUDA error: %s\n", cudaGetErrorString(e));
        return 2;
    }
    float ha[T];
    int hc[T], hs[T], ho[256];
    cudaMemcpy(ha, area, sizeof(ha), cudaMemcpyDeviceToHost);
    cudaMemcpy(hc, calc, sizeof(hc), cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, sums, sizeof(hs), cudaMemcpyDeviceToHost);
    cudaMemcpy(ho, out, sizeof(ho), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < T; ++t) {
        float a = (t & 1) ? float(t) * t : 0.5f * t * 4;
        int f0 = 0, f1 = 1;
        for (int i = 0; i < t % 10; ++i) {
            int f2 = f0 + f1;
            f0 = f1;
            f1 = f2;
        }
        int c = ((t & 1) ? t * 5 : t + 5) + f0;
        int s = 32 * t + 496;
        if (ha[t] != a || hc[t] != c || hs[t] != s) {
            if (bad++ < 4)
                printf("MISMATCH thread %d: area %g calc %d sum %d, want %g %d %d\n", t, ha[t],
                       hc[t], hs[t], a, c, s);
        }
    }
    for (int i = 0; i < 256; ++i) {
        int want = ((i % 128 + 1) % 128) * 3;
        if (ho[i] != want && bad++ < 8) printf("MISMATCH shared object %d: %d want %d\n", i, ho[i], want);
    }
    cudaDeviceSetLimit(cudaLimitMallocHeapSize, 10 * 1024);
    exhaust<<<1, 1>>>(got);
    int hg = 0;
    cudaMemcpy(&hg, got, sizeof(int), cudaMemcpyDeviceToHost);
    if (hg < 1 || hg > 10) {
        printf("MISMATCH heap limit 10 KiB: %d of 16 KiB-sized allocations succeeded\n", hg);
        bad++;
    }
    if (bad) return 1;
    printf("OK: virtual calls, function pointers, recursion and the device heap (%d of 16 under a 10 KiB limit)\n", hg);
    return 0;
}
