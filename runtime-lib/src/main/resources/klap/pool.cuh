// klap/pool.cuh -- the device memory pool of aggregated launch sites (KLAP paper II-C:
// "we instead allocate a single global memory pool from the host code and use atomic operations
// to grab memory from that pool instead of calling cudaMalloc in the kernel"), reclaimed on the
// device (issue 11): no host step recycles it, so host loops that launch without synchronizing,
// recursion and large inputs are bounded by the launches pending at one time, not by the run.
//
// THE SCHEME. The pool is one buffer cut into `nseg` segments of `seg_bytes` bytes. Each segment
// has ONE 64-bit word, changed only by atomic read-modify-writes:
//     word = (live << 40) | used        live: allocations in the segment not yet released
//                                       used: 16-byte units handed out since the segment was reset
// Allocation (pool_try_alloc), for `need` = 16-byte header + the request rounded up to 16 bytes:
//   * need <= seg_bytes: bump inside the current segment `cur`: ONE fetch_add of
//     (1 << 40) | need/16 on its word. If the old `used` leaves room, the caller owns
//     [used, used + need/16) of that segment. If not, the segment is full: the caller takes its
//     `live` back (fetch_sub) and moves `cur` on to a segment whose `live` is 0, which it first
//     resets to word 0 with a compare-and-swap (pool_advance).
//   * need > seg_bytes (a span): claims k = ceil(need / seg_bytes) consecutive segments, each by a
//     compare-and-swap from a word with live == 0 to (1 << 40) | full; if one cannot be claimed the
//     claimed ones are given back and the next window is tried.
// Release (pool_release): one fetch_sub of 1 << 40 on the word of each segment the allocation
// lies in. Nothing else: a segment whose `live` reaches 0 is reset lazily by the next pool_advance.
// Why it is safe: a segment is reset only by a compare-and-swap that sees live == 0, and every
// holder (and every thread between its fetch_add and its fetch_sub) counts in live, so no memory
// a thread still owns is handed out again. Ordering: releases are `release`, the reset and the
// bump are `acq_rel`, so what the previous owner did with the memory happens-before what the next
// owner does (each is a read-modify-write on the same word: C++ [intro.races] release sequences).
// Contention: one atomic per allocation on the current segment's word, like the bump pointer it
// replaces; moving `cur` is one scan of at most nseg words by the threads that found it full.
// Fragmentation: a segment comes back only when all its allocations are released, so one
// long-lived allocation keeps its whole segment; memory in use is bounded by the allocations
// pending at one time (each grid releases its records as soon as its blocks have read them),
// rounded up to segments, not by the launches of the whole run.
// What the allocations hold: the records of an aggregated launch, until every block of the child
// grid has copied its arguments (aggregate.cuh: child_release); kernel-granularity records and
// state, until the last child grid read them (kernel.cuh).
//
// Device side: klap::pool_alloc() / klap::pool_free() on this translation unit's pool (a static
// __device__ buffer cut into segments; the scheme, its ordering and its behaviour under
// contention are described above). When every segment holds live allocations,
// pool_alloc waits up to KLAP_POOL_WAIT_MS for child grids to give memory back, then reports the
// exhaustion (what was being allocated, how to raise the pool) and traps.
// Host side: klap::host_prepare(stream), wrapped around the stream argument of every host launch
// of a transformed kernel: it raises the CDP2 pending-launch limit once per device and remembers
// the launch's stream (for klap::host_kstate); klap::host_pool_error() reads the device error flag.
#ifndef KLAP_POOL_CUH
#define KLAP_POOL_CUH

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <cuda/atomic>
#include "config.cuh"
#include "pool_state.cuh"
#include "error.cuh"

