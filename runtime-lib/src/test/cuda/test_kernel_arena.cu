// Tests of the record arena of klap/kernel.cuh (issue 11, "scale"): a host launch of a
// kernel-granularity parent whose records would need more than KLAP_KERNEL_ARENA_MIN_BYTES gets
// its own arena, and each site it counted takes a base chunk of one record per thread from it;
// the records past the base chunk go to the pool's doubling chunks.
//   mixed   40 blocks x 128 threads (5120). Plain site 0: thread t launches once, and a second
//           time if t % 3 == 0 (6827 records: the base chunk, then doubling chunks 0 and 1).
//           Plain site 1 (fire-and-forget): even threads only (half the base chunk). Per-round
//           site (krecord_seq, buckets 2 + j): thread t makes 1 + t % 3 ordered launches; round 0
//           has a base chunk, rounds 1 and 2 have none (the host counted only round 0).
//           Every child thread checks its record and adds to its own slot; block 0 of each
//           aggregated grid reports whether its site had a base chunk.
//   small   1 block x 32 threads: below the threshold, no arena (no site has a base chunk).
//   huge    16384 blocks x 1024 threads = 2^24 threads, one launch each: 2^24 records at one site,
//           more than the 24-bit record index of before allowed, and 872 MB of records, more than
//           klap's whole pool (128 MiB).
// Each case runs twice (the arena pool's memory is reused); afterwards no pool allocation is live.
#define KLAP_KERNEL_ARENA_MIN_BYTES 8192ull  // so that `mixed` gets an arena and `small` does not
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

struct rec {
  unsigned parent, nth, check;
  __device__ rec(unsigned p, unsigned n) : parent(p), nth(n), check(p * 2654435761u + n) {}
};

// One launch site's child: every thread checks its record and counts itself in its own slot
// slots[(parent * 3 + nth) * 32 + lane]; block 0 thread 0 counts the grid and sets bit `id` of
// *based if the site had a base chunk.
__global__ void child(const klap::ksite* site, unsigned id, unsigned* slots, unsigned* grids, unsigned* based) {
  klap::vctx v;
  const rec* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const rec r = *a;
  const bool base = klap::detail::kbase_cap(site) != 0ull;
  klap::kchild_release(site);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    atomicAdd(grids, 1u);
    if (base) atomicOr(based, 1u << id);
  }
  const bool ok = r.check == r.parent * 2654435761u + r.nth && v.blockDim.x == 32 && v.gridDim.x == 1;
  atomicAdd(&slots[(size_t(r.parent) * 3 + r.nth) * 32 + v.threadIdx.x], ok ? 1u : 1000u);
}

constexpr unsigned kPlain = 2, kSeq = 1;

__global__ void mixed(unsigned* s0, unsigned* s1, unsigned* s2, unsigned* grids, unsigned* based, klap::kstate* ks) {
  [&]() {
    unsigned klap_seq = 0;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    klap::krecord<rec>(ks, 0u, dim3(1), dim3(32), 0u, (cudaStream_t)0, rec(t, 0));
    if (t % 3 == 0) klap::krecord<rec>(ks, 0u, dim3(1), dim3(32), 0u, (cudaStream_t)0, rec(t, 1));
    if (t % 2 == 0) klap::krecord<rec>(ks, 1u, dim3(1), dim3(32), 0u, cudaStreamFireAndForget, rec(t, 0));
    for (unsigned r = 0; r <= t % 3; ++r)
      klap::krecord_seq<rec>(ks, kPlain, kSeq, 0u, klap_seq, dim3(1), dim3(32), 0u, (cudaStream_t)0, rec(t, r));
  }();
  unsigned id = 0;  // the aggregated grids of one parent grid are launched by one thread, in order
  auto launcher = [&](unsigned* slots) {
    return [=, &id](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
      child<<<g, b, sm, st>>>(s, id++, slots, grids, based);
      return cudaGetLastError();
    };
  };
  klap::kfinish(ks, kSeq, launcher(s0), launcher(s1), launcher(s2));
}

// What the arena of `mixed` holds: base chunks for sites 0 and 1 and round 0 of the per-round site.
static inline unsigned long long mixed_karena(unsigned long long threads) {
  return klap::karena_bytes<rec, rec, rec>(threads);
}

struct one {
  unsigned parent;
  __device__ explicit one(unsigned p) : parent(p) {}
};

__global__ void leaf(const klap::ksite* site, unsigned* out, unsigned* grids, unsigned* based) {
  klap::vctx v;
  const one* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const unsigned p = a->parent;
  const bool base = klap::detail::kbase_cap(site) != 0ull;
  klap::kchild_release(site);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    atomicAdd(grids, 1u);
    if (base) atomicOr(based, 1u);
  }
  atomicAdd(&out[p], p + 1u);
}

__global__ void huge(unsigned* out, unsigned* grids, unsigned* based, klap::kstate* ks) {
  [&]() {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    klap::krecord<one>(ks, 0u, dim3(1), dim3(1), 0u, (cudaStream_t)0, one(t));
  }();
  klap::kfinish(ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    leaf<<<g, b, sm, st>>>(s, out, grids, based);
    return cudaGetLastError();
  });
}

static inline unsigned long long huge_karena(unsigned long long threads) { return klap::karena_bytes<one>(threads); }

