// kfinish in a kernel whose threads diverge around the user's own __syncthreads(): in every block,
// the threads with threadIdx.x % 3 == 0 return early (straight to klap::kfinish, then they exit),
// while the others meet at two __syncthreads() of the user's body, wait a while, and record a
// launch in between. A kfinish with a barrier of its own (barrier 0, like the user's) would pair
// with the user's first barrier: a hang, or the block's ticket taken before the other threads
// recorded. kfinish counts finished threads instead. 20 rounds of 16 x 256 threads.
// Checks: every recording thread's child ran exactly once, early threads launched nothing, exactly
// one aggregated grid per round, no pool block live, no klap error (and no hang: watchdog).
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"

__global__ void counting_kchild(const klap::ksite* site, unsigned* grids) {
  klap::vctx v;
  const hit_args* a;
  if (!klap::kchild_enter(site, v, a)) return;
  unsigned* const hits = a->hits;
  const unsigned id = a->id;
  klap::kchild_release(site);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(grids, 1u);
  atomicAdd(&hits[id], 1u);
}

__global__ void sync_parent(unsigned* hits, unsigned base, unsigned* grids, klap::kstate* ks) {
  [&]() {
    const unsigned t = threadIdx.x;
    if (t % 3u == 0u) return;  // early: reaches kfinish while the others wait at the barrier below
    __syncthreads();
    const unsigned long long t0 = kt_now_ns();
    while (kt_now_ns() - t0 < 20000ull) __nanosleep(1000);  // ~20 us: the early threads are long done
    klap::krecord<hit_args>(ks, 0u, dim3(1), dim3(2), 0u, (cudaStream_t)0,
                            hit_args{hits, base + blockIdx.x * blockDim.x + t});
    __syncthreads();
  }();
  klap::kfinish(ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    counting_kchild<<<g, b, sm, st>>>(s, grids);
    return klap::launch_result(pre);
  });
}

int main() {
  kt_watchdog("test_kfinish_sync", 50);
  constexpr unsigned nblk = 16, bs = 256, per = nblk * bs, rounds = 20;
  unsigned *hits, *grids;
  KT_CUDA(cudaMalloc(&hits, sizeof(unsigned) * rounds * per));
  KT_CUDA(cudaMalloc(&grids, sizeof(unsigned)));
  KT_CUDA(cudaMemset(hits, 0, sizeof(unsigned) * rounds * per));
  KT_CUDA(cudaMemset(grids, 0, sizeof(unsigned)));
  for (unsigned r = 0; r < rounds; ++r)
    sync_parent<<<nblk, bs, 0, klap::host_prepare(0)>>>(hits, r * per, grids, klap::host_kstate(1));
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned> h(size_t(rounds) * per);
  KT_CUDA(cudaMemcpy(h.data(), hits, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    const unsigned want = (i % bs) % 3u == 0u ? 0u : 2u;
    if (h[i] != want && ++bad <= 5) std::printf("round %zu thread %zu: hits %u, want %u\n", i / per, i % per, h[i], want);
  }
  KT_EXPECT(bad == 0, "%u parent threads' children missing, repeated or invented", bad);
  unsigned g = 0;
  KT_CUDA(cudaMemcpy(&g, grids, sizeof(g), cudaMemcpyDeviceToHost));
  KT_EXPECT(g == rounds, "%u aggregated grids ran, want %u (one per round)", g, rounds);
  KT_EXPECT(klap::host_pool_live() == 0, "%llu pool blocks live", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "klap error flag set");
  return kt_finish("test_kfinish_sync");
}
