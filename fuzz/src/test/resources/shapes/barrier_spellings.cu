// Shape "barrier-spellings" (issue 10, 2026-11-28): the barrier_return shape with its barrier spelled
// other ways that mean __syncthreads() (or __syncwarp()): inline asm through a macro (the form klap
// missed: it read the statement's text, not the assembly), a do/while(0) macro around asm,
// __barrier_sync(0), __syncthreads_count, cooperative groups. Threads past n return before the
// barrier; klap must treat each like __syncthreads() after a guarded return.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

#define N_OUT 1024
#define BLOCK 64
#define BAR() asm volatile("bar.sync 0;" ::: "memory")
#define BAR_DO do { asm volatile("barrier.sync 0;" ::: "memory"); } while (0)
#define WARP_BAR() asm volatile("bar.warp.sync -1;" ::: "memory")

__global__ void child(unsigned* out, int i, unsigned w) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], w + threadIdx.x);
}

// the value thread i computes from its block neighbour (lt + 1) % live, and whether it launches
__host__ __device__ unsigned mix(unsigned neighbour, int i, int kind) { return neighbour * 3u + (unsigned)i + 7u * (unsigned)kind; }

__global__ void p_asm(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  BAR();
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 0);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 0, i, w);
}

__global__ void p_asm_do(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  BAR_DO;
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 1);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 1, i, w);
}

__global__ void p_barrier_sync(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  __barrier_sync(0);
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 2);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 2, i, w);
}

__global__ void p_count(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  (void)__syncthreads_count(1);
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 3);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 3, i, w);
}

__global__ void p_cg(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  cooperative_groups::this_thread_block().sync();
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 4);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 4, i, w);
}

__global__ void p_cg_sync(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  sh[threadIdx.x] = (unsigned)data[i];
  cooperative_groups::sync(cooperative_groups::this_thread_block());
  unsigned w = mix(sh[(threadIdx.x + 1) % live], i, 5);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 5, i, w);
}

// the warp form: the neighbour is in the thread's own warp
__global__ void p_warp(unsigned* out, const int* data, int n) {
  __shared__ unsigned sh[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int lt = threadIdx.x, wb = lt & ~31;
  int wl = min(32, min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x)) - wb);
  sh[lt] = (unsigned)data[i];
  WARP_BAR();
  unsigned w = mix(sh[wb + (lt - wb + 1) % wl], i, 6);
  if (w % 3u != 0u) child<<<1, 1 + w % 32u>>>(out + 6, i, w);
}

int main() {
  const int n = 2 * BLOCK + 27;  // the third block has 27 live threads (one full warp, one of 0..26 live lanes)
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) data[i] = (i * 2654435761u) >> 20;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int kind = 0; kind < 7; ++kind) {
    for (int i = 0; i < n; ++i) {
      int b0 = i / BLOCK * BLOCK, live = n - b0 < BLOCK ? n - b0 : BLOCK;
      int neighbour = b0 + (i - b0 + 1) % live;
      if (kind == 6) {
        int lt = i - b0, wb = lt & ~31, wl = live - wb < 32 ? live - wb : 32;
        neighbour = b0 + wb + (lt - wb + 1) % wl;
      }
      unsigned w = mix((unsigned)data[neighbour], i, kind);
      if (w % 3u != 0u)
        for (unsigned t = 0; t < 1 + w % 32u; ++t) expected[(kind + i * 31 + t) % N_OUT] += w + t;
    }
  }
  unsigned* out; int* d;
  cudaMalloc(&out, sizeof(unsigned) * (N_OUT + 8));
  cudaMalloc(&d, sizeof(int) * n);
  cudaMemset(out, 0, sizeof(unsigned) * (N_OUT + 8));
  cudaMemcpy(d, data.data(), sizeof(int) * n, cudaMemcpyHostToDevice);
  const int grid = (n + BLOCK - 1) / BLOCK;
  p_asm<<<grid, BLOCK>>>(out, d, n);
  p_asm_do<<<grid, BLOCK>>>(out, d, n);
  p_barrier_sync<<<grid, BLOCK>>>(out, d, n);
  p_count<<<grid, BLOCK>>>(out, d, n);
  p_cg<<<grid, BLOCK>>>(out, d, n);
  p_cg_sync<<<grid, BLOCK>>>(out, d, n);
  p_warp<<<grid, BLOCK>>>(out, d, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> raw(N_OUT + 8);
  cudaMemcpy(raw.data(), out, sizeof(unsigned) * (N_OUT + 8), cudaMemcpyDeviceToHost);
  // out + kind shifts the child's slots by kind; slots past N_OUT - 1 wrap into the 8 extra words
  for (int s = 0; s < N_OUT + 8; ++s) got[s % N_OUT] += raw[s];
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL barrier_spellings: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS barrier_spellings\n");
  return 0;
}
