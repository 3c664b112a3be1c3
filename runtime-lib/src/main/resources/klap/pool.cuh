// klap/pool.cuh -- the device memory pool of klap's aggregated launches (KLAP paper II-C: "we
// instead allocate a single global memory pool from the host code and use atomic operations to
// grab memory from that pool instead of calling cudaMalloc in the kernel"). Memory is given back
// ON THE DEVICE once the child grid that used it no longer needs it, so what is in use is bounded
// by what is pending at one time, not by the length of the run; no host step recycles anything.
//
// ALLOCATION (klap::pool_alloc, any thread, concurrently). A request of `bytes` takes a block of
// the smallest size class c with (64 << c) >= bytes + 16: powers of two from 64 B, a 16-byte
// header (klap::pool_hdr: owning pool, class, release counter) in front of the 16-byte aligned
// payload. In this order:
//   1. pop a block from the class's free list. There are KLAP_POOL_SHARDS lock-free lists per
//      class; a thread starts with the one of its SM (%smid mod shards), then tries the others;
//   2. carve a fresh block from the region (CAS on pool_state::top);
//   3. split a free block of the smallest larger class j that has one: the first 64 << c bytes are
//      returned, the rest is pushed as one free block of each class c, c+1, ..., j-1 (buddy-style
//      splitting; blocks never merge again);
//   4. host region: retry 1-3 with __nanosleep back-off for up to KLAP_POOL_WAIT_MS (blocks come
//      back as pending children start), then klap::fail: "memory pool exhausted while allocating
//      <what> ... raise it with klap --pool-size or -DKLAP_POOL_SIZE_BYTES".
//      Region made on the device (no host_prepare), or none: a device malloc of its own (header
//      origin = heap); if the device heap is exhausted too, klap::fail says so.
// RELEASE (klap::pool_free, any thread, any translation unit): the header names the owning pool
// and the class; the block is pushed onto that pool's list of its class (the shard of the
// releasing thread's SM), or free()d if it came from the device heap. A second release of a block
// is detected (header no longer "live") and reported with klap::fail.
// WHEN memory is released is the generated code's protocol, on top of this: the slot arrays of
// agg_begin when every block of the aggregated child grid called klap::child_release (or at once
// by flush when nothing was launched); a kernel-granularity state and its record chunks when every
// block of every grid its kfinish launched called klap::kchild_release (aggregate.cuh, kernel.cuh).
// LOCK-FREE LISTS (Treiber stacks): a 64-bit head word (ABA tag << 32) | (unit + 1), unit = the
// block's offset in the region / 64 (0 in the low half = empty); the link to the next block is in
// the block's header (pool_hdr::count). pop: head.load(acquire); next = link of the top block
// (relaxed atomic load: the block may be popped and reused by another thread meanwhile; the value
// is then stale, but the CAS fails because every successful CAS increments the tag);
// CAS(head, (tag+1, next), acquire). push: header info = free | class and link = current top
// (relaxed stores), CAS(head, (tag+1, unit+1), release). The tag would have to wrap (2^32
// successful operations on one list) while a thread sits between its load and its CAS for ABA to
// strike. cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> throughout.
// ORDERING: every access to a block by its previous owner happens-before the push (release);
// the pop that takes the block (acquire) synchronizes with it, so the new owner's accesses come
// after. The release counters of the generated code (device-scope acq_rel fetch_sub) order every
// reader of a block before the thread that frees it; the readers of one child block are ordered
// before its releasing thread by __syncthreads().
// CONTENTION: one CAS per allocation and per release, on one of KLAP_POOL_SHARDS heads of the
// class (retried under contention); a CAS on `top` only while the pool grows; the live counter is
// one relaxed atomic add on the shard's word.
// FRAGMENTATION: blocks are powers of two (a request may use up to 2x its size), and carved or
// split blocks never merge: memory freed as small blocks cannot serve a larger request later. A
// program whose sizes shift during a run can exhaust the pool although enough is free in total;
// raise the pool size.
// SETUP: the first allocation of a pool sets it up on the device (CAS on pool_state::setup; the
// others wait, with a timeout): it adopts the region klap::host_prepare offered (host_base,
// KLAP_POOL_SIZE_BYTES bytes). If no host_prepare ran before -- a transformed kernel launched from
// code klap never saw -- it mallocs KLAP_DEVICE_POOL_BYTES from the device heap (halving down to
// 64 KiB); past that region (or without one) every allocation is a device malloc of its own.
// Limits of that path: the device heap is cudaLimitMallocHeapSize (8 MB by default, shared with
// the program's own device malloc/cudaMalloc), device malloc is slow and serializes, and a region
// chosen this way stays for the whole run (a later host_prepare's region is then not used).
// ONE POOL PER TRANSLATION UNIT (pool_state.cuh): each unit allocates from its own pool; releases
// go to the pool named in the block's header, so cross-unit launches are safe.
//
// Host side: klap::host_prepare(stream), wrapped around the stream argument of every host launch
// of a transformed kernel: one-time setup (region, pending-launch limit), then one atomic load;
// klap::host_pool_error() reads the device error flag, klap::host_pool_live() counts live blocks.
#ifndef KLAP_POOL_CUH
#define KLAP_POOL_CUH

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>
#include <cuda/atomic>
#include "config.cuh"
#include "pool_state.cuh"
#include "error.cuh"

