// Message passing with the data store and the flag store on ONE source line: the fence
// belongs between the two statements, not after the line. CTA 0 publishes, CTA 1 waits
// for each flag, fences (its acquire side is in place) and copies the data it guards.
extern "C" __global__ void mp(int *data, int *flag, int *out) {
    int i = threadIdx.x;
    if (blockIdx.x == 0) {
        data[i] = i + 100; flag[i] = 1;
    } else {
        while (((volatile int *)flag)[i] == 0) {
        }
        __threadfence();
        out[i] = ((volatile int *)data)[i];
    }
}
