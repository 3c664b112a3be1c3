// klap/kernel.cuh -- launch aggregation at KERNEL (grid) granularity (KLAP paper II-B), rebuilt
// for the CUDA 12/13 device runtime (CDP2).
//
// The paper postponed the aggregated launch to the host, after the parent grid ended, so it
// worked only for host-launched parents and not for launches in loops. Here the grid-wide barrier
// is the LAST THREAD of the parent grid to finish: every thread calls klap::kfinish once at the
// end; the lanes that arrive together add their number to a device-scope counter with one acq_rel
// fetch_add, and the thread whose add completes gridDim-volume x blockDim-volume launches, for
// each launch site, one aggregated child grid holding the children of every thread of the grid.
// This works for device-launched (recursive) parents, adds no nesting level, needs no host step,
// and uses no __syncthreads(): a barrier of klap's would pair with the user's own (both are
// barrier 0) when some threads returned early while the others wait at the user's __syncthreads().
//
// Per parent-grid instance state (klap::kstate, from the pool by kstate_new, or a host slot by
// host_kstate) holds one klap::ksite per launch site. Recording a launch (klap::krecord) is the
// paper's out-of-order atomic scan: ONE 64-bit fetch_add on ksite::packed adds (1 << 40) | blocks,
// so the returned old value gives both the record's index (high 24 bits) and the exclusive prefix
// of block counts (low 40 bits) consistently: records are dense (threads that do not launch store
// nothing) and their block offsets grow with the index. Records live in chunks of doubling
// capacity (256, 512, ... records: 17 chunks hold 2^24 records), allocated from the pool by the
// thread that takes a chunk's first index; a child block finds its record by a search over the
// chunks' first offsets and a binary search inside the chunk (cuda::std::upper_bound): O(log n)
// for grids of millions of parent threads.
//
// MEMORY (issue 11): the kstate and every record chunk of every site are released on the device
// when every block of every grid that kfinish launched for it has called klap::kchild_release (the
// child copies its record's arguments first), or by kfinish itself when it launched nothing. The
// release counter kstate::refs holds one reference for the launching thread while it launches
// (so grids launched first cannot free the state before the later sites are launched) plus one
// per block of each launched grid, added before that launch. A pool kstate goes back to the pool;
// a host slot (host_kstate) is zeroed by the device and handed back to the host through a flag in
// mapped host memory. kstate_discard frees a kstate_new state whose launch failed.
//
// Generated code (klap --granularity=kernel):
//   __global__ void parent(P..., klap::kstate* klap_ks) {
//     [&]() { ... klap::krecord<Args>(klap_ks, SITE, grid, block, smem, stream, Args(args)); ... }();
//     klap::kfinish(klap_ks, NSEQ, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st)
//         -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError();
//                          child_klap_kagg<<<g, b, sm, st>>>(s, ...); return klap::launch_result(klap_pre); });
//   }
//   __global__ void child_klap_kagg(const klap::ksite* klap_site, ...) {
//     klap::vctx klap_v; const Args* klap_a;
//     if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
//     T1 p1 = klap_a->p1; ...
//     klap::kchild_release(klap_site);
//     ... original body ...
//   host: parent<<<g, b, 0, klap::host_prepare(s)>>>(args..., klap::host_kstate(NSITES));
#ifndef KLAP_KERNEL_CUH
#define KLAP_KERNEL_CUH

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#include <cooperative_groups.h>
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

#ifndef KLAP_HOST_KSTATE_MAX_SLOTS
// Most kernel-granularity states host_kstate keeps per state size (one per host launch in
// flight); past it, host_kstate waits for the device to release one.
#define KLAP_HOST_KSTATE_MAX_SLOTS 65536
#endif

#ifndef KLAP_HOST_KSTATE_WAIT_S
// How long host_kstate waits for a free slot when KLAP_HOST_KSTATE_MAX_SLOTS are in flight.
#define KLAP_HOST_KSTATE_WAIT_S 60
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

