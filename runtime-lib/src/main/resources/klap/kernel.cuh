// klap/kernel.cuh -- launch aggregation at KERNEL (grid) granularity (KLAP paper II-B), rebuilt
// for the CUDA 12/13 device runtime (CDP2).
//
// The paper postponed the aggregated launch to the host, after the parent grid ended, so it
// worked only for host-launched parents and not for launches in loops. Here the grid-wide barrier
// is the LAST BLOCK of the parent grid to finish: every block, when all its threads are done,
// takes a device-scope acq_rel ticket; the block that takes the last one launches, for each
// launch site, one aggregated child grid holding the children of every thread of the grid. This
// works for device-launched (recursive) parents, adds no nesting level, and needs no host step.
//
// Per parent-grid instance state (klap::kstate, from the pool or, for host launches, from
// cudaMallocAsync) holds one klap::ksite per launch site. Recording a launch (klap::krecord) is
// the paper's out-of-order atomic scan: ONE 64-bit fetch_add on ksite::packed adds
// (1 << 36) | blocks, so the returned old value gives both the record's index (high 28 bits) and
// the exclusive prefix of block counts (low 36 bits) consistently: records are dense (threads
// that do not launch store nothing) and their block offsets grow with the index. Records live in chunks of doubling capacity (1024,
// 2048, ... records), allocated from the pool by the thread that
// takes a chunk's first index; a child block finds its record by a search over the chunks' first
// offsets and a binary search inside the chunk (cuda::std::upper_bound): O(log n) for grids of
// millions of parent threads.
// LARGE HOST-LAUNCHED GRIDS (issue 11, "scale"): the pool is static (128 MiB by default) and a
// site's records live until its aggregated grid has read them, i.e. the records of the WHOLE grid
// at once; the doubling chunks also need one contiguous chunk of half the records. A grid of 2^24
// threads with one launch each needs about 1 GB of records, and one of 64 K threads whose children
// take a 2 KiB argument 137 MB: more than the pool can give. So a host launch whose records would
// need more than KLAP_KERNEL_ARENA_MIN_BYTES (one launch per thread and site) gets a record ARENA:
// device memory from a stream-ordered memory pool, sized by the host from the launch
// configuration and the sites' record types (generated code passes a helper that calls
// klap::karena_bytes<Args...> to host_kstate), freed in stream order after the parent grid, like
// the state. Each site that the host counted (the plain sites and the first round of the
// per-round ones) then takes a BASE chunk of one record per thread of the grid from the arena,
// carved by the thread that takes the site's record 0; the records past it (threads that launch
// more than once there) go to the doubling pool chunks as before. Device-launched grids
// (kstate_new) and host launches below the threshold are unchanged.
//
// Generated code (klap --granularity=kernel):
//   __global__ void parent(P..., klap::kstate* klap_ks) {
//     [&]() { ... klap::krecord<Args>(klap_ks, SITE, grid, block, smem, stream, Args(args)
//                                      [, DIRECT: the launch as written, for when the pool is full]); ... }();
//     klap::kfinish(klap_ks, NSEQ, klap::klaunch_pair<Args>(
//         [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st)
//             -> cudaError_t { child_klap_kagg<<<g, b, sm, st>>>(s, ...); ... },
//         [&](dim3 g, dim3 b, unsigned sm, cudaStream_t st, const Args& a)      // DIRECT, for when
//             -> cudaError_t { child<<<g, b, sm, st>>>(a.x, ...); ... }));       // the device refuses
//   }
//   __global__ void child_klap_kagg(const klap::ksite* klap_site, ...) {
//     klap::vctx v; const void* rec; if (!klap::kchild_enter(klap_site, v, rec)) return; ...
// POOL FULL: in kernels without tail launches of their own, krecord gets DIRECT; a record that
// finds no room marks the grid degraded and its launches go out as written, into
// cudaStreamTailLaunch, from then on (see krecord; docs/robustness.md).
#ifndef KLAP_KERNEL_CUH
#define KLAP_KERNEL_CUH

#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <new>
#include <cuda/atomic>
#if __has_include(<cuda/std/algorithm>)
#include <cuda/std/algorithm>
#else
#include <cuda/std/__algorithm/upper_bound.h>
#endif
#include "config.cuh"
#include "error.cuh"
#include "pool.cuh"
#include "group.cuh"

#ifndef KLAP_KERNEL_MAX_ORDERED
// Per-round aggregation of launches in loops into ordered streams: at most this many ordered
// launches per parent thread (rounds); the state has this many buckets per such site.
#define KLAP_KERNEL_MAX_ORDERED 64
#endif

