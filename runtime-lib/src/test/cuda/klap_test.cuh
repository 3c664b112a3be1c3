// Shared helpers of the klap runtime-library test programs: host-side checks, a watchdog, a pool
// snapshot (kt_pool), two helpers for device code too (kt_now_ns, kt_mix64), and a kernel that
// keeps the whole pool while the host runs something next to it (kt_with_pool_held).
// Each test program prints PASS or FAIL (with the first mismatches) and returns 0 / 1.
// Include it AFTER "klap/klap.cuh" (kt_pool needs klap::pool_dev_symbol()).
#ifndef KLAP_TEST_CUH
#define KLAP_TEST_CUH

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

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

// A 64-bit mixing function (the splitmix64 finalizer): deterministic pseudo-random plans that the
// host can recompute, and check words that a child compares with its arguments.
#ifdef __CUDACC__
__host__ __device__
#endif
inline unsigned long long kt_mix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

#ifdef KLAP_POOL_STATE_CUH
// HOST, with klap/klap.cuh included first. A snapshot of the program's pool
// (klap::pool_dev_symbol()), read with cudaMemcpyFromSymbol; take it when the device is idle (after a
// synchronization), when nothing may be live any more:
//   live     allocations not yet freed (the sum of the segments' live counts)
//   busy     segments that hold live allocations
//   touched  segments whose word is not 0 (used since the start; a used segment is reset lazily)
//   pending  klap's aggregated launches still counted pending (0 once every child grid started)
//   fallbacks  groups that found no pool memory and launched their children as written
struct kt_pool_snapshot {
  unsigned long long live = 0;
  unsigned busy = 0;
  unsigned touched = 0;
  unsigned cur = 0;
  unsigned error = 0;
  unsigned long long pending = 0;
  unsigned long long fallbacks = 0;
};
// The program's pool state as the device holds it now (a copy; read it as a klap::pool_state).
static inline std::vector<unsigned char> kt_pool_state() {
  std::vector<unsigned char> raw(sizeof(klap::pool_state));
  KT_CUDA(cudaMemcpyFromSymbol(raw.data(), klap::pool_dev_symbol(), raw.size()));
  return raw;
}
static inline kt_pool_snapshot kt_pool() {
  const std::vector<unsigned char> raw = kt_pool_state();
  const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
  kt_pool_snapshot s;
  for (unsigned long long i = 0; i < klap::pool_segments; ++i) {
    const unsigned long long live = st->seg[i] >> klap::pool_live_shift;
    s.live += live;
    s.busy += live != 0ull;
    s.touched += st->seg[i] != 0ull;
  }
  s.cur = st->cur;
  s.error = st->error;
  s.pending = st->pending;
  s.fallbacks = st->fallbacks;
  return s;
}

// Expects klap's count of pending aggregated launches to be back at 0 in snapshot s (every child
// grid that klap launched gave its place back: pool.cuh, pending_acquire/pending_release).
static inline void kt_expect_no_pending(const kt_pool_snapshot& s, const char* phase) {
  KT_EXPECT(s.pending == 0ull, "%s: %llu aggregated launches still counted pending", phase, s.pending);
}

// Expects the pool idle after a synchronization: nothing live, no error, nothing counted pending.
static inline void kt_expect_idle(const char* phase) {
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u, "%s: %llu allocations live, error %u", phase, s.live, s.error);
  kt_expect_no_pending(s, phase);
}
#endif

#ifdef KLAP_POOL_CUH  // (programs that include klap/pool.cuh)
// Takes the whole pool of the program; if `hold`, raises the mapped host flag
// (*flag = 1) and keeps the memory until the host sets the flag to 2.
static __global__ void kt_pool_holder(volatile int* flag, bool hold) {
  void* p = klap::pool_alloc(klap::pool_segments * klap::pool_segment_bytes - 16ull, "klap test: kt_pool_holder");
  if (hold) {
    __threadfence_system();
    *flag = 1;
    __threadfence_system();
    while (*flag != 2) __nanosleep(10000);
  }
  klap::pool_free(p);
}

// HOST. A mapped host int (*flag, 0) and its device pointer (*d_flag), for kt_with_pool_held;
// give it back with cudaFreeHost(*flag).
static inline void kt_mapped_flag(int** flag, int** d_flag) {
  KT_CUDA(cudaHostAlloc(flag, sizeof(int), cudaHostAllocMapped));
  **flag = 0;
  KT_CUDA(cudaHostGetDevicePointer(d_flag, *flag, 0));
}

// HOST. Runs launch(stream), in a fresh non-blocking stream, while kt_pool_holder keeps the whole
// pool (flag: a mapped host int, d_flag its device pointer; launch the holder once with
// hold = false before, so that lazy loading does not delay it), waits for that stream, lets the
// holder go and synchronizes the device. Returns false if the holder did not take the pool within
// 5 s.
template <class F>
static bool kt_with_pool_held(int* flag, int* d_flag, F launch) {
  cudaStream_t hold, run;
  KT_CUDA(cudaStreamCreateWithFlags(&hold, cudaStreamNonBlocking));
  KT_CUDA(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
  *flag = 0;
  kt_pool_holder<<<1, 1, 0, hold>>>(d_flag, true);
  KT_CUDA(cudaGetLastError());
  for (int i = 0; i < 5000 && *static_cast<volatile int*>(flag) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool held = *static_cast<volatile int*>(flag) == 1;
  launch(run);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaStreamSynchronize(run));
  *static_cast<volatile int*>(flag) = 2;
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaStreamDestroy(hold));
  KT_CUDA(cudaStreamDestroy(run));
  return held;
}
#endif  // KLAP_POOL_CUH

#endif
