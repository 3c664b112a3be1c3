// klap --promote=P: a using-directive in the body makes STEP mean cfg::STEP (2); the early launch
// (before the directive) and K_klap_pro see ::STEP (1).
#include <cstdio>
constexpr int STEP = 1;                 // the file's default stride
namespace chain {
namespace cfg { constexpr int STEP = 2; }   // this chain's stride
__global__ void K(int* out, int t, int n) {
  using namespace cfg;                  // STEP is cfg::STEP (2) from here on
  if (threadIdx.x == 0) out[t] = 1;
  if (threadIdx.x == 0 && t + STEP < n) K<<<1, 32>>>(out, t + STEP, n);
}
}
int main() {
  const int n = 16; int* out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  chain::K<<<1, 32>>>(out, 0, n); cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == (t % 2 == 0 ? 1 : 0);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