namespace klap {

// One recorded launch (one per launching parent thread and execution of the site).
//   grid, block   the original configuration (any shape; grid volume > 0)
//   blocks_excl   exclusive prefix of grid volumes over the records before this one
//   smem          requested dynamic shared memory bytes
//   stream        requested stream
struct kcfg {
  dim3 grid;
  dim3 block;
  unsigned long long blocks_excl;
  unsigned smem;
  cudaStream_t stream;
};

constexpr unsigned kchunk_count = 15;         // chunk c holds 1024 << c records
// ksite::packed: (record index << 36) | blocks. 36 bits of blocks are more than an aggregated grid
// may have (2^31 - 1, checked by kfinish); 28 bits of index allow 2^28 - 1 records per site (a
// base chunk, then the doubling chunks' 1024 * (2^15 - 1)).
constexpr unsigned long long kindex_shift = 36;
constexpr unsigned long long kblocks_mask = (1ull << kindex_shift) - 1ull;
constexpr unsigned long long kmax_records = (1ull << (64 - kindex_shift)) - 1ull;

// The state of one launch site in one parent-grid instance.
//   packed       (records << 36) | total blocks, advanced by krecord's single fetch_add
//   max_threads  max over records of block.x*block.y*block.z
//   max_smem     max over records of the dynamic shared memory
//   chunk[c]     record storage: kcfg[cap] then Args[cap] (cap = 1024 << c), or null; from the pool;
//                detail::kchunk_missing() if the pool had no room for it (its records' launches
//                went out as written, see krecord: the child's blocks of those records do nothing)
//   first_excl[c]  blocks_excl of chunk c's first record (written by the thread that took that
//                record, before it published chunk[c]): where chunk c's blocks begin
//   refs         blocks of this site's aggregated child that have not yet read their records
//                (set by kfinish before the launch, counted down by kchild_release)
//   owner        the kstate this site belongs to (set by kfinish before the launch)
//   base         the site's base chunk in the state's record arena: kcfg[base_cap], then
//                Args[base_cap] (at kbase_args_offset(base_cap)), holding records 0..base_cap-1;
//                null until the thread that took record 0 decided, detail::kbase_none() if the
//                site has none (no arena, not a site the host counted, or the arena was full);
//                never freed by the device (host_kstate_done frees the arena)
//   base_cap     records the base chunk holds (the grid's thread count; written before `base`
//                is published); the doubling chunks then hold records base_cap, base_cap + 1, ...
struct kstate;
struct ksite {
  unsigned long long packed;
  unsigned max_threads;
  unsigned max_smem;
  char* chunk[kchunk_count];
  unsigned long long first_excl[kchunk_count];
  unsigned long long refs;
  kstate* owner;
  char* base;
  unsigned long long base_cap;
};

// The kernel-granularity state of one parent-grid instance: the finished-blocks ticket and the
// sites. Must be zero-initialized (host_kstate, kstate_new); nsites is informational (set by
// kstate_new only).
//   refs    kfinish's own reference plus one per launched site not yet released by its child
//   pooled  1: from the pool (kstate_new), freed on the device when refs reaches 0; 0: the host's
//           (host_kstate), freed by the host in stream order after the launch; 2: the
//           "unavailable" state kstate_new gives when the pool has no room (never freed, no sites)
//   degraded  0, or 1 once a launch of this grid found no pool memory for its record (krecord
//           with a direct launcher): from then on the grid's launches go out as written, into
//           cudaStreamTailLaunch (see krecord)
//   arena, arena_bytes  the record arena of a large host launch (host_kstate; null and 0
//           otherwise), set before the parent grid starts (detail::kstate_set_arena)
//   arena_used  bytes of the arena that the sites' base chunks took (one fetch_add each)
struct kstate {
  unsigned long long done_blocks;
  unsigned long long nsites;
  unsigned long long refs;
  unsigned long long pooled;
  unsigned long long degraded;
  char* arena;
  unsigned long long arena_bytes;
  unsigned long long arena_used;
  ksite site[1];  // nsites entries
};

constexpr unsigned long long kstate_unavailable_tag = 2ull;

namespace detail {

__host__ __device__ constexpr unsigned long long kstate_bytes(unsigned nsites) {
  return static_cast<unsigned long long>(offsetof(kstate, site)) +
         static_cast<unsigned long long>(nsites == 0 ? 1 : nsites) * sizeof(ksite);
}
__device__ inline unsigned long long kcap(unsigned c) { return 1024ull << c; }
__device__ inline unsigned long long kfirst(unsigned c) { return 1024ull * ((1ull << c) - 1ull); }
// The chunk of doubling-chunk record index i (i < kfirst(kchunk_count)): the largest c with kfirst(c) <= i.
__device__ inline unsigned kchunk_of(unsigned long long i) {
  return 31u - static_cast<unsigned>(__clz(static_cast<unsigned>((i >> 10) + 1ull)));
}
__host__ __device__ constexpr unsigned long long kround16(unsigned long long bytes) { return (bytes + 15ull) & ~15ull; }
__device__ inline unsigned long long kargs_offset(unsigned c) { return kround16(kcap(c) * sizeof(kcfg)); }

// Base chunks (LARGE HOST-LAUNCHED GRIDS above): `cap` configurations, then `cap` argument
// records of `args` bytes each, at kbase_args_offset(cap).
__host__ __device__ constexpr unsigned long long kbase_args_offset(unsigned long long cap) {
  return kround16(cap * sizeof(kcfg));
}
__host__ __device__ constexpr unsigned long long kbase_bytes(unsigned long long cap, unsigned long long args) {
  return kbase_args_offset(cap) + kround16(cap * args);
}
// The base pointer of a site that has no base chunk (ksite::base).
__device__ inline char* kbase_none() { return reinterpret_cast<char*>(static_cast<unsigned long long>(32)); }
// The records site s's base chunk holds (0 if it has none). Read once every record is written
// (kfinish, the child grid), or after kbase published the chunk.
__device__ inline unsigned long long kbase_cap(const ksite* s) {
  return s->base == nullptr || s->base == kbase_none() ? 0ull : s->base_cap;
}
// The records of s that lie in doubling chunks, of `count` records in all.
__device__ inline unsigned long long kchunked(const ksite* s, unsigned long long count) {
  const unsigned long long b = kbase_cap(s);
  return count > b ? count - b : 0ull;
}
__device__ inline unsigned long long kvolume(const dim3& d) {
  return static_cast<unsigned long long>(d.x) * d.y * d.z;
}

// The chunk pointer of a chunk that the pool had no room for (ksite::chunk).
__device__ inline char* kchunk_missing() { return reinterpret_cast<char*>(static_cast<unsigned long long>(16)); }

// The first doubling chunk of s that holds records (not kchunk_missing), or kchunk_count if none
// does.
__device__ inline unsigned kchunk_first_held(const ksite* s) {
  const unsigned long long count = kchunked(s, s->packed >> kindex_shift);
  for (unsigned c = 0; c < kchunk_count && kfirst(c) < count; ++c)
    if (s->chunk[c] != kchunk_missing()) return c;
  return kchunk_count;
}

// The configuration of site s's first record in memory (its base chunk, which is always held, else
// its first held doubling chunk), and in `args` where that chunk's argument records begin; null if
// every record's launch went out as written (pool full, krecord).
__device__ inline const kcfg* kfirst_held(const ksite* s, const char*& args) {
  if (kbase_cap(s) != 0ull) {
    args = s->base + kbase_args_offset(s->base_cap);
    return reinterpret_cast<const kcfg*>(s->base);
  }
  const unsigned c = kchunk_first_held(s);
  if (c == kchunk_count) return nullptr;
  args = s->chunk[c] + kargs_offset(c);
  return reinterpret_cast<const kcfg*>(s->chunk[c]);
}

// The templates below, and the functions that call them, are in an unnamed namespace: internal
// linkage, so that ptxas compiles one that nvcc leaves out of line within the register limit of
// the kernel calling it (a weak function is compiled on its own, and a parent klap bounds to 64
// registers then fails to build: see agg_flush in aggregate.cuh).
namespace {

// A pointer that one thread makes and every other thread of the grid waits for: the thread that
// took the right index (`first`) stores make() into `slot` (release) and returns it; the others
// spin (acquire, __nanosleep) until it is there. That thread is running, so no deadlock: independent
// thread scheduling lets lanes of one warp make progress separately. make() must not return null.
template <class Make>
__device__ char* kpublished(char*& slot, bool first, Make make) {
  cuda::atomic_ref<char*, cuda::thread_scope_device> at(slot);
  if (first) {
    char* p = make();
    at.store(p, cuda::std::memory_order_release);
    return p;
  }
  char* p;
  while ((p = at.load(cuda::std::memory_order_acquire)) == nullptr) __nanosleep(64);
  return p;
}

// Site s's base chunk, for a record of the grid of ks at a site the host counted: the thread that
// took record 0 (`first`) carves one record per thread of the grid (`threads` records whose
// arguments take `args` bytes) from the arena of ks with one fetch_add, and publishes it, or
// kbase_none() if the arena has no room left; the other threads wait until it has (kpublished).
// Returns the records the base chunk holds (0: none).
__device__ inline unsigned long long kbase(kstate* ks, ksite& s, bool first, unsigned long long threads,
                                          unsigned long long args) {
  const char* p = kpublished(s.base, first, [&]() -> char* {
    const unsigned long long bytes = kbase_bytes(threads, args);
    const unsigned long long at = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->arena_used)
                                      .fetch_add(bytes, cuda::std::memory_order_relaxed);
    if (at > ks->arena_bytes || bytes > ks->arena_bytes - at) return kbase_none();
    s.base_cap = threads;  // published by kpublished's release store
    return ks->arena + at;
  });
  return p == kbase_none() ? 0ull : s.base_cap;
}

// The storage of chunk c of site s of ks, allocating it if the caller took its first index
// (whose blocks_excl is `excl`), else waiting until the thread that did has published it (that
// thread is running: no deadlock; independent thread scheduling lets lanes of one warp make
// progress separately). full == on_full::launch_as_written: when the pool has no room, marks ks
// degraded and publishes kchunk_missing() (returned to every thread of the chunk); otherwise
// pool_alloc reports the exhaustion and traps.
template <class Args>
__device__ char* kchunk(kstate* ks, ksite& s, unsigned c, bool first, unsigned long long excl, on_full full) {
  return kpublished(s.chunk[c], first, [&]() -> char* {
    s.first_excl[c] = excl;  // published by kpublished's release store
    const unsigned long long bytes = kargs_offset(c) + kcap(c) * sizeof(Args);
    const char* what = "a chunk of kernel-granularity launch records (klap::krecord)";
    char* p = static_cast<char*>(
        full == on_full::fail || !KLAP_KERNEL_TAIL_FALLBACK
            ? pool_alloc(bytes, what)
            : pool_alloc_or_null(bytes, what,
                                 "from then on, the parent grid launches its children as written, into "
                                 "cudaStreamTailLaunch"));
    if (p != nullptr) return p;
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->degraded)
        .store(1ull, cuda::std::memory_order_release);
    return kchunk_missing();
  });
}

// A launch as written, into cudaStreamTailLaunch, by `direct` (generated: the callee as the user
// wrote it, its arguments the record's fields); a failed launch is reported (check_launch).
template <class Args, class D>
__device__ void klaunch_as_written(D& direct, dim3 grid, dim3 block, unsigned smem, const Args& a) {
  check_launch(direct(grid, block, smem, cudaStreamTailLaunch, a),
               "a launch as written into cudaStreamTailLaunch (kernel granularity, klap's pool full)");
}

}  // namespace
}  // namespace detail

