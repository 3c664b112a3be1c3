// Shape "survivor-loop" (issue 10, after the GPU run of 2026-11-27 on an H200, where
// testcases/src/loops' loopUniform hung at warp and block granularity): launches under a per-thread
// `if` or `switch` in a loop of rounds with a uniform trip count, after divergent early returns of
// the kernel body (the plain guard, and one whose branch writes before it returns). klap aggregates
// them among the lanes of each warp that passed the returns (klap_live, kept by klap::guard_exit),
// in every round; a return after the loop keeps the mask too. Each child adds to slots of its own
// thread and round, so a launch lost, doubled or given another thread's round shows.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64
#define ROUNDS 5

__global__ void child(unsigned* out, int slot, int r) {
  atomicAdd(&out[(slot * 37 + r * 11 + (int)(blockIdx.x * blockDim.x + threadIdx.x)) % N_OUT], 1u + (unsigned)r * 1000u);
}

__global__ void other(unsigned* out, int slot, int r) {
  atomicAdd(&out[(slot * 53 + r * 29 + (int)threadIdx.x) % N_OUT], 7u + (unsigned)slot);
}

__global__ void parent(unsigned* out, const unsigned* flags, unsigned* tail, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned f = flags[i];
  if (f % 7u == 3u) { tail[i] = 100u; return; }
  for (int r = 0; r < rounds; ++r) {
    if ((f >> r) & 1u) child<<<1 + r % 2, 8>>>(out, i, r);
    switch ((f >> (r + 8)) & 3u) {
      case 1u: other<<<1, 1 + (i + r) % 32, 0, cudaStreamFireAndForget>>>(out, i, r); break;
      default: break;
    }
  }
  if (f % 5u == 1u) return;
  tail[i] = 1u + (f & 3u);
}

int main() {
  const int n = 3 * BLOCK + 17, blocks = 4;
  std::vector<unsigned> flags(blocks * BLOCK), expected(N_OUT, 0u), got(N_OUT, 0u), tailWant(blocks * BLOCK, 0u),
      tailGot(blocks * BLOCK, 0u);
  unsigned x = 2463534242u;
  for (auto& v : flags) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; v = x; }
  for (int i = 0; i < n; ++i) {
    const unsigned f = flags[i];
    if (f % 7u == 3u) { tailWant[i] = 100u; continue; }
    for (int r = 0; r < ROUNDS; ++r) {
      if ((f >> r) & 1u)
        for (int t = 0; t < 8 * (1 + r % 2); ++t) expected[(i * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
      if (((f >> (r + 8)) & 3u) == 1u)
        for (int t = 0; t < 1 + (i + r) % 32; ++t) expected[(i * 53 + r * 29 + t) % N_OUT] += 7u + (unsigned)i;
    }
    if (f % 5u != 1u) tailWant[i] = 1u + (f & 3u);
  }
  unsigned *out, *dflags, *tail;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&dflags, sizeof(unsigned) * blocks * BLOCK);
  cudaMalloc(&tail, sizeof(unsigned) * blocks * BLOCK);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(tail, 0, sizeof(unsigned) * blocks * BLOCK);
  cudaMemcpy(dflags, flags.data(), sizeof(unsigned) * blocks * BLOCK, cudaMemcpyHostToDevice);
  parent<<<blocks, BLOCK>>>(out, dflags, tail, n, ROUNDS);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(tailGot.data(), tail, sizeof(unsigned) * blocks * BLOCK, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1, badTail = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  for (int i = 0; i < blocks * BLOCK; ++i) { h = (h ^ tailGot[i]) * 16777619u; if (badTail < 0 && tailGot[i] != tailWant[i]) badTail = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL survivor_loop: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  if (badTail >= 0) { std::printf("FAIL survivor_loop: tail %d is %u, expected %u\n", badTail, tailGot[badTail], tailWant[badTail]); return 1; }
  std::printf("PASS survivor_loop\n");
  return 0;
}