constexpr unsigned kchunk_log0 = 8;           // chunk 0 holds 256 records
constexpr unsigned kchunk_count = 17;         // chunk c holds 256 << c records
constexpr unsigned long long kindex_shift = 40;
constexpr unsigned long long kblocks_mask = (1ull << kindex_shift) - 1ull;
constexpr unsigned long long kmax_records = (1ull << 24) - 1ull;

struct kstate;

// The state of one launch site in one parent-grid instance.
//   owner        the kstate this site belongs to (set when the state is made, never changed):
//                kchild_release finds the release counter through it
//   packed       (records << 40) | total blocks, advanced by krecord's single fetch_add
//   max_threads  max over records of block.x*block.y*block.z
//   max_smem     max over records of the dynamic shared memory
//   chunk[c]     record storage: kcfg[cap] then Args[cap] (cap = 256 << c), or null
struct ksite {
  kstate* owner;
  unsigned long long packed;
  unsigned max_threads;
  unsigned max_smem;
  char* chunk[kchunk_count];
};

// The kernel-granularity state of one parent-grid instance.
//   done_threads  threads of the parent grid that have called kfinish
//   refs          release counter: the launcher's hold + the blocks of the launched grids that have
//                 not called kchild_release yet
//   host_free     host slot (host_kstate): its free flag in mapped host memory, which the device sets
//                 to 1 when it releases the slot; null for pool states (kstate_new)
//   nsites        number of entries of site[]
// Made by kstate_new (device) or host_kstate (host), which zero everything else.
struct kstate {
  unsigned long long done_threads;
  unsigned long long refs;
  unsigned* host_free;
  unsigned long long nsites;
  ksite site[1];  // nsites entries
};

namespace detail {

__host__ __device__ constexpr unsigned long long kstate_bytes(unsigned nsites) {
  return static_cast<unsigned long long>(offsetof(kstate, site)) +
         static_cast<unsigned long long>(nsites == 0 ? 1 : nsites) * sizeof(ksite);
}
__host__ __device__ inline ksite* ksites(kstate* ks) {
  return reinterpret_cast<ksite*>(reinterpret_cast<char*>(ks) + offsetof(kstate, site));
}
__device__ inline unsigned long long kcap(unsigned c) { return (1ull << kchunk_log0) << c; }
__device__ inline unsigned long long kfirst(unsigned c) { return (1ull << kchunk_log0) * ((1ull << c) - 1ull); }
// The chunk of record index i (i < 2^24): the largest c with kfirst(c) <= i.
__device__ inline unsigned kchunk_of(unsigned long long i) {
  return 31u - static_cast<unsigned>(__clz(static_cast<unsigned>((i >> kchunk_log0) + 1ull)));
}
__device__ inline unsigned long long kargs_offset(unsigned c) {
  return (kcap(c) * sizeof(kcfg) + 15ull) & ~15ull;
}
__device__ inline unsigned long long kvolume(const dim3& d) {
  return static_cast<unsigned long long>(d.x) * d.y * d.z;
}

// The storage of chunk c of s, allocating it if the caller took its first index, else waiting
// until the thread that did has published it (that thread is running: no deadlock; independent
// thread scheduling lets lanes of one warp make progress separately; a 10 s timeout fails).
template <class Args>
__device__ char* kchunk(ksite& s, unsigned c, bool first) {
  cuda::atomic_ref<char*, cuda::thread_scope_device> slot(s.chunk[c]);
  if (first) {
    char* p = static_cast<char*>(
        pool_alloc(kargs_offset(c) + kcap(c) * sizeof(Args), "kernel-granularity launch records (krecord)"));
    slot.store(p, cuda::std::memory_order_release);
    return p;
  }
  char* p;
  const unsigned long long t0 = now_ns();
  while ((p = slot.load(cuda::std::memory_order_acquire)) == nullptr) {
    __nanosleep(64);
    if (now_ns() - t0 > 10000000000ull)
      fail("kernel-granularity record chunk not published within 10 s", "klap::krecord");
  }
  return p;
}

// Zeroes what a parent grid changes in ks (counters, sites' records), keeping owner, host_free
// and nsites: a released host slot is ready for its next launch.
__device__ inline void kstate_reset(kstate* ks) {
  ks->done_threads = 0ull;
  ks->refs = 0ull;
  ksite* s = ksites(ks);
  const unsigned long long n = ks->nsites == 0ull ? 1ull : ks->nsites;
  for (unsigned long long i = 0; i < n; ++i) {
    s[i].packed = 0ull;
    s[i].max_threads = 0u;
    s[i].max_smem = 0u;
    for (unsigned c = 0; c < kchunk_count; ++c) s[i].chunk[c] = nullptr;
  }
}

// Frees every record chunk of every site of ks, then ks itself (pool state) or hands the slot
// back to the host (host state: zeroed, then its flag set with a system-scope release store, so
// the host sees the zeroes before it reuses the slot). Nothing may use ks any more.
static __device__ __noinline__ void kstate_free(kstate* ks) {
  ksite* s = ksites(ks);
  const unsigned long long n = ks->nsites == 0ull ? 1ull : ks->nsites;
  for (unsigned long long i = 0; i < n; ++i)
    for (unsigned c = 0; c < kchunk_count; ++c)
      if (s[i].chunk[c] != nullptr) pool_free(s[i].chunk[c]);
  if (ks->host_free != nullptr) {
    kstate_reset(ks);
    cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*ks->host_free).store(1u, cuda::std::memory_order_release);
  } else {
    pool_free(ks);
  }
}

