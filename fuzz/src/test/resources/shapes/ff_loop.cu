// Shape "ff-loop" (issue 10, bug class 4): a launch into cudaStreamFireAndForget in a loop whose
// counter k is the same for every thread of the grid but different in each round; k selects
// which slots the child writes, so a variant that passes one round's k to every round's children
// writes the wrong slots.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define ROUNDS 4

__global__ void child(unsigned* out, int i, int k) {
  atomicAdd(&out[(k * 256 + i * 4 + threadIdx.x) % N_OUT], (unsigned)(k * 100 + i + 1));
}

__global__ void parent(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < ROUNDS; ++k) {
    child<<<1, 4, 0, cudaStreamFireAndForget>>>(out, i, k);
  }
}

int main() {
  const int n = 60;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < ROUNDS; ++k)
      for (int t = 0; t < 4; ++t) expected[(k * 256 + i * 4 + t) % N_OUT] += (unsigned)(k * 100 + i + 1);
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<2, 32>>>(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL ff_loop: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS ff_loop\n");
  return 0;
}
