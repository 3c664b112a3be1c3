// klap --promote=P|PA: rv4_ldg_iterator with LOAD_LDG spelled cub::CacheLoadModifier(5): the template
// check greps the file for 'LOAD_LDG'; the PTX of the output has ld.global.nc.
#include <cstdio>
#include <cub/cub.cuh>
template <class It>
__global__ void K(It in, int* out, int t, int n) {
  int prev = t > 0 ? in[t - 1] : 0;
  if (threadIdx.x == 0) out[t] = prev + t;
  if (threadIdx.x == 0 && t + 1 < n) K<It><<<1, 32>>>(in, out, t + 1, n);
}
int main() {
  const int n = 20;  int* buf; cudaMalloc(&buf, n * sizeof(int)); cudaMemset(buf, 0, n * sizeof(int));
  K<<<1, 32>>>(cub::CacheModifiedInputIterator<cub::CacheLoadModifier(5), int>(buf), buf, 0, n);  // 5 == cub::LOAD_LDG
  cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, buf, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == t * (t + 1) / 2;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
