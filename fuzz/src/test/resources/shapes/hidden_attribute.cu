// Shape "hidden-attribute" (2026-11-28): a child that some threads launch with 64 KiB of dynamic
// shared memory, whose limit the program raises through a const void* variable, where klap cannot
// tell which kernel it names (klap notes attribute-unresolved). klap's aggregated forms of the child
// keep the default 48 KB, so the device refuses an aggregated launch that holds a 64 KiB record:
// klap's runtime then launches those children as written (warp, block: every thread its own, at the
// group's flush; kernel: the grid's last block, record by record). Before, check_launch trapped
// ("device-side launch failed") where the original ran. Here: one launch per thread, and a loop of
// rounds into the NULL stream whose children check their order (each advances its parent thread's
// ticket from the round's number).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4093

__global__ void big(unsigned* out, unsigned* ticket, unsigned tag, unsigned words, int round, int* bad) {
  extern __shared__ unsigned sm[];
  unsigned t = threadIdx.x;
  sm[t] = tag + t * 3u;
  if (t == 0u) sm[words - 1u] = tag ^ 0x5bd1u;
  __syncthreads();
  unsigned v = sm[(t + 1u) % blockDim.x] + sm[words - 1u];
  atomicAdd(&out[(tag * 31u + blockIdx.x * blockDim.x + t) % N_OUT], v);
  if (round >= 0 && t == 0u && blockIdx.x == 0u && atomicCAS(ticket, (unsigned)round, (unsigned)round + 1u) != (unsigned)round)
    atomicAdd(bad, 1);
}

__host__ __device__ inline unsigned words_of(int i) { return i % 3 == 0 ? 16384u : 256u; }

// (no order to check: round -1, no ticket)
__global__ void once(unsigned* out, int n, int* bad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  big<<<1 + i % 2, 32, words_of(i) * 4u>>>(out, nullptr, 100u + i, words_of(i), -1, bad);
}

__global__ void rounds(unsigned* out, unsigned* tickets, int n, int rounds, int* bad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int r = 0; r < rounds; ++r)
    big<<<1, 32, words_of(i + r) * 4u>>>(out, tickets + i, 5000u + i * 8u + r, words_of(i + r), r, bad);
}

static void big_cpu(std::vector<unsigned>& out, unsigned blocks, unsigned tag) {
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < 32u; ++t) out[(tag * 31u + b * 32u + t) % N_OUT] += (tag + ((t + 1u) % 32u) * 3u) + (tag ^ 0x5bd1u);
}

int main() {
  const int n = 90, r = 3;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), tickets(n, 0u);
  for (int i = 0; i < n; ++i) big_cpu(expected, 1 + i % 2, 100u + i);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < r; ++k) big_cpu(expected, 1, 5000u + i * 8u + k);
  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192);
  {
    // the program's own limit, set where klap cannot see which kernel it is for
    const void* k = (const void*)big;
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    if (e != cudaSuccess) { std::printf("FAIL cuda cudaFuncSetAttribute: %s\n", cudaGetErrorString(e)); return 1; }
  }
  unsigned *out, *dtickets;
  int* bad;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&dtickets, sizeof(unsigned) * n);
  cudaMalloc(&bad, sizeof(int));
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(dtickets, 0, sizeof(unsigned) * n);
  cudaMemset(bad, 0, sizeof(int));
  once<<<3, 32>>>(out, n, bad);
  rounds<<<2, 64>>>(out, dtickets, n, r, bad);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  int h_bad = 0;
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(tickets.data(), dtickets, sizeof(unsigned) * n, cudaMemcpyDeviceToHost);
  cudaMemcpy(&h_bad, bad, sizeof(int), cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int first = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (first < 0 && got[i] != expected[i]) first = i; }
  std::printf("RESULT %08x\n", h);
  if (first >= 0) { std::printf("FAIL hidden_attribute: slot %d is %u, expected %u\n", first, got[first], expected[first]); return 1; }
  for (int i = 0; i < n; ++i)
    if (tickets[i] != (unsigned)r) { std::printf("FAIL hidden_attribute: thread %d ran %u of its %d rounds in order\n", i, tickets[i], r); return 1; }
  if (h_bad != 0) { std::printf("FAIL hidden_attribute: %d children ran out of order\n", h_bad); return 1; }
  std::printf("PASS hidden_attribute\n");
  return 0;
}
