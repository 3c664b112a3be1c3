// klap --promote=PA: the induction step names a file-scope constant `klap_j`; in K_klap_pro the
// generated local `klap_j` (the block's ticket) captures it: descendant j gets t + j * j, not t + 2 * j.
#include <cstdio>
constexpr int klap_j = 2;   // stride of the chain
__global__ void K(int* out, int t, int n) {
  if (threadIdx.x == 0) out[t] = 1;
  if (threadIdx.x == 0 && t + klap_j < n) K<<<1, 32>>>(out, t + klap_j, n);
}
int main() {
  const int n = 40; int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == (t % 2 == 0);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
