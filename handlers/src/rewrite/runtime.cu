// fencehound device runtime: per-thread write buffers on the GPU.
//
// The PTX->PTX rewrite (handlers/src/rewrite) replaces every global/shared memory access,
// fence, barrier and thread exit of a kernel by a call into these functions, which
// implement the drain table of handlers/src/buffers.rs (the native handlers) under
// DrainPolicy::Device. Every rule here names the native function it mirrors; the
// differential test (fuzzer/tests/differential.rs) runs both and requires equal results.
//
// Memory (all global, allocated and initialised by the host, see layout.rs):
//   __fencehound_ctl  -> FhCtl (seed, launch, flags, sizes, pointers)
//   thread area       -> one FhThread header + 2*capacity FhEntry per thread
//   CTA area          -> per CTA one FhCta header, ov_capacity FhEntry of overlay (scoped)
//                        and ov_capacity FhEntry of orphans (entries of exited threads)
//   counters          -> drains per reason [16], flush-length histograms [2][bins]
//
// Each thread owns its buffer (one queue in store order for both spaces, with per-space
// counts, which is the native pair of queues merged by sequence number). A CTA's overlay
// and orphan queue are shared and guarded by the CTA's lock, held for the whole of a
// call that touches them; a thread holds at most one CTA lock at a time. Compiled by NVRTC (-rdc, compute_75, no line info) into runtime.ptx, which
// is committed; `cargo run -p fencehound-handlers --example gen_runtime` regenerates it.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

#define FH_ACTIVE 1u
#define FH_GLOBAL 2u
#define FH_SHARED 4u
#define FH_SCOPED 8u

// meta word of a call: bits 0-3 size, 4 release, 5-6 scope (0 cta, 1 gpu, 2 sys),
// 7 not eligible (site filter), 8-11 drain reason, 12 .cta atomic, 13-14 store semantics
// (0 weak, 1 volatile, 2 relaxed, 3 release).
#define M_SIZE(m) ((m) & 15u)
#define M_RELEASE(m) (((m) >> 4) & 1u)
#define M_SCOPE(m) (((m) >> 5) & 3u)
#define M_INELIGIBLE(m) (((m) >> 7) & 1u)
#define M_REASON(m) (((m) >> 8) & 15u)
#define M_CTA_ATOM(m) (((m) >> 12) & 1u)
#define M_SEM(m) (((m) >> 13) & 3u)

#define SCOPE_CTA 0u
#define SCOPE_SYS 2u

// DrainReason, in the order of handlers/src/stats.rs.
#define R_RELEASE 1u
#define R_ATOMIC 4u
#define R_WAW 5u
#define R_PARTIAL 6u
#define R_FULL 7u
#define R_KERNEL_EXIT 9u
#define R_LIVENESS 11u

// Entry key: generic address (bits 0-55), size-1 (56-58), space (59: 0 global, 1 shared),
// semantics to drain with (60-61), scope (62-63).
#define K_ADDR(k) ((k) & 0x00ffffffffffffffull)
#define K_SIZE(k) ((u32)(((k) >> 56) & 7u) + 1u)
#define K_SPACE(k) ((u32)(((k) >> 59) & 1u))
#define K_SEM(k) ((u32)(((k) >> 60) & 3u))
#define K_SCOPE(k) ((u32)(((k) >> 62) & 3u))

struct FhCtl {
    u64 key;  // mix(mix(seed) ^ launch): select::launch_key, written by the host per launch
    u64 threshold;
    u32 launch;
    u32 flags;
    u32 capacity;
    u32 liveness;
    u32 ov_capacity;
    u32 nthreads;
    u64 threads;
    u64 overlays;
    u64 counters;
    u32 exited;  // threads of this launch that have exited
    u32 mode;  // mode bytes of the rewrite's fast path (layout.rs, launch_mode)
    u32 holders;  // live threads holding entries (the liveness pick's own weight)
    u32 pad;
};

struct FhEntry {
    u64 key;
    u64 value;
};

// 176 bytes; the entries follow.
struct FhThread {
    u32 tag;  // launch + 1 once initialised for that launch
    u32 len;  // entries, both spaces
    u32 len_s[2];
    u64 stores;  // stores this launch (the selection counter n)
    u64 pad3;  // (was the unmixed prefix: see fh_thread_prefix)
    u32 ticks;   // loads and atomics since the last liveness drain
    u32 pad0;
    u64 scratch;  // forwarded load values; .cta atomics on the overlay
    u64 visible;
    u64 atom_key;
    // statistics, summed by the host over all launches
    u64 seen[2];
    u64 buffered[2];
    u64 forwarded;
    u64 overlay_loads;
    u32 peak;
    u32 pad2;
    // 8-byte blocks (address bits 3-8) its entries may touch since the buffer was last
    // empty: a superset, so a clear bit means no entry overlaps (see fh_blocks).
    u64 blocks;
    // Set with the header: the own CTA's FhCta (the slow paths' CTA; the rewrite's inlined
    // code keeps it in a register, see emit.rs's cache).
    u64 cta;
    // The rewrite's inlined code reads the constants it compares against (thresholds per
    // space, liveness - 1, capacity, the scoped flag) from the control block's words after
    // FhCtl (layout.rs, control_bytes), not from here.
    // The selection hash's per-thread part, mix(key ^ thread): written by fh_self's set-up
    // and by the inlined set-up when a store may hash (0 < p_w < 1), so it is there
    // whenever fh_selected needs it; fh_thread_prefix computes it where it may not be.
    u64 mixed;
    // Set with the header, side by side so that the inlined set-up writes them at once.
    u32 total;  // threads of the launch (__fencehound_exit and the rewrite's inlined exit)
    u32 atom_pending;
    u32 lives;  // liveness drains of this thread this launch (seeds their pick)
    u32 pad;
    // Written by the inlined code alone (emit.rs, "the cache"): stores it pushed to the
    // buffer, per space (each one also seen and buffered: the host adds them to both, so
    // that a push is one `red`, not two).
    u64 pushed[2];
};

// 16 bytes; ov_capacity overlay entries and ov_capacity orphan entries follow.
struct FhCta {
    u32 lock;
    u32 ov_len;
    u32 orph_len;
    u32 orph_thr;  // exited threads whose entries joined the orphans since they were empty
};

extern "C" {
__device__ u64 __fencehound_ctl;
// Markers of the lockstep flavour: [0] begin, [1] end, [2] end before a fence/barrier/exit.
__device__ u32 __fencehound_mark[4];
}

