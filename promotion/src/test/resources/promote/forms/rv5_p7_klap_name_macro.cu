// klap --promote=PA: rv4_name_capture with klap_j reached through a macro (the klap_ check reads
// the kernel's text); K_klap_pro expands STRIDE to its own ticket klap_j: t + j*j instead of t + 2j.
#include <cstdio>
constexpr int klap_j = 2;   // stride of the chain
#define STRIDE klap_j
__global__ void K(int* out, int t, int n) {
  if (threadIdx.x == 0) out[t] = 1;
  if (threadIdx.x == 0 && t + STRIDE < n) K<<<1, 32>>>(out, t + STRIDE, n);
}
int main() {
  const int n = 40; int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == (t % 2 == 0);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
