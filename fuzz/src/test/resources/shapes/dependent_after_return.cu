// Shape "dependent-after-return" (issue 10, 2026-11-28): dependent launches of one thread after the
// kernel's thread-dependent `if (i >= n) return;`. Each thread runs produce<<<1, 32>>> on its own 32
// scratch words, then consume<<<1, 32>>> in a loop of constant trip count; each consume reads and
// rewrites what the launches before it wrote, so running one thread's launches out of order changes
// the result. The guard region would launch the producer at the end of the kernel, after the
// consumers' loop; klap defers it only to the end of its own statement, among the lanes of each warp
// that passed the return. Three positions of the producer: right after the return (top), in a case
// of a switch on a uniform value (uniform_switch), under a thread-dependent if with a second
// thread-dependent return after it and the consumers in a __device__ helper (divergent_if).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define ROUNDS 3

__host__ __device__ inline unsigned mix(unsigned a, unsigned b) {
  unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13;
  return h;
}

__global__ void produce(unsigned* a, int i, int salt) {
  a[i * 32 + threadIdx.x] = mix((unsigned)i, threadIdx.x + (unsigned)salt);
}

__global__ void consume(unsigned* out, unsigned* a, int i, int k) {
  unsigned x = a[i * 32 + threadIdx.x];
  a[i * 32 + threadIdx.x] = mix(x, (unsigned)k + 1u);
  atomicAdd(&out[(i * 32 + threadIdx.x) % N_OUT], mix(x, (unsigned)k));
}

__device__ void consume_all(unsigned* out, unsigned* a, int i) {
  for (int k = 0; k < ROUNDS; ++k) consume<<<1, 32>>>(out, a, i, k);
}

__global__ void top(unsigned* out, unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  produce<<<1, 32>>>(a, i, 1);
  for (int k = 0; k < ROUNDS; ++k) consume<<<1, 32>>>(out, a, i, k);
}

__global__ void uniform_switch(unsigned* out, unsigned* a, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (m % 3) {
  case 0:
    produce<<<1, 32>>>(a, i, 2);
    break;
  default:
    produce<<<1, 32>>>(a, i, 3);
    break;
  }
  for (int k = 0; k < ROUNDS; ++k) consume<<<1, 32>>>(out, a, i, k);
}

__global__ void divergent_if(unsigned* out, unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 3 != 1) produce<<<1, 32>>>(a, i, 4);
  if (i % 5 == 2) return;
  consume_all(out, a, i);
}

// the CPU's version of one kernel: which threads produce (salt, or -1: none) and which consume
static void expect(std::vector<unsigned>& out, std::vector<unsigned>& a, int n, int which, int m) {
  for (int i = 0; i < n; ++i) {
    int salt = which == 0 ? 1 : which == 1 ? (m % 3 == 0 ? 2 : 3) : (i % 3 != 1 ? 4 : -1);
    if (salt >= 0)
      for (unsigned t = 0; t < 32; ++t) a[i * 32 + t] = mix((unsigned)i, t + (unsigned)salt);
    if (which == 2 && i % 5 == 2) continue;
    for (int k = 0; k < ROUNDS; ++k)
      for (unsigned t = 0; t < 32; ++t) {
        unsigned x = a[i * 32 + t];
        a[i * 32 + t] = mix(x, (unsigned)k + 1u);
        out[(i * 32 + t) % N_OUT] += mix(x, (unsigned)k);
      }
  }
}

int main() {
  const int n = 50, m = 4;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), a(n * 32, 0u);
  for (int which = 0; which < 3; ++which) expect(expected, a, n, which, m);
  unsigned *out, *da;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&da, sizeof(unsigned) * n * 32);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(da, 0, sizeof(unsigned) * n * 32);
  top<<<2, 32>>>(out, da, n);
  uniform_switch<<<2, 48>>>(out, da, n, m);
  divergent_if<<<1, 64>>>(out, da, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL dependent-after-return: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS dependent-after-return\n");
  return 0;
}
