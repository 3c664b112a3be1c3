// klap --promote=PO (and PAO): the launch condition `t < LIMIT` names the kernel's own enumerator,
// which shadows a file-scope constant. klap evaluates the condition at the start of the body (the
// existence chain), where LIMIT is still the file-scope 100: link 8 announces a successor that the
// launch site (LIMIT = 8 there) never releases, and the announced successor ignores the abort: hang.
#include <cstdio>
constexpr int LIMIT = 100;
__global__ void K(int* out, int t) {
  enum { LIMIT = 8 };
  __shared__ int s[32];
  s[threadIdx.x] = t;
#pragma klap overlap
  if (threadIdx.x == 0) out[t] = s[0];
  if (threadIdx.x == 0 && t < LIMIT) K<<<1, 32>>>(out, t + 1);
}
int main() {
  int* out; cudaMalloc(&out, 16 * sizeof(int)); cudaMemset(out, 0xff, 16 * sizeof(int));
  K<<<1, 32>>>(out, 0);
  cudaError_t e = cudaDeviceSynchronize();      // original: links 0..8; promoted: never returns
  int h[16]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = e == cudaSuccess; for (int t = 0; t <= 8; ++t) ok &= h[t] == t; ok &= h[9] == -1;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
