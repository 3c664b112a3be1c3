// Shape "in-place-loop" (issue 10, found on the GPU with random seeds 122 and 1024): a launch that
// klap aggregates in place among the lanes that arrive together (the loop lies between the early
// return's region and the launch), in a loop of rounds whose counter is an argument. Before each
// launch the lanes spin for a thread-dependent number of steps, so lanes of different rounds may
// reach the launch together; each child must still get its own thread's round.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

__global__ void child(unsigned* out, int slot, int r) {
  atomicAdd(&out[(slot * 37 + r * 11 + threadIdx.x) % N_OUT], 1u + (unsigned)r * 1000u);
}

__global__ void parent(unsigned* out, unsigned* spin, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned w = (unsigned)i;
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 1 + ((i ^ r) * 7) % 29; ++j) w = w * 1664525u + 1013904223u;
    if ((i + r) % 3 != 0) child<<<1, 8>>>(out, i, r);
  }
  spin[i] = w;
}

int main() {
  const int n = 3 * BLOCK + 17, blocks = 4;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 4; ++r)
      if ((i + r) % 3 != 0)
        for (int t = 0; t < 8; ++t) expected[(i * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
  unsigned *out, *spin;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&spin, sizeof(unsigned) * blocks * BLOCK);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<blocks, BLOCK>>>(out, spin, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL in_place_loop: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS in_place_loop\n");
  return 0;
}
