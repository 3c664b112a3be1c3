// Review of 2026-11-29: an operator+= with a __syncthreads() after a guarded return (issue 10's
// hang, through an operator): klap rewrote the guard, so the threads past n met klap's barrier
// while the others waited at the operator's. The live threads of a block sum their values in shared
// memory through the operator (threads that exited do not count at a barrier, sm_70+), then each
// launches a child that records its block's sum: 128 in the full block, 72 in the second.
#include <cstdio>
#define BLOCK 128
#define N 200
struct Acc {
  unsigned* s;
  unsigned live;
  __device__ Acc& operator+=(unsigned v) {
    s[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) { unsigned t = 0; for (unsigned k = 0; k < live; ++k) t += s[k]; s[BLOCK] = t; }
    __syncthreads();
    return *this;
  }
};
__global__ void child(unsigned* out, unsigned v) { if (threadIdx.x == 0) out[0] = v; }
__global__ void parent(unsigned* out, int n) {
  __shared__ unsigned sh[BLOCK + 1];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int left = n - (int)(blockIdx.x * blockDim.x);
  Acc a{sh, (unsigned)(left < BLOCK ? left : BLOCK)};
  a += 1u;
  child<<<1, 32>>>(out + i, sh[BLOCK]);
}
int main() {
  unsigned* out; cudaMalloc(&out, 2 * BLOCK * sizeof(unsigned)); cudaMemset(out, 0, 2 * BLOCK * sizeof(unsigned));
  parent<<<2, BLOCK>>>(out, N);
  cudaError_t e = cudaDeviceSynchronize();
  unsigned h[2 * BLOCK]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < 2 * BLOCK; ++i) bad += h[i] != (i < BLOCK ? (unsigned)BLOCK : i < N ? (unsigned)(N - BLOCK) : 0u);
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, 2 * BLOCK);
  return bad != 0 || e != cudaSuccess;
}