#define HEADER 176u
// The offsets emit.rs's inlined code uses (its T_* constants).
static_assert(sizeof(FhThread) == HEADER, "FhThread is the 176-byte header");
static_assert(__builtin_offsetof(FhThread, pushed) == 160, "emit.rs T_PUSHED");
static_assert(__builtin_offsetof(FhThread, blocks) == 120, "emit.rs T_BLOCKS");
static_assert(__builtin_offsetof(FhThread, cta) == 128, "emit.rs T_CTA");
static_assert(__builtin_offsetof(FhThread, total) == 144, "emit.rs T_TOTAL");
static_assert(__builtin_offsetof(FhThread, atom_pending) == 148, "emit.rs T_ATOM_PENDING");
static_assert(__builtin_offsetof(FhThread, lives) == 152, "emit.rs T_LIVES");
static_assert(__builtin_offsetof(FhThread, mixed) == 136, "emit.rs T_MIXED");

static __device__ __forceinline__ u64 fh_mix(u64 x) {
    u64 z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Whether the thread's store number n is selected (select::selected): a threshold of
// 2^53 (p_w = 1) selects every store, 0 none, without the hash, which uses the header's
// `mixed` (there whenever a store may hash: see FhThread).
static __device__ __forceinline__ bool fh_selected(const FhThread *t, u64 n, u64 threshold) {
    if (threshold >= (1ull << 53)) return true;
    if (threshold == 0) return false;
    return (fh_mix(t->mixed ^ n) >> 11) < threshold;
}

struct Fh {
    const FhCtl *c;
    FhThread *t;
    FhEntry *q;
    FhCta *o;  // own CTA
    bool scoped;
    bool locked;  // own CTA's lock held
};

static __device__ __forceinline__ u32 fh_cta() {
    return blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
}

// The calling thread's index in the launch (the header's index).
static __device__ __forceinline__ u32 fh_thread_index() {
    u32 tpc = blockDim.x * blockDim.y * blockDim.z;
    u32 tid = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    return fh_cta() * tpc + tid;
}

// The selection hash's per-thread part, mix(key ^ thread) (select::mix of the launch key
// ^ the thread), computed: at p_w = 1 the inlined set-up does not write the header's
// `mixed` (no store hashes), and the liveness pick needs it at every p_w.
static __device__ __forceinline__ u64 fh_thread_prefix(const FhCtl *c) {
    return fh_mix(c->key ^ (u64)fh_thread_index());
}

static __device__ __forceinline__ FhCta *fh_cta_area(const FhCtl *c, u32 cta) {
    u64 stride = 16ull + 2ull * (u64)c->ov_capacity * sizeof(FhEntry);
    return (FhCta *)(c->overlays + (u64)cta * stride);
}

// The thread's header, initialised on its first use in a launch; null when the launch
// does not buffer (model sc, or a kernel outside the filter).
static __device__ __forceinline__ FhThread *fh_self(const FhCtl **cp) {
    const FhCtl *c = (const FhCtl *)__fencehound_ctl;
    *cp = c;
    if (c == 0 || !(c->flags & FH_ACTIVE)) return 0;
    u32 g = fh_thread_index();
    if (g >= c->nthreads) __trap();
    u64 stride = HEADER + 2ull * c->capacity * sizeof(FhEntry);
    FhThread *t = (FhThread *)(c->threads + (u64)g * stride);
    u32 tag = c->launch + 1;
    if (t->tag != tag) {
        // The control block's words read once, before the header's stores (which the
        // compiler must otherwise assume may alias them and reload each).
        u64 key = c->key;
        u64 area = (u64)fh_cta_area(c, fh_cta());
        t->tag = tag;
        t->len = 0;
        t->len_s[0] = 0;
        t->len_s[1] = 0;
        t->stores = 0;
        t->ticks = 0;
        t->lives = 0;
        t->atom_pending = 0;
        t->blocks = 0;
        t->mixed = fh_mix(key ^ (u64)g);  // fh_thread_prefix, with the key read above
        t->cta = area;
        t->total = gridDim.x * gridDim.y * gridDim.z * (blockDim.x * blockDim.y * blockDim.z);
    }
    return t;
}

// The filter bits of an access of `size` bytes at a (at most two 8-byte blocks).
static __device__ __forceinline__ u64 fh_blocks(u64 a, u32 size) {
    return (1ull << ((a >> 3) & 63)) | (1ull << (((a + size - 1) >> 3) & 63));
}

// Whether none of the thread's entries can overlap [a, a+size).
static __device__ __forceinline__ bool fh_miss(const FhThread *t, u64 a, u32 size) {
    return t->len == 0 || (t->blocks & fh_blocks(a, size)) == 0;
}

// The thread's buffer and its CTA's, for the full (slow) paths, from its header.
static __device__ __forceinline__ void fh_begin_from(Fh &f, const FhCtl *c, FhThread *t) {
    f.c = c;
    f.t = t;
    f.q = (FhEntry *)((char *)t + HEADER);
    f.scoped = (c->flags & FH_SCOPED) != 0;
    f.o = (FhCta *)t->cta;
    f.locked = false;
}

// The thread's header from an entry point's first argument: what __fencehound_begin
// returned (a fast kernel keeps it in a register and passes it), or 0, and it is looked up.
// A nonzero one is this launch's (the kernel found it at entry), so it is already set up.
static __device__ __forceinline__ FhThread *fh_given(u64 th, const FhCtl **cp) {
    if (th == 0) return fh_self(cp);
    *cp = (const FhCtl *)__fencehound_ctl;
    return (FhThread *)th;
}

// The thread's buffer and its CTA's, for the full (slow) paths.
static __device__ bool fh_begin(Fh &f, u64 th) {
    const FhCtl *c;
    FhThread *t = fh_given(th, &c);
    if (t == 0) return false;
    f.c = c;
    f.t = t;
    f.q = (FhEntry *)((char *)t + HEADER);
    f.scoped = (c->flags & FH_SCOPED) != 0;
    f.o = (FhCta *)t->cta;
    f.locked = false;
    return true;
}

// Whether the own CTA overlay may hold entries relevant to an access of space s (the
// fast paths' test; see fh_overlay_nonempty).
static __device__ __forceinline__ bool fh_fast_overlay(const FhCtl *c, const FhThread *t,
                                                       int s) {
    return (c->flags & FH_SCOPED) && s == 0 && *(volatile u32 *)&((FhCta *)t->cta)->ov_len != 0;
}

static __device__ __forceinline__ void fh_cta_lock(FhCta *c) {
    // The back-off also yields on the vgpu, where the runtime's code is otherwise never
    // a preemption point (fencehound_vgpu::Quiet): a lane waiting for another lane of its
    // own warp lets it run.
    while (atomicCAS(&c->lock, 0u, 1u) != 0u) {
        __nanosleep(32);
    }
    __threadfence();
}

static __device__ __forceinline__ void fh_cta_unlock(FhCta *c) {
    __threadfence();
    atomicExch(&c->lock, 0u);
}

// The own CTA's overlay is touched only under its lock (scoped model), held until fh_end.
static __device__ __forceinline__ void fh_lock(Fh &f) {
    if (f.scoped && !f.locked) {
        fh_cta_lock(f.o);
        f.locked = true;
    }
}

static __device__ __forceinline__ void fh_end(Fh &f) {
    if (f.locked) {
        fh_cta_unlock(f.o);
        f.locked = false;
    }
}

// The thread's buffer became empty (-1) or non-empty (+1): the count of live holders
// (WriteBuffers::holders), which weighs the own buffer in the liveness pick (fh_tick).
static __device__ __forceinline__ void fh_holders(Fh &f, int d) {
    atomicAdd((u32 *)&f.c->holders, (u32)d);
}

static __device__ __forceinline__ FhEntry *fh_ov_entries(const Fh &f, FhCta *c) {
    return (FhEntry *)((char *)c + 16);
}

static __device__ __forceinline__ FhEntry *fh_orphan_entries(const Fh &f, FhCta *c) {
    return (FhEntry *)((char *)c + 16) + f.c->ov_capacity;
}

// 0 global, 1 shared, -1 anything else (local, const, param: the native hooks never see
// those accesses).
static __device__ __forceinline__ int fh_space(u64 g) {
    if (__isGlobal((const void *)g)) return 0;
    if (__isShared((const void *)g)) return 1;
    return -1;
}

static __device__ __forceinline__ u64 fh_mask(u32 size) {
    return size >= 8 ? ~0ull : ((1ull << (size * 8)) - 1);
}

static __device__ __forceinline__ bool fh_overlaps(u64 key, u64 a, u32 size) {
    u64 ea = K_ADDR(key);
    return ea < a + size && a < ea + K_SIZE(key);
}

// Plain (weak) generic access of `size` bytes, spelled exactly.
static __device__ __noinline__ u64 fh_read(u64 a, u32 size) {
    u64 v = 0;
    if (size == 1) {
        u16 x;
        asm volatile("ld.u8 %0, [%1];" : "=h"(x) : "l"(a) : "memory");
        v = x;
    } else if (size == 2) {
        u16 x;
        asm volatile("ld.u16 %0, [%1];" : "=h"(x) : "l"(a) : "memory");
        v = x;
    } else if (size == 4) {
        u32 x;
        asm volatile("ld.u32 %0, [%1];" : "=r"(x) : "l"(a) : "memory");
        v = x;
    } else {
        asm volatile("ld.u64 %0, [%1];" : "=l"(v) : "l"(a) : "memory");
    }
    return v;
}

#define FH_ST(SEM, a, v, size)                                                              \
    do {                                                                                    \
        if (size == 1)                                                                      \
            asm volatile("st" SEM ".u8 [%0], %1;" ::"l"(a), "h"((u16)(v)) : "memory");    \
        else if (size == 2)                                                                 \
            asm volatile("st" SEM ".u16 [%0], %1;" ::"l"(a), "h"((u16)(v)) : "memory");   \
        else if (size == 4)                                                                 \
            asm volatile("st" SEM ".u32 [%0], %1;" ::"l"(a), "r"((u32)(v)) : "memory");   \
        else                                                                                \
            asm volatile("st" SEM ".u64 [%0], %1;" ::"l"(a), "l"((u64)(v)) : "memory");   \
    } while (0)

// Writes an entry to memory with the strength of the store it came from: a buffered
// release store still orders the writes drained before it when it reaches memory, and a
// buffered strong store stays morally strong.
static __device__ __noinline__ void fh_write_entry(u64 key, u64 v) {
    u64 a = K_ADDR(key);
    u32 size = K_SIZE(key);
    u32 sem = K_SEM(key), scope = K_SCOPE(key);
    if (sem == 0) {
        FH_ST("", a, v, size);
    } else if (sem == 1) {
        FH_ST(".volatile", a, v, size);
    } else if (sem == 2) {
        if (scope == 0)
            FH_ST(".relaxed.cta", a, v, size);
        else if (scope == 1)
            FH_ST(".relaxed.gpu", a, v, size);
        else
            FH_ST(".relaxed.sys", a, v, size);
    } else {
        if (scope == 0)
            FH_ST(".release.cta", a, v, size);
        else if (scope == 1)
            FH_ST(".release.gpu", a, v, size);
        else
            FH_ST(".release.sys", a, v, size);
    }
}

// fh_write_entry with the weak case (every plain store's) inline.
static __device__ __forceinline__ void fh_write_fast(u64 key, u64 v) {
    if (K_SEM(key) == 0) {
        u64 a = K_ADDR(key);
        u32 size = K_SIZE(key);
        FH_ST("", a, v, size);
    } else {
        fh_write_entry(key, v);
    }
}

// Flush-length histograms have one bin per length up to the longest possible flush: a
// thread's space (capacity) or a CTA's orphan queue (ov_capacity).
static __device__ __forceinline__ u32 fh_bins(const FhCtl *c) {
    return (c->capacity > c->ov_capacity ? c->capacity : c->ov_capacity) + 1;
}

static __device__ __forceinline__ void fh_record_c(const FhCtl *c, u32 n0, u32 n1, u32 reason) {
    u64 *k = (u64 *)c->counters;
    if (n0) {
        atomicAdd(&k[16 + n0], 1ull);
        atomicAdd(&k[reason], (u64)n0);
    }
    if (n1) {
        atomicAdd(&k[16 + fh_bins(c) + n1], 1ull);
        atomicAdd(&k[reason], (u64)n1);
    }
}

static __device__ __noinline__ void fh_record(Fh &f, u32 n0, u32 n1, u32 reason) {
    fh_record_c(f.c, n0, n1, reason);
}

// WriteBuffers::drain_overlay: CTA c's whole overlay to memory, oldest first (its lock
// held).
static __device__ __noinline__ void fh_drain_overlay_c(Fh &f, FhCta *c) {
    FhEntry *e = fh_ov_entries(f, c);
    u32 n = c->ov_len;
    for (u32 i = 0; i < n; i++) fh_write_entry(e[i].key, e[i].value);
    c->ov_len = 0;
}

static __device__ void fh_drain_overlay(Fh &f) {
    if (!f.scoped) return;
    fh_lock(f);
    fh_drain_overlay_c(f, f.o);
}

// WriteBuffers::drain_overlay_addr: CTA c's overlay entries overlapping [a, a+size) to
// memory (its lock held).
static __device__ __noinline__ void fh_drain_overlay_addr_c(Fh &f, FhCta *c, u64 a, u32 size) {
    if (!f.scoped || fh_space(a) != 0) return;
    FhEntry *e = fh_ov_entries(f, c);
    u32 n = c->ov_len, j = 0;
    for (u32 i = 0; i < n; i++) {
        if (fh_overlaps(e[i].key, a, size)) {
            fh_write_entry(e[i].key, e[i].value);
        } else {
            e[j++] = e[i];
        }
    }
    c->ov_len = j;
}

static __device__ void fh_drain_overlay_addr(Fh &f, u64 a, u32 size) {
    if (!f.scoped || fh_space(a) != 0) return;
    fh_lock(f);
    fh_drain_overlay_addr_c(f, f.o, a, size);
}

// WriteBuffers::commit_entry for an entry of CTA c (its lock held when scoped).
static __device__ void fh_commit_c(Fh &f, FhCta *c, FhEntry e) {
    fh_drain_overlay_addr_c(f, c, K_ADDR(e.key), K_SIZE(e.key));
    fh_write_entry(e.key, e.value);
}

static __device__ void fh_commit(Fh &f, FhEntry e) {
    if (f.scoped) fh_lock(f);
    fh_commit_c(f, f.o, e);
}

// WriteBuffers::overlay_room then a push (DrainPolicy::Device's bound).
static __device__ void fh_overlay_push(Fh &f, FhEntry e) {
    fh_lock(f);
    if (f.o->ov_len >= f.c->ov_capacity) fh_drain_overlay_c(f, f.o);
    fh_ov_entries(f, f.o)[f.o->ov_len] = e;
    f.o->ov_len += 1;
}

// WriteBuffers::place: shared entries, and everything outside `scoped` CTA drains, go to
// memory; global entries of a CTA-scope drain go to the overlay.
static __device__ void fh_place(Fh &f, FhEntry e, bool to_cta) {
    if (to_cta && f.scoped && K_SPACE(e.key) == 0) {
        fh_overlay_push(f, e);
    } else {
        fh_commit(f, e);
    }
}

// WriteBuffers::drain_thread.
static __device__ __noinline__ void fh_drain_thread(Fh &f, u32 scope, u32 reason) {
    bool to_cta = f.scoped && scope == SCOPE_CTA;
    if (!to_cta && f.scoped) fh_drain_overlay(f);
    FhThread *t = f.t;
    u32 n = t->len;
    if (n == 0) return;
    u32 c0 = t->len_s[0], c1 = t->len_s[1];
    for (u32 i = 0; i < n; i++) fh_place(f, f.q[i], to_cta);
    t->len = 0;
    fh_holders(f, -1);
    t->blocks = 0;
    t->len_s[0] = 0;
    t->len_s[1] = 0;
    fh_record(f, c0, c1, reason);
}

// WriteBuffers::drain_addr: own entries overlapping [a, a+size) (of space s), oldest
// first.
static __device__ __noinline__ void fh_drain_addr(Fh &f, int s, u64 a, u32 size, bool to_cta, u32 reason) {
    FhThread *t = f.t;
    if (t->len_s[s] == 0 || fh_miss(t, a, size)) return;
    u32 n = t->len, j = 0, out = 0;
    for (u32 i = 0; i < n; i++) {
        FhEntry e = f.q[i];
        if (fh_overlaps(e.key, a, size)) {
            fh_place(f, e, to_cta);
            out++;
        } else {
            f.q[j++] = e;
        }
    }
    t->len = j;
    if (j == 0) {
        t->blocks = 0;
        if (n != 0) fh_holders(f, -1);
    }
    t->len_s[s] -= out;
    if (s == 0)
        fh_record(f, out, 0, reason);
    else
        fh_record(f, 0, out, reason);
}

// Whether the own CTA overlay may hold entries for a global access. Read without the lock:
// 0 means no entry this thread could be obliged to see (its own CTA-scope publications and
// those it synchronised with are ordered before this read), so skipping is allowed; a
// nonzero value is re-checked under the lock.
static __device__ __forceinline__ bool fh_overlay_nonempty(const Fh &f, int s) {
    return f.scoped && s == 0 && *(volatile u32 *)&f.o->ov_len != 0;
}

#define LOOK_NONE 0
#define LOOK_FOUND 1
#define LOOK_PARTIAL 2

// WriteBuffers::lookup: the newest entries covering [a, a+size), byte by byte.
static __device__ __noinline__ int fh_lookup(const FhEntry *q, u32 n, u64 a, u32 size, u64 *out) {
    u32 covered = 0;
    u64 value = 0;
    u32 full = size >= 8 ? 0xffu : ((1u << size) - 1);
    bool any = false;
    for (u32 i = n; i-- > 0;) {
        u64 key = q[i].key;
        if (!fh_overlaps(key, a, size)) continue;
        u64 ea = K_ADDR(key);
        u32 es = K_SIZE(key);
        if (!any && ea == a && es == size) {
            *out = q[i].value;
            return LOOK_FOUND;
        }
        any = true;
        for (u32 b = 0; b < size; b++) {
            u64 addr = a + b;
            if (addr >= ea && addr < ea + es && !((covered >> b) & 1u)) {
                u64 byte = (q[i].value >> ((addr - ea) * 8)) & 0xffull;
                value |= byte << (b * 8);
                covered |= 1u << b;
            }
        }
        if (covered == full) {
            *out = value;
            return LOOK_FOUND;
        }
    }
    return any ? LOOK_PARTIAL : LOOK_NONE;
}

// WriteBuffers::drain_orphans: CTA c's orphan queue to memory as one flush (its lock held).
static __device__ __noinline__ void fh_drain_orphans_c(Fh &f, FhCta *c, u32 reason) {
    u32 n = c->orph_len;
    if (n == 0) return;
    FhEntry *e = fh_orphan_entries(f, c);
    u32 c0 = 0, c1 = 0;
    for (u32 i = 0; i < n; i++) {
        if (K_SPACE(e[i].key))
            c1++;
        else
            c0++;
        fh_commit_c(f, c, e[i]);
    }
    c->orph_len = 0;
    c->orph_thr = 0;
    fh_record(f, c0, c1, reason);
}

// WriteBuffers::drain_ctas: every CTA's overlay, then its orphans, to memory. Takes each
// CTA's lock in turn, so the caller must hold none.
static __device__ __noinline__ void fh_drain_ctas(Fh &f, u32 reason) {
    u32 nctas = gridDim.x * gridDim.y * gridDim.z;
    for (u32 k = 0; k < nctas; k++) {
        FhCta *c = fh_cta_area(f.c, k);
        if ((*(volatile u32 *)&c->ov_len | *(volatile u32 *)&c->orph_len) == 0) continue;
        fh_cta_lock(c);
        fh_drain_overlay_c(f, c);
        fh_drain_orphans_c(f, c, reason);
        fh_cta_unlock(c);
    }
}

// WriteBuffers::drain_one_cta_entry: one entry of CTA c to memory, chosen at random (r:
// seeded by the thread and its liveness count): one of its overlay (`overlay`) or of its
// orphans, replaced by the oldest entry of the same 8-byte block in the overlay followed
// by the orphans (so each address keeps its order). One entry, not the queues: a spinning
// reader must be able to see a later store before an earlier one of another address, as
// under the native rule (issue 25: draining whole queues in order hid every bug that needs
// that). Takes c's lock, so the caller must hold none.
static __device__ __noinline__ void fh_drain_one_cta_entry(Fh &f, FhCta *c, bool overlay, u64 r,
                                                           u32 reason) {
    fh_cta_lock(c);
    u32 nov = c->ov_len, norph = c->orph_len;
    u32 base = overlay ? 0u : nov, n = nov + norph;
    u32 part = overlay ? nov : norph;
    if (part != 0) {
        FhEntry *ov = fh_ov_entries(f, c), *orph = fh_orphan_entries(f, c);
        u32 i = base + (u32)(fh_mix(r) % (u64)part);
        u64 b = K_ADDR((i < nov ? ov[i] : orph[i - nov]).key) & ~7ull;
        u32 j = 0;
        while (j < i && (K_ADDR((j < nov ? ov[j] : orph[j - nov]).key) & ~7ull) != b) j++;
        if (j < nov) {
            FhEntry e = ov[j];
            for (u32 x = j + 1; x < nov; x++) ov[x - 1] = ov[x];
            c->ov_len = nov - 1;
            fh_write_entry(e.key, e.value);
        } else {
            u32 no = n - nov;
            FhEntry e = orph[j - nov];
            for (u32 x = j - nov + 1; x < no; x++) orph[x - 1] = orph[x];
            c->orph_len = no - 1;
            if (no == 1) c->orph_thr = 0;
            fh_commit_c(f, c, e);
            if (K_SPACE(e.key))
                fh_record(f, 0, 1, reason);
            else
                fh_record(f, 1, 0, reason);
        }
    }
    fh_cta_unlock(c);
}

// WriteBuffers::drain_one_own_entry: one of the thread's own entries to memory, chosen at
// random (an entry, replaced by the oldest of its 8-byte block). One at a time for the
// reason fh_drain_one_cta_entry gives: a thread that spins holding stores must let them
// out in an order other than program order, or a missing fence between them never shows.
static __device__ __noinline__ void fh_drain_one_own_entry(Fh &f, u64 r, u32 reason) {
    FhThread *t = f.t;
    u32 n = t->len;
    if (n == 0) return;
    u32 i = (u32)(fh_mix(r + 1ull) % (u64)n);
    u64 b = K_ADDR(f.q[i].key) & ~7ull;
    u32 j = 0;
    while (j < i && (K_ADDR(f.q[j].key) & ~7ull) != b) j++;
    FhEntry e = f.q[j];
    for (u32 x = j + 1; x < n; x++) f.q[x - 1] = f.q[x];
    t->len = n - 1;
    if (n == 1) {
        t->blocks = 0;
        fh_holders(f, -1);
    }
    u32 s = K_SPACE(e.key);
    t->len_s[s] -= 1;
    fh_place(f, e, false);
    if (s)
        fh_record(f, 0, 1, reason);
    else
        fh_record(f, 1, 0, reason);
}

// DrainPolicy::Device's weight of CTA c in the liveness pick (WriteBuffers::cta_weight):
// its overlay (one, when not empty) and its orphaned threads (at most one per entry). Read
// without the lock: the drain re-reads under it.
static __device__ __forceinline__ u64 fh_cta_weight(FhCta *c) {
    u32 ov = *(volatile u32 *)&c->ov_len, orph = *(volatile u32 *)&c->orph_len;
    u32 thr = *(volatile u32 *)&c->orph_thr;
    return (u64)(ov != 0) + (u64)(thr < orph ? thr : orph);
}

// DrainPolicy::Device's liveness rule (WriteBuffers::liveness_tick): one entry to memory,
// from one holder picked uniformly among the thread itself, each non-empty CTA overlay and
// each orphaned thread (the native stall rule's pick, less the other live threads, whose
// buffers a GPU thread cannot drain).
static __device__ void fh_tick(Fh &f) {
    f.t->ticks += 1;
    if (f.c->liveness > 0 && f.t->ticks >= f.c->liveness) {
        f.t->ticks = 0;
        f.t->lives += 1;
        u64 r = fh_mix(fh_thread_prefix(f.c) ^ 0x6c69766500000000ull ^ (u64)f.t->lives);
        // The own buffer weighs as many holders as there are live ones (at least 1): each
        // live holder drains only itself, at its own ticks, so the own share of a tick is
        // what the native stall rule gives all live holders together (see the rewrite's
        // docs, "Where the device differs").
        u32 live = *(volatile u32 *)&f.c->holders;
        u64 own = f.t->len != 0 ? (u64)(live > 1u ? live : 1u) : 0ull;
        u32 nctas = gridDim.x * gridDim.y * gridDim.z;
        u64 total = own;
        for (u32 i = 0; i < nctas; i++) total += fh_cta_weight(fh_cta_area(f.c, i));
        if (total == 0) return;
        u64 x = r % total;
        if (x < own) {
            fh_drain_one_own_entry(f, r, R_LIVENESS);
            fh_end(f);
            return;
        }
        x -= own;
        for (u32 i = 0; i < nctas; i++) {
            FhCta *c = fh_cta_area(f.c, i);
            u64 w = fh_cta_weight(c);
            if (x < w) {
                bool overlay = x == 0 && *(volatile u32 *)&c->ov_len != 0;
                fh_drain_one_cta_entry(f, c, overlay, r, R_LIVENESS);
                return;
            }
            x -= w;
        }
    }
}

static __device__ __forceinline__ u64 fh_key(u64 g, u32 size, int s, u32 sem, u32 scope) {
    return K_ADDR(g) | ((u64)(size - 1) << 56) | ((u64)s << 59) | ((u64)sem << 60) |
           ((u64)scope << 62);
}

// A store of `value` (its low `size` bytes) to generic address g (WriteBuffers::store).
// Returns 1 when the store was buffered (the caller must not perform it), 0 when the
// caller performs it now.
// `known`: the selection decision when the caller already made it (1 selected, 0 not;
// the same function of the thread's store count, which nothing below changes before it
// is read), -1 when not.
static __device__ __noinline__ u32 fh_store_slow(const FhCtl *c, FhThread *th, int s, u64 g,
                                                u64 value, u32 meta, int known) {
    Fh f;
    fh_begin_from(f, c, th);
    u32 size = M_SIZE(meta);
    value &= fh_mask(size);
    if (M_RELEASE(meta)) fh_drain_thread(f, M_SCOPE(meta), R_RELEASE);
    if (f.t->len_s[s] != 0) fh_drain_addr(f, s, g, size, f.scoped, R_WAW);
    FhThread *t = f.t;
    u64 n = t->stores;
    t->stores = n + 1;
    t->seen[s] += 1;
    bool selected;
    if (known >= 0) {
        selected = known != 0;
    } else {
        bool eligible = ((s == 1) ? (f.c->flags & FH_SHARED) : (f.c->flags & FH_GLOBAL)) != 0 &&
                        !M_INELIGIBLE(meta);
        selected = eligible && fh_selected(t, n, f.c->threshold);
    }
    if (selected) {
        // Validate the address now, so a bad store faults at its own instruction rather
        // than when it drains (an unbuffered store faults by itself).
        (void)fh_read(g, size);
        bool held = t->len != 0;
        if (t->len_s[s] >= f.c->capacity) {
            // Buffer full: this space drains to memory.
            u32 len = t->len, j = 0, out = 0;
            for (u32 i = 0; i < len; i++) {
                FhEntry e = f.q[i];
                if ((int)K_SPACE(e.key) == s) {
                    fh_commit(f, e);
                    out++;
                } else {
                    f.q[j++] = e;
                }
            }
            t->len = j;
            if (j == 0) t->blocks = 0;
            t->len_s[s] = 0;
            if (s == 0)
                fh_record(f, out, 0, R_FULL);
            else
                fh_record(f, 0, out, R_FULL);
        }
        FhEntry e;
        e.key = fh_key(g, size, s, M_SEM(meta), M_SCOPE(meta));
        e.value = value;
        f.q[t->len] = e;
        t->len += 1;
        if (!held) fh_holders(f, 1);
        t->blocks |= fh_blocks(g, size);
        t->len_s[s] += 1;
        if (t->len > t->peak) t->peak = t->len;
        t->buffered[s] += 1;
        fh_end(f);
        return 1;
    }
    if (fh_overlay_nonempty(f, s)) fh_drain_overlay_addr(f, g, size);
    fh_end(f);
    return 0;
}

// A load of `size` bytes at g (WriteBuffers::load). Returns the generic address the
// caller loads from: g, or the thread's scratch word holding the forwarded value.
static __device__ __noinline__ u64 fh_load_slow(const FhCtl *c, FhThread *th, int s, u64 g,
                                               u32 meta) {
    Fh f;
    fh_begin_from(f, c, th);
    u32 size = M_SIZE(meta);
    fh_tick(f);
    FhThread *t = f.t;
    u64 v;
    int r = fh_miss(t, g, size) ? LOOK_NONE : fh_lookup(f.q, t->len, g, size, &v);
    if (r == LOOK_FOUND) {
        t->forwarded += 1;
        t->scratch = v;
        fh_end(f);
        return (u64)&t->scratch;
    }
    if (r == LOOK_PARTIAL) fh_drain_addr(f, s, g, size, f.scoped, R_PARTIAL);
    if (fh_overlay_nonempty(f, s)) {
        fh_lock(f);
        int o = fh_lookup(fh_ov_entries(f, f.o), f.o->ov_len, g, size, &v);
        if (o == LOOK_FOUND) {
            t->overlay_loads += 1;
            t->scratch = v;
            fh_end(f);
            return (u64)&t->scratch;
        }
        if (o == LOOK_PARTIAL) fh_drain_overlay_addr(f, g, size);
    }
    fh_end(f);
    return g;
}

// An atomic of `size` bytes at g (WriteBuffers::atomic). Returns the generic address the
// caller's atomic acts on: g, or, for a .cta atomic on global memory under `scoped`
// (WriteBuffers::cta_atomic), the scratch word holding the CTA-visible value; then the
// overlay stays locked until __fencehound_atom_done.
static __device__ __noinline__ u64 fh_atom_slow(const FhCtl *c, FhThread *th, int s, u64 g,
                                               u32 meta) {
    Fh f;
    fh_begin_from(f, c, th);
    u32 size = M_SIZE(meta);
    fh_tick(f);
    FhThread *t = f.t;
    if (f.scoped && M_CTA_ATOM(meta) && s == 0) {
        fh_lock(f);
        if (M_RELEASE(meta)) fh_drain_thread(f, SCOPE_CTA, R_RELEASE);
        fh_drain_addr(f, s, g, size, true, R_ATOMIC);
        u64 visible = fh_read(g, size);
        u64 v;
        int o = fh_lookup(fh_ov_entries(f, f.o), f.o->ov_len, g, size, &v);
        if (o == LOOK_FOUND) {
            visible = v;
        } else if (o == LOOK_PARTIAL) {
            fh_drain_overlay_addr(f, g, size);
            visible = fh_read(g, size);
        }
        t->scratch = visible;
        t->visible = visible;
        t->atom_key = fh_key(g, size, 0, 2, SCOPE_CTA);
        t->atom_pending = 1;
        // The lock stays held: __fencehound_atom_done releases it.
        return (u64)&t->scratch;
    }
    if (M_RELEASE(meta)) fh_drain_thread(f, M_SCOPE(meta), R_RELEASE);
    if (t->len_s[s] != 0) fh_drain_addr(f, s, g, size, false, R_ATOMIC);
    if (fh_overlay_nonempty(f, s)) fh_drain_overlay_addr(f, g, size);
    fh_end(f);
    return g;
}

// After the caller's atomic: a .cta atomic redirected to the scratch word leaves its
// result in the CTA overlay (when it changed the value) and releases the overlay.
extern "C" __device__ __noinline__ void __fencehound_atom_done(u64 th, u32 meta) {
    Fh f;
    if (!fh_begin(f, th)) return;
    FhThread *t = f.t;
    if (!t->atom_pending) return;
    t->atom_pending = 0;
    f.locked = true;
    u32 size = M_SIZE(meta);
    u64 m = fh_mask(size);
    u64 now = t->scratch & m;
    if (now != (t->visible & m)) {
        FhEntry e;
        e.key = t->atom_key;
        e.value = now;
        fh_overlay_push(f, e);
    }
    fh_end(f);
}

// The thread's entries appended to its CTA's orphan queue, the lock held (by this thread
// or, in fh_orphan_warp, by a lane of its warp for it): oldest first, the queue drained
// to memory when full.
static __device__ __forceinline__ void fh_orphan_append(Fh &f) {
    FhThread *t = f.t;
    FhEntry *orph = fh_orphan_entries(f, f.o);
    for (u32 i = 0; i < t->len; i++) {
        if (f.o->orph_len >= f.c->ov_capacity) fh_drain_orphans_c(f, f.o, R_FULL);
        orph[f.o->orph_len] = f.q[i];
        f.o->orph_len += 1;
    }
    f.o->orph_thr += 1;
}

// The buffer emptied after its entries became orphans.
static __device__ __forceinline__ void fh_orphaned(Fh &f) {
    FhThread *t = f.t;
    t->len = 0;
    fh_holders(f, -1);
    t->blocks = 0;
    t->len_s[0] = 0;
    t->len_s[1] = 0;
}

// A whole warp exiting at once (`holding`: its lanes with entries; a warp is in one
// CTA): one lane takes the CTA's lock for all of them, and each lane copies its entries
// to its place in the queue — the places the lanes would take one after the other in
// lane order (an exclusive prefix sum of their lengths), so the queue ends as the
// one-lane-at-a-time path leaves it. Taking the lock lane by lane made lane k spin for
// the k lanes before it (hotspot at p_w = 1: three quarters of __fencehound_exit's
// instructions). When the queue would overflow, the lanes append one at a time in lane
// order under the same lock (fh_orphan_append drains a full queue, as alone).
static __device__ __noinline__ void fh_orphan_warp(Fh &f, u32 holding) {
    const u32 all = 0xffffffffu;
    u32 lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    u32 len = f.t->len;  // 0 for a lane without entries
    u32 incl = len;
    for (u32 d = 1; d < 32; d <<= 1) {
        u32 y = __shfl_up_sync(all, incl, d);
        if (lane >= d) incl += y;
    }
    u32 total = __shfl_sync(all, incl, 31);
    u32 lead = __ffs(holding) - 1;
    if (lane == lead) fh_cta_lock(f.o);
    __syncwarp(all);
    u32 base = *(volatile u32 *)&f.o->orph_len;
    if (base + total <= f.c->ov_capacity) {
        FhEntry *orph = fh_orphan_entries(f, f.o);
        u32 at = base + incl - len;
        for (u32 i = 0; i < len; i++) orph[at + i] = f.q[i];
        __syncwarp(all);
        if (lane == lead) {
            f.o->orph_len = base + total;
            f.o->orph_thr += __popc(holding);
        }
    } else {
        for (u32 m = holding; m != 0; m &= m - 1) {
            if (lane == (u32)(__ffs(m) - 1)) fh_orphan_append(f);
            __syncwarp(all);
        }
    }
    if (len > 0) fh_orphaned(f);
    __syncwarp(all);
    if (lane == lead) fh_cta_unlock(f.o);
}

// Thread exit (WriteBuffers::orphan_thread): the thread's entries join its CTA's orphan
// queue; the launch's last thread to exit drains every CTA.
extern "C" __device__ __noinline__ void __fencehound_exit(u64 th) {
    Fh f;
    if (!fh_begin(f, th)) return;
    FhThread *t = f.t;
    // A full warp here together (the common exit of a kernel whose threads end holding
    // stores) orphans its entries at once; otherwise each thread on its own.
    u32 mask = __activemask();
    if (mask == 0xffffffffu) {
        u32 holding = __ballot_sync(mask, t->len > 0);
        if (holding != 0) fh_orphan_warp(f, holding);
    } else if (t->len > 0) {
        fh_cta_lock(f.o);
        fh_orphan_append(f);
        fh_orphaned(f);
        fh_cta_unlock(f.o);
    }
    u32 before = atomicAdd((u32 *)&f.c->exited, 1u);
    if (before + 1 == t->total) {
        __threadfence();
        fh_drain_ctas(f, R_KERNEL_EXIT);
    }
}

// The launch's last thread to exit, when it held no entry (the rewrite's inlined exit
// counted it): every CTA's overlay and orphans to memory, as __fencehound_exit does.
extern "C" __device__ __noinline__ void __fencehound_last(u64 th) {
    Fh f;
    if (!fh_begin(f, th)) return;
    __threadfence();
    fh_drain_ctas(f, R_KERNEL_EXIT);
}

// A fence or barrier: everything of the thread drains to the level the scope requires
// (WriteBuffers::drain_thread, as fh_drain_thread does it, with its per-entry calls unrolled: each entry goes
// where fh_place sends it). Under `scoped` a drain to memory first empties the own CTA's
// overlay (under its lock, held to the end), so committing an entry finds no overlay entry
// to publish first; a CTA-scope drain commits shared entries (no overlay entry is shared)
// and pushes global ones to the overlay.
static __device__ __forceinline__ void fh_drain_fast(const FhCtl *c, FhThread *t, u32 meta) {
    bool scoped = (c->flags & FH_SCOPED) != 0;
    bool to_cta = scoped && M_SCOPE(meta) == SCOPE_CTA;
    FhCta *o = (FhCta *)t->cta;
    // The lock guards the overlay only: a CTA-scope drain of shared entries alone (a
    // barrier after shared stores, the common case) commits them without it.
    bool lock = scoped && (!to_cta || t->len_s[0] != 0);
    if (lock) {
        fh_cta_lock(o);
        if (!to_cta) {
            FhEntry *e = (FhEntry *)((char *)o + 16);
            u32 m = o->ov_len;
            for (u32 i = 0; i < m; i++) fh_write_fast(e[i].key, e[i].value);
            o->ov_len = 0;
        }
    }
    u32 n = t->len;
    if (n != 0) {
        u32 c0 = t->len_s[0], c1 = t->len_s[1];
        const FhEntry *q = (const FhEntry *)((char *)t + HEADER);
        if (to_cta) {
            FhEntry *ov = (FhEntry *)((char *)o + 16);
            for (u32 i = 0; i < n; i++) {
                FhEntry e = q[i];
                if (K_SPACE(e.key) == 0) {
                    // fh_overlay_push.
                    if (o->ov_len >= c->ov_capacity) {
                        u32 m = o->ov_len;
                        for (u32 k = 0; k < m; k++) fh_write_fast(ov[k].key, ov[k].value);
                        o->ov_len = 0;
                    }
                    ov[o->ov_len] = e;
                    o->ov_len += 1;
                } else {
                    fh_write_fast(e.key, e.value);
                }
            }
        } else {
            for (u32 i = 0; i < n; i++) fh_write_fast(q[i].key, q[i].value);
        }
        t->len = 0;
        atomicAdd((u32 *)&c->holders, (u32)-1);
        t->blocks = 0;
        t->len_s[0] = 0;
        t->len_s[1] = 0;
        fh_record_c(c, c0, c1, M_REASON(meta));
    }
    if (lock) fh_cta_unlock(o);
}

// One entry to memory with its store's strength: what the rewrite's inlined drain calls
// for an entry that is not a plain (weak) store.
extern "C" __device__ __noinline__ void __fencehound_write_entry(u64 key, u64 v) {
    fh_write_entry(key, v);
}

// The thread's header (initialised for this launch), or 0 when the launch does not
// buffer: what the rewrite's lockstep flavour calls in each block (the device flavour
// sets the header up in the kernel, emit.rs's inline_begin, writing the same words).
extern "C" __device__ __noinline__ u64 __fencehound_begin() {
    const FhCtl *c;
    return (u64)fh_self(&c);
}

// The entry points: a fast path that only reads the thread's state and decides that
// nothing but counters change, else the full path above (which starts over: the fast path
// wrote nothing).

extern "C" __device__ __noinline__ u32 __fencehound_store(u64 th, u64 g, u64 value, u32 meta) {
    const FhCtl *c;
    FhThread *t = fh_given(th, &c);
    if (t == 0) return 0;
    int s = fh_space(g);
    if (s < 0) return 0;
    int known = -1;
    if (!M_RELEASE(meta) && (t->len_s[s] == 0 || fh_miss(t, g, M_SIZE(meta)))) {
        u64 n = t->stores;
        bool eligible = ((s == 1) ? (c->flags & FH_SHARED) : (c->flags & FH_GLOBAL)) != 0 &&
                        !M_INELIGIBLE(meta);
        bool selected = eligible && fh_selected(t, n, c->threshold);
        if (!selected && !fh_fast_overlay(c, t, s)) {
            t->stores = n + 1;
            t->seen[s] += 1;
            return 0;
        }
        if (selected && t->len_s[s] < c->capacity) {
            // fh_store_slow's path for a selected store when nothing drains first (not a
            // release, no own entry it overlaps, room in its space): the same effects,
            // without the slow path's state in local memory.
            u32 size = M_SIZE(meta);
            (void)fh_read(g, size);
            u32 len = t->len;
            FhEntry *q = (FhEntry *)((char *)t + HEADER);
            q[len].key = fh_key(g, size, s, M_SEM(meta), M_SCOPE(meta));
            q[len].value = value & fh_mask(size);
            t->stores = n + 1;
            t->seen[s] += 1;
            t->len = len + 1;
            if (len == 0) atomicAdd((u32 *)&c->holders, 1u);
            t->blocks |= fh_blocks(g, size);
            t->len_s[s] += 1;
            if (len + 1 > t->peak) t->peak = len + 1;
            t->buffered[s] += 1;
            return 1;
        }
        known = selected;
    }
    return fh_store_slow(c, t, s, g, value, meta, known);
}

extern "C" __device__ __noinline__ u64 __fencehound_load(u64 th, u64 g, u32 meta) {
    const FhCtl *c;
    FhThread *t = fh_given(th, &c);
    if (t == 0) return g;
    int s = fh_space(g);
    if (s < 0) return g;
    u32 ticks = t->ticks + 1;
    bool live = c->liveness > 0 && ticks >= c->liveness;
    if (!live && fh_miss(t, g, M_SIZE(meta)) && !fh_fast_overlay(c, t, s)) {
        t->ticks = ticks;
        return g;
    }
    return fh_load_slow(c, t, s, g, meta);
}

extern "C" __device__ __noinline__ u64 __fencehound_atom(u64 th, u64 g, u32 meta) {
    const FhCtl *c;
    FhThread *t = fh_given(th, &c);
    if (t == 0) return g;
    int s = fh_space(g);
    if (s < 0) return g;
    u32 ticks = t->ticks + 1;
    bool live = c->liveness > 0 && ticks >= c->liveness;
    bool cta_overlay = (c->flags & FH_SCOPED) && M_CTA_ATOM(meta) && s == 0;
    if (!live && !cta_overlay && !M_RELEASE(meta) &&
        (t->len_s[s] == 0 || fh_miss(t, g, M_SIZE(meta))) && !fh_fast_overlay(c, t, s)) {
        t->ticks = ticks;
        return g;
    }
    return fh_atom_slow(c, t, s, g, meta);
}

extern "C" __device__ __noinline__ void __fencehound_drain(u64 th, u32 meta) {
    const FhCtl *c;
    FhThread *t = fh_given(th, &c);
    if (t == 0) return;
    // A drain to memory under `scoped` publishes the CTA overlay even when the thread
    // holds nothing (WriteBuffers::drain_thread).
    bool overlay = (c->flags & FH_SCOPED) && M_SCOPE(meta) != SCOPE_CTA &&
                   *(volatile u32 *)&((FhCta *)t->cta)->ov_len != 0;
    if (t->len == 0 && !overlay) return;
    fh_drain_fast(c, t, meta);
}
