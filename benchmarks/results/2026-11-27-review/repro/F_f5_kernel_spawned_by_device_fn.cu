// Kernel granularity: a kernel launched from a __device__ function (not from a kernel body) gets an
// aggregated variant whose one hardware grid holds many parent grids, but its grid-wide site still
// scalarizes the kernel's parameter (launchedFromKernel only looks at kernel bodies).
#include <cstdio>
#define N 1024
__global__ void leaf(int* out, int base) { atomicAdd(&out[base + threadIdx.x], 1); }
__global__ void node(int* out, int base) { leaf<<<1, 32>>>(out, base); }   // base is uniform in ONE node grid
__device__ void spawn(int* out, int base) { node<<<1, 1>>>(out, base); }
__global__ void top(int* out) { spawn(out, 32 * threadIdx.x); }          // 32 node grids, bases 0, 32, ..., 992
int main() {
  int* out; cudaMalloc(&out, N * sizeof(int)); cudaMemset(out, 0, N * sizeof(int));
  top<<<1, 32>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  static int h[N]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < N; ++i) bad += h[i] != 1;
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, N);
  return bad != 0;
}
