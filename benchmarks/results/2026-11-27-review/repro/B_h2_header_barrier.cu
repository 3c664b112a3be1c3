// kernel granularity: a data-dependent return, then a barrier inside a __device__ function that
// klap does not see (it is in an #included header). Thread 0 returns early.
#include <cstdio>
#include "inc/stage.cuh"
__global__ void child(int* out, int i) { if (threadIdx.x == 0) out[i] = 1; }
__global__ void parent(int* out, const int* in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  if (v < 0) return;                       // inactive element (element 0 here)
  int w = stage_and_read_neighbour(v);     // __syncthreads() inside, in the header
  if (w >= 0) child<<<1, 32>>>(out, i);
}
int main() {
  const int n = 64;
  int *out, *in; cudaMalloc(&out, n * sizeof(int)); cudaMalloc(&in, n * sizeof(int));
  cudaMemset(out, 0, n * sizeof(int));
  int h[n]; for (int k = 0; k < n; k++) h[k] = k == 0 ? -1 : k;
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  parent<<<1, n>>>(out, in);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  // threads 1..62 read a non-negative neighbour (thread 63 reads s[0], which thread 0 never wrote: skip it)
  int ok = e == cudaSuccess && h[0] == 0;
  for (int k = 1; k < 63; k++) ok &= h[k] == 1;
  printf("%s (%s; out[1]=%d, expected 1)\n", ok ? "PASS" : "FAIL", cudaGetErrorString(e), h[1]);
  return !ok;
}
