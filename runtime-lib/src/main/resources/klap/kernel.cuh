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
// (1 << 40) | blocks, so the returned old value gives both the record's index (high 24 bits) and
// the exclusive prefix of block counts (low 40 bits) consistently: records are dense (threads
// that do not launch store nothing) and their block offsets grow with the index. Records live in chunks of doubling capacity (1024,
// 2048, ... records: the 24-bit index field allows 2^24 - 1 records per site), allocated from the pool by the thread that
// takes a chunk's first index; a child block finds its record by a search over the chunks' first
// offsets and a binary search inside the chunk (cuda::std::upper_bound): O(log n) for grids of
// millions of parent threads.
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
constexpr unsigned long long kindex_shift = 40;
constexpr unsigned long long kblocks_mask = (1ull << kindex_shift) - 1ull;
constexpr unsigned long long kmax_records = (1ull << 24) - 1ull;

// The state of one launch site in one parent-grid instance.
//   packed       (records << 40) | total blocks, advanced by krecord's single fetch_add
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
struct kstate;
struct ksite {
  unsigned long long packed;
  unsigned max_threads;
  unsigned max_smem;
  char* chunk[kchunk_count];
  unsigned long long first_excl[kchunk_count];
  unsigned long long refs;
  kstate* owner;
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
struct kstate {
  unsigned long long done_blocks;
  unsigned long long nsites;
  unsigned long long refs;
  unsigned long long pooled;
  unsigned long long degraded;
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
// The chunk of record index i (i < 2^24): the largest c with kfirst(c) <= i.
__device__ inline unsigned kchunk_of(unsigned long long i) {
  return 31u - static_cast<unsigned>(__clz(static_cast<unsigned>((i >> 10) + 1ull)));
}
__device__ inline unsigned long long kargs_offset(unsigned c) {
  return (kcap(c) * sizeof(kcfg) + 15ull) & ~15ull;
}
__device__ inline unsigned long long kvolume(const dim3& d) {
  return static_cast<unsigned long long>(d.x) * d.y * d.z;
}

// The chunk pointer of a chunk that the pool had no room for (ksite::chunk).
__device__ inline char* kchunk_missing() { return reinterpret_cast<char*>(static_cast<unsigned long long>(16)); }

// The first chunk of s that holds records (not kchunk_missing), or kchunk_count if none does.
__device__ inline unsigned kchunk_first_held(const ksite* s) {
  const unsigned long long count = s->packed >> kindex_shift;
  for (unsigned c = 0; c < kchunk_count && kfirst(c) < count; ++c)
    if (s->chunk[c] != kchunk_missing()) return c;
  return kchunk_count;
}

// The storage of chunk c of site s of ks, allocating it if the caller took its first index
// (whose blocks_excl is `excl`), else waiting until the thread that did has published it (that
// thread is running: no deadlock; independent thread scheduling lets lanes of one warp make
// progress separately). full == on_full::launch_as_written: when the pool has no room, marks ks
// degraded and publishes kchunk_missing() (returned to every thread of the chunk); otherwise
// pool_alloc reports the exhaustion and traps.
template <class Args>
__device__ char* kchunk(kstate* ks, ksite& s, unsigned c, bool first, unsigned long long excl, on_full full) {
  cuda::atomic_ref<char*, cuda::thread_scope_device> slot(s.chunk[c]);
  if (first) {
    s.first_excl[c] = excl;  // published by the release store below
    const unsigned long long bytes = kargs_offset(c) + kcap(c) * sizeof(Args);
    const char* what = "a chunk of kernel-granularity launch records (klap::krecord)";
    char* p = static_cast<char*>(
        full == on_full::fail || !KLAP_KERNEL_TAIL_FALLBACK
            ? pool_alloc(bytes, what)
            : pool_alloc_or_null(bytes, what,
                                 "from then on, the parent grid launches its children as written, into "
                                 "cudaStreamTailLaunch"));
    if (p == nullptr) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->degraded)
          .store(1ull, cuda::std::memory_order_release);
      p = kchunk_missing();
    }
    slot.store(p, cuda::std::memory_order_release);
    return p;
  }
  char* p;
  while ((p = slot.load(cuda::std::memory_order_acquire)) == nullptr) __nanosleep(64);
  return p;
}

