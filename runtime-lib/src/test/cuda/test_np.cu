// Tests of klap/np.cuh (the CUDA-NP helpers): IntraWarp<S> and InterWarp<S> reduce and scan for
// every operator over int, unsigned, long long, float, double (and bool, char, short, unsigned long
// long for some), S = 2..32 intra-warp (blocks with a partial last warp) and S = 2, 3, 4, 8
// inter-warp with 32, 64 and 100 masters (scratch at an offset, guarded by canaries). Each kernel
// does two reduces and two scans back to back (scratch reuse). The host recomputes every member's
// result in the same combination order (pairwise butterfly / Hillis-Steele intra-warp, left folds
// inter-warp): exact bits, except float min/max, compared by value (the sign of a zero result of
// fminf may differ between host and device); and all S members of a group must hold the same bits
// for reduce and total. A divergent intra-warp case (groups of one warp on different paths, with
// data-dependent trip counts) must not hang. Host side: operators and identities, select/chosen
// precedence, environment parsing and its warning (stderr captured), fits, align16, and prepare
// with 100 KiB of dynamic shared memory, over budget, beyond the device, and with static shared
// memory. Prints PASS or FAIL.
#include "klap/np.cuh"
#include "klap_test.cuh"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <memory>
#include <type_traits>
#include <vector>

namespace np = klap::np;

// A host array (std::vector<bool> is a bit set without data(); this is plain storage for every T).
template <class T>
class arr {
 public:
  arr() = default;
  explicit arr(size_t n, T fill = T()) : n_(n), p_(new T[n]) { std::fill(p_.get(), p_.get() + n, fill); }
  arr(const arr& o) : n_(o.n_), p_(new T[o.n_]) { std::copy(o.p_.get(), o.p_.get() + n_, p_.get()); }
  arr(arr&&) = default;
  arr& operator=(arr o) {
    n_ = o.n_;
    p_ = std::move(o.p_);
    return *this;
  }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  size_t n_ = 0;
  std::unique_ptr<T[]> p_;
};

// ---------------------------------------------------------------------------------------------
// Test values