// Drops k references of ks (device-scope acq_rel: every earlier holder's accesses happen-before the
// free); the thread that drops the last one frees it.
static __device__ inline void kstate_unref(kstate* ks, unsigned long long k) {
  if (cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs)
          .fetch_sub(k, cuda::std::memory_order_acq_rel) == k)
    kstate_free(ks);
}

}  // namespace detail

namespace {

// DEVICE, any thread, any control flow, any number of times. Records the calling thread's launch
// <<<grid, block, smem, stream>>>(a) at site `site` (< ks->nsites) of parent-grid state ks: the
// out-of-order atomic scan (KLAP II-B). A grid of 0 blocks records nothing (no zeros stored). The
// record's chunk comes from the pool (released with the state, see MEMORY above).
// Errors (fail()): a child grid of 2^40 or more blocks, more than 2^24 records at one site, or more
// than 2^40 blocks in total; pool exhausted (klap::pool_alloc).
template <class Args>
__device__ void krecord(kstate* ks, unsigned site, dim3 grid, dim3 block, unsigned smem, cudaStream_t stream,
                        const Args& a) {
  static_assert(cuda::std::is_trivially_copyable<Args>::value, "klap: Args must be trivially copyable");
  static_assert(alignof(Args) <= 16, "klap: Args must not need more than 16-byte alignment");
  const unsigned long long blocks = detail::kvolume(grid);
  if (blocks == 0ull) return;
  ksite& s = detail::ksites(ks)[site];
  if (blocks > kblocks_mask) fail("child grid too large for kernel-granularity aggregation", "klap::krecord");
  const unsigned long long old = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(s.packed)
                                     .fetch_add((1ull << kindex_shift) | blocks, cuda::std::memory_order_relaxed);
  const unsigned long long index = old >> kindex_shift;
  const unsigned long long excl = old & kblocks_mask;
  if (index >= kmax_records || excl + blocks > kblocks_mask)
    fail("more than 2^24 launches or 2^40 blocks at one site; use --granularity=block", "klap::krecord");
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_threads)
      .fetch_max(static_cast<unsigned>(detail::kvolume(block)), cuda::std::memory_order_relaxed);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s.max_smem).fetch_max(smem, cuda::std::memory_order_relaxed);
  const unsigned c = detail::kchunk_of(index);
  const unsigned long long off = index - detail::kfirst(c);
  char* chunk = detail::kchunk<Args>(s, c, off == 0ull);
  ::new (static_cast<void*>(reinterpret_cast<kcfg*>(chunk) + off)) kcfg{grid, block, excl, smem, stream};
  ::new (static_cast<void*>(reinterpret_cast<Args*>(chunk + detail::kargs_offset(c)) + off)) Args(a);
}

