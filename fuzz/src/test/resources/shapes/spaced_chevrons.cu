// Shape "spaced-chevrons" (2026-11-29): launches written with the spaced chevrons that nvcc 13
// accepts, as Visual Studio's formatter writes them (`k << <g, b >> >(a)`; found in a public BFS
// program): blanks, a tab or a comment between `<<` and `<`, and blanks, a comment or a newline
// between `>>` and `>`, in device code and in the host launch. klap stopped with "syntax error"
// on every one of them; each must be a launch like `<<<...>>>`, with a shift `>>` in its
// configuration and arguments still read as a shift.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64

__global__ void add(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], w + threadIdx.x);
}

__global__ void twice(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 17 + threadIdx.x + blockIdx.x * 5) % N_OUT], w * 2u + threadIdx.x);
}

__host__ __device__ unsigned weight(int d, int i) { return (unsigned)d * 5u + (unsigned)i; }

__global__ void parent(unsigned* out, const int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned w = weight(data[i], i);
  if (w % 3u != 0u) add << <1, 1 + w % 32u >> > (out, i, w);
  for (int r = 0; r < 2; ++r)
    twice <<	<1 + (w >> 4) % 2, 8>>>(out, i + r, w >> 1);
  if (i % 4 == 1) add<< /* spaced */ <1, 4, 0, cudaStreamFireAndForget>> /* closer */
      >(out, i + 100, w);
}

int main() {
  const int n = 2 * BLOCK + 27;  // the third block has 27 live threads
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = (i * 2654435761u) >> 20;
  std::vector<unsigned> expected(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    unsigned w = weight(data[i], i);
    if (w % 3u != 0u)
      for (unsigned t = 0; t < 1 + w % 32u; ++t) expected[(i * 31 + t) % N_OUT] += w + t;
    for (int r = 0; r < 2; ++r)
      for (unsigned b = 0; b < 1 + (w >> 4) % 2; ++b)
        for (unsigned t = 0; t < 8; ++t) expected[((i + r) * 17 + t + b * 5) % N_OUT] += (w >> 1) * 2u + t;
    if (i % 4 == 1)
      for (unsigned t = 0; t < 4; ++t) expected[((i + 100) * 31 + t) % N_OUT] += w + t;
  }
  unsigned* out; int* d;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&d, sizeof(int) * n);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(d, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  parent << <(n + BLOCK - 1) / BLOCK, BLOCK >> > (out, d, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL spaced_chevrons: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS spaced_chevrons\n");
  return 0;
}
