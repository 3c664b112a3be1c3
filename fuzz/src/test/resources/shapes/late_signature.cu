// Shape "late-signature" (issue 10, 2026-11-30): definitions whose signatures name what is declared
// after the functions' prototypes. klap declares a child's argument record and variants, an
// index-reading helper's clone and a parent's twins where the function is first declared, and it
// copied the definition's signature there: "identifier word_t is undefined", "incomplete type Pair"
// (nvcc 13); bounds_child's __launch_bounds__ name a constant declared after its prototype
// ("identifier kBound is undefined"). Since the eighth session of that day klap declares them, where
// the signature needs it, before the first function that uses the function (or before its
// definition). So here only the launches of word_child and macro_child stay as written
// (klap-child-signature-late: 'early' launches them before the typedef and the macro), and the
// parent gets no kernel-granularity or chunk twin ('run' launches it before pword_t); pair_child,
// helper_child (its helper's clone goes after the typedef), bounds_child and early_child are
// aggregated. bounds_child has C linkage (an extern "C" prototype, its definition in an
// extern "C" { } block) and so has c_child (the same, its signature early): klap declared their variants
// outside the block and defined them inside it, with C linkage ("linkage specification is
// incompatible with previous", nvcc 13); now all it adds for them has C++ linkage.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024

struct Pair;
__global__ void word_child(unsigned* out, int i);
__global__ void pair_child(unsigned* out, int i, Pair pr);
__global__ void macro_child(unsigned* out, int i);
__global__ void helper_child(unsigned* out, int i);
extern "C" __global__ void bounds_child(unsigned* out, int i);
extern "C" __global__ void c_child(unsigned* out, int i);
__device__ unsigned lane_gid(const unsigned* base);
__global__ void parent(unsigned* out, int n);

__global__ void early(unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && t % 7 == 0) {
    word_child<<<1, 32>>>(out, t + 6000);
    macro_child<<<1, 32>>>(out, t + 7000);
    helper_child<<<1, 32>>>(out, t + 8000);
  }
}

static void run(unsigned* out, int n) {
  parent<<<(n + 31) / 32, 32>>>(out, n);
  early<<<(n + 31) / 32, 32>>>(out, n);
}

typedef unsigned word_t;
using pword_t = unsigned;
struct Pair { unsigned a; unsigned b; };
#define WORD unsigned
constexpr unsigned kBound = 64;
__global__ void early_child(word_t* out, int i);

__device__ unsigned lane_gid(const word_t* base) { return blockIdx.x * blockDim.x + threadIdx.x + (base ? 0u : 1u); }

__global__ void word_child(word_t* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g + 1u);
}

__global__ void pair_child(unsigned* out, int i, Pair pr) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g + pr.a * 3u + pr.b);
}

__global__ void macro_child(WORD* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g * 2u + 1u);
}

__global__ void helper_child(unsigned* out, int i) {
  unsigned g = lane_gid(out);
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g + 5u);
}

extern "C" {
__global__ void __launch_bounds__(kBound) bounds_child(unsigned* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g * 3u + 2u);
}

__global__ void c_child(unsigned* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g * 9u + 4u);
}
}

__global__ void early_child(word_t* out, int i) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[((unsigned)i * 131u + g) % N_OUT], g * 7u);
}

__global__ void parent(pword_t* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  word_child<<<2, 32>>>(out, t);
  if (t % 2 == 0) pair_child<<<1, 32>>>(out, t + 1000, Pair{(unsigned)t, 3u});
  if (t % 3 == 0) macro_child<<<2, 16>>>(out, t + 2000);
  if (t % 5 != 1) helper_child<<<2, 32>>>(out, t + 3000);
  early_child<<<1, 64>>>(out, t + 4000);
  if (t % 4 == 0) bounds_child<<<1, 64>>>(out, t + 5000);
  if (t % 3 == 1) c_child<<<1, 32>>>(out, t + 9000);
}

int main() {
  const int n = 100;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (unsigned t = 0; t < (unsigned)n; ++t) {
    for (unsigned g = 0; g < 64; ++g) expected[(t * 131u + g) % N_OUT] += g + 1u;
    if (t % 2 == 0)
      for (unsigned g = 0; g < 32; ++g) expected[((t + 1000u) * 131u + g) % N_OUT] += g + t * 3u + 3u;
    if (t % 3 == 0)
      for (unsigned g = 0; g < 32; ++g) expected[((t + 2000u) * 131u + g) % N_OUT] += g * 2u + 1u;
    if (t % 5 != 1)
      for (unsigned g = 0; g < 64; ++g) expected[((t + 3000u) * 131u + g) % N_OUT] += g + 5u;
    for (unsigned g = 0; g < 64; ++g) expected[((t + 4000u) * 131u + g) % N_OUT] += g * 7u;
    if (t % 4 == 0)
      for (unsigned g = 0; g < 64; ++g) expected[((t + 5000u) * 131u + g) % N_OUT] += g * 3u + 2u;
    if (t % 3 == 1)
      for (unsigned g = 0; g < 32; ++g) expected[((t + 9000u) * 131u + g) % N_OUT] += g * 9u + 4u;
    if (t % 7 == 0)
      for (unsigned g = 0; g < 32; ++g) {
        expected[((t + 6000u) * 131u + g) % N_OUT] += g + 1u;
        expected[((t + 7000u) * 131u + g) % N_OUT] += g * 2u + 1u;
        expected[((t + 8000u) * 131u + g) % N_OUT] += g + 5u;
      }
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  run(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL late_signature: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS late_signature\n");
  return 0;
}
