// ct_octree: the work-stealing part of Cederman & Tsigas' octree partitioning (as in
// Bugaroo's `ct-octree` benchmark), written from its description and reduced to a small
// task tree. One worker thread per block owns a deque in global memory: it pushes new
// tasks at the tail (write the item, then publish the new tail) and every worker, the
// owner included, takes tasks from the head with atomicCAS, so idle blocks steal from busy
// ones. Slots are written once (indices only grow), so there is no ABA problem.
//
// Tasks are the nodes 1..NODES of a binary tree in heap order (children 2v and 2v+1);
// processing a node counts a visit and pushes its children. `pending` counts tasks that
// were created and not finished, so workers stop when it reaches 0.
//
//   PUSH_FENCE  between writing the item and publishing the new tail. Without it, a
//               thief can see the new tail while the item is still buffered, read the
//               empty slot (0) and lose the real task: `errors` counts such garbage
//               items and the run aborts, and the lost subtree is never visited.
//
// Thieves read the tail with ld.acquire.gpu, so the item load after it is ordered on
// hardware too; under write buffers only the writer's order matters.
#ifndef PUSH_FENCE
#define PUSH_FENCE __threadfence()
#endif
#define NODES 63
#define CAP NODES // every node is pushed once, to one deque: a deque never holds more

__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

struct Deques {
    unsigned *items;  // [blocks * CAP], 0 = empty slot
    unsigned *head;   // [blocks], advanced by atomicCAS (owner and thieves)
    unsigned *tail;   // [blocks], written only by the owner
};

// Owner only: append a task.
__device__ void push(Deques q, unsigned me, unsigned task) {
    unsigned t = ((volatile unsigned *)q.tail)[me];
    ((volatile unsigned *)q.items)[me * CAP + t] = task;
    PUSH_FENCE;
    ((volatile unsigned *)q.tail)[me] = t + 1;
}

// Anyone: try to take the oldest task of deque `b`. Returns false if it is empty or
// another worker won the race; on success `*task` is whatever the slot held.
__device__ bool take(Deques q, unsigned b, unsigned *task) {
    unsigned h = ((volatile unsigned *)q.head)[b];
    unsigned t = load_acquire(q.tail + b);
    if (h >= t)
        return false;
    unsigned v = ((volatile unsigned *)q.items)[b * CAP + h];
    if (atomicCAS(q.head + b, h, h + 1) != h)
        return false;
    *task = v;
    return true;
}

extern "C" __global__ void octree_steal(unsigned *items, unsigned *head, unsigned *tail,
                                        unsigned *pending, unsigned *visits,
                                        unsigned *errors, unsigned *abort_flag,
                                        unsigned *stolen) {
    if (threadIdx.x != 0)
        return;
    Deques q = {items, head, tail};
    const unsigned me = blockIdx.x;
    const unsigned nblocks = gridDim.x;
    volatile unsigned *vpending = pending;
    volatile unsigned *vabort = abort_flag;

    if (me == 0)
        push(q, me, 1); // the root; `pending` starts at 1 for it

    unsigned victim = me;
    while (vpending[0] != 0 && vabort[0] == 0) {
        unsigned task = 0;
        bool got = take(q, me, &task);
        if (!got) {
            victim = victim + 1 == nblocks ? 0 : victim + 1;
            if (victim != me && take(q, victim, &task)) {
                got = true;
                atomicAdd(stolen, 1u); // statistics only
            }
        }
        if (!got)
            continue;
        if (task == 0 || task > NODES) {
            // Not a task anybody pushed (an empty slot): the real one is lost with its
            // whole subtree. Count it and stop everybody.
            atomicAdd(errors, 1u);
            atomicExch(abort_flag, 1u);
            break;
        }
        atomicAdd(&visits[task - 1], 1u);
        unsigned children = 0;
        if (2 * task <= NODES) ++children;
        if (2 * task + 1 <= NODES) ++children;
        if (children) {
            atomicAdd(pending, children);
            push(q, me, 2 * task);
            if (children == 2)
                push(q, me, 2 * task + 1);
        }
        atomicSub(pending, 1u);
    }
}
