// klap/aggregate.cuh -- launch aggregation at warp and block granularity (KLAP paper II-A,
// Fig. 2 and the detailed code of Fig. 12).
//
// Parent side, per launch site and group instance (generated code):
//     auto s = klap::agg_begin<Args>(g, klap::on_full::launch_as_written);  // collective: slots
//     ... if (cond) s.record(grid, block, smem, stream, Args{...});   // any thread, may diverge
//     s.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c,
//                    unsigned n, const Args* a, const Args& mine) {
//         cudaError_t pre = cudaPeekAtLastError(); child_agg<<<gd, bd, sm, st>>>(c, n, a);
//         return klap::launch_result(pre); },                                     // collective
//       [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const Args& a) {
//         cudaError_t pre = cudaPeekAtLastError(); child<<<gd, bd, sm, st>>>(a.x, a.y);
//         return klap::launch_result(pre); });                                   // direct mode
// flush scans the per-slot block counts (Fig. 2 line 08; the paper scans in the parent so that
// the children need not, II-A), takes the max block size and shared memory (line 09), and one
// launcher thread launches the aggregated child (line 10). If the pool has no room for the slots
// (issue 11), the group runs the site in direct mode instead: every thread launches its own
// launch as written, with the original child, where the aggregated launch would have been. A group
// of one thread runs in direct mode too: it has nothing to aggregate.
// Child side (Fig. 2(d), lines 15-19):
//     klap::vctx v; unsigned p;
//     if (!klap::child_enter(cfg, n, v, p)) return;  // find the parent slot, the virtual indices
//     T0 x = args[p].x; ...                   // copy the arguments (never keep a reference: the
//     klap::child_release(cfg, n);             // records are given back here)
//     ... original body with v.threadIdx / v.blockIdx / v.blockDim / v.gridDim
#ifndef KLAP_AGGREGATE_CUH
#define KLAP_AGGREGATE_CUH

#include <new>
// cuda::std::upper_bound: <cuda/std/algorithm> in CCCL versions that ship it; the CCCL of CUDA
// 13.0 has no public <cuda/std/algorithm> yet, only the implementation header included below.
#if __has_include(<cuda/std/algorithm>)
#include <cuda/std/algorithm>
#else
#include <cuda/std/__algorithm/upper_bound.h>
#endif
#include <cuda/std/type_traits>
#include "error.cuh"
#include "pool.cuh"
#include "group.cuh"

namespace klap {

// One per parent-thread slot of an aggregated launch site (lives in the pool).
//   grid, block   the slot's original launch configuration; grid of 0 blocks = did not launch
//                 (a predicated launch, KLAP II-A: "launches of zero blocks")
//   blocks_incl   inclusive scan of grid.x*grid.y*grid.z over slots 0..i (written by flush); the
//                 child finds its slot by binary search on it (child_enter)
//   smem          requested dynamic shared memory, bytes
//   stream        requested stream (0 = the NULL stream)
struct launch_cfg {
  dim3 grid;
  dim3 block;
  unsigned long long blocks_incl;
  unsigned smem;
  cudaStream_t stream;
};

namespace detail {

__device__ inline unsigned long long align16(unsigned long long b) { return (b + 15ull) & ~15ull; }

__device__ inline unsigned long long volume(const dim3& d) {
  return static_cast<unsigned long long>(d.x) * d.y * d.z;
}

// What flush scans: blocks and launches are summed, the rest are maxima. launcher = highest rank
// that recorded a non-empty launch, -1 if none; launches = how many threads did (not counting
// configurations launchable() rejects, which are launched as written apart).
struct agg_scan {
  unsigned long long blocks;
  unsigned threads;
  unsigned smem;
  int launcher;
  unsigned launches;
};
struct agg_scan_op {
  __device__ agg_scan operator()(const agg_scan& a, const agg_scan& b) const {
    return agg_scan{a.blocks + b.blocks, a.threads < b.threads ? b.threads : a.threads,
                    a.smem < b.smem ? b.smem : a.smem, a.launcher < b.launcher ? b.launcher : a.launcher,
                    a.launches + b.launches};
  }
};

}  // namespace detail


// The state of one aggregated launch site for one group instance (returned by agg_begin).
//   cfg, args  the group's slot arrays in the pool, n entries each; both null in direct mode (the
//              pool had no room: the same for every thread of the group, agg_begin broadcasts it;
//              or the group is one thread, n == 1)
//   n          the group size; me = the caller's slot (= its rank in the group)
//   own, own_args  direct mode only: the caller's own launch (grid of 0 blocks = none) and its
//              arguments, kept by the thread itself until flush
// Args is the compiler-generated per-slot argument record: trivially copyable, may have const
// members, so it is written with placement new, never assigned.
// In an unnamed namespace, like the `static` helpers that use klap::pool_dev(): internal linkage,
// because each file's code is compiled against its own configuration (KLAP_POOL_SIZE_BYTES, ...),
// which the device linker must not mix by merging identical instantiations of different files.
namespace {

template <class Args>
struct agg_site {
  launch_cfg* cfg;
  Args* args;
  unsigned n;
  unsigned me;
  launch_cfg own;
  alignas(Args) unsigned char own_args[sizeof(Args)];

