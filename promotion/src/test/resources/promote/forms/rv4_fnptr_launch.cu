// klap --promote=P: K calls, through a device function pointer written `(*spawner)(...)`, a helper
// that launches `fill` into the block's NULL stream just before K launches its successor there.
// Original: the successor is ordered after `fill` (same per-block NULL stream), so it reads fill's value.
// Promoted: the successor runs in cudaStreamFireAndForget once released and does not wait for `fill`.
#include <cstdio>
__global__ void fill(int* buf, int t) { buf[t] = 10 * t + 7; }
__device__ void spawn(int* buf, int t) { fill<<<1, 1>>>(buf, t); }
__device__ void (*spawner)(int*, int) = spawn;
__global__ void K(int* buf, int* out, int t, int n) {
  if (threadIdx.x == 0 && t > 0) out[t] = buf[t - 1];   // what the parent's `fill` wrote
  if (threadIdx.x == 0 && t + 1 < n) {
    (*spawner)(buf, t);                 // fill<<<1,1>>>(buf, t) into the NULL stream
    K<<<1, 32>>>(buf, out, t + 1, n);   // ordered after fill in the original
  }
}
int main() {
  const int n = 16;
  int *buf, *out; cudaMalloc(&buf, n * sizeof(int)); cudaMalloc(&out, n * sizeof(int));
  cudaMemset(buf, 0, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  K<<<1, 32>>>(buf, out, 0, n);
  cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 1; t < n; ++t) ok &= h[t] == 10 * (t - 1) + 7;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
