#include <cstdio>
// a template child with a default template argument, launched with explicit template arguments
template <typename T, int N = 4>
__global__ void child(T* p, T v) { if (threadIdx.x < N) p[threadIdx.x] = v; }
__global__ void parent(float* p, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  child<float><<<1, 32>>>(p + 32 * i, 1.0f);
}
int main() {
  float* p; cudaMalloc(&p, 32 * 32 * sizeof(float)); cudaMemset(p, 0, 32 * 32 * sizeof(float));
  parent<<<1, 32>>>(p, 8);
  cudaError_t e = cudaDeviceSynchronize();
  float h[32 * 32]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int k = 0; k < 32 * 32; k++) bad += h[k] != ((k / 32 < 8 && k % 32 < 4) ? 1.0f : 0.0f);
  printf("%s (err=%s, bad=%d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad);
}
