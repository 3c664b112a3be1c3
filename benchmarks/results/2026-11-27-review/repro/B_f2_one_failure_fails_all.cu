// device cudaMalloc aggregation (any granularity): one thread's request that cannot be served makes
// every thread of its group (warp or block) fail, although each of their own requests fits.
#include <cstdio>
__global__ void work(const size_t* want, int* got) {
  int* p;
  cudaError_t e = cudaMalloc(&p, want[threadIdx.x]);
  got[threadIdx.x] = e == cudaSuccess && p != nullptr;
  if (e == cudaSuccess) { p[0] = 1; cudaFree(p); }
}
int main() {
  const int n = 64;
  size_t h[n]; for (int k = 0; k < n; k++) h[k] = 256;
  h[5] = (size_t)1 << 40;  // 1 TiB: more than the device heap (8 MiB by default): this one fails
  size_t* want; int* got; cudaMalloc(&want, sizeof h); cudaMalloc(&got, n * sizeof(int));
  cudaMemcpy(want, h, sizeof h, cudaMemcpyHostToDevice);
  work<<<1, n>>>(want, got);
  cudaError_t e = cudaDeviceSynchronize();
  int g[n]; cudaMemcpy(g, got, sizeof g, cudaMemcpyDeviceToHost);
  int ok = e == cudaSuccess, succeeded = 0;
  for (int k = 0; k < n; k++) { ok &= g[k] == (k != 5); succeeded += g[k]; }
  printf("%s (%d of 63 small allocations succeeded)\n", ok ? "PASS" : "FAIL", succeeded);
  return !ok;
}