namespace klap {

namespace detail {

constexpr unsigned long long pool_max_request = 1ull << 40;  // bytes; larger requests fail at once
constexpr unsigned long long pool_min_device_region = 64ull * 1024ull;

__device__ inline unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// The smallest class whose blocks hold `need` bytes (header included): ceil(log2(need)) - 6.
__device__ inline unsigned pool_class_of(unsigned long long need) {
  if (need <= pool_min_block) return 0u;
  return static_cast<unsigned>(64 - __clzll(static_cast<long long>(need - 1ull))) - 6u;
}
__device__ inline unsigned long long pool_class_bytes(unsigned c) { return pool_min_block << c; }

__device__ inline cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> pool_head(pool_state& P, unsigned c,
                                                                                            unsigned s) {
  return cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(P.heads[c][s]);
}

// Pushes block h (of class c, in P's region) onto P's free list c, shard s. See the file comment.
__device__ inline void pool_push(pool_state& P, unsigned c, unsigned s, pool_hdr* h) {
  const unsigned long long unit = static_cast<unsigned long long>(reinterpret_cast<char*>(h) - P.base) / pool_min_block;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(h->info).store(pool_hdr_free | c, cuda::std::memory_order_relaxed);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> link(h->count);
  auto head = pool_head(P, c, s);
  unsigned long long old = head.load(cuda::std::memory_order_relaxed);
  unsigned long long nw;
  do {
    link.store(static_cast<unsigned>(old), cuda::std::memory_order_relaxed);
    nw = (((old >> 32) + 1ull) << 32) | (unit + 1ull);
  } while (!head.compare_exchange_weak(old, nw, cuda::std::memory_order_release, cuda::std::memory_order_relaxed));
}

// Pops a block of class c from any shard of P (starting with s), or returns nullptr.
__device__ inline pool_hdr* pool_pop(pool_state& P, unsigned c, unsigned s) {
  for (unsigned k = 0; k < pool_shards; ++k) {
    auto head = pool_head(P, c, (s + k) & (pool_shards - 1u));
    unsigned long long old = head.load(cuda::std::memory_order_acquire);
    while (static_cast<unsigned>(old) != 0u) {
      pool_hdr* h = reinterpret_cast<pool_hdr*>(P.base + (static_cast<unsigned long long>(static_cast<unsigned>(old)) - 1ull) *
                                                            pool_min_block);
      const unsigned next =
          cuda::atomic_ref<unsigned, cuda::thread_scope_device>(h->count).load(cuda::std::memory_order_relaxed);
      const unsigned long long nw = (((old >> 32) + 1ull) << 32) | next;
      if (head.compare_exchange_weak(old, nw, cuda::std::memory_order_acquire, cuda::std::memory_order_acquire))
        return h;
    }
  }
  return nullptr;
}

// Carves a fresh block of class c from the end of P's carved part, or returns nullptr.
__device__ inline pool_hdr* pool_carve(pool_state& P, unsigned c) {
  const unsigned long long size = pool_class_bytes(c);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> top(P.top);
  unsigned long long t = top.load(cuda::std::memory_order_relaxed);
  do {
    if (t > P.capacity || P.capacity - t < size) return nullptr;
  } while (!top.compare_exchange_weak(t, t + size, cuda::std::memory_order_relaxed, cuda::std::memory_order_relaxed));
  return reinterpret_cast<pool_hdr*>(P.base + t);
}

// Splits a free block of the smallest larger class that has one (see the file comment).
__device__ inline pool_hdr* pool_split(pool_state& P, unsigned c, unsigned s) {
  for (unsigned j = c + 1u; j < pool_classes && pool_class_bytes(j) <= P.capacity; ++j) {
    pool_hdr* h = pool_pop(P, j, s);
    if (h == nullptr) continue;
    for (unsigned k = c; k < j; ++k)
      pool_push(P, k, s, reinterpret_cast<pool_hdr*>(reinterpret_cast<char*>(h) + pool_class_bytes(k)));
    return h;
  }
  return nullptr;
}

__device__ inline pool_hdr* pool_take(pool_state& P, unsigned c, unsigned s) {
  pool_hdr* h = pool_pop(P, c, s);
  if (h == nullptr) h = pool_carve(P, c);
  if (h == nullptr) h = pool_split(P, c, s);
  return h;
}

// Sets pool P up (see SETUP in the file comment); returns pool_region or pool_heap_only.
static __device__ __noinline__ unsigned pool_setup(pool_state& P) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> setup(P.setup);
  unsigned st = pool_unset;
  if (setup.compare_exchange_strong(st, pool_setting, cuda::std::memory_order_acquire, cuda::std::memory_order_acquire)) {
    char* offered = cuda::atomic_ref<char*, cuda::thread_scope_device>(P.host_base).load(cuda::std::memory_order_relaxed);
    if (offered != nullptr) {
      P.base = offered;
      P.capacity = static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES);
      P.region = pool_region_host;
      setup.store(pool_region, cuda::std::memory_order_release);
      return pool_region;
    }
    for (unsigned long long size = KLAP_DEVICE_POOL_BYTES; size >= pool_min_device_region; size /= 2ull) {
      void* p = malloc(static_cast<size_t>(size));
      if (p != nullptr) {
        P.base = static_cast<char*>(p);
        P.capacity = size;
        P.region = pool_region_device;
        setup.store(pool_region, cuda::std::memory_order_release);
        return pool_region;
      }
    }
    P.region = pool_region_none;
    setup.store(pool_heap_only, cuda::std::memory_order_release);
    return pool_heap_only;
  }
  const unsigned long long t0 = now_ns();
  while ((st = setup.load(cuda::std::memory_order_acquire)) == pool_setting) {
    __nanosleep(1000);
    if (now_ns() - t0 > 5000000000ull)
      fail("memory pool setup did not finish within 5 s (the thread setting it up is stuck)", "klap::pool_alloc");
  }
  return st;
}

