#include <cstdio>
#include "hdr/util.cuh"   // a user header with an index-reading helper
__global__ void child(int* p) { p[my_gid()] = 1; }   // 2 blocks x 32 threads: p[0..63]
__global__ void parent(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  child<<<2, 32>>>(p + 64 * i);
}
int main() {
  const int n = 8, m = 64 * n + 1024; int* p;
  cudaMalloc(&p, m * sizeof(int)); cudaMemset(p, 0, m * sizeof(int));
  parent<<<1, 32>>>(p, n);
  cudaError_t e = cudaDeviceSynchronize();
  static int h[64 * 8 + 1024]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int k = 0; k < m; k++) bad += h[k] != (k < 64 * n ? 1 : 0);
  printf("%s (err=%s, bad=%d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad);
}
