// Shape "exit-after-launch" (issue 10, found on the GPU with random seed 3000014): a launch that
// klap defers to the end of its region, then a jump out of that region before its end: `ret` a
// return uniform across the block after a guard, `cont` a continue in a loop whose body starts with
// a continue guard, `brk` a uniform break of a loop after a guard, `divg` a thread-dependent return
// between two launches, `nest` a thread-dependent return inside a divergent if. Every launch made
// before the jump must still run.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 2048
#define BLOCK 64

__global__ void child(unsigned* out, int slot, unsigned w) {
  atomicAdd(&out[(slot * 31 + threadIdx.x) % N_OUT], w + threadIdx.x);
}

__global__ void ret(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  child<<<1, 1 + i % 32>>>(out, i, 1u);
  if (blockIdx.x % 2 == 1) return;
  child<<<1, 8>>>(out, i + 500, 2u);
}

__global__ void cont(unsigned* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < 3; ++r) {
    if ((i + r) % 4 == 3) continue;
    child<<<1, 4>>>(out, i * 3 + r, 3u + r);
    if ((k + blockIdx.x + r) % 3 == 1) continue;
    child<<<1, 2>>>(out, i * 3 + r + 700, 4u);
  }
}

__global__ void brk(unsigned* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int r = 0; r < 3; ++r) {
    child<<<1, 4>>>(out, i * 3 + r + 1200, 5u + r);
    if ((k + blockIdx.x + r) % 3 == 1) break;
  }
}

__global__ void divg(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  child<<<1, 2 + i % 5>>>(out, i + 1000, 7u);
  if (i % 5 == 2) return;
  child<<<1, 3>>>(out, i + 1500, 9u);
}

__global__ void nest(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 3 == 0) {
    child<<<1, 5>>>(out, i + 1800, 11u);
    if (i % 2 == 1) return;
    child<<<1, 6>>>(out, i + 1900, 13u);
  }
}

static void child_cpu(std::vector<unsigned>& out, int threads, int slot, unsigned w) {
  for (int t = 0; t < threads; ++t) out[(slot * 31 + t) % N_OUT] += w + t;
}

int main() {
  const int n = 3 * BLOCK + 21, k = 1, blocks = 4;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int i = 0; i < blocks * BLOCK; ++i) {
    int b = i / BLOCK;
    if (i < n) {
      child_cpu(expected, 1 + i % 32, i, 1u);
      if (b % 2 != 1) child_cpu(expected, 8, i + 500, 2u);
    }
    for (int r = 0; r < 3; ++r) {
      if ((i + r) % 4 == 3) continue;
      child_cpu(expected, 4, i * 3 + r, 3u + r);
      if ((k + b + r) % 3 == 1) continue;
      child_cpu(expected, 2, i * 3 + r + 700, 4u);
    }
    for (int r = 0; r < 3 && i < n; ++r) {
      child_cpu(expected, 4, i * 3 + r + 1200, 5u + r);
      if ((k + b + r) % 3 == 1) break;
    }
    if (i < n) {
      child_cpu(expected, 2 + i % 5, i + 1000, 7u);
      if (i % 5 != 2) child_cpu(expected, 3, i + 1500, 9u);
    }
    if (i % 3 == 0) {
      child_cpu(expected, 5, i + 1800, 11u);
      if (i % 2 != 1) child_cpu(expected, 6, i + 1900, 13u);
    }
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  ret<<<blocks, BLOCK>>>(out, n);
  cont<<<blocks, BLOCK>>>(out, n, k);
  brk<<<blocks, BLOCK>>>(out, n, k);
  divg<<<blocks, BLOCK>>>(out, n);
  nest<<<blocks, BLOCK>>>(out, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL exit_after_launch: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS exit_after_launch\n");
  return 0;
}
