// Shape "param-forms" (found by reading, 2026-11-24): child parameters declared in the forms C++
// adjusts to pointers (an array `const int d[8]`, a function `unsigned g(unsigned)`), an unnamed
// one, a __grid_constant__ struct, and a default argument that one launch leaves out. The parent
// fills a struct's member array per thread (s.c[0] = i). Before, the argument record declared
// `const int d[8];` (an array member the argument cannot initialize) and `int[4] klap_unnamed3`
// (not C++), kept __grid_constant__ on a struct member, the launch without the default was not
// aggregated, and s was taken for uniform (a store to s.c[0] was not a write of s), so every
// child of a warp or block would have read one thread's struct.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

struct Pair { unsigned c[2]; };

__host__ __device__ unsigned triple(unsigned x) { return 3u * x + 1u; }
__host__ __device__ unsigned flip(unsigned x) { return x ^ 0x5bd1u; }

__global__ void child(unsigned* out, const int d[8], unsigned g(unsigned), int, const __grid_constant__ Pair s,
                      unsigned tag, unsigned extra = 9u) {
  unsigned t = threadIdx.x;
  atomicAdd(&out[(tag * 31u + t) % N_OUT], (unsigned)d[t % 8u] + g(tag + t) + s.c[t % 2u] + extra * 17u);
}

__global__ void parent(unsigned* out, const int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Pair s;
  s.c[0] = 7u * i;
  s.c[1] = 11u;
  child<<<1, 8>>>(out, data + i % 64, i % 2 ? triple : flip, i, s, (unsigned)i);
  if (i % 3 == 0) child<<<1, 4>>>(out, data, flip, -i, s, (unsigned)i + 5000u, (unsigned)i);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<int> data(72);
  for (int j = 0; j < 72; ++j) data[j] = 13 * j - 200;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    unsigned c[2] = {7u * i, 11u};
    for (unsigned t = 0; t < 8; ++t) {
      unsigned tag = (unsigned)i;
      unsigned g = i % 2 ? triple(tag + t) : flip(tag + t);
      expected[(tag * 31u + t) % N_OUT] += (unsigned)data[i % 64 + t % 8u] + g + c[t % 2u] + 9u * 17u;
    }
    if (i % 3 == 0)
      for (unsigned t = 0; t < 4; ++t) {
        unsigned tag = (unsigned)i + 5000u;
        expected[(tag * 31u + t) % N_OUT] += (unsigned)data[t % 8u] + flip(tag + t) + c[t % 2u] + (unsigned)i * 17u;
      }
  }
  unsigned* out;
  int* dd;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&dd, sizeof(int) * data.size());
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(dd, data.data(), sizeof(int) * data.size(), cudaMemcpyHostToDevice);
  parent<<<blocks, BLOCK>>>(out, dd, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL param-forms: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS param-forms\n");
  return 0;
}
