// Calls a runtime function fencehound does not implement (CUDA graphs) and reports the
// error it gets, as a careful program would.
#include <cstdio>

int main() {
    cudaGraph_t graph;
    cudaError_t e = cudaGraphCreate(&graph, 0);
    printf("cudaGraphCreate: %s\n", cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 4;
}
