// Issue 23.3: unordered strong accesses. Every pair here is morally strong (volatile is
// .relaxed.sys, atomics are .relaxed.gpu), so PTX calls none of them a data race; the
// racy kernels leave a conflicting pair unordered by happens-before, their twins order it
// and must stay silent.
// case: ua_volatile_waw_cta; expect: unordered:WAW; grid: 1; block: 64; args: v:u32[1]
// case: ua_volatile_waw_cta_barrier; expect: none; grid: 1; block: 64; args: v:u32[1]
// case: ua_volatile_waw_across; expect: unordered:WAW; grid: 2; block: 32; args: v:u32[1]
// case: ua_volatile_waw_across_fenced; expect: none; grid: 2; block: 32; args: v:u32[1], flag:u32[1]
// case: ua_volatile_same_value; expect: none; grid: 2; block: 64; args: v:u32[1]
// case: ub_exch_volatile; expect: unordered:WAW; grid: 2; block: 32; args: w:u32[1], flag:u32[1]
// case: ub_exch_volatile_fenced; expect: none; grid: 2; block: 32; args: w:u32[1], flag:u32[1]
// case: ub_exch_block_volatile; expect: insufficient-scope; grid: 2; block: 32; args: w:u32[1], flag:u32[1]
// case: uc_unlock_no_fence; expect: unordered:WAW; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: uc_unlock_fenced; expect: none; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: ud_lock_block_fence_across; expect: unordered:WAW; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: ud_lock_block_fence_one_cta; expect: none; grid: 1; block: 128; args: lock:u32[1], data:u32[1]
// case: ud_lock_fence_across; expect: none; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: ue_store_after_unlock; expect: unordered; grid: 4; block: 32; args: lock:u32[1], data:u32[1], out:u32[4]
// case: ue_store_before_unlock; expect: none; grid: 4; block: 32; args: lock:u32[1], data:u32[1], out:u32[4]
// case: uf_flag_spin; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: uf_flag_spin_reset; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: uf_flag_spin_atomic_poll; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: ug_counter_atomics; expect: none; grid: 4; block: 32; args: c:u32[1], out:u32[128]
// case: ug_volatile_unlock; expect: none; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: ug_volatile_unlock_no_fence; expect: unordered:WAW; grid: 4; block: 32; args: lock:u32[1], data:u32[1]
// case: uh_dekker_fenced; expect: none; grid: 2; block: 32; args: x:u32[1], y:u32[1], out:u32[2]
// case: uh_dekker_one_fence; expect: unordered; grid: 2; block: 32; args: x:u32[1], y:u32[1], out:u32[2]
// case: uh_dekker_block_fence_across; expect: unordered; grid: 2; block: 32; args: x:u32[1], y:u32[1], out:u32[2]
// case: uh_dekker_block_fence_one_cta; expect: none; grid: 1; block: 64; args: x:u32[1], y:u32[1], out:u32[2]
// case: uh_peterson; expect: none; grid: 2; block: 32; args: flag:u32[2], turn:u32[1], counter:u32[1]
// case: uh_turn_fenced_before_only; expect: unordered:WAW; grid: 2; block: 32; args: flag:u32[2], turn:u32[1], counter:u32[1]
// case: ui_mp_block_fences_across; expect: unordered:RAW; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: ui_mp_block_fences_one_cta; expect: none; grid: 1; block: 64; args: data:u32[1], flag:u32[1], out:u32[1]
// case: ui_mp_fences_across; expect: none; grid: 2; block: 32; args: data:u32[1], flag:u32[1], out:u32[1]
// case: ui_ticket_block_fences_across; expect: unordered; grid: 4; block: 32; args: next:u32[1], serving:u32[1], total:u32[1]
// case: ui_ticket_fenced_across; expect: none; grid: 4; block: 32; args: next:u32[1], serving:u32[1], total:u32[1]
// case: ui_ticket_unfenced_across; expect: unordered:RAW; grid: 4; block: 32; args: next:u32[1], serving:u32[1], total:u32[1]
// case: ui_last_block_no_writer_fence; expect: unordered:RAW; grid: 4; block: 32; args: partial:u32[4], count:u32[1], out:u32[1]
// case: ui_last_block_fenced; expect: none; grid: 4; block: 32; args: partial:u32[4], count:u32[1], out:u32[1]

/* (a) Two threads write different values to one volatile word, no synchronization:
   in one CTA (two warps) and across CTAs. */
