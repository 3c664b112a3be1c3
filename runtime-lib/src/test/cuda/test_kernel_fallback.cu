// Tests of what kernel-granularity aggregation (klap/kernel.cuh) does when klap's pool has no room
// (issue 11: "the launch falls back to a correct path where one exists"):
//   krecord(..., direct)       a record without storage, or any launch of the grid after one, goes
//                              out as written into cudaStreamTailLaunch; kfinish launches the rest
//   kchild_enter               blocks of a chunk without storage release the site and do nothing
//   kstate_new(n, on_full::launch_as_written)   no room: the "unavailable" state (all as written)
// The pool is made small (1 MiB in segments of 4 KiB) and the fallback wait short (200 us).
// The program, as klap writes it at kernel granularity: parent thread id of host launch l, if
// kf_launches(id, l), launches kf_produce<<<1, 32>>>(vals, id, v) and then, in the same thread and
// NULL stream, kf_consume<<<1, 32>>>(vals, sums, id, v), v = kf_value(id, l); produce stores v in
// vals[id], consume checks that it reads v there (so the thread's launch ORDER held) and adds v to
// sums[id]. Original kernels and aggregated variants count the grids they run.
//  A. A holder kernel (kt_pool_holder) keeps the whole pool while a parent grid runs: no chunk can be had, every
//     launch goes out as written (tail launches), no aggregated grid runs; right sums; the pool's
//     fallback counter moved.
//  B. No holder, 64 x 256 parents (about 12300 of them launch) with two sites: chunks 0..3 of one
//     site fit in the pool (960 KiB), those of both sites do not, and a site's chunks stay live
//     until its aggregated grid has read them: a mix of aggregated records, records without
//     storage (holes in the aggregated grid) and launches after the mark. Right sums and order,
//     nothing live at the end.
//  C. kstate_new(2, on_full::launch_as_written) while the holder keeps the pool gives the
//     unavailable state; the device-launched parent that gets it launches everything as written.
//  D. 60 host launches of B's parent into 2 streams without synchronizing: right sums, nothing live.
//  E. kstate_new(n, ..., site) for the aggregated grid of a site whose chunks 1 and 3 had no room
//     (hand-built site: 5 chunks, 30000 blocks): the new state counts the blocks of those chunks as
//     finished (kdetail::kmissing_blocks), since they return in kchild_enter and never reach the
//     grid's own kfinish (a recursive kernel's grid would otherwise never launch its children).
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#define KLAP_POOL_SEGMENT_BYTES 4096ull
#define KLAP_POOL_FALLBACK_WAIT_US 200
#define KLAP_KERNEL_TAIL_FALLBACK 1  // the fallback under test is off by default (config.cuh)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

struct kf_args {
  unsigned id;
  unsigned long long v;
};

struct kf_counters {
  unsigned long long direct_grids;  // kf_produce / kf_consume grids run as written
  unsigned long long agg_grids;     // aggregated grids that found a record (not only holes)
  unsigned long long errors;        // consume found another value than its produce stored
  unsigned long long unavailable;   // part C: kstate_new gave the unavailable state
};

__host__ __device__ inline bool kf_launches(unsigned id, unsigned l) { return kt_mix64(id * 31ull + l) % 4u != 0u; }
__host__ __device__ inline unsigned long long kf_value(unsigned id, unsigned l) {
  return kt_mix64((static_cast<unsigned long long>(l) << 32) ^ id) | 1ull;
}

__device__ inline void kf_produce_body(unsigned long long* vals, unsigned id, unsigned long long v) {
  vals[id] = v;
}
__device__ inline void kf_consume_body(const unsigned long long* vals, unsigned long long* sums, unsigned id,
                                       unsigned long long v, kf_counters* c) {
  if (vals[id] != v) atomicAdd(&c->errors, 1ull);
  atomicAdd(&sums[id], v);  // part D's two streams may run launches of one id at once
}

// The original children: what a launch as written runs.
__global__ void kf_produce(unsigned long long* vals, unsigned id, unsigned long long v, kf_counters* c) {
  if (threadIdx.x != 0) return;
  atomicAdd(&c->direct_grids, 1ull);
  kf_produce_body(vals, id, v);
}
__global__ void kf_consume(unsigned long long* vals, unsigned long long* sums, unsigned id, unsigned long long v,
                           kf_counters* c) {
  if (threadIdx.x != 0) return;
  atomicAdd(&c->direct_grids, 1ull);
  kf_consume_body(vals, sums, id, v, c);
}

