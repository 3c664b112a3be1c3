// Shape "barrier-return" (issue 10, bug class 2): threads past the end return early, the others
// exchange values through shared memory across a __syncthreads() and then launch a child. n is not
// a multiple of the block size, so threads of the last block really return before the barrier.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64

__global__ void child(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], w + threadIdx.x);
}

__global__ void parent(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  __syncthreads();
  unsigned w = sh[(threadIdx.x + 1) % live] * 3u + (unsigned)i;
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out, i, w);
}

int main() {
  const int n = 2 * BLOCK + 27;  // the third block has 27 live threads
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = (i * 2654435761u) >> 20;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    int b0 = i / BLOCK * BLOCK, live = n - b0 < BLOCK ? n - b0 : BLOCK;
    unsigned w = (unsigned)data[b0 + (i - b0 + 1) % live] * 3u + (unsigned)i;
    if (w % 3u != 0u)
      for (unsigned t = 0; t < 1 + w % 32u; ++t) expected[(i * 31 + t) % N_OUT] += w + t;
  }
  unsigned* out; int* d;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&d, sizeof(int) * n);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(d, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  parent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, d, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL barrier_return: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS barrier_return\n");
  return 0;
}