namespace {

// Records the calling thread's launch at site `site` of parent-grid state ks: the out-of-order
// atomic scan (KLAP II-B). Not collective: any thread, any control flow, any number of times.
// A grid of 0 blocks records nothing (no zeros stored). Errors (fail()): 2^28 - 1 or more records
// at one site (the 28-bit index field), more than 2^36 blocks in total, or more than
// 1024 * (2^15 - 1) records past the site's base chunk (the doubling chunks).
// WHEN THE POOL IS FULL. Without `direct`, or unless KLAP_KERNEL_TAIL_FALLBACK is 1 (config.cuh:
// the fallback below hung on the H200, 2026-11-27), the record chunk comes from pool_alloc (report
// and trap on exhaustion). With one direct launcher and KLAP_KERNEL_TAIL_FALLBACK (generated code, for a parent whose launches are never
// into cudaStreamTailLaunch: klap decides that at compile time),
//     direct(grid, block, smem, stream, args) -> cudaError_t   launches the original child as written
// the chunk comes from pool_alloc_or_null; if the pool has no room, ks is marked degraded, and
// every launch of this grid whose record has no storage, or that is made after it saw the mark,
// goes out at once, as written, into cudaStreamTailLaunch. Why that keeps the program's meaning:
// tail launches run after the parent grid and everything it launched, so after every aggregated
// grid of kfinish, and one after another in the order they were made; a launch that happens
// after a degraded one (in the program's order, or after a __syncthreads()) sees the mark and is
// a tail launch too. So launches that one thread, or one block's NULL stream, ordered keep their
// order. A parent that makes tail launches of its own gets no direct launcher: its children would
// run before children that the program orders before them.
// RECORD ARENA (large host launches, see the top of this file): the site's first records go to its
// base chunk, one per thread of the grid; the rest to the doubling chunks.
template <class Args, class... D>
__device__ void krecord(kstate* ks, unsigned site, dim3 grid, dim3 block, unsigned smem, cudaStream_t stream,
                        const Args& a, D&&... direct);

namespace kdetail {  // (not `detail`: that would hide klap::detail inside this unnamed namespace)
// krecord at site `site`; `based`: the host counted the site in the record arena (krecord's sites,
// and the first round of krecord_seq's), so it takes a base chunk if ks has an arena.
template <class Args, class... D>
__device__ void krecord_at(kstate* ks, unsigned site, bool based, dim3 grid, dim3 block, unsigned smem,
                           cudaStream_t stream, const Args& a, D&... direct) {
  static_assert(cuda::std::is_trivially_copyable<Args>::value, "klap: Args must be trivially copyable");
  static_assert(alignof(Args) <= 16, "klap: Args must not need more than 16-byte alignment");
  static_assert(sizeof...(D) <= 1, "klap: krecord takes at most one direct launcher");
  constexpr on_full full = sizeof...(D) == 0 ? on_full::fail : on_full::launch_as_written;
  KLAP_TRACE(trace_krecord);
  const unsigned long long blocks = detail::kvolume(grid);
  if (blocks == 0ull || detail::kvolume(block) == 0ull) {  // no block would ever release the records
    (void)raise_config_error(grid, block, smem, stream);   // the original launch's error, if any
    return;
  }
  if (!detail::launchable(grid, block)) {
    // the original launch fails for this thread alone; recorded, it would fail the aggregated grid of
    // every thread (review 2026-11-27): its error is made pending here, where the original launch
    // failed, for the program's own check (raise_config_error; H200, 2026-11-28); a configuration
    // the device accepts after all is launched as written
    if (!raise_config_error(grid, block, smem, stream)) ((void)direct(grid, block, smem, stream, a), ...);
    return;
  }
  if (full == on_full::launch_as_written &&
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->degraded).load(cuda::std::memory_order_acquire) !=
          0ull) {
    (detail::klaunch_as_written(direct, grid, block, smem, a), ...);
    return;
  }
  ksite& s = ks->site[site];
  if (blocks > kblocks_mask) fail("child grid too large for kernel-granularity aggregation", "klap::krecord");
  const unsigned long long old = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(s.packed)
                                     .fetch_add((1ull << kindex_shift) | blocks, cuda::std::memory_order_relaxed);
  const unsigned long long index = old >> kindex_shift;
  const unsigned long long excl = old & kblocks_mask;
  if (index >= kmax_records || excl + blocks > kblocks_mask)
    fail("2^28 - 1 or more launches, or more than 2^36 blocks, at one site; use --granularity=block", "klap::krecord");
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_threads)
      .fetch_max(static_cast<unsigned>(detail::kvolume(block)), cuda::std::memory_order_relaxed);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_smem).fetch_max(smem, cuda::std::memory_order_relaxed);
  unsigned long long base = 0ull;  // records in the site's base chunk
  if (based && ks->arena != nullptr) {
    base = detail::kbase(ks, s, index == 0ull,
                         detail::kvolume(::gridDim) * detail::kvolume(::blockDim), sizeof(Args));
    if (index < base) {
      ::new (static_cast<void*>(reinterpret_cast<kcfg*>(s.base) + index)) kcfg{grid, block, excl, smem, stream};
      ::new (static_cast<void*>(reinterpret_cast<Args*>(s.base + detail::kbase_args_offset(base)) + index)) Args(a);
      return;
    }
  }
  const unsigned long long at = index - base;  // its index among the site's doubling-chunk records
  if (at >= detail::kfirst(kchunk_count))
    fail("more than 1024 * (2^15 - 1) launches at one site past its base chunk; use --granularity=block",
         "klap::krecord");
  const unsigned c = detail::kchunk_of(at);
  const unsigned long long off = at - detail::kfirst(c);
  char* chunk = detail::kchunk<Args>(ks, s, c, off == 0ull, excl, full);
  if (chunk == detail::kchunk_missing()) {  // only with a direct launcher; the record's blocks do nothing
    (detail::klaunch_as_written(direct, grid, block, smem, a), ...);
    return;
  }
  ::new (static_cast<void*>(reinterpret_cast<kcfg*>(chunk) + off)) kcfg{grid, block, excl, smem, stream};
  ::new (static_cast<void*>(reinterpret_cast<Args*>(chunk + detail::kargs_offset(c)) + off)) Args(a);
}
}  // namespace kdetail

