// klap --promote=P: the asm exit is in the constructor of a local object.
#include <cstdio>
struct Guard { __device__ Guard(bool stop) { if (stop) asm volatile("exit;"); } };
__global__ void K(int* out, int t, int n) {
  Guard g(t >= n);
  if (threadIdx.x == 0) out[t] = t;
  if (threadIdx.x == 0) K<<<1, 32>>>(out, t + 1, n);
}
int main() {
  int* d; cudaMalloc(&d, 16 * sizeof(int)); cudaMemset(d, 0, 16 * sizeof(int));
  K<<<1, 32>>>(d, 0, 8);
  cudaError_t e = cudaDeviceSynchronize();   // original: returns; promoted: never returns
  int h[16]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = e == cudaSuccess; for (int i = 0; i < 8; ++i) ok &= h[i] == i;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
