// Many concurrent parent grids: 2 host threads, each with 4 streams of its own, each launching 100
// block-granularity and 100 kernel-granularity parents round-robin into its streams (1600 grids in
// flight at most), with a 1 MiB pool; host_prepare and host_kstate are called from both threads at
// once. Checks: every original child ran exactly once, no pool block live, no klap error.
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#define KLAP_POOL_WAIT_MS 5000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"
#include <thread>

constexpr unsigned nblk = 4, bs = 64, per = nblk * bs, launches = 100;

static void host_thread(unsigned* hits_block, unsigned* hits_kernel, int* failed) {
  cudaStream_t s[4];
  for (auto& x : s)
    if (cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking) != cudaSuccess) *failed = 1;
  for (unsigned l = 0; l < launches; ++l) {
    hit_parent_block<<<nblk, bs, 0, klap::host_prepare(s[l % 4])>>>(hits_block, l * per);
    hit_kparent<<<nblk, bs, 0, klap::host_prepare(s[(l + 1) % 4])>>>(hits_kernel, l * per, klap::host_kstate(1));
  }
  if (cudaGetLastError() != cudaSuccess) *failed = 1;
  for (auto& x : s)
    if (cudaStreamSynchronize(x) != cudaSuccess) *failed = 1;
}

int main() {
  kt_watchdog("test_streams", 55);
  const size_t n = size_t(launches) * per;
  unsigned* hits[4];
  for (auto& h : hits) {
    KT_CUDA(cudaMalloc(&h, n * sizeof(unsigned)));
    KT_CUDA(cudaMemset(h, 0, n * sizeof(unsigned)));
  }
  KT_CUDA(cudaDeviceSynchronize());
  int failed[2] = {0, 0};
  std::thread t1(host_thread, hits[0], hits[1], &failed[0]);
  std::thread t2(host_thread, hits[2], hits[3], &failed[1]);
  t1.join();
  t2.join();
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(failed[0] == 0 && failed[1] == 0, "a CUDA call failed in a host thread");
  const char* names[] = {"thread 1 block", "thread 1 kernel", "thread 2 block", "thread 2 kernel"};
  for (int i = 0; i < 4; ++i)
    KT_EXPECT(count_bad_hits(hits[i], n, 2u, names[i]) == 0, "%s: children missing or repeated", names[i]);
  KT_EXPECT(klap::host_pool_live() == 0, "%llu pool blocks live", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "klap error flag set");
  return kt_finish("test_streams");
}
