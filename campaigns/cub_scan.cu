// cub_scan: single-pass prefix sum with decoupled look-back (Merrill & Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", 2016), written from the paper's
// description. Inclusive scan of unsigned ints.
//
// Tiles are numbered by a dynamic ticket (atomicAdd), so a tile only ever waits for tiles
// whose blocks are already running: the look-back makes progress under any schedule.
// Each tile has a status word (X = not ready, A = aggregate ready, P = inclusive prefix
// ready) and two value words, `aggregate` and `inclusive`, stored SEPARATELY from the
// status: a reader that sees the status must also see the value, so each writer needs a
// fence between the value store and the status store.
//
//   FENCE_1  tile 0 publishes its inclusive prefix (value, fence, status = P)
//   FENCE_2  tile i > 0 publishes its aggregate (value, fence, status = A)
//   FENCE_3  tile i > 0 publishes its inclusive prefix after the look-back
//            (value, fence, status = P)
//
// The reader side reads the status with ld.acquire.gpu, so its later value loads are
// ordered after it (on hardware; the write-buffer model never delays loads). The reader
// therefore needs no fence of its own, and each of the three writer fences is necessary:
// without one, a reader can see A or P while the matching value is still buffered and add
// a stale 0 into its prefix.
#ifndef FENCE_1
#define FENCE_1 __threadfence()
#endif
#ifndef FENCE_2
#define FENCE_2 __threadfence()
#endif
#ifndef FENCE_3
#define FENCE_3 __threadfence()
#endif

#define THREADS 64
#define ITEMS 4
#define TILE (THREADS * ITEMS)

#define STATUS_X 0u
#define STATUS_A 1u
#define STATUS_P 2u

__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Inclusive scan of one value per thread across the block (Hillis-Steele in shared memory).
__device__ unsigned block_inclusive_scan(unsigned v, unsigned *s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned d = 1; d < THREADS; d <<= 1) {
        unsigned add = threadIdx.x >= d ? s[threadIdx.x - d] : 0u;
        __syncthreads();
        s[threadIdx.x] += add;
        __syncthreads();
    }
    return s[threadIdx.x];
}

extern "C" __global__ void scan(const unsigned *in, unsigned *out, unsigned *ticket,
                                unsigned *status, unsigned *aggregate, unsigned *inclusive) {
    __shared__ unsigned s_tile;
    __shared__ unsigned s_prefix;
    __shared__ unsigned s_scan[THREADS];

    if (threadIdx.x == 0)
        s_tile = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned tile = s_tile;

    // Each thread owns ITEMS consecutive elements of the tile.
    unsigned items[ITEMS];
    unsigned base = tile * TILE + threadIdx.x * ITEMS;
    unsigned run = 0;
    for (int k = 0; k < ITEMS; ++k) {
        run += in[base + k];
        items[k] = run;
    }
    unsigned incl = block_inclusive_scan(run, s_scan);
    unsigned thread_excl = incl - run;
    unsigned tile_aggregate = s_scan[THREADS - 1];

    volatile unsigned *vstatus = status;
    volatile unsigned *vaggregate = aggregate;
    volatile unsigned *vinclusive = inclusive;

    if (threadIdx.x == 0) {
        if (tile == 0) {
            s_prefix = 0;
        } else {
            vaggregate[tile] = tile_aggregate;
            FENCE_2;
            vstatus[tile] = STATUS_A;
            // Look back over the predecessors until one has its inclusive prefix.
            unsigned exclusive = 0;
            int j = (int)tile - 1;
            while (true) {
                unsigned st;
                do {
                    st = load_acquire(status + j);
                } while (st == STATUS_X);
                if (st == STATUS_P) {
                    exclusive += vinclusive[j];
                    break;
                }
                exclusive += vaggregate[j];
                --j;
            }
            s_prefix = exclusive;
        }
    }
    __syncthreads();
    const unsigned tile_prefix = s_prefix;

    // The inclusive prefix is published after the barrier, so that nothing but the fence
    // orders the value before the status (a barrier drains the write buffers too).
    if (threadIdx.x == 0) {
        if (tile == 0) {
            vinclusive[0] = tile_aggregate;
            FENCE_1;
            vstatus[0] = STATUS_P;
        } else {
            vinclusive[tile] = tile_prefix + tile_aggregate;
            FENCE_3;
            vstatus[tile] = STATUS_P;
        }
    }

    for (int k = 0; k < ITEMS; ++k)
        out[base + k] = tile_prefix + thread_excl + items[k];
}
