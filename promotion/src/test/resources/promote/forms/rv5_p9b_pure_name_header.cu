// klap --promote=PO -I inc: rv4_pure_name_hang with the user's max(const int*, int) in a header.
// klap --promote=PO: the launch condition calls a user-defined `max` (the largest of an array).
// klap takes any call named `max` for the pure math function and evaluates the condition at the
// start of each link, before the dependent prologue lowered `level`. Link 5 then announces a
// successor it never releases; that successor ignores the abort (it was announced) and polls forever.
#include <cstdio>
#include <largest.h>   // __device__ int max(const int* a, int len): largest of a[0..len)
__global__ void K(int* level, int* out, int t) {
  __shared__ int s[32];
  s[threadIdx.x] = t * threadIdx.x;              // independent prologue
#pragma klap overlap
  if (threadIdx.x < 4 && t == 5) level[threadIdx.x] = 0;   // dependent prologue: the chain ends at 5
  __syncthreads();
  if (threadIdx.x == 0) out[t] = s[1];
  if (threadIdx.x == 0 && t < max(level, 4)) K<<<1, 32>>>(level, out, t + 1);
}
int main() {
  int *level, *out; cudaMalloc(&level, 4 * sizeof(int)); cudaMalloc(&out, 16 * sizeof(int));
  int init[4] = {100, 100, 100, 100}; cudaMemcpy(level, init, sizeof init, cudaMemcpyHostToDevice);
  cudaMemset(out, 0xff, 16 * sizeof(int));
  K<<<1, 32>>>(level, out, 0);
  cudaError_t e = cudaDeviceSynchronize();       // original: links 0..5 run; promoted: hangs
  int h[16]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = e == cudaSuccess; for (int t = 0; t <= 5; ++t) ok &= h[t] == t; ok &= h[6] == -1;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
