// The CDP2 pending-launch buffer is small here (cudaLimitDevRuntimePendingLaunchCount = 128, set
// before host_prepare, which leaves a limit >= KLAP_PENDING_LAUNCH_LIMIT alone), and 64 blocks x 2
// warps each make 20 aggregated launches into their block's NULL stream (2560 launches; children of
// one block run one after another, so launches pile up): launches past the buffer fail with
// cudaErrorLaunchPendingCountExceeded (or cudaErrorLaunchOutOfResources), and flush backs off and
// retries them (KLAP_LAUNCH_RETRY_MS). Checks: every original child ran exactly once, no pool block
// live, no klap error; prints how many launch attempts were refused (0 means the GPU drained the
// buffer fast enough: the retry path was not exercised).
#define KLAP_PENDING_LAUNCH_LIMIT 128
#define KLAP_POOL_WAIT_MS 5000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"

__global__ void pend_parent(unsigned* hits, unsigned rounds, unsigned* refused) {
  const klap::block_group b = klap::block_group::hardware();
  const klap::warp_group g = klap::warp_group::of(b);
  const unsigned threads = gridDim.x * blockDim.x;
  for (unsigned r = 0; r < rounds; ++r) {
    auto site = klap::agg_begin<hit_args>(g);
    site.record(dim3(1), dim3(2), 0, 0, hit_args{hits, r * threads + blockIdx.x * blockDim.x + threadIdx.x});
    site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                      const hit_args* a, const hit_args&) -> cudaError_t {
      const cudaError_t pre = cudaPeekAtLastError();
      hit_child_agg<<<gd, bd, sm, st>>>(c, n, a);
      const cudaError_t e = klap::launch_result(pre);
      if (e != cudaSuccess) atomicAdd(refused, 1u);
      return e;
    });
  }
}

int main() {
  kt_watchdog("test_pending", 55);
  KT_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 128));
  constexpr unsigned nblk = 64, bs = 64, rounds = 20;
  const size_t n = size_t(nblk) * bs * rounds;
  unsigned *hits, *refused;
  KT_CUDA(cudaMalloc(&hits, n * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&refused, sizeof(unsigned)));
  KT_CUDA(cudaMemset(hits, 0, n * sizeof(unsigned)));
  KT_CUDA(cudaMemset(refused, 0, sizeof(unsigned)));
  pend_parent<<<nblk, bs, 0, klap::host_prepare(0)>>>(hits, rounds, refused);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  size_t limit = 0;
  KT_CUDA(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  unsigned hr = 0;
  KT_CUDA(cudaMemcpy(&hr, refused, sizeof(hr), cudaMemcpyDeviceToHost));
  std::printf("test_pending: pending-launch limit %zu; %u launch attempts refused and retried\n", limit, hr);
  KT_EXPECT(limit == 128, "host_prepare changed the pending-launch limit to %zu", limit);
  KT_EXPECT(count_bad_hits(hits, n, 2u, "pending") == 0, "children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "%llu pool blocks live", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "klap error flag set");
  return kt_finish("test_pending");
}