// A launch as written, into cudaStreamTailLaunch, by `direct` (generated: the callee as the user
// wrote it, its arguments the record's fields); a failed launch is reported (check_launch).
template <class Args, class D>
__device__ void klaunch_as_written(D& direct, dim3 grid, dim3 block, unsigned smem, const Args& a) {
  check_launch(direct(grid, block, smem, cudaStreamTailLaunch, a),
               "a launch as written into cudaStreamTailLaunch (kernel granularity, klap's pool full)");
}

}  // namespace detail

namespace {

// Records the calling thread's launch at site `site` of parent-grid state ks: the out-of-order
// atomic scan (KLAP II-B). Not collective: any thread, any control flow, any number of times.
// A grid of 0 blocks records nothing (no zeros stored). Errors (fail()): 2^24 - 1 or more records
// at one site (the 24-bit index field), or more than 2^40 blocks in total.
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
template <class Args, class... D>
__device__ void krecord(kstate* ks, unsigned site, dim3 grid, dim3 block, unsigned smem, cudaStream_t stream,
                        const Args& a, D&&... direct) {
  static_assert(cuda::std::is_trivially_copyable<Args>::value, "klap: Args must be trivially copyable");
  static_assert(alignof(Args) <= 16, "klap: Args must not need more than 16-byte alignment");
  static_assert(sizeof...(D) <= 1, "klap: krecord takes at most one direct launcher");
  constexpr on_full full = sizeof...(D) == 0 ? on_full::fail : on_full::launch_as_written;
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
    fail("2^24 - 1 or more launches, or more than 2^40 blocks, at one site; use --granularity=block", "klap::krecord");
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_threads)
      .fetch_max(static_cast<unsigned>(detail::kvolume(block)), cuda::std::memory_order_relaxed);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_smem).fetch_max(smem, cuda::std::memory_order_relaxed);
  const unsigned c = detail::kchunk_of(index);
  const unsigned long long off = index - detail::kfirst(c);
  char* chunk = detail::kchunk<Args>(ks, s, c, off == 0ull, excl, full);
  if (chunk == detail::kchunk_missing()) {  // only with a direct launcher; the record's blocks do nothing
    (detail::klaunch_as_written(direct, grid, block, smem, a), ...);
    return;
  }
  ::new (static_cast<void*>(reinterpret_cast<kcfg*>(chunk) + off)) kcfg{grid, block, excl, smem, stream};
  ::new (static_cast<void*>(reinterpret_cast<Args*>(chunk + detail::kargs_offset(c)) + off)) Args(a);
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
  krecord<Args>(ks, plain + seq * nseq + q, grid, block, smem, stream, a, direct...);
  ++seq;
}