extern "C" __global__ void ua_volatile_waw_cta(unsigned *v)
{
    if (threadIdx.x % 32 != 0) return;
    *(volatile unsigned *)v = threadIdx.x + 1;
}

extern "C" __global__ void ua_volatile_waw_cta_barrier(unsigned *v)
{
    if (threadIdx.x == 0) *(volatile unsigned *)v = 1;
    __syncthreads();
    if (threadIdx.x == 32) *(volatile unsigned *)v = 2;
}

extern "C" __global__ void ua_volatile_waw_across(unsigned *v)
{
    if (threadIdx.x != 0) return;
    *(volatile unsigned *)v = blockIdx.x + 1;
}

/* Twin: CTA 1 overwrites only after a release/acquire hand-off (fence + relaxed flag). */
extern "C" __global__ void ua_volatile_waw_across_fenced(unsigned *v, unsigned *flag)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *(volatile unsigned *)v = 1;
        __threadfence();
        atomicExch(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0u) { }
        __threadfence();
        *(volatile unsigned *)v = 2;
    }
}

/* Many threads writing the same value (a "done" flag) leave nothing to the schedule. */
extern "C" __global__ void ua_volatile_same_value(unsigned *v)
{
    if (threadIdx.x % 32 != 0) return;
    *(volatile unsigned *)v = 1;
}

/* (b) atomicExch and a volatile store to one word. CTA 1 waits for CTA 0's flag, but no
   fence on either side makes that synchronization: the store is not ordered after the
   exchange (and the wait makes the store the later write in every schedule). */
extern "C" __global__ void ub_exch_volatile(unsigned *w, unsigned *flag)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        atomicExch(w, 1u);
        atomicExch(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0u) { }
        *(volatile unsigned *)w = 2;
    }
}

extern "C" __global__ void ub_exch_volatile_fenced(unsigned *w, unsigned *flag)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        atomicExch(w, 1u);
        __threadfence();
        atomicExch(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0u) { }
        __threadfence();
        *(volatile unsigned *)w = 2;
    }
}

/* A .cta-scoped exchange against a volatile store of another CTA is not morally strong:
   it stays a data race, of class insufficient-scope. */
extern "C" __global__ void ub_exch_block_volatile(unsigned *w, unsigned *flag)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        atomicExch_block(w, 1u);
        atomicExch(flag, 1u);
    } else {
        while (atomicAdd(flag, 0u) == 0u) { }
        *(volatile unsigned *)w = 2;
    }
}

__device__ void u_lock(unsigned *l)
{
    while (atomicCAS(l, 0u, 1u) != 0u) { }
    __threadfence();
}

/* (c) A lock released by atomicExch with no fence before it: the next holder's write to
   the same (volatile) word is not ordered after the previous holder's. */
extern "C" __global__ void uc_unlock_no_fence(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    *(volatile unsigned *)data = blockIdx.x + 1;
    atomicExch(lock, 0u);
}

extern "C" __global__ void uc_unlock_fenced(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    *(volatile unsigned *)data = blockIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* (d) A lock taken with only __threadfence_block() by threads of different CTAs. */
extern "C" __global__ void ud_lock_block_fence_across(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence_block();
    *(volatile unsigned *)data = blockIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* Twins: the same inside one CTA (one taker per warp), and across CTAs with
   __threadfence(). */
extern "C" __global__ void ud_lock_block_fence_one_cta(unsigned *lock, unsigned *data)
{
    if (threadIdx.x % 32 != 0) return;
    while (atomicCAS(lock, 0u, 1u) != 0u) { }
    __threadfence_block();
    *(volatile unsigned *)data = threadIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0u);
}

extern "C" __global__ void ud_lock_fence_across(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    *(volatile unsigned *)data = blockIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0u);
}

/* (e) A volatile store made after the unlock while the next holder reads the word in its
   critical section. (Every holder stores the same value, so only the read/write pairs
   are at stake.) */
extern "C" __global__ void ue_store_after_unlock(unsigned *lock, unsigned *data, unsigned *out)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    out[blockIdx.x] = *(volatile unsigned *)data;
    __threadfence();
    atomicExch(lock, 0u);
    *(volatile unsigned *)data = 7;
}

extern "C" __global__ void ue_store_before_unlock(unsigned *lock, unsigned *data, unsigned *out)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    out[blockIdx.x] = *(volatile unsigned *)data;
    *(volatile unsigned *)data = 7;
    __threadfence();
    atomicExch(lock, 0u);
}

