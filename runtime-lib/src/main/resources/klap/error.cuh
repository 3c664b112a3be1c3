// klap/error.cuh -- fatal error reporting from device code.
//
// The klap runtime never continues with corrupt state: an exhausted pool or a failed device-side
// launch prints one line `klap: error: <what> [<where>]` with device printf, sets the pool's
// error flag (klap::pool_dev().error, read by klap::host_pool_error()) and aborts the whole grid with
// __trap(). The host then sees the kernel fail (cudaErrorLaunchFailure or similar, a sticky error:
// the CUDA context is unusable afterwards). Device printf output is flushed when the host
// synchronizes (CUDA programming guide, "Formatted Output").
#ifndef KLAP_ERROR_CUH
#define KLAP_ERROR_CUH

#include <cstdio>
#include <cuda/atomic>
#include "pool_state.cuh"

namespace klap {

namespace detail {
// Sets pool_dev().error = 1, makes it visible to the host, then __trap(). Never returns. The caller
// has printed the `klap: error: ...` line.
static __device__ __noinline__ void fail_raise() {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(pool_dev().error)
      .store(1u, cuda::std::memory_order_relaxed);
  __threadfence_system();
  __trap();
}
}  // namespace detail

// Prints `klap: error: <what><detail> [<where>]`, sets pool_dev().error = 1, then __trap().
// Never returns. `detail` may be "" (used by check_launch for the CUDA error string).
static __device__ __noinline__ void fail_detail(const char* what, const char* detail, const char* where) {
  printf("klap: error: %s%s [%s]\n", what, detail, where);
  detail::fail_raise();
}

// Fatal error: prints `klap: error: <what> [<where>]`, sets the pool's error flag, then __trap().
// `what` says what went wrong and how to fix it, `where` names the klap helper or call site.
static __device__ inline void fail(const char* what, const char* where) { fail_detail(what, "", where); }

namespace detail {
// true if the device runtime can launch `grid` x `block` at all (CUDA programming guide, "Technical
// Specifications per Compute Capability": block x and y <= 1024, z <= 64, at most 1024 threads;
// grid x <= 2^31 - 1, y and z <= 65535). Such a launch of one thread fails for that thread alone in
// the original program; folded into an aggregated grid it would fail every thread's children, so
// the runtime launches it as written instead (review 2026-11-27). Dynamic shared memory is not
// checked: a kernel's limit may have been raised with cudaFuncSetAttribute.
__device__ inline bool launchable(const dim3& grid, const dim3& block) {
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  return block.x <= 1024u && block.y <= 1024u && block.z <= 64u && threads <= 1024ull &&
         grid.x <= 0x7FFFFFFFu && grid.y <= 65535u && grid.z <= 65535u;
}
// A kernel that does nothing (raise_config_error launches it with a configuration no device accepts).
static __global__ void noop_kernel() {}
}  // namespace detail

// Where the program launched a child with a configuration no device accepts (an empty grid or
// block, or !detail::launchable), the original launch failed there and left its error pending for
// the launching thread alone, for the program's own cudaGetLastError()/cudaPeekAtLastError() (CUDA
// programming guide, CDP, "Error Handling": one last error per thread). klap records launches and
// makes them later, so it makes the same error pending where the original launch was: it launches
// a kernel that does nothing with that configuration, which the device runtime refuses as it did
// the original (it runs nothing). Returns true if that launch failed: the caller then records
// nothing (the original launched nothing); false if the device accepted the configuration after
// all (a device beyond launchable's limits): the caller launches the child as written. A template,
// so that a file that includes the runtime but never records builds without -rdc. Found on the
// H200 (2026-11-28, review reproducer C_launch_err: the program's fallback after a refused launch
// never ran).
template <int = 0>
__device__ bool raise_config_error(dim3 grid, dim3 block, unsigned smem, cudaStream_t stream) {
  detail::noop_kernel<<<grid, block, smem, stream>>>();
  return cudaPeekAtLastError() != cudaSuccess;
}

namespace detail {
// The two errors a full CDP2 pending-launch buffer may give (PLATFORM.md: which one it returns is
// not yet observed). check_launch adds a hint to them; a refused aggregated launch with either is
// reported, not launched as written (that would only make more launches).
__device__ inline bool pending_buffer_full(cudaError_t e) {
  return e == cudaErrorLaunchPendingCountExceeded || e == cudaErrorLaunchOutOfResources;
}

// The device runtime refused an aggregated launch (error e); agg_site::flush or kfinish (`where`)
// then launches its children as written. The program's first
// refusal (per pool and device) prints, once:
//   klap: warning: the device runtime refused an aggregated launch (<error>); its children are
//   launched as written (correct, slower) ...
// A kernel attribute the program set where klap could not see it (cudaFuncSetAttribute on the
// child in another file, or through a function pointer) is the usual cause: the aggregated variant
// keeps the default (e.g. 48 KB of dynamic shared memory).
static __device__ __noinline__ void aggregate_refused(cudaError_t e, const char* where = "klap::agg_site::flush") {
  if (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pool_dev().refused_warned)
          .exchange(1u, cuda::std::memory_order_relaxed) != 0u)
    return;
  printf("klap: warning: the device runtime refused an aggregated launch (%s); its children are launched as "
         "written (correct, slower). If the program sets an attribute of the child kernel where klap cannot see it "
         "(cudaFuncSetAttribute in another file), set it in the transformed file too (printed once) [%s]\n",
         cudaGetErrorString(e), where);
}
}  // namespace detail

// Checks the result of a device-side launch (the value of cudaGetLastError() right after `<<<>>>`,
// or of cudaLaunchDevice). On failure (e.g. cudaErrorLaunchPendingCountExceeded when the CDP2
// pending-launch buffer is full, see klap::host_prepare) it calls
// fail("device-side launch failed: <cudaGetErrorString(e)>", where). Returns e.
// The two errors a full pending-launch buffer may give (detail::pending_buffer_full) get a hint
// on how to raise it.
static __device__ inline cudaError_t check_launch(cudaError_t e, const char* where) {
  if (detail::pending_buffer_full(e))
    fail_detail("device-side launch failed (if the device runtime's pending-launch buffer is full, raise "
                "cudaLimitDevRuntimePendingLaunchCount: -DKLAP_PENDING_LAUNCH_LIMIT=<more>, or cudaDeviceSetLimit "
                "before the first launch): ",
                cudaGetErrorString(e), where);
  if (e != cudaSuccess) fail_detail("device-side launch failed: ", cudaGetErrorString(e), where);
  return e;
}

// The result of the device-side launch the caller just made, not an error the user's code left
// pending before it. Generated launch lambdas read
//     cudaError_t klap_pre = cudaPeekAtLastError(); child<<<...>>>(...); return klap::launch_result(klap_pre);
// If the error pending after the launch is cudaSuccess or equals `before`, the launch succeeded
// (the user's pending error, if any, stays pending for the user's own check); otherwise the
// launch's error is cleared (cudaGetLastError) and returned. Limitation: a launch that fails with
// exactly the user's pending error is taken as a success. Source: CUDA programming guide, CDP,
// "Error Handling" (the device runtime keeps one last error per thread).
static __device__ inline cudaError_t launch_result(cudaError_t before) {
  const cudaError_t after = cudaPeekAtLastError();
  if (after == cudaSuccess || after == before) return cudaSuccess;
  (void)cudaGetLastError();
  return after;
}

}  // namespace klap

#endif  // KLAP_ERROR_CUH
