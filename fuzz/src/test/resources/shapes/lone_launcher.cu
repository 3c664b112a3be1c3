// Shape "lone-launcher" (2026-11-29): launches that one thread of a warp or of a block makes, as
// quadtree programs launch from thread 0. klap's warp and block forms find nothing to aggregate
// there: a group of one thread (warp_group::active() under the guard, a block of one thread) runs
// in direct mode from the start, and a group whose scan finds one launch makes it as written at
// the flush (klap/aggregate.cuh, 2026-11-29). Here: thread 0 of each block launches twice per round
// into the NULL stream (the children check their order with the thread's ticket), lane 0 of each
// warp once, every thread of one-thread blocks once, and a recursive kernel whose thread 0 launches
// four blocks of itself, fire-and-forget, until depth 3 (the quadtree's form).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4093

__global__ void child(unsigned* out, unsigned* ticket, unsigned tag, int round, int* bad) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[(tag * 31u + i) % N_OUT], tag + i * 7u);
  if (round >= 0 && threadIdx.x == 0u && blockIdx.x == 0u &&
      atomicCAS(ticket, (unsigned)round, (unsigned)round + 1u) != (unsigned)round)
    atomicAdd(bad, 1);
}

// thread 0 of each block, two launches a round into the NULL stream (ticket: 2 per round)
__global__ void per_block(unsigned* out, unsigned* tickets, int rounds, int* bad) {
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0) {
      child<<<2, 64>>>(out, &tickets[blockIdx.x], 1000u + blockIdx.x * 16u + r, 2 * r, bad);
      child<<<1, 32>>>(out, &tickets[blockIdx.x], 5000u + blockIdx.x * 16u + r, 2 * r + 1, bad);
    }
  }
}

// lane 0 of each warp (blocks of 96 threads: three warps)
__global__ void per_warp(unsigned* out, int* bad) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x % 32u == 0u) child<<<1 + t % 2u, 32>>>(out, nullptr, 20000u + t, -1, bad);
}

// blocks of one thread: every thread its own group
__global__ void one_thread(unsigned* out, int* bad) {
  child<<<1 + blockIdx.x % 3u, 16>>>(out, nullptr, 40000u + blockIdx.x, -1, bad);
}

// the quadtree's form: thread 0 launches four blocks of itself until depth 3
__global__ void tree(unsigned* out, unsigned node, int depth, int* bad) {
  unsigned me = node * 4u + blockIdx.x;
  atomicAdd(&out[(me * 131u + threadIdx.x) % N_OUT], me + 1u);
  __syncthreads();
  if (threadIdx.x == 0 && depth < 3) {
    tree<<<4, 64, 0, cudaStreamFireAndForget>>>(out, me + 1u, depth + 1, bad);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(bad, 1000);
  }
}

static void child_cpu(std::vector<unsigned>& out, unsigned grid, unsigned block, unsigned tag) {
  for (unsigned i = 0; i < grid * block; ++i) out[(tag * 31u + i) % N_OUT] += tag + i * 7u;
}

static void tree_cpu(std::vector<unsigned>& out, unsigned node, int depth) {
  for (unsigned b = 0; b < 4u; ++b) {
    unsigned me = node * 4u + b;
    for (unsigned t = 0; t < 64u; ++t) out[(me * 131u + t) % N_OUT] += me + 1u;
    if (depth < 3) tree_cpu(out, me + 1u, depth + 1);
  }
}

int main() {
  const int blocks = 6, rounds = 3, warp_blocks = 4, lone = 40;
  std::vector<unsigned> want(N_OUT, 0u), got(N_OUT);
  for (int b = 0; b < blocks; ++b)
    for (int r = 0; r < rounds; ++r) {
      child_cpu(want, 2, 64, 1000u + b * 16u + r);
      child_cpu(want, 1, 32, 5000u + b * 16u + r);
    }
  for (unsigned t = 0; t < warp_blocks * 96u; t += 32u) child_cpu(want, 1 + t % 2u, 32, 20000u + t);
  for (unsigned b = 0; b < (unsigned)lone; ++b) child_cpu(want, 1 + b % 3u, 16, 40000u + b);
  // the root grid (depth 1) has one block, node 0's block 0; it launches node 1's grid at depth 2
  for (unsigned t = 0; t < 64u; ++t) want[(0u * 131u + t) % N_OUT] += 1u;
  tree_cpu(want, 1u, 2);
  unsigned *out, *tickets;
  int* bad;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&tickets, sizeof(unsigned) * blocks);
  cudaMalloc(&bad, sizeof(int));
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(tickets, 0, sizeof(unsigned) * blocks);
  cudaMemset(bad, 0, sizeof(int));
  per_block<<<blocks, 128>>>(out, tickets, rounds, bad);
  per_warp<<<warp_blocks, 96>>>(out, bad);
  one_thread<<<lone, 1>>>(out, bad);
  tree<<<1, 64>>>(out, 0u, 1, bad);
  cudaError_t e = cudaDeviceSynchronize();
  int hbad = -1;
  std::vector<unsigned> tk(blocks);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(tk.data(), tickets, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u;
  int wrong = 0;
  for (int i = 0; i < N_OUT; ++i) {
    h = (h ^ got[i]) * 16777619u;
    wrong += got[i] != want[i];
  }
  for (int b = 0; b < blocks; ++b) wrong += tk[b] != 2u * rounds;
  std::printf("RESULT %08x\n", h);
  if (e != cudaSuccess || hbad != 0 || wrong != 0) {
    std::printf("FAIL lone_launcher: %s, %d children out of order or failed, %d wrong slots or tickets\n",
                cudaGetErrorString(e), hbad, wrong);
    return 1;
  }
  std::printf("PASS lone_launcher\n");
  return 0;
}