// Their aggregated variants (as ChildVariants writes them at kernel granularity).
__global__ void kf_produce_kagg(const klap::ksite* klap_site, unsigned long long* vals, kf_counters* c) {
  klap::vctx v;
  const kf_args* a;
  if (!klap::kchild_enter(klap_site, v, a)) return;
  const kf_args r = *a;
  klap::kchild_release(klap_site);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&c->agg_grids, 1ull);
  if (v.threadIdx.x == 0) kf_produce_body(vals, r.id, r.v);
}
__global__ void kf_consume_kagg(const klap::ksite* klap_site, unsigned long long* vals, unsigned long long* sums,
                                kf_counters* c) {
  klap::vctx v;
  const kf_args* a;
  if (!klap::kchild_enter(klap_site, v, a)) return;
  const kf_args r = *a;
  klap::kchild_release(klap_site);
  if (v.threadIdx.x == 0) kf_consume_body(vals, sums, r.id, r.v, c);
}

// The kernel-granularity parent, as GridAggregation writes it for a kernel without tail launches.
__global__ void kf_parent(unsigned long long* vals, unsigned long long* sums, unsigned l, kf_counters* c,
                          klap::kstate* klap_ks) {
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (kf_launches(id, l)) {
    const unsigned long long v = kf_value(id, l);
    klap::krecord<kf_args>(klap_ks, 0u, dim3(1), dim3(32), 0u, (cudaStream_t)0, kf_args{id, v},
                           [&](dim3 g, dim3 b, unsigned sm, cudaStream_t st, const kf_args& a) -> cudaError_t {
                             const cudaError_t pre = cudaPeekAtLastError();
                             kf_produce<<<g, b, sm, st>>>(vals, a.id, a.v, c);
                             return klap::launch_result(pre);
                           });
    klap::krecord<kf_args>(klap_ks, 1u, dim3(1), dim3(32), 0u, (cudaStream_t)0, kf_args{id, v},
                           [&](dim3 g, dim3 b, unsigned sm, cudaStream_t st, const kf_args& a) -> cudaError_t {
                             const cudaError_t pre = cudaPeekAtLastError();
                             kf_consume<<<g, b, sm, st>>>(vals, sums, a.id, a.v, c);
                             return klap::launch_result(pre);
                           });
  }
  klap::kfinish(
      klap_ks, 0u,
      [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        kf_produce_kagg<<<g, b, sm, st>>>(s, vals, c);
        return klap::launch_result(pre);
      },
      [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        kf_consume_kagg<<<g, b, sm, st>>>(s, vals, sums, c);
        return klap::launch_result(pre);
      });
}

// Part C: one thread makes a state for a device-launched parent, as a kfinish launcher does.
__global__ void kf_spawn(unsigned long long* vals, unsigned long long* sums, unsigned l, kf_counters* c,
                         unsigned blocks, unsigned bs) {
  klap::kstate* ks = klap::kstate_new(2, klap::on_full::launch_as_written);
  if (ks->pooled == klap::kstate_unavailable_tag) atomicAdd(&c->unavailable, 1ull);
  const cudaError_t pre = cudaPeekAtLastError();
  kf_parent<<<blocks, bs>>>(vals, sums, l, c, ks);
  const cudaError_t e = klap::launch_result(pre);
  if (e != cudaSuccess) klap::kstate_discard(ks);
  klap::check_launch(e, "test_kernel_fallback: kf_spawn");
}

// Part E: a hand-built site with chunks 0, 2 and 4 held and 1 and 3 missing.
__global__ void kf_missing_blocks(unsigned long long* out) {
  static __shared__ klap::ksite s;  // (not read by any grid: only its fields are inspected)
  for (unsigned c = 0; c < klap::kchunk_count; ++c) {
    s.chunk[c] = nullptr;
    s.first_excl[c] = 0ull;
  }
  const unsigned long long records = klap::detail::kfirst(4) + 10ull;  // chunks 0..4 in use
  const unsigned long long first[5] = {0ull, 1000ull, 5000ull, 12000ull, 21000ull};
  for (unsigned c = 0; c < 5; ++c) {
    s.first_excl[c] = first[c];
    s.chunk[c] = (c % 2u == 1u) ? klap::detail::kchunk_missing() : reinterpret_cast<char*>(out);
  }
  s.packed = (records << klap::kindex_shift) | 30000ull;
  out[0] = klap::kdetail::kmissing_blocks(&s);
  klap::kstate* ks = klap::kstate_new(1, klap::on_full::fail, &s);
  out[1] = ks->done_blocks;
  klap::kstate* plain = klap::kstate_new(1, klap::on_full::fail);
  out[2] = plain->done_blocks;
  klap::kstate_discard(ks);
  klap::kstate_discard(plain);
}

