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
// Device side: klap::pool_alloc() / klap::pool_free() on the program's pool (one static
// __device__ buffer for all the files of a program, cut into segments: pool_state.cuh; the
// scheme, its ordering and its behaviour under contention are described above). When every
// segment holds live allocations, pool_alloc waits up to KLAP_POOL_WAIT_MS for child grids to
// give memory back, then reports the exhaustion (what was being allocated, how to raise the pool)
// and traps.
// EXHAUSTION WITH A FALLBACK. The slots of an aggregated warp/block launch site are taken with
// pool_alloc_or_null: after KLAP_POOL_FALLBACK_WAIT_US without room (or at once for slots larger
// than the pool) the group launches its children as written, each thread its own launch, where
// the aggregated launch would have been (aggregate.cuh); a one-time warning says so and
// host_pool_fallbacks() counts it. This is the program's own behaviour, so it is correct; it is
// slower, and it needs the device's pending-launch buffer the original program needed.
// Kernel-granularity records and states (kernel.cuh krecord, kstate_new) fail on exhaustion (wait
// KLAP_POOL_WAIT_MS, report, trap). With KLAP_KERNEL_TAIL_FALLBACK=1 they use pool_alloc_or_null
// in kernels that make no tail launches of their own: a record without room marks the parent grid
// degraded, and its launches go out as written into cudaStreamTailLaunch from then on; that
// fallback hung on the H200 (2026-11-27), so it is off by default (config.cuh).
// Pending launches: pending_acquire/pending_release keep klap's own aggregated launches within a
// share of the device's pending-launch limit (below).
// Host side: klap::host_prepare(stream, launches), wrapped around the stream argument of every host
// launch of a transformed kernel: it raises the CDP2 pending-launch limit where the launch needs
// more than the device has, and remembers the launch's stream (for klap::host_kstate);
// klap::host_pool_error() reads the device error flag.
#ifndef KLAP_POOL_CUH
#define KLAP_POOL_CUH

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <map>
#include <cuda/atomic>
#include "config.cuh"
#include "pool_state.cuh"
#include "error.cuh"
#include "smem.cuh"

