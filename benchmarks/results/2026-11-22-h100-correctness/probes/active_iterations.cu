// GPU probe (1 minute): does a klap::warp_group::active() group contain lanes of different loop
// iterations? (device-pool-review.md, F1; the reason for SitePlanner.inPlaceMask.) Build against a
// runtime's headers, e.g. `java -jar cli/target/klap-all.jar --emit-runtime /tmp/rt` for main's, or
// runtime-lib/src/main/resources of a `git worktree add ... aef8bc5` for the device-pool runtime:
//   nvcc -std=c++17 -rdc=true -arch=sm_90 -I/tmp/rt -o active_iterations active_iterations.cu
// Prints how many groups mixed iterations (parent side) and how many children got a wrong
// "uniform" r (child side: r passed the way klap passed a 'u' parameter before 215d5f8).
// Not a test: a non-zero count says the hardware merged iterations, which klap must tolerate.
#include "klap/klap.cuh"
#include <cstdio>
struct A { unsigned* hits; int r; };
__global__ void child_agg(const klap::launch_cfg* cfg, unsigned n, const A* args, unsigned* bad, int r_u) {
  klap::vctx v; unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const int r_v = args[p].r; unsigned* hits = args[p].hits;
  klap::child_release(cfg, n);
  if (r_v != r_u && v.threadIdx.x == 0 && v.blockIdx.x == 0) atomicAdd(bad, 1u);
  if (v.threadIdx.x == 0 && v.blockIdx.x == 0) atomicAdd(hits, 1u);
}
__global__ void parent(unsigned* hits, unsigned* mixed, unsigned* bad, int rounds) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned f = (t * 2654435761u) >> 7;
  for (int r = 0; r < rounds; ++r) {
    if ((f >> (r % 16)) & 1u) {
      auto g = klap::warp_group::active();
      const int r0 = klap::group_broadcast(g, r, 0u);
      if (r0 != r) atomicAdd(mixed, 1u);
      auto s = klap::agg_begin<A>(g);
      s.record(dim3(1), dim3(32), 0u, cudaStreamFireAndForget, A{hits + t, r});
      s.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                     const A* a, const A& mine) -> cudaError_t {
        cudaError_t pre = cudaPeekAtLastError();
        child_agg<<<gd, bd, sm, st>>>(c, n, a, bad, mine.r);
        return klap::launch_result(pre);
      });
    }
  }
}
int main() {
  const int nthr = 4096, rounds = 12;
  unsigned *hits, *cnt;
  cudaMalloc(&hits, nthr * sizeof(unsigned)); cudaMalloc(&cnt, 2 * sizeof(unsigned));
  cudaMemset(hits, 0, nthr * sizeof(unsigned)); cudaMemset(cnt, 0, 2 * sizeof(unsigned));
  parent<<<nthr / 128, 128, 0, klap::host_prepare()>>>(hits, cnt, cnt + 1, rounds);
  cudaError_t e = cudaDeviceSynchronize();
  unsigned h[2]; cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("sync=%s groups_mixing_iterations=%u children_with_wrong_uniform_r=%u\n", cudaGetErrorString(e), h[0], h[1]);
  return (e == cudaSuccess && h[0] == 0 && h[1] == 0) ? 0 : 1;
}
