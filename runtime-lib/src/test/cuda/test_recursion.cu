// Recursion at warp/block granularity: the tree kernel of tree_common.cuh (13 levels, ~8000
// threads per level, ~100000 threads per tree; the CDP nesting limit is 24) as klap writes it: the
// host-launched root aggregates its launches per block, and the aggregated child variant of the
// tree kernel launches itself through the same variant, aggregating per virtual block at even
// levels and per warp at odd levels (child blocks of 32 or 64 threads, so aggregated hardware
// blocks of 64 threads hold virtual blocks of 32 whose other threads leave in child_enter).
// Every level's threads run agg_begin (~6 MiB of slot arrays per tree, more than the pool); the pool
// is 4 MiB here (256 segments of 16 KiB). Four trees (different seeds) are enqueued without
// synchronizing, two at a time in two streams (~25 MiB of slot arrays in all, 6 times the pool).
// Checks, per tree: threads per level, the sum of their path ids per level and the launches per
// level equal the host's recomputation of the tree; no child saw a wrong record (check word,
// level, grid and block of its launch); nothing is live in the pool afterwards; no klap error.
#define KLAP_POOL_SIZE_BYTES (4ull << 20)
#define KLAP_POOL_SEGMENT_BYTES (16ull << 10)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "tree_common.cuh"
#include <chrono>

constexpr unsigned TREES = 4;

__global__ void tree_klap_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const tree_args* klap_args,
                              unsigned level, tree_results* r);

// The body of the tree kernel for a thread with path id `id`, the launch aggregated over group g.
template <class G>
__device__ void tree_body(const G& g, unsigned level, unsigned long long id, tree_results* r) {
  atomicAdd(&r->count[level], 1ull);
  atomicAdd(&r->idsum[level], id);
  if (level < TREE_D) {  // uniform: the whole group takes it
    auto klap_s0 = klap::agg_begin<tree_args>(g);
    const unsigned nb = tree_grid(id);
    if (nb != 0u) {
      atomicAdd(&r->launches[level], 1ull);
      klap_s0.record(dim3(nb), dim3(tree_block(id)), 0u, cudaStream_t(0),
                     tree_args{id, level + 1u, tree_check(id, level + 1u)});
    }
    klap_s0.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                         const tree_args* a, const tree_args& mine) -> cudaError_t {
      const cudaError_t pre = cudaPeekAtLastError();
      tree_klap_agg<<<gd, bd, sm, st>>>(c, n, a, mine.level, r);
      return klap::launch_result(pre);
    });
  }
}

// The aggregated variant of tree (level and r uniform, the parent id per parent thread).
__global__ void tree_klap_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const tree_args* klap_args,
                              unsigned level, tree_results* r) {
  klap::vctx klap_v;
  unsigned klap_parent;
  if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;
  const tree_args a = klap_args[klap_parent];
  klap::child_release(klap_cfg, klap_n);
  klap::block_group klap_blk = klap::block_group::virtual_block(klap_v);
  if (a.level != level || a.check != tree_check(a.parent_id, a.level) || klap_v.gridDim.x != tree_grid(a.parent_id) ||
      klap_v.blockDim.x != tree_block(a.parent_id) || klap_v.blockIdx.x >= klap_v.gridDim.x)
    atomicAdd(&r->errors, 1u);
  const unsigned long long id = tree_child_id(a.parent_id, klap_v.blockIdx.x, klap_v.threadIdx.x);
  if (level % 2u == 0u) tree_body(klap_blk, level, id, r);
  else tree_body(klap::warp_group::of(klap_blk), level, id, r);
}

// The host-launched root (level 0), aggregated per block.
__global__ void tree_root(unsigned seed, tree_results* r) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  tree_body(klap_blk, 0u, tree_root_id(seed, blockIdx.x * blockDim.x + threadIdx.x), r);
}

int main() {
  kt_watchdog("test_recursion", 120);
  tree_results* d;
  KT_CUDA(cudaMalloc(&d, TREES * sizeof(tree_results)));
  KT_CUDA(cudaMemset(d, 0, TREES * sizeof(tree_results)));
  cudaStream_t s[2];
  for (auto& x : s) KT_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  KT_CUDA(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned t = 0; t < TREES; ++t) tree_root<<<TREE_RB, TREE_RT, 0, klap::host_prepare(s[t % 2])>>>(1u + t, d + t);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<tree_results> got(TREES);
  KT_CUDA(cudaMemcpy(got.data(), d, TREES * sizeof(tree_results), cudaMemcpyDeviceToHost));
  unsigned long long threads = 0;
  for (unsigned t = 0; t < TREES; ++t) {
    const tree_results want = tree_expected(1u + t);
    char what[32];
    std::snprintf(what, sizeof(what), "tree %u", 1u + t);
    KT_EXPECT(tree_compare(what, got[t], want) == 0, "%s: wrong counts, id sums or launches", what);
    threads += tree_threads(want);
  }
  std::printf("test_recursion: %u trees of %u levels, %llu threads in all, ~%.0f MiB of slot arrays through a pool of "
              "%.0f MiB, in %.0f ms\n",
              TREES, TREE_D + 1, threads, threads * 64.0 / 1048576.0, KLAP_POOL_SIZE_BYTES / 1048576.0, ms);
  const kt_pool_snapshot ps = kt_pool();
  KT_EXPECT(ps.live == 0ull && ps.error == 0u, "%llu pool allocations still live in %u segments, error %u", ps.live,
            ps.busy, ps.error);
  kt_expect_no_pending(ps, "test_recursion");
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  for (auto& x : s) KT_CUDA(cudaStreamDestroy(x));
  KT_CUDA(cudaFree(d));
  return kt_finish("test_recursion");
}
