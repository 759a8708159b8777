// fencehound-corpus: cuda::atomic_ref (libcu++): fetch_add relaxed/acq_rel, load(acquire), store(release), exchange, compare_exchange_strong, fetch_min/max/and/or, thread_scope_block/device/system
// categories: libcu++, atomic, fence, module-var
// nvrtc-flags: -I$CCCL_INCLUDE
// launch: grid=2 block=64 dynamic_shared=0
// args: acc:u32[10] zero, wide:u64[2] zero, out:u32[128] zero
// expect: acc[0] == 128; acc[2] == 128 (CAS counter); acc[4] == 127; acc[5] == 0xffffffff; acc[6] in 0..127; acc[7] == 0x1234 (release/acquire publication); acc[8] == acc[9] == 64 (per-block block-scope adds); wide[0] == 8128; out[0..127] is a permutation of 0..127

#include <cuda/atomic>

extern "C" __global__ void libcupp_atomic_ref(unsigned *acc, unsigned long long *wide, unsigned *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> dev_cnt(acc[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> blk_cnt(acc[8 + blockIdx.x]);   /* block scope: one slot per CTA */
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> sys_cas(acc[2]);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> wsum(wide[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag(acc[3]);

    out[t] = dev_cnt.fetch_add(1u, cuda::memory_order_relaxed);
    blk_cnt.fetch_add(1u, cuda::memory_order_acq_rel);
    wsum.fetch_add((unsigned long long)t, cuda::memory_order_seq_cst);

    unsigned expected = sys_cas.load(cuda::memory_order_relaxed);
    while (!sys_cas.compare_exchange_strong(expected, expected + 1u,
                                            cuda::memory_order_acq_rel,
                                            cuda::memory_order_relaxed)) {
    }

    cuda::atomic_ref<unsigned, cuda::thread_scope_device> mn(acc[4]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> mx(acc[5]);
    mn.fetch_max(t, cuda::memory_order_release);
    mx.fetch_or(1u << (t & 31), cuda::memory_order_acquire);
    unsigned old = cuda::atomic_ref<unsigned, cuda::thread_scope_system>(acc[6])
                       .exchange(t, cuda::memory_order_acq_rel);
    (void)old;

    /* release/acquire publication: the last thread of block 0 stores a flag */
    if (t == 63) {
        wide[1] = 0x1234;
        flag.store(1u, cuda::memory_order_release);
    }
    if (t == 64) {
        while (flag.load(cuda::memory_order_acquire) == 0u) { }
        acc[7] = (unsigned)wide[1];
    }
}
