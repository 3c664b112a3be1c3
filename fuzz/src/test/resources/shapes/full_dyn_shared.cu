// Shape "full-dyn-shared" (found by reading, 2026-11-27): a parent launched from the host with the
// whole default 48 KiB of dynamic shared memory (the most a kernel without static shared memory
// may ask for without cudaFuncSetAttribute), written by every thread before a barrier the whole
// block reaches, read back after it (here through a __device__ helper), and feeding a launch under
// a thread-dependent condition. klap's block-granularity parent adds static shared memory (the
// block-wide scan's scratch), which lowers the kernel's default dynamic limit below 48 KiB: the
// launch failed with "invalid argument" until klap wrapped its size in klap::host_smem, which
// raises the limit. The second launch goes into a created stream (the other host-launch form).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define BLOCK 64
#define DYN_BYTES (48 * 1024)

__global__ void bump(unsigned* v, unsigned add) {
  if (threadIdx.x == 0) atomicAdd(v, add);
}

__device__ int stash(int lt, int x) {
  extern __shared__ int dyn[];
  dyn[lt] = x;
  __syncthreads();
  return dyn[(lt + 1) % BLOCK] - 3;  // the neighbour's value: i * 3 + k of thread i + 1 of the block
}

__global__ void parent(unsigned* v, int n, int k) {
  int lt = threadIdx.x;
  int i = blockIdx.x * blockDim.x + lt;
  int x = stash(lt, i * 3 + k);  // every thread of the block reaches the barrier
  if (lt == BLOCK - 1) x += BLOCK * 3;  // the neighbour of the last thread is thread 0 of the block
  if (i >= n) return;
  if (x % 3 != 1) bump<<<1 + x % 2, 32>>>(v + i, (unsigned)x + 1u);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4, k = 5;
  std::vector<unsigned> expected(n, 0u), got(n, 0u);
  for (int i = 0; i < n; ++i) {
    int x = i * 3 + k;
    if (x % 3 != 1) expected[i] = 2u * (unsigned)(1 + x % 2) * ((unsigned)x + 1u);  // two launches
  }
  unsigned* v;
  cudaStream_t s;
  cudaMalloc(&v, sizeof(unsigned) * n);
  cudaMemset(v, 0, sizeof(unsigned) * n);
  cudaStreamCreate(&s);
  parent<<<blocks, BLOCK, DYN_BYTES>>>(v, n, k);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) {
    parent<<<blocks, BLOCK, DYN_BYTES, s>>>(v, n, k);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), v, sizeof(unsigned) * n, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < n; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL full_dyn_shared: thread %d has %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS full_dyn_shared\n");
  return 0;
}