template <class Args, class... D>
__device__ void krecord(kstate* ks, unsigned site, dim3 grid, dim3 block, unsigned smem, cudaStream_t stream,
                        const Args& a, D&&... direct) {
  kdetail::krecord_at<Args>(ks, site, true, grid, block, smem, stream, a, direct...);
}

// Per-round variant of krecord for launches into ORDERED streams in kernels where such a launch
// sits in a loop: the thread's j-th ordered launch (j = seq, then seq is incremented) goes to
// bucket (j, q): ks->site[plain + j * nseq + q], q being the site's index among the nseq ordered
// sites. kfinish launches the buckets j-major, so each thread's launches keep their order (one
// aggregated grid per round and site). Errors: more than KLAP_KERNEL_MAX_ORDERED ordered
// launches by one thread -> fail(). `direct`: as for krecord.
template <class Args, class... D>
__device__ void krecord_seq(kstate* ks, unsigned plain, unsigned nseq, unsigned q, unsigned& seq, dim3 grid, dim3 block,
                            unsigned smem, cudaStream_t stream, const Args& a, D&&... direct) {
  // not a launch (krecord records nothing for an empty grid or block): takes no round, or kfinish
  // would stop at this thread's empty round and drop its later ones (review 2026-11-27)
  if (detail::kvolume(grid) == 0ull || detail::kvolume(block) == 0ull) {
    (void)raise_config_error(grid, block, smem, stream);  // the original launch's error, if any
    return;
  }
  if (!detail::launchable(grid, block)) {  // refused (or launched as written) by krecord: takes no round either
    krecord<Args>(ks, plain, grid, block, smem, stream, a, direct...);
    return;
  }
  if (seq >= KLAP_KERNEL_MAX_ORDERED)
    fail("a thread made more than KLAP_KERNEL_MAX_ORDERED ordered launches at kernel granularity; use "
         "--granularity=block or -DKLAP_KERNEL_MAX_ORDERED=<more>", "klap::krecord_seq");
  kdetail::krecord_at<Args>(ks, plain + seq * nseq + q, seq == 0u, grid, block, smem, stream, a, direct...);
  ++seq;
}

// The argument record of the first record of a site that has one in memory (the launcher's scalar
// arguments come from it: they are uniform over the grid, so any record holds the same value).
// kfinish launches a site only if such a record exists.
template <class Args>
__device__ const Args& kfirst_args(const ksite* s) {
  const char* args = nullptr;
  (void)detail::kfirst_held(s, args);
  return *reinterpret_cast<const Args*>(args);
}

// The argument record of a child block's parent record (as found by kchild_enter).
template <class Args>
__device__ const Args& kargs(const void* rec) {
  return *static_cast<const Args*>(rec);
}

// A site's launchers for kfinish (generated code: klap::klaunch_pair<Args>(launch, direct)):
//   launch(site, grid, block, smem, stream) -> cudaError_t   the aggregated launch (as a plain
//                                                            launcher passed to kfinish)
//   direct(grid, block, smem, stream, const Args&) -> cudaError_t   the launch as written of one
//                                                            record (the original child, as krecord's)
// If the device runtime refuses the aggregated launch with another error than a full
// pending-launch buffer (e.g. a child attribute set where klap could not see it, so the variant
// keeps 48 KB of dynamic shared memory), kfinish launches every record of the site as written
// instead (as_written), where the aggregated grid would have been, and warns once. A plain
// launcher (hand-written code) has no such fallback: the refusal traps (check_launch).
// AloneAsWritten: a site (or a round's bucket) with one record is launched as written too, by
// kfinish, without an aggregated grid (nothing to aggregate). Generated code passes false where
// the child is itself a kernel-granularity parent (recursion): the launch as written would start
// the child kernel as written, whose own launches klap then no longer aggregates.
template <class Args, class L, class D, bool AloneAsWritten = true>
struct klaunchers {
  L launch;
  D direct;
  __device__ __forceinline__ cudaError_t operator()(const ksite* s, dim3 grid, dim3 block, unsigned smem,
                                                   cudaStream_t stream) {
    return launch(s, grid, block, smem, stream);
  }
  // Launches the records of site s as written, by the calling thread (kfinish's), in record order,
  // each into its own stream: launches into one block's NULL stream run one after another, so
  // whatever order the aggregated grids kept (sites in order, rounds in order) holds too. Then the
  // site's record chunks go back to the pool. Records in chunks the pool had no room for went out
  // as written when they were made (krecord) and are skipped. A launch as written that fails is
  // reported (check_launch, naming `where`), as a group's in direct mode. kfinish also calls it for
  // a site with one record (nothing to aggregate).
  __device__ __forceinline__ void as_written(
      ksite* s, const char* where = "launch as written (klap::kfinish, the device runtime refused the aggregated launch)");
  // Launches the n records of one chunk (its argument records at chunk + args_offset) as written.
  __device__ __forceinline__ void launch_each(const char* chunk, unsigned long long args_offset, unsigned long long n,
                                             const char* where) {
    const kcfg* cfg = reinterpret_cast<const kcfg*>(chunk);
    const Args* args = reinterpret_cast<const Args*>(chunk + args_offset);
    for (unsigned long long r = 0; r < n; ++r)
      check_launch(direct(cfg[r].grid, cfg[r].block, cfg[r].smem, cfg[r].stream, args[r]), where);
  }
};