/* Correct flag hand-offs: the flag's store and its polls are the synchronization. */
extern "C" __global__ void uf_flag_spin(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *(volatile unsigned *)flag = 1;
    } else {
        while (*(volatile unsigned *)flag == 0) { }
        __threadfence();
        out[0] = data[0];
    }
}

/* The consumer resets the flag it saw: it overwrites a value it read. */
extern "C" __global__ void uf_flag_spin_reset(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *(volatile unsigned *)flag = 1;
    } else {
        while (*(volatile unsigned *)flag == 0) { }
        __threadfence();
        out[0] = data[0];
        *(volatile unsigned *)flag = 0;
    }
}

/* Polled with atomicAdd(flag, 0), an RMW that writes nothing. */
extern "C" __global__ void uf_flag_spin_atomic_poll(unsigned *data, unsigned *flag, unsigned *out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *(volatile unsigned *)flag = 1;
    } else {
        while (atomicAdd(flag, 0u) == 0u) { }
        __threadfence();
        out[0] = data[0];
    }
}

/* Two atomicAdds on a counter are never a race. */
extern "C" __global__ void ug_counter_atomics(unsigned *c, unsigned *out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = atomicAdd(c, 1u);
}

/* A lock released by a fenced volatile store: the failed CASes of waiting threads (RMWs
   that write nothing) against the unlocking store are synchronization. */
extern "C" __global__ void ug_volatile_unlock(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    *(volatile unsigned *)data = blockIdx.x + 1;
    __threadfence();
    *(volatile unsigned *)lock = 0;
}

extern "C" __global__ void ug_volatile_unlock_no_fence(unsigned *lock, unsigned *data)
{
    if (threadIdx.x != 0) return;
    u_lock(lock);
    *(volatile unsigned *)data = blockIdx.x + 1;
    *(volatile unsigned *)lock = 0;
}

/* (h) The store-buffering handshake (Dekker): each side announces with a strong store,
   fences with fence.sc, then checks the other's word. Whichever fence.sc comes second
   sees the other side's store, so the two reads cannot both miss; the pair whose fence
   came first is left unordered by happens-before, and that is the handshake working, not
   a stale read: no report when both sides fence with fence.sc whose scopes include each
   other. Twins: one side without its fence, and __threadfence_block() across CTAs (its
   fence.sc.cta is not morally strong with the other CTA's), are reported. */
static __device__ void uh_side(unsigned *mine, unsigned *theirs, unsigned *out, int side,
                               int fence)
{
    *(volatile unsigned *)mine = 1;
    if (fence == 1) __threadfence();
    if (fence == 2) __threadfence_block();
    out[side] = *(volatile unsigned *)theirs;
}

extern "C" __global__ void uh_dekker_fenced(unsigned *x, unsigned *y, unsigned *out)
{
    if (threadIdx.x != 0) return;
    int side = blockIdx.x;
    uh_side(side ? y : x, side ? x : y, out, side, 1);
}

extern "C" __global__ void uh_dekker_one_fence(unsigned *x, unsigned *y, unsigned *out)
{
    if (threadIdx.x != 0) return;
    int side = blockIdx.x;
    uh_side(side ? y : x, side ? x : y, out, side, side == 0 ? 1 : 0);
}

extern "C" __global__ void uh_dekker_block_fence_across(unsigned *x, unsigned *y, unsigned *out)
{
    if (threadIdx.x != 0) return;
    int side = blockIdx.x;
    uh_side(side ? y : x, side ? x : y, out, side, 2);
}

extern "C" __global__ void uh_dekker_block_fence_one_cta(unsigned *x, unsigned *y, unsigned *out)
{
    if (threadIdx.x % 32 != 0) return;
    int side = threadIdx.x / 32;
    uh_side(side ? y : x, side ? x : y, out, side, 2);
}

/* Peterson's lock between two CTAs in the classic CUDA form. Its `turn` is written by
   both sides with different values and nothing orders the two stores: the last writer
   waits, by design. Each store is preceded and followed by __threadfence(). */
extern "C" __global__ void uh_peterson(unsigned *flag, unsigned *turn, unsigned *counter)
{
    if (threadIdx.x != 0) return;
    unsigned me = blockIdx.x, other = 1 - me;
    volatile unsigned *f = flag, *t = turn;
    for (int i = 0; i < 2; i++) {
        f[me] = 1;
        __threadfence();
        *t = other;
        __threadfence();
        while (f[other] && *t == other) { }
        __threadfence();
        *counter += 1;
        __threadfence();
        f[me] = 0;
    }
}

