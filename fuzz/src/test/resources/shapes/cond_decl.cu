// Shape "cond-decl" (found by review, 2026-11-27): per-thread values declared in a condition
// (`if (int v = e)`, `while (int v = e)`, `switch (int v = e)`) or in a C++17 init-statement
// (`if (int v = e; v < m)`, `switch (v = e; v % 4)`). klap's model had no declaration for such a
// variable, so it counted as uniform: one thread's value was passed to every child of its warp,
// block or grid.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

__global__ void child(unsigned* out, int v, int site) {
  unsigned t = threadIdx.x;
  atomicAdd(&out[((unsigned)v * 37u + (unsigned)site * 1009u + t) % N_OUT], (unsigned)(v * 3 + site + 1));
}

__device__ int next_slot;

__global__ void parent(unsigned* out, const int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (int v = data[i] % 5) child<<<1, 4>>>(out, v + 10 * i, 0);
  if (int v = data[i] % 7 + i; v % 2 == 0) child<<<1, 4>>>(out, v, 1);
  int w = 0;
  switch (w = data[i] % 4; w) {
    case 1: child<<<1, 4>>>(out, w + 4 * i, 2); break;
    case 3: child<<<1, 4>>>(out, w * i, 3); break;
    default: break;
  }
  int r = 0;
  while (int v = r < 1 + i % 3 ? i % 11 + 1 : 0) { child<<<1, 4>>>(out, v * 100 + r, 4); ++r; }
  if (int slot = atomicAdd(&next_slot, 1); slot < n) child<<<1, 4>>>(out, slot, 5);
}

static void expect(std::vector<unsigned>& e, int v, int site) {
  for (unsigned t = 0; t < 4; ++t) e[((unsigned)v * 37u + (unsigned)site * 1009u + t) % N_OUT] += (unsigned)(v * 3 + site + 1);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = (i * 7919) % 23;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    if (int v = data[i] % 5) expect(expected, v + 10 * i, 0);
    if (int v = data[i] % 7 + i; v % 2 == 0) expect(expected, v, 1);
    int w = data[i] % 4;
    if (w == 1) expect(expected, w + 4 * i, 2);
    if (w == 3) expect(expected, w * i, 3);
    for (int r = 0; r < 1 + i % 3; ++r) expect(expected, (i % 11 + 1) * 100 + r, 4);
    expect(expected, i, 5);  // the slots 0..n-1, one per thread, in some order
  }
  unsigned* out;
  int* dd;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMalloc(&dd, sizeof(int) * n);
  cudaMemcpy(dd, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  parent<<<blocks, BLOCK>>>(out, dd, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL cond_decl: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS cond_decl\n");
  return 0;
}
