// klap --promote=P (and PA): the induction step STEP is the kernel's own enumerator, which shadows a
// file-scope constant. klap accepts it (a CONSTANT name that is no local *variable*) and evaluates
// `t + STEP` at the start of the body (the early launch) and in K_klap_pro, where STEP is still the
// file-scope 1: the successor gets t + 1 instead of t + 2.
#include <cstdio>
constexpr int STEP = 1;                 // the file's default stride
__global__ void K(int* out, int t, int n) {
  enum { STEP = 2 };                    // this kernel walks every other element
  if (threadIdx.x == 0) out[t] = 1;
  if (threadIdx.x == 0 && t + STEP < n) K<<<1, 32>>>(out, t + STEP, n);
}
int main() {
  const int n = 16; int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == (t % 2 == 0 ? 1 : 0);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
