// fencehound-corpus: CRC-32 (IEEE, reflected) of 64-byte messages, one per thread, using a 16-entry nibble table in __constant__ memory; bytes read with ld.global.u8
// categories: algorithm, const, int
// nvrtc-flags: none
// launch: grid=1 block=64 dynamic_shared=0
// args: msgs:u8[4096] random(52), crc:u32[64] zero
// expect: crc[i] == zlib.crc32(msgs[64*i : 64*i+64]) for i in 0..63

/* table for the reflected polynomial 0xEDB88320, 4 bits at a time: entry k = crc of nibble k */
__constant__ unsigned c_crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
    0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

extern "C" __global__ void algo_crc32_const(const unsigned char *msgs, unsigned *crc)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned char *m = msgs + 64 * i;
    unsigned c = 0xFFFFFFFFu;
    for (unsigned k = 0; k < 64; ++k) {
        c ^= m[k];
        c = (c >> 4) ^ c_crc_nibble[c & 15];   /* data-dependent constant-bank index */
        c = (c >> 4) ^ c_crc_nibble[c & 15];
    }
    crc[i] = ~c;
}
