// Shape "implicit-calls" (a seventh session of 2026-11-29): calls that C++ makes without a call
// expression. In the parent, child arguments that overloaded operators or a conversion function
// compute or write: a + b whose operator+ adds the thread's index, acc << v through a non-const
// member, v >> acc through operator>>(int, Acc&), int v = lane through an index-reading operator
// int(). klap took them as uniform because the operands look uniform, and passed one lane's value to
// every child (a scalar). Each non-member operator that reads the indices also got a "clone" with one
// parameter more, which nvcc rejects. In the children, the indices read through a constructor, a
// functor's operator() and a default member initializer: klap must leave such a child as written (it
// would read the aggregated grid's indices). Every child must see its own values.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64

struct Sum { int x; };
__device__ Sum operator+(Sum a, Sum b) { Sum s; s.x = a.x + b.x + (int)(threadIdx.x % 5u); return s; }

struct Acc {
  int s;
  __device__ Acc& operator<<(int v) { s = s * 3 + v; return *this; }
};
struct Tally { int s; };
__device__ void operator>>(int v, Tally& t) { t.s += 2 * v + 1; }
struct Lane { int base; __device__ operator int() const { return base + (int)(threadIdx.x % 3u); } };

struct Here { unsigned g; __device__ Here() : g(threadIdx.x + 7u * blockIdx.x) {} };
struct Where { __device__ unsigned operator()(unsigned m) const { return threadIdx.x + m * blockIdx.x; } };
struct Init { unsigned g = threadIdx.x + 7u * blockIdx.x; };

__global__ void put(unsigned* out, int i, int a) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], (unsigned)a * 3u + threadIdx.x);
}

__global__ void by_ctor(unsigned* out, int i, int a) {
  Here h;
  atomicAdd(&out[(i * 17 + h.g) % N_OUT], h.g + (unsigned)a);
}

__global__ void by_functor(unsigned* out, int i, int a) {
  Where w;
  unsigned g = w(7u);
  atomicAdd(&out[(i * 13 + g) % N_OUT], g * 2u + (unsigned)a);
}

__global__ void by_init(unsigned* out, int i, int a) {
  Init m;
  atomicAdd(&out[(i * 11 + m.g) % N_OUT], m.g * 5u + (unsigned)a);
}

__global__ void parent(unsigned* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Sum a, b; a.x = k; b.x = 3;
  Sum c = a + b;
  put<<<1, 8>>>(out, i, c.x);
  Acc acc; acc.s = k; acc << (i % 7);
  put<<<1, 4>>>(out, i + 100, acc.s);
  Tally t; t.s = 1; (i % 5) >> t;
  put<<<1, 2>>>(out, i + 200, t.s);
  Lane l; l.base = k; int v = l;
  put<<<1, 3>>>(out, i + 300, v);
  by_ctor<<<2, 1 + i % 16>>>(out, i, k);
  by_functor<<<2, 1 + i % 8>>>(out, i, k);
  by_init<<<2, 1 + i % 4>>>(out, i, k);
}

static void put_cpu(std::vector<unsigned>& e, unsigned b, int i, int a) {
  for (unsigned t = 0; t < b; ++t) e[(i * 31 + t) % N_OUT] += (unsigned)a * 3u + t;
}

int main() {
  const int n = 2 * BLOCK + 23, k = 4;
  std::vector<unsigned> expected(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    unsigned tx = (unsigned)(i % BLOCK);
    put_cpu(expected, 8, i, k + 3 + (int)(tx % 5u));
    put_cpu(expected, 4, i + 100, k * 3 + i % 7);
    put_cpu(expected, 2, i + 200, 1 + 2 * (i % 5) + 1);
    put_cpu(expected, 3, i + 300, k + (int)(tx % 3u));
    for (unsigned x = 0; x < 2; ++x) {
      for (unsigned t = 0; t < 1u + (unsigned)(i % 16); ++t) expected[(i * 17 + t + 7u * x) % N_OUT] += t + 7u * x + k;
      for (unsigned t = 0; t < 1u + (unsigned)(i % 8); ++t) expected[(i * 13 + t + 7u * x) % N_OUT] += (t + 7u * x) * 2u + k;
      for (unsigned t = 0; t < 1u + (unsigned)(i % 4); ++t) expected[(i * 11 + t + 7u * x) % N_OUT] += (t + 7u * x) * 5u + k;
    }
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, n, k);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL implicit_calls: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS implicit_calls\n");
  return 0;
}
