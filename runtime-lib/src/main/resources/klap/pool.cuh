// klap/pool.cuh -- the device memory pool of aggregated launch sites (KLAP paper II-C:
// "we instead allocate a single global memory pool from the host code and use atomic operations
// to grab memory from that pool instead of calling cudaMalloc in the kernel").
//
// Device side: klap::pool_alloc(), a 16-byte aligned bump allocator on klap::pool_dev
// (declared in pool_state.cuh, one pool per translation unit) that reports exhaustion instead of
// handing out memory past the end. Until host_prepare has run (a kernel launched from a file klap
// never saw), it allocates from a static reserve pool (pool_state.cuh).
// Host side: klap::host_prepare(stream), wrapped around the stream argument of every host launch
// of a transformed kernel: it allocates the pool on first use on each device, sizes the CDP2
// pending-launch limit and recycles the pool when nothing that may still use it is in flight;
// klap::host_pool_error() reads the device error flag.
#ifndef KLAP_POOL_CUH
#define KLAP_POOL_CUH

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include <cuda/atomic>
#include "config.cuh"
#include "pool_state.cuh"
#include "error.cuh"

namespace klap {

namespace detail {

// Prints what the exhausted pool was asked for and how to get more, then fails (never returns):
//   klap: error: memory pool exhausted while allocating <what> (<bytes> bytes; <in use> of
//   <capacity> bytes in use); raise it with klap --pool-size=<suggestion> or
//   -DKLAP_POOL_SIZE_BYTES, or let the host synchronize between launches ... [klap::pool_alloc]
static __device__ __noinline__ void pool_exhausted(const pool_state& P, const char* what, unsigned long long bytes,
                                                   unsigned long long used) {
  const unsigned long long cap = P.capacity;
  unsigned long long mib = ((cap > used ? cap : used) + bytes) / (1024ull * 1024ull) * 2ull + 1ull;
  if (&P == &pool_reserve) {
    printf("klap: error: memory pool exhausted while allocating %s (%llu bytes; %llu of %llu bytes in use): no "
           "klap::host_prepare(stream) has run (the kernel was launched from code klap did not transform), so the "
           "launches used the reserve pool, which nothing recycles; launch through klap::host_prepare, transform the "
           "launching file too (klap-nvcc does), or raise -DKLAP_RESERVE_POOL_BYTES [klap::pool_alloc]\n",
           what, bytes, used < cap ? used : cap, cap);
    fail_raise();
  }
  printf("klap: error: memory pool exhausted while allocating %s (%llu bytes; %llu of %llu bytes in use); "
         "raise it with klap --pool-size=%lluM or -DKLAP_POOL_SIZE_BYTES, or synchronize the host between "
         "launches of transformed kernels (klap::host_prepare recycles the pool only when every earlier launch "
         "has completed) [klap::pool_alloc]\n",
         what, bytes, used < cap ? used : cap, cap, mib);
  fail_raise();
}

}  // namespace detail

// Allocates `bytes` bytes (rounded up to a multiple of 16) from the pool and returns a 16-byte
// aligned device pointer; bytes == 0 gives a valid pointer to 0 bytes. Any thread may call it,
// concurrently: one device-scope atomic fetch_add on the offset of the pool in use (cuda::atomic_ref,
// relaxed: the returned range is private to the caller). If the range would pass the end of the
// pool, it calls klap::fail() (which traps): it never returns memory past the end; the message names `what` (e.g. "aggregated launch slots (agg_begin)"), the request, the
// bytes in use and a pool size that would do. The memory is not zeroed and stays valid until the
// host recycles the pool (host_prepare after every earlier launch completed). While no
// host_prepare has run (a kernel launched from code klap did not transform), it allocates from
// the unit's reserve pool (pool_reserve, KLAP_RESERVE_POOL_BYTES of static device memory), which
// nothing recycles.
static __device__ inline void* pool_alloc(unsigned long long bytes, const char* what = "klap runtime memory") {
  // before any host_prepare (a launch from code klap did not transform), the reserve pool; the host
  // writes pool_dev.base last (host_prepare), so a thread that sees it also sees its capacity
  char* const hb = cuda::atomic_ref<char*, cuda::thread_scope_device>(pool_dev.base).load(cuda::std::memory_order_acquire);
  pool_state& P = hb != nullptr ? pool_dev : pool_reserve;
  char* const base = hb != nullptr ? hb : P.base;
  const unsigned long long cap = P.capacity;
  const unsigned long long rounded = (bytes + 15ull) & ~15ull;
  if (rounded < bytes || rounded > cap)  // wrapped around, or larger than the pool
    detail::pool_exhausted(P, what, bytes, 0ull);
  const unsigned long long off =
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(P.offset).fetch_add(rounded, cuda::std::memory_order_relaxed);
  // off + rounded cannot wrap: offset grows by at most capacity (< 2^63) per call and
  // every caller that passes the end traps.
  if (off > cap || cap - off < rounded) detail::pool_exhausted(P, what, bytes, off);
  return base + off;
}

namespace detail {

// Host: prints `klap: error: <what>: <CUDA error string>` to stderr and exits with status 1.
static inline void host_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "klap: error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Host-side bookkeeping of host_prepare (one per translation unit, like pool_dev).
struct host_pool {
  std::mutex mu;
  bool ready = false;
  bool has_last = false;    // a launch was prepared since the last recycle ...
  cudaStream_t last = 0;    // ... into this stream (the stream argument of the latest call)
  // Streams used by launches prepared since the last recycle, each with an event recorded after
  // the latest prepared launch into that stream (at the prepare call that followed it).
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  std::vector<cudaEvent_t> spare;  // events released by a recycle, for reuse
  // The last recycle (an async copy into reset_stream) may not have run yet: launches into other
  // streams must wait for it (cudaStreamWaitEvent), or they could allocate before it and have their
  // memory handed out again after it.
  bool reset_pending = false;
  cudaStream_t reset_stream = 0;
  cudaEvent_t reset_event = nullptr;
};

// The stream of this host thread's latest host_prepare call, i.e. of the launch being issued
// (klap::host_kstate zeroes a kernel-granularity state into it).
static inline cudaStream_t& host_current_stream() {
  static thread_local cudaStream_t s = 0;
  return s;
}

// The bookkeeping of the current device (cudaGetDevice): every device has its own copy of
// pool_dev (a __device__ variable exists once per device), so each gets its own pool, events and
// recycling. Function-local statics: constructed on first use, thread-safe.
static inline host_pool& host_pool_instance() {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<host_pool>> pools;
  int dev = 0;
  host_check(cudaGetDevice(&dev), "klap::host_prepare: cudaGetDevice");
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<host_pool>& p = pools[dev];
  if (!p) p.reset(new host_pool());
  return *p;
}

static inline cudaEvent_t host_new_event(host_pool& hp) {
  cudaEvent_t ev;
  if (!hp.spare.empty()) {
    ev = hp.spare.back();
    hp.spare.pop_back();
  } else {
    host_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
               "klap::host_prepare: cudaEventCreateWithFlags");
  }
  return ev;
}

}  // namespace detail

