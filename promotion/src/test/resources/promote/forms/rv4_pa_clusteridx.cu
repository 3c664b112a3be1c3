// klap --promote=PA: descendants of a pool are the blocks of one grid of n blocks, and klap only
// shadows blockIdx/gridDim. The sm_90 cluster index of a block (__clusterIdx(), PTX %clusterid,
// one block per cluster by default) is its hardware block index: 0 in the original single-block
// child, the pool position in the promoted one; __clusterGridDimInClusters() is n, not 1.
#include <cstdio>
__global__ void K(int* out, int t, int n) {
  if (threadIdx.x == 0) out[t] = __clusterIdx().x + 1000 * (__clusterGridDimInClusters().x - 1);  // 0 in every original link
  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(out, t + 1, n);
}
int main() {
  const int n = 10; int* out; cudaMalloc(&out, n * sizeof(int));
  K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == 0;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
