// klap/promote.cuh -- the device runtime of kernel launch promotion (KLAP paper, section III:
// basic promotion P, promotion with aggregation PA-n, with overlap PO and PAO-n), for the CUDA
// 12/13 device runtime (CDP2, sm_75+). Independent of the aggregation runtime (klap.cuh): a
// promoted file includes only this header.
//
// The pattern (KLAP Fig. 5a): a single-block kernel K does its share (the prologue), then ONE
// thread launches K<<<1, B>>> for the rest of the work with values it just computed, then the
// block finishes (the epilogue). Promotion launches the successor early and hands the late
// ("postponed") arguments over through memory:
//
//   chain position:   host instance ->  pool 0: descendants 0..n-1  ->  pool 1: n..2n-1 -> ...
//   launched by:      the host          the host instance              descendant n-1 of pool 0
//
// * A pool is one launch K_klap_pro<<<n, B>>> of n descendants (n = 1 for P and PO, the n of
//   PA-n / PAO-n otherwise; KLAP III-B "vertical" aggregation: nesting depth divided by n). Its
//   memory (pool_header followed by n links) comes from the device heap (malloc) and is freed on
//   the device by the last of its n blocks to finish: memory in use is bounded by the pools
//   pending at one time, not by the length of the chain; no host step recycles it.
// * A block takes its logical index j in the pool from an atomic ticket (enter), not from
//   blockIdx: the first block to start takes the earliest position, so a block never waits for a
//   predecessor that has not started (no deadlock when descendants fill the GPU first, KLAP
//   III-B, after Yan et al. [17]).
// * Link j holds the postponed arguments of descendant j and its state. The predecessor stores
//   the arguments, then publishes them with a release store of state = go (release, at the
//   original launch site); descendant j's thread 0 polls with acquire loads and __nanosleep
//   (acquire), then __syncthreads() hands the values to the block (KLAP Fig. 7, lines 17-19 and
//   30-32; PTX release/acquire patterns, CUDA C++ `cuda::atomic_ref`).
// * Speculation is bounded. P and PA: the successor pool is launched only by a block that was
//   itself released (after acquire), so at most one pool per chain runs ahead of the chain's
//   progress. PO and PAO: a pool is launched only once its first descendant is known to exist
//   (await_exists and the launch condition, evaluated at the start), so nothing is speculative;
//   the existence chain may run ahead of the data chain by as many links as there are (all of
//   their pools may then be pending at once: at most chain length / n launches). A block
//   that ends without releasing its successor (the launch condition was false: it is the final
//   one) sets the abort flag of the pool that holds the successor; every descendant after it then
//   ends without running any user code (P/PA) or any code past await_exists (PO/PAO).
// * A successor pool that cannot be had (its launch failed, e.g. cudaErrorLaunchMaxDepthExceeded at
//   nesting depth 25, or the device heap is exhausted) is remembered; if the chain then needs the
//   successor, release() returns false and the generated code launches the kernel the way the
//   original program did (K<<<1, B>>>(...)), so the program sees that launch's own result.
//
// Shapes and units: n >= 1 descendants per pool; Post is the generated struct of postponed
// arguments (trivially copyable members only, since block_ctx lives in __shared__ memory).
// Errors: a launch site that runs twice in one block prints `klap: error: ... [klap::promote]` and
// traps; a wait of more than five minutes for a predecessor prints one `klap: warning:` and goes
// on. Source: KLAP section III; CUDA programming guide, "CUDA Dynamic Parallelism" (CDP2 streams,
// nesting depth) and "Memory Consistency".
#ifndef KLAP_PROMOTE_CUH
#define KLAP_PROMOTE_CUH

#include <cstdio>
#include <cstring>
#include <cuda/atomic>
#include <cuda/std/type_traits>

