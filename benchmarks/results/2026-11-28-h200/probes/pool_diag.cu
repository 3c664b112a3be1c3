// pool_diag.cu -- diagnostic for the pool accounting fault (test_pool step 5 on the H200, 2026-11-27
// and 2026-11-28: live counts moved between adjacent segments; README.md "Runtime library tests").
// Written after the 2026-11-28 session; not yet run. Hypothesis (unverified): the rollback of a
// failed bump (a fetch_sub whose result is unused, i.e. a RED) is warp-aggregated by the compiler
// across lanes that hold different segment indices at the moment `cur` moves on.
// gpu-session: 3
//   nvcc -std=c++17 -rdc=true -arch=sm_90 -I runtime-lib/src/main/resources -I runtime-lib/src/test/cuda \
//        -o pool_diag pool_diag.cu && ./pool_diag 5 && cuobjdump -sass pool_diag | grep -nE 'Function|ATOMG|REDG|RED\.|MATCH|VOTE|POPC|REDUX|UFLO' > sass.txt
// Per mode, `runs` churns of test_pool's step 5 (pool zeroed before each); prints per run the
// segments whose live count is not 0 afterwards.
//   mode 0  the allocator as it is (klap::pool_alloc / pool_free)
//   mode 1  a copy with a shadow count: every RMW on seg[i] also does atomicAdd(&shadow[i], +-1)
//           with the SAME index variable: word != shadow => the RMW went to another word than the
//           index says (compiler / hardware); shadow != 0 => a logic error of the allocator
//   mode 2  a copy whose failed-bump rollback (and span-claim rollback) is a CAS loop, not a RED
#define KLAP_POOL_SIZE_BYTES (2ull << 20)
#define KLAP_POOL_SEGMENT_BYTES 4096ull
#define KLAP_POOL_WAIT_MS 1000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <cstring>
#include <vector>
constexpr unsigned NSEG = 512;
__device__ int shadow[NSEG];
using klap::detail::pool_atomic;
namespace mo = cuda::std;

template <int Mode>
__device__ void sub_live(unsigned long long* w, unsigned i) {
  if (Mode == 2) {
    pool_atomic<unsigned long long> a(*w);
    unsigned long long v = a.load(mo::memory_order_relaxed);
    while (!a.compare_exchange_weak(v, v - klap::pool_live_one, mo::memory_order_release, mo::memory_order_relaxed)) {}
  } else {
    pool_atomic<unsigned long long>(*w).fetch_sub(klap::pool_live_one, mo::memory_order_release);
  }
  if (Mode == 1) atomicSub(&shadow[i], 1);
}

template <int Mode>
__device__ void* diag_try_alloc(const klap::pool_view& v, unsigned long long bytes) {
  const unsigned long long need = 16ull + ((bytes + 15ull) & ~15ull), full = v.seg_bytes / 16ull;
  if (need > v.seg_bytes) {  // pool_try_span
    const unsigned long long k = (need + v.seg_bytes - 1ull) / v.seg_bytes, windows = v.nseg - k + 1ull;
    const unsigned long long start = (pool_atomic<unsigned>(*v.cur).load(mo::memory_order_relaxed) + 1ull) % windows;
    for (unsigned long long tried = 0; tried < windows;) {
      const unsigned long long first = (start + tried) % windows;
      unsigned long long claimed = 0;
      for (; claimed < k; ++claimed) {
        pool_atomic<unsigned long long> word(v.seg[first + claimed]);
        unsigned long long w = word.load(mo::memory_order_relaxed);
        if ((w >> klap::pool_live_shift) != 0ull ||
            !word.compare_exchange_strong(w, klap::pool_live_one | full, mo::memory_order_acq_rel, mo::memory_order_relaxed))
          break;
        if (Mode == 1) atomicAdd(&shadow[first + claimed], 1);
      }
      if (claimed == k) {
        klap::pool_hdr* h = reinterpret_cast<klap::pool_hdr*>(v.bytes + first * v.seg_bytes);
        h->refs = 0ull;
        h->span = k;
        return h + 1;
      }
      for (unsigned long long j = 0; j < claimed; ++j) sub_live<Mode>(&v.seg[first + j], first + j);
      tried += (first + claimed + 1ull <= windows ? claimed : 0ull) + 1ull;
    }
    return nullptr;
  }
  const unsigned long long units = need / 16ull;
  pool_atomic<unsigned> cur(*v.cur);
  for (unsigned round = 0; round < 4u * v.nseg + 4u; ++round) {
    const unsigned s = cur.load(mo::memory_order_acquire);
    pool_atomic<unsigned long long> word(v.seg[s]);
    if ((word.load(mo::memory_order_relaxed) & klap::pool_used_mask) + units <= full) {
      const unsigned long long old = word.fetch_add(klap::pool_live_one | units, mo::memory_order_acq_rel);
      if (Mode == 1) atomicAdd(&shadow[s], 1);
      if ((old & klap::pool_used_mask) + units <= full) {
        klap::pool_hdr* h = reinterpret_cast<klap::pool_hdr*>(v.bytes + s * v.seg_bytes + (old & klap::pool_used_mask) * 16ull);
        h->refs = 0ull;
        h->span = 0ull;
        return h + 1;
      }
      sub_live<Mode>(&v.seg[s], s);
    }
    if (!klap::detail::pool_advance(v, s, units)) return nullptr;
  }
  return nullptr;
}

