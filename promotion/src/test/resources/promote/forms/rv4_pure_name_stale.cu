// klap --promote=PO (and PAO): the dependent prologue calls a user-defined `min(int* slot, int v)`
// that lowers *slot. klap's overlap check takes every call named `min` for the pure math function
// (Mutations.pure), so it does not see the store to *best, and lets the independent prologue, which
// reads *best, run before the predecessor's dependent prologue: link t reads a stale running minimum.
#include <cstdio>
__device__ int min(int* slot, int v) {          // keeps the running minimum in *slot
  int old = *slot; if (v < old) *slot = v; return old;
}
__global__ void K(int* best, const int* in, int* out, int t, int n) {
  __shared__ int b;
  if (threadIdx.x == 0) b = *best;              // independent prologue: the minimum of in[0..t)
  __syncthreads();
#pragma klap overlap
  if (threadIdx.x == 0) { out[t] = b; min(best, in[t]); }   // dependent prologue: add in[t]
  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(best, in, out, t + 1, n);
}
int main() {
  const int n = 20; int h[n]; for (int i = 0; i < n; ++i) h[i] = 100 - 3 * i;
  int *best, *in, *out; cudaMalloc(&best, sizeof(int)); cudaMalloc(&in, sizeof h); cudaMalloc(&out, sizeof h);
  int big = 1 << 30; cudaMemcpy(best, &big, sizeof big, cudaMemcpyHostToDevice);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  K<<<1, 32>>>(best, in, out, 0, n); cudaDeviceSynchronize();
  int o[n]; cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  bool ok = o[0] == big; for (int t = 1; t < n; ++t) ok &= o[t] == h[t - 1];
  printf("%s\n", ok ? "PASS" : "FAIL");
}
