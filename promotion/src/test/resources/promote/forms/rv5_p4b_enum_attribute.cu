// klap --promote=P: rv4_local_enum_step with an attribute on the enum: not matched by the regex.
#include <cstdio>
constexpr int STEP = 1;

__global__ void K(int* out, int t, int n) {
  enum [[maybe_unused]] { STEP = 2 };
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
