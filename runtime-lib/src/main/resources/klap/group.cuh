// klap/group.cuh -- the thread groups across which launches and cudaMalloc calls are aggregated
// (KLAP paper II-A: warp and block granularity; II-C: cudaMalloc aggregation), and the collectives
// over them: klap::group_inclusive_scan, klap::group_reduce / group_sum / group_max,
// klap::group_broadcast.
//
// A group is either
//   * klap::block_group: all threads of one block -- a hardware block (any 1-D/2-D/3-D shape), or
//     the *virtual* block of an aggregated child, whose threads are threadIdx.x < size of a 1-D
//     hardware block; the threads past the virtual size have already exited (klap::child_enter);
//   * klap::warp_group: a set of lanes of one warp, given by a lane mask (contiguous for
//     warp_group::of(block), arbitrary for warp_group::active() in divergent code).
// Every collective must be called by all threads of the group, with the same group, in the same
// order (the usual rule of __syncthreads / __shfl_sync). Collectives are safe to call repeatedly,
// e.g. in a loop: block collectives synchronize before reusing their shared scratch.
//
// Why not cub::BlockScan / cub::WarpScan / cg::tiled_partition<32>: cub::BlockScan needs the block
// size at compile time, and cub::WarpScan and cg::thread_block_tile<32> assume 32 (or a fixed
// number of) participating lanes. Our groups have a RUNTIME size, the last warp of a block may be
// partial, the lanes past a virtual block's size have exited (a full-warp __shfl_sync would then
// be undefined behaviour), and warp_group::active() masks can be non-contiguous. cg::coalesced_group
// handles arbitrary masks but can only be built from __activemask() at the call site, not from a
// mask we computed. So the scans below are a small Hillis-Steele scan with __shfl_sync over an
// explicit mask of live lanes (CUDA programming guide, "Warp Shuffle Functions"), plus shared
// memory across the (at most 32) warps of a block.
#ifndef KLAP_GROUP_CUH
#define KLAP_GROUP_CUH

#include <cstring>
#include <cuda/std/type_traits>