// HOST. Prepares the pool for one host launch of a transformed kernel and returns `s` unchanged,
// so that generated host code reads `parent<<<g, b, smem, klap::host_prepare(s)>>>(...)`.
//   First call on a device: cudaMalloc's that device's pool (KLAP_POOL_SIZE_BYTES), copies {base, capacity, 0, 0} to
//   klap::pool_dev (base last: until then, kernels allocate from the reserve pool), and raises
//   cudaLimitDevRuntimePendingLaunchCount to at least KLAP_PENDING_LAUNCH_LIMIT (never lowers it; CUDA programming guide, CDP, "Launch Environment
//   Configuration": set it before the first kernel that launches from the device; if the driver
//   refuses, a warning is printed and the program goes on).
//   Every call: the launch prepared by the previous call has been issued by now, so an event is
//   recorded into the previous call's stream; it covers every earlier prepared launch into that
//   stream (and their device-side children: a grid completes only after all grids it launched).
//   If the events of all streams used since the last recycle have completed (cudaEventQuery), no
//   launch can still use pool memory: offset is reset to 0 with cudaMemcpyToSymbolAsync into `s`,
//   i.e. ordered before the launch that follows; until that copy has run, launches prepared into
//   other streams wait for it (cudaStreamWaitEvent). Otherwise the pool keeps growing.
// Thread-safe (std::mutex). Limitations: (1) the stream of one call must still exist at the next
// call (an event is recorded into it then); (2) two host threads that prepare and launch
// concurrently can race between one thread's prepare and its launch, so the recycle is only safe
// when one host thread at a time launches transformed kernels. On any CUDA error: prints
// `klap: error: ...` to stderr and calls std::exit(1).
namespace detail {
// Prepares THIS translation unit's pool for a launch into stream s (the body of host_prepare for
// one unit; see host_prepare below).
static void host_prepare_this_unit(cudaStream_t s) {
  detail::host_pool& hp = detail::host_pool_instance();
  std::lock_guard<std::mutex> lock(hp.mu);
  if (!hp.ready) {
    pool_state st{};
    detail::host_check(cudaMalloc(reinterpret_cast<void**>(&st.base),
                                  static_cast<size_t>(KLAP_POOL_SIZE_BYTES)),
                       "klap::host_prepare: cudaMalloc of the memory pool "
                       "(lower it with klap --pool-size or -DKLAP_POOL_SIZE_BYTES)");
    st.capacity = static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES);
    // everything but base first, then base: a kernel already running (launched without
    // host_prepare, allocating from the reserve) switches to this pool only once base is set
    detail::host_check(cudaMemcpyToSymbol(pool_dev, reinterpret_cast<const char*>(&st) + sizeof(st.base),
                                          sizeof(st) - sizeof(st.base), sizeof(st.base)),
                       "klap::host_prepare: cudaMemcpyToSymbol(klap::pool_dev)");
    detail::host_check(cudaMemcpyToSymbol(pool_dev, &st.base, sizeof(st.base), 0),
                       "klap::host_prepare: cudaMemcpyToSymbol(klap::pool_dev.base)");
    size_t pending = 0;
    detail::host_check(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount),
                       "klap::host_prepare: cudaDeviceGetLimit(cudaLimitDevRuntimePendingLaunchCount)");
    if (pending < static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT)) {
      // Not fatal: the program may still fit the current limit; a device launch past it is
      // reported by klap::check_launch.
      const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                               static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT));
      if (e != cudaSuccess) {
        std::fprintf(stderr,
                     "klap: warning: cannot raise cudaLimitDevRuntimePendingLaunchCount from %zu to %zu: %s\n",
                     pending, static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT), cudaGetErrorString(e));
        (void)cudaGetLastError();  // not sticky: clear it so that the program's own checks do not see it
      }
    }
    hp.ready = true;
  } else if (hp.has_last) {
    size_t i = 0;
    while (i < hp.streams.size() && hp.streams[i] != hp.last) ++i;
    if (i == hp.streams.size()) {
      hp.streams.push_back(hp.last);
      hp.events.push_back(detail::host_new_event(hp));
    }
    detail::host_check(cudaEventRecord(hp.events[i], hp.last), "klap::host_prepare: cudaEventRecord");
    bool all_done = true;
    for (cudaEvent_t ev : hp.events) {
      const cudaError_t q = cudaEventQuery(ev);
      if (q == cudaErrorNotReady) {
        all_done = false;
        break;
      }
      detail::host_check(q, "klap::host_prepare: cudaEventQuery");
    }
    if (all_done) {
      static const unsigned long long zero = 0;
      detail::host_check(cudaMemcpyToSymbolAsync(pool_dev, &zero, sizeof(zero),
                                                 offsetof(pool_state, offset),
                                                 cudaMemcpyHostToDevice, s),
                         "klap::host_prepare: cudaMemcpyToSymbolAsync(klap::pool_dev.offset)");
      hp.spare.insert(hp.spare.end(), hp.events.begin(), hp.events.end());
      hp.streams.clear();
      hp.events.clear();
      if (hp.reset_event == nullptr)
        detail::host_check(cudaEventCreateWithFlags(&hp.reset_event, cudaEventDisableTiming),
                           "klap::host_prepare: cudaEventCreateWithFlags");
      detail::host_check(cudaEventRecord(hp.reset_event, s), "klap::host_prepare: cudaEventRecord");
      hp.reset_pending = true;
      hp.reset_stream = s;
    }
  }
  if (hp.reset_pending) {
    const cudaError_t q = cudaEventQuery(hp.reset_event);
    if (q == cudaSuccess) {
      hp.reset_pending = false;
    } else if (q != cudaErrorNotReady) {
      detail::host_check(q, "klap::host_prepare: cudaEventQuery");
    } else if (s != hp.reset_stream) {
      detail::host_check(cudaStreamWaitEvent(s, hp.reset_event, 0),
                         "klap::host_prepare: cudaStreamWaitEvent");
    }
  }
  hp.last = s;
  hp.has_last = true;
  detail::host_current_stream() = s;
}

