// CUDA graphs, the ways programs build them: stream capture of sets, launches, copies and
// a host function, replayed several times; a capture that forks onto a second stream and
// joins back through events; a graph built node by node with explicit dependencies, whose
// kernel argument is changed in the executable graph; kernel arguments copied at capture
// (the host variable changes afterwards). Exit 1 on a wrong result.
// -DNO_SYNC: the block reduction in the captured work loses a __syncthreads() (a race the
// race check reports inside a graph launch as anywhere else).
#include <cstdio>

__global__ void fill(int *a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}

__global__ void scale(int *a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= k;
}

__global__ void block_sum(const int *a, int *out) {
  __shared__ int s[256];
  s[threadIdx.x] = a[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (int k = 128; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
#ifndef NO_SYNC
    __syncthreads();
#endif
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

static int calls = 0;
static void CUDART_CB count(void *p) { calls += *(int *)p; }

int main() {
  const int n = 1024;
  int bad = 0, *a, *b, *sums, host[n], hsums[4];
  cudaMalloc(&a, n * 4);
  cudaMalloc(&b, n * 4);
  cudaMalloc(&sums, 16);
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);

  // 1. Capture on one stream; the launch argument v is read at capture.
  int v = 3, one = 1;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaStreamCaptureStatus st;
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaStreamIsCapturing(s1, &st);
  bad += st != cudaStreamCaptureStatusActive;
  cudaMemsetAsync(a, 0, n * 4, s1);
  fill<<<n / 256, 256, 0, s1>>>(a, n, v);
  scale<<<n / 256, 256, 0, s1>>>(a, n, 2);
  block_sum<<<4, 256, 0, s1>>>(a, sums);
  cudaMemcpyAsync(host, a, n * 4, cudaMemcpyDeviceToHost, s1);
  cudaMemcpyAsync(hsums, sums, 16, cudaMemcpyDeviceToHost, s1);
  cudaLaunchHostFunc(s1, count, &one);
  if (cudaStreamEndCapture(s1, &g)) bad++;
  v = 100;
  size_t nodes = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  bad += nodes != 7;
  bad += calls != 0 || host[0] == 6;  // nothing ran at capture
  cudaGraphInstantiate(&ge, g, 0);
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < n; i++) host[i] = -1;
    cudaGraphLaunch(ge, s1);
    cudaStreamSynchronize(s1);
    for (int i = 0; i < n; i++) bad += host[i] != 6;
    for (int k = 0; k < 4; k++) bad += hsums[k] != 6 * 256;
  }
  bad += calls != 3;
  cudaStreamIsCapturing(s1, &st);
  bad += st != cudaStreamCaptureStatusNone;

  // 2. Fork onto s2 and join back: b = 5 on s2 while a += 1 on s1, then a *= b[0]-ish.
  cudaEvent_t fork, join;
  cudaEventCreate(&fork);
  cudaEventCreate(&join);
  cudaGraph_t g2;
  cudaGraphExec_t ge2;
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(a, 0, n * 4, s1);
  cudaEventRecord(fork, s1);
  cudaStreamWaitEvent(s2, fork, 0);
  cudaMemsetAsync(b, 0, n * 4, s2);
  fill<<<n / 256, 256, 0, s2>>>(b, n, 5);
  cudaEventRecord(join, s2);
  fill<<<n / 256, 256, 0, s1>>>(a, n, 1);
  cudaStreamWaitEvent(s1, join, 0);
  scale<<<n / 256, 256, 0, s1>>>(a, n, 7);
  cudaMemcpyAsync(host, a, n * 4, cudaMemcpyDeviceToHost, s1);
  if (cudaStreamEndCapture(s1, &g2)) bad++;
  cudaGraphInstantiate(&ge2, g2, 0);
  cudaGraphLaunch(ge2, s1);
  cudaStreamSynchronize(s1);
  for (int i = 0; i < n; i++) bad += host[i] != 7;
  cudaMemcpy(host, b, n * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) bad += host[i] != 5;

  // 3. Built node by node: set → fill(+4) → scale(×k), the last dependency added later.
  cudaGraph_t g3;
  cudaGraphExec_t ge3;
  cudaGraphCreate(&g3, 0);
  cudaGraphNode_t nset, nfill, nscale, nhost;
  cudaMemsetParams mp = {};
  mp.dst = a; mp.value = 0; mp.elementSize = 4; mp.width = n; mp.height = 1;
  cudaGraphAddMemsetNode(&nset, g3, nullptr, 0, &mp);
  int nn = n, four = 4, k = 3;
  void *fargs[] = {&a, &nn, &four};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)fill; kp.gridDim = dim3(n / 256); kp.blockDim = dim3(256); kp.kernelParams = fargs;
  cudaGraphAddKernelNode(&nfill, g3, &nset, 1, &kp);
  void *sargs[] = {&a, &nn, &k};
  cudaKernelNodeParams sp = kp;
  sp.func = (void *)scale; sp.kernelParams = sargs;
  cudaGraphAddKernelNode(&nscale, g3, nullptr, 0, &sp);
  cudaGraphAddDependencies(g3, &nfill, &nscale, nullptr, 1);
  cudaHostNodeParams hp = {count, &one};
  cudaGraphAddHostNode(&nhost, g3, &nscale, 1, &hp);
  if (cudaGraphInstantiate(&ge3, g3, 0)) bad++;
  cudaGraphLaunch(ge3, s1);
  cudaMemcpy(host, a, n * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) bad += host[i] != 12;
  k = 10;
  cudaGraphExecKernelNodeSetParams(ge3, nscale, &sp);
  cudaGraphLaunch(ge3, s1);
  cudaMemcpy(host, a, n * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) bad += host[i] != 40;
  bad += calls != 5;

  cudaGraphExecDestroy(ge);
  cudaGraphExecDestroy(ge2);
  cudaGraphExecDestroy(ge3);
  cudaGraphDestroy(g);
  cudaGraphDestroy(g2);
  cudaGraphDestroy(g3);
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { printf("error %s\n", cudaGetErrorString(e)); bad++; }
  printf("%s: %d wrong, %d host calls\n", bad ? "MISMATCH" : "OK", bad, calls);
  return bad != 0;
}
