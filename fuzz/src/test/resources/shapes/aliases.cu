// Shape "aliases" (found by adversarial snippets, 2026-11-24): a per-thread value reaches a local
// only through an alias that is not a plain assignment, and a launch passes the local. Before,
// klap took x, y and s for uniform (the same in every thread of a warp or block) and passed one
// thread's value to every child of the group: (i % 2 ? x : y) = i chooses the target per thread;
// Ref r(z) keeps a reference to z; fill(s.c, i) stores through the decayed member array; the
// reference range-for and *s.c store into s.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

struct Vals { unsigned c[4]; };
struct Ref {
  unsigned& v;
  __host__ __device__ Ref(unsigned& x) : v(x) {}
  __host__ __device__ void set(unsigned a) { v = a; }
};
__host__ __device__ void fill(unsigned* p, unsigned v) { p[1] = v; }

__global__ void child(unsigned* out, unsigned tag, unsigned a, unsigned b, Vals s) {
  unsigned t = threadIdx.x;
  atomicAdd(&out[(tag * 31u + t) % N_OUT], a * 3u + b * 5u + s.c[t % 4u]);
}

// the parent's per-thread work, for the device and the CPU reference
__host__ __device__ void prepare(int i, unsigned& x, unsigned& y, unsigned& z, Vals& s) {
  (i % 2 ? x : y) = (unsigned)i;
  { Ref r(z); r.set((unsigned)i * 5u); }
  fill(s.c, (unsigned)i + 100u);
  for (unsigned& e : s.c) e += (unsigned)i & 3u;
  *s.c = (unsigned)i * 7u;
}

__global__ void parent(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = 1u, y = 2u, z = 3u;
  Vals s;
  s.c[0] = s.c[1] = s.c[2] = s.c[3] = 9u;
  (i % 2 ? x : y) = (unsigned)i;
  { Ref r(z); r.set((unsigned)i * 5u); }
  fill(s.c, (unsigned)i + 100u);
  for (unsigned& e : s.c) e += (unsigned)i & 3u;
  *s.c = (unsigned)i * 7u;
  child<<<1, 4>>>(out, (unsigned)i, x + y, z, s);
}

int main() {
  const int n = 3 * BLOCK + 13, blocks = 4;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    unsigned x = 1u, y = 2u, z = 3u;
    Vals s;
    s.c[0] = s.c[1] = s.c[2] = s.c[3] = 9u;
    prepare(i, x, y, z, s);
    for (unsigned t = 0; t < 4; ++t) expected[((unsigned)i * 31u + t) % N_OUT] += (x + y) * 3u + z * 5u + s.c[t];
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
  if (bad >= 0) { std::printf("FAIL aliases: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS aliases\n");
  return 0;
}
