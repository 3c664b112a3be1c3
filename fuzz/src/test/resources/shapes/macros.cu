// Shape "macros" (found by reading, 2026-11-23): what a CUDA program writes through macros, which
// klap must never edit. The child reads its index through TID; the parent has a guard macro, a
// return macro after its first launch, and a device cudaMalloc/cudaFree through macros. Before,
// TID stopped klap (overlapping edits), CHECK lost its condition ("{} else {"), and FREE became
// the no-op "klap::group_free;".
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64
#define TID (blockIdx.x * blockDim.x + threadIdx.x)
#define CHECK(c) if (!(c)) return;
#define BAIL return
#define ALLOC(p, n) cudaMalloc((void**)&p, n)
#define FREE(p) cudaFree(p)

__global__ void child(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 37 + TID) % N_OUT], w + TID);
}

__global__ void parent(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  CHECK(i < n)
  child<<<1 + i % 2, 8>>>(out, i, 1u);
  int* b;
  if (ALLOC(b, 4 * sizeof(int)) == cudaSuccess) {
    b[0] = i;
    atomicAdd(&out[(unsigned)b[0] % N_OUT], 5u);
    FREE(b);
  }
  if (i % 4 == 1) BAIL;
  child<<<1, 4>>>(out, i + 1000, 3u);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    for (unsigned t = 0; t < (unsigned)(8 * (1 + i % 2)); ++t) expected[(i * 37 + t) % N_OUT] += 1u + t;
    expected[(unsigned)i % N_OUT] += 5u;
    if (i % 4 != 1)
      for (unsigned t = 0; t < 4; ++t) expected[((i + 1000) * 37 + t) % N_OUT] += 3u + t;
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<blocks, BLOCK>>>(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL macros: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS macros\n");
  return 0;
}