namespace klap {
namespace promote {

// Link states.
constexpr unsigned link_wait = 0u;  // the predecessor has not released this descendant yet
constexpr unsigned link_go = 1u;    // released: the postponed arguments are in place

// The header of a pool of n descendants; n links follow it in the same allocation.
struct alignas(16) pool_header {
  unsigned n;       // descendants in this pool (= gridDim.x of its launch)
  unsigned ticket;  // next logical index to hand out (enter)
  unsigned abort;   // 1: descendants not released by now end at once
  unsigned done;    // blocks of this pool that have finished (the n-th frees the pool)
};

// The type of parameter I of the function type F (its adjusted type: arrays and functions as
// pointers): param_t<void(const int* in, Acc acc), 1> is Acc. The generated K_klap_post names its
// members' types this way, from the kernel's own parameter declarations.
template <unsigned I, class... A>
struct nth_type;
template <class H, class... T>
struct nth_type<0u, H, T...> {
  using type = H;
};
template <unsigned I, class H, class... T>
struct nth_type<I, H, T...> {
  using type = typename nth_type<I - 1u, T...>::type;
};
template <class F, unsigned I>
struct param_of;
template <class R, class... A, unsigned I>
struct param_of<R(A...), I> {
  using type = typename nth_type<I, A...>::type;
};
template <class F, unsigned I>
using param_t = typename param_of<F, I>::type;

// A postponed argument of type T kept as its bytes, as the launch would copy a kernel argument:
// default-constructible and assignable whatever T is (a struct with an explicit constructor or a
// const member), and aligned to 1 byte (an over-aligned T such as double4_32a needs no aligned
// link). set() copies the value in, get() returns a T built from the bytes.
template <class T>
struct bytes {
  static_assert(cuda::std::is_trivially_copyable<T>::value,
                "klap::promote: a postponed argument must be trivially copyable (it travels as bytes, as a kernel argument does)");
  unsigned char b[sizeof(T)];
  __host__ __device__ void set(const T& v) { memcpy(b, &v, sizeof(T)); }
  __host__ __device__ T get() const {
    union U {
      unsigned char c[sizeof(T)];
      T v;
      __host__ __device__ U() {}
    } u;
    memcpy(u.c, b, sizeof(T));
    return u.v;
  }
};

// One descendant's incoming link: its state and its postponed arguments.
template <class Post>
struct link {
  unsigned state;   // link_wait until the predecessor released the postponed arguments (link_go)
  unsigned exists;  // overlap (PO/PAO) only: 1 once the predecessor knows its launch condition holds
  Post args;
};

// Per-block state, in __shared__ memory; written by thread 0, read by all after a barrier.
template <class Post>
struct block_ctx {
  pool_header* mine;   // the pool of this block; null for the host instance
  pool_header* next;   // the pool holding the successor's link; null until known, or if its launch failed
  pool_header* ahead;  // the pool this block launched (if any), for the abort in finish
  unsigned j;          // logical index in `mine` (0 for the host instance)
  unsigned next_j;     // index of the successor's link in `next`
  unsigned go;         // 1: released (or the host instance), 0: aborted
  unsigned released;   // 1 once this block released its successor
  unsigned announced;  // overlap: 1 once this block knows it exists (so its predecessor will release it)
  int launch_error;    // cudaError_t of a failed successor launch, 0 otherwise
  Post in;             // this block's postponed arguments
};

template <class Post>
__device__ inline link<Post>* links(pool_header* p) {
  static_assert(alignof(link<Post>) <= 16, "klap::promote: postponed arguments aligned to more than 16 bytes");
  return reinterpret_cast<link<Post>*>(p + 1);
}

__device__ inline bool thread0() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

// Prints `klap: error: <what> (<a>, <b>) [klap::promote]` and traps. Never returns.
static __device__ __noinline__ void fail(const char* what, unsigned long long a, unsigned long long b) {
  printf("klap: error: %s (%llu, %llu) [klap::promote]\n", what, a, b);
  __trap();
}

// Block-collective. Starts the host instance (the block launched with K's own signature): no
// predecessor, its postponed arguments are its own parameters `in`.
template <class Post>
__device__ inline void host_instance(block_ctx<Post>& pc, const Post& in) {
  if (thread0()) {
    pc.mine = nullptr;
    pc.next = nullptr;
    pc.ahead = nullptr;
    pc.j = 0;
    pc.next_j = 0;
    pc.go = 1;
    pc.released = 0;
    pc.announced = 1;
    pc.launch_error = 0;
    pc.in = in;
  }
  __syncthreads();
}

// Block-collective. Starts a descendant of pool p: thread 0 takes the next ticket; returns the
// block's logical index j in [0, p->n). Source: KLAP III-B, dynamic block index.
template <class Post>
__device__ inline unsigned enter(block_ctx<Post>& pc, pool_header* p) {
  if (thread0()) {
    pc.mine = p;
    pc.j = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(p->ticket).fetch_add(1u, cuda::std::memory_order_relaxed);
    pc.ahead = nullptr;
    pc.next = pc.j + 1 < p->n ? p : nullptr;
    pc.next_j = pc.j + 1;
    pc.go = 0;
    pc.released = 0;
    pc.announced = 0;
    pc.launch_error = 0;
  }
  __syncthreads();
  return pc.j;
}

namespace detail {
__device__ inline unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0: polls `flag` (acquire) until it is `want` (returns true) or, if `abortable`, until the
// pool's abort flag is set first (returns false). Abort is read before the flag: every flag of this
// pool that was set before the abort is then seen. After five minutes of waiting it prints one
// warning (a release that never comes would otherwise hang the program without a word) and goes
// on waiting: a long chain of slow links, a debugger or time-slicing can make a correct wait long.
__device__ inline bool wait_for(unsigned& flag, unsigned want, unsigned& abort_flag, bool abortable, unsigned j) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(flag);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ab(abort_flag);
  unsigned ns = 32;
  unsigned long long t0 = now_ns();
  for (;;) {
    const unsigned a = abortable ? ab.load(cuda::std::memory_order_acquire) : 0u;
    if (f.load(cuda::std::memory_order_acquire) == want) return true;
    if (a != 0u) return false;
    __nanosleep(ns);
    if (ns < 2048) {
      ns *= 2;
    } else if (t0 != 0ull && now_ns() - t0 > 300ull * 1000000000ull) {
      printf("klap: warning: a promoted kernel (position %u of its pool) has waited five minutes for its "
             "predecessor's release; still waiting [klap::promote]\n", j);
      t0 = 0ull;  // warn once
    }
  }
}
}  // namespace detail

// Block-collective (every thread of the block must call it, at the same point). Thread 0 waits
// until the predecessor released this block (returns true; its postponed arguments are then in
// pc.in for every thread) or until the pool was aborted (returns false: the chain ended before
// this descendant; the caller returns). The host instance returns true at once. A block that
// announce()d its existence (overlap) ignores the abort: its predecessor has promised the release.
template <class Post>
__device__ inline bool acquire(block_ctx<Post>& pc) {
  if (thread0() && pc.mine != nullptr) {
    link<Post>& l = links<Post>(pc.mine)[pc.j];
    pc.go = detail::wait_for(l.state, link_go, pc.mine->abort, pc.announced == 0u, pc.j) ? 1u : 0u;
    if (pc.go) pc.in = l.args;
  }
  __syncthreads();
  return pc.go != 0;
}

// Overlap (PO/PAO, KLAP III-D's first release-acquire chain). Block-collective: thread 0 waits until
// the predecessor announced that its launch condition holds (returns true: this block will be
// released, so it may run its independent prologue) or until the pool was aborted (returns false).
template <class Post>
__device__ inline bool await_exists(block_ctx<Post>& pc) {
  if (thread0() && pc.mine != nullptr) {
    pc.announced = detail::wait_for(links<Post>(pc.mine)[pc.j].exists, 1u, pc.mine->abort, true, pc.j) ? 1u : 0u;
  }
  __syncthreads();
  return pc.announced != 0;
}

// Overlap. Thread 0, after await_exists and after launching the next pool if launches_next:
// `cond` is this block's launch condition (evaluated now from values available at its start). True:
// the successor exists and may start its independent prologue. False: this block is the final one;
// the descendants after it end at once.
template <class Post>
__device__ inline void announce(block_ctx<Post>& pc, bool cond) {
  if (cond) {
    if (pc.next != nullptr)
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(links<Post>(pc.next)[pc.next_j].exists)
          .store(1u, cuda::std::memory_order_release);
    return;
  }
  if (pc.mine != nullptr && pc.j + 1 < pc.mine->n)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pc.mine->abort).store(1u, cuda::std::memory_order_release);
  if (pc.ahead != nullptr)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pc.ahead->abort).store(1u, cuda::std::memory_order_release);
}

