// klap/np.cuh -- the runtime helpers of klap's CUDA-NP transform (nested thread parallelism inside
// a thread block, CUDA-NP paper, sections 3.2, 3.4 and 3.5), for CUDA 12/13 (sm_75+, independent
// thread scheduling). Independent of the aggregation and promotion runtimes: a CUDA-NP kernel
// includes only this header (and smem.cuh, the host-side fit of dynamic shared memory, that it
// includes).
//
// The transform grows each thread block by S threads per original ("master") thread. All S members
// of a group (the master and its S-1 slaves) execute the sequential code redundantly and must hold
// bit-identical values; a `#pragma np parallel for` loop is distributed over the group (iteration i
// on slave (i - lo) % S). After the loop the group combines its reduction variables (reduce) and,
// per round of S iterations, its scan variables (scan). Two layouts of a group (paper, 3.4):
//
//   IntraWarp<S>:  S consecutive lanes of one warp       tid = master * S + slave   (S = 2,4,..,32)
//                  combined with warp shuffles, no shared memory, no block barrier
//   InterWarp<S>:  one member in each of S warps' rows   tid = slave * M + master   (any S >= 2)
//                  combined through shared memory `scratch` (scratch_bytes(M) bytes) and
//                  __syncthreads()
//
// Bit-identical results: every member combines the operands in slave order, the lower slave's value
// always as the LEFT operand, and every member evaluates the same expression tree, so all members
// get the same bits even for operators that are not commutative in their bits (fminf(+0,-0) and
// fminf(-0,+0) may differ) or not associative (float +). The trees:
//   IntraWarp::reduce   pairwise (butterfly): S = 4 gives (v0 op v1) op (v2 op v3)
//   IntraWarp::scan     Hillis-Steele: slave k gets a bracketing of v0 op .. op vk; total = slave
//                       S-1's value (may differ in the last bits from reduce for float + and *)
//   InterWarp::reduce   left fold ((v0 op v1) op v2) op ...; InterWarp::scan: left folds, total =
//                       the fold of all S (the same bits as reduce)
// Signed integer + and * are computed in the unsigned type (wrap-around, no undefined overflow), so
// an integer reduction is exact whenever the result fits, whatever the order.
//
// Shapes and units: the grown block is 1-D (threadIdx.x), blockDim.x = M * S, M <= 1024 / S
// (fits()). Values: arithmetic types of at most 8 bytes (bool, char, short, int, long long, their
// unsigned forms, float, double); anything else is a compile-time error. Scratch: bytes, 8 per
// member, 16-byte aligned shared memory.
// Preconditions (not checked at run time): IntraWarp operations are called by all S members of the
// group together (group-uniform control flow; other groups of the warp may be elsewhere);
// InterWarp operations are called by every thread of the block under block-uniform control flow.
// Host side: the variant chosen per kernel (select/chosen, environment KLAP_NP_<kernel> and
// KLAP_NP), block-size and shared-memory checks (fits, align16, prepare). Errors: an invalid
// environment value prints one `klap: warning:` line per variable and uses the fallback; prepare
// returns false (and leaves no CUDA error pending) when the shared memory cannot be had.
// Source: CUDA-NP sections 3.2, 3.4, 3.5; CUDA programming guide, "Warp Shuffle Functions",
// "Independent Thread Scheduling", "Shared Memory" (dynamic shared memory above 48 KB,
// cudaFuncAttributeMaxDynamicSharedMemorySize).
#ifndef KLAP_NP_CUH
#define KLAP_NP_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "smem.cuh"

