// A host loop that enqueues 1000 launches of a transformed parent without synchronizing (the GPU
// run of 2026-11-22 exhausted the pool when the host enqueued repetitions: issue 11), with a pool
// of 1 MiB, far less than the ~31 MiB that the 1000 launches of each phase allocate together:
//  A. 1000 block-granularity parents (4 x 64 threads) into the NULL stream;
//  B. 1000 of them round-robin into 4 non-blocking streams;
//  C. 1000 kernel-granularity parents (host_kstate each) round-robin into 4 streams: the host's
//     state slots grow with the launches in flight and are handed back by the device;
// then one synchronization. Checks: every original child ran exactly once, no pool block live, no
// klap error; prints the host-side time per enqueued launch (host_prepare + host_kstate + <<<>>>).
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#define KLAP_POOL_WAIT_MS 5000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"
#include <chrono>

int main() {
  kt_watchdog("test_host_loop", 55);
  constexpr unsigned nblk = 4, bs = 64, per = nblk * bs, launches = 1000;
  const size_t n = size_t(launches) * per;
  unsigned* hits[3];
  for (auto& h : hits) {
    KT_CUDA(cudaMalloc(&h, n * sizeof(unsigned)));
    KT_CUDA(cudaMemset(h, 0, n * sizeof(unsigned)));
  }
  cudaStream_t s[4];
  for (auto& x : s) KT_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  KT_CUDA(cudaDeviceSynchronize());

  auto t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < launches; ++l) hit_parent_block<<<nblk, bs, 0, klap::host_prepare(0)>>>(hits[0], l * per);
  auto t1 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < launches; ++l) hit_parent_block<<<nblk, bs, 0, klap::host_prepare(s[l % 4])>>>(hits[1], l * per);
  auto t2 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < launches; ++l)
    hit_kparent<<<nblk, bs, 0, klap::host_prepare(s[l % 4])>>>(hits[2], l * per, klap::host_kstate(1));
  auto t3 = std::chrono::steady_clock::now();
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / launches; };
  std::printf("test_host_loop: host time per enqueued launch: A %.2f us, B %.2f us, C %.2f us (with host_kstate)\n",
              us(t0, t1), us(t1, t2), us(t2, t3));
  const char* names[] = {"A (NULL stream)", "B (4 streams)", "C (kernel granularity, 4 streams)"};
  for (int i = 0; i < 3; ++i)
    KT_EXPECT(count_bad_hits(hits[i], n, 2u, names[i]) == 0, "%s: children missing or repeated", names[i]);
  KT_EXPECT(klap::host_pool_live() == 0, "%llu pool blocks live after the loops", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "klap error flag set");
  const auto& sets = klap::detail::host_kstate_instance().sets;
  std::printf("test_host_loop: %zu host kernel-granularity state slots for %u launches\n",
              sets.empty() ? size_t(0) : sets[0].dev.size(), launches);
  return kt_finish("test_host_loop");
}
