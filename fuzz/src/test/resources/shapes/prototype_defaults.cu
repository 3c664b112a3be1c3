// Shape "prototype-defaults" (issue 10, 2026-11-30): default arguments that only prototypes give
// (C++ [dcl.fct.default]/4: once per parameter, in any declaration). The children's launches and
// an index-reading helper's calls leave parameters to them; one helper's default reads blockIdx.x,
// which a variant's call would evaluate in the aggregated grid (klap must leave that launch as
// written); the host launch of the parent leaves its last parameter to its prototype's default.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define WIDTH 3

__device__ unsigned gid(unsigned scale = 1u);
__device__ unsigned block_tag(unsigned b = blockIdx.x);
__global__ void scale_child(unsigned* out, int i, unsigned salt, int w = WIDTH);
// the second declaration adds the default of the earlier parameter
__global__ void split_child(unsigned* out, int i, int w, unsigned salt = 11u);
__global__ void split_child(unsigned* out, int i, int w = 2 * WIDTH, unsigned salt);
__global__ void tag_child(unsigned* out, int i);
__global__ void parent(unsigned* out, int n, int rounds = 2);
__global__ void tagger(unsigned* out, int n);

__global__ void scale_child(unsigned* out, int i, unsigned salt, int w) {
  unsigned g = gid(), h = gid((unsigned)w);
  atomicAdd(&out[((unsigned)i * 131u + g + salt) % N_OUT], g + h * 7u + salt);
}

__global__ void split_child(unsigned* out, int i, int w, unsigned salt) {
  unsigned g = gid();
  atomicAdd(&out[((unsigned)i * 17u + g) % N_OUT], g * (unsigned)w + salt);
}

__global__ void tag_child(unsigned* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 29u + g) % N_OUT], block_tag() + 1u);
}

__device__ unsigned gid(unsigned scale) { return (blockIdx.x * blockDim.x + threadIdx.x) * scale; }
__device__ unsigned block_tag(unsigned b) { return b * 100u; }

__global__ void parent(unsigned* out, int n, int rounds) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  for (int r = 0; r < rounds; ++r) {
    if (t % 2 == 0) scale_child<<<2, 32>>>(out, t + 100 * r, 5u);
    if (t % 3 != 1) split_child<<<3, 16>>>(out, t + 100 * r);
  }
}

__global__ void tagger(unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && t % 5 == 0) tag_child<<<4, 8>>>(out, t);
}

int main() {
  const int n = 50, rounds = 2;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < rounds; ++r) {
      unsigned i = (unsigned)(t + 100 * r);
      if (t % 2 == 0)
        for (unsigned g = 0; g < 64; ++g) expected[(i * 131u + g + 5u) % N_OUT] += g + g * WIDTH * 7u + 5u;
      if (t % 3 != 1)
        for (unsigned g = 0; g < 48; ++g) expected[(i * 17u + g) % N_OUT] += g * 2u * WIDTH + 11u;
    }
  for (int t = 0; t < n; t += 5)
    for (unsigned g = 0; g < 32; ++g) expected[((unsigned)t * 29u + g) % N_OUT] += (g / 8u) * 100u + 1u;
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<2, 32>>>(out, n);
  tagger<<<2, 32>>>(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL prototype_defaults: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS prototype_defaults\n");
  return 0;
}