namespace klap {

// The program's pool on the current device (pool_dev(), pool_bytes(): pool_state.cuh).
static __device__ inline pool_view pool_of_program() {
  return pool_view{pool_bytes(), pool_dev().seg, &pool_dev().cur, static_cast<unsigned>(pool_segments),
                   pool_segment_bytes};
}

namespace detail {

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A --pool-size (MiB) that would hold `bytes` and twice what the pool has now, at most 1024 (the
// largest --pool-size; the messages also suggest another granularity).
static __device__ inline unsigned long long pool_suggest_mib(const pool_view& v, unsigned long long bytes) {
  const unsigned long long cap = static_cast<unsigned long long>(v.nseg) * v.seg_bytes;
  const unsigned long long need = bytes + 2ull * v.seg_bytes;
  const unsigned long long mib = ((cap > need ? cap : need) * 2ull) / (1024ull * 1024ull) + 1ull;
  return mib < 1024ull ? mib : 1024ull;
}

// Prints what the exhausted pool was asked for and how to get more, then fails (never returns):
//   klap: error: memory pool exhausted while allocating <what> (<bytes> bytes; <live> of <nseg>
//   segments of <seg> bytes hold live allocations); raise it with klap --pool-size=<suggestion>
//   or -DKLAP_POOL_SIZE_BYTES ... [klap::pool_alloc]
static __device__ __noinline__ void pool_exhausted(const char* what, unsigned long long bytes) {
  const pool_view v = pool_of_program();
  const unsigned long long cap = static_cast<unsigned long long>(v.nseg) * v.seg_bytes;
  const unsigned long long mib = pool_suggest_mib(v, bytes);
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

// Counts one fallback of the program's pool and, the first time only, prints why and what the
// program does instead (`instead`):
//   klap: warning: memory pool full while allocating <what> (...); <instead> (correct, slower) ...
static __device__ __noinline__ void pool_fell_back(const char* what, unsigned long long bytes, const char* instead) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(pool_dev().fallbacks)
      .fetch_add(1ull, cuda::std::memory_order_relaxed);
  if (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pool_dev().warned)
          .exchange(1u, cuda::std::memory_order_relaxed) != 0u)
    return;
  const pool_view v = pool_of_program();
  const unsigned long long cap = static_cast<unsigned long long>(v.nseg) * v.seg_bytes;
  if (!pool_fits(v, bytes))
    printf("klap: warning: memory pool too small for %s (%llu bytes, more than the whole pool of %llu bytes); %s "
           "(correct, slower); raise it with klap --pool-size=%lluM or -DKLAP_POOL_SIZE_BYTES (printed once) "
           "[klap::pool_alloc_or_null]\n",
           what, bytes, cap, instead, pool_suggest_mib(v, bytes));
  else
    printf("klap: warning: memory pool full while allocating %s (%llu bytes; %u of %u segments of %llu bytes hold "
           "records that child grids have not read yet, after waiting %d us for them); %s (correct, slower); raise it "
           "with klap --pool-size=%lluM or -DKLAP_POOL_SIZE_BYTES (printed once) [klap::pool_alloc_or_null]\n",
           what, bytes, pool_live_segments(v), v.nseg, v.seg_bytes, static_cast<int>(KLAP_POOL_FALLBACK_WAIT_US),
           instead, pool_suggest_mib(v, bytes));
}

// Takes `bytes` bytes from v, waiting up to `wait_ns` nanoseconds (__nanosleep, doubling from
// 256 ns to 65 us) for releases by running child grids; nullptr if there is still no room, at
// once if the request can never fit.
static __device__ inline void* pool_wait_alloc(const pool_view& v, unsigned long long bytes,
                                               unsigned long long wait_ns) {
  void* p = pool_try_alloc(v, bytes);
  if (p != nullptr || !pool_fits(v, bytes)) return p;
  const unsigned long long t0 = global_ns();
  unsigned ns = 256;
  while (global_ns() - t0 < wait_ns) {
    __nanosleep(ns);
    if (ns < 65536u) ns *= 2u;
    if ((p = pool_try_alloc(v, bytes)) != nullptr) return p;
  }
  return nullptr;
}

}  // namespace detail

// What a caller of the pool does when it has no room (aggregate.cuh agg_begin, kernel.cuh krecord
// and kstate_new):
//   fail               wait up to KLAP_POOL_WAIT_MS, then report the exhaustion and trap (pool_alloc)
//   launch_as_written  wait up to KLAP_POOL_FALLBACK_WAIT_US (pool_alloc_or_null), then launch the
//                      children as the program wrote them: agg_begin's group runs its site in direct
//                      mode (each thread launches its own launch at flush); at kernel granularity the
//                      parent grid launches its children as written into cudaStreamTailLaunch from
//                      then on (kernel.cuh). The caller must hold the direct launcher.
enum class on_full { fail, launch_as_written };

// Allocates `bytes` bytes from the program's pool and returns a 16-byte aligned device
// pointer (bytes == 0 gives a valid pointer to 0 bytes); the memory is not zeroed, and the 16
// bytes in front of it are its klap::pool_hdr (refs = 0). Any thread may call it, concurrently
// (pool_try_alloc: one atomic per allocation). Give it back with klap::pool_free, once.
// If no segment is free, waits (__nanosleep, up to KLAP_POOL_WAIT_MS) for releases by running
// child grids; then, or at once for a request larger than the pool, it calls klap::fail() (which
// traps) with a message that names `what` (e.g. "the slots of an aggregated launch"), the
// request, the segments in use and a pool size that would do. It never returns memory that is
// still in use. For callers that have a correct path without the memory: pool_alloc_or_null.
static __device__ inline void* pool_alloc(unsigned long long bytes, const char* what = "klap runtime memory") {
  void* p = detail::pool_wait_alloc(pool_of_program(), bytes,
                                    static_cast<unsigned long long>(KLAP_POOL_WAIT_MS) * 1000000ull);
  if (p == nullptr) detail::pool_exhausted(what, bytes);
  return p;
}

// As pool_alloc, for a caller that has a correct path that needs no pool memory (issue 11:
// "exhaustion ... falls back to a correct path where one exists"): waits at most
// KLAP_POOL_FALLBACK_WAIT_US for room, then returns nullptr instead of failing (at once for a
// request larger than the pool). Each nullptr counts in pool_dev().fallbacks (host:
// klap::host_pool_fallbacks); the first one of the program (per pool and device) prints a one-time
// `klap: warning: memory pool full while allocating <what> ...; <instead> (correct, slower); raise
// it with klap --pool-size=...`, `instead` saying what the caller does without the memory.
static __device__ inline void* pool_alloc_or_null(unsigned long long bytes, const char* what, const char* instead) {
  void* p = detail::pool_wait_alloc(pool_of_program(), bytes,
                                    static_cast<unsigned long long>(KLAP_POOL_FALLBACK_WAIT_US) * 1000ull);
  if (p == nullptr) detail::pool_fell_back(what, bytes, instead);
  return p;
}

// Gives back memory from klap::pool_alloc, in any file of the program built with the same pool
// configuration (klap frees records in the file that allocated them). Any thread, once.
static __device__ inline void pool_free(void* p) { pool_release(pool_of_program(), p); }

// KLAP'S OWN PENDING LAUNCHES. CDP2 buffers device launches that have not begun in a fixed buffer
// of cudaLimitDevRuntimePendingLaunchCount entries, with no overflow: a launch past it fails
// (PLATFORM.md). A large parent grid at warp granularity makes one aggregated launch per warp, more
// than that buffer if its children cannot start as fast as they are launched. So klap counts its
// own aggregated launches whose child grid has not yet started every block (pool_dev().pending: +1
// before the launch, -1 when the child's last block has released its records, or when the launch
// failed) and keeps the count within a budget, KLAP_PENDING_BUDGET_PERCENT of the device's limit
// (read on the device, once per pool and device, with cudaDeviceGetLimit; the rest
// is left to the program's own launches and to groups that launch as written). The count is an
// upper bound of the launches not yet STARTED, but the CUDA programming guide ("Pending Kernel
// Launches") says the runtime keeps a launch's data until the child COMPLETES, so this is a rate
// limit on klap's launches rather than an exact model of the buffer; the files of a program
// share one budget (one pool_state). Launches into cudaStreamTailLaunch are not counted
// (pending_counts).

// A release count (pool_hdr::refs, ksite::refs) with this bit set belongs to a launch that took a
// place in the budget: the child's last block gives it back.
constexpr unsigned long long pending_counted = 1ull << 63;

// Whether a launch into `stream` counts in the budget: not one into cudaStreamTailLaunch, whose
// child starts only after the launching grid has ended (a waiting launcher would wait for itself).
__host__ __device__ inline bool pending_counts(cudaStream_t stream) { return stream != cudaStreamTailLaunch; }

namespace detail {
// The program's budget of pending aggregated launches, read from the device's limit on first use.
static __device__ inline unsigned long long pending_budget() {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> budget(pool_dev().budget);
  unsigned long long b = budget.load(cuda::std::memory_order_relaxed);
  if (b != 0ull) return b;
  size_t limit = 0;
  const cudaError_t before = cudaPeekAtLastError();
  if (cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount) != cudaSuccess || limit == 0) {
    if (before == cudaSuccess) (void)cudaGetLastError();  // klap's error, not the program's (kept if it had one)
    limit = 2048;                                          // CDP2's default
  }
  b = static_cast<unsigned long long>(limit) * static_cast<unsigned long long>(KLAP_PENDING_BUDGET_PERCENT) / 100ull;
  if (b == 0ull) b = 1ull;
  budget.store(b, cuda::std::memory_order_relaxed);
  return b;
}
}  // namespace detail