// Runs `mixed` with blocks x threads and checks every child thread ran once with its own record.
static void run_mixed(const char* name, unsigned blocks, unsigned threads, unsigned want_based) {
  const unsigned n = blocks * threads;
  const size_t nslots = size_t(n) * 3 * 32;
  unsigned *s0, *s1, *s2, *dev_counts;
  KT_CUDA(cudaMalloc(&s0, nslots * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&s1, nslots * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&s2, nslots * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&dev_counts, 2 * sizeof(unsigned)));
  for (int round = 0; round < 2; ++round) {
    KT_CUDA(cudaMemset(s0, 0, nslots * sizeof(unsigned)));
    KT_CUDA(cudaMemset(s1, 0, nslots * sizeof(unsigned)));
    KT_CUDA(cudaMemset(s2, 0, nslots * sizeof(unsigned)));
    KT_CUDA(cudaMemset(dev_counts, 0, 2 * sizeof(unsigned)));
    // as HostLaunches writes a host launch of a kernel-granularity parent with a record arena
    (mixed<<<blocks, threads, 0, klap::host_prepare(0, klap::host_warps(blocks, threads))>>>(
         s0, s1, s2, dev_counts, dev_counts + 1, klap::host_kstate(kPlain + KLAP_KERNEL_MAX_ORDERED * kSeq, mixed_karena)),
     klap::host_kstate_done());
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    std::vector<unsigned> h0(nslots), h1(nslots), h2(nslots);
    unsigned counts[2];
    KT_CUDA(cudaMemcpy(h0.data(), s0, nslots * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(h1.data(), s1, nslots * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(h2.data(), s2, nslots * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(counts, dev_counts, sizeof counts, cudaMemcpyDeviceToHost));
    const unsigned rounds = n >= 3 ? 3u : n;  // thread t makes 1 + t % 3 ordered launches
    KT_EXPECT(counts[0] == 2u + rounds, "%s run %d: %u aggregated grids ran, expected %u", name, round, counts[0],
              2u + rounds);
    KT_EXPECT(counts[1] == want_based, "%s run %d: the grids with a base chunk are %#x, expected %#x", name, round,
              counts[1], want_based);
    int reported = 0;
    for (unsigned t = 0; t < n; ++t)
      for (unsigned k = 0; k < 3; ++k)
        for (unsigned l = 0; l < 32; ++l) {
          const size_t i = (size_t(t) * 3 + k) * 32 + l;
          const unsigned w0 = k == 0 || (k == 1 && t % 3 == 0), w1 = k == 0 && t % 2 == 0, w2 = k <= t % 3;
          if ((h0[i] != w0 || h1[i] != w1 || h2[i] != w2) && reported++ < 8)
            KT_EXPECT(false, "%s run %d: parent %u launch %u lane %u ran %u/%u/%u times at sites 0/1/rounds, expected %u/%u/%u",
                      name, round, t, k, l, h0[i], h1[i], h2[i], w0, w1, w2);
        }
    KT_EXPECT(reported == 0, "%s run %d: %d child threads wrong", name, round, reported);
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull && ps.error == 0u, "%s run %d: %llu pool allocations still live, error %u", name, round,
              ps.live, ps.error);
    kt_expect_no_pending(ps, name);
  }
  KT_CUDA(cudaFree(s0));
  KT_CUDA(cudaFree(s1));
  KT_CUDA(cudaFree(s2));
  KT_CUDA(cudaFree(dev_counts));
}

int main() {
  kt_watchdog("test_kernel_arena", 240);
  // sites 0 and 1 and round 0 (grid id 2) have base chunks; rounds 1 and 2 (ids 3, 4) do not
  run_mixed("mixed", 40, 128, 0x7u);
  run_mixed("small", 1, 32, 0u);

  constexpr unsigned kBlocks = 16384, kThreads = 1024;
  const size_t n = size_t(kBlocks) * kThreads;
  unsigned *out, *dev_counts;
  KT_CUDA(cudaMalloc(&out, n * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&dev_counts, 2 * sizeof(unsigned)));
  std::vector<unsigned> h(n);
  for (int round = 0; round < 2; ++round) {
    KT_CUDA(cudaMemset(out, 0, n * sizeof(unsigned)));
    KT_CUDA(cudaMemset(dev_counts, 0, 2 * sizeof(unsigned)));
    (huge<<<kBlocks, kThreads, 0, klap::host_prepare(0, klap::host_warps(kBlocks, kThreads))>>>(
         out, dev_counts, dev_counts + 1, klap::host_kstate(1, huge_karena)),
     klap::host_kstate_done());
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    unsigned counts[2];
    KT_CUDA(cudaMemcpy(h.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(counts, dev_counts, sizeof counts, cudaMemcpyDeviceToHost));
    KT_EXPECT(counts[0] == 1u && counts[1] == 1u, "huge run %d: %u aggregated grids ran (expected 1), base chunk %u",
              round, counts[0], counts[1]);
    size_t wrong = 0;
    for (size_t t = 0; t < n; ++t)
      if (h[t] != unsigned(t) + 1u && wrong++ < 4)
        KT_EXPECT(false, "huge run %d: parent %zu wrote %u, expected %u", round, t, h[t], unsigned(t) + 1u);
    KT_EXPECT(wrong == 0, "huge run %d: %zu of %zu parents wrong", round, wrong, n);
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull && ps.error == 0u, "huge run %d: %llu pool allocations still live, error %u", round,
              ps.live, ps.error);
  }
  KT_CUDA(cudaFree(out));
  KT_CUDA(cudaFree(dev_counts));
  return kt_finish("test_kernel_arena");
}
