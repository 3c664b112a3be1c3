// Churn: aggregated launches whose slot arrays add up to hundreds of times the pool (1 MiB here, 16
// segments of 64 KiB), which works only if the device gives the memory back as the children read
// their records (issue 11). The kernels (agg_common.cuh) are written as klap writes them.
//  A. 1000 host launches of a BLOCK-aggregated parent (16 x 256 threads, 16 slot arrays of 16 KiB
//     per launch, ~256 MiB in total) into one stream, without synchronizing in between;
//  B. the same with a WARP-aggregated parent (128 slot arrays of 2 KiB per launch, ~252 MiB);
//  C. ONE launch of a warp that launches in a loop, 4000 rounds (~8 MiB of slot arrays, 8 times
//     the pool, in one grid): the parent runs on while its children run, so pool_alloc must wait
//     for the memory that the running children give back (KLAP_POOL_WAIT_MS) instead of failing.
// In every launch each parent thread launches 0..3 blocks of 32 threads or does not launch (some
// whole blocks and warps launch nothing: flush frees their slots at once); every child thread
// checks its record and adds launch + 1 to its parent thread's counter.
// Checks: every counter is exactly what the launches add up to, no child saw a wrong record, no
// pool allocation is live after each phase, no klap error. A runtime that leaks slot arrays traps
// ("memory pool exhausted") within the first few launches; one that hands them out again too early
// gives wrong records or counters.
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"
#include <chrono>

constexpr unsigned NBLK = 16, BS = 256, IDS = NBLK * BS, LAUNCHES = 1000, LOOP_ROUNDS = 4000;

static void expect_pool_idle(const char* phase) {
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u, "%s: %llu pool allocations still live in %u segments, error %u", phase,
            s.live, s.busy, s.error);
  kt_expect_no_pending(s, phase);
}

int main() {
  kt_watchdog("test_churn", 120);
  unsigned long long *sums_a, *sums_b, *sums_c;
  unsigned* errors;
  KT_CUDA(cudaMalloc(&sums_a, IDS * sizeof(unsigned long long)));
  KT_CUDA(cudaMalloc(&sums_b, IDS * sizeof(unsigned long long)));
  KT_CUDA(cudaMalloc(&sums_c, 32 * sizeof(unsigned long long)));
  KT_CUDA(cudaMalloc(&errors, 3 * sizeof(unsigned)));
  KT_CUDA(cudaMemset(sums_a, 0, IDS * sizeof(unsigned long long)));
  KT_CUDA(cudaMemset(sums_b, 0, IDS * sizeof(unsigned long long)));
  KT_CUDA(cudaMemset(sums_c, 0, 32 * sizeof(unsigned long long)));
  KT_CUDA(cudaMemset(errors, 0, 3 * sizeof(unsigned)));
  KT_CUDA(cudaDeviceSynchronize());
  const double mib = 1048576.0, pool = double(KLAP_POOL_SIZE_BYTES);

  // A. block granularity, 1000 launches without synchronizing
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < LAUNCHES; ++l) churn_parent_block<<<NBLK, BS, 0, klap::host_prepare(0)>>>(sums_a, l, errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double bytes = double(LAUNCHES) * churn_slot_bytes(IDS, BS);
  std::printf("test_churn: A (block): %u launches, %.0f MiB of slot arrays (%.0f times the pool) in %.0f ms\n", LAUNCHES,
              bytes / mib, bytes / pool, ms);
  KT_EXPECT(churn_check_sums("A", sums_a, errors + 0, IDS, 0, LAUNCHES) == 0, "A (block granularity): wrong counters");
  expect_pool_idle("A (block granularity)");

  // B. warp granularity, 1000 launches without synchronizing
  t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < LAUNCHES; ++l)
    churn_parent_warp<<<NBLK, BS, 0, klap::host_prepare(0)>>>(sums_b, l, errors + 1);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  bytes = double(LAUNCHES) * churn_slot_bytes(IDS, 32);
  std::printf("test_churn: B (warp): %u launches, %.0f MiB of slot arrays (%.0f times the pool) in %.0f ms\n", LAUNCHES,
              bytes / mib, bytes / pool, ms);
  KT_EXPECT(churn_check_sums("B", sums_b, errors + 1, IDS, 0, LAUNCHES) == 0, "B (warp granularity): wrong counters");
  expect_pool_idle("B (warp granularity)");

  // C. one warp, 4000 launch rounds in a loop
  t0 = std::chrono::steady_clock::now();
  churn_parent_loop<<<1, 32, 0, klap::host_prepare(0)>>>(sums_c, 0u, LOOP_ROUNDS, errors + 2);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  bytes = double(LOOP_ROUNDS) * churn_slot_bytes(32, 32);
  std::printf("test_churn: C (one warp in a loop): %u rounds, %.1f MiB of slot arrays (%.1f times the pool) in %.0f ms\n",
              LOOP_ROUNDS, bytes / mib, bytes / pool, ms);
  KT_EXPECT(churn_check_sums("C", sums_c, errors + 2, 32, 0, LOOP_ROUNDS) == 0, "C (launches in a loop): wrong counters");
  expect_pool_idle("C (launches in a loop)");

  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  KT_CUDA(cudaFree(sums_a));
  KT_CUDA(cudaFree(sums_b));
  KT_CUDA(cudaFree(sums_c));
  KT_CUDA(cudaFree(errors));
  return kt_finish("test_churn");
}
