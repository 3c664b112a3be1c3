// Host loops that enqueue launches of a transformed parent without synchronizing (the GPU run of
// 2026-11-22 exhausted the host-recycled pool when the host enqueued repetitions: issue 11), with
// a pool of 1 MiB (16 segments of 64 KiB), far less than what the launches allocate together:
//  A. 1000 launches of a block-aggregated parent (8 x 128 threads, ~64 KiB of slot arrays per
//     launch, ~63 MiB in total) round-robin into 4 non-blocking streams through
//     klap::host_prepare(stream), then one synchronization;
//  B. two host threads (std::thread) at once, each with a stream of its own, each enqueuing 500
//     launches of a warp-aggregated parent through klap::host_prepare(its stream) and then
//     synchronizing its stream: host_prepare is called from both threads concurrently.
// The kernels are those of agg_common.cuh (written as klap writes them): every child thread checks
// its record and adds launch + 1 to its parent thread's counter.
// Checks: every counter is exactly what the launches add up to, no child saw a wrong record, no
// CUDA error in either host thread, no pool allocation live afterwards, no klap error.
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"
#include <chrono>
#include <thread>

constexpr unsigned NBLK = 8, BS = 128, IDS = NBLK * BS, LAUNCHES = 1000, PER_THREAD = 500;

// Host thread of phase B: launches first .. first + PER_THREAD - 1 into a stream of its own.
static void host_thread(unsigned long long* sums, unsigned* errors, unsigned first, int* failed) {
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    *failed = 1;
    return;
  }
  for (unsigned l = first; l < first + PER_THREAD; ++l) churn_parent_warp<<<NBLK, BS, 0, klap::host_prepare(s)>>>(sums, l, errors);
  if (cudaGetLastError() != cudaSuccess) *failed = 1;
  if (cudaStreamSynchronize(s) != cudaSuccess) *failed = 1;
  if (cudaStreamDestroy(s) != cudaSuccess) *failed = 1;
}

int main() {
  kt_watchdog("test_host_loop", 120);
  unsigned long long* sums[3];
  unsigned* errors;
  for (auto& s : sums) {
    KT_CUDA(cudaMalloc(&s, IDS * sizeof(unsigned long long)));
    KT_CUDA(cudaMemset(s, 0, IDS * sizeof(unsigned long long)));
  }
  KT_CUDA(cudaMalloc(&errors, 3 * sizeof(unsigned)));
  KT_CUDA(cudaMemset(errors, 0, 3 * sizeof(unsigned)));
  cudaStream_t st[4];
  for (auto& x : st) KT_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  KT_CUDA(cudaDeviceSynchronize());
  const double mib = 1048576.0, pool = double(KLAP_POOL_SIZE_BYTES);

  // A. 1000 launches into 4 streams
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < LAUNCHES; ++l)
    churn_parent_block<<<NBLK, BS, 0, klap::host_prepare(st[l % 4])>>>(sums[0], l, errors);
  const auto t1 = std::chrono::steady_clock::now();
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const auto t2 = std::chrono::steady_clock::now();
  double bytes = double(LAUNCHES) * churn_slot_bytes(IDS, BS);
  std::printf("test_host_loop: A: %u launches into 4 streams, %.0f MiB of slot arrays (%.0f times the pool); "
              "%.1f us per enqueued launch on the host, %.0f ms in all\n",
              LAUNCHES, bytes / mib, bytes / pool, std::chrono::duration<double, std::micro>(t1 - t0).count() / LAUNCHES,
              std::chrono::duration<double, std::milli>(t2 - t0).count());
  KT_EXPECT(churn_check_sums("A", sums[0], errors, IDS, 0, LAUNCHES) == 0, "A (4 streams): wrong counters");
  kt_pool_snapshot ps = kt_pool();
  KT_EXPECT(ps.live == 0ull && ps.error == 0u, "A: %llu pool allocations still live, error %u", ps.live, ps.error);
  kt_expect_no_pending(ps, "A");

  // B. two host threads
  int failed[2] = {0, 0};
  t0 = std::chrono::steady_clock::now();
  std::thread h1(host_thread, sums[1], errors + 1, 0u, &failed[0]);
  std::thread h2(host_thread, sums[2], errors + 2, PER_THREAD, &failed[1]);
  h1.join();
  h2.join();
  KT_CUDA(cudaDeviceSynchronize());
  bytes = 2.0 * PER_THREAD * churn_slot_bytes(IDS, 32);
  std::printf("test_host_loop: B: 2 host threads x %u launches, %.0f MiB of slot arrays (%.0f times the pool) in %.0f ms\n",
              PER_THREAD, bytes / mib, bytes / pool,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  KT_EXPECT(failed[0] == 0 && failed[1] == 0, "B: a CUDA call failed in a host thread (%d, %d)", failed[0], failed[1]);
  KT_EXPECT(churn_check_sums("B thread 1", sums[1], errors + 1, IDS, 0, PER_THREAD) == 0, "B: host thread 1: wrong counters");
  KT_EXPECT(churn_check_sums("B thread 2", sums[2], errors + 2, IDS, PER_THREAD, PER_THREAD) == 0,
            "B: host thread 2: wrong counters");
  ps = kt_pool();
  KT_EXPECT(ps.live == 0ull && ps.error == 0u, "B: %llu pool allocations still live, error %u", ps.live, ps.error);
  kt_expect_no_pending(ps, "B");
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  for (auto& x : st) KT_CUDA(cudaStreamDestroy(x));
  for (auto& s : sums) KT_CUDA(cudaFree(s));
  KT_CUDA(cudaFree(errors));
  return kt_finish("test_host_loop");
}