// klaunchers::as_written, out of line (kfinish is inlined into every kernel-granularity parent, and
// this fallback inlined with it made those builds about 9% slower), as a function of the unnamed
// namespace: internal linkage, so ptxas compiles it within the register limit of the calling kernel
// (a weak member would be compiled without it; see agg_flush in aggregate.cuh).
template <class Args, class L, class D, bool A>
__device__ __noinline__ void kas_written(klaunchers<Args, L, D, A>& k, ksite* s, const char* where) {
  const unsigned long long all = s->packed >> kindex_shift;
  const unsigned long long base = detail::kbase_cap(s);  // the base chunk's records come first
  if (base != 0ull) k.launch_each(s->base, detail::kbase_args_offset(base), all < base ? all : base, where);
  const unsigned long long count = detail::kchunked(s, all);
  for (unsigned c = 0; c < kchunk_count && detail::kfirst(c) < count; ++c) {
    char* chunk = s->chunk[c];
    if (chunk == nullptr || chunk == detail::kchunk_missing()) continue;
    const unsigned long long left = count - detail::kfirst(c);
    k.launch_each(chunk, detail::kargs_offset(c), left < detail::kcap(c) ? left : detail::kcap(c), where);
    pool_free(chunk);
    s->chunk[c] = nullptr;
  }
}

template <class Args, class L, class D, bool A>
__device__ __forceinline__ void klaunchers<Args, L, D, A>::as_written(ksite* s, const char* where) {
  kas_written(*this, s, where);
}

// The launchers of one kernel-granularity site for kfinish (see klaunchers). Args: the site's
// argument record type, as in krecord<Args>; AloneAsWritten: see klaunchers.
template <class Args, bool AloneAsWritten = true, class L, class D>
__device__ klaunchers<Args, L, D, AloneAsWritten> klaunch_pair(L launch, D direct) {
  return klaunchers<Args, L, D, AloneAsWritten>{launch, direct};
}

namespace kdetail {
// Drops one reference to ks; the last one frees a pooled state.
__device__ inline void kstate_unref(kstate* ks) {
  if (cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs)
              .fetch_sub(1ull, cuda::std::memory_order_acq_rel) == 1ull &&
      ks->pooled != 0ull)
    pool_free(ks);
}

// Whether a site's launcher (kfinish's argument) carries the launch as written of one record
// (klap::klaunch_pair), for when the device runtime refuses the aggregated launch.
template <class F>
struct khas_direct : cuda::std::false_type {};
template <class Args, class L, class D, bool A>
struct khas_direct<klaunchers<Args, L, D, A>> : cuda::std::true_type {};
// Whether kfinish launches a site's one record as written (klaunchers' AloneAsWritten).
template <class F>
struct kalone_as_written : cuda::std::false_type {};
template <class Args, class L, class D, bool A>
struct kalone_as_written<klaunchers<Args, L, D, A>> : cuda::std::bool_constant<A> {};

template <class F>
__device__ bool kfinish_site(kstate* ks, unsigned i, F& launch) {
  ksite* s = &ks->site[i];
  const unsigned long long packed =
      cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(s->packed).load(cuda::std::memory_order_acquire);
  if ((packed >> kindex_shift) == 0ull) return false;
  const char* args = nullptr;
  const kcfg* first = detail::kfirst_held(s, args);
  if (first == nullptr) return true;  // every record's launch went out as written (pool full)
  if constexpr (kalone_as_written<cuda::std::decay_t<F>>::value) {
    if ((packed >> kindex_shift) == 1ull) {
      // one record in the whole grid (e.g. one thread of the grid launches): nothing to aggregate,
      // so it is launched as written, here, where the aggregated grid of that one child would have
      // been: no reference to ks, no pending-budget place, no kchild_enter/kchild_release in the child
      launch.as_written(s, "launch as written (klap::kfinish, the site's only launch)");
      return true;
    }
  }
  const unsigned long long blocks = packed & kblocks_mask;
  if (blocks > 0x7FFFFFFFull)
    fail("aggregated grid has more than 2^31-1 blocks; use --granularity=block", "klap::kfinish");
  // the child's blocks release the records (kchild_release), then this state's reference
  s->owner = ks;
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs).fetch_add(1ull, cuda::std::memory_order_relaxed);
  KLAP_TRACE(trace_kacquire);
  s->refs = release_count_for_launch(first->stream, blocks);
  __threadfence();
  KLAP_TRACE(trace_klaunch);
  const cudaError_t e = launch(s, dim3(static_cast<unsigned>(blocks)), dim3(s->max_threads), s->max_smem, first->stream);
  KLAP_TRACE(trace_klaunched);
  if (e != cudaSuccess) {
    release_launch_failed(s->refs);
    // refused with another error than a full pending-launch buffer (agg_site::flush does the same):
    // no child grid exists, so the site's records are launched as written, one by one, and its
    // reference to ks goes back here (kfinish still holds its own)
    if constexpr (khas_direct<cuda::std::decay_t<F>>::value) {
      if (!detail::pending_buffer_full(e)) {
        detail::aggregate_refused(e, "klap::kfinish");
        launch.as_written(s);
        kstate_unref(ks);
        return true;
      }
    }
  }
  check_launch(e, "kernel-granularity aggregated launch");
  return true;
}
}  // namespace kdetail