// Called by the thread that is about to make an aggregated launch: takes one place in the budget
// of klap's pending launches. While the budget is full it waits (__nanosleep, doubling from 256 ns
// to 65 us) for children to start; after KLAP_PENDING_WAIT_US it goes ahead past the budget (if the
// device's buffer is full too, the launch fails and klap::check_launch reports it with the limit
// to raise). Pair it with pending_release.
// The count never exceeds the budget on its own account (a compare-and-swap from a value below
// it), only by the launches that waited out KLAP_PENDING_WAIT_US.
static __device__ inline void pending_acquire() {
  const unsigned long long budget = detail::pending_budget();
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> pending(pool_dev().pending);
  unsigned long long cur = pending.load(cuda::std::memory_order_relaxed);
  unsigned long long t0 = 0ull;
  unsigned ns = 256;
  for (;;) {
    if (cur < budget) {
      if (pending.compare_exchange_weak(cur, cur + 1ull, cuda::std::memory_order_relaxed, cuda::std::memory_order_relaxed))
        return;
      continue;  // cur holds the new value
    }
    const unsigned long long now = detail::global_ns();
    if (t0 == 0ull) {
      t0 = now;
    } else if (now - t0 >= static_cast<unsigned long long>(KLAP_PENDING_WAIT_US) * 1000ull) {
      pending.fetch_add(1ull, cuda::std::memory_order_relaxed);  // goes ahead past the budget
      return;
    }
    __nanosleep(ns);
    if (ns < 65536u) ns *= 2u;
    cur = pending.load(cuda::std::memory_order_relaxed);
  }
}