// pool_region or pool_heap_only: the pool is set up (by this call if it was not).
__device__ inline unsigned pool_ready(pool_state& P) {
  const unsigned st =
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(P.setup).load(cuda::std::memory_order_acquire);
  return st >= pool_region ? st : pool_setup(P);
}

static __device__ __noinline__ void pool_fail_exhausted(const pool_state& P, const char* what, unsigned long long bytes) {
  printf("klap: error: memory pool exhausted while allocating %s (%llu bytes; pool of %llu bytes, %llu carved into "
         "blocks, none free for this size after %d ms); raise it with klap --pool-size=<bytes> or "
         "-DKLAP_POOL_SIZE_BYTES=<bytes> [klap::pool_alloc]\n",
         what, bytes, P.capacity, P.top, static_cast<int>(KLAP_POOL_WAIT_MS));
  fail_raise();
}

static __device__ __noinline__ void pool_fail_heap(const char* what, unsigned long long bytes) {
  printf("klap: error: device heap exhausted while allocating %s (%llu bytes): no klap::host_prepare() ran before "
         "this kernel, so klap's pool lives in the device heap; launch the kernel through klap::host_prepare(stream) "
         "(klap does this for the host launches it transforms) or raise cudaLimitMallocHeapSize [klap::pool_alloc]\n",
         what, bytes);
  fail_raise();
}

