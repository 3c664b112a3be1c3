// One thread asks device cudaMalloc for more than the heap has; everybody else asks for 64 bytes.
// cudaMalloc's contract: each call succeeds or fails on its own. Expect 63 successes, 1 failure.
#include <cstdio>
__global__ void parent(int* ok, int* bad) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  size_t n = t == 5 ? (size_t(1) << 40) : 64;
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, n);
  if (e == cudaSuccess && p != nullptr) { static_cast<char*>(p)[0] = 1; atomicAdd(ok, 1); cudaFree(p); }
  else atomicAdd(bad, 1);
}
int main() {
  int* d; cudaMalloc(&d, 2 * sizeof(int)); cudaMemset(d, 0, 2 * sizeof(int));
  parent<<<1, 64>>>(d, d + 1);
  cudaError_t e = cudaDeviceSynchronize();
  int h[2] = {-1, -1}; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  bool pass = e == cudaSuccess && h[0] == 63 && h[1] == 1;
  printf("%s (cuda: %s, ok %d, failed %d; want 63 and 1)\n", pass ? "PASS" : "FAIL", cudaGetErrorString(e), h[0], h[1]);
  return !pass;
}
