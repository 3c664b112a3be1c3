// Churn: many rounds of aggregated launches whose pool memory in total far exceeds the pool
// (2 MiB here), which only works if the device gives the memory back (issue 11):
//  A. 300 host launches of a block-granularity parent (8 x 128 threads, ~128 KiB of slot arrays
//     each, ~38 MiB in total), synchronizing every 4 launches;
//  B. ONE launch of a warp whose 32 threads make 3000 aggregated launch rounds into
//     cudaStreamFireAndForget (~12 MiB of slot arrays): the parent's allocations wait for the blocks
//     its running children give back (KLAP_POOL_WAIT_MS);
//  C. 200 host launches of a kernel-granularity parent (8 x 128 threads, ~224 KiB of record chunks
//     each, ~44 MiB in total), synchronizing every 4 launches.
// Each original child runs exactly once (hits == 2 everywhere); afterwards no pool block is live
// and no error was raised.
#define KLAP_POOL_SIZE_BYTES (2ull << 20)
#define KLAP_POOL_WAIT_MS 5000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"

int main() {
  kt_watchdog("test_churn", 55);
  constexpr unsigned nblk = 8, bs = 128, per = nblk * bs;
  constexpr unsigned a_launches = 300, b_rounds = 3000, c_launches = 200;
  unsigned *ha, *hb, *hc;
  KT_CUDA(cudaMalloc(&ha, sizeof(unsigned) * a_launches * per));
  KT_CUDA(cudaMalloc(&hb, sizeof(unsigned) * b_rounds * 32));
  KT_CUDA(cudaMalloc(&hc, sizeof(unsigned) * c_launches * per));
  KT_CUDA(cudaMemset(ha, 0, sizeof(unsigned) * a_launches * per));
  KT_CUDA(cudaMemset(hb, 0, sizeof(unsigned) * b_rounds * 32));
  KT_CUDA(cudaMemset(hc, 0, sizeof(unsigned) * c_launches * per));

  for (unsigned l = 0; l < a_launches; ++l) {
    hit_parent_block<<<nblk, bs, 0, klap::host_prepare(0)>>>(ha, l * per);
    if (l % 4 == 3) KT_CUDA(cudaDeviceSynchronize());
  }
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(count_bad_hits(ha, size_t(a_launches) * per, 2u, "A") == 0, "A: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "A: %llu pool blocks live", klap::host_pool_live());

  hit_parent_warp<<<1, 32, 0, klap::host_prepare(0)>>>(hb, 0, b_rounds, cudaStreamFireAndForget);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(count_bad_hits(hb, size_t(b_rounds) * 32, 2u, "B") == 0, "B: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "B: %llu pool blocks live", klap::host_pool_live());

  for (unsigned l = 0; l < c_launches; ++l) {
    hit_kparent<<<nblk, bs, 0, klap::host_prepare(0)>>>(hc, l * per, klap::host_kstate(1));
    if (l % 4 == 3) KT_CUDA(cudaDeviceSynchronize());
  }
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(count_bad_hits(hc, size_t(c_launches) * per, 2u, "C") == 0, "C: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "C: %llu pool blocks live", klap::host_pool_live());

  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  std::printf("test_churn: pool of %llu bytes, %llu carved into blocks\n", st.capacity, st.top);
  KT_EXPECT(st.error == 0 && st.top <= st.capacity, "error %u, carved %llu", st.error, st.top);
  return kt_finish("test_churn");
}
