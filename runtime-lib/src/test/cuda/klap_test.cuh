// Shared helpers of the klap runtime-library test programs (host side only).
// Each test program prints PASS or FAIL (with the first mismatches) and returns 0 / 1.
#ifndef KLAP_TEST_CUH
#define KLAP_TEST_CUH

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

static int klap_test_failures = 0;

// A CUDA runtime call that must succeed; on error prints it and ends the program with FAIL.
#define KT_CUDA(call)                                                                   \
  do {                                                                                  \
    cudaError_t kt_e = (call);                                                          \
    if (kt_e != cudaSuccess) {                                                          \
      std::printf("%s:%d: %s -> %s\nFAIL\n", __FILE__, __LINE__, #call,                 \
                  cudaGetErrorString(kt_e));                                            \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

// A check; prints the first 20 failures with their context.
#define KT_EXPECT(cond, ...)                                                            \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      if (++klap_test_failures <= 20) {                                                 \
        std::printf("%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);            \
        std::printf(__VA_ARGS__);                                                       \
        std::printf("\n");                                                              \
      }                                                                                 \
    }                                                                                   \
  } while (0)

static inline int kt_finish(const char* name) {
  if (klap_test_failures == 0) {
    std::printf("%s: PASS\n", name);
    return 0;
  }
  std::printf("%s: %d check(s) failed\nFAIL\n", name, klap_test_failures);
  return 1;
}

// Ends the program with FAIL if it is still running after `seconds` (a hang is a failure, not a
// stuck test run): call it first thing in main.
static inline void kt_watchdog(const char* name, int seconds) {
  std::thread([name, seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    std::printf("%s: still running after %d s (hang?)\nFAIL\n", name, seconds);
    std::fflush(stdout);
    std::_Exit(1);
  }).detach();
}

#ifdef __CUDACC__
// %globaltimer in nanoseconds, for device-side spins with a timeout.
__device__ inline unsigned long long kt_now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

static inline int kt_popc(unsigned m) { return __builtin_popcount(m); }

#endif
