// klap/error.cuh -- fatal error reporting from device code, and the error handling of device-side
// launches (the launch's own error, retrying while the CDP2 pending-launch buffer is full).
//
// The klap runtime never continues with corrupt state: an exhausted pool or a failed device-side
// launch prints one line `klap: error: <what> [<where>]` with device printf, sets the pool's
// error flag (klap::pool_dev.error, read by klap::host_pool_error()) and aborts the whole grid with
// __trap(). The host then sees the kernel fail (cudaErrorLaunchFailure or similar, a sticky error:
// the CUDA context is unusable afterwards). Device printf output is flushed when the host
// synchronizes (CUDA programming guide, "Formatted Output").
#ifndef KLAP_ERROR_CUH
#define KLAP_ERROR_CUH

#include <cstdio>
#include <cuda/atomic>
#include "config.cuh"
#include "pool_state.cuh"

namespace klap {

namespace detail {

// Sets pool_dev.error = 1, makes it visible to the host, and aborts the grid (__trap). The caller
// printed the message. Never returns.
static __device__ __noinline__ void fail_raise() {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(pool_dev.error)
      .store(1u, cuda::std::memory_order_relaxed);
  __threadfence_system();
  __trap();
}

// %globaltimer in nanoseconds (PTX ISA, "Special Registers"): for the timeouts of spins.
__device__ inline unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace detail

// DEVICE, any thread. Prints `klap: error: <what><info> [<where>]`, sets pool_dev.error = 1, then
// __trap(). Never returns. `info` may be "" (check_launch passes the CUDA error string there).
static __device__ __noinline__ void fail_detail(const char* what, const char* info, const char* where) {
  printf("klap: error: %s%s [%s]\n", what, info, where);
  detail::fail_raise();
}

// DEVICE, any thread. Fatal error: prints `klap: error: <what> [<where>]`, sets the pool's error
// flag, then __trap() (the whole grid ends; the host sees a sticky launch error). `what` says what
// went wrong and how to fix it, `where` names the klap helper or call site. Never returns.
static __device__ inline void fail(const char* what, const char* where) { fail_detail(what, "", where); }

// DEVICE, any thread. Checks the result of a device-side launch (the value returned by a launch
// lambda, e.g. klap::launch_result(), or of cudaLaunchDevice). cudaSuccess: returns it. Otherwise
// calls fail("device-side launch failed: <cudaGetErrorString(e)>", where) and does not return.
static __device__ inline cudaError_t check_launch(cudaError_t e, const char* where) {
  if (e != cudaSuccess) fail_detail("device-side launch failed: ", cudaGetErrorString(e), where);
  return e;
}

// DEVICE, the thread that just made a launch. The error of THIS launch, for generated launch
// lambdas:
//     cudaError_t klap_pre = cudaPeekAtLastError(); child<<<g, b, sm, st>>>(...);
//     return klap::launch_result(klap_pre);
// The device runtime keeps one "last error" per thread (CUDA programming guide, CDP, "Error
// Handling"); a launch that fails sets it, a launch that succeeds leaves it as it was. So:
//   peeked error after the launch == cudaSuccess  -> cudaSuccess;
//   peeked error == `before` (the user's code left that error pending before the launch)
//                                                 -> cudaSuccess, and the user's error stays pending;
//   otherwise                                     -> that error, cleared (cudaGetLastError).
// Limitation: a launch that fails with exactly the error the user left pending is taken for a
// success (the device runtime gives no way to tell them apart); when a launch fails after the user
// left a different error pending, the user's error is lost (the launch's replaced it).
static __device__ inline cudaError_t launch_result(cudaError_t before) {
  const cudaError_t after = cudaPeekAtLastError();
  if (after == cudaSuccess || after == before) return cudaSuccess;
  (void)cudaGetLastError();
  return after;
}

namespace detail {

// A launch error that goes away when earlier launches start: the CDP2 pending-launch buffer is
// full (cudaErrorLaunchPendingCountExceeded; PLATFORM.md: CDP2 may report it as
// cudaErrorLaunchOutOfResources too).
__device__ inline bool launch_retryable(cudaError_t e) {
  return e == cudaErrorLaunchPendingCountExceeded || e == cudaErrorLaunchOutOfResources;
}

// Calls launch() (a launcher returning cudaError_t, which may be called again: generated lambdas
// take a fresh kernel-granularity state per call and give it back on failure) until it returns
// an error that is not launch_retryable, sleeping between tries with exponential back-off
// (__nanosleep 256 ns .. ~1 ms). After KLAP_LAUNCH_RETRY_MS of retryable failures it calls
// fail() with a message naming the pending-launch limit and how to raise it. Returns the last
// result (cudaSuccess, or a non-retryable error for check_launch).
template <class F>
__device__ cudaError_t launch_retrying(F&& launch, const char* where) {
  cudaError_t e = launch();
  if (!launch_retryable(e)) return e;
  const unsigned long long t0 = now_ns();
  unsigned ns = 256;
  for (;;) {
    __nanosleep(ns);
    if (ns < (1u << 20)) ns <<= 1;
    e = launch();
    if (!launch_retryable(e)) return e;
    if (now_ns() - t0 > static_cast<unsigned long long>(KLAP_LAUNCH_RETRY_MS) * 1000000ull) {
      printf("klap: error: device-side launch still fails after retrying for %d ms: %s; the CDP2 "
             "pending-launch buffer (cudaLimitDevRuntimePendingLaunchCount) is probably full: raise it "
             "with -DKLAP_PENDING_LAUNCH_LIMIT=<launches> (klap::host_prepare sets it; now %d) or "
             "-DKLAP_LAUNCH_RETRY_MS=<ms> [%s]\n",
             static_cast<int>(KLAP_LAUNCH_RETRY_MS), cudaGetErrorString(e),
             static_cast<int>(KLAP_PENDING_LAUNCH_LIMIT), where);
      fail_raise();
    }
  }
}

}  // namespace detail

}  // namespace klap

#endif  // KLAP_ERROR_CUH