// DEVICE, any thread. Per-round variant of krecord for launches into ORDERED streams in kernels
// where such a launch sits in a loop: the thread's j-th ordered launch (j = seq, then seq is
// incremented) goes to bucket (j, q): site plain + j * nseq + q, q being the site's index among
// the nseq ordered sites. kfinish launches the buckets j-major, so each thread's launches keep
// their order (one aggregated grid per round and site). A grid of 0 blocks takes no round.
// Errors: more than KLAP_KERNEL_MAX_ORDERED ordered launches by one thread -> fail(); as krecord.
template <class Args>
__device__ void krecord_seq(kstate* ks, unsigned plain, unsigned nseq, unsigned q, unsigned& seq, dim3 grid, dim3 block,
                            unsigned smem, cudaStream_t stream, const Args& a) {
  if (detail::kvolume(grid) == 0ull) return;  // not a launch: takes no round
  if (seq >= KLAP_KERNEL_MAX_ORDERED)
    fail("a thread made more than KLAP_KERNEL_MAX_ORDERED ordered launches at kernel granularity; use "
         "--granularity=block or -DKLAP_KERNEL_MAX_ORDERED=<more>", "klap::krecord_seq");
  krecord<Args>(ks, plain + seq * nseq + q, grid, block, smem, stream, a);
  ++seq;
}

// DEVICE, the launching thread inside a kfinish launcher. The argument record of record 0 of site
// s (the launcher's scalar arguments come from it: they are uniform over the grid, so any record
// holds the same value). Valid only while kfinish runs (the state is released afterwards).
template <class Args>
__device__ const Args& kfirst_args(const ksite* s) {
  return *reinterpret_cast<const Args*>(s->chunk[0] + detail::kargs_offset(0));
}

// DEVICE. The argument record found by kchild_enter, as a reference (valid until kchild_release).
template <class Args>
__device__ const Args& kargs(const void* rec) {
  return *static_cast<const Args*>(rec);
}

namespace kdetail {  // (not `detail`: that would hide klap::detail inside this unnamed namespace)
// Launches site i of ks if it has records: adds the grid's block count to ks->refs, fences, and
// calls the launcher (retrying while the pending-launch buffer is full). Returns whether it did.
template <class F>
__device__ bool kfinish_site(kstate* ks, unsigned i, F& launch) {
  const ksite* s = &detail::ksites(ks)[i];
  const unsigned long long packed =
      cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(s->packed).load(cuda::std::memory_order_acquire);
  if ((packed >> kindex_shift) == 0ull) return false;
  const unsigned long long blocks = packed & kblocks_mask;
  if (blocks > 0x7FFFFFFFull)
    fail("aggregated grid has more than 2^31-1 blocks; use --granularity=block", "klap::kfinish");
  const kcfg* first = reinterpret_cast<const kcfg*>(s->chunk[0]);
  const dim3 gd(static_cast<unsigned>(blocks)), bd(s->max_threads);
  const unsigned sm = s->max_smem;
  const cudaStream_t st = first->stream;
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs).fetch_add(blocks, cuda::std::memory_order_relaxed);
  __threadfence();  // the records, and the count, before the launch (the child reads and counts down)
  const cudaError_t e = detail::launch_retrying([&]() -> cudaError_t { return launch(s, gd, bd, sm, st); }, "klap::kfinish");
  check_launch(e, "kernel-granularity aggregated launch");
  return true;
}
}  // namespace kdetail