struct kf_part {
  unsigned long long* vals;
  unsigned long long* sums;
  kf_counters* c;
  unsigned ids;
  explicit kf_part(unsigned n) : ids(n) {
    KT_CUDA(cudaMalloc(&vals, 2ull * n * sizeof(unsigned long long)));  // one row per stream (part D)
    KT_CUDA(cudaMemset(vals, 0, 2ull * n * sizeof(unsigned long long)));
    KT_CUDA(cudaMalloc(&sums, n * sizeof(unsigned long long)));
    KT_CUDA(cudaMemset(sums, 0, n * sizeof(unsigned long long)));
    KT_CUDA(cudaMalloc(&c, sizeof(kf_counters)));
    KT_CUDA(cudaMemset(c, 0, sizeof(kf_counters)));
  }
  kf_counters counters() const {
    kf_counters h;
    KT_CUDA(cudaMemcpy(&h, c, sizeof(h), cudaMemcpyDeviceToHost));
    return h;
  }
  // Checks the sums against launches [first, first + count) and the order errors; returns the
  // number of child grids those launches make.
  unsigned long long check(const char* what, unsigned first, unsigned count) const {
    std::vector<unsigned long long> got(ids);
    KT_CUDA(cudaMemcpy(got.data(), sums, ids * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    unsigned bad = 0;
    unsigned long long grids = 0;
    for (unsigned id = 0; id < ids; ++id) {
      unsigned long long want = 0;
      for (unsigned l = first; l < first + count; ++l)
        if (kf_launches(id, l)) {
          want += kf_value(id, l);
          grids += 2;
        }
      if (got[id] != want && ++bad <= 5) std::printf("%s: sums[%u] = %llu, want %llu\n", what, id, got[id], want);
    }
    const kf_counters h = counters();
    KT_EXPECT(bad == 0u && h.errors == 0ull, "%s: %u wrong sums, %llu consumers ran before their producer", what, bad,
              h.errors);
    return grids;
  }
  ~kf_part() {
    cudaFree(vals);
    cudaFree(sums);
    cudaFree(c);
  }
};

int main() {
  kt_watchdog("test_kernel_fallback", 120);
  int* flag;
  int* d_flag;
  kt_mapped_flag(&flag, &d_flag);
  // load every kernel before the parts run them next to the holder (lazy loading, see test_pool)
  {
    kf_part w(256);
    kt_pool_holder<<<1, 1>>>(d_flag, false);
    kf_parent<<<1, 256, 0, klap::host_prepare()>>>(w.vals, w.sums, 0u, w.c, klap::host_kstate(2));
    klap::host_kstate_done();
    kf_spawn<<<1, 1, 0, klap::host_prepare()>>>(w.vals, w.sums, 1u, w.c, 1u, 256u);
    KT_CUDA(cudaDeviceSynchronize());
    w.check("warm-up", 0, 2);
    KT_EXPECT(klap::host_pool_fallbacks() == 0ull, "warm-up: fallbacks with an empty pool");
    kt_expect_idle("warm-up");
  }

  // A. the whole pool held: every launch goes out as written
  {
    const unsigned blocks = 8, bs = 256;
    kf_part p(blocks * bs);
    const unsigned long long before = klap::host_pool_fallbacks();
    const bool held = kt_with_pool_held(flag, d_flag, [&](cudaStream_t run) {
      (kf_parent<<<blocks, bs, 0, klap::host_prepare(run)>>>(p.vals, p.sums, 3u, p.c, klap::host_kstate(2)),
       klap::host_kstate_done());
    });
    KT_EXPECT(held, "A: the holder did not take the pool within 5 s");
    const unsigned long long grids = p.check("A", 3, 1);
    const kf_counters h = p.counters();
    KT_EXPECT(h.agg_grids == 0ull && h.direct_grids == grids, "A: %llu aggregated, %llu as written, want 0 and %llu",
              h.agg_grids, h.direct_grids, grids);
    KT_EXPECT(klap::host_pool_fallbacks() > before, "A: no fallback counted");
    kt_expect_idle("A");
  }

  // B. chunks that fit and chunks that do not: aggregated records, holes, launches after the mark
  {
    static_assert(2ull * 15360ull * (sizeof(klap::kcfg) + sizeof(kf_args)) > klap::pool_segments * klap::pool_segment_bytes, "part B needs two sites past the pool");
    const unsigned blocks = 64, bs = 256;
    kf_part p(blocks * bs);
    const unsigned long long before = klap::host_pool_fallbacks();
    (kf_parent<<<blocks, bs, 0, klap::host_prepare()>>>(p.vals, p.sums, 5u, p.c, klap::host_kstate(2)),
     klap::host_kstate_done());
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const unsigned long long grids = p.check("B", 5, 1);
    const kf_counters h = p.counters();
    KT_EXPECT(h.direct_grids > 0ull && h.direct_grids < grids && klap::host_pool_fallbacks() > before,
              "B: %llu of %llu child grids as written (want some, not all)", h.direct_grids, grids);
    std::printf("test_kernel_fallback: B: %llu aggregated grids, %llu of %llu children as written\n", h.agg_grids,
                h.direct_grids, grids);
    kt_expect_idle("B");
  }

  // C. kstate_new without room: the unavailable state
  {
    const unsigned blocks = 4, bs = 128;
    kf_part p(blocks * bs);
    const bool held = kt_with_pool_held(flag, d_flag, [&](cudaStream_t run) {
      kf_spawn<<<1, 1, 0, klap::host_prepare(run)>>>(p.vals, p.sums, 9u, p.c, blocks, bs);
    });
    KT_EXPECT(held, "C: the holder did not take the pool within 5 s");
    const unsigned long long grids = p.check("C", 9, 1);
    const kf_counters h = p.counters();
    KT_EXPECT(h.unavailable == 1ull && h.agg_grids == 0ull && h.direct_grids == grids,
              "C: unavailable %llu, %llu aggregated, %llu as written (want 1, 0, %llu)", h.unavailable, h.agg_grids,
              h.direct_grids, grids);
    kt_expect_idle("C");
  }

  // D. host launches without synchronizing into 2 streams on the small pool
  {
    const unsigned blocks = 64, bs = 256, ids = blocks * bs, launches = 60;
    kf_part p(ids);
    cudaStream_t st[2];
    for (auto& s : st) KT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (unsigned l = 0; l < launches; ++l)
      (kf_parent<<<blocks, bs, 0, klap::host_prepare(st[l % 2])>>>(p.vals + (l % 2) * ids, p.sums, 100u + l, p.c,
                                                                   klap::host_kstate(2)),
       klap::host_kstate_done());
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const unsigned long long grids = p.check("D", 100, launches);
    const kf_counters h = p.counters();
    std::printf("test_kernel_fallback: D: %llu aggregated grids, %llu of %llu children as written\n", h.agg_grids,
                h.direct_grids, grids);
    kt_expect_idle("D");
    for (auto& s : st) KT_CUDA(cudaStreamDestroy(s));
  }
  // E. the blocks of missing chunks count as finished in the state of the grid they belong to
  {
    unsigned long long* d = nullptr;
    KT_CUDA(cudaMalloc(&d, 3 * sizeof(unsigned long long)));
    kf_missing_blocks<<<1, 1>>>(d);
    KT_CUDA(cudaGetLastError());
    unsigned long long h[3];
    KT_CUDA(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    const unsigned long long want = (5000ull - 1000ull) + (21000ull - 12000ull);
    KT_EXPECT(h[0] == want && h[1] == want && h[2] == 0ull,
              "E: missing blocks %llu, state's finished blocks %llu, without a site %llu (want %llu, %llu, 0)", h[0],
              h[1], h[2], want, want);
    KT_CUDA(cudaFree(d));
    kt_expect_idle("E");
  }
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  KT_CUDA(cudaFreeHost(flag));
  return kt_finish("test_kernel_fallback");
}
