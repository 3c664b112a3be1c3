// Review of 2026-11-29: child<float><<<...>>>(p, x) of template <typename T, typename U = int>: C++
// deduces U = double from x; klap aggregated it as child<float> with U = int (2.5 became 2).
#include <cstdio>
#define N 96
template <typename T, typename U = int> __global__ void child(T* p, U x) { if (threadIdx.x == 0) p[0] = (T)(x * 2); }
__global__ void parent(float* p, double x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) child<float><<<1, 32>>>(p + i, x + i);
}
int main() {
  float* p; cudaMalloc(&p, N * sizeof(float)); cudaMemset(p, 0, N * sizeof(float));
  parent<<<1, 128>>>(p, 2.5);
  cudaError_t e = cudaDeviceSynchronize();
  float h[N]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < N; ++i) bad += h[i] != (float)((2.5 + i) * 2);
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, N);
  return bad != 0 || e != cudaSuccess;
}