// COLLECTIVE over the whole hardware block, at the end of a kernel-granularity parent (every
// thread of the block that has not exited calls it once, after the original body). Every thread
// fences its writes; thread 0 of each block takes a ticket (device-scope acq_rel); the block that
// takes the last ticket of the grid launches the aggregated grids: launch_i(site, grid, block,
// smem, stream), the stream being the first record's. The first sizeof...(L) - nseq launchers
// belong to the plain sites 0.. (one grid each, in order); the last nseq to the ordered per-round
// sites (krecord_seq), whose buckets are launched round by round (j-major, site order within a
// round) until a round has no launches (a thread's j-th ordered launch implies its earlier ones).
// Launches into one stream keep this order. Each aggregated launch (not one into
// cudaStreamTailLaunch, nor a site's one record launched as written) first takes a place in klap's
// pending-launch budget (pool.cuh: pending_acquire). A launcher made by klaunch_pair also carries
// the launch as written of one record: if the device runtime refuses a site's aggregated launch
// (not for a full pending-launch buffer), that site's records are launched as written there,
// one by one (klaunchers::as_written), with a one-time warning; a plain launcher's refusal is
// reported and traps (check_launch). With such a launcher (unless its child is itself a
// kernel-granularity parent: klaunchers' AloneAsWritten), a site (or a round's bucket) that holds
// one record is launched as written too, without an aggregated grid: there is nothing to
// aggregate. Memory: each launched site holds a reference to ks and its records until every block
// of its child has read them (kchild_release); kfinish's own reference is dropped at the end, so a
// pooled state is freed by whoever finishes last. A site whose records all went out as written (pool full, see krecord)
// launches no aggregated grid; its round still counts as one with launches. With the
// "unavailable" state of kstate_new every launch went out as written: kfinish does nothing.
template <class... L>
__device__ void kfinish(kstate* ks, unsigned nseq, L&&... launch) {
  KLAP_TRACE(trace_kfinish);
  __threadfence();
  __syncthreads();
  KLAP_TRACE(trace_kfinish_synced);
  if (::threadIdx.x != 0 || ::threadIdx.y != 0 || ::threadIdx.z != 0) return;
  if (ks->pooled == kstate_unavailable_tag) return;
  const unsigned long long blocks =
      static_cast<unsigned long long>(::gridDim.x) * ::gridDim.y * ::gridDim.z;
  const unsigned long long ticket =
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->done_blocks)
          .fetch_add(1ull, cuda::std::memory_order_acq_rel);
  if (ticket != blocks - 1ull) return;
  KLAP_TRACE(trace_klast);
  __threadfence();
  ks->refs = 1ull;  // kfinish's own reference; no child of this state exists yet
  constexpr unsigned total = sizeof...(L);
  const unsigned plain = total - nseq;
  unsigned i = 0;
  ((i < plain ? (void)kdetail::kfinish_site(ks, i, launch) : (void)0, ++i), ...);
  for (unsigned j = 0; nseq != 0 && j < KLAP_KERNEL_MAX_ORDERED; ++j) {
    bool any = false;
    unsigned q = 0;
    ((q >= plain ? (void)(any |= kdetail::kfinish_site(ks, plain + j * nseq + (q - plain), launch)) : (void)0, ++q),
     ...);
    if (!any) break;
  }
  kdetail::kstate_unref(ks);
  KLAP_TRACE(trace_kfinished);
}

// Gives back a state made by kstate_new whose launch failed (no grid will ever use it).
__device__ inline void kstate_discard(kstate* ks) {
  if (ks->pooled != kstate_unavailable_tag) pool_free(ks);
}

// Child side, right after a kernel-granularity child copied its record's arguments (generated
// code calls it after kchild_enter and the copies, at the top of the kernel): from here on the
// child does not read the state. As child_release (aggregate.cuh): a barrier, then thread 0
// counts the block off the site's release count; the block that counts off the last one frees
// the site's record chunks (not its base chunk: that is the host's arena), drops the site's
// reference to its kstate and gives back the launch's place in klap's pending-launch budget
// (pool.cuh: pending_release); a second barrier keeps the block together until thread 0 is done.
__device__ inline void kchild_release(const ksite* cs) {
  __syncthreads();
  if (::threadIdx.x == 0u) {
    ksite* s = const_cast<ksite*>(cs);
    KLAP_TRACE(trace_kchild_release);
    if (release_block(s->refs)) {
      KLAP_TRACE(trace_kchild_last);
      for (unsigned c = 0; c < kchunk_count; ++c)
        if (s->chunk[c] != nullptr && s->chunk[c] != detail::kchunk_missing()) pool_free(s->chunk[c]);
      kdetail::kstate_unref(s->owner);
    }
  }
  __syncthreads();
}

// The state kstate_new gives when the pool has no room for one (on_full::launch_as_written): every
// launch of the grid that gets it goes out as written, into cudaStreamTailLaunch (krecord), and
// its kfinish does nothing. Never written after initialization; one per translation unit (it is
// only compared against and read, so several copies do no harm).
static __device__ kstate kstate_unavailable = {0ull, 0ull, 0ull, kstate_unavailable_tag, 1ull, nullptr, 0ull, 0ull, {}};

namespace kdetail {
// How many blocks of site s's aggregated grid fall in chunks the pool had no room for
// (kchunk_missing): such a block does nothing (kchild_enter returns false for all its threads), so
// it never reaches the kfinish of the grid's own state. Read by the launching thread once every
// record of s is written (in kfinish_site's launcher).
__device__ inline unsigned long long kmissing_blocks(const ksite* s) {
  const unsigned long long count = detail::kchunked(s, s->packed >> kindex_shift);
  const unsigned long long total = s->packed & kblocks_mask;
  unsigned long long missing = 0ull;
  for (unsigned c = 0; c < kchunk_count && detail::kfirst(c) < count; ++c) {
    if (s->chunk[c] != detail::kchunk_missing()) continue;
    const unsigned long long end =
        c + 1 < kchunk_count && detail::kfirst(c + 1) < count ? s->first_excl[c + 1] : total;
    missing += end - s->first_excl[c];
  }
  return missing;
}
}  // namespace kdetail

// A zeroed kstate for `nsites` sites from the pool, for a device-launched kernel-granularity
// parent (the aggregated child of a recursive kernel). Called by one thread. When the pool has
// no room: on_full::fail reports the exhaustion and traps (pool_alloc), and so does
// on_full::launch_as_written unless KLAP_KERNEL_TAIL_FALLBACK is 1; then on_full::launch_as_written
// (generated code, for a child kernel that makes no tail launches of its own) gives
// &kstate_unavailable after KLAP_POOL_FALLBACK_WAIT_US, so the child grid launches its own
// children as written.
// `site`: the site whose aggregated grid gets this state (generated code passes it). Its blocks in
// chunks without storage never call kfinish, so they are counted as finished from the start:
// otherwise no block of the grid would be the last one and its children would never be launched.
__device__ kstate* kstate_new(unsigned nsites, on_full full = on_full::fail, const ksite* site = nullptr) {
  const unsigned long long bytes = detail::kstate_bytes(nsites);
  const char* what = "the state of a kernel-granularity child grid (klap::kstate_new)";
  void* raw = full == on_full::fail || !KLAP_KERNEL_TAIL_FALLBACK
                  ? pool_alloc(bytes, what)
                  : pool_alloc_or_null(bytes, what, "the child grid launches its children as written, into "
                                                    "cudaStreamTailLaunch");
  if (raw == nullptr) return &kstate_unavailable;
  unsigned long long* p = static_cast<unsigned long long*>(raw);
  for (unsigned long long i = 0; i < bytes / 8ull; ++i) p[i] = 0ull;
  __threadfence();
  kstate* ks = reinterpret_cast<kstate*>(p);
  ks->nsites = nsites;
  ks->pooled = 1ull;
  if (site != nullptr) ks->done_blocks = kdetail::kmissing_blocks(site);
  __threadfence();
  return ks;
}

}  // namespace

