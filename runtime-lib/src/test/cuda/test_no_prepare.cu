// Test of the pool of a transformed kernel launched without klap::host_prepare (issue 11: kernels
// launched from files klap never saw): before any host_prepare, the 64 blocks of the grid allocate
// from the translation unit's static reserve pool (klap::pool_reserve); every aggregated launch
// must run its children with the right arguments. After a host_prepare, launches (with it or
// without it) use the cudaMalloc'ed pool.
// Checks: each parent thread's child ran exactly once per round with its own argument; round 0
// used the reserve (pool_dev has no buffer, the reserve's offset grew), rounds 1 and 2 the
// host-prepared pool (the reserve's offset no longer grows); no klap error.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr unsigned NB = 64, NT = 128, N = NB * NT, CT = 4;

struct child_args { unsigned parent; unsigned round; };

__global__ void child_agg(const klap::launch_cfg* cfg, unsigned n, const child_args* args, unsigned* hits) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const child_args a = args[p];
  klap::child_release(cfg, n);
  atomicAdd(&hits[(a.round * N + a.parent) * CT + v.threadIdx.x], 1u + a.round);
}

__global__ void parent(unsigned* hits, unsigned round) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const klap::block_group b = klap::block_group::hardware();
  const klap::warp_group g = klap::warp_group::of(b);
  auto s = klap::agg_begin<child_args>(g);
  if (t % 3u != 1u) s.record(dim3(1), dim3(CT), 0u, cudaStream_t(0), child_args{t, round});
  s.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                 const child_args* a, const child_args&) -> cudaError_t {
    cudaError_t pre = cudaPeekAtLastError();
    child_agg<<<gd, bd, sm, st>>>(c, n, a, hits);
    return klap::launch_result(pre);
  });
}

static klap::pool_state read(const klap::pool_state& sym) {
  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, sym, sizeof(st)));
  return st;
}

int main() {
  kt_watchdog("test_no_prepare", 60);
  const unsigned rounds = 3;
  unsigned* hits;
  KT_CUDA(cudaMalloc(&hits, sizeof(unsigned) * rounds * N * CT));
  KT_CUDA(cudaMemset(hits, 0, sizeof(unsigned) * rounds * N * CT));
  // round 0: no host_prepare ever ran, so the grid allocates from the reserve
  parent<<<NB, NT>>>(hits, 0u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const klap::pool_state dev0 = read(klap::pool_dev), res0 = read(klap::pool_reserve);
  KT_EXPECT(dev0.base == nullptr && res0.base != nullptr && res0.offset > 0u && res0.offset <= res0.capacity,
            "round 0 used the reserve: pool_dev.base %p, reserve offset %llu of %llu", (void*)dev0.base, res0.offset,
            res0.capacity);
  // round 1: through host_prepare, which sets up pool_dev
  parent<<<NB, NT, 0, klap::host_prepare(0)>>>(hits, 1u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const klap::pool_state dev1 = read(klap::pool_dev), res1 = read(klap::pool_reserve);
  KT_EXPECT(dev1.base != nullptr && dev1.offset > 0u && res1.offset == res0.offset,
            "round 1 used pool_dev: base %p offset %llu, reserve offset %llu -> %llu", (void*)dev1.base, dev1.offset,
            res0.offset, res1.offset);
  // round 2: without host_prepare again, but pool_dev is set up now
  parent<<<NB, NT>>>(hits, 2u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const klap::pool_state res2 = read(klap::pool_reserve);
  KT_EXPECT(res2.offset == res0.offset, "round 2 allocated from the reserve (%llu -> %llu)", res0.offset, res2.offset);
  std::vector<unsigned> h(rounds * N * CT);
  KT_CUDA(cudaMemcpy(h.data(), hits, sizeof(unsigned) * h.size(), cudaMemcpyDeviceToHost));
  for (unsigned r = 0; r < rounds; ++r)
    for (unsigned t = 0; t < N; ++t)
      for (unsigned c = 0; c < CT; ++c) {
        const unsigned want = t % 3u != 1u ? 1u + r : 0u;
        const unsigned got = h[(r * N + t) * CT + c];
        KT_EXPECT(got == want, "round %u parent %u child thread %u: %u, expected %u", r, t, c, got, want);
      }
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  return kt_finish("test_no_prepare");
}