namespace klap {
namespace np {

namespace detail {

// The value types the group operations accept.
template <class T>
__host__ __device__ constexpr bool value_type_ok() {
  return cuda::std::is_arithmetic<T>::value && sizeof(T) <= 8;
}

template <class T>
__host__ __device__ constexpr bool is_int() {  // integral, not bool
  return cuda::std::is_integral<T>::value && !cuda::std::is_same<T, bool>::value;
}

// The type integer + and * are computed in: unsigned, at least as wide as unsigned int (so that
// unsigned short * unsigned short is not promoted to a signed int that may overflow).
template <class T>
using wrap_t = typename cuda::std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                               typename cuda::std::make_unsigned<T>::type>::type;

}  // namespace detail

// ---- Operators. op(a, b) with a the lower slave's (earlier) value; identity<T>() the neutral
// element the transform starts each member's partial value with.

struct Plus {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (detail::is_int<T>()) {
      using W = detail::wrap_t<T>;
      return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
    } else {
      return static_cast<T>(a + b);
    }
  }
  // -0.0 for floating point: x + (-0.0) == x for every x, +0.0 and -0.0 included, so a member
  // without iterations (or a round of inactive members) leaves a sum's bits unchanged.
  template <class T>
  static __host__ __device__ constexpr T identity() {
    if constexpr (cuda::std::is_floating_point<T>::value) {
      return T(-0.0);
    } else {
      return T(0);
    }
  }
};

struct Times {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (detail::is_int<T>()) {
      using W = detail::wrap_t<T>;
      return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    } else {
      return static_cast<T>(a * b);
    }
  }
  template <class T>
  static __host__ __device__ constexpr T identity() { return T(1); }
};

struct Min {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (cuda::std::is_same<T, float>::value) {
      return fminf(a, b);
    } else if constexpr (cuda::std::is_same<T, double>::value) {
      return fmin(a, b);
    } else {
      return b < a ? b : a;
    }
  }
  template <class T>
  static __host__ __device__ constexpr T identity() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
      return cuda::std::numeric_limits<T>::infinity();
    } else {
      return cuda::std::numeric_limits<T>::max();
    }
  }
};

struct Max {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (cuda::std::is_same<T, float>::value) {
      return fmaxf(a, b);
    } else if constexpr (cuda::std::is_same<T, double>::value) {
      return fmax(a, b);
    } else {
      return a < b ? b : a;
    }
  }
  template <class T>
  static __host__ __device__ constexpr T identity() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
      return -cuda::std::numeric_limits<T>::infinity();
    } else {
      return cuda::std::numeric_limits<T>::lowest();
    }
  }
};

struct BitAnd {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a & b); }
  template <class T>
  static __host__ __device__ constexpr T identity() {
    if constexpr (cuda::std::is_same<T, bool>::value) {
      return true;
    } else {
      return static_cast<T>(~T(0));
    }
  }
};

struct BitOr {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a | b); }
  template <class T>
  static __host__ __device__ constexpr T identity() { return T(0); }
};

struct BitXor {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
  template <class T>
  static __host__ __device__ constexpr T identity() { return T(0); }
};

struct LogicalAnd {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a && b); }
  template <class T>
  static __host__ __device__ constexpr T identity() { return T(1); }
};

struct LogicalOr {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a || b); }
  template <class T>
  static __host__ __device__ constexpr T identity() { return T(0); }
};

namespace detail {

// A value's bits in an unsigned word of 4 or 8 bytes (zero-extended), for shuffles and scratch
// slots: exact for every accepted type, including bool, char and short, which have no shuffle
// overload of their own.
template <class T>
using bits_t = typename cuda::std::conditional<(sizeof(T) <= 4), unsigned, unsigned long long>::type;

template <class T>
__device__ __forceinline__ bits_t<T> to_bits(T v) {
  bits_t<T> u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}

template <class T>
__device__ __forceinline__ T from_bits(bits_t<T> u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}

template <class T>
__device__ __forceinline__ T shfl_xor(unsigned mask, T v, unsigned d, int width) {
  return from_bits<T>(__shfl_xor_sync(mask, to_bits(v), static_cast<int>(d), width));
}

template <class T>
__device__ __forceinline__ T shfl_up(unsigned mask, T v, unsigned d, int width) {
  return from_bits<T>(__shfl_up_sync(mask, to_bits(v), d, width));
}

template <class T>
__device__ __forceinline__ T shfl_idx(unsigned mask, T v, int src, int width) {
  return from_bits<T>(__shfl_sync(mask, to_bits(v), src, width));
}

}  // namespace detail

// ---- A group of S consecutive lanes of one warp (intra-warp NP). Needs blockDim.x % S == 0 so no
// group crosses a warp (it never does: S divides 32 and the block size).
template <unsigned S>
struct IntraWarp {
  static_assert(S >= 2 && S <= 32 && (S & (S - 1)) == 0,
                "klap::np::IntraWarp<S>: S must be a power of two, 2 <= S <= 32");
  unsigned slave;   // threadIdx.x % S
  unsigned master;  // threadIdx.x / S: the original thread index in the block
  unsigned mask;    // the S lanes of this group within the warp

