// kmeans: one Lloyd iteration of k-means on 2-D points, bulk-synchronous and fence-free
// (the shape of Rodinia's kmeans, written from scratch): `assign` gives every point its
// nearest centroid and accumulates per-cluster coordinate sums and counts in shared
// memory (shared atomics between barriers), then one thread per cluster adds the block's
// sums to global accumulators with global atomics; `update` (a second launch) divides.
// A campaign runs assign/update/assign/update: kernel boundaries order everything.
//
// Coordinates are small integers (stored as int, computed as float), so sums are exact
// whatever the order of the atomics, and the result is deterministic: `golden` with
// tolerance 0. There are no fences to miss: the kernel must pass under every model.
#define K 4
#define THREADS 128

extern "C" __global__ void assign(const int *px, const int *py, const float *centroids,
                                  float *sums, unsigned *counts, unsigned *membership,
                                  unsigned n) {
    __shared__ float c[2 * K];
    __shared__ float s_sum[2 * K];
    __shared__ unsigned s_count[K];

    if (threadIdx.x < 2 * K) {
        c[threadIdx.x] = centroids[threadIdx.x];
        s_sum[threadIdx.x] = 0.0f;
    }
    if (threadIdx.x < K)
        s_count[threadIdx.x] = 0;
    __syncthreads();

    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = (float)px[i], y = (float)py[i];
        unsigned best = 0;
        float best_d = 0.0f;
        for (unsigned k = 0; k < K; ++k) {
            float dx = x - c[2 * k], dy = y - c[2 * k + 1];
            float d = dx * dx + dy * dy;
            if (k == 0 || d < best_d) {
                best_d = d;
                best = k;
            }
        }
        membership[i] = best;
        atomicAdd(&s_sum[2 * best], x);
        atomicAdd(&s_sum[2 * best + 1], y);
        atomicAdd(&s_count[best], 1u);
    }
    __syncthreads();

    if (threadIdx.x < 2 * K)
        atomicAdd(&sums[threadIdx.x], s_sum[threadIdx.x]);
    if (threadIdx.x < K)
        atomicAdd(&counts[threadIdx.x], s_count[threadIdx.x]);
}

// One block of K threads: new centroid = mean of its points (unchanged if it has none);
// then clear the accumulators for the next iteration.
extern "C" __global__ void update(float *centroids, float *sums, unsigned *counts) {
    unsigned k = threadIdx.x;
    if (k >= K)
        return;
    unsigned cnt = counts[k];
    if (cnt != 0) {
        centroids[2 * k] = sums[2 * k] / (float)cnt;
        centroids[2 * k + 1] = sums[2 * k + 1] / (float)cnt;
    }
    sums[2 * k] = 0.0f;
    sums[2 * k + 1] = 0.0f;
    counts[k] = 0;
}
