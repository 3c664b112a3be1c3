// klap --promote=PA: cuda::for_each_canceled_block (allowed: cuda::-qualified) hands the lambda the
// hardware blockIdx: the pool position in K_klap_pro, 0 in every original link.
#include <cstdio>
#include <cuda/work_stealing>
__global__ void K(int* out, int t, int n) {
  // sm_90: no cancellation; calls the lambda once with this block's index (blockIdx), 0 in every original link
  cuda::for_each_canceled_block<1>([&](dim3 b) { if (threadIdx.x == 0) out[t] = b.x; });
  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(out, t + 1, n);
}
int main() {
  const int n = 10; int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0xff, n * sizeof(int));
  K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == 0;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