// Gives back one place of pending_acquire: the launched child grid has started every block (its
// last block released the records), or the launch failed.
static __device__ inline void pending_release() {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(pool_dev().pending)
      .fetch_sub(1ull, cuda::std::memory_order_relaxed);
}

// The release count of an aggregated launch of `blocks` child blocks into `stream` (aggregate.cuh
// flush, kernel.cuh kfinish): `blocks`, with pending_counted set if the launch takes a place in the
// budget, which is taken here (pending_acquire). Call it right before the launch; pass the result
// to release_launch_failed if the launch failed.
static __device__ inline unsigned long long release_count_for_launch(cudaStream_t stream, unsigned long long blocks) {
  if (!pending_counts(stream)) return blocks;
  pending_acquire();
  return blocks | pending_counted;
}

// The launch of a release count from release_count_for_launch failed: its budget place goes back.
static __device__ inline void release_launch_failed(unsigned long long count) {
  if ((count & pending_counted) != 0ull) pending_release();
}

// One child block counts itself off release count `count` (device scope, acq_rel). Returns true
// for the last block, which must free the launch's records; the launch's budget place (if any)
// is given back then.
static __device__ inline bool release_block(unsigned long long& count) {
  const unsigned long long old = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(count)
                                     .fetch_sub(1ull, cuda::std::memory_order_acq_rel);
  if ((old & ~pending_counted) != 1ull) return false;
  release_launch_failed(old);  // every block of this child grid has started
  return true;
}

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

// The thread count of this host thread's latest host_prepare call (klap::host_kstate sizes a
// record arena from it): exact when its `launches` came from host_warps, else 32 per warp;
// ~0ull (host_launches_unknown) when the generated code could not tell.
static inline unsigned long long& host_current_threads() {
  static thread_local unsigned long long t = ~0ull;
  return t;
}

// The launch configuration host_warps saw last on this host thread: its warps and threads.
struct host_config_seen {
  unsigned long long warps = ~0ull;
  unsigned long long threads = 0ull;
};
static inline host_config_seen& host_last_config() {
  static thread_local host_config_seen c;
  return c;
}

}  // namespace detail

// HOST. The number of warps of the launch configuration <<<grid, block>>>: an upper bound of the
// aggregated launches that one host launch of a transformed kernel has pending at once at its
// first level, before its own children launch further (one per warp and site at warp granularity,
// one per block at block granularity, one per site and round at kernel granularity, which klap
// counts as one per warp too). The generated host code passes it to host_prepare when the grid
// and block expressions have no side effects (they are then evaluated twice).
// It also remembers the configuration's exact thread count for the host_prepare call it is an
// argument of (host_kstate's record arena).
static inline unsigned long long host_warps(dim3 grid, dim3 block) {
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  const unsigned long long blocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  const unsigned long long warps = blocks * ((threads + 31ull) / 32ull);
  detail::host_last_config() = detail::host_config_seen{warps, blocks * threads};
  return warps;
}

// host_prepare's `launches` when the generated code cannot compute host_warps: size the limit for
// KLAP_PENDING_LAUNCH_LIMIT.
constexpr unsigned long long host_launches_unknown = ~0ull;

