// klap/pool_state.cuh -- the klap memory pool: its device state and its allocator, reclaimed on
// the device (KLAP paper II-C's "single global memory pool", made to scale: issue 11).
//
// Split from pool.cuh so that error.cuh (which sets the pool's error flag) and pool.cuh (whose
// allocator reports errors through error.cuh) need no circular include. Include "klap/pool.cuh"
// or "klap/klap.cuh" rather than this file.
//
// The scheme (allocation, release, ordering, contention, fragmentation) is described at the top
// of pool.cuh. The allocator itself is here, `__host__ __device__`, so that a host program can
// stress it with host threads (runtime-lib/src/test/host/).
#ifndef KLAP_POOL_STATE_CUH
#define KLAP_POOL_STATE_CUH

#include <cuda/atomic>
#include "config.cuh"

namespace klap {

// The 16 bytes in front of every pool allocation.
//   refs  free for the owner's own release counting (aggregate.cuh: the blocks of the child grid
//         that have not yet read the records); pool_try_alloc sets it to 0
//   span  0: the allocation lies inside one segment; k > 0: it is k whole segments
struct pool_hdr {
  unsigned long long refs;
  unsigned long long span;
};

constexpr unsigned pool_live_shift = 40;
constexpr unsigned long long pool_live_one = 1ull << pool_live_shift;
constexpr unsigned long long pool_used_mask = pool_live_one - 1ull;

// A pool: where its bytes, segment words and current segment are. Host test programs build one
// over host memory; device code uses the program's (pool_of_program, pool.cuh).
//   bytes      nseg * seg_bytes bytes, 16-byte aligned
//   seg        nseg words, zero-initialized (every segment empty)
//   cur        the current segment's index, initially 0
//   seg_bytes  a multiple of 16, at least 1024
struct pool_view {
  char* bytes;
  unsigned long long* seg;
  unsigned* cur;
  unsigned nseg;
  unsigned long long seg_bytes;
};

namespace detail {

template <class T>
using pool_atomic = cuda::atomic_ref<T, cuda::thread_scope_device>;

// Moves v.cur on from segment s, which the caller found too full for `units`: to the next segment
// (in address order, wrapping, s itself last) whose live count is 0, resetting its word to 0
// first. Returns true if cur has moved since the caller read s, points to a segment it reset or
// found empty, or s has room for `units` again (another thread reset it); false if every segment
// holds live allocations (the pool is exhausted for now). A failed reset is retried while the
// segment's live count stays 0 (another thread reset it, or bumped it and gave its count back):
// the threads that find one segment full together must not all report "exhausted" but one.
__host__ __device__ inline bool pool_advance(const pool_view& v, unsigned s, unsigned long long units) {
  pool_atomic<unsigned> cur(*v.cur);
  unsigned c = cur.load(cuda::std::memory_order_acquire);
  if (c != s) return true;
  for (unsigned k = 1; k <= v.nseg; ++k) {
    const unsigned t = (s + k) % v.nseg;
    pool_atomic<unsigned long long> word(v.seg[t]);
    unsigned long long w = word.load(cuda::std::memory_order_relaxed);
    while ((w >> pool_live_shift) == 0ull && (w & pool_used_mask) != 0ull &&
           !word.compare_exchange_weak(w, 0ull, cuda::std::memory_order_acq_rel, cuda::std::memory_order_relaxed)) {
    }
    if ((w >> pool_live_shift) != 0ull) continue;
    if (t != s) cur.compare_exchange_strong(c, t, cuda::std::memory_order_acq_rel, cuda::std::memory_order_relaxed);
    return true;
  }
  return cur.load(cuda::std::memory_order_acquire) != s ||
         (pool_atomic<unsigned long long>(v.seg[s]).load(cuda::std::memory_order_relaxed) & pool_used_mask) + units <=
             v.seg_bytes / 16ull;
}

// Claims k consecutive segments for one allocation (see the scheme in pool.cuh); nullptr if no
// window of k segments is free right now. The windows are tried from the one after the current
// segment on (wrapping), so that concurrent spans do not all fight over the first segments.
__host__ __device__ inline pool_hdr* pool_try_span(const pool_view& v, unsigned long long k) {
  const unsigned long long full = v.seg_bytes / 16ull;
  const unsigned long long windows = v.nseg - k + 1ull;  // k <= nseg (pool_try_alloc)
  const unsigned long long start = (pool_atomic<unsigned>(*v.cur).load(cuda::std::memory_order_relaxed) + 1ull) % windows;
  for (unsigned long long tried = 0; tried < windows;) {
    const unsigned long long first = (start + tried) % windows;
    unsigned long long claimed = 0;
    for (; claimed < k; ++claimed) {
      pool_atomic<unsigned long long> word(v.seg[first + claimed]);
      unsigned long long w = word.load(cuda::std::memory_order_relaxed);
      if ((w >> pool_live_shift) != 0ull ||
          !word.compare_exchange_strong(w, pool_live_one | full, cuda::std::memory_order_acq_rel,
                                        cuda::std::memory_order_relaxed))
        break;
    }
    if (claimed == k) {
      pool_hdr* h = reinterpret_cast<pool_hdr*>(v.bytes + first * v.seg_bytes);
      h->refs = 0ull;
      h->span = k;
      return h;
    }
    for (unsigned long long j = 0; j < claimed; ++j)
      pool_atomic<unsigned long long>(v.seg[first + j]).fetch_sub(pool_live_one, cuda::std::memory_order_release);
    // windows that contain the segment that could not be claimed are skipped (unless wrapped)
    tried += (first + claimed + 1ull <= windows ? claimed : 0ull) + 1ull;
  }
  return nullptr;
}

}  // namespace detail

// Whether a request of `bytes` bytes can ever be served by pool v (header and rounding included:
// at most the whole pool).
__host__ __device__ inline bool pool_fits(const pool_view& v, unsigned long long bytes) {
  const unsigned long long cap = static_cast<unsigned long long>(v.nseg) * v.seg_bytes;
  return bytes <= cap && ((bytes + 15ull) & ~15ull) + sizeof(pool_hdr) <= cap;
}

// Takes `bytes` bytes from pool v, without waiting: returns a 16-byte aligned pointer (with a
// pool_hdr in the 16 bytes in front of it, refs = 0) or nullptr when the pool has no room right
// now (every segment holds live allocations) or never will (!pool_fits(v, bytes)). Any
// thread, concurrently (lock-free: each step is one atomic on one segment word).
__host__ __device__ inline void* pool_try_alloc(const pool_view& v, unsigned long long bytes) {
  if (!pool_fits(v, bytes)) return nullptr;
  const unsigned long long need = sizeof(pool_hdr) + ((bytes + 15ull) & ~15ull);
  if (need > v.seg_bytes) {
    pool_hdr* h = detail::pool_try_span(v, (need + v.seg_bytes - 1ull) / v.seg_bytes);
    return h ? static_cast<void*>(h + 1) : nullptr;
  }
  const unsigned long long units = need / 16ull;
  const unsigned long long full = v.seg_bytes / 16ull;
  detail::pool_atomic<unsigned> cur(*v.cur);
  // Bounded: each round either bumps, or moves cur (pool_advance), which others may refill first.
  for (unsigned round = 0; round < 4u * v.nseg + 4u; ++round) {
    const unsigned s = cur.load(cuda::std::memory_order_acquire);
    detail::pool_atomic<unsigned long long> word(v.seg[s]);
    // a full segment is not bumped again, so `used` cannot run far past `full` (no wrap into 40 bits)
    if ((word.load(cuda::std::memory_order_relaxed) & pool_used_mask) + units <= full) {
      const unsigned long long old = word.fetch_add(pool_live_one | units, cuda::std::memory_order_acq_rel);
      const unsigned long long used = old & pool_used_mask;
      if (used + units <= full) {
        pool_hdr* h = reinterpret_cast<pool_hdr*>(v.bytes + s * v.seg_bytes + used * 16ull);
        h->refs = 0ull;
        h->span = 0ull;
        return h + 1;
      }
      word.fetch_sub(pool_live_one, cuda::std::memory_order_release);
    }
    if (!detail::pool_advance(v, s, units)) return nullptr;
  }
  return nullptr;
}

// Gives back an allocation of pool_try_alloc (p as returned). Any thread, once per allocation;
// the caller must not touch the memory afterwards. One fetch_sub (release) per segment.
__host__ __device__ inline void pool_release(const pool_view& v, void* p) {
  const pool_hdr* h = static_cast<const pool_hdr*>(p) - 1;
  const unsigned long long first = static_cast<unsigned long long>(reinterpret_cast<const char*>(h) - v.bytes) / v.seg_bytes;
  const unsigned long long k = h->span ? h->span : 1ull;
  for (unsigned long long j = 0; j < k; ++j)
    detail::pool_atomic<unsigned long long>(v.seg[first + j]).fetch_sub(pool_live_one, cuda::std::memory_order_release);
}

// The segments of v that hold live allocations (for the exhaustion message; a snapshot).
__host__ __device__ inline unsigned pool_live_segments(const pool_view& v) {
  unsigned n = 0;
  for (unsigned t = 0; t < v.nseg; ++t)
    if ((detail::pool_atomic<unsigned long long>(v.seg[t]).load(cuda::std::memory_order_relaxed) >> pool_live_shift) != 0ull) ++n;
  return n;
}

constexpr unsigned long long pool_segment_bytes = (static_cast<unsigned long long>(KLAP_POOL_SEGMENT_BYTES) + 15ull) & ~15ull;
constexpr unsigned long long pool_segments = static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES) / pool_segment_bytes;
// At most 16 MiB: `live` (24 bits) must count every allocation of a segment plus the threads that
// are between a failed bump and its give-back, and `used` (40 bits) must not carry into `live`
// although threads that find a segment full leave it past full (about full x (1 + such threads)).
static_assert(pool_segment_bytes >= 1024ull && pool_segment_bytes <= (16ull << 20),
              "klap: KLAP_POOL_SEGMENT_BYTES must be between 1 KiB and 16 MiB");