static unsigned long long mix(unsigned long long x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class A, class B>
constexpr bool same_t = std::is_same<A, B>::value;

template <class Op>
constexpr bool is_minmax = same_t<Op, np::Min> || same_t<Op, np::Max>;

// Value i of a test vector for Op over T: inexact floats for + (order matters), odd integers for *
// (products wrap, never become 0), signed zeros and repeated values for min/max, mostly-true or
// mostly-false inputs for the logical and bitwise-and/or operators (both outcomes occur).
template <class Op, class T>
T value(unsigned long long i, unsigned long long salt) {
  const unsigned long long h = mix(i * 0x2545F4914F6CDD1Dull + salt);
  if constexpr (same_t<T, bool>) {
    if constexpr (same_t<Op, np::LogicalAnd> || same_t<Op, np::BitAnd>) return h % 64u != 0u;
    else if constexpr (same_t<Op, np::LogicalOr> || same_t<Op, np::BitOr>) return h % 64u == 0u;
    else return (h & 1u) != 0u;
  } else if constexpr (std::is_floating_point<T>::value) {
    if constexpr (same_t<Op, np::Plus>) {
      return T(static_cast<long long>(h % 20001u) - 10000) / T(7);
    } else if constexpr (same_t<Op, np::Times>) {
      return T(0.5) + T(static_cast<double>(h % 1536u)) / T(1024.3);  // [0.5, 2): stays normal
    } else if constexpr (is_minmax<Op>) {
      const T pool[8] = {T(-0.0), T(0.0), T(1.5), T(-1.5), T(0.0), T(-0.0), T(2.25), T(-3.0)};
      if (h % 3u != 0u) return pool[(h >> 8) % 8u];
      return T(static_cast<long long>(h % 2001u) - 1000) / T(3);
    } else {  // logical: zeros (of both signs) rarely / often
      const bool zero = same_t<Op, np::LogicalAnd> ? h % 64u == 0u : h % 64u != 0u;
      if (zero) return ((h >> 9) & 1u) != 0u ? T(-0.0) : T(0.0);
      return T(static_cast<double>(h % 100u)) + T(0.25);
    }
  } else {  // integers (not bool)
    if constexpr (is_minmax<Op>) {
      if (h % 2u) return static_cast<T>(static_cast<long long>((h >> 4) % 9u) - 4);  // repeated values
      return static_cast<T>(h >> 3);
    } else if constexpr (same_t<Op, np::Times>) {
      return static_cast<T>((h >> 3) | 1u);
    } else if constexpr (same_t<Op, np::BitAnd>) {
      if (h % 8u == 0u) return static_cast<T>(~0ull);
      return static_cast<T>(~(1ull << ((h >> 5) % (8u * sizeof(T)))));
    } else if constexpr (same_t<Op, np::LogicalAnd>) {
      return h % 64u == 0u ? T(0) : static_cast<T>((h >> 7) | 1u);
    } else if constexpr (same_t<Op, np::LogicalOr>) {
      return h % 64u != 0u ? T(0) : static_cast<T>((h >> 7) | 1u);
    } else {  // Plus, BitOr, BitXor: the full range (sums wrap)
      return static_cast<T>(h >> 3);
    }
  }
}

template <class T>
unsigned long long bits_of(T x) {
  unsigned long long u = 0;
  std::memcpy(&u, &x, sizeof(T));
  return u;
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// Device result against the host reference: exact bits, except float min/max by value.
template <class Op, class T>
bool matches(T got, T want) {
  if constexpr (std::is_floating_point<T>::value && is_minmax<Op>) return got == want;
  return same_bits(got, want);
}

// ---------------------------------------------------------------------------------------------
// Host references, in the order the header documents.

// IntraWarp::reduce: butterfly, the lower partial value on the left; one result per member.
template <class Op, class T>
arr<T> ref_intra_reduce(arr<T> v) {
  const unsigned S = static_cast<unsigned>(v.size());
  const Op op{};
  for (unsigned d = 1; d < S; d <<= 1) {
    arr<T> n(S);
    for (unsigned k = 0; k < S; ++k) n[k] = (k & d) ? op(v[k ^ d], v[k]) : op(v[k], v[k ^ d]);
    v = std::move(n);
  }
  return v;
}

// IntraWarp::scan: Hillis-Steele; total = the last member's value.
template <class Op, class T>
arr<T> ref_intra_scan(arr<T> v, T& total) {
  const unsigned S = static_cast<unsigned>(v.size());
  const Op op{};
  for (unsigned d = 1; d < S; d <<= 1) {
    arr<T> n(v);
    for (unsigned k = d; k < S; ++k) n[k] = op(v[k - d], v[k]);
    v = std::move(n);
  }
  total = v[S - 1];
  return v;
}

// InterWarp: left folds.
template <class Op, class T>
arr<T> ref_inter_scan(const arr<T>& v, T& total) {
  const Op op{};
  arr<T> r(v.size());
  T acc = v[0];
  r[0] = acc;
  for (size_t k = 1; k < v.size(); ++k) r[k] = acc = op(acc, v[k]);
  total = acc;
  return r;
}

template <class Op, class T>
arr<T> ref_inter_reduce(const arr<T>& v) {
  T total;
  ref_inter_scan<Op>(v, total);
  return arr<T>(v.size(), total);
}

// ---------------------------------------------------------------------------------------------
// Kernels

struct info_rec {
  unsigned slave, master, mask;  // mask: IntraWarp::mask, or InterWarp::masters
};

constexpr unsigned NOUT = 6;  // per thread: reduce a, reduce b, scan a, total a, scan b, total b

template <unsigned S, class Op, class T>
__global__ void intra_kernel(const T* a, const T* b, T* out, info_rec* info, unsigned n) {
  static_assert(np::fits(1024u / S, S), "fits");
  const np::IntraWarp<S> g;
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  T ta, tb;
  const T ra = g.template reduce<Op>(a[i]);
  const T rb = g.template reduce<Op>(b[i]);  // back to back
  g.sync();
  const T sa = g.template scan<Op>(a[i], ta);
  const T sb = g.template scan<Op>(b[i], tb);
  out[0 * n + i] = ra;
  out[1 * n + i] = rb;
  out[2 * n + i] = sa;
  out[3 * n + i] = ta;
  out[4 * n + i] = sb;
  out[5 * n + i] = tb;
  info[i] = info_rec{g.slave, g.master, g.mask};
}

constexpr unsigned CANARY = 16;  // bytes before (at offset > 0) and after the scratch

template <unsigned S, class Op, class T>
__global__ void inter_kernel(const T* a, const T* b, T* out, info_rec* info, unsigned n, unsigned masters,
                             unsigned offset, unsigned* canary_bad) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned end = offset + np::InterWarp<S>::scratch_bytes(masters);
  if (threadIdx.x < offset) smem[threadIdx.x] = 0xA5;
  if (threadIdx.x < CANARY) smem[end + threadIdx.x] = 0x5A;
  const np::InterWarp<S> g(masters, smem + offset);
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  T ta, tb;
  const T ra = g.template reduce<Op>(a[i]);  // its first barrier also orders the canary writes
  const T rb = g.template reduce<Op>(b[i]);
  const T sa = g.template scan<Op>(a[i], ta);
  g.sync();
  const T sb = g.template scan<Op>(b[i], tb);
  out[0 * n + i] = ra;
  out[1 * n + i] = rb;
  out[2 * n + i] = sa;
  out[3 * n + i] = ta;
  out[4 * n + i] = sb;
  out[5 * n + i] = tb;
  info[i] = info_rec{g.slave, g.master, g.masters};
  if ((threadIdx.x < offset && smem[threadIdx.x] != 0xA5) || (threadIdx.x < CANARY && smem[end + threadIdx.x] != 0x5A))
    atomicAdd(canary_bad, 1u);
}

// ---------------------------------------------------------------------------------------------
// Runs and checks

static unsigned long long salt_of(const char* op, const char* type, unsigned S, unsigned masters, unsigned layout) {
  unsigned long long h = 1469598103934665603ull;
  for (const char* p = op; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  for (const char* p = type; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return mix(h ^ (S * 1000003ull + masters * 7919ull + layout));
}

// `groups[g * S + k]` is the thread index of member k (slave k) of group g.
template <class Op, class T>
void check_groups(const char* what, bool intra, unsigned S, const std::vector<unsigned>& groups,
                  const arr<T>& a, const arr<T>& b, const arr<T>& out, unsigned n) {
  const unsigned ngroups = static_cast<unsigned>(groups.size()) / S;
  for (unsigned g = 0; g < ngroups; ++g) {
    arr<T> va(S), vb(S);
    for (unsigned k = 0; k < S; ++k) {
      va[k] = a[groups[g * S + k]];
      vb[k] = b[groups[g * S + k]];
    }
    T want_ta, want_tb;
    const arr<T> red_a = intra ? ref_intra_reduce<Op>(va) : ref_inter_reduce<Op>(va);
    const arr<T> red_b = intra ? ref_intra_reduce<Op>(vb) : ref_inter_reduce<Op>(vb);
    const arr<T> scan_a = intra ? ref_intra_scan<Op>(va, want_ta) : ref_inter_scan<Op>(va, want_ta);
    const arr<T> scan_b = intra ? ref_intra_scan<Op>(vb, want_tb) : ref_inter_scan<Op>(vb, want_tb);
    static const char* const names[NOUT] = {"reduce(a)", "reduce(b)", "scan(a)", "total(a)", "scan(b)", "total(b)"};
    for (unsigned k = 0; k < S; ++k) {
      const unsigned i = groups[g * S + k];
      const unsigned i0 = groups[g * S];
      for (unsigned o = 0; o < NOUT; ++o) {
        const T got = out[o * n + i];
        const T w = o == 0 ? red_a[k] : o == 1 ? red_b[k] : o == 2 ? scan_a[k] : o == 3 ? want_ta
                  : o == 4 ? scan_b[k] : want_tb;
        KT_EXPECT(matches<Op>(got, w), "%s group %u slave %u (thread %u) %s: got %.17g (0x%llx), want %.17g (0x%llx)",
                  what, g, k, i, names[o], static_cast<double>(got), bits_of(got), static_cast<double>(w), bits_of(w));
        if (o != 2 && o != 4) {  // reduce and total: the same bits in every member
          const T first = out[o * n + i0];
          KT_EXPECT(same_bits(got, first), "%s group %u %s: slave %u has 0x%llx, slave 0 has 0x%llx", what, g,
                    names[o], k, bits_of(got), bits_of(first));
        }
      }
      if (!intra) {  // InterWarp: total and reduce are the same left fold
        KT_EXPECT(same_bits(out[0 * n + i], out[3 * n + i]), "%s group %u slave %u: reduce(a) 0x%llx != total(a) 0x%llx",
                  what, g, k, bits_of(out[0 * n + i]), bits_of(out[3 * n + i]));
      }
    }
  }
}

template <class T>
struct dev_buf {
  T* p = nullptr;
  explicit dev_buf(size_t count) { KT_CUDA(cudaMalloc(&p, count * sizeof(T) + 1)); }
  ~dev_buf() { cudaFree(p); }
  void put(const arr<T>& v) { KT_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  arr<T> get(size_t count) const {
    arr<T> v(count);
    KT_CUDA(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

template <class Op, class T, unsigned S>
void run_intra(const char* op, const char* type) {
  const unsigned block = 96 + 2 * S;  // S=2: 100 threads, the last warp has 4 lanes
  const unsigned blocks = 3, n = blocks * block;
  const unsigned long long salt = salt_of(op, type, S, 0, 1);
  arr<T> a(n), b(n);
  for (unsigned i = 0; i < n; ++i) {
    a[i] = value<Op, T>(i, salt);
    b[i] = value<Op, T>(i + n, salt);
  }
  dev_buf<T> da(n), db(n), dout(NOUT * n);
  dev_buf<info_rec> dinfo(n);
  da.put(a);
  db.put(b);
  intra_kernel<S, Op, T><<<blocks, block>>>(da.p, db.p, dout.p, dinfo.p, n);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const arr<T> out = dout.get(NOUT * n);
  const arr<info_rec> info = dinfo.get(n);
  std::vector<unsigned> groups(n);
  for (unsigned i = 0; i < n; ++i) groups[i] = i;  // group g = threads g*S .. g*S+S-1
  char what[128];
  std::snprintf(what, sizeof what, "intra-warp %s<%s> S=%u", op, type, S);
  check_groups<Op>(what, true, S, groups, a, b, out, n);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned tid = i % block, lane = tid % 32u, base = lane & ~(S - 1u);
    const unsigned mask = S == 32 ? 0xFFFFFFFFu : ((1u << S) - 1u) << base;
    KT_EXPECT(info[i].slave == tid % S && info[i].master == tid / S && info[i].mask == mask,
              "%s thread %u: slave %u master %u mask 0x%08x, want %u %u 0x%08x", what, i, info[i].slave,
              info[i].master, info[i].mask, tid % S, tid / S, mask);
  }
}

template <class Op, class T, unsigned S>
void run_inter(const char* op, const char* type) {
  for (const unsigned masters : {32u, 64u, 100u}) {
    const unsigned block = masters * S, blocks = 2, n = blocks * block;
    const unsigned offset = masters == 100u ? 16u : 0u;  // scratch after other shared data
    const size_t dyn = offset + np::InterWarp<S>::scratch_bytes(masters) + CANARY;
    const unsigned long long salt = salt_of(op, type, S, masters, 2);
    arr<T> a(n), b(n);
    for (unsigned i = 0; i < n; ++i) {
      a[i] = value<Op, T>(i, salt);
      b[i] = value<Op, T>(i + n, salt);
    }
    dev_buf<T> da(n), db(n), dout(NOUT * n);
    dev_buf<info_rec> dinfo(n);
    dev_buf<unsigned> dbad(1);
    da.put(a);
    db.put(b);
    KT_CUDA(cudaMemset(dbad.p, 0, sizeof(unsigned)));
    KT_EXPECT(np::prepare(inter_kernel<S, Op, T>, dyn, 48 * 1024), "prepare inter_kernel S=%u with %zu bytes", S, dyn);
    inter_kernel<S, Op, T><<<blocks, block, dyn>>>(da.p, db.p, dout.p, dinfo.p, n, masters, offset, dbad.p);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const arr<T> out = dout.get(NOUT * n);
    const arr<info_rec> info = dinfo.get(n);
    const unsigned bad = dbad.get(1)[0];
    std::vector<unsigned> groups;  // group (block bl, master m): threads bl*block + k*masters + m
    for (unsigned bl = 0; bl < blocks; ++bl)
      for (unsigned m = 0; m < masters; ++m)
        for (unsigned k = 0; k < S; ++k) groups.push_back(bl * block + k * masters + m);
    char what[128];
    std::snprintf(what, sizeof what, "inter-warp %s<%s> S=%u masters=%u", op, type, S, masters);
    check_groups<Op>(what, false, S, groups, a, b, out, n);
    KT_EXPECT(bad == 0, "%s: %u canary bytes around the scratch were overwritten", what, bad);
    for (unsigned i = 0; i < n; ++i) {
      const unsigned tid = i % block;
      KT_EXPECT(info[i].slave == tid / masters && info[i].master == tid % masters && info[i].mask == masters,
                "%s thread %u: slave %u master %u masters %u", what, i, info[i].slave, info[i].master, info[i].mask);
    }
  }
}

template <class Op, class T>
void run_all(const char* op, const char* type) {
  run_intra<Op, T, 2>(op, type);
  run_intra<Op, T, 4>(op, type);
  run_intra<Op, T, 8>(op, type);
  run_intra<Op, T, 16>(op, type);
  run_intra<Op, T, 32>(op, type);
  run_inter<Op, T, 2>(op, type);
  run_inter<Op, T, 3>(op, type);
  run_inter<Op, T, 4>(op, type);
  run_inter<Op, T, 8>(op, type);
}

// ---------------------------------------------------------------------------------------------
// Divergence: the groups of one warp take different paths (master % 3), with data-dependent trip
// counts; each group's operations name only its own lanes, so nothing waits for the others.

constexpr unsigned DIV_OUT = 3;

template <unsigned S, class Op, class T>
__global__ void divergent_kernel(const T* a, T* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned master = threadIdx.x / S;
  T r = Op::template identity<T>(), s = r, t = r;
  if (master % 3u == 0u) {
    const np::IntraWarp<S> g;
    for (unsigned k = 0; k < 1u + master % 4u; ++k) r = Op()(r, g.template reduce<Op>(a[i]));
    s = g.template scan<Op>(a[i], t);
  } else if (master % 3u == 2u) {
    const np::IntraWarp<S> g;
    s = g.template scan<Op>(a[i], t);
    r = g.template reduce<Op>(s);
  }  // master % 3 == 1: no group operation at all
  out[0 * n + i] = r;
  out[1 * n + i] = s;
  out[2 * n + i] = t;
}

template <class Op, class T, unsigned S>
void run_divergent(const char* op, const char* type) {
  const unsigned block = 128 + S, blocks = 2, n = blocks * block;
  const unsigned long long salt = salt_of(op, type, S, 0, 3);
  arr<T> a(n);
  for (unsigned i = 0; i < n; ++i) a[i] = value<Op, T>(i, salt);
  dev_buf<T> da(n), dout(DIV_OUT * n);
  da.put(a);
  divergent_kernel<S, Op, T><<<blocks, block>>>(da.p, dout.p, n);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const arr<T> out = dout.get(DIV_OUT * n);
  const Op op_{};
  for (unsigned base = 0; base < n; base += S) {
    const unsigned master = (base % block) / S;
    arr<T> v(S);
    for (unsigned k = 0; k < S; ++k) v[k] = a[base + k];
    arr<T> r(S, Op::template identity<T>()), s = r, t = r;
    if (master % 3u == 0u) {
      const arr<T> red = ref_intra_reduce<Op>(v);
      for (unsigned k = 0; k < S; ++k)
        for (unsigned j = 0; j < 1u + master % 4u; ++j) r[k] = op_(r[k], red[k]);
      T tot;
      s = ref_intra_scan<Op>(v, tot);
      t = arr<T>(S, tot);
    } else if (master % 3u == 2u) {
      T tot;
      s = ref_intra_scan<Op>(v, tot);
      t = arr<T>(S, tot);
      r = ref_intra_reduce<Op>(s);
    }
    for (unsigned k = 0; k < S; ++k) {
      const unsigned i = base + k;
      const T w[DIV_OUT] = {r[k], s[k], t[k]};
      for (unsigned o = 0; o < DIV_OUT; ++o)
        KT_EXPECT(matches<Op>(out[o * n + i], w[o]), "divergent %s<%s> S=%u thread %u output %u: got %.17g, want %.17g",
                  op, type, S, i, o, static_cast<double>(out[o * n + i]), static_cast<double>(w[o]));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host API

static void test_operators() {
  static_assert(np::Plus::identity<int>() == 0 && np::Times::identity<long long>() == 1, "identity");
  static_assert(np::Min::identity<float>() == cuda::std::numeric_limits<float>::infinity(), "identity");
  static_assert(np::Max::identity<double>() == -cuda::std::numeric_limits<double>::infinity(), "identity");
  static_assert(np::Min::identity<int>() == INT_MAX && np::Max::identity<int>() == INT_MIN, "identity");
  static_assert(np::Max::identity<unsigned>() == 0u && np::Min::identity<unsigned>() == UINT_MAX, "identity");
  static_assert(np::BitAnd::identity<unsigned>() == ~0u && np::BitAnd::identity<bool>(), "identity");
  static_assert(np::BitAnd::identity<unsigned char>() == 0xFF && np::BitOr::identity<int>() == 0, "identity");
  static_assert(np::LogicalAnd::identity<float>() == 1.0f && !np::LogicalOr::identity<bool>(), "identity");
  static_assert(np::Max::identity<bool>() == false && np::Min::identity<bool>() == true, "identity");
  KT_EXPECT(np::Plus()(INT_MAX, 1) == INT_MIN, "Plus wraps signed ints");
  KT_EXPECT(np::Times()(static_cast<unsigned short>(65535), static_cast<unsigned short>(65535)) == 1, "Times u16");
  KT_EXPECT(np::Times()(static_cast<signed char>(16), static_cast<signed char>(16)) == 0, "Times i8 wraps");
  KT_EXPECT(np::Min()(3, -4) == -4 && np::Max()(3u, 7u) == 7u && np::Max()(2.5, -1.0) == 2.5, "min/max");
  KT_EXPECT(np::Min()(1.0f, NAN) == 1.0f && np::Max()(static_cast<double>(NAN), 2.0) == 2.0, "min/max ignore NaN");
  KT_EXPECT(np::LogicalAnd()(2, 3) == 1 && np::LogicalOr()(0.0, -0.0) == 0.0 && np::LogicalOr()(0.0, 0.5) == 1.0,
            "logical");
  KT_EXPECT(np::BitXor()(true, true) == false && np::Plus()(true, true) == true, "bool");
}

static void test_sizes() {
  static_assert(np::fits(1024, 1) && np::fits(512, 2) && np::fits(32, 32) && np::fits(1, 1024), "fits");
  static_assert(!np::fits(1025, 1) && !np::fits(513, 2) && !np::fits(1, 1025) && !np::fits(33, 32), "fits");
  static_assert(!np::fits(1u << 31, 2) && !np::fits(0xFFFFFFFFu, 0xFFFFFFFFu) && !np::fits(65536, 65536), "fits");
  static_assert(np::fits(0, 5) && np::fits(7, 0), "fits: a product of 0");
  static_assert(np::align16(0) == 0 && np::align16(1) == 16 && np::align16(16) == 16 && np::align16(17) == 32, "a16");
  static_assert(np::align16(SIZE_MAX) == SIZE_MAX && np::align16(SIZE_MAX - 14) == SIZE_MAX, "align16 saturates");
  static_assert(np::align16(SIZE_MAX - 15) == SIZE_MAX - 15, "align16: the largest multiple of 16");
  static_assert(np::align16(SIZE_MAX - 16) == (SIZE_MAX & ~static_cast<size_t>(15)), "align16");
  static_assert(np::InterWarp<3>::scratch_bytes(100) == 2400 && np::InterWarp<8>::scratch_bytes(128) == 8192, "bytes");
  volatile unsigned t = 1025, s = 1;  // the same at run time
  KT_EXPECT(!np::fits(t, s) && np::fits(t - 1, s), "fits at run time");
}

// Calls f with stderr redirected to a temporary file; returns what was written.
template <class F>
static std::string capture_stderr(F f) {
  std::fflush(stderr);
  const int saved = dup(2);
  FILE* tmp = std::tmpfile();
  if (saved < 0 || tmp == nullptr) {
    KT_EXPECT(false, "cannot redirect stderr");
    f();
    return {};
  }
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string text;
  char buf[512];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, tmp)) > 0) text.append(buf, got);
  std::fclose(tmp);
  return text;
}

static const char* vname(np::Variant v) {
  return v == np::Variant::original ? "original" : v == np::Variant::intra_warp ? "intra-warp" : "inter-warp";
}

#define EXPECT_VARIANT(got, want) \
  KT_EXPECT((got) == (want), "%s is %s, want %s", #got, vname(got), vname(want))

static void test_environment() {
  using V = np::Variant;
  unsetenv("KLAP_NP");
  unsetenv("KLAP_NP_kenv");
  EXPECT_VARIANT(np::chosen("kenv", V::intra_warp), V::intra_warp);  // nothing set: the fallback
  EXPECT_VARIANT(np::chosen(nullptr, V::inter_warp), V::inter_warp);
  setenv("KLAP_NP", "inter-warp", 1);
  EXPECT_VARIANT(np::chosen("kenv", V::intra_warp), V::inter_warp);
  EXPECT_VARIANT(np::chosen(nullptr, V::original), V::inter_warp);
  setenv("KLAP_NP_kenv", "original", 1);  // the kernel's variable before KLAP_NP
  EXPECT_VARIANT(np::chosen("kenv", V::intra_warp), V::original);
  setenv("KLAP_NP_kenv", "none", 1);
  EXPECT_VARIANT(np::chosen("kenv", V::intra_warp), V::original);
  setenv("KLAP_NP_kenv", "intra-warp", 1);
  EXPECT_VARIANT(np::chosen("kenv", V::original), V::intra_warp);
  EXPECT_VARIANT(np::chosen("kenv2", V::original), V::inter_warp);  // another kernel: KLAP_NP
  setenv("KLAP_NP_kenv", "", 1);  // empty: as if unset
  EXPECT_VARIANT(np::chosen("kenv", V::original), V::inter_warp);
  setenv("KLAP_NP_ns__k_2_", "intra-warp", 1);  // "ns::k<2>": other characters as '_'
  EXPECT_VARIANT(np::chosen("ns::k<2>", V::original), V::intra_warp);

  // An invalid value: the fallback (not KLAP_NP), and one warning line per variable.
  setenv("KLAP_NP_kbad", "Intra-Warp", 1);
  V r1 = V::inter_warp, r2 = V::inter_warp;
  std::string err = capture_stderr([&] {
    r1 = np::chosen("kbad", V::original);
    r2 = np::chosen("kbad", V::intra_warp);
  });
  EXPECT_VARIANT(r1, V::original);
  EXPECT_VARIANT(r2, V::intra_warp);
  KT_EXPECT(err == "klap: warning: KLAP_NP_kbad=Intra-Warp is not original, intra-warp or inter-warp; using original\n",
            "warning for KLAP_NP_kbad: [%s]", err.c_str());
  unsetenv("KLAP_NP_kbad");
  setenv("KLAP_NP", "bogus", 1);
  err = capture_stderr([&] {
    r1 = np::chosen("kenv3", V::intra_warp);
    r2 = np::chosen("kenv4", V::inter_warp);
  });
  EXPECT_VARIANT(r1, V::intra_warp);
  EXPECT_VARIANT(r2, V::inter_warp);
  KT_EXPECT(err == "klap: warning: KLAP_NP=bogus is not original, intra-warp or inter-warp; using intra-warp\n",
            "warning for KLAP_NP: [%s]", err.c_str());
  unsetenv("KLAP_NP_kenv");
  unsetenv("KLAP_NP_ns__k_2_");
}

// After test_environment: select(nullptr, ..) cannot be undone.
static void test_select() {
  using V = np::Variant;
  setenv("KLAP_NP", "inter-warp", 1);
  setenv("KLAP_NP_ksel", "original", 1);
  EXPECT_VARIANT(np::chosen("ksel", V::intra_warp), V::original);
  np::select("ksel", V::intra_warp);  // select before the environment
  EXPECT_VARIANT(np::chosen("ksel", V::original), V::intra_warp);
  np::select("ksel", V::inter_warp);  // a later select overrides
  EXPECT_VARIANT(np::chosen("ksel", V::original), V::inter_warp);
  np::select("kzero", V::original);
  EXPECT_VARIANT(np::chosen("kzero", V::intra_warp), V::original);
  EXPECT_VARIANT(np::chosen("kother", V::intra_warp), V::inter_warp);  // KLAP_NP
  np::select(nullptr, V::original);  // the default before the environment, after a kernel's select
  EXPECT_VARIANT(np::chosen("kother", V::intra_warp), V::original);
  EXPECT_VARIANT(np::chosen(nullptr, V::intra_warp), V::original);
  EXPECT_VARIANT(np::chosen("ksel", V::original), V::inter_warp);
  np::select(nullptr, V::intra_warp);
  EXPECT_VARIANT(np::chosen("kother", V::inter_warp), V::intra_warp);

  // Concurrent select and chosen from several host threads.
  std::vector<std::thread> threads;
  std::vector<int> bad(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &bad] {
      const std::string name = "kthread" + std::to_string(t);
      for (int k = 0; k < 2000; ++k) {
        const V v = static_cast<V>((t + k) % 3);
        np::select(name.c_str(), v);
        if (np::chosen(name.c_str(), V::original) != v) ++bad[t];
        if (np::chosen("ksel", V::original) != V::inter_warp) ++bad[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) KT_EXPECT(bad[t] == 0, "thread %d: %d wrong choices", t, bad[t]);
  unsetenv("KLAP_NP");
  unsetenv("KLAP_NP_ksel");
}

// ---------------------------------------------------------------------------------------------
// prepare

__global__ void smem_kernel(unsigned* out, unsigned words) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* w = reinterpret_cast<unsigned*>(smem);
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = 3u * i + 1u;
  __syncthreads();
  out[threadIdx.x] = w[words - 1u - threadIdx.x];
}

// 40 KiB of static shared memory: 10 KiB of dynamic memory is more than its default limit.
__global__ void static_smem_kernel(unsigned* out, unsigned words) {
  __shared__ unsigned st[10 * 1024];
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* w = reinterpret_cast<unsigned*>(smem);
  for (unsigned i = threadIdx.x; i < 10u * 1024u; i += blockDim.x) st[i] = i;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = 3u * i + 1u;
  __syncthreads();
  out[threadIdx.x] = w[words - 1u - threadIdx.x] + st[10u * 1024u - 1u - threadIdx.x];
}

template <class K>
static void launch_smem(K* kernel, size_t dyn, unsigned extra, const char* what) {
  const unsigned words = static_cast<unsigned>(dyn / 4), threads = 128;
  dev_buf<unsigned> dout(threads);
  kernel<<<1, threads, dyn>>>(dout.p, words);
  const cudaError_t e = cudaGetLastError();
  KT_EXPECT(e == cudaSuccess, "%s: launch with %zu bytes: %s", what, dyn, cudaGetErrorString(e));
  if (e != cudaSuccess) return;
  KT_CUDA(cudaDeviceSynchronize());
  const arr<unsigned> out = dout.get(threads);
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned want = 3u * (words - 1u - t) + 1u + (extra ? 10u * 1024u - 1u - t : 0u);
    KT_EXPECT(out[t] == want, "%s: thread %u read %u, want %u", what, t, out[t], want);
  }
}

static void test_prepare() {
  const size_t KiB = 1024;
  KT_EXPECT(np::prepare(smem_kernel, 0, 0), "no dynamic shared memory");
  KT_EXPECT(!np::prepare(smem_kernel, 100 * KiB, 64 * KiB), "over budget must be false");
  KT_EXPECT(np::prepare(smem_kernel, 1 * KiB, 2 * KiB), "1 KiB");
  launch_smem(smem_kernel, 1 * KiB, 0, "smem_kernel 1 KiB");
  KT_EXPECT(np::prepare(smem_kernel, 100 * KiB, 200 * KiB), "100 KiB (an H100 allows 227 KiB)");
  launch_smem(smem_kernel, 100 * KiB, 0, "smem_kernel 100 KiB");
  KT_EXPECT(np::prepare(smem_kernel, 100 * KiB, 200 * KiB), "100 KiB again");
  KT_EXPECT(np::prepare(smem_kernel, 60 * KiB, 200 * KiB), "60 KiB after 100 KiB");
  launch_smem(smem_kernel, 60 * KiB, 0, "smem_kernel 60 KiB");
  // More than any device has: false, and no error left behind for the caller's own check.
  KT_EXPECT(!np::prepare(smem_kernel, 1024 * KiB, SIZE_MAX), "1 MiB must be refused");
  const cudaError_t e = cudaGetLastError();
  KT_EXPECT(e == cudaSuccess, "prepare left an error behind: %s", cudaGetErrorString(e));
  KT_EXPECT(!np::prepare(smem_kernel, static_cast<size_t>(INT_MAX) + 1u, SIZE_MAX), "above INT_MAX");
  KT_EXPECT(np::prepare(smem_kernel, 100 * KiB, 200 * KiB), "100 KiB after a refusal");
  // Static + dynamic above 48 KiB with dynamic below 48 KiB.
  KT_EXPECT(np::prepare(static_smem_kernel, 10 * KiB, 100 * KiB), "40 KiB static + 10 KiB dynamic");
  launch_smem(static_smem_kernel, 10 * KiB, 1, "static_smem_kernel 10 KiB");
}

// first(): every member gets its master's value (an int and a pointer), intra- and inter-warp.
template <unsigned S>
__global__ void first_intra_kernel(unsigned* out, const unsigned* base) {
  const np::IntraWarp<S> g;
  const unsigned v = g.first(1000u * g.master + g.slave + 7u);
  const unsigned* p = g.first(base + (g.slave == 0 ? g.master : 999u));
  out[threadIdx.x] = v == 1000u * g.master + 7u && p == base + g.master ? 1u : 0u;
}

template <unsigned S>
__global__ void first_inter_kernel(unsigned* out, const unsigned* base, unsigned masters) {
  extern __shared__ __align__(16) unsigned char smem[];
  const np::InterWarp<S> g(masters, smem);
  const unsigned v = g.first(1000u * g.master + g.slave + 7u);
  const unsigned* p = g.first(base + (g.slave == 0 ? g.master : 999u));
  const unsigned w = g.first(v + 1u);  // back to back: the scratch is reused
  out[threadIdx.x] = v == 1000u * g.master + 7u && p == base + g.master && w == v + 1u ? 1u : 0u;
}

template <unsigned S, bool intra>
static void check_first(unsigned masters) {
  const unsigned threads = masters * S;
  dev_buf<unsigned> dout(threads);
  if constexpr (intra) {
    first_intra_kernel<S><<<1, threads>>>(dout.p, reinterpret_cast<const unsigned*>(16));
  } else {
    first_inter_kernel<S><<<1, threads, np::InterWarp<S>::scratch_bytes(masters)>>>(
        dout.p, reinterpret_cast<const unsigned*>(16), masters);
  }
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  const arr<unsigned> out = dout.get(threads);
  for (unsigned t = 0; t < threads; ++t) {
    KT_EXPECT(out[t] == 1u, "first: %s S=%u masters=%u thread %u got another member's value",
              intra ? "intra-warp" : "inter-warp", S, masters, t);
  }
}

static void test_first() {
  check_first<2, true>(64);
  check_first<8, true>(100);
  check_first<32, true>(32);
  check_first<3, false>(100);
  check_first<8, false>(128);
}

// Plus's identity is -0.0 on floating point: it leaves every sum's bits unchanged, -0.0 included.
static void test_identity_sign() {
  KT_EXPECT(std::signbit(np::Plus::identity<float>()) && std::signbit(np::Plus::identity<double>()),
            "Plus::identity must be -0.0 for floating point");
  KT_EXPECT(std::signbit(np::Plus{}(-0.0f, np::Plus::identity<float>())), "-0 + identity must stay -0");
}

// launch_memory: shared memory within the budget, global memory beyond it, and release().
static void test_launch_memory() {
  np::LaunchMemory m;
  KT_EXPECT(np::launch_memory(smem_kernel, 128, 0, 0, 4096, dim3(2), 48 * 1024, 0, m) && m.dyn == 4096 && m.global == nullptr,
            "4 KiB of arrays must go to shared memory");
  KT_EXPECT(np::launch_memory(smem_kernel, 128, 16, 512, 64 * 1024, dim3(3, 2), 48 * 1024, 0, m) && m.global != nullptr
                && m.dyn == 16 + 512,
            "64 KiB of arrays over a 48 KiB budget must go to global memory");
  np::release(m, 0);
  KT_CUDA(cudaStreamSynchronize(0));
  KT_EXPECT(!np::launch_memory(smem_kernel, 128, 60 * 1024, 0, 64, dim3(1), 48 * 1024, 0, m), "the user's own shared memory over budget");
  KT_CUDA(cudaGetLastError());
  KT_EXPECT(!np::launch_memory(smem_kernel, 2048, 0, 0, 0, dim3(1), 48 * 1024, 0, m), "2048 threads must be refused");
  KT_EXPECT(np::max_threads(smem_kernel) >= 128, "max_threads of a small kernel");
}

int main() {
  kt_watchdog("test_np", 240);
  test_operators();
  test_sizes();
  test_environment();
  test_select();
  test_prepare();
  test_first();
  test_identity_sign();
  test_launch_memory();

  run_all<np::Plus, int>("Plus", "int");
  run_all<np::Plus, unsigned>("Plus", "unsigned");
  run_all<np::Plus, long long>("Plus", "long long");
  run_all<np::Plus, float>("Plus", "float");
  run_all<np::Plus, double>("Plus", "double");
  run_all<np::Plus, short>("Plus", "short");
  run_all<np::Times, int>("Times", "int");
  run_all<np::Times, unsigned>("Times", "unsigned");
  run_all<np::Times, long long>("Times", "long long");
  run_all<np::Times, float>("Times", "float");
  run_all<np::Times, double>("Times", "double");
  run_all<np::Times, unsigned long long>("Times", "unsigned long long");
  run_all<np::Min, int>("Min", "int");
  run_all<np::Min, unsigned>("Min", "unsigned");
  run_all<np::Min, long long>("Min", "long long");
  run_all<np::Min, float>("Min", "float");
  run_all<np::Min, double>("Min", "double");
  run_all<np::Min, short>("Min", "short");
  run_all<np::Max, int>("Max", "int");
  run_all<np::Max, unsigned>("Max", "unsigned");
  run_all<np::Max, long long>("Max", "long long");
  run_all<np::Max, float>("Max", "float");
  run_all<np::Max, double>("Max", "double");
  run_all<np::Max, unsigned char>("Max", "unsigned char");
  run_all<np::BitAnd, int>("BitAnd", "int");
  run_all<np::BitAnd, unsigned>("BitAnd", "unsigned");
  run_all<np::BitAnd, long long>("BitAnd", "long long");
  run_all<np::BitOr, int>("BitOr", "int");
  run_all<np::BitOr, unsigned>("BitOr", "unsigned");
  run_all<np::BitOr, long long>("BitOr", "long long");
  run_all<np::BitOr, bool>("BitOr", "bool");
  run_all<np::BitXor, int>("BitXor", "int");
  run_all<np::BitXor, unsigned>("BitXor", "unsigned");
  run_all<np::BitXor, long long>("BitXor", "long long");
  run_all<np::BitXor, bool>("BitXor", "bool");
  run_all<np::LogicalAnd, int>("LogicalAnd", "int");
  run_all<np::LogicalAnd, bool>("LogicalAnd", "bool");
  run_all<np::LogicalAnd, double>("LogicalAnd", "double");
  run_all<np::LogicalOr, int>("LogicalOr", "int");
  run_all<np::LogicalOr, bool>("LogicalOr", "bool");
  run_all<np::LogicalOr, float>("LogicalOr", "float");

  run_divergent<np::Plus, int, 2>("Plus", "int");
  run_divergent<np::Plus, int, 8>("Plus", "int");
  run_divergent<np::Min, float, 4>("Min", "float");
  run_divergent<np::LogicalOr, bool, 16>("LogicalOr", "bool");
  return kt_finish("test_np");
}