  __device__ IntraWarp()
      : slave(threadIdx.x % S),
        master(threadIdx.x / S),
        mask(S == 32 ? 0xffffffffu : (((1u << (S % 32)) - 1u) << ((threadIdx.x % 32u) & ~(S - 1u)))) {}

  __device__ void sync() const { __syncwarp(mask); }

  // The combination of the S members' v, pairwise in slave order; all members get the same bits.
  template <class Op, class T>
  __device__ T reduce(T v) const {
    static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes");
    const Op op{};
#pragma unroll
    for (unsigned d = 1; d < S; d <<= 1) {
      const T p = detail::shfl_xor(mask, v, d, static_cast<int>(S));
      // The lower slave's partial value on the left. One op on selected operands (not two
      // branches): every lane executes the same operation on the same (left, right) pair, even
      // where the compiler commutes an operator it deems commutative (fminf on zeros).
      const bool upper = (slave & d) != 0u;
      const T left = upper ? p : v;
      const T right = upper ? v : p;
      v = op(left, right);
    }
    return v;
  }

  // The master's (slave 0's) v in every member: CUDA-NP's read_from_master (section 3.1), one
  // __shfl_sync over the group. T: an arithmetic type of at most 8 bytes, or a pointer.
  template <class T>
  __device__ T first(T v) const {
    if constexpr (cuda::std::is_pointer<T>::value) {
      return reinterpret_cast<T>(first(reinterpret_cast<unsigned long long>(v)));
    } else {
      static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes or a pointer");
      return detail::shfl_idx(mask, v, 0, static_cast<int>(S));
    }
  }

  // Inclusive scan in slave order: slave k gets v0 op .. op vk; total = the value of slave S-1
  // (the same bits in all members).
  template <class Op, class T>
  __device__ T scan(T v, T& total) const {
    static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes");
    const Op op{};
    T incl = v;
#pragma unroll
    for (unsigned d = 1; d < S; d <<= 1) {
      const T p = detail::shfl_up(mask, incl, d, static_cast<int>(S));  // own value below d
      if (slave >= d) incl = op(p, incl);
    }
    total = detail::shfl_idx(mask, incl, static_cast<int>(S - 1), static_cast<int>(S));
    return incl;
  }
};

// ---- A group spread over S rows of `masters` threads (inter-warp NP): member (slave, master) is
// thread slave * masters + master; blockDim.x must be masters * S. `scratch` is shared memory of
// scratch_bytes(masters) bytes, 16-byte aligned; it is free between calls (each call ends with a
// barrier, so back-to-back calls are safe).
template <unsigned S>
struct InterWarp {
  static_assert(S >= 2 && S <= 1024, "klap::np::InterWarp<S>: 2 <= S <= 1024");
  unsigned slave;           // threadIdx.x / masters
  unsigned master;          // threadIdx.x % masters: the original thread index in the block
  unsigned masters;         // M, the original block size
  unsigned char* scratch;   // shared memory, scratch_bytes(masters) bytes

  __device__ InterWarp(unsigned masters_, void* scratch_)
      : slave(threadIdx.x / masters_),
        master(threadIdx.x % masters_),
        masters(masters_),
        scratch(static_cast<unsigned char*>(scratch_)) {}

  // Bytes of scratch: one 8-byte slot per thread of the grown block.
  static __host__ __device__ constexpr unsigned scratch_bytes(unsigned masters_) { return masters_ * S * 8u; }

  __device__ void sync() const { __syncthreads(); }

  // The left fold v0 op v1 op .. op v(S-1) of the S members' v; all members get the same bits.
  template <class Op, class T>
  __device__ T reduce(T v) const {
    static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes");
    const Op op{};
    unsigned long long* slot = publish(v);
    T acc = detail::from_bits<T>(static_cast<detail::bits_t<T>>(slot[0]));
#pragma unroll 8
    for (unsigned k = 1; k < S; ++k) {
      acc = op(acc, detail::from_bits<T>(static_cast<detail::bits_t<T>>(slot[k * masters])));
    }
    __syncthreads();  // every member has read the slots: the next call may overwrite them
    return acc;
  }

