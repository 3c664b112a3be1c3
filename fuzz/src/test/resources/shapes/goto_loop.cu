// Shape "goto-loop" (found by review, 2026-11-25): a loop written with a backward goto, whose trip
// count differs between threads, launching into the NULL stream in every round. Each child doubles
// the thread's value and adds the round: the result depends on every round's argument and on the
// rounds' order. Before, klap saw no loop: at kernel granularity every round went into one grid
// with one r (one thread's, merged rounds racing), in place the lanes of different rounds shared one r.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define BLOCK 64

__global__ void step(unsigned* v, int r) {
  if (threadIdx.x == 0) *v = *v * 2u + (unsigned)r + 1u;
}

__global__ void parent(unsigned* v, const int* cnt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int r = 0;
next:
  step<<<1, 32>>>(v + i, r);
  if (++r < cnt[i]) goto next;
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<int> cnt(n);
  std::vector<unsigned> expected(n, 0u), got(n, 0u);
  for (int i = 0; i < n; ++i) {
    cnt[i] = 1 + (i * 7) % 5;
    for (int r = 0; r < cnt[i]; ++r) expected[i] = expected[i] * 2u + (unsigned)r + 1u;
  }
  unsigned* v;
  int* dcnt;
  cudaMalloc(&v, sizeof(unsigned) * n);
  cudaMemset(v, 0, sizeof(unsigned) * n);
  cudaMalloc(&dcnt, sizeof(int) * n);
  cudaMemcpy(dcnt, cnt.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  parent<<<blocks, BLOCK>>>(v, dcnt, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), v, sizeof(unsigned) * n, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < n; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL goto_loop: thread %d has %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS goto_loop\n");
  return 0;
}
