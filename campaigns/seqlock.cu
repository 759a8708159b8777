// seqlock: one writer publishes versions of a small record under a sequence counter;
// readers in other blocks take consistent snapshots without locking (the classic
// seqlock, written from its description). The writer makes the counter odd, writes the
// record, and makes it even again; a reader reads the counter, the record and the
// counter again, and keeps the snapshot only if both counter reads are the same even
// value. Every record version v has all fields equal to v, so a kept snapshot whose
// fields differ from each other, or from the counter / 2, is torn.
//
// Fences (each a macro so a variant can remove it):
//   WRITER_FENCE_1  after the odd counter store, before the record stores
//   WRITER_FENCE_2  after the record stores, before the even counter store
//   READER_FENCE_1  after the first counter read (acquire side): without it the record
//                   reads may return versions older than the counter says
//   READER_FENCE_2  before the second counter read: without it that read may be stale
//                   and accept a record the writer is in the middle of changing
// The reader's fences only matter when loads can read older values: store-buffering
// models (bugaroo, scoped) cannot fail without them; the weak model can.
#ifndef WRITER_FENCE_1
#define WRITER_FENCE_1 __threadfence()
#endif
#ifndef WRITER_FENCE_2
#define WRITER_FENCE_2 __threadfence()
#endif
#ifndef READER_FENCE_1
#define READER_FENCE_1 __threadfence()
#endif
#ifndef READER_FENCE_2
#define READER_FENCE_2 __threadfence()
#endif
#define FIELDS 4
#define VERSIONS 12
#define SNAPSHOTS 6

extern "C" __global__ void seqlock(volatile unsigned *seq, volatile unsigned *record,
                                   unsigned *torn, unsigned *kept) {
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        for (unsigned v = 1; v <= VERSIONS; ++v) {
            *seq = 2 * v - 1;
            WRITER_FENCE_1;
            for (int i = 0; i < FIELDS; ++i)
                record[i] = v;
            WRITER_FENCE_2;
            *seq = 2 * v;
        }
        return;
    }
    unsigned bad = 0, good = 0;
    for (int n = 0; n < SNAPSHOTS; ++n) {
        unsigned s1, s2, copy[FIELDS];
        do {
            do {
                s1 = *seq;
            } while (s1 & 1);
            READER_FENCE_1;
            for (int i = 0; i < FIELDS; ++i)
                copy[i] = record[i];
            READER_FENCE_2;
            s2 = *seq;
        } while (s1 != s2);
        bool ok = true;
        for (int i = 0; i < FIELDS; ++i)
            ok = ok && copy[i] == s1 / 2;
        bad += !ok;
        good += ok;
    }
    torn[blockIdx.x] = bad;
    kept[blockIdx.x] = good;
}