  // The master's (slave 0's) v in every member, through the master's scratch slot and two block
  // barriers (must be called by all threads of the block). T: as for IntraWarp::first.
  template <class T>
  __device__ T first(T v) const {
    if constexpr (cuda::std::is_pointer<T>::value) {
      return reinterpret_cast<T>(first(reinterpret_cast<unsigned long long>(v)));
    } else {
      static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes or a pointer");
      unsigned long long* slots = reinterpret_cast<unsigned long long*>(scratch);
      if (slave == 0u) slots[master] = static_cast<unsigned long long>(detail::to_bits(v));
      __syncthreads();
      const T r = detail::from_bits<T>(static_cast<detail::bits_t<T>>(slots[master]));
      __syncthreads();  // every member has read the slot: the next call may overwrite it
      return r;
    }
  }

  // Inclusive scan in slave order (left folds): slave k gets v0 op .. op vk; total = the fold of
  // all S (the same bits as reduce, in all members).
  template <class Op, class T>
  __device__ T scan(T v, T& total) const {
    static_assert(detail::value_type_ok<T>(), "klap::np: T must be an arithmetic type of at most 8 bytes");
    const Op op{};
    unsigned long long* slot = publish(v);
    T acc = detail::from_bits<T>(static_cast<detail::bits_t<T>>(slot[0]));
    T incl = acc;
#pragma unroll 8
    for (unsigned k = 1; k < S; ++k) {
      acc = op(acc, detail::from_bits<T>(static_cast<detail::bits_t<T>>(slot[k * masters])));
      if (k == slave) incl = acc;
    }
    __syncthreads();  // as in reduce
    total = acc;
    return incl;
  }

 private:
  // Stores v in this member's slot (slave * masters + master), waits for the block; returns the
  // group's slot 0 (the slots of slaves 0..S-1 are `masters` apart).
  template <class T>
  __device__ unsigned long long* publish(T v) const {
    unsigned long long* slots = reinterpret_cast<unsigned long long*>(scratch);
    slots[slave * masters + master] = static_cast<unsigned long long>(detail::to_bits(v));
    __syncthreads();
    return slots + master;
  }
};

// ---- Loop distribution. A parallel loop `for (T i = lo; i < hi; i++)` (or `<=`) runs as
// `for (k = slave; k < trips(lo, hi, incl); k += S) { const T i = nth(lo, k); ... }`: the trip
// count is computed once in 64 bits, so `i + S` never overflows T (a char loop variable near its
// maximum, or hi near INT_MAX, would wrap and never end).

// The number of iterations of `for (T i = lo; i < hi; i++)` (`<=` when inclusive): the comparison
// in the common type of T and H, as the original condition compares.
template <class T, class H>
__host__ __device__ constexpr unsigned long long trips(T lo, H hi, bool inclusive) {
  using C = typename cuda::std::common_type<T, H>::type;
  static_assert(cuda::std::is_integral<C>::value, "klap::np: a parallel loop's bounds must have integer types");
  using U = typename cuda::std::make_unsigned<C>::type;
  const C l = static_cast<C>(lo);
  const C h = static_cast<C>(hi);
  if (inclusive ? !(l <= h) : !(l < h)) return 0ull;
  return static_cast<unsigned long long>(static_cast<U>(static_cast<U>(h) - static_cast<U>(l))) +
         (inclusive ? 1ull : 0ull);
}

// The value of the loop variable in iteration k: lo + k in T (k < trips, so it is in range).
template <class T>
__host__ __device__ constexpr T nth(T lo, unsigned long long k) {
  using U = typename cuda::std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(static_cast<U>(lo) + static_cast<U>(k)));
}

// ---- Host side: which variant a kernel runs, and whether a grown block can be launched.

enum class Variant : int { original = 0, intra_warp = 1, inter_warp = 2 };

namespace detail {

struct registry {
  std::mutex mu;
  std::map<std::string, Variant> by_kernel;           // select(kernel, v)
  bool has_default = false;                           // select(nullptr, v) was called
  Variant default_variant = Variant::original;
  std::map<std::string, bool> warned;                 // environment variables warned about
  std::map<std::pair<int, const void*>, int> threads;  // (device, kernel) -> maxThreadsPerBlock
};

// One registry per program (an inline function's static is shared by all translation units); never
// destroyed, so calls from other static destructors or atexit handlers stay valid.
inline registry& reg() {
  static registry* r = new registry();
  return *r;
}

inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::original: return "original";
    case Variant::intra_warp: return "intra-warp";
    case Variant::inter_warp: return "inter-warp";
  }
  return "original";
}

