// Shape "cond-assign" (found by review, 2026-11-25): per-thread values assigned inside ?:, && and
// ||. Each thread binary-searches a row offset table: `off[m] <= i ? (lo = m + 1) : (hi = m)`.
// Before, klap took those assignments for unconditional, so lo, a and b looked uniform (the same
// in every thread of a warp or block) and one thread's values were passed to every child of the
// group; a skip flag set by `?:` and returned on was taken for uniform too.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define ROWS 64
#define BLOCK 64

__global__ void child(unsigned* out, int row, int a, int b) {
  unsigned t = threadIdx.x;
  atomicAdd(&out[((unsigned)row * 37u + (unsigned)a * 5u + t) % N_OUT], (unsigned)(row + 3 * a + 7 * b + 1));
}

// the parent's per-thread work, for the device and the CPU reference
__host__ __device__ bool prepare(const int* off, int i, int& lo, int& a, int& b) {
  lo = 0;
  int hi = ROWS;
  for (int it = 0; it < 7 && lo < hi; ++it) { int m = (lo + hi) / 2; off[m] <= i ? (lo = m + 1) : (hi = m); }
  a = 1; b = 2;
  (i % 3 == 0) && (a = i);
  (i % 4 == 1) || (b = i * 2);
  int skip = 0;
  i % 7 == 5 ? (skip = 1) : 0;
  return skip == 0;
}

__global__ void parent(unsigned* out, const int* off, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int lo = 0, hi = ROWS;
  for (int it = 0; it < 7 && lo < hi; ++it) { int m = (lo + hi) / 2; off[m] <= i ? (lo = m + 1) : (hi = m); }
  int a = 1, b = 2;
  (i % 3 == 0) && (a = i);
  (i % 4 == 1) || (b = i * 2);
  int skip = 0;
  i % 7 == 5 ? (skip = 1) : 0;
  if (skip) return;
  child<<<1, 4>>>(out, lo, a, b);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<int> off(ROWS);
  for (int r = 0; r < ROWS; ++r) off[r] = r * 3 + (r % 5);
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    int lo, a, b;
    if (!prepare(off.data(), i, lo, a, b)) continue;
    for (unsigned t = 0; t < 4; ++t) expected[((unsigned)lo * 37u + (unsigned)a * 5u + t) % N_OUT] += (unsigned)(lo + 3 * a + 7 * b + 1);
  }
  unsigned* out;
  int* doff;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMalloc(&doff, sizeof(int) * ROWS);
  cudaMemcpy(doff, off.data(), sizeof(int) * ROWS, cudaMemcpyHostToDevice);
  parent<<<blocks, BLOCK>>>(out, doff, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL cond_assign: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS cond_assign\n");
  return 0;
}