namespace {

// Child side, at the start of a kernel-granularity aggregated child (1-D aggregated grid and
// block): finds the record of site s whose blocks [blocks_excl, blocks_excl + volume(grid))
// contain blockIdx.x (a search over the chunks' first offsets, then cuda::std::upper_bound inside
// the chunk), fills v with the original indices (as child_enter does) and a with the record's
// arguments. Returns false for threads past the original block size (the caller returns).
// A block of a chunk that the pool had no room for (its records' launches went out as written,
// krecord) releases the records with the whole block (kchild_release) and returns false for
// every thread. Errors: no record for this block (corrupt state) -> fail().
template <class Args>
__device__ bool kchild_enter(const ksite* s, vctx& v, const Args*& a) {
  KLAP_TRACE(trace_kchild_enter);
  const unsigned long long all = s->packed >> kindex_shift;
  const unsigned long long base = detail::kbase_cap(s);
  const unsigned long long count = detail::kchunked(s, all);  // records in doubling chunks
  const unsigned long long bid = ::blockIdx.x;
  // the chunk of this block: the base chunk (if any) holds the first records, then chunk 0, 1, ...
  const bool in_base = base != 0ull && (count == 0ull || bid < s->first_excl[0]);
  unsigned c = 0;
  for (unsigned k = 1; !in_base && k < kchunk_count && detail::kfirst(k) < count; ++k) {
    if (s->first_excl[k] <= bid) c = k;
    else break;
  }
  if (!in_base && s->chunk[c] == detail::kchunk_missing()) {
    kchild_release(s);
    return false;
  }
  const char* chunk = in_base ? s->base : s->chunk[c];
  const kcfg* cfg = reinterpret_cast<const kcfg*>(chunk);
  const unsigned long long rest = count - detail::kfirst(c);
  const unsigned long long n = in_base ? (all < base ? all : base) : rest < detail::kcap(c) ? rest : detail::kcap(c);
  const kcfg* it = cuda::std::upper_bound(cfg, cfg + n, bid,
                                          [](unsigned long long b, const kcfg& x) { return b < x.blocks_excl; });
  if (it == cfg) fail("kernel-granularity child block has no parent record (corrupt state)", "klap::kchild_enter");
  const kcfg& r = *(it - 1);
  const unsigned long long j = static_cast<unsigned long long>((it - 1) - cfg);
  const unsigned long long b = bid - r.blocks_excl;
  if (b >= detail::kvolume(r.grid))
    fail("kernel-granularity child block past its record (corrupt state)", "klap::kchild_enter");
  a = reinterpret_cast<const Args*>(chunk + (in_base ? detail::kbase_args_offset(base) : detail::kargs_offset(c))) + j;
  v.gridDim = r.grid;
  v.blockDim = r.block;
  v.blockIdx.x = static_cast<unsigned>(b % r.grid.x);
  v.blockIdx.y = static_cast<unsigned>((b / r.grid.x) % r.grid.y);
  v.blockIdx.z = static_cast<unsigned>(b / (static_cast<unsigned long long>(r.grid.x) * r.grid.y));
  const unsigned t = ::threadIdx.x;
  if (t >= r.block.x * r.block.y * r.block.z) return false;
  v.threadIdx.x = t % r.block.x;
  v.threadIdx.y = (t / r.block.x) % r.block.y;
  v.threadIdx.z = t / (r.block.x * r.block.y);
  return true;
}

}  // namespace

namespace detail {
// The state host_kstate handed out last on this host thread, its record arena (or null) and its
// stream, until host_kstate_done gives them back. async: freed with cudaFreeAsync (else cudaFree).
struct host_kstate_pending {
  kstate* ks = nullptr;
  char* arena = nullptr;
  cudaStream_t stream = 0;
  bool async = true;
  bool arena_async = true;
};
static inline host_kstate_pending& host_kstate_last() {
  static thread_local host_kstate_pending p;
  return p;
}

// Clears the host thread's last CUDA error that klap's own refused calls left, unless the program
// had one pending before them (`before`, from cudaPeekAtLastError): that one stays for its checks.
static inline void host_clear_own_error(cudaError_t before) {
  if (before == cudaSuccess) (void)cudaGetLastError();
}

// Gives kernel-granularity state ks its record arena (run as <<<1, 1>>> in the launch's stream,
// right before the parent grid).
static __global__ void kstate_set_arena(kstate* ks, char* arena, unsigned long long bytes) {
  ks->arena = arena;
  ks->arena_bytes = bytes;
}

// klap's stream-ordered memory pool for record arenas on device `dev` (cudaMemPoolCreate; CUDA
// runtime API, "Stream Ordered Memory Allocator"): its own pool, so that the program's default
// pool keeps its settings, and one that keeps up to KLAP_KERNEL_ARENA_KEEP_BYTES when the program
// synchronizes (cudaMemPoolAttrReleaseThreshold), so that repeated launches reuse the memory
// instead of mapping it again. Null if the device has no memory pools, if creating one failed, or
// if it does not exist yet and `create` is false (the launch is being captured into a graph).
static inline cudaMemPool_t host_arena_pool(int dev, bool create) {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mu);
  const auto it = pools.find(dev);
  if (it != pools.end()) return it->second;
  if (!create) return nullptr;
  const cudaError_t before = cudaPeekAtLastError();
  cudaMemPool_t pool = nullptr;
  int supported = 0;
  bool failed = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess;
  if (!failed && supported != 0) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
      unsigned long long keep = KLAP_KERNEL_ARENA_KEEP_BYTES;
      failed = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess;
    } else {
      pool = nullptr;
      failed = true;
    }
  }
  if (failed) host_clear_own_error(before);  // a refused query or creation is not the program's error
  pools[dev] = pool;
  return pool;
}

// cudaMallocAsync of `bytes` in stream s, or cudaMalloc where the device has no stream-ordered
// allocator (`async` false then: free with cudaFree, which synchronizes).
static inline cudaError_t host_malloc_in(void** p, size_t bytes, cudaStream_t s, bool& async) {
  cudaError_t e = cudaMallocAsync(p, bytes, s);
  async = e != cudaErrorNotSupported;
  if (!async) {
    (void)cudaGetLastError();
    e = cudaMalloc(p, bytes);
  }
  return e;
}