__device__ inline void pool_count(pool_state& P, unsigned s, unsigned long long delta) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(P.live[s]).fetch_add(delta, cuda::std::memory_order_relaxed);
}

}  // namespace detail

// DEVICE, any thread, concurrently. Allocates `bytes` bytes from this translation unit's pool and
// returns a 16-byte aligned pointer to them (bytes == 0 gives a valid, unique pointer to 0 bytes).
// The memory is not zeroed, and stays valid until klap::pool_free(pointer) (or the release
// protocol of aggregate.cuh / kernel.cuh that calls it). `what` names what is being allocated,
// for the error message. Algorithm, ordering and limits: see the file comment.
// Errors (klap::fail, which traps): a request over 2^40 bytes; the host-made pool has no block for
// it after KLAP_POOL_WAIT_MS ("memory pool exhausted while allocating <what> (<bytes> bytes; ...);
// raise it with klap --pool-size=<bytes> or -DKLAP_POOL_SIZE_BYTES=<bytes>"); without a host-made
// pool, the device heap is exhausted too.
// Source: KLAP paper II-C (the pool); the lists are R. K. Treiber's lock-free stack (IBM RJ 5118,
// 1986) with an ABA tag.
static __device__ inline void* pool_alloc(unsigned long long bytes, const char* what = "klap pool memory") {
  pool_state& P = pool_dev;
  if (bytes > detail::pool_max_request) detail::pool_fail_exhausted(P, what, bytes);
  const unsigned st = detail::pool_ready(P);
  const unsigned long long need = bytes + sizeof(pool_hdr);
  const unsigned c = detail::pool_class_of(need);
  const unsigned s = detail::sm_id() & (pool_shards - 1u);
  if (st == pool_region && c < pool_classes && detail::pool_class_bytes(c) <= P.capacity) {
    pool_hdr* h = detail::pool_take(P, c, s);
    if (h == nullptr && P.region == pool_region_host) {
      const unsigned long long t0 = detail::now_ns();
      unsigned ns = 128;
      while (h == nullptr && detail::now_ns() - t0 < static_cast<unsigned long long>(KLAP_POOL_WAIT_MS) * 1000000ull) {
        __nanosleep(ns);
        if (ns < 65536u) ns <<= 1;
        h = detail::pool_take(P, c, s);
      }
    }
    if (h != nullptr) {
      h->owner = &P;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(h->count).store(0u, cuda::std::memory_order_relaxed);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(h->info)
          .store(pool_hdr_live | (pool_origin_region << 8) | c, cuda::std::memory_order_relaxed);
      detail::pool_count(P, s, 1ull);
      return h + 1;
    }
  }
  if (st == pool_region && P.region == pool_region_host) detail::pool_fail_exhausted(P, what, bytes);
  pool_hdr* h = static_cast<pool_hdr*>(malloc(static_cast<size_t>(need)));
  if (h == nullptr) detail::pool_fail_heap(what, bytes);
  h->owner = &P;
  h->count = 0u;
  h->info = pool_hdr_live | (pool_origin_heap << 8);
  detail::pool_count(P, s, 1ull);
  return h + 1;
}

// DEVICE, any thread. The header in front of a pointer returned by klap::pool_alloc (its release
// counter pool_hdr::count is what the generated code's protocol counts down).
__device__ inline pool_hdr* pool_header(const void* p) {
  return const_cast<pool_hdr*>(static_cast<const pool_hdr*>(p) - 1);
}

// DEVICE, any thread, any translation unit. Gives back a pointer returned by klap::pool_alloc (of
// any unit's pool: the header names the owner); nullptr is ignored. Every access to the memory by
// any thread must happen-before this call (the generated code's release counters see to that).
// The block goes onto the owner's free list of its class (shard of the caller's SM), or back to
// the device heap (free) if it came from there. Errors: a pointer whose header is not that of a
// live block (released twice, or not from pool_alloc) -> klap::fail.
static __device__ inline void pool_free(void* p) {
  if (p == nullptr) return;
  pool_hdr* h = pool_header(p);
  const unsigned info = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(h->info).load(cuda::std::memory_order_relaxed);
  if ((info & 0xFFFF0000u) != pool_hdr_live)
    fail("pool block released twice, or not from klap::pool_alloc (corrupt header)", "klap::pool_free");
  pool_state& P = *h->owner;
  const unsigned s = detail::sm_id() & (pool_shards - 1u);
  detail::pool_count(P, s, ~0ull);  // -1
  if (((info >> 8) & 0xFFu) == pool_origin_heap) {
    h->info = pool_hdr_free;
    free(h);
    return;
  }
  detail::pool_push(P, info & 0xFFu, s, h);
}

