#include <cstdio>
// a child with a local class whose static member function reads the built-in indices
__global__ void child(int* p) {
  struct Idx { __device__ static unsigned g() { return blockIdx.x * blockDim.x + threadIdx.x; } };
  p[Idx::g()] = 1;
}
__global__ void parent(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  child<<<2, 32>>>(p + 64 * i);
}
int main() {
  const int n = 8; int* p;
  cudaMalloc(&p, 64 * n * sizeof(int)); cudaMemset(p, 0, 64 * n * sizeof(int));
  parent<<<1, 32>>>(p, n);
  cudaError_t e = cudaDeviceSynchronize();
  int h[64 * 8]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int k = 0; k < 64 * n; k++) bad += h[k] != 1;
  printf("%s (err=%s, bad=%d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad);
}
