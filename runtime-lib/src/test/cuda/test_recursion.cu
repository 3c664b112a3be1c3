// Recursion: an aggregated child that aggregates its own launches, 20 levels deep (the CDP nesting
// limit is 24), with a small pool (512 KiB) that is far smaller than what the whole run allocates.
// Written as klap's compiler writes it. 512 chains (8 blocks x 64 host-launched parent threads);
// the original program is
//     __global__ void rec(unsigned* visits, unsigned chain, unsigned depth) {
//       atomicAdd(&visits[chain * (D + 1) + depth], 1);
//       if (threadIdx.x == 0 && depth < D) rec<<<1, 2>>>(visits, chain, depth + 1);
//     }
// launched as rec<<<1, 2>>>(visits, chain, 1) by every parent thread, so every (chain, depth >= 1)
// is visited exactly twice.
//  * warp/block granularity: the host parent aggregates per warp; each aggregated child block
//    aggregates its next launch over its (virtual) block: ~2.6 MiB of slot arrays in total;
//  * kernel granularity: each level is one grid of 512 blocks whose kfinish launches the next level
//    with a fresh klap::kstate_new state: ~1.9 MiB of states and record chunks in total;
//  * klap::kstate_discard frees a state and its record chunks (a launch that failed).
// Checks: the visit counts, no pool block live at the end, no klap error.
#define KLAP_POOL_SIZE_BYTES (512ull << 10)
#define KLAP_POOL_WAIT_MS 5000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr unsigned D = 20;
constexpr unsigned CHAINS = 8 * 64;

struct rec_args {
  unsigned* visits;
  unsigned chain;
  unsigned depth;
};

// ---- warp / block granularity -----------------------------------------------------------------

__global__ void rec_child_agg(const klap::launch_cfg* cfg, unsigned n, const rec_args* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const rec_args a = args[p];
  klap::child_release(cfg, n);
  klap::block_group klap_blk = klap::block_group::virtual_block(v);
  atomicAdd(&a.visits[a.chain * (D + 1) + a.depth], 1u);
  auto site = klap::agg_begin<rec_args>(klap_blk);
  if (v.threadIdx.x == 0 && a.depth < D) site.record(dim3(1), dim3(2), 0, 0, rec_args{a.visits, a.chain, a.depth + 1});
  site.flush(klap_blk, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned nn,
                           const rec_args* aa, const rec_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    rec_child_agg<<<gd, bd, sm, st>>>(c, nn, aa);
    return klap::launch_result(pre);
  });
}

__global__ void rec_parent(unsigned* visits) {
  const klap::block_group b = klap::block_group::hardware();
  const klap::warp_group g = klap::warp_group::of(b);
  auto site = klap::agg_begin<rec_args>(g);
  site.record(dim3(1), dim3(2), 0, 0, rec_args{visits, blockIdx.x * blockDim.x + threadIdx.x, 1u});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const rec_args* a, const rec_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    rec_child_agg<<<gd, bd, sm, st>>>(c, n, a);
    return klap::launch_result(pre);
  });
}

// ---- kernel granularity -----------------------------------------------------------------------

__global__ void krec_child(const klap::ksite* klap_site, klap::kstate* klap_ks);

__device__ void krec_finish(klap::kstate* klap_ks) {
  klap::kfinish(klap_ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    klap::kstate* cks = klap::kstate_new(1);
    krec_child<<<g, b, sm, st>>>(s, cks);
    const cudaError_t e = klap::launch_result(pre);
    if (e != cudaSuccess) klap::kstate_discard(cks);
    return e;
  });
}

__global__ void krec_child(const klap::ksite* klap_site, klap::kstate* klap_ks) {
  klap::vctx v;
  const rec_args* ap;
  if (!klap::kchild_enter(klap_site, v, ap)) {
    krec_finish(klap_ks);  // threads past the original block are part of the count too
    return;
  }
  const rec_args a = *ap;
  klap::kchild_release(klap_site);
  [&]() {
    atomicAdd(&a.visits[a.chain * (D + 1) + a.depth], 1u);
    if (v.threadIdx.x == 0 && a.depth < D)
      klap::krecord<rec_args>(klap_ks, 0u, dim3(1), dim3(2), 0u, (cudaStream_t)0, rec_args{a.visits, a.chain, a.depth + 1});
  }();
  krec_finish(klap_ks);
}

__global__ void krec_parent(unsigned* visits, klap::kstate* klap_ks) {
  [&]() {
    klap::krecord<rec_args>(klap_ks, 0u, dim3(1), dim3(2), 0u, (cudaStream_t)0,
                            rec_args{visits, blockIdx.x * blockDim.x + threadIdx.x, 1u});
  }();
  krec_finish(klap_ks);
}

// kstate_new, 300 records at two sites (chunks 0 and 1 of site 0, chunk 0 of site 1), then
// kstate_discard: everything must go back to the pool.
__global__ void discard_kernel(unsigned* visits) {
  __shared__ klap::kstate* ks;
  if (threadIdx.x == 0) ks = klap::kstate_new(2);
  __syncthreads();
  klap::krecord<rec_args>(ks, threadIdx.x % 2u, dim3(1), dim3(1), 0u, (cudaStream_t)0, rec_args{visits, 0u, 0u});
  __syncthreads();
  if (threadIdx.x == 0) klap::kstate_discard(ks);
}

static unsigned check_visits(const unsigned* d, const char* what) {
  std::vector<unsigned> h(CHAINS * (D + 1));
  KT_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  for (unsigned c = 0; c < CHAINS; ++c)
    for (unsigned d2 = 0; d2 <= D; ++d2) {
      const unsigned want = d2 == 0 ? 0u : 2u;
      if (h[c * (D + 1) + d2] != want && ++bad <= 5)
        std::printf("%s: chain %u depth %u visited %u times, want %u\n", what, c, d2, h[c * (D + 1) + d2], want);
    }
  return bad;
}

int main() {
  kt_watchdog("test_recursion", 55);
  unsigned* visits;
  const size_t bytes = sizeof(unsigned) * CHAINS * (D + 1);
  KT_CUDA(cudaMalloc(&visits, bytes));

  KT_CUDA(cudaMemset(visits, 0, bytes));
  rec_parent<<<8, 64, 0, klap::host_prepare(0)>>>(visits);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(check_visits(visits, "warp/block") == 0, "warp/block recursion: wrong visits");
  KT_EXPECT(klap::host_pool_live() == 0, "warp/block recursion: %llu pool blocks live", klap::host_pool_live());

  KT_CUDA(cudaMemset(visits, 0, bytes));
  krec_parent<<<8, 64, 0, klap::host_prepare(0)>>>(visits, klap::host_kstate(1));
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(check_visits(visits, "kernel") == 0, "kernel-granularity recursion: wrong visits");
  KT_EXPECT(klap::host_pool_live() == 0, "kernel-granularity recursion: %llu pool blocks live", klap::host_pool_live());

  discard_kernel<<<1, 600>>>(visits);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(klap::host_pool_live() == 0, "kstate_discard: %llu pool blocks live", klap::host_pool_live());

  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  std::printf("test_recursion: pool of %llu bytes, %llu carved into blocks\n", st.capacity, st.top);
  KT_EXPECT(st.error == 0, "klap error flag set");
  return kt_finish("test_recursion");
}
