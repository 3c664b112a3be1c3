// Shape "launch-macro" (found by reading, 2026-11-27): launches written in a macro, in its body
// (GO) and in its argument (CHECK((k<<<...>>>(...), cudaGetLastError()))), beside launches written
// out, on the device and on the host. Before, klap refused the whole file; now it leaves each
// macro's launch as written, aggregates the others, and keeps each thread's order: consume reads
// and rewrites what produce (and the previous consume) wrote, so a reordering changes the result.
// The child's dynamic shared memory limit is raised through a CHECK macro on the host, which klap
// must also apply to the child's aggregated variants (they would fail to launch with 50 KiB).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define ROUNDS 3
#define SMEM (50 * 1024)
#define GO(kern, g, b, ...) kern<<<g, b>>>(__VA_ARGS__)
#define CHECK(x) do { if ((x) != cudaSuccess) atomicAdd(&out[0], 1u << 20); } while (0)
#define HOST_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(e_)); return 1; } } while (0)
#define HOST_GO(kern, g, b, ...) kern<<<g, b>>>(__VA_ARGS__)

__host__ __device__ inline unsigned mix(unsigned a, unsigned b) {
  unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13;
  return h;
}

__global__ void produce(unsigned* a, int i) {
  a[i * 32 + threadIdx.x] = mix((unsigned)i, threadIdx.x);
}

__global__ void consume(unsigned* out, unsigned* a, int i, int k) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = a[i * 32 + threadIdx.x];
  s[SMEM / 4 - 1 - threadIdx.x] = (unsigned)k;
  __syncthreads();
  unsigned x = s[threadIdx.x];
  a[i * 32 + threadIdx.x] = mix(x, s[SMEM / 4 - 1 - threadIdx.x] + 1u);
  atomicAdd(&out[(i * 32 + threadIdx.x) % N_OUT], mix(x, (unsigned)k));
}

// produce through the macro's body, consume written out
__global__ void parent_body(unsigned* out, unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || i % 3 == 1) return;
  GO(produce, 1, 32, a, i);
  for (int k = 0; k < ROUNDS; ++k) consume<<<1, 32, SMEM>>>(out, a, i, k);
}

// produce written out, consume in the macro's argument
__global__ void parent_argument(unsigned* out, unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || i % 3 == 1) return;
  produce<<<1, 32>>>(a, i);
  for (int k = 0; k < ROUNDS; ++k) {
    if (k == 1) CHECK((consume<<<1, 32, SMEM>>>(out, a, i, k), cudaGetLastError()));
    else consume<<<1, 32, SMEM>>>(out, a, i, k);
  }
}

int main() {
  const int n = 50;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), a(n * 32, 0u);
  for (int rep = 0; rep < 2; ++rep)
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
  HOST_CHECK(cudaFuncSetAttribute(consume, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  HOST_CHECK(cudaMalloc(&out, sizeof(unsigned) * N_OUT));
  HOST_CHECK(cudaMalloc(&da, sizeof(unsigned) * n * 32));
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(da, 0, sizeof(unsigned) * n * 32);
  HOST_GO(parent_body, 2, 32, out, da, n);
  HOST_CHECK(cudaGetLastError());
  HOST_CHECK(cudaDeviceSynchronize());
  parent_argument<<<2, 32>>>(out, da, n);
  HOST_CHECK(cudaGetLastError());
  HOST_CHECK(cudaDeviceSynchronize());
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL launch-macro: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS launch-macro\n");
  return 0;
}