template <int Mode>
__device__ void diag_release(const klap::pool_view& v, void* p) {
  const klap::pool_hdr* h = static_cast<const klap::pool_hdr*>(p) - 1;
  const unsigned long long first = static_cast<unsigned long long>(reinterpret_cast<const char*>(h) - v.bytes) / v.seg_bytes;
  const unsigned long long k = h->span ? h->span : 1ull;
  for (unsigned long long j = 0; j < k; ++j) {
    pool_atomic<unsigned long long>(v.seg[first + j]).fetch_sub(klap::pool_live_one, mo::memory_order_release);
    if (Mode == 1) atomicSub(&shadow[first + j], 1);
  }
}

template <int Mode>
__global__ void churn(unsigned rounds, unsigned* bad) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  const klap::pool_view v = klap::pool_of_program();
  for (unsigned r = 0; r < rounds; ++r) {
    const unsigned long long h = kt_mix64((static_cast<unsigned long long>(g) << 32) | r);
    const unsigned size = (g % 64u == 0u && r % 8u == 0u) ? 4097u + static_cast<unsigned>(h % 5000u) : static_cast<unsigned>(h % 1500u);
    unsigned* p = nullptr;
    for (unsigned ns = 256; p == nullptr; ns = ns < 65536u ? 2u * ns : ns) {
      p = static_cast<unsigned*>(Mode == 0 ? klap::pool_try_alloc(v, size) : diag_try_alloc<Mode>(v, size));
      if (p == nullptr) __nanosleep(ns);
    }
    const unsigned tag = g * 0x9E3779B9u ^ (r << 12), words = size / 4u;
    for (unsigned w = 0; w < words; ++w) p[w] = tag + w;
    __nanosleep(static_cast<unsigned>(h >> 52));
    unsigned b = 0;
    for (unsigned w = 0; w < words; ++w) b += p[w] != tag + w;
    if (b) atomicAdd(bad, b);
    if (Mode == 0) klap::pool_release(v, p); else diag_release<Mode>(v, p);
  }
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  kt_watchdog("pool_diag", 240);
  unsigned* d_bad;
  KT_CUDA(cudaMalloc(&d_bad, sizeof(unsigned)));
  for (int mode = 0; mode < 3; ++mode) {
    int faulty_runs = 0;
    for (int run = 0; run < runs; ++run) {
      std::vector<unsigned char> zero(sizeof(klap::pool_state), 0);
      KT_CUDA(cudaMemcpyToSymbol(klap::pool_dev_of<klap::pool_segments, klap::pool_segment_bytes, klap::pool_abi>, zero.data(), zero.size()));
      std::vector<int> zs(NSEG, 0);
      KT_CUDA(cudaMemcpyToSymbol(shadow, zs.data(), sizeof(int) * NSEG));
      KT_CUDA(cudaMemset(d_bad, 0, sizeof(unsigned)));
      if (mode == 0) churn<0><<<4, 64>>>(4000u, d_bad);
      else if (mode == 1) churn<1><<<4, 64>>>(4000u, d_bad);
      else churn<2><<<4, 64>>>(4000u, d_bad);
      KT_CUDA(cudaGetLastError());
      KT_CUDA(cudaDeviceSynchronize());
      std::vector<unsigned char> raw(sizeof(klap::pool_state));
      KT_CUDA(cudaMemcpyFromSymbol(raw.data(), klap::pool_dev_symbol(), raw.size()));
      const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
      KT_CUDA(cudaMemcpyFromSymbol(zs.data(), shadow, sizeof(int) * NSEG));
      unsigned bad = 0;
      KT_CUDA(cudaMemcpy(&bad, d_bad, sizeof(unsigned), cudaMemcpyDeviceToHost));
      int wrong = 0;
      for (unsigned i = 0; i < NSEG; ++i) {
        const unsigned long long live = st->seg[i] >> klap::pool_live_shift;
        const long long sl = live >= (1ull << 23) ? static_cast<long long>(live) - (1ll << 24) : static_cast<long long>(live);
        if (sl == 0 && zs[i] == 0) continue;
        ++wrong;
        std::printf("mode %d run %d: segment %u: live %lld, shadow %d, used %llu\n", mode, run, i, sl, zs[i],
                    st->seg[i] & klap::pool_used_mask);
      }
      std::printf("mode %d run %d: %d segments off, %u data words changed\n", mode, run, wrong, bad);
      faulty_runs += wrong != 0 || bad != 0;
    }
    std::printf("pool_diag: mode %d: %d of %d runs faulty\n", mode, faulty_runs, runs);
  }
  return 0;
}