// Frees p of host_malloc_in (or of a memory pool, async) in stream order in s; exits on an error.
static inline void host_free_in(void* p, cudaStream_t s, bool async, const char* what) {
  host_check(async ? cudaFreeAsync(p, s) : cudaFree(p), what);
}

// Allocates a record arena of `bytes` in stream s for host_kstate (last: where it is recorded).
// Returns null, after one warning, if the device has no room: the records then use klap's pool,
// as for a smaller launch.
static inline char* host_arena(unsigned long long bytes, cudaStream_t s, host_kstate_pending& last) {
  int dev = 0;
  host_check(cudaGetDevice(&dev), "klap::host_kstate: cudaGetDevice");
  const cudaError_t before = cudaPeekAtLastError();
  void* p = nullptr;
  const cudaMemPool_t pool = host_arena_pool(dev, !host_capturing(s));
  cudaError_t e = pool != nullptr ? cudaMallocFromPoolAsync(&p, static_cast<size_t>(bytes), pool, s) : cudaErrorNotSupported;
  last.arena_async = true;
  // klap's pool refused (e.g. its handle died with a cudaDeviceReset): the device's current pool
  if (e != cudaSuccess) e = host_malloc_in(&p, static_cast<size_t>(bytes), s, last.arena_async);
  host_clear_own_error(before);  // none of klap's refused calls is the program's error
  if (e != cudaSuccess) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "klap: warning: no device memory for a kernel-granularity record arena (%llu bytes: %s); the "
                   "launch's records use klap's pool, which may be too small for them (printed once)\n",
                   bytes, cudaGetErrorString(e));
    });
    return nullptr;
  }
  return static_cast<char*>(p);
}
}  // namespace detail

// The bytes of the record arena of a kernel-granularity parent grid of `threads` threads whose
// arena sites (krecord's plain sites, then the first round of the per-round ones) record argument
// records of types Args...: one base chunk per site of one record per thread (kernel.cuh, "LARGE
// HOST-LAUNCHED GRIDS"). Generated code defines, next to each non-template kernel-granularity
// twin f_klap_grid, `static inline unsigned long long f_klap_grid_karena(unsigned long long t)
// { return klap::karena_bytes<A...>(t); }`, and passes it to host_kstate.
template <class... Args>
__host__ __device__ constexpr unsigned long long karena_bytes(unsigned long long threads) {
  return (0ull + ... + detail::kbase_bytes(threads, sizeof(Args)));
}

// HOST. Frees the state of this host thread's latest host_kstate, in stream order after the launch
// that used it (cudaFreeAsync into that launch's stream); nothing if it was freed already (a
// launch expression that did not run). Generated code calls it right after the launch.
static inline void host_kstate_done() {
  detail::host_kstate_pending& last = detail::host_kstate_last();
  if (last.ks == nullptr) return;
  detail::host_free_in(last.ks, last.stream, last.async, "klap::host_kstate_done: freeing the kernel-granularity state");
  last.ks = nullptr;
  if (last.arena != nullptr)
    detail::host_free_in(last.arena, last.stream, last.arena_async,
                         "klap::host_kstate_done: freeing the kernel-granularity record arena");
  last.arena = nullptr;
}

// HOST. A zeroed kstate for `nsites` sites for one host launch of a kernel-granularity parent,
// passed by the transformed host code as the kernel's last argument, followed by host_kstate_done:
//   (parent_klap_grid<<<g, b, sm, klap::host_prepare(s)>>>(args..., klap::host_kstate(N)), klap::host_kstate_done());
// It comes from the stream-ordered allocator (cudaMallocAsync) and is zeroed (cudaMemsetAsync) in
// the stream of the latest host_prepare call of this host thread, which is the launch's own
// stream: nvcc evaluates the launch configuration before the arguments (k<<<c>>>(a) becomes
// `push_configuration(c) ? (void)0 : k(a)`). No host synchronization: the memory is freed in
// stream order after the parent grid, which completes only after every grid it launched
// (host_kstate_done). Devices without memory pools get cudaMalloc and a cudaFree after the launch
// (which synchronizes). On a CUDA error it prints `klap: error: ...` and exits(1), like
// host_prepare.
// RECORD ARENA: `arena_bytes` (generated code: the twin's f_klap_grid_karena, see karena_bytes; or
// null) gives the bytes of the record arena for a grid of n threads. If the latest host_prepare
// call knew the launch configuration (host_warps: its exact thread count) and the arena would be at
// least KLAP_KERNEL_ARENA_MIN_BYTES, the state gets one (host_arena; set by a one-thread
// kernel, kstate_set_arena, in the same stream), freed by host_kstate_done like the state.
// Otherwise, or if the device has no room for it, the records use klap's pool, as always.
static inline kstate* host_kstate(unsigned nsites, unsigned long long (*arena_bytes)(unsigned long long) = nullptr) {
  host_kstate_done();  // a launch issued without its done call (its stream order still holds)
  const unsigned long long threads = detail::host_current_threads();
  detail::host_current_threads() = host_launches_unknown;  // this launch's: not for the next one
  const size_t bytes = static_cast<size_t>(detail::kstate_bytes(nsites));
  detail::host_kstate_pending& last = detail::host_kstate_last();
  last.stream = detail::host_current_stream();
  void* p = nullptr;
  detail::host_check(detail::host_malloc_in(&p, bytes, last.stream, last.async),
                     "klap::host_kstate: allocating the kernel-granularity state");
  detail::host_check(cudaMemsetAsync(p, 0, bytes, last.stream), "klap::host_kstate: cudaMemsetAsync");
  last.ks = static_cast<kstate*>(p);
  if (arena_bytes != nullptr && threads != host_launches_unknown) {
    const unsigned long long need = arena_bytes(threads);
    constexpr unsigned long long at_least = KLAP_KERNEL_ARENA_MIN_BYTES;
    if (at_least == 0ull || need >= at_least) {  // (not `need >= 0`: nvcc warns of it)
      last.arena = detail::host_arena(need, last.stream, last);
      if (last.arena != nullptr) {
        kstate* ks = last.ks;
        char* arena = last.arena;
        unsigned long long size = need;
        void* args[] = {&ks, &arena, &size};
        detail::host_check(cudaLaunchKernel(reinterpret_cast<const void*>(&detail::kstate_set_arena), dim3(1), dim3(1),
                                            args, 0, last.stream),
                           "klap::host_kstate: setting the record arena");
      }
    }
  }
  return last.ks;
}

}  // namespace klap

#endif  // KLAP_KERNEL_CUH