namespace detail {
// Whether host work on stream `s` would be captured into a CUDA graph now (cudaStreamIsCapturing;
// CUDA runtime API, "Stream Management"). A query the runtime refuses (the legacy stream while
// another stream captures in global mode: cudaErrorStreamCaptureImplicit) counts as capturing; its
// error is cleared so that the program's own checks do not see it.
static inline bool host_capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// The pending-launch limit host_prepare wants for `launches` aggregated launches at once: enough
// that klap's budget (KLAP_PENDING_BUDGET_PERCENT of the limit) holds them, at most
// KLAP_PENDING_LAUNCH_LIMIT; 0 for none.
constexpr size_t host_wanted_limit(unsigned long long launches) {
  return launches == 0ull ? size_t{0}
         : launches >= static_cast<unsigned long long>(KLAP_PENDING_LAUNCH_LIMIT) * KLAP_PENDING_BUDGET_PERCENT / 100ull
             ? static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT)
             : static_cast<size_t>((launches * 100ull + KLAP_PENDING_BUDGET_PERCENT - 1ull) / KLAP_PENDING_BUDGET_PERCENT);
}
}  // namespace detail

// HOST. Prepares one host launch of a transformed kernel and returns `s` unchanged, so that
// generated host code reads `parent<<<g, b, smem, klap::host_prepare(s, klap::host_warps(g, b))>>>(...)`.
//   `launches`: how many aggregated launches the grid may have pending at once at its first level
//   (host_warps; host_launches_unknown if the generated code could not tell). If the device's
//   cudaLimitDevRuntimePendingLaunchCount is too small for klap's budget to hold that many (at most
//   KLAP_PENDING_LAUNCH_LIMIT), raises it (never lowers it; CUDA programming guide, CDP, "Launch
//   Environment Configuration") and makes the device code read the pool's budget again. Sizing it
//   from the launch, instead of always raising it to KLAP_PENDING_LAUNCH_LIMIT, keeps
//   cudaDeviceSetLimit (milliseconds, 2026-11-22 GPU run) out of programs whose own limit already
//   suffices, e.g. every benchmark that sized it for its original one-launch-per-thread children.
//   Correctness never depends on the raise: klap's own launches wait for their budget
//   (pending_acquire), and a transformed kernel launched from a file klap never saw gets no
//   host_prepare at all. If the driver refuses, prints a warning once and goes on (a device launch
//   past the limit is reported by klap::check_launch). Under stream capture (a CUDA graph being
//   recorded on `s`) it leaves the limit alone, with one warning: cudaDeviceSetLimit there would
//   invalidate the program's capture. Only `s` is asked (cudaStreamIsCapturing): a capture in
//   global mode on another stream of this thread, or in another thread, is not seen, and the raise
//   would still break it (CUDA has no query for it); raise the limit before such a capture.
//   Every call: remembers `s` and `launches` as this host thread's current launch (host_kstate).
// The pool needs no host step: it is static device memory, reclaimed on the device. Thread-safe;
// the device's limit is read only when a launch wants more than this file last saw.
// On a CUDA error other than the limit's: prints `klap: error: ...` and calls std::exit(1).
static inline cudaStream_t host_prepare(cudaStream_t s = 0, unsigned long long launches = host_launches_unknown) {
  const size_t wanted = detail::host_wanted_limit(launches);
  if (wanted > 0 && detail::host_capturing(s)) {
    // Under stream capture (a CUDA graph) cudaDeviceSetLimit is refused and, in global capture
    // mode, invalidates the capture (the program's own cudaStreamEndCapture then fails): the
    // 2026-11-28 H200 run of the review's B_g1_graph_capture. Leave the limit as it is; the
    // device code keeps within its budget (pending_acquire) either way.
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr,
                   "klap: warning: a transformed kernel is launched under stream capture: klap leaves "
                   "cudaLimitDevRuntimePendingLaunchCount as it is (raise it before the capture for more "
                   "aggregated launches in flight)\n");
    });
  } else if (wanted > 0) {
    static std::mutex mu;
    static std::map<int, size_t> seen;  // per device: the limit this file last read or set
    int dev = 0;
    detail::host_check(cudaGetDevice(&dev), "klap::host_prepare: cudaGetDevice");
    std::lock_guard<std::mutex> lock(mu);
    auto it = seen.find(dev);
    if (it == seen.end() || it->second < wanted) {
      size_t pending = 0;
      detail::host_check(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount),
                         "klap::host_prepare: cudaDeviceGetLimit(cudaLimitDevRuntimePendingLaunchCount)");
      size_t now = pending;
      if (pending < wanted) {
        const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, wanted);
        if (e == cudaSuccess) {
          now = wanted;
        } else {
          std::fprintf(stderr,
                       "klap: warning: cannot raise cudaLimitDevRuntimePendingLaunchCount from %zu to %zu: %s\n",
                       pending, wanted, cudaGetErrorString(e));
          (void)cudaGetLastError();  // not sticky: clear it so that the program's own checks do not see it
          now = wanted;              // do not try (and warn) again for this size
        }
      }
      if (now > (it == seen.end() ? pending : it->second)) {
        // the limit grew (klap raised it, or the program did since this file last looked) after this
        // file's device code may have read it: make it read it again (pending_budget)
        // (a memset, not a copy from pageable host memory: that one synchronizes the stream and is not
        // capturable into a CUDA graph; review 2026-11-27)
        void* state = nullptr;
        detail::host_check(cudaGetSymbolAddress(&state, pool_dev_symbol()),
                           "klap::host_prepare: cudaGetSymbolAddress of the pool state");
        detail::host_check(cudaMemsetAsync(static_cast<char*>(state) + offsetof(pool_state, budget), 0,
                                           sizeof(pool_state::budget), s),
                           "klap::host_prepare: resetting the pending-launch budget");
      }
      seen[dev] = now;
    }
  }
  detail::host_current_stream() = s;
  const detail::host_config_seen& seen = detail::host_last_config();
  detail::host_current_threads() = launches == host_launches_unknown || launches > (~0ull >> 6) ? host_launches_unknown
                                   : seen.warps == launches                                    ? seen.threads
                                                                                               : launches * 32ull;
  return s;
}