// The argument record of the first record of a site that has one in memory (the launcher's scalar
// arguments come from it: they are uniform over the grid, so any record holds the same value).
// kfinish launches a site only if such a record exists.
template <class Args>
__device__ const Args& kfirst_args(const ksite* s) {
  const unsigned c = detail::kchunk_first_held(s);
  return *reinterpret_cast<const Args*>(s->chunk[c] + detail::kargs_offset(c));
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
template <class Args, class L, class D>
struct klaunchers {
  L launch;
  D direct;
  __device__ cudaError_t operator()(const ksite* s, dim3 grid, dim3 block, unsigned smem, cudaStream_t stream) {
    return launch(s, grid, block, smem, stream);
  }
  // Launches the records of site s as written, by the calling thread (kfinish's), in record order,
  // each into its own stream: launches into one block's NULL stream run one after another, so
  // whatever order the aggregated grids kept (sites in order, rounds in order) holds too. Then the
  // site's record chunks go back to the pool. Records in chunks the pool had no room for went out
  // as written when they were made (krecord) and are skipped. A launch as written that fails is
  // reported (check_launch), as a group's in direct mode.
  __device__ __noinline__ void as_written(ksite* s) {
    const unsigned long long count = s->packed >> kindex_shift;
    for (unsigned c = 0; c < kchunk_count && detail::kfirst(c) < count; ++c) {
      char* chunk = s->chunk[c];
      if (chunk == nullptr || chunk == detail::kchunk_missing()) continue;
      const unsigned long long left = count - detail::kfirst(c);
      const unsigned long long n = left < detail::kcap(c) ? left : detail::kcap(c);
      const kcfg* cfg = reinterpret_cast<const kcfg*>(chunk);
      const Args* args = reinterpret_cast<const Args*>(chunk + detail::kargs_offset(c));
      for (unsigned long long r = 0; r < n; ++r)
        check_launch(direct(cfg[r].grid, cfg[r].block, cfg[r].smem, cfg[r].stream, args[r]),
                     "launch as written (klap::kfinish, the device runtime refused the aggregated launch)");
      pool_free(chunk);
      s->chunk[c] = nullptr;
    }
  }
};

// The launchers of one kernel-granularity site for kfinish (see klaunchers). Args: the site's
// argument record type, as in krecord<Args>.
template <class Args, class L, class D>
__device__ klaunchers<Args, L, D> klaunch_pair(L launch, D direct) {
  return klaunchers<Args, L, D>{launch, direct};
}

namespace kdetail {  // (not `detail`: that would hide klap::detail inside this unnamed namespace)
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
template <class Args, class L, class D>
struct khas_direct<klaunchers<Args, L, D>> : cuda::std::true_type {};

template <class F>
__device__ bool kfinish_site(kstate* ks, unsigned i, F& launch) {
  ksite* s = &ks->site[i];
  const unsigned long long packed =
      cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(s->packed).load(cuda::std::memory_order_acquire);
  if ((packed >> kindex_shift) == 0ull) return false;
  const unsigned held = detail::kchunk_first_held(s);
  if (held == kchunk_count) return true;  // every record's launch went out as written (pool full)
  const unsigned long long blocks = packed & kblocks_mask;
  if (blocks > 0x7FFFFFFFull)
    fail("aggregated grid has more than 2^31-1 blocks; use --granularity=block", "klap::kfinish");
  const kcfg* first = reinterpret_cast<const kcfg*>(s->chunk[held]);
  // the child's blocks release the records (kchild_release), then this state's reference
  s->owner = ks;
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs).fetch_add(1ull, cuda::std::memory_order_relaxed);
  s->refs = release_count_for_launch(first->stream, blocks);
  __threadfence();
  const cudaError_t e = launch(s, dim3(static_cast<unsigned>(blocks)), dim3(s->max_threads), s->max_smem, first->stream);
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
// Launches into one stream keep this order. Each launch first takes a place in klap's
// pending-launch budget (pool.cuh: pending_acquire). A launcher made by klaunch_pair also carries
// the launch as written of one record: if the device runtime refuses a site's aggregated launch
// (not for a full pending-launch buffer), that site's records are launched as written there,
// one by one (klaunchers::as_written), with a one-time warning; a plain launcher's refusal is
// reported and traps (check_launch). Memory: each launched site holds a
// reference to ks and its records until every block of its child has read them
// (kchild_release); kfinish's own reference is dropped at the end, so a pooled state is freed by
// whoever finishes last. A site whose records all went out as written (pool full, see krecord)
// launches no aggregated grid; its round still counts as one with launches. With the
// "unavailable" state of kstate_new every launch went out as written: kfinish does nothing.
template <class... L>
__device__ void kfinish(kstate* ks, unsigned nseq, L&&... launch) {
  __threadfence();
  __syncthreads();
  if (::threadIdx.x != 0 || ::threadIdx.y != 0 || ::threadIdx.z != 0) return;
  if (ks->pooled == kstate_unavailable_tag) return;
  const unsigned long long blocks =
      static_cast<unsigned long long>(::gridDim.x) * ::gridDim.y * ::gridDim.z;
  const unsigned long long ticket =
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->done_blocks)
          .fetch_add(1ull, cuda::std::memory_order_acq_rel);
  if (ticket != blocks - 1ull) return;
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
}

// Gives back a state made by kstate_new whose launch failed (no grid will ever use it).
__device__ inline void kstate_discard(kstate* ks) {
  if (ks->pooled != kstate_unavailable_tag) pool_free(ks);
}

// Child side, right after a kernel-granularity child copied its record's arguments (generated
// code calls it after kchild_enter and the copies, at the top of the kernel): from here on the
// child does not read the state. As child_release (aggregate.cuh): a barrier, then thread 0
// counts the block off the site's release count; the block that counts off the last one frees
// the site's record chunks, drops the site's reference to its kstate and gives back the launch's
// place in klap's pending-launch budget (pool.cuh: pending_release); a second barrier keeps
// the block together until thread 0 is done.
__device__ inline void kchild_release(const ksite* cs) {
  __syncthreads();
  if (::threadIdx.x == 0u) {
    ksite* s = const_cast<ksite*>(cs);
    if (release_block(s->refs)) {
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
static __device__ kstate kstate_unavailable = {0ull, 0ull, 0ull, kstate_unavailable_tag, 1ull, {}};

namespace kdetail {
// How many blocks of site s's aggregated grid fall in chunks the pool had no room for
// (kchunk_missing): such a block does nothing (kchild_enter returns false for all its threads), so
// it never reaches the kfinish of the grid's own state. Read by the launching thread once every
// record of s is written (in kfinish_site's launcher).
__device__ inline unsigned long long kmissing_blocks(const ksite* s) {
  const unsigned long long count = s->packed >> kindex_shift;
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
  const unsigned long long count = s->packed >> kindex_shift;
  const unsigned long long bid = ::blockIdx.x;
  unsigned c = 0;
  for (unsigned k = 1; k < kchunk_count && detail::kfirst(k) < count; ++k) {
    if (s->first_excl[k] <= bid) c = k;
    else break;
  }
  if (s->chunk[c] == detail::kchunk_missing()) {
    kchild_release(s);
    return false;
  }
  const kcfg* cfg = reinterpret_cast<const kcfg*>(s->chunk[c]);
  const unsigned long long rest = count - detail::kfirst(c);
  const unsigned long long n = rest < detail::kcap(c) ? rest : detail::kcap(c);
  const kcfg* it = cuda::std::upper_bound(cfg, cfg + n, bid,
                                          [](unsigned long long b, const kcfg& x) { return b < x.blocks_excl; });
  if (it == cfg) fail("kernel-granularity child block has no parent record (corrupt state)", "klap::kchild_enter");
  const kcfg& r = *(it - 1);
  const unsigned long long j = static_cast<unsigned long long>((it - 1) - cfg);
  const unsigned long long b = bid - r.blocks_excl;
  if (b >= detail::kvolume(r.grid))
    fail("kernel-granularity child block past its record (corrupt state)", "klap::kchild_enter");
  a = reinterpret_cast<const Args*>(s->chunk[c] + detail::kargs_offset(c)) + j;
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
// The state host_kstate handed out last on this host thread, and its stream, until
// host_kstate_done gives it back.
struct host_kstate_pending {
  kstate* ks = nullptr;
  cudaStream_t stream = 0;
  bool async = true;
};
static inline host_kstate_pending& host_kstate_last() {
  static thread_local host_kstate_pending p;
  return p;
}
}  // namespace detail

// HOST. Frees the state of this host thread's latest host_kstate, in stream order after the launch
// that used it (cudaFreeAsync into that launch's stream); nothing if it was freed already (a
// launch expression that did not run). Generated code calls it right after the launch.
static inline void host_kstate_done() {
  detail::host_kstate_pending& last = detail::host_kstate_last();
  if (last.ks == nullptr) return;
  detail::host_check(last.async ? cudaFreeAsync(last.ks, last.stream) : cudaFree(last.ks),
                     "klap::host_kstate_done: freeing the kernel-granularity state");
  last.ks = nullptr;
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
static inline kstate* host_kstate(unsigned nsites) {
  host_kstate_done();  // a launch issued without its done call (its stream order still holds)
  const size_t bytes = static_cast<size_t>(detail::kstate_bytes(nsites));
  detail::host_kstate_pending& last = detail::host_kstate_last();
  last.stream = detail::host_current_stream();
  void* p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, bytes, last.stream);
  last.async = e == cudaSuccess;
  if (e == cudaErrorNotSupported) {
    (void)cudaGetLastError();
    e = cudaMalloc(&p, bytes);
  }
  detail::host_check(e, "klap::host_kstate: allocating the kernel-granularity state");
  detail::host_check(cudaMemsetAsync(p, 0, bytes, last.stream), "klap::host_kstate: cudaMemsetAsync");
  last.ks = static_cast<kstate*>(p);
  return last.ks;
}

}  // namespace klap

#endif  // KLAP_KERNEL_CUH