inline bool parse_variant(const char* s, Variant& out) {
  if (std::strcmp(s, "original") == 0 || std::strcmp(s, "none") == 0) {
    out = Variant::original;
  } else if (std::strcmp(s, "intra-warp") == 0) {
    out = Variant::intra_warp;
  } else if (std::strcmp(s, "inter-warp") == 0) {
    out = Variant::inter_warp;
  } else {
    return false;
  }
  return true;
}

// The variant an environment variable asks for; an empty or unset variable asks for none (false).
inline bool from_env(const std::string& var, Variant fallback, Variant& out) {
  const char* value = std::getenv(var.c_str());
  if (value == nullptr || *value == '\0') return false;
  if (parse_variant(value, out)) return true;
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  bool& warned = r.warned[var];
  if (!warned) {
    warned = true;
    std::fprintf(stderr, "klap: warning: %s=%s is not original, intra-warp or inter-warp; using %s\n", var.c_str(),
                 value, variant_name(fallback));
  }
  out = fallback;
  return true;
}

}  // namespace detail

// Chooses the variant of `kernel` (its name as the transform writes it); kernel == nullptr sets the
// default for every kernel without a choice of its own. Thread-safe; a later call overrides.
__host__ inline void select(const char* kernel, Variant v) {
  detail::registry& r = detail::reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (kernel == nullptr) {
    r.has_default = true;
    r.default_variant = v;
  } else {
    r.by_kernel[kernel] = v;
  }
}

// The variant `kernel` runs: the first of select(kernel, ..), select(nullptr, ..), the environment
// variable KLAP_NP_<kernel> (every character of the name other than a letter, digit or '_' written
// as '_': "ns::k" reads KLAP_NP_ns__k), KLAP_NP, and `fallback`. Environment values: "original" (or
// "none"), "intra-warp", "inter-warp"; an empty value counts as unset; any other value prints one
// warning per variable and gives `fallback`. The environment is read at every call.
__host__ inline Variant chosen(const char* kernel, Variant fallback) {
  {
    detail::registry& r = detail::reg();
    std::lock_guard<std::mutex> lock(r.mu);
    if (kernel != nullptr) {
      auto it = r.by_kernel.find(kernel);
      if (it != r.by_kernel.end()) return it->second;
    }
    if (r.has_default) return r.default_variant;
  }
  Variant v = fallback;
  if (kernel != nullptr) {
    std::string var = "KLAP_NP_";
    for (const char* p = kernel; *p != '\0'; ++p) {
      const char c = *p;
      const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      var += word ? c : '_';
    }
    if (detail::from_env(var, fallback, v)) return v;
  }
  if (detail::from_env("KLAP_NP", fallback, v)) return v;
  return fallback;
}

// Whether a block of threads_per_block original threads, grown by `slaves` threads each, stays
// within 1024 threads (no overflow for any inputs).
__host__ __device__ constexpr bool fits(unsigned threads_per_block, unsigned slaves) {
  return slaves == 0u || threads_per_block <= 1024u / slaves;
}

// bytes rounded up to a multiple of 16; saturates at SIZE_MAX (which no budget admits).
__host__ __device__ constexpr size_t align16(size_t bytes) {
  return bytes > SIZE_MAX - 15u ? SIZE_MAX : (bytes + 15u) & ~static_cast<size_t>(15u);
}

// Makes `kernel` launchable with dyn_bytes of dynamic shared memory on the current device. false if
// dyn_bytes > budget, or if the kernel needs more than its current limit (48 KB minus its static
// shared memory unless raised) and cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)
// refuses dyn_bytes, or if the kernel's attributes cannot be read (no device); the failed call's
// error is cleared (cudaGetLastError), so the caller's own error check does not see it. true
// otherwise (dyn_bytes == 0: at once, without a CUDA call). The limit is read once per device and kernel
// (cudaFuncGetAttributes) and raised only when needed, to the largest value asked for; thread-safe.
template <class Kernel>
__host__ bool prepare(Kernel* kernel, size_t dyn_bytes, size_t budget) {
  return dyn_bytes <= budget && ::klap::detail::host_fit_dynamic_smem(reinterpret_cast<const void*>(kernel), dyn_bytes);
}

