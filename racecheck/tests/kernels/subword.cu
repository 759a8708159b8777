// Sub-word accesses against word accesses: shadow memory keeps one cell per word until a
// narrower access splits it, and read sets shared by a word's bytes (shadow.rs). Each byte
// must still have exactly its own history: these twins fail if a split, a merge or a
// shared read set mixes up two bytes of one word.
// case: sw_bytes_then_word; expect: intra-block:RAW; grid: 1; block: 64; args: out:u32[64]
// case: sw_bytes_then_word_barrier; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: sw_split_other_byte; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: sw_split_same_byte; expect: intra-block:RAW; grid: 1; block: 64; args: out:u32[64]
// case: sw_word_readers_byte_writer; expect: intra-block:WAR; grid: 1; block: 64; args: out:u32[64]
// case: sw_word_readers_byte_writer_barrier; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: sw_byte_readers_other_byte_writer; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: sw_merged_word_then_byte; expect: intra-block:RAW; grid: 1; block: 64; args: out:u32[64]
// case: sw_merged_word_then_byte_barrier; expect: none; grid: 1; block: 64; args: out:u32[64]
// case: sw_wide_over_split; expect: intra-block:WAW; grid: 1; block: 64; args: out:u32[64]

// Warp 0 writes one byte each; warp 1 reads the words they make up, unsynchronized.
extern "C" __global__ void sw_bytes_then_word(unsigned *out)
{
    __shared__ unsigned s[16];
    unsigned t = threadIdx.x;
    if (t < 32) ((volatile unsigned char *)s)[t] = (unsigned char)t;
    else out[t] = s[(t - 32) / 4];
}

extern "C" __global__ void sw_bytes_then_word_barrier(unsigned *out)
{
    __shared__ unsigned s[16];
    unsigned t = threadIdx.x;
    if (t < 32) ((unsigned char *)s)[t] = (unsigned char)t;
    __syncthreads();
    if (t >= 32) out[t] = s[(t - 32) / 4];
}

// Thread 0 writes the word; after a barrier thread 1 writes byte 1 (splitting the word);
// thread 33 reads byte 2, whose last write is still thread 0's, ordered by the barrier.
extern "C" __global__ void sw_split_other_byte(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 0x01020304u;
    __syncthreads();
    if (t == 1) ((volatile unsigned char *)s)[1] = 9;
    if (t == 33) out[t] = ((volatile unsigned char *)s)[2];
}

// The same, but thread 33 reads byte 1: thread 1's write races with it.
extern "C" __global__ void sw_split_same_byte(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 0x01020304u;
    __syncthreads();
    if (t == 1) ((unsigned char *)s)[1] = 9;
    if (t == 33) {
        for (int i = 0; i < 64; i++) __nanosleep(100);
        out[t] = ((volatile unsigned char *)s)[1];
    }
}

// Warp 0 reads the word (one shared read set for its four bytes); a thread of warp 1
// writes byte 3 only: a write-after-read race with those reads.
extern "C" __global__ void sw_word_readers_byte_writer(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 7;
    __syncthreads();
    if (t < 32) out[t] = ((volatile unsigned *)s)[0];
    if (t == 40) {
        for (int i = 0; i < 64; i++) __nanosleep(100);
        ((unsigned char *)s)[3] = 1;
    }
    __syncthreads();
    if (t == 0) out[63] = s[0];
}

extern "C" __global__ void sw_word_readers_byte_writer_barrier(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 7;
    __syncthreads();
    if (t < 32) out[t] = ((volatile unsigned *)s)[0];
    __syncthreads();
    if (t == 40) ((volatile unsigned char *)s)[3] = 1;
}

// Warp 0 reads byte 0 only; a thread of warp 1 writes byte 2: different bytes, no race.
extern "C" __global__ void sw_byte_readers_other_byte_writer(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 7;
    __syncthreads();
    if (t < 32) out[t] = ((volatile unsigned char *)s)[0];
    if (t == 40) ((volatile unsigned char *)s)[2] = 1;
}

// Bytes written by four threads, then (after a barrier) the whole word by thread 5, which
// merges it back into one cell; thread 40 reads byte 0 with no barrier after thread 5's write.
extern "C" __global__ void sw_merged_word_then_byte(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t < 4) ((unsigned char *)s)[t] = (unsigned char)t;
    __syncthreads();
    if (t == 5) ((volatile unsigned *)s)[0] = 0x0a0b0c0du;
    if (t == 40) {
        for (int i = 0; i < 64; i++) __nanosleep(100);
        out[t] = ((unsigned char *)s)[0];
    }
}

extern "C" __global__ void sw_merged_word_then_byte_barrier(unsigned *out)
{
    __shared__ unsigned s[1];
    unsigned t = threadIdx.x;
    if (t < 4) ((unsigned char *)s)[t] = (unsigned char)t;
    __syncthreads();
    if (t == 5) ((volatile unsigned *)s)[0] = 0x0a0b0c0du;
    __syncthreads();
    if (t == 40) out[t] = ((volatile unsigned char *)s)[0];
}

// Thread 2 writes byte 6 (splitting word 1 of the pair); thread 40 writes the 8-byte pair
// with no barrier between: a write-write race on that byte.
extern "C" __global__ void sw_wide_over_split(unsigned *out)
{
    __shared__ unsigned long long s[1];
    unsigned t = threadIdx.x;
    if (t == 0) s[0] = 0;
    __syncthreads();
    if (t == 2) ((unsigned char *)s)[6] = 1;
    if (t == 40) {
        for (int i = 0; i < 64; i++) __nanosleep(100);
        s[0] = 5;
    }
    __syncthreads();
    out[t] = (unsigned)s[0];
}