// DEVICE, EVERY thread of the parent grid, exactly once, at its end (the compiler wraps the body in
// a lambda so that returns come here). No __syncthreads(): it works when some threads returned early
// while others met at the user's own barriers.
// Counting: each thread does __threadfence() (its records device-visible); the lanes that arrive
// together (cooperative_groups::coalesced_threads(), i.e. __activemask()) synchronize
// (__syncwarp(mask): the others' fenced writes are ordered before the leader's next step) and
// their leader adds their number to ks->done_threads with one device-scope acq_rel fetch_add. The
// leader whose add brings it to gridDim-volume x blockDim-volume is the last: its acquire
// synchronizes with every earlier leader's release (a release sequence of RMWs), so it sees every
// thread's records. It then launches: launch_i(site, grid, block, smem, stream), the stream being
// the first record's, for each site with records: the first sizeof...(L) - nseq launchers belong to
// the plain sites 0.. (one grid each, in order); the last nseq to the ordered per-round sites
// (krecord_seq), whose buckets are launched round by round (j-major, site order within a round)
// until a round has no launches (a thread's j-th ordered launch implies its earlier ones). Launches
// into one stream keep this order. Each launch is retried with back-off while the CDP2 pending-launch
// buffer is full (a launcher may be called again) and reported with fail() if it still fails after
// KLAP_LAUNCH_RETRY_MS or fails otherwise. Memory: the launching thread holds one reference of
// ks->refs while it launches and adds each grid's block count before launching it; it drops its
// reference at the end, so the state and its chunks are released by the last child block's
// kchild_release, or right here when nothing was launched.
// EVERY thread means every thread of the hardware grid: in an aggregated child variant that is itself
// a kernel-granularity parent (recursion), the threads that get false from child_enter /
// kchild_enter must call kfinish(klap_ks, ...) too before they return (they record nothing; one of
// them may be the last and launch). A thread that never calls it leaves the count short: nothing
// is launched and the state is never released.
// Limits: the thread count gridDim x blockDim must fit 64 bits (it does for every legal launch).
template <class... L>
__device__ void kfinish(kstate* ks, unsigned nseq, L&&... launch) {
  namespace cg = cooperative_groups;
  __threadfence();
  const cg::coalesced_group arrived = cg::coalesced_threads();
  arrived.sync();
  if (arrived.thread_rank() != 0) return;
  const unsigned long long threads = detail::kvolume(::gridDim) * detail::kvolume(::blockDim);
  const unsigned long long mine = arrived.size();
  const unsigned long long before = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->done_threads)
                                        .fetch_add(mine, cuda::std::memory_order_acq_rel);
  if (before + mine != threads) return;
  // The last thread: nobody else touches ks until the first launch (the state is fresh: refs == 0).
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ks->refs).store(1ull, cuda::std::memory_order_relaxed);
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
  detail::kstate_unref(ks, 1ull);
}

// DEVICE, one thread (e.g. inside a launcher lambda). A zeroed kstate for `nsites` sites from the
// pool, for a device-launched kernel-granularity parent (the aggregated child of a recursive
// kernel): pass it as the child's klap::kstate* argument. It is released by the child grid's
// kfinish protocol (see MEMORY above); if the launch fails or is not made, give it back with
// klap::kstate_discard. Errors: pool exhausted -> fail() ("kernel-granularity state").
__device__ kstate* kstate_new(unsigned nsites) {
  const unsigned long long bytes = detail::kstate_bytes(nsites);
  unsigned long long* p = static_cast<unsigned long long*>(pool_alloc(bytes, "kernel-granularity state (kstate_new)"));
  for (unsigned long long i = 0; i < bytes / 8ull; ++i) p[i] = 0ull;
  kstate* ks = reinterpret_cast<kstate*>(p);
  ks->nsites = nsites;
  ksite* s = detail::ksites(ks);
  for (unsigned i = 0; i < (nsites == 0 ? 1u : nsites); ++i) s[i].owner = ks;
  __threadfence();
  return ks;
}

// DEVICE, one thread. Frees a kstate made by kstate_new whose grid was not launched (the launch
// failed, or was not made): its record chunks (none, normally) and the state. nullptr is ignored.
// Must not be called for a state a running grid uses. (A host_kstate slot passed here is handed
// back to the host.)
__device__ void kstate_discard(kstate* ks) {
  if (ks != nullptr) detail::kstate_free(ks);
}

}  // namespace

