// Shape "library-collectives" (an eighth session of 2026-11-29; robustness.md "Bugs found", item 13):
// a divergent guarded return whose returning threads are trailing (the last lanes of a warp, whole
// warps at the end of the last block), then one collective of a library whose headers klap does not
// read, then a launch that passes its result. Cooperative groups: tile.shfl(x, 0), tile.ballot(p),
// tile.any(p) and tile.all(p) on a tiled_partition<32> taken before the return; CUB:
// BlockReduce<int, BLOCK>(temp).Sum(x, valid), with a __syncthreads inside, and
// WarpReduce<int>(temp[warp]).Sum(x, valid); one of each library in a __device__ function, the
// block reduce through a type alias. Each is well defined with exited threads, which hold up no
// shfl.sync, vote.sync or bar.sync (lane 0 stays whenever a lane of its warp does, exited lanes give
// no ballot bit and do not count in all, valid counts the threads that stayed). It is not with
// returned threads that klap keeps alive for its own shuffles and barriers: they would meet the
// library's. Every child must see its parent's value.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>

namespace cg = cooperative_groups;

#define N_OUT 1024
#define BLOCK 128

__host__ __device__ inline int input(int i, int k) { return (i * 37 + k * 11) % 101; }

__global__ void put(unsigned* out, int i, int a) {
  atomicAdd(&out[(i * 31 + threadIdx.x) % N_OUT], (unsigned)a * 3u + threadIdx.x + 1u);
}

__global__ void by_shfl(unsigned* out, int n, int k) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  int first = tile.shfl(x, 0);
  put<<<1, 1 + first % 8>>>(out, i, first + x);
}

__global__ void by_ballot(unsigned* out, int n, int k) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  unsigned bits = tile.ballot(x % 3 == 0);
  put<<<1, 1 + __popc(bits) % 8>>>(out, i + 1000, (int)(bits % 4093u));
}

__device__ bool some_lane(cg::thread_block_tile<32> tile, bool p) { return tile.any(p); }

__global__ void by_any(unsigned* out, int n, int k) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  bool some = some_lane(tile, x % 29 == 0);
  put<<<1, some ? 3 : 2>>>(out, i + 2000, some ? x : 7);
}

__global__ void by_all(unsigned* out, int n, int k) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  bool every = tile.all(x % 29 != 0);
  put<<<1, every ? 3 : 2>>>(out, i + 3000, every ? x : 5);
}

// launched with blocks of exactly BLOCK threads (the template argument)
using BlockSum = cub::BlockReduce<int, BLOCK>;

__global__ void by_block_reduce(unsigned* out, int n, int k) {
  __shared__ typename BlockSum::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  int valid = min(BLOCK, n - (int)(blockIdx.x * BLOCK));
  int sum = BlockSum(temp).Sum(x, valid);
  int a = threadIdx.x == 0 ? sum : x;  // the sum is thread 0's only
  put<<<1, 1 + a % 8>>>(out, i + 4000, a);
}

__device__ int warp_sum(cub::WarpReduce<int>::TempStorage& temp, int x, int valid) {
  return cub::WarpReduce<int>(temp).Sum(x, valid);
}

__global__ void by_warp_reduce(unsigned* out, int n, int k) {
  __shared__ typename cub::WarpReduce<int>::TempStorage temp[BLOCK / 32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = input(i, k);
  int lane = (int)threadIdx.x % 32;
  int valid = min(32, n - (i - lane));
  int sum = warp_sum(temp[threadIdx.x / 32], x, valid);
  int a = lane == 0 ? sum : x;  // the sum is lane 0's only
  put<<<1, 1 + a % 8>>>(out, i + 5000, a);
}

static void put_cpu(std::vector<unsigned>& e, int threads, int i, int a) {
  for (int t = 0; t < threads; ++t) e[(i * 31 + t) % N_OUT] += (unsigned)a * 3u + (unsigned)t + 1u;
}

int main() {
  const int runs[2][2] = {{BLOCK + 45, 1}, {3 * BLOCK - 7, 2}};  // {n, k}: trailing threads return
  std::vector<unsigned> expected(N_OUT, 0u);
  for (const auto& r : runs) {
    int n = r[0], k = r[1];
    for (int i = 0; i < n; ++i) {
      int x = input(i, k);
      int wb = i - i % 32, bb = i - i % BLOCK;  // the first thread of i's warp and block
      unsigned bits = 0u; int count = 0, hits = 0, wsum = 0, bsum = 0;
      for (int g = wb; g < wb + 32 && g < n; ++g) {
        wsum += input(g, k);
        if (input(g, k) % 3 == 0) { bits |= 1u << (g - wb); ++count; }
        if (input(g, k) % 29 == 0) ++hits;
      }
      for (int g = bb; g < bb + BLOCK && g < n; ++g) bsum += input(g, k);
      int first = input(wb, k);
      bool some = hits > 0, every = hits == 0;
      put_cpu(expected, 1 + first % 8, i, first + x);
      put_cpu(expected, 1 + count % 8, i + 1000, (int)(bits % 4093u));
      put_cpu(expected, some ? 3 : 2, i + 2000, some ? x : 7);
      put_cpu(expected, every ? 3 : 2, i + 3000, every ? x : 5);
      int ab = i % BLOCK == 0 ? bsum : x, aw = i % 32 == 0 ? wsum : x;
      put_cpu(expected, 1 + ab % 8, i + 4000, ab);
      put_cpu(expected, 1 + aw % 8, i + 5000, aw);
    }
  }
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaError_t err = cudaSuccess;
  for (const auto& r : runs) {
    int n = r[0], k = r[1], grid = (n + BLOCK - 1) / BLOCK;
    by_shfl<<<grid, BLOCK>>>(out, n, k);
    by_ballot<<<grid, BLOCK>>>(out, n, k);
    by_any<<<grid, BLOCK>>>(out, n, k);
    by_all<<<grid, BLOCK>>>(out, n, k);
    by_block_reduce<<<grid, BLOCK>>>(out, n, k);
    by_warp_reduce<<<grid, BLOCK>>>(out, n, k);
    if (err == cudaSuccess) err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL library_collectives: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS library_collectives\n");
  return 0;
}