static_assert(pool_segments >= 1ull && pool_segments < (1ull << 31),
              "klap: KLAP_POOL_SIZE_BYTES must hold at least one segment (KLAP_POOL_SEGMENT_BYTES) and fewer than 2^31");
// The pool is a static __device__ array whose host shadow lands in .bss: from 2 GiB on the host
// link fails ("failed to convert GOTPCREL relocation", nvcc 13, found by review 2026-11-27).
static_assert(static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES) < (2ull << 30),
              "klap: KLAP_POOL_SIZE_BYTES must be below 2 GiB (the static pool does not link beyond); use a "
              "finer --granularity for fewer records at once");
static_assert(KLAP_PENDING_BUDGET_PERCENT >= 1 && KLAP_PENDING_BUDGET_PERCENT <= 100,
              "klap: KLAP_PENDING_BUDGET_PERCENT must be between 1 and 100");

// The device state of the program's pool. Zero-initialized: every segment empty. The buffer itself
// is pool_bytes().
//   seg, cur   the segment words and the current segment (the scheme in pool.cuh)
//   error      0 = no error; 1 = klap::fail() was called on the device (pool exhausted, device-side
//              launch failed, ...); read from the host with klap::host_pool_error()
//   warned     1 once the one-time "launching as written" warning was printed (pool.cuh)
//   refused_warned  1 once the one-time "refused an aggregated launch" warning was printed
//              (error.cuh, detail::aggregate_refused)
//   fallbacks  allocations that found no pool memory and whose launches went out as written
//              instead: groups of an aggregated launch site (klap::agg_begin), kernel-granularity
//              record chunks and states (klap::krecord, klap::kstate_new); klap::host_pool_fallbacks()
//   pending    klap's aggregated launches whose child grid has not yet released its records,
//              i.e. launches the device runtime may still hold pending (aggregate.cuh, kernel.cuh)
//   budget     how many of those may be pending at once (0 = not read yet): a share of the
//              device's cudaLimitDevRuntimePendingLaunchCount (KLAP_PENDING_BUDGET_PERCENT)
template <unsigned long long Segments>
struct pool_state_of {
  unsigned long long seg[Segments];
  unsigned cur;
  unsigned error;
  unsigned warned;
  unsigned refused_warned;
  unsigned long long fallbacks;
  unsigned long long pending;
  unsigned long long budget;
};
using pool_state = pool_state_of<pool_segments>;