namespace {

// DEVICE. Child side, at the start of a kernel-granularity aggregated child (1-D aggregated grid
// and block): finds the record of site s whose blocks [blocks_excl, blocks_excl + volume(grid))
// contain blockIdx.x (a search over the chunks' first offsets, then cuda::std::upper_bound inside
// the chunk), fills v with the original indices (as child_enter does) and a with the record's
// arguments. Returns false for threads past the original block size (the caller returns). A thread
// that got true must call klap::kchild_release(s) once it has copied *a.
// Errors: no record for this block (corrupt state) -> fail().
template <class Args>
__device__ bool kchild_enter(const ksite* s, vctx& v, const Args*& a) {
  const unsigned long long count = s->packed >> kindex_shift;
  const unsigned long long bid = ::blockIdx.x;
  unsigned c = 0;
  for (unsigned k = 1; k < kchunk_count && detail::kfirst(k) < count; ++k) {
    if (reinterpret_cast<const kcfg*>(s->chunk[k])->blocks_excl <= bid) c = k;
    else break;
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

// DEVICE. Child side, right after the kernel-granularity child copied its record's arguments:
// after this call the thread must not read s, its records or a (from kchild_enter) again. Called
// by EVERY thread of the hardware block that did not return from kchild_enter, once (as
// klap::child_release: __syncthreads() over the live threads -- exited ones are not waited for on
// sm_70+ -- orders their reads before thread 0's release). Thread 0 drops one reference of the
// owning state (s->owner->refs, device-scope acq_rel); the block that drops the last one (and
// kfinish's launcher has dropped its hold) frees the state and all record chunks of all its sites.
__device__ void kchild_release(const ksite* s) {
  __syncthreads();
  if (::threadIdx.x != 0) return;
  detail::kstate_unref(s->owner, 1ull);
}

}  // namespace

namespace detail {

// Host-side slots of kernel-granularity states for ONE state size (nsites).
//   dev[i]   device address of slot i (slot_bytes each, in batches of one cudaMalloc)
//   flag[i]  its free flag (1 = free) in mapped pinned host memory: the device stores 1 with a
//            system-scope release when it releases the slot (kstate_free), host_kstate stores 0 when
//            it hands the slot out
//   cursor   where the next search starts (slots are mostly released in launch order)
struct host_kslots {
  unsigned nsites = 0;
  size_t slot_bytes = 0;
  std::vector<kstate*> dev;
  std::vector<unsigned*> flag;
  size_t cursor = 0;
};
struct host_kstate_registry {
  std::mutex mu;
  std::vector<host_kslots> sets;
};
static inline host_kstate_registry& host_kstate_instance() {
  static host_kstate_registry r;  // per translation unit, constructed on first use
  return r;
}

// Adds `count` free slots to `set`: one cudaMalloc, one cudaHostAlloc(cudaHostAllocMapped) for the
// flags, and the slots' initial image (zeroes, host_free, nsites, the sites' owner pointers)
// copied on klap's setup stream and waited for (host_setup_stream: no implicit synchronization
// with the program's streams).
static inline void host_kslots_grow(host_kslots& set, size_t count) {
  char* dev = nullptr;
  host_check(cudaMalloc(reinterpret_cast<void**>(&dev), count * set.slot_bytes),
             "klap::host_kstate: cudaMalloc of kernel-granularity states");
  unsigned* flags = nullptr;
  host_check(cudaHostAlloc(reinterpret_cast<void**>(&flags), count * sizeof(unsigned), cudaHostAllocMapped),
             "klap::host_kstate: cudaHostAlloc(cudaHostAllocMapped) of the states' free flags");
  unsigned* dflags = nullptr;
  host_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflags), flags, 0),
             "klap::host_kstate: cudaHostGetDevicePointer");
  std::vector<unsigned char> image(count * set.slot_bytes, 0);
  for (size_t i = 0; i < count; ++i) {
    kstate* hk = reinterpret_cast<kstate*>(image.data() + i * set.slot_bytes);
    kstate* dk = reinterpret_cast<kstate*>(dev + i * set.slot_bytes);
    hk->host_free = dflags + i;
    hk->nsites = set.nsites;
    ksite* s = ksites(hk);
    for (unsigned j = 0; j < (set.nsites == 0 ? 1u : set.nsites); ++j) s[j].owner = dk;
    flags[i] = 1u;
  }
  const cudaStream_t st = host_setup_stream();
  host_check(cudaMemcpyAsync(dev, image.data(), image.size(), cudaMemcpyHostToDevice, st),
             "klap::host_kstate: cudaMemcpyAsync of the states' initial image");
  host_check(cudaStreamSynchronize(st), "klap::host_kstate: cudaStreamSynchronize of the initial image");
  for (size_t i = 0; i < count; ++i) {
    set.dev.push_back(reinterpret_cast<kstate*>(dev + i * set.slot_bytes));
    set.flag.push_back(flags + i);
  }
}

}  // namespace detail

