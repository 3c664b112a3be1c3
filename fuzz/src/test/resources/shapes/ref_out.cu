// Shape "ref-out" (issue 10, bug class 1): a __device__ helper writes thread-dependent values
// through non-const reference and pointer parameters; the outputs feed a launch's configuration,
// its arguments and the bound of the loop around it.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024

__device__ void row_range(const int* ptr, int r, int& b, int& e) {
  b = ptr[r];
  e = ptr[r + 1];
}

__device__ void row_shape(const int* ptr, int r, int* blocks, int* threads) {
  *blocks = 1 + (ptr[r + 1] - ptr[r]) % 2;
  *threads = 1 + ptr[r] % 32;
}

__global__ void child(unsigned* out, int row, int j, int width) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[(row * 97 + j * 13 + t) % N_OUT], (unsigned)(row * 1000 + j * 10 + width) + t);
}

__global__ void parent(unsigned* out, const int* ptr, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  int b = 0, e = 0;
  row_range(ptr, r, b, e);
  int g, t;
  row_shape(ptr, r, &g, &t);
  for (int j = b; j < e; ++j) {
    child<<<g, t>>>(out, r, j, e - b);
  }
}

int main() {
  const int n = 40;
  std::vector<int> ptr(n + 1);
  ptr[0] = 0;
  for (int r = 0; r < n; ++r) ptr[r + 1] = ptr[r] + (r * 7 + 3) % 4;  // 0..3 entries per row
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int r = 0; r < n; ++r) {
    int b = ptr[r], e = ptr[r + 1];
    int g = 1 + (e - b) % 2, t = 1 + b % 32;
    for (int j = b; j < e; ++j)
      for (int x = 0; x < g * t; ++x) expected[(r * 97 + j * 13 + x) % N_OUT] += (unsigned)(r * 1000 + j * 10 + (e - b)) + x;
  }
  unsigned* out; int* dptr;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&dptr, sizeof(int) * (n + 1));
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(dptr, ptr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice);
  parent<<<2, 32>>>(out, dptr, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL ref_out: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS ref_out\n");
  return 0;
}
