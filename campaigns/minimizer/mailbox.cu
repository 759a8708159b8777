// Audit test: a flag and its payload side by side in one struct (one 8-byte block). Block
// 0 writes the payload, fences, raises the flag; block 1 waits for the flag, fences,
// reads the payload. Both fences are needed (PTX: without the writer's, the flag may
// be seen first; without the reader's, the payload read may be stale).
struct Mailbox {
    volatile unsigned flag;
    unsigned data;
};

extern "C" __global__ void mailbox(Mailbox *box, unsigned *seen)
{
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        box->data = 42;
        __threadfence();
        box->flag = 1;
    } else {
        while (box->flag == 0) {
        }
        __threadfence();
        seen[blockIdx.x] = box->data;
    }
}
