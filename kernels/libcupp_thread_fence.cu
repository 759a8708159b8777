// fencehound-corpus: cuda::atomic_thread_fence with orders (release, acquire, acq_rel, seq_cst) and scopes (block, device, system) around relaxed atomic_ref flags; a fenced message-passing chain across blocks
// categories: libcu++, fence, atomic, warp, module-var
// nvrtc-flags: -I$CCCL_INCLUDE
// launch: grid=3 block=32 dynamic_shared=0
// args: data:u32[64] zero, flags:u32[2] zero, out:u32[32] zero
// expect: out[i] == 5*i + 2 for i in 0..31 (block 0 -> block 1 -> block 2 relay)

#include <cuda/atomic>

extern "C" __global__ void libcupp_thread_fence(unsigned *data, unsigned *flags, unsigned *out)
{
    unsigned lane = threadIdx.x;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f0(flags[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> f1(flags[1]);
    if (blockIdx.x == 0) {
        data[lane] = 5 * lane + 2;
        cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_block);
        __syncwarp();
        if (lane == 0) {
            cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
            f0.store(1u, cuda::memory_order_relaxed);
        }
    } else if (blockIdx.x == 1) {
        if (lane == 0) {
            while (f0.load(cuda::memory_order_relaxed) == 0u) { }
            cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        }
        __syncwarp();
        data[32 + lane] = data[lane];
        cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_block);
        __syncwarp();
        if (lane == 0) {
            cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
            f1.store(1u, cuda::memory_order_relaxed);
        }
    } else {
        if (lane == 0) {
            while (f1.load(cuda::memory_order_relaxed) == 0u) { }
            cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
        }
        __syncwarp();
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_block);
        out[lane] = data[32 + lane];
    }
}