  // Records the caller's launch in ITS slot (cfg[me], args[me]), or in direct mode in own/own_args:
  // the original grid and block (any 1-D/2-D/3-D shape), dynamic shared memory bytes, stream, and
  // arguments. Not collective: may be called in divergent code, at most once per thread between
  // agg_begin and flush. A grid of 0 blocks counts as "no launch".
  // A configuration no device accepts (an empty grid or block, or !detail::launchable) makes its
  // error pending here, where the original launch failed (raise_config_error), for the program's
  // own check between the record and the flush as well as after it; it is then recorded as no
  // launch (the original launched nothing).
  __device__ void record(dim3 grid, dim3 block, unsigned smem, cudaStream_t stream, const Args& a) {
    if ((detail::volume(grid) == 0ull || detail::volume(block) == 0ull || !detail::launchable(grid, block)) &&
        raise_config_error(grid, block, smem, stream))
      grid = dim3(0u, 1u, 1u);
    if (cfg != nullptr) {
      ::new (static_cast<void*>(&cfg[me])) launch_cfg{grid, block, 0ull, smem, stream};
      ::new (static_cast<void*>(&args[me])) Args(a);
    } else {
      ::new (static_cast<void*>(&own)) launch_cfg{grid, block, 0ull, smem, stream};
      ::new (static_cast<void*>(own_args)) Args(a);
    }
  }

  // COLLECTIVE over g (all threads of g, the same group as agg_begin). Computes over the slots:
  // cfg[i].blocks_incl (inclusive scan of block counts, 0 for unrecorded slots), total blocks,
  // max threads per block (x*y*z) and max smem over recorded slots; then, if total > 0 and more
  // than one thread launches (one launch: see below), the highest-rank thread that recorded a
  // non-empty launch (the launcher) takes a place in klap's pending-launch budget
  // (pending_acquire), does __threadfence() and
  //     e = launch(dim3(total), dim3(max_threads), max_smem, cfg[launcher].stream,
  //                cfg, n, args, args[launcher]);
  // If the device runtime refuses that launch (any error but cudaErrorLaunchPendingCountExceeded
  // and cudaErrorLaunchOutOfResources, which check_launch reports), no child grid exists and the
  // slots are intact: every thread that recorded a launch makes it as written, e = direct(...) as
  // in direct mode below, and check_launch(e, ...); then rank 0 frees the slots. The first refusal of the
  // program prints a warning (detail::aggregate_refused). All children of the group run in the
  // launcher's stream, so slots that asked for different streams lose that distinction: aggregate
  // only sites whose stream is uniform over the group (PLATFORM.md: the NULL stream orders per
  // block).
  // Visibility (CUDA programming guide, CDP "Memory Coherence and Consistency"): the child sees
  // what the launching thread wrote, and what its block wrote before a __syncthreads(); g.sync()
  // (__syncthreads / __syncwarp) orders the other threads' slot writes before the launch, and
  // the __threadfence() makes them device-visible. Memory: the launcher sets the slots' release
  // count (pool_hdr::refs) to the child's block count before the launch, and the child's blocks
  // give the slots back (child_release); with no launch (total 0) rank 0 frees them at once.
  // A last barrier (group_sync_any, which also tells every thread whether the launch was refused)
  // keeps every thread in flush until the aggregated launch is made.
  // Direct mode (agg_begin found no room, or the group is one thread): no scan and no barrier;
  // each thread that recorded a launch with blocks and threads makes it itself,
  // e = direct(grid, block, smem, stream, args),
  // where the aggregated launch would have been, so each thread's launches keep their order, and
  // check_launch(e, ...). `direct` launches the ORIGINAL child kernel with the record's fields.
  // More than 2^31-1 blocks in all (the gridDim.x limit; each child alone is within it): every
  // thread launches its own child as written instead, there (direct), and the slots go back.
  // Exactly one thread of the group recorded a launch (with a direct launcher): nothing to
  // aggregate, so that thread makes it as written, there (direct), the same way: no pending-budget
  // place, no aggregated variant, no child_enter/child_release in the child.
  // Errors: a launch as written that fails (direct mode, a group's one launch, more than 2^31-1
  // blocks, or after a refusal) -> fail() (through check_launch).
  template <class G, class F, class D>
  __device__ __forceinline__ void flush(const G& g, F&& launch, D&& direct);

