// warp/block (and kernel) granularity: as g4, inside an if with a statement after the object.
// Expected: PASS.
#include <cstdio>
__global__ void first(int* out, int i) { if (threadIdx.x == 0) out[i] = 1; }
__global__ void second(int* out, int i) { if (threadIdx.x == 0) out[i] *= 10; }
struct Finisher { __device__ Finisher(int* out, int i) { second<<<1, 32>>>(out, i); } };
__global__ void parent(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    first<<<1, 32>>>(out, i);
    Finisher f(out, i);
    out[n + i] = 1;
  }
}
int main() {
  const int N = 64;
  int h[2 * N], *out; cudaMalloc(&out, sizeof h); cudaMemset(out, 0, sizeof h);
  parent<<<1, N>>>(out, N);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += h[i] != 10;
  printf("%s (%s, %d wrong, out[0]=%d expected 10)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, h[0]);
  return bad || e;
}