// True (uniformly in the block) if this block launches the next pool: the host instance, and the
// last descendant of each pool. Call after acquire returned true.
template <class Post>
__device__ inline bool launches_next(const block_ctx<Post>& pc) {
  return pc.mine == nullptr || pc.j + 1 == pc.mine->n;
}

// Thread 0: allocates and zeroes a pool of n descendants (device heap). Returns null if the heap
// is exhausted (launched() then records the failure; the chain falls back to ordinary launches).
template <class Post>
__device__ inline pool_header* new_pool(unsigned n) {
  const unsigned long long bytes = sizeof(pool_header) + static_cast<unsigned long long>(n) * sizeof(link<Post>);
  pool_header* p = static_cast<pool_header*>(malloc(bytes));
  if (p == nullptr) return nullptr;
  p->n = n;
  p->ticket = 0u;
  p->abort = 0u;
  p->done = 0u;
  link<Post>* l = links<Post>(p);
  for (unsigned i = 0; i < n; ++i) {
    l[i].state = link_wait;
    l[i].exists = 0u;
  }
  return p;  // the launch that follows makes these writes visible to the pool's blocks
}

// Thread 0, right after the launch of pool p (error e = the launch's result; p null: new_pool
// failed and nothing was launched): p becomes the pool that holds the successor's link, or, if the
// launch failed, p is freed and release() will tell the caller to launch the original way.
template <class Post>
__device__ inline void launched(block_ctx<Post>& pc, pool_header* p, cudaError_t e) {
  if (p == nullptr || e != cudaSuccess) {
    if (p != nullptr) free(p);
    pc.next = nullptr;
    pc.launch_error = static_cast<int>(p == nullptr ? cudaErrorMemoryAllocation : e);
    return;
  }
  pc.ahead = p;
  pc.next = p;
  pc.next_j = 0;
}