  // The direct launcher of a site without one (flush(g, launch)): a site begun with on_full::fail
  // never enters direct mode, so it is never called there; a refused aggregated launch is
  // reported instead (check_launch). A site begun with on_full::launch_as_written must be flushed
  // with a direct launcher: a group of one thread is in direct mode from agg_begin on.
  struct no_direct {
    __device__ cudaError_t operator()(dim3, dim3, unsigned, cudaStream_t, const Args&) const {
      fail("aggregated launch site in direct mode without a launcher for it (begin it with on_full::fail, or pass "
           "flush a direct launcher)", "klap::agg_site::flush");
      return cudaErrorUnknown;
    }
  };

  // flush for a site begun with on_full::fail (never in direct mode). A refused aggregated launch
  // is reported and traps (check_launch): there is no launcher for the children as written.
  template <class G, class F>
  __device__ __forceinline__ void flush(const G& g, F&& launch) {
    flush(g, static_cast<F&&>(launch), no_direct{});
  }
};

// agg_site::flush, as a function of the unnamed namespace: internal linkage, so that ptxas compiles
// it within the register limit of the kernels that call it when nvcc does not inline it. A member
// function of a class template is emitted as a weak function even here (nvcc 13), which ptxas
// compiles on its own, without that limit: a parent that klap bounds to 64 registers
// (__launch_bounds__(1024)) then failed to build with "Entry function ... with max regcount of 64
// calls function ...flush... with regcount of 68" (random program 68000025, 2026-11-29).
template <class Args, class G, class F, class D>
__device__ void agg_flush(agg_site<Args>& s, const G& g, F& launch, D& direct) {
  KLAP_TRACE(trace_flush);
  if (s.cfg == nullptr) {
    const Args& mine = *reinterpret_cast<const Args*>(s.own_args);
    KLAP_TRACE(trace_direct);
    if (detail::volume(s.own.grid) != 0ull && detail::volume(s.own.block) != 0ull)
      check_launch(direct(s.own.grid, s.own.block, s.own.smem, s.own.stream, mine),
                   s.n == 1u ? "launch as written (klap::agg_site::flush, a group of one thread)"
                           : "launch as written (klap::agg_site::flush, the pool had no room to aggregate it)");
    KLAP_TRACE(trace_direct_done);
    return;
  }
  g.sync();  // all slots written (record may have run in divergent code)
  const launch_cfg& c = s.cfg[s.me];
  const unsigned long long blocks = detail::volume(c.grid);
  // a block of 0 threads launches nothing (its child blocks would never release the slots)
  const bool any = blocks != 0ull && detail::volume(c.block) != 0ull;
  // a configuration the device runtime rejects (detail::launchable) failed the original launch of
  // this thread alone: it stays out of the aggregated grid and is launched as written at the end
  // (copied now: the slots may be given back once the aggregated child runs)
  const bool bad = any && !detail::launchable(c.grid, c.block);
  const bool on = any && !bad;
  if (bad) {
    ::new (static_cast<void*>(&s.own)) launch_cfg(c);
    ::new (static_cast<void*>(s.own_args)) Args(s.args[s.me]);
  }
  const detail::agg_scan mine{on ? blocks : 0ull, on ? static_cast<unsigned>(detail::volume(c.block)) : 0u,
                              on ? c.smem : 0u, on ? static_cast<int>(s.me) : -1, on ? 1u : 0u};
  const detail::agg_scan incl = group_inclusive_scan(g, mine, detail::agg_scan_op{});
  s.cfg[s.me].blocks_incl = incl.blocks;
  const detail::agg_scan total = group_broadcast(g, incl, s.n - 1u);
  g.sync();  // every blocks_incl written before the launch; after it only the launcher reads c, and
             // every thread in the refused path below (no child grid exists then)
  KLAP_TRACE(trace_scanned);
  if (total.blocks == 0ull) {
    if (s.me == 0u) pool_free(s.cfg);  // nothing launched: the slots go back at once
    if (bad) (void)direct(s.own.grid, s.own.block, s.own.smem, s.own.stream, *reinterpret_cast<const Args*>(s.own_args));
    KLAP_TRACE(trace_nothing);
    return;
  }
  // one launch in the whole group (e.g. under `if (threadIdx.x == 0)` at block granularity) has
  // nothing to aggregate; more blocks than one grid may have (gridDim.x) cannot be one grid,
  // though each child is valid on its own: in both cases every thread launches its own child as
  // written, here, where the aggregated launch would have been (its launches keep their order),
  // and the slots go back once every thread has copied its own
  const bool lone = total.launches == 1u && !cuda::std::is_same<cuda::std::decay_t<D>, typename agg_site<Args>::no_direct>::value;
  if (lone || total.blocks > 0x7FFFFFFFull) {
    if (on) {
      ::new (static_cast<void*>(&s.own)) launch_cfg(c);
      ::new (static_cast<void*>(s.own_args)) Args(s.args[s.me]);
    }
    g.sync();
    if (s.me == 0u) pool_free(s.cfg);
    KLAP_TRACE(trace_lone);
    if (on)
      check_launch(direct(s.own.grid, s.own.block, s.own.smem, s.own.stream, *reinterpret_cast<const Args*>(s.own_args)),
                   lone ? "launch as written (klap::agg_site::flush, the group's only launch)"
                        : "launch as written (klap::agg_site::flush, the aggregated grid would have more than 2^31-1 blocks)");
    if (bad) (void)direct(s.own.grid, s.own.block, s.own.smem, s.own.stream, *reinterpret_cast<const Args*>(s.own_args));
    KLAP_TRACE(trace_lone_done);
    return;
  }
  bool refused = false;
  if (total.launcher == static_cast<int>(s.me)) {
    // every block of the child gives one back when it has read its slot (child_release); a
    // child in the tail-launch stream starts only after this grid, so it takes no budget place
    pool_hdr* h = reinterpret_cast<pool_hdr*>(s.cfg) - 1;
    KLAP_TRACE(trace_acquire);
    h->refs = release_count_for_launch(c.stream, total.blocks);
    __threadfence();
    KLAP_TRACE(trace_launch);
    const cudaError_t e = launch(dim3(static_cast<unsigned>(total.blocks)), dim3(total.threads),
                                 total.smem, c.stream, static_cast<const launch_cfg*>(s.cfg), s.n,
                                 static_cast<const Args*>(s.args), static_cast<const Args&>(s.args[s.me]));
    KLAP_TRACE(trace_launched);
    if (e != cudaSuccess) {
      release_launch_failed(h->refs);
      // a full pending-launch buffer (or resources) would refuse the launches as written too, only
      // more of them: reported as before, with the hint; so is a site without a launcher for them
      if (detail::pending_buffer_full(e) || cuda::std::is_same<cuda::std::decay_t<D>, typename agg_site<Args>::no_direct>::value) {
        check_launch(e, "aggregated launch");
      } else {
        detail::aggregate_refused(e);
        refused = true;
      }
    }
  }
  // the aggregated launch happens before any later launch of the group's threads (a site in
  // direct mode, a launch left as written): each thread's launches keep their order per stream
  KLAP_TRACE(trace_sync_any);
  if (group_sync_any(g, refused)) {
    // The device runtime refused the aggregated grid (with another error than a full buffer):
    // usually a variant lacks an attribute the program gave the child where klap could not see
    // it, e.g. cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, ...) in
    // another file. No child grid started, so the slots are intact: each thread launches its own
    // child as written, here, where the aggregated launch would have been (its launches keep
    // their order), then the slots go back. A launch as written that fails too is reported
    // (check_launch), as in direct mode: e.g. a child that asked for more dynamic shared memory
    // than even the original kernel allows, which the original thread would only have seen as an
    // error. This assumes the device runtime refuses such a configuration at the launch itself
    // (its error returned there), not later when the grid would start: not yet seen on a GPU.
    KLAP_TRACE(trace_refused);
    if (on)
      check_launch(direct(c.grid, c.block, c.smem, c.stream, static_cast<const Args&>(s.args[s.me])),
                   "launch as written (klap::agg_site::flush, the device runtime refused the aggregated launch)");
    g.sync();  // every thread has launched from its slot
    if (s.me == 0u) pool_free(s.cfg);
  }
  // (a configuration launchable() rejects but the device accepted at the record: launched as
  // written, as the program did)
  if (bad) (void)direct(s.own.grid, s.own.block, s.own.smem, s.own.stream, *reinterpret_cast<const Args*>(s.own_args));
  KLAP_TRACE(trace_flushed);
}

// (always inlined: a weak member left out of line would take agg_flush in with it; see above)
template <class Args>
template <class G, class F, class D>
__device__ __forceinline__ void agg_site<Args>::flush(const G& g, F&& launch, D&& direct) {
  agg_flush(*this, g, launch, direct);
}

// COLLECTIVE over g (block_group or warp_group; all its threads). Rank 0 takes
// align16(n*sizeof(launch_cfg)) + n*sizeof(Args) bytes from the pool (n = g.size()) and
// broadcasts the address to g; every thread marks ITS slot "not recorded" (grid {0,1,1}).
// When the pool has no room: on_full::fail (the default) -> klap::pool_alloc reports the
// exhaustion and traps; on_full::launch_as_written (generated code) -> klap::pool_alloc_or_null
// gives up after KLAP_POOL_FALLBACK_WAIT_US and the site runs in direct mode (see flush).
// A group of one thread (n == 1) with on_full::launch_as_written runs in direct mode at once, and
// takes nothing from the pool: there is nothing to aggregate (not counted as a fallback, no warning).
// So on_full::launch_as_written requires flush's direct launcher (flush(g, launch, direct)), as
// generated code always passes it.
template <class Args, class G>
__device__ agg_site<Args> agg_begin(const G& g, on_full full = on_full::fail) {
  static_assert(cuda::std::is_trivially_copyable<Args>::value, "klap: Args must be trivially copyable");
  static_assert(alignof(Args) <= 16, "klap: Args must not need more than 16-byte alignment");
  KLAP_TRACE(trace_begin);
  const unsigned n = g.size();
  const unsigned me = g.rank();
  const unsigned long long cfg_bytes = detail::align16(static_cast<unsigned long long>(n) * sizeof(launch_cfg));
  const unsigned long long bytes = cfg_bytes + static_cast<unsigned long long>(n) * sizeof(Args);
  char* p = nullptr;
  // A group of one thread (warp_group::active() where one lane launches, e.g. under
  // `if (threadIdx.x == 0)`; a block of one thread) has nothing to aggregate: with a launcher for
  // the launch as written (on_full::launch_as_written, which generated code always passes), it runs
  // in direct mode at once, without touching the pool. Its launch is then the original one, made
  // where the aggregated launch of one child would have been, with no slots, no pending-budget
  // place and no child_enter/child_release in the child (the 2026-11-27 H200 run: qt, whose
  // launches are all of this kind, took 15.8 ms at warp granularity against CDP's 10.4 ms).
  // n is the same for every thread of the group, so all of them take the same path.
  const bool alone = n == 1u && full == on_full::launch_as_written;
  if (!alone) {
    if (me == 0) {
      const char* what = "the slots of an aggregated launch (klap::agg_begin)";
      p = static_cast<char*>(full == on_full::fail
                                 ? pool_alloc(bytes, what)
                                 : pool_alloc_or_null(bytes, what, "such groups launch their children as written, unaggregated"));
    }
    p = group_broadcast(g, p, 0u);
    order_after_broadcast(g);  // the slots' previous owner's reads happen before this group's writes
  }
  agg_site<Args> s;
  s.cfg = reinterpret_cast<launch_cfg*>(p);
  s.args = p != nullptr ? reinterpret_cast<Args*>(p + cfg_bytes) : nullptr;
  s.n = n;
  s.me = me;
  const launch_cfg none{dim3(0u, 1u, 1u), dim3(0u, 1u, 1u), 0ull, 0u, cudaStream_t(0)};
  if (p != nullptr) ::new (static_cast<void*>(&s.cfg[me])) launch_cfg(none);
  else ::new (static_cast<void*>(&s.own)) launch_cfg(none);
  KLAP_TRACE(trace_begun);
  return s;
}

}  // namespace

// Child side, at the start of an aggregated child kernel (1-D aggregated grid and block).
// Finds the parent slot p with cfg[p-1].blocks_incl <= blockIdx.x < cfg[p].blocks_incl
// (cuda::std::upper_bound over cfg[0..n), the binary search replacing the paper's p-ary search,
// II-A), and fills v: v.gridDim = cfg[p].grid, v.blockDim = cfg[p].block, v.blockIdx = the local
// block b = blockIdx.x - cfg[p-1].blocks_incl unflattened over the grid (x fastest).
// Returns false if threadIdx.x >= block.x*block.y*block.z: the caller must return (the thread
// exits; it was not part of the original child block, Fig. 2 line 19). Otherwise sets
// v.threadIdx = threadIdx.x unflattened over the block and returns true.
// Errors: blockIdx.x past the last slot (corrupt cfg) -> fail().
static __device__ inline bool child_enter(const launch_cfg* cfg, unsigned n, vctx& v, unsigned& parent) {
  KLAP_TRACE(trace_child_enter);
  const unsigned long long bid = ::blockIdx.x;
  const launch_cfg* it = cuda::std::upper_bound(
      cfg, cfg + n, bid,
      [](unsigned long long b, const launch_cfg& c) { return b < c.blocks_incl; });
  if (it == cfg + n) fail("aggregated child block has no parent slot (corrupt launch_cfg)", "klap::child_enter");
  const unsigned p = static_cast<unsigned>(it - cfg);
  parent = p;
  const launch_cfg& c = *it;
  const unsigned long long b = bid - (p ? cfg[p - 1].blocks_incl : 0ull);
  v.gridDim = c.grid;
  v.blockDim = c.block;
  v.blockIdx.x = static_cast<unsigned>(b % c.grid.x);
  v.blockIdx.y = static_cast<unsigned>((b / c.grid.x) % c.grid.y);
  v.blockIdx.z = static_cast<unsigned>(b / (static_cast<unsigned long long>(c.grid.x) * c.grid.y));
  const unsigned t = ::threadIdx.x;
  if (t >= c.block.x * c.block.y * c.block.z) return false;
  v.threadIdx.x = t % c.block.x;
  v.threadIdx.y = (t / c.block.x) % c.block.y;
  v.threadIdx.z = t / (c.block.x * c.block.y);
  return true;
}

// Child side, right after the aggregated child copied its per-parent arguments (generated code
// calls it after child_enter and the copies; every thread of the hardware block that did not
// leave in child_enter calls it once, at the top of the kernel, before any user code). A block
// barrier orders every thread's reads of cfg/args before thread 0 counts the block off the
// slots' release count (device scope, acq_rel); the block that counts off the last one frees the
// slots (pool_free) and gives back the launch's place in klap's pending-launch budget
// (pending_release). A second barrier keeps the block together until thread 0 is done, so the
// user's code never meets a barrier while thread 0 is still in the release (the classic
// `if (threadIdx.x == 0) {...} __syncthreads();`). Cost per child block: two barriers, one atomic.
static __device__ inline void child_release(const launch_cfg* cfg, unsigned n) {
  (void)n;
  __syncthreads();
  if (::threadIdx.x == 0u) {
    pool_hdr* h = reinterpret_cast<pool_hdr*>(const_cast<launch_cfg*>(cfg)) - 1;
    KLAP_TRACE(trace_child_release);
    if (release_block(h->refs)) {
      KLAP_TRACE(trace_child_last);
      pool_free(const_cast<launch_cfg*>(cfg));
    }
  }
  __syncthreads();
  KLAP_TRACE(trace_child_released);
}

}  // namespace klap

#endif  // KLAP_AGGREGATE_CUH
