// Shape "kernel-name-macro" (issue 10, 2026-11-28): launches whose kernel an object-like macro
// names. A child in a namespace, a template child with its argument in the macro, a macro naming
// another macro, a host launch of the parent through a macro, and a child with 64 KiB of dynamic
// shared memory whose limit the host raises through a cast of a macro-named kernel. klap took the
// macro's name for the kernel's: it left the launches ("child kernel 'K' is not defined"), ran the
// host launch as written at kernel granularity, and did not raise its variants' shared memory
// limit (their launches would fail). The big child's __global__ is a macro too: its variants must
// still get klap's launch bounds.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64
#define BIG_WORDS 16384  // 64 KiB of unsigned: above the default 48 KiB, raised by the host

namespace fz {
__global__ void add(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], w + threadIdx.x);
}
template <unsigned M>
__global__ void scaled(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 17 + threadIdx.x) % N_OUT], w * M + threadIdx.x);
}
}  // namespace fz

#define KERNEL __global__

// every thread of the child writes its slot of the dynamic shared memory; thread 0 sums them
KERNEL void big(unsigned* out, int i, unsigned w) {
  extern __shared__ unsigned buf[];
  for (unsigned s = threadIdx.x; s < BIG_WORDS; s += blockDim.x) buf[s] = w + s;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned s = 0; s < BIG_WORDS; ++s) sum += buf[s];
    atomicAdd(&out[(i * 7) % N_OUT], sum);
  }
}

#define ADD fz::add
#define SCALED fz::scaled<3u>
#define SCALED_AGAIN SCALED
#define BIG big
#define PARENT parent

__host__ __device__ unsigned weight(int d, int i) { return (unsigned)d * 5u + (unsigned)i; }

__global__ void parent(unsigned* out, const int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned w = weight(data[i], i);
  if (w % 3u != 0u) ADD<<<1, 1 + w % 32u>>>(out, i, w);
  if (w % 5u != 1u) SCALED_AGAIN<<<1, 8>>>(out, i, w);
  if (i % 16 == 3) BIG<<<1, 64, BIG_WORDS * sizeof(unsigned)>>>(out, i, w);
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
    if (w % 5u != 1u)
      for (unsigned t = 0; t < 8; ++t) expected[(i * 17 + t) % N_OUT] += w * 3u + t;
    if (i % 16 == 3) {
      unsigned sum = 0;
      for (unsigned s = 0; s < BIG_WORDS; ++s) sum += w + s;
      expected[(i * 7) % N_OUT] += sum;
    }
  }
  cudaError_t err = cudaFuncSetAttribute((const void*)BIG, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         BIG_WORDS * (int)sizeof(unsigned));
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  unsigned* out; int* d;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&d, sizeof(int) * n);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(d, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  PARENT<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, d, n);
  err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL kernel_name_macro: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS kernel_name_macro\n");
  return 0;
}