// The translation units of the program that include klap: a host-side registry shared by all of
// them. host_units() is an `inline` function with external linkage, so the host linker keeps one
// instance of its static vector for the whole program (C++ [dcl.inline]); each unit adds its own
// host_prepare_this_unit during static initialization.
using unit_prepare_fn = void (*)(cudaStream_t);
inline std::vector<unit_prepare_fn>& host_units() {
  static std::vector<unit_prepare_fn> units;
  return units;
}
inline std::mutex& host_units_mutex() {
  static std::mutex mu;
  return mu;
}
struct host_unit_registrar {
  explicit host_unit_registrar(unit_prepare_fn f) {
    std::lock_guard<std::mutex> lock(host_units_mutex());
    host_units().push_back(f);
  }
};
static host_unit_registrar host_unit_registered(&host_prepare_this_unit);
}  // namespace detail

// HOST. Prepares the pools of EVERY translation unit that includes klap (one pool each, see
// pool_state.cuh) for one host launch, as described above, and returns `s` unchanged. Preparing
// all units, not only the caller's, lets a host launch in one file start a transformed kernel
// defined in another (klap-nvcc builds of several files).
static inline cudaStream_t host_prepare(cudaStream_t s = 0) {
  std::vector<detail::unit_prepare_fn> units;
  {
    std::lock_guard<std::mutex> lock(detail::host_units_mutex());
    units = detail::host_units();
  }
  for (detail::unit_prepare_fn f : units) f(s);
  return s;
}

// HOST. Returns the pool's error flag (klap::pool_dev.error): 0 = no device-side klap error so far,
// 1 = klap::fail() ran. Returns 0xFFFFFFFF if the flag cannot be read, which is what happens after
// fail() trapped: the trap leaves a sticky error in the CUDA context (its message was printed).
static inline unsigned host_pool_error() {
  pool_state st{};
  if (cudaMemcpyFromSymbol(&st, pool_dev, sizeof(st)) != cudaSuccess) return 0xFFFFFFFFu;
  return st.error;
}

}  // namespace klap

#endif  // KLAP_POOL_CUH