namespace klap {

// This translation unit's pool on the current device (pool_dev, pool_bytes).
static __device__ inline pool_view pool_of_unit() {
  return pool_view{pool_bytes, pool_dev.seg, &pool_dev.cur, static_cast<unsigned>(pool_segments), pool_segment_bytes};
}

namespace detail {

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Prints what the exhausted pool was asked for and how to get more, then fails (never returns):
//   klap: error: memory pool exhausted while allocating <what> (<bytes> bytes; <live> of <nseg>
//   segments of <seg> bytes hold live allocations); raise it with klap --pool-size=<suggestion>
//   or -DKLAP_POOL_SIZE_BYTES ... [klap::pool_alloc]
static __device__ __noinline__ void pool_exhausted(const char* what, unsigned long long bytes) {
  const pool_view v = pool_of_unit();
  const unsigned long long cap = static_cast<unsigned long long>(v.nseg) * v.seg_bytes;
  const unsigned long long need = bytes + 2ull * v.seg_bytes;
  const unsigned long long mib = ((cap > need ? cap : need) * 2ull) / (1024ull * 1024ull) + 1ull;
  if (!pool_fits(v, bytes)) {
    printf("klap: error: memory pool too small for %s (%llu bytes, more than the whole pool of %llu bytes); raise "
           "it with klap --pool-size=%lluM or -DKLAP_POOL_SIZE_BYTES, or use a finer --granularity [klap::pool_alloc]\n",
           what, bytes, cap, mib);
    fail_raise();
  }
  printf("klap: error: memory pool exhausted while allocating %s (%llu bytes; %u of %u segments of %llu bytes hold "
         "records that child grids have not read yet, after waiting %d ms for them); raise it with klap "
         "--pool-size=%lluM or -DKLAP_POOL_SIZE_BYTES, or use a coarser --granularity (fewer, larger records) "
         "[klap::pool_alloc]\n",
         what, bytes, pool_live_segments(v), v.nseg, v.seg_bytes, static_cast<int>(KLAP_POOL_WAIT_MS), mib);
  fail_raise();
}

}  // namespace detail

// Allocates `bytes` bytes from this translation unit's pool and returns a 16-byte aligned device
// pointer (bytes == 0 gives a valid pointer to 0 bytes); the memory is not zeroed, and the 16
// bytes in front of it are its klap::pool_hdr (refs = 0). Any thread may call it, concurrently
// (pool_try_alloc: one atomic per allocation). Give it back with klap::pool_free, once.
// If no segment is free, waits (__nanosleep, up to KLAP_POOL_WAIT_MS) for releases by running
// child grids; then, or at once for a request larger than the pool, it calls klap::fail() (which
// traps) with a message that names `what` (e.g. "the slots of an aggregated launch"), the
// request, the segments in use and a pool size that would do. It never returns memory that is
// still in use.
static __device__ inline void* pool_alloc(unsigned long long bytes, const char* what = "klap runtime memory") {
  const pool_view v = pool_of_unit();
  void* p = pool_try_alloc(v, bytes);
  if (p != nullptr) return p;
  if (pool_fits(v, bytes)) {
    const unsigned long long t0 = detail::global_ns();
    unsigned ns = 256;
    while (detail::global_ns() - t0 < static_cast<unsigned long long>(KLAP_POOL_WAIT_MS) * 1000000ull) {
      __nanosleep(ns);
      if (ns < 65536u) ns *= 2u;
      if ((p = pool_try_alloc(v, bytes)) != nullptr) return p;
    }
  }
  detail::pool_exhausted(what, bytes);
  return nullptr;
}

// Gives back memory from klap::pool_alloc (of this translation unit). Any thread, once.
static __device__ inline void pool_free(void* p) { pool_release(pool_of_unit(), p); }

namespace detail {

// Host: prints `klap: error: <what>: <CUDA error string>` to stderr and exits with status 1.
static inline void host_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "klap: error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// The stream of this host thread's latest host_prepare call, i.e. of the launch being issued
// (klap::host_kstate allocates a kernel-granularity state in it).
static inline cudaStream_t& host_current_stream() {
  static thread_local cudaStream_t s = 0;
  return s;
}

}  // namespace detail

// HOST. Prepares one host launch of a transformed kernel and returns `s` unchanged, so that
// generated host code reads `parent<<<g, b, smem, klap::host_prepare(s)>>>(...)`.
//   First call on each device: raises cudaLimitDevRuntimePendingLaunchCount to at least
//   KLAP_PENDING_LAUNCH_LIMIT (never lowers it; CUDA programming guide, CDP, "Launch Environment
//   Configuration"); if the driver refuses, prints a warning and goes on (the program may fit the
//   current limit; a device launch past it is reported by klap::check_launch).
//   Every call: remembers `s` as this host thread's current launch stream (host_kstate).
// The pool needs no host step: it is static device memory, reclaimed on the device. Thread-safe.
// On a CUDA error other than the limit's: prints `klap: error: ...` and calls std::exit(1).
static inline cudaStream_t host_prepare(cudaStream_t s = 0) {
  static std::mutex mu;
  static std::set<int> raised;
  int dev = 0;
  detail::host_check(cudaGetDevice(&dev), "klap::host_prepare: cudaGetDevice");
  {
    std::lock_guard<std::mutex> lock(mu);
    if (raised.insert(dev).second) {
      size_t pending = 0;
      detail::host_check(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount),
                         "klap::host_prepare: cudaDeviceGetLimit(cudaLimitDevRuntimePendingLaunchCount)");
      if (pending < static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT)) {
        const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                                 static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT));
        if (e != cudaSuccess) {
          std::fprintf(stderr,
                       "klap: warning: cannot raise cudaLimitDevRuntimePendingLaunchCount from %zu to %zu: %s\n",
                       pending, static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT), cudaGetErrorString(e));
          (void)cudaGetLastError();  // not sticky: clear it so that the program's own checks do not see it
        }
      }
    }
  }
  detail::host_current_stream() = s;
  return s;
}

// HOST. Returns the pool's error flag (klap::pool_dev.error): 0 = no device-side klap error so far,
// 1 = klap::fail() ran. Returns 0xFFFFFFFF if the flag cannot be read, which is what happens after
// fail() trapped: the trap leaves a sticky error in the CUDA context (its message was printed).
static inline unsigned host_pool_error() {
  unsigned e = 0;
  if (cudaMemcpyFromSymbol(&e, pool_dev, sizeof(e), offsetof(pool_state, error)) != cudaSuccess) return 0xFFFFFFFFu;
  return e;
}

}  // namespace klap

#endif  // KLAP_POOL_CUH
