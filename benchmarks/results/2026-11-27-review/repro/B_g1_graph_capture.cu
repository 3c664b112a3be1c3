// host launch of a transformed parent inside CUDA graph capture (any granularity). The launch is the
// program's first and has more warps (4096) than klap's share of the default pending-launch limit (2048), so klap::host_prepare
// calls cudaDeviceSetLimit and cudaMemcpyToSymbolAsync (from pageable memory) while the stream is
// capturing; at kernel granularity klap::host_kstate also adds cudaMallocAsync/cudaMemsetAsync/
// cudaFreeAsync nodes. SUSPECTED: the capture is invalidated or klap exits; the original captures fine.
#include <cstdio>
__global__ void child(int* out, int base) { out[base + threadIdx.x] = base + threadIdx.x + 1; }
__global__ void parent(int* out) {   // one child per block: 512 launches, within the default 2048
  if (threadIdx.x == 0) child<<<1, blockDim.x>>>(out, blockIdx.x * blockDim.x);
}
int main() {
  const int blocks = 512, threads = 256, n = blocks * threads;   // 4096 warps
  int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaError_t e1 = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  parent<<<blocks, threads, 0, s>>>(out);
  cudaError_t e2 = cudaStreamEndCapture(s, &g);
  cudaError_t e3 = e2 == cudaSuccess ? cudaGraphInstantiate(&ge, g, 0) : e2;
  cudaError_t e4 = e3 == cudaSuccess ? cudaGraphLaunch(ge, s) : e3;
  cudaError_t e5 = e4 == cudaSuccess ? cudaGraphLaunch(ge, s) : e4;   // replay
  cudaError_t e6 = cudaStreamSynchronize(s);
  static int h[blocks * threads]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int ok = e1 == cudaSuccess && e5 == cudaSuccess && e6 == cudaSuccess;
  for (int k = 0; k < n; k++) ok &= h[k] == k + 1;
  printf("%s (begin %s, end %s, instantiate %s, launch %s, sync %s)\n", ok ? "PASS" : "FAIL", cudaGetErrorString(e1),
         cudaGetErrorString(e2), cudaGetErrorString(e3), cudaGetErrorString(e5), cudaGetErrorString(e6));
  return !ok;
}
