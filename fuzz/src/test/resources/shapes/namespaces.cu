// Shape "namespaces" (issue 10, 2026-11-30): kernels and an index-reading helper defined outside
// the namespace that declares them (C++ [namespace.memdef]/2), a parent in the namespace that the
// host launches through a using-declaration, and a parent at file scope that launches its child
// through one. klap wrote the prototypes of variants and clones with the qualified name (nvcc:
// "should have been declared inside"), and named its twin, chunk helper, record and variants
// unqualified where the using-declaration brought only the kernel's name (undefined identifiers);
// the helper has C linkage, which its clone must not have too.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024

namespace geo {
extern "C" __device__ unsigned gid();  // C linkage: klap's clone must not overload it with C linkage
__global__ void scatter(unsigned* out, int i, unsigned w);
__global__ void fan(unsigned* out, int n);
namespace inner { __global__ void tally(unsigned* out, int i); }
}

__device__ unsigned geo::gid() { return blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void geo::scatter(unsigned* out, int i, unsigned w) {
  unsigned g = gid();
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g * w + (unsigned)i);
}

__global__ void geo::inner::tally(unsigned* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 17u + g) % N_OUT], 3u * g + 1u);
}

// in the namespace: launched by main through the using-declaration below
__global__ void geo::fan(unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  if (t % 3 != 2) scatter<<<2, 32>>>(out, t, 5u);
}

using geo::fan;
using geo::inner::tally;

// at file scope: launches its children through the using-declaration and by qualified name
__global__ void sweep(unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  if (t % 2 == 0) tally<<<1, 32>>>(out, t);
  else geo::scatter<<<1, 64>>>(out, t + 500, 2u);
}

int main() {
  const int n = 60;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int t = 0; t < n; ++t) {
    if (t % 3 != 2)
      for (unsigned g = 0; g < 64; ++g) expected[((unsigned)t * 131u + g) % N_OUT] += g * 5u + (unsigned)t;
    if (t % 2 == 0)
      for (unsigned g = 0; g < 32; ++g) expected[((unsigned)t * 17u + g) % N_OUT] += 3u * g + 1u;
    else
      for (unsigned g = 0; g < 64; ++g) expected[((unsigned)(t + 500) * 131u + g) % N_OUT] += g * 2u + (unsigned)(t + 500);
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaFuncSetAttribute(fan, cudaFuncAttributePreferredSharedMemoryCarveout, 50);
  fan<<<2, 32>>>(out, n);
  sweep<<<2, 32>>>(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL namespaces: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS namespaces\n");
  return 0;
}
