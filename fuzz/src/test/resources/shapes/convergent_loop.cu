// Shape "convergent-loop" (issue 10, after the GPU run of 2026-11-27 on an H200): launches under a
// per-thread `if` in loops whose trip count differs between threads, whose condition and step have
// effects: a `for` at the top of the kernel (the warp's or block's threads reach it together) and a
// `while` after a divergent early return (the lanes that passed it). klap runs such a loop until no
// thread of the group has an iteration left, each thread's condition, body and step only while its
// own condition held; the per-thread step counters show a condition evaluated once too often, and
// the children's slots a launch lost, doubled or given another thread's round.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

__host__ __device__ inline unsigned trips(int i) { return 1u + ((unsigned)i * 7u + 3u) % 5u; }

__global__ void child(unsigned* out, int slot, int r) {
  atomicAdd(&out[(slot * 37 + r * 11 + (int)(blockIdx.x * blockDim.x + threadIdx.x)) % N_OUT], 1u + (unsigned)r * 1000u);
}

__global__ void top(unsigned* out, unsigned* steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0u;
  for (int r = 0; ++s <= trips(i); r += 1 + (i & 1)) {
    if ((i + r) % 3 != 0) child<<<1 + r % 2, 8>>>(out, i, r);
  }
  steps[i] = s;
}

__global__ void guarded(unsigned* out, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned s = 0u;
  int r = 0;
  while (++s <= trips(i + 5)) {
    switch ((i + r) % 4) { case 1: steps[i] += 100u; break; default: break; }
    if ((i + r) % 2 == 0) child<<<1, 4 + r % 3>>>(out, i + 1000, r);
    r += 2;
  }
  steps[i] += s;
}

int main() {
  const int n = 3 * BLOCK + 17, blocks = 4, total = blocks * BLOCK;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), stepsWant(2 * total, 0u), stepsGot(2 * total, 0u);
  for (int i = 0; i < total; ++i) {
    unsigned s = 0u;
    for (int r = 0; ++s <= trips(i); r += 1 + (i & 1))
      if ((i + r) % 3 != 0)
        for (int t = 0; t < 8 * (1 + r % 2); ++t) expected[(i * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
    stepsWant[i] = s;
  }
  for (int i = 0; i < n; ++i) {
    unsigned s = 0u, w = 0u;
    int r = 0;
    while (++s <= trips(i + 5)) {
      if ((i + r) % 4 == 1) w += 100u;
      if ((i + r) % 2 == 0)
        for (int t = 0; t < 4 + r % 3; ++t) expected[((i + 1000) * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
      r += 2;
    }
    stepsWant[total + i] = w + s;
  }
  unsigned *out, *steps;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&steps, sizeof(unsigned) * 2 * total);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(steps, 0, sizeof(unsigned) * 2 * total);
  top<<<blocks, BLOCK>>>(out, steps);
  guarded<<<blocks, BLOCK>>>(out, steps + total, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(stepsGot.data(), steps, sizeof(unsigned) * 2 * total, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1, badSteps = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  for (int i = 0; i < 2 * total; ++i) { h = (h ^ stepsGot[i]) * 16777619u; if (badSteps < 0 && stepsGot[i] != stepsWant[i]) badSteps = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL convergent_loop: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  if (badSteps >= 0) { std::printf("FAIL convergent_loop: steps %d is %u, expected %u\n", badSteps, stepsGot[badSteps], stepsWant[badSteps]); return 1; }
  std::printf("PASS convergent_loop\n");
  return 0;
}