// The launcher thread (thread 0), at the original launch site: publishes the successor's postponed
// arguments `v` (KLAP Fig. 7, lines 17-19) and returns true. Returns false if there is no promoted
// successor (its pool could not be launched or allocated): the caller then launches the kernel as
// the original program did, and the program sees that launch's result (cudaGetLastError). Fails
// loudly if the site runs twice in one block (the pass proves it does not).
template <class Post>
__device__ inline bool release(block_ctx<Post>& pc, const Post& v) {
  if (pc.released) fail("a promoted launch site ran twice in one block (block, position)", blockIdx.x, pc.j);
  pc.released = 1;
  if (pc.next == nullptr) return false;
  link<Post>& l = links<Post>(pc.next)[pc.next_j];
  l.args = v;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(l.state).store(link_go, cuda::std::memory_order_release);
  return true;
}

// Block-collective, after the kernel body (every thread, every path). A block that was released
// but did not release its successor is the final one: it aborts the trailing descendants (of its
// own pool and of the pool it launched ahead). The last block of a pool to finish frees it.
template <class Post>
__device__ inline void finish(block_ctx<Post>& pc) {
  __syncthreads();
  if (!thread0()) return;
  if (pc.go && !pc.released) {
    if (pc.mine != nullptr && pc.j + 1 < pc.mine->n)
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pc.mine->abort).store(1u, cuda::std::memory_order_release);
    if (pc.ahead != nullptr)
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pc.ahead->abort).store(1u, cuda::std::memory_order_release);
  }
  if (pc.mine != nullptr) {
    const unsigned n = pc.mine->n;
    if (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(pc.mine->done).fetch_add(1u, cuda::std::memory_order_acq_rel) + 1u == n)
      free(pc.mine);
  }
}

}  // namespace promote
}  // namespace klap

#endif  // KLAP_PROMOTE_CUH
