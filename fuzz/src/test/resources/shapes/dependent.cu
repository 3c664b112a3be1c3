// Shape "dependent" (issue 10, bug class 3): one thread launches produce<<<1, 32>>> and then, in a
// loop of constant trip count, consume<<<1, 32>>> into the NULL stream; each consume reads and
// rewrites what produce (and the previous consume) wrote, so running the launches of one thread
// out of order changes the result.
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

__global__ void produce(unsigned* a, int i) {
  a[i * 32 + threadIdx.x] = mix((unsigned)i, threadIdx.x);
}

__global__ void consume(unsigned* out, unsigned* a, int i, int k) {
  unsigned x = a[i * 32 + threadIdx.x];
  a[i * 32 + threadIdx.x] = mix(x, (unsigned)k + 1u);
  atomicAdd(&out[(i * 32 + threadIdx.x) % N_OUT], mix(x, (unsigned)k));
}

__global__ void parent(unsigned* out, unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || i % 3 == 1) return;
  produce<<<1, 32>>>(a, i);
  for (int k = 0; k < ROUNDS; ++k) consume<<<1, 32>>>(out, a, i, k);
}

int main() {
  const int n = 50;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), a(n * 32, 0u);
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 1) continue;
    for (unsigned t = 0; t < 32; ++t) a[i * 32 + t] = mix((unsigned)i, t);
    for (int k = 0; k < ROUNDS; ++k)
      for (unsigned t = 0; t < 32; ++t) {
        unsigned x = a[i * 32 + t];
        a[i * 32 + t] = mix(x, (unsigned)k + 1u);
        expected[(i * 32 + t) % N_OUT] += mix(x, (unsigned)k);
      }
  }
  unsigned *out, *da;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&da, sizeof(unsigned) * n * 32);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(da, 0, sizeof(unsigned) * n * 32);
  parent<<<2, 32>>>(out, da, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL dependent: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS dependent\n");
  return 0;
}