// HOST, any thread. A zeroed kstate for `nsites` sites for ONE host launch of a kernel-granularity
// parent, passed by the transformed host code as the kernel's last argument:
//   parent<<<g, b, sm, klap::host_prepare(s)>>>(args..., klap::host_kstate(N));
// The state is a slot that the device hands back when the launch's children no longer need it
// (zeroed, and its free flag in mapped host memory set; see MEMORY above): host_kstate takes a free
// slot (a load-acquire of its flag, no CUDA call, no stream operation), or, when every slot of this
// size is in flight, adds a batch of slots (doubling, from 16; one cudaMalloc, one cudaHostAlloc and
// one waited copy on klap's own stream), or, at KLAP_HOST_KSTATE_MAX_SLOTS, waits for the device to
// release one (up to KLAP_HOST_KSTATE_WAIT_S). No cudaDeviceSynchronize, no dependence on the
// launch's stream. The slot must be launched with exactly once: a slot whose launch is not made
// (or fails on the host) is never released. Errors: a failing CUDA call or the wait timing out
// prints `klap: error: klap::host_kstate: ...` to stderr and calls std::exit(1). Thread-safe.
static inline kstate* host_kstate(unsigned nsites) {
  detail::host_kstate_registry& r = detail::host_kstate_instance();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::host_kslots* set = nullptr;
  for (detail::host_kslots& k : r.sets)
    if (k.nsites == nsites) set = &k;
  if (set == nullptr) {
    r.sets.emplace_back();
    set = &r.sets.back();
    set->nsites = nsites;
    set->slot_bytes = static_cast<size_t>((detail::kstate_bytes(nsites) + 127ull) & ~127ull);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const size_t n = set->dev.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (set->cursor + k) % n;
      cuda::atomic_ref<unsigned, cuda::thread_scope_system> f(*set->flag[i]);
      if (f.load(cuda::std::memory_order_acquire) == 1u) {
        f.store(0u, cuda::std::memory_order_relaxed);
        set->cursor = i + 1;
        return set->dev[i];
      }
    }
    if (n < static_cast<size_t>(KLAP_HOST_KSTATE_MAX_SLOTS)) {
      size_t add = n < 16 ? 16 : n;
      if (n + add > static_cast<size_t>(KLAP_HOST_KSTATE_MAX_SLOTS)) add = static_cast<size_t>(KLAP_HOST_KSTATE_MAX_SLOTS) - n;
      detail::host_kslots_grow(*set, add);
      set->cursor = n;
      continue;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(KLAP_HOST_KSTATE_WAIT_S)) {
      std::fprintf(stderr, "klap: error: klap::host_kstate: %d kernel-granularity launches in flight, none released "
                   "within %d s (raise -DKLAP_HOST_KSTATE_MAX_SLOTS, or synchronize more often)\n",
                   static_cast<int>(KLAP_HOST_KSTATE_MAX_SLOTS), static_cast<int>(KLAP_HOST_KSTATE_WAIT_S));
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace klap

#endif  // KLAP_KERNEL_CUH