/* Twin: `turn` stored after a fence but with none after it (no handshake): reported. */
extern "C" __global__ void uh_turn_fenced_before_only(unsigned *flag, unsigned *turn,
                                                      unsigned *counter)
{
    if (threadIdx.x != 0) return;
    __threadfence();
    *(volatile unsigned *)turn = blockIdx.x + 1;
}

/* (i) Strong data handed over with __threadfence_block() on both sides. The fences stand
   where a release/acquire pattern would put them (one before the data store, one after
   the data read), but a .cta fence orders nothing for another CTA: across CTAs the data
   pair is unordered; within one CTA (writer warp 0, reader warp 1) it is synchronized, and
   with __threadfence() across CTAs too. FENCE_W / FENCE_R are the two sides' fences.
   (With the block fence on one side only the pair is not reported: rule 3 takes the
   fenced side for a flag's synchronization; the `weak` model finds those by execution.) */
#define UI_MP(name, FENCE_W, FENCE_R, READER)                                           \
    extern "C" __global__ void name(unsigned *data, unsigned *flag, unsigned *out)     \
    {                                                                                  \
        volatile unsigned *d = data, *f = flag;                                        \
        if (threadIdx.x % 32 != 0) return;                                             \
        if (!(READER)) {                                                               \
            FENCE_W;                                                                   \
            *d = 42;                                                                   \
            FENCE_W;                                                                   \
            *f = 1;                                                                    \
        } else {                                                                       \
            while (*f == 0) { }                                                        \
            FENCE_R;                                                                   \
            out[0] = *d;                                                               \
            FENCE_R;                                                                   \
        }                                                                              \
    }
UI_MP(ui_mp_block_fences_across, __threadfence_block(), __threadfence_block(), blockIdx.x == 1)
UI_MP(ui_mp_block_fences_one_cta, __threadfence_block(), __threadfence_block(), threadIdx.x == 32)
UI_MP(ui_mp_fences_across, __threadfence(), __threadfence(), blockIdx.x == 1)

/* A ticket lock in four CTAs, two turns each: with __threadfence() around the critical
   section it is correct (a waiter that took its ticket from the unlocker's *next* ticket
   RMW, with no fence between the unlock and that RMW, still just waits: its poll of
   `serving` is no stale read of data — reported before 2026-12-07); with
   __threadfence_block() or no fences, the volatile counter of the critical section is
   read and written unordered. */
#define UI_TICKET(name, FENCE)                                                          \
    extern "C" __global__ void name(unsigned *next, unsigned *serving, unsigned *total) \
    {                                                                                   \
        if (threadIdx.x != 0) return;                                                   \
        volatile unsigned *s = serving, *t = total;                                     \
        for (int r = 0; r < 2; ++r) {                                                   \
            unsigned my = atomicAdd(next, 1u);                                          \
            while (*s != my) { }                                                        \
            FENCE;                                                                      \
            *t = *t + 1;                                                                \
            FENCE;                                                                      \
            *s = my + 1;                                                                \
        }                                                                               \
    }
UI_TICKET(ui_ticket_block_fences_across, __threadfence_block())
UI_TICKET(ui_ticket_fenced_across, __threadfence())
UI_TICKET(ui_ticket_unfenced_across, (void)0)

/* The last-block pattern with volatile partial results: the last block learns it is last
   from its own atomicInc (an RMW that takes a ticket) and then reads the partials, which
   are no polls. Without the writer's fence between its partial and its ticket, that read
   may be stale and is reported (the ticket exemption above is for polls only); with
   __threadfence() on both sides it is ordered. */
#define UI_LAST(name, FENCE)                                                            \
    extern "C" __global__ void name(unsigned *partial, unsigned *count, unsigned *out)  \
    {                                                                                   \
        if (threadIdx.x != 0) return;                                                   \
        volatile unsigned *p = partial;                                                 \
        p[blockIdx.x] = blockIdx.x + 1;                                                 \
        FENCE;                                                                          \
        if (atomicInc(count, gridDim.x) == gridDim.x - 1) {                             \
            FENCE;                                                                      \
            unsigned s = 0;                                                             \
            for (unsigned b = 0; b < gridDim.x; ++b) s += p[b];                         \
            out[0] = s;                                                                 \
        }                                                                               \
    }
UI_LAST(ui_last_block_no_writer_fence, (void)0)
UI_LAST(ui_last_block_fenced, __threadfence())
