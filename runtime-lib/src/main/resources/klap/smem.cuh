// klap/smem.cuh -- HOST. Fits a kernel's dynamic shared memory limit to what a launch asks for.
//
// A block of a kernel may use at most cudaFuncAttributeMaxDynamicSharedMemorySize bytes of dynamic
// shared memory; unless the program raised it with cudaFuncSetAttribute, that limit is 48 KB minus
// the kernel's static shared memory (CUDA programming guide, "Shared Memory": dynamic allocations
// above 48 KB need an explicit opt-in; the opt-in maximum is cudaDevAttrMaxSharedMemoryPerBlockOptin,
// 227 KB on H100). klap's output can make a launch that ran as written exceed that limit:
//   * aggregation adds static shared memory to a kernel the host launches (the scan scratch of a
//     block-granularity parent, klap::block_group: about 2 KB), so a launch that asked for the
//     whole default 48 KB would fail with cudaErrorInvalidValue (pool.cuh: klap::host_smem);
//   * CUDA-NP grows the dynamic shared memory of a launch by its slave buffers (np.cuh: prepare).
// host_fit_dynamic_smem raises the kernel's limit to the launch's size when the device allows it.
// Shared by the aggregation (klap.cuh) and CUDA-NP (np.cuh) runtimes; depends on neither.
#ifndef KLAP_SMEM_CUH
#define KLAP_SMEM_CUH

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace klap {
namespace detail {

// (device, kernel) -> the largest dynamic shared memory size, bytes, known to be allowed.
struct dyn_smem_registry {
  std::mutex mu;
  std::map<std::pair<int, const void*>, size_t> limit;
};

// One registry per program (an inline function's static is shared by all translation units); never
// destroyed, so calls from other static destructors or atexit handlers stay valid.
inline dyn_smem_registry& dyn_smem_reg() {
  static dyn_smem_registry* r = new dyn_smem_registry();
  return *r;
}

// HOST. Makes the __global__ function `fn` launchable with `bytes` of dynamic shared memory on the
// current device. true at once for bytes == 0 (no CUDA call), and when bytes is within the kernel's
// limit (read once per device and kernel with cudaFuncGetAttributes) or the limit could be raised
// to bytes (cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize); raised only when
// needed, to the largest size asked for). false if the attributes cannot be read (no device) or the
// raise is refused (bytes plus the kernel's static shared memory above the device's opt-in
// maximum); the failed call's error is cleared (cudaGetLastError), so the caller's own error check
// does not see it. Thread-safe. A limit the program lowers later with cudaFuncSetAttribute is not
// seen (the cached value stays).
inline bool host_fit_dynamic_smem(const void* fn, size_t bytes) {
  if (bytes == 0) return true;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  dyn_smem_registry& r = dyn_smem_reg();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::pair<int, const void*> key(device, fn);
  auto it = r.limit.find(key);
  if (it == r.limit.end()) {
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    it = r.limit.emplace(key, static_cast<size_t>(attr.maxDynamicSharedSizeBytes > 0 ? attr.maxDynamicSharedSizeBytes
                                                                                    : 0)).first;
  }
  if (bytes <= it->second) return true;
  if (bytes > static_cast<size_t>(INT_MAX) ||
      cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  it->second = bytes;
  return true;
}

}  // namespace detail
}  // namespace klap

#endif  // KLAP_SMEM_CUH
