// klap/pool_state.cuh -- the device-side state of the klap memory pool (KLAP paper II-C).
//
// Split from pool.cuh only so that error.cuh (which sets the pool's error flag) and pool.cuh
// (whose allocator reports errors through error.cuh) need no circular include. Include
// "klap/pool.cuh" or "klap/klap.cuh" rather than this file.
#ifndef KLAP_POOL_STATE_CUH
#define KLAP_POOL_STATE_CUH

#include "config.cuh"

namespace klap {

// The pool: one contiguous cudaMalloc'ed buffer handed out by an atomic bump pointer.
//   base      device address of the buffer (nullptr until klap::host_prepare() ran)
//   capacity  its size in bytes (KLAP_POOL_SIZE_BYTES)
//   offset    bytes handed out since the last recycle; only grows on the device, reset to 0 by
//             the host (host_prepare) when no launch that may still use the pool is in flight.
//             It may pass `capacity` after a failed allocation (the allocation then fails).
//   error     0 = no error; 1 = klap::fail() was called on the device (pool exhausted, device-side
//             launch failed, ...). Read from the host with klap::host_pool_error().
struct pool_state {
  char* base;
  unsigned long long capacity;
  unsigned long long offset;
  unsigned int error;
};

// One pool per translation unit: `static` gives internal linkage, so this works with -rdc=true and
// several .cu files that each include klap.cuh (no duplicate-symbol link error). Kernels use the
// pool of the translation unit that defines them; host_prepare() sets up the pools of all
// translation units (a registry shared across units, see pool.cuh). Everything that touches pool_dev (fail, check_launch,
// pool_alloc, child_enter, agg_site, agg_begin, host_prepare, host_pool_error) has internal
// linkage too (`static` or an unnamed namespace), so that the device linker never merges two
// translation units' copies into one that uses the other unit's pool.
static __device__ pool_state pool_dev;

// The reserve pool of this translation unit: KLAP_RESERVE_POOL_BYTES of static device memory that
// pool_alloc uses while pool_dev has no buffer, i.e. before any klap::host_prepare() ran (a
// transformed kernel launched only from code klap did not transform). Statically initialized, so
// it needs no set-up step on the host or the device; never recycled. Its error flag is unused
// (errors go to pool_dev.error).
static __device__ __align__(16) char pool_reserve_bytes[KLAP_RESERVE_POOL_BYTES];
static __device__ pool_state pool_reserve = {pool_reserve_bytes, KLAP_RESERVE_POOL_BYTES, 0ull, 0u};

}  // namespace klap

#endif  // KLAP_POOL_STATE_CUH
