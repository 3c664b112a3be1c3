// Shape "full-shared" (found by reading, 2026-11-25): a parent whose static shared memory is the
// whole 48 KiB a block may declare, written by every thread before a barrier the whole block
// reaches, read back after it, and feeding a launch under a thread-dependent condition. Before, the
// block-granularity output added the block-wide scan's scratch (~816 bytes of static shared memory)
// and nvlink rejected the program ("uses too much shared data"); now such a parent is aggregated per
// warp. A helper with its own 24 KiB of shared memory counts too.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define BLOCK 64
#define WORDS 6144

__global__ void bump(unsigned* v, unsigned add) {
  if (threadIdx.x == 0) atomicAdd(v, add);  // one per block: a grid of 2 blocks adds twice
}

__device__ int stash(int lt, int x) {
  __shared__ int half[WORDS];
  half[lt % WORDS] = x;
  __syncthreads();
  return half[lt % WORDS];
}

__global__ void parent(unsigned* v, int n, int k) {
  __shared__ int big[WORDS];
  int lt = threadIdx.x;
  int i = blockIdx.x * blockDim.x + lt;
  big[lt % WORDS] = i * 3 + k;
  __syncthreads();
  int x = stash(lt, big[lt % WORDS]);
  if (i >= n) return;
  if (x % 3 != 1) bump<<<1 + x % 2, 32>>>(v + i, (unsigned)x + 1u);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4, k = 5;
  std::vector<unsigned> expected(n, 0u), got(n, 0u);
  for (int i = 0; i < n; ++i) {
    int x = i * 3 + k;
    if (x % 3 != 1) expected[i] = (unsigned)(1 + x % 2) * ((unsigned)x + 1u);
  }
  unsigned* v;
  cudaMalloc(&v, sizeof(unsigned) * n);
  cudaMemset(v, 0, sizeof(unsigned) * n);
  parent<<<blocks, BLOCK>>>(v, n, k);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), v, sizeof(unsigned) * n, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < n; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL full_shared: thread %d has %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS full_shared\n");
  return 0;
}
