// Shape "exclusive-launches" (a fifth session of 2026-11-29): a launch and another launch that no
// thread runs both of, where the other one goes out at once (in place, in a loop of per-thread trip
// count): the two branches of an if/else, two cases of a switch with a break between them, and a
// launch whose thread returns right after it. klap made the first in place, or left it as written,
// because "a later launch of the same thread would go out before it" (public CDP code: a launch in
// the if branch, launches left as written in the else branch); it now stays deferred to the end of
// its region. Every thread's children must still run once each, and the kernel must not hang.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64

__global__ void add(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 31 + threadIdx.x + blockIdx.x * 7) % N_OUT], w + threadIdx.x);
}

__global__ void twice(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 17 + threadIdx.x) % N_OUT], w * 2u + threadIdx.x);
}

__host__ __device__ unsigned weight(int d, int i) { return (unsigned)d * 5u + (unsigned)i; }

__global__ void parent(unsigned* out, const int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned w = weight(data[i], i);
  if (w % 3u == 0u) {
    add<<<1 + w % 2u, 1 + w % 32u>>>(out, i, w);
  } else {
    for (unsigned r = 0; r < w % 3u; ++r) twice<<<1, 8>>>(out, i + (int)r, w);
  }
  switch (i % 4) {
    case 0: add<<<1, 16>>>(out, i + 200, w); break;
    case 1: for (unsigned r = 0; r < 1 + w % 2u; ++r) twice<<<1, 4>>>(out, i + 300 + (int)r, w); break;
    default: break;
  }
  if (w % 5u == 1u) { add<<<2, 8>>>(out, i + 400, w); return; }
  for (unsigned r = 0; r < w % 4u; ++r) twice<<<1, 2>>>(out, i + 500 + (int)r, w >> 1);
}

static void add_cpu(std::vector<unsigned>& e, unsigned g, unsigned b, int i, unsigned w) {
  for (unsigned x = 0; x < g; ++x)
    for (unsigned t = 0; t < b; ++t) e[(i * 31 + t + x * 7) % N_OUT] += w + t;
}

static void twice_cpu(std::vector<unsigned>& e, unsigned b, int i, unsigned w) {
  for (unsigned t = 0; t < b; ++t) e[(i * 17 + t) % N_OUT] += w * 2u + t;
}

int main() {
  const int n = 3 * BLOCK + 41;  // the fourth block has 41 live threads
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = (i * 2654435761u) >> 20;
  std::vector<unsigned> expected(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    unsigned w = weight(data[i], i);
    if (w % 3u == 0u) add_cpu(expected, 1 + w % 2u, 1 + w % 32u, i, w);
    else for (unsigned r = 0; r < w % 3u; ++r) twice_cpu(expected, 8, i + (int)r, w);
    if (i % 4 == 0) add_cpu(expected, 1, 16, i + 200, w);
    if (i % 4 == 1) for (unsigned r = 0; r < 1 + w % 2u; ++r) twice_cpu(expected, 4, i + 300 + (int)r, w);
    if (w % 5u == 1u) { add_cpu(expected, 2, 8, i + 400, w); continue; }
    for (unsigned r = 0; r < w % 4u; ++r) twice_cpu(expected, 2, i + 500 + (int)r, w >> 1);
  }
  unsigned* out; int* d;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&d, sizeof(int) * n);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemcpy(d, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  parent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, d, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL exclusive_launches: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS exclusive_launches\n");
  return 0;
}