// The most threads a block of `kernel` can have on the current device (cudaFuncGetAttributes:
// registers and its own limits may allow fewer than 1024), read once per device and kernel; 0 if
// the attributes cannot be read (the error is cleared).
template <class Kernel>
__host__ int max_threads(Kernel* kernel) {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  const void* fn = reinterpret_cast<const void*>(kernel);
  detail::registry& r = detail::reg();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::pair<int, const void*> key(device, fn);
  auto it = r.threads.find(key);
  if (it == r.threads.end()) {
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    it = r.threads.emplace(key, attr.maxThreadsPerBlock).first;
  }
  return it->second;
}

// Says once per kernel, on stderr, that a launch runs the original kernel although a CUDA-NP
// variant was chosen: the grown block (threads_per_block * S) exceeds 1024 threads or the variant's
// register limit, or its shared memory exceeds the budget and global memory could not be had.
// why: the reason when klap knows it (a variant that was not emitted), else null.
__host__ inline void fallback(const char* kernel, unsigned threads_per_block, const char* why = nullptr) {
  detail::registry& r = detail::reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.warned.emplace(std::string("fallback:") + kernel, true).second) return;
  if (why != nullptr) {
    std::fprintf(stderr, "klap: warning: %s: %s; running the original kernel [klap-np]\n", kernel, why);
  } else {
    std::fprintf(stderr,
                 "klap: warning: %s: the CUDA-NP variant cannot run a launch of %u threads per block (more than 1024 "
                 "threads or registers per grown block, or not enough shared or global memory); running the original "
                 "kernel [klap-np]\n",
                 kernel, threads_per_block);
  }
}

// The memory of one CUDA-NP launch (CUDA-NP section 3.3, local arrays): `dyn` bytes of dynamic
// shared memory, and `global`, the local arrays of every block in global memory when they do not
// fit in the shared-memory budget (null when they live in shared memory).
struct LaunchMemory {
  size_t dyn = 0;
  unsigned char* global = nullptr;
};

// Decides whether a launch of `threads` threads per block can run and where its local arrays live,
// and reserves the memory. threads: M * S, checked against the kernel's maxThreadsPerBlock (false
// when its registers allow fewer: the caller runs the original kernel). base: the user's dynamic
// shared memory (16-byte aligned); scratch: the inter-warp collectives' shared memory; arrays: the
// local arrays of one block. Shared memory when base + scratch + arrays fits the budget and the
// kernel (prepare); otherwise the arrays go to global memory, grid.x * grid.y * grid.z * arrays
// bytes from cudaMallocAsync on `stream` (stream-ordered: release() frees them after the kernel).
// false (nothing reserved, errors cleared) if neither works: the caller runs the original kernel.
template <class Kernel>
__host__ bool launch_memory(Kernel* kernel, unsigned threads, size_t base, size_t scratch, size_t arrays, dim3 grid,
                            size_t budget, cudaStream_t stream, LaunchMemory& out) {
  out = LaunchMemory{};
  // the grown block must fit the variant's own limit (its registers), not only 1024 threads
  if (threads > 1024u || static_cast<int>(threads) > max_threads(kernel)) return false;
  const size_t shared_all = align16(align16(base + scratch) + arrays);
  if (shared_all <= budget && prepare(kernel, shared_all, budget)) {
    out.dyn = shared_all;
    return true;
  }
  if (arrays == 0 || !prepare(kernel, base + scratch, budget)) return false;
  const size_t blocks = static_cast<size_t>(grid.x) * grid.y * grid.z;
  if (blocks != 0 && arrays > SIZE_MAX / blocks) return false;
  void* p = nullptr;
  if (cudaMallocAsync(&p, blocks * arrays, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  out.dyn = base + scratch;
  out.global = static_cast<unsigned char*>(p);
  return true;
}

// Frees what launch_memory reserved in global memory, after the kernel (same stream).
__host__ inline void release(const LaunchMemory& m, cudaStream_t stream) {
  if (m.global != nullptr && cudaFreeAsync(m.global, stream) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace np
}  // namespace klap

#endif  // KLAP_NP_CUH
