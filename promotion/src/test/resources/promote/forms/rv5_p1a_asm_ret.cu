// klap --promote=P: PTX 'ret' in the kernel body ends the thread like 'exit' (K_klap_body is inlined
// into K and K_klap_pro, so it still returns from the kernel): finish() is never reached at the chain's
// end and the early-launched successor polls forever. The new check only looks for 'exit'.
#include <cstdio>
__global__ void K(int* out, int t, int n) {
  if (t >= n) asm volatile("ret;");
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