// The pool's buffer: Bytes bytes, 256-byte aligned. (A struct, because nvcc 13 drops __align__
// and alignas on a variable template: the PTX says `.align 1`.)
template <unsigned long long Bytes>
struct alignas(256) pool_buffer {
  char bytes[Bytes];
};

// The layout of pool_state_of and of the records in the pool; raised whenever either changes, so
// that files compiled with different klap runtime headers do not share one pool.
constexpr unsigned pool_abi = 1;

// ONE POOL PER PROGRAM (and per device: a __device__ variable exists once per device). The state
// and the buffer are `inline` variable templates: each translation unit that includes klap.cuh
// emits them as weak symbols (PTX `.weak .global`, host shadow `inline`), and the device linker
// (-rdc=true) and the host linker keep one copy, so a program of many transformed files holds ONE
// pool of KLAP_POOL_SIZE_BYTES in device memory (and one host shadow of that size in .bss), not
// one per file: 17 files with a per-file 128 MiB pool no longer linked (the host shadows exceed
// the 2 GiB the x86-64 small code model reaches). One pool also means one error flag, one
// fallback count and one pending-launch count for the device's one pending-launch buffer.
// Files compiled with a different pool size, segment size or runtime-header layout
// (KLAP_POOL_SIZE_BYTES, KLAP_POOL_SEGMENT_BYTES, pool_abi) instantiate other template arguments
// and so get a pool of their own: nothing links two layouts into one symbol.
// Static device memory needs no set-up: a transformed kernel launched from a file klap never saw
// has its pool. The helpers that use the pool keep internal linkage (`static` or an unnamed
// namespace) because they are compiled against this file's configuration.
// Without -rdc=true (whole-program mode: each file is a device program of its own, and CDP is not
// available) nvcc refuses `inline` __device__ variables, and there is nothing to share: `static`.
#if defined(__CUDACC_RDC__)
#define KLAP_POOL_LINKAGE_ inline
#else
#define KLAP_POOL_LINKAGE_ static
#endif
template <unsigned long long Segments, unsigned long long SegmentBytes, unsigned Abi>
KLAP_POOL_LINKAGE_ __device__ pool_state_of<Segments> pool_dev_of;
template <unsigned long long Segments, unsigned long long SegmentBytes, unsigned Abi>
KLAP_POOL_LINKAGE_ __device__ pool_buffer<Segments * SegmentBytes> pool_bytes_of;
#undef KLAP_POOL_LINKAGE_

// The pool of this file's configuration, in device code: its state and its buffer
// (pool_segments * pool_segment_bytes bytes, 256-byte aligned).
static __device__ inline pool_state& pool_dev() { return pool_dev_of<pool_segments, pool_segment_bytes, pool_abi>; }
static __device__ inline char* pool_bytes() { return pool_bytes_of<pool_segments, pool_segment_bytes, pool_abi>.bytes; }

// The same two as symbols for the host's cudaMemcpyFromSymbol / cudaGetSymbolAddress (they are
// pool_state and pool_segments * pool_segment_bytes bytes).
static inline const void* pool_dev_symbol() { return &pool_dev_of<pool_segments, pool_segment_bytes, pool_abi>; }
static inline const void* pool_bytes_symbol() { return &pool_bytes_of<pool_segments, pool_segment_bytes, pool_abi>; }

}  // namespace klap

#endif  // KLAP_POOL_STATE_CUH