namespace klap {

// The original (virtual) indices and dimensions of a thread inside an aggregated child grid,
// computed by klap::child_enter and used by the transformed child in place of the built-ins
// threadIdx / blockIdx / blockDim / gridDim.
struct vctx {
  uint3 threadIdx;
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
};

namespace detail {

// %laneid and %lanemask_lt (PTX ISA, "Special Registers"): correct for any block shape.
__device__ inline unsigned lane_id() {
  unsigned r;
  asm("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
__device__ inline unsigned lanemask_lt() {
  unsigned r;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}

// Lane number of the n-th (0-based) set bit of mask; requires n < popc(mask). Binary search on
// the largest q with popc(mask & ((1 << q) - 1)) <= n (5 steps, no loop over lanes).
__device__ inline unsigned nth_set_bit(unsigned mask, unsigned n) {
  unsigned pos = 0;
#pragma unroll
  for (unsigned step = 16; step != 0; step >>= 1) {
    const unsigned q = pos + step;  // <= 31
    if (static_cast<unsigned>(__popc(mask & ((1u << q) - 1u))) <= n) pos = q;
  }
  return pos;
}

// __shfl_sync for any trivially copyable T (pointers, 64-bit integers, small structs): moved as
// 32-bit words. All lanes of mask must call it; returns the value of lane src_lane.
template <class T>
__device__ inline T shfl_any(unsigned mask, const T& v, unsigned src_lane) {
  static_assert(cuda::std::is_trivially_copyable<T>::value, "klap: shuffled type must be trivially copyable");
  constexpr unsigned words = (sizeof(T) + 3u) / 4u;
  unsigned w[words] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (unsigned i = 0; i < words; ++i) w[i] = __shfl_sync(mask, w[i], static_cast<int>(src_lane));
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}

// Inclusive scan with op over the lanes of `mask` in lane order; `rank` = number of mask lanes
// below the caller, `size` = popc(mask). Hillis-Steele: log2(size) rounds, each lane fetches the
// partial result of the lane `d` ranks below it (its lane found with nth_set_bit, so the mask may
// have holes). Every lane of mask executes every __shfl_sync (the loop bound is uniform).
template <class T, class Op>
__device__ inline T masked_inclusive_scan(unsigned mask, unsigned rank, unsigned size, T x, Op op) {
  const unsigned self = lane_id();
  for (unsigned d = 1; d < size; d <<= 1) {
    const unsigned src = rank >= d ? nth_set_bit(mask, rank - d) : self;
    const T y = shfl_any(mask, x, src);
    if (rank >= d) x = op(y, x);
  }
  return x;
}

// Shared-memory scratch of `count` objects of T, one array per (T, tag) instantiation and block.
// Raw storage, so T needs no default constructor; 16-byte alignment covers every T we use.
template <class T, int Tag, unsigned Count>
__device__ inline T* shared_scratch() {
  static_assert(alignof(T) <= 16, "klap: scratch type over-aligned");
  __shared__ __align__(16) unsigned char raw[Count * sizeof(T)];
  return reinterpret_cast<T*>(raw);
}

}  // namespace detail

// All threads of one block. rank in [0, size), the linear thread index (x fastest, as the
// hardware numbers threads into warps: CUDA programming guide, "Thread Hierarchy" and "SIMT
// Architecture"); lane = rank % 32, warp = rank / 32.
class block_group {
 public:
  // The hardware block: rank = threadIdx.x + threadIdx.y*blockDim.x + threadIdx.z*blockDim.x*blockDim.y,
  // size = blockDim.x*blockDim.y*blockDim.z.
  __device__ static block_group hardware() {
    return block_group(::threadIdx.x + ::threadIdx.y * ::blockDim.x +
                           ::threadIdx.z * ::blockDim.x * ::blockDim.y,
                       ::blockDim.x * ::blockDim.y * ::blockDim.z);
  }
  // The virtual block of an aggregated child (1-D hardware block): rank = threadIdx.x,
  // size = v.blockDim.x*y*z. Threads with threadIdx.x >= size have exited already (child_enter).
  __device__ static block_group virtual_block(const vctx& v) {
    return block_group(::threadIdx.x, v.blockDim.x * v.blockDim.y * v.blockDim.z);
  }
  // The caller's linear index in the block, in [0, size()).
  __device__ unsigned rank() const { return rank_; }
  // The number of threads of the (hardware or virtual) block.
  __device__ unsigned size() const { return size_; }
  // __syncthreads(). Exited threads do not hold up the barrier (PTX ISA, "bar.sync": the
  // expected count is that of the non-exited threads of the CTA), so this is correct for a
  // virtual block whose tail threads have returned.
  __device__ void sync() const { __syncthreads(); }

 private:
  __device__ block_group(unsigned r, unsigned s) : rank_(r), size_(s) {}
  unsigned rank_;
  unsigned size_;
};

// A set of lanes of one warp, given by a lane mask that contains the caller.
class warp_group {
 public:
  // The lanes of the caller's warp whose block rank is < b.size(): all live lanes of this warp
  // of b (a contiguous mask from lane 0; partial for the last warp). Use at convergent points.
  __device__ static warp_group of(const block_group& b) {
    const unsigned first = b.rank() & ~31u;  // block rank of lane 0 of this warp
    const unsigned live = b.size() - first;  // > 0 since the caller is live
    return warp_group(live >= 32u ? 0xFFFFFFFFu : ((1u << live) - 1u));
  }
  // __activemask() at the call site: the lanes that arrived here together. Correct anywhere,
  // also in divergent code (the group is whoever is here, not whoever might come later).
  __device__ static warp_group active() { return warp_group(__activemask()); }
  // An explicit mask (e.g. a __ballot_sync result). It must contain the caller, and every lane of
  // it must call the same collectives. Generated code uses it for a survivor region: the lanes of
  // the warp that passed the kernel's divergent return guards (klap::guard_exit).
  __device__ static warp_group from_mask(unsigned m) { return warp_group(m); }
  // The number of group lanes below the caller's lane: popc(mask & %lanemask_lt).
  __device__ unsigned rank() const { return static_cast<unsigned>(__popc(mask_ & detail::lanemask_lt())); }
  // The number of lanes in the group: popc(mask).
  __device__ unsigned size() const { return static_cast<unsigned>(__popc(mask_)); }
  // The lane mask (bit i = lane i of the warp), for the *_sync intrinsics.
  __device__ unsigned mask() const { return mask_; }
  // __syncwarp(mask): barrier and memory ordering among the group's lanes.
  __device__ void sync() const { __syncwarp(mask_); }

 private:
  __device__ explicit warp_group(unsigned m) : mask_(m) {}
  unsigned mask_;
};

// A divergent guard `if (c) return;` of a kernel body that a survivor region follows (a launch in a
// loop after the guard, aggregated among the lanes that stay; klap's Convergence analysis): generated
// code writes `if (klap::guard_exit(klap_live, static_cast<bool>(c))) return;` with
// `unsigned klap_live = klap::warp_group::of(klap_blk).mask();` before the first guard. Every lane of
// `live` calls it (klap emits it only where every lane that passed the earlier guards reaches this
// one); afterwards `live` holds the lanes of `live` whose c is false, i.e. those that stay, and c is
// returned unchanged. One __ballot_sync (CUDA programming guide, "Warp Vote Functions").
__device__ inline bool guard_exit(unsigned& live, bool c) {
  live = __ballot_sync(live, !c);
  return c;
}

// Whether x is true for any thread of the group, returned to every thread: the condition of a
// convergent loop (klap's Convergence analysis: a loop whose trip count differs between threads runs
// `while (klap::group_any(g, klap_on = klap_on && (cond)))` until no thread of g has an iteration
// left). Every thread of g calls it. warp: __any_sync over the mask; block: __syncthreads_or (CUDA
// programming guide, "Warp Vote Functions", "Synchronization Functions").
__device__ inline bool group_any(const warp_group& g, bool x) { return __any_sync(g.mask(), x) != 0; }
__device__ inline bool group_any(const block_group&, bool x) { return __syncthreads_or(x) != 0; }

// A barrier over the group that also says whether x is true for any of its threads: g.sync() and
// group_any in one. Every thread of g calls it. warp: __syncwarp then __any_sync over the mask;
// block: __syncthreads_or, a __syncthreads that also reduces the predicate (CUDA programming
// guide, "Synchronization Functions").
__device__ inline bool group_sync_any(const warp_group& g, bool x) {
  g.sync();
  return __any_sync(g.mask(), x) != 0;
}
__device__ inline bool group_sync_any(const block_group&, bool x) { return __syncthreads_or(x) != 0; }

// ---- collectives --------------------------------------------------------------------------

// Functors for the collectives. op(a, b) with a from lower ranks; must be associative.
struct sum_op {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
struct max_op {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

// Inclusive scan over a warp_group in rank order: returns op(x_0, ..., x_rank).
template <class T, class Op>
__device__ inline T group_inclusive_scan(const warp_group& g, T x, Op op) {
  return detail::masked_inclusive_scan(g.mask(), g.rank(), g.size(), x, op);
}

// Inclusive scan over a block_group in rank order: returns op(x_0, ..., x_rank).
// Per-warp masked scan, the last live lane of each warp stores its warp total in a __shared__
// array (<= 32 warps), g.sync(), then each thread folds the totals of the warps below it.
// Three barriers; the first one protects the scratch from a previous call's readers.
template <class T, class Op>
__device__ inline T group_inclusive_scan(const block_group& g, T x, Op op) {
  T* totals = detail::shared_scratch<T, 0, 32>();
  const warp_group w = warp_group::of(g);
  x = group_inclusive_scan(w, x, op);
  const unsigned warp = g.rank() / 32u;
  g.sync();  // previous users of `totals` are done
  if (w.rank() == w.size() - 1u) memcpy(&totals[warp], &x, sizeof(T));
  g.sync();
  if (warp > 0) {
    T prefix = totals[0];
    for (unsigned i = 1; i < warp; ++i) prefix = op(prefix, totals[i]);
    x = op(prefix, x);
  }
  return x;
}

// Inclusive prefix sum (x_0 + ... + x_rank).
template <class G, class T>
__device__ inline T group_inclusive_scan(const G& g, T x) {
  return group_inclusive_scan(g, x, sum_op{});
}

// The value x of the thread with rank src_rank (< g.size()), returned to every thread of g.
// warp: one __shfl_sync over the mask; block: a __shared__ slot between two g.sync().
template <class T>
__device__ inline T group_broadcast(const warp_group& g, T x, unsigned src_rank) {
  return detail::shfl_any(g.mask(), x, detail::nth_set_bit(g.mask(), src_rank));
}
template <class T>
__device__ inline T group_broadcast(const block_group& g, T x, unsigned src_rank) {
  T* slot = detail::shared_scratch<T, 1, 1>();
  g.sync();  // previous readers of `slot` are done
  if (g.rank() == src_rank) memcpy(slot, &x, sizeof(T));
  g.sync();
  T r;
  memcpy(&r, slot, sizeof(T));
  return r;
}

// Orders what the broadcasting thread did before group_broadcast (e.g. an acquire on the pool, a
// store of a reference count) before what the receivers do after it. A shuffle moves the value but,
// by the CUDA programming guide, orders no memory access; __syncwarp does ("memory ordering among
// threads participating in the barrier"). The block broadcast already goes through __syncthreads.
// Review 2026-11-27.
__device__ inline void order_after_broadcast(const warp_group& g) { g.sync(); }
__device__ inline void order_after_broadcast(const block_group&) {}

// op(x_0, ..., x_{size-1}), returned to every thread (scan, then broadcast of the last rank).
template <class G, class T, class Op>
__device__ inline T group_reduce(const G& g, T x, Op op) {
  return group_broadcast(g, group_inclusive_scan(g, x, op), g.size() - 1u);
}
// Sum over the group, returned to every thread.
template <class G, class T>
__device__ inline T group_sum(const G& g, T x) { return group_reduce(g, x, sum_op{}); }
// Maximum over the group, returned to every thread.
template <class G, class T>
__device__ inline T group_max(const G& g, T x) { return group_reduce(g, x, max_op{}); }

}  // namespace klap

#endif  // KLAP_GROUP_CUH