namespace detail {

// Host: prints `klap: error: <what>: <CUDA error string>` to stderr and exits with status 1.
static inline void host_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "klap: error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// A non-blocking stream of klap's own for one-time setup copies (host_prepare, host_kstate): it
// does not synchronize with the legacy NULL stream (CUDA programming guide, "Implicit
// Synchronization"), so klap's setup never waits for the program's running kernels. One per
// program (an inline function's static), created on first use, never destroyed.
inline cudaStream_t host_setup_stream() {
  static cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    host_check(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "klap: cudaStreamCreateWithFlags");
    return t;
  }();
  return s;
}

// Once per program: raise cudaLimitDevRuntimePendingLaunchCount to KLAP_PENDING_LAUNCH_LIMIT if it
// is below (cudaDeviceSetLimit only then). Not fatal if the driver refuses: the launchers retry
// and report a full buffer themselves.
inline void host_pending_limit_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    size_t pending = 0;
    host_check(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount),
               "klap::host_prepare: cudaDeviceGetLimit(cudaLimitDevRuntimePendingLaunchCount)");
    if (pending < static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT)) {
      const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                               static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT));
      if (e != cudaSuccess) {
        std::fprintf(stderr, "klap: warning: cannot raise cudaLimitDevRuntimePendingLaunchCount from %zu to %zu: %s\n",
                     pending, static_cast<size_t>(KLAP_PENDING_LAUNCH_LIMIT), cudaGetErrorString(e));
        (void)cudaGetLastError();  // not sticky: clear it so that the program's own checks do not see it
      }
    }
  });
}

// Host-side state of THIS translation unit's pool.
struct host_pool {
  std::mutex mu;
  std::atomic<bool> ready{false};
  char* base = nullptr;  // the region offered to the device (also the source of the offer's copy)
};
static inline host_pool& host_pool_instance() {
  static host_pool p;  // function-local static: constructed on first use, thread-safe
  return p;
}

// One-time setup of THIS translation unit's pool: cudaMalloc KLAP_POOL_SIZE_BYTES and offer it to
// the device (pool_dev.host_base) with a copy on klap's setup stream, waited for, so that every
// launch made after this returns -- from any host thread, into any stream -- finds the offer.
// (A kernel of this unit that allocated before, without host_prepare, has set up a region of its
// own on the device; the offer is then unused.)
static void host_prepare_this_unit() {
  host_pool& hp = host_pool_instance();
  if (hp.ready.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(hp.mu);
  if (hp.ready.load(std::memory_order_relaxed)) return;
  host_check(cudaMalloc(reinterpret_cast<void**>(&hp.base), static_cast<size_t>(KLAP_POOL_SIZE_BYTES)),
             "klap::host_prepare: cudaMalloc of the memory pool (lower it with klap --pool-size or "
             "-DKLAP_POOL_SIZE_BYTES)");
  const cudaStream_t s = host_setup_stream();
  host_check(cudaMemcpyToSymbolAsync(pool_dev, &hp.base, sizeof(hp.base), offsetof(pool_state, host_base),
                                     cudaMemcpyHostToDevice, s),
             "klap::host_prepare: cudaMemcpyToSymbolAsync(klap::pool_dev.host_base)");
  host_check(cudaStreamSynchronize(s), "klap::host_prepare: cudaStreamSynchronize of the setup copy");
  hp.ready.store(true, std::memory_order_release);
}

// The translation units of the program that include klap: a host-side registry shared by all of
// them. host_units() is an `inline` function with external linkage, so the host linker keeps one
// instance of its static vector for the whole program (C++ [dcl.inline]); each unit adds its own
// host_prepare_this_unit during static initialization. host_all_ready() is true once every
// registered unit is set up (a unit registered later, e.g. by dlopen, clears it).
using unit_prepare_fn = void (*)();
inline std::vector<unit_prepare_fn>& host_units() {
  static std::vector<unit_prepare_fn> units;
  return units;
}
inline std::mutex& host_units_mutex() {
  static std::mutex mu;
  return mu;
}
inline std::atomic<bool>& host_all_ready() {
  static std::atomic<bool> ready{false};
  return ready;
}
struct host_unit_registrar {
  explicit host_unit_registrar(unit_prepare_fn f) {
    std::lock_guard<std::mutex> lock(host_units_mutex());
    host_units().push_back(f);
    host_all_ready().store(false, std::memory_order_release);
  }
};
static host_unit_registrar host_unit_registered(&host_prepare_this_unit);
}  // namespace detail

