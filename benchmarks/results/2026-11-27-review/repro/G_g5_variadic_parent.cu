// kernel granularity: a variadic template parent launched from the host with deduced arguments.
#include <cstdio>
__global__ void leaf(int* out, int i) { if (threadIdx.x == 0) out[i] = 1; }
template <typename... Ts> __global__ void parent(int* out, Ts... offs) {
  int base = (0 + ... + offs);
  leaf<<<1, 32>>>(out, base + threadIdx.x);
}
int main() {
  int h[64], *out; cudaMalloc(&out, sizeof h); cudaMemset(out, 0, sizeof h);
  parent<<<1, 32>>>(out, 16, 16);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < 64; i++) bad += h[i] != (i >= 32);
  printf("%s (%s)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e));
  return bad || e;
}