// HOST. Returns `bytes` unchanged, so that generated host code reads
// `parent<<<g, b, klap::host_smem(parent, bytes), klap::host_prepare(s, ...)>>>(...)` for a host
// launch of a transformed kernel with dynamic shared memory (`bytes` is evaluated once, as written).
// klap's output may have added static shared memory to `kernel` (a block-granularity parent's scan
// scratch, about 2 KB), and a kernel's default limit of dynamic shared memory is 48 KB minus its
// static shared memory: a launch that asked for nearly 48 KB and ran as written would fail with
// cudaErrorInvalidValue. Raises the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize to `bytes`
// when `bytes` is above it (smem.cuh; read once per device and kernel). If the device cannot give
// that much (bytes plus the static shared memory above its opt-in maximum), prints one warning per
// program and returns `bytes`: the launch then fails as the CUDA runtime reports it. A launch within
// the original limit may, after the raise, also succeed where the original would have failed (a
// size above the limit the program set); no correct program sees a difference.
template <class Kernel>
static inline size_t host_smem(Kernel* kernel, size_t bytes) {
  if (!detail::host_fit_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes)) {
    static std::once_flag warned;
    std::call_once(warned, [bytes] {
      std::fprintf(stderr,
                   "klap: warning: cannot raise a transformed kernel's dynamic shared memory limit to %zu bytes "
                   "(klap added static shared memory to it); its launch fails\n",
                   bytes);
    });
  }
  return bytes;
}

// HOST. Returns the pool's error flag (klap::pool_dev().error): 0 = no device-side klap error so far,
// 1 = klap::fail() ran. Returns 0xFFFFFFFF if the flag cannot be read, which is what happens after
// fail() trapped: the trap leaves a sticky error in the CUDA context (its message was printed).
static inline unsigned host_pool_error() {
  unsigned e = 0;
  if (cudaMemcpyFromSymbol(&e, pool_dev_symbol(), sizeof(e), offsetof(pool_state, error)) != cudaSuccess)
    return 0xFFFFFFFFu;
  return e;
}

// HOST. How many times an allocation of the program found no room in the pool on the
// current device and its launches went out as written instead of aggregated: a group's slots
// (klap::agg_begin), a chunk of kernel-granularity records (klap::krecord) or a kernel-granularity
// state (klap::kstate_new) (pool_dev().fallbacks; see klap::pool_alloc_or_null). 0 if none, or if
// it cannot be read (after a trap).
static inline unsigned long long host_pool_fallbacks() {
  unsigned long long n = 0;
  if (cudaMemcpyFromSymbol(&n, pool_dev_symbol(), sizeof(n), offsetof(pool_state, fallbacks)) != cudaSuccess)
    return 0ull;
  return n;
}

}  // namespace klap

#endif  // KLAP_POOL_CUH
