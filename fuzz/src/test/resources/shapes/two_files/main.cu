// Shape "two-files" (issue 10, bug class 5), the host file klap never sees: it declares the kernel
// of kernels.cu through the shared header, takes its address and launches it with <<<>>>.
// nvcc -std=c++17 -rdc=true -arch=sm_90 kernels.cu main.cu
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "two_files.cuh"

int main() {
  const int n = 70;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; i += 2)
    for (unsigned t = 0; t < 8; ++t) expected[(i * 8 + t) % N_OUT] += (unsigned)(i + 1) * (t + 1);
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaError_t err = cudaFuncSetCacheConfig(parent, cudaFuncCachePreferL1);
  if (err != cudaSuccess) { std::printf("FAIL cuda cudaFuncSetCacheConfig: %s\n", cudaGetErrorString(err)); return 1; }
  parent<<<3, 32>>>(out, n);
  err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL two_files: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS two_files\n");
  return 0;
}