// HOST, any thread. Prepares klap for a host launch of a transformed kernel and returns `s`
// unchanged, so that generated host code reads `parent<<<g, b, smem, klap::host_prepare(s)>>>(...)`.
// The first call (per program, and per translation unit that includes klap) does the one-time
// setup: cudaMalloc's each unit's pool region (KLAP_POOL_SIZE_BYTES) and offers it to the device
// (see SETUP above; a copy on klap's own non-blocking stream, waited for), and raises
// cudaLimitDevRuntimePendingLaunchCount to KLAP_PENDING_LAUNCH_LIMIT if it is lower (CUDA
// programming guide, CDP, "Launch Environment Configuration"; cudaDeviceSetLimit only when needed;
// if the driver refuses, a warning is printed and the program goes on). Every later call is one
// atomic load: nothing is recycled by the host (memory comes back on the device), no event, no
// synchronization; any number of launches may be enqueued into any streams, from any host threads.
// Preparing all units, not only the caller's, lets a host launch in one file start a transformed
// kernel defined in another (klap-nvcc builds of several files). Errors: a failing CUDA call prints
// `klap: error: klap::host_prepare: ...` to stderr and calls std::exit(1).
static inline cudaStream_t host_prepare(cudaStream_t s = 0) {
  if (detail::host_all_ready().load(std::memory_order_acquire)) return s;
  std::vector<detail::unit_prepare_fn> units;
  {
    std::lock_guard<std::mutex> lock(detail::host_units_mutex());
    units = detail::host_units();
  }
  detail::host_pending_limit_once();
  for (detail::unit_prepare_fn f : units) f();
  {
    std::lock_guard<std::mutex> lock(detail::host_units_mutex());
    if (detail::host_units().size() == units.size()) detail::host_all_ready().store(true, std::memory_order_release);
  }
  return s;
}

// HOST. Returns the pool's error flag (klap::pool_dev.error of the caller's translation unit):
// 0 = no device-side klap error so far, 1 = klap::fail() ran. Returns 0xFFFFFFFF if the flag cannot
// be read, which is what happens after fail() trapped: the trap leaves a sticky error in the CUDA
// context (its message was printed). Synchronous (cudaMemcpyFromSymbol).
static inline unsigned host_pool_error() {
  unsigned e = 0;
  if (cudaMemcpyFromSymbol(&e, pool_dev, sizeof(e), offsetof(pool_state, error)) != cudaSuccess) return 0xFFFFFFFFu;
  return e;
}

// HOST. The number of blocks of the caller's translation unit's pool that are allocated and not yet
// released (the sum of pool_state::live over shards), or ~0ull if it cannot be read. Read it when
// the device is idle (after cudaDeviceSynchronize): then every aggregated launch has released its
// memory and the count is 0 unless something leaked. For tests and leak checks; synchronous.
static inline unsigned long long host_pool_live() {
  unsigned long long live[KLAP_POOL_SHARDS] = {};
  if (cudaMemcpyFromSymbol(live, pool_dev, sizeof(live), offsetof(pool_state, live)) != cudaSuccess) return ~0ull;
  unsigned long long sum = 0;
  for (unsigned long long v : live) sum += v;
  return sum;
}

}  // namespace klap

#endif  // KLAP_POOL_CUH
