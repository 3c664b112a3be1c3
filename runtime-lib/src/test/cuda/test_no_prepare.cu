// Test of the pool of a transformed kernel launched without klap::host_prepare (issue 11: kernels
// launched from files klap never saw): the first pool_alloc of the grid makes a pool from the
// device heap (klap::detail::pool_setup_on_device) while the threads of 64 blocks race for it;
// every aggregated launch must run its children with the right arguments. A later host_prepare
// must keep that pool (it may be in use) and recycle it, and launches without host_prepare must go
// on working after that.
// Checks: each parent thread's child ran exactly once per round with its own argument; the pool
// was made on the device (setup == 2, base in the device heap) and survives host_prepare; no
// klap error.
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

static klap::pool_state read_pool() {
  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  return st;
}

int main() {
  kt_watchdog("test_no_prepare", 60);
  const unsigned rounds = 3;
  unsigned* hits;
  KT_CUDA(cudaMalloc(&hits, sizeof(unsigned) * rounds * N * CT));
  KT_CUDA(cudaMemset(hits, 0, sizeof(unsigned) * rounds * N * CT));
  // round 0: no host_prepare ever ran, so the grid makes its pool on the device
  parent<<<NB, NT>>>(hits, 0u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const klap::pool_state first = read_pool();
  KT_EXPECT(first.setup == 2u && first.base != nullptr && first.capacity >= 64u * 1024u,
            "pool made on the device: setup %u base %p capacity %llu", first.setup, (void*)first.base, first.capacity);
  // round 1: through host_prepare, which must keep (and may recycle) the device-made pool
  parent<<<NB, NT, 0, klap::host_prepare(0)>>>(hits, 1u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const klap::pool_state second = read_pool();
  KT_EXPECT(second.base == first.base && second.setup == 2u, "host_prepare replaced the device-made pool (%p -> %p)",
            (void*)first.base, (void*)second.base);
  // round 2: without host_prepare again
  parent<<<NB, NT>>>(hits, 2u);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
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
