// klap --promote=P: the asm exit is in the destructor of a local (run implicitly at the end of the
// body, before finish()): not a call klap follows, so the exit check misses it; hang as rv4_exit_hang.
#include <cstdio>
struct Guard { bool stop; __device__ ~Guard() { if (stop) asm volatile("exit;"); } };
__global__ void K(int* out, int t, int n) {
  Guard g{t >= n};
  if (threadIdx.x == 0) out[t] = t;
  if (threadIdx.x == 0 && t < n) K<<<1, 32>>>(out, t + 1, n);
}
int main() {
  int* d; cudaMalloc(&d, 16 * sizeof(int)); cudaMemset(d, 0, 16 * sizeof(int));
  K<<<1, 32>>>(d, 0, 8);
  cudaError_t e = cudaDeviceSynchronize();   // original: returns; promoted: never returns
  int h[16]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = e == cudaSuccess; for (int i = 0; i < 8; ++i) ok &= h[i] == i;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
