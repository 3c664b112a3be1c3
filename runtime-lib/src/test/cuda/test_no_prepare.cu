// Transformed kernels launched WITHOUT klap::host_prepare (issue 11: a kernel launched from a file
// klap never saw, or by code that forgot it): the pool is static device memory, so nothing needs
// setting up and such a launch has the whole pool. The pool is 1 MiB here (16 segments of 64 KiB).
// A warp-aggregated parent (64 x 128 threads; thread t launches child<<<1, 4>>> unless t % 3 == 1)
// is written as klap writes it: the child copies its record, calls klap::child_release, then runs.
//  1. 40 rounds without host_prepare (no host_prepare has run yet in this process), each round
//     synchronized: 256 slot arrays of 2 KiB per round, ~20 MiB in total, 20 times the pool, so
//     the pool must be reclaimed on the device;
//  2. 40 more rounds enqueued without synchronizing, again without host_prepare;
//  3. 20 rounds through host_prepare(0), then 20 without it again.
// Checks: every original child thread ran exactly once per round with its own record (it adds
// 1 + round to its own counter, and checks its record's check word and its slot), nothing is live
// in the pool after each phase, no klap error.
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr unsigned NB = 64, NT = 128, N = NB * NT, CT = 4, ROUNDS = 120;

struct child_args {
  unsigned parent;
  unsigned round;
  unsigned long long check;  // kt_mix64(parent, round)
};

__host__ __device__ inline unsigned long long check_of(unsigned parent, unsigned round) {
  return kt_mix64((static_cast<unsigned long long>(round) << 32) | parent);
}

// The aggregated variant of child(hits, parent, round, check) with hits and round uniform (u) and
// the rest per parent (v): as ChildVariants writes it.
__global__ void child_agg(const klap::launch_cfg* cfg, unsigned n, const child_args* args, unsigned* hits,
                          unsigned round, unsigned* errors) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const child_args a = args[p];
  klap::child_release(cfg, n);
  // the slot of a warp group is the lane of the parent thread
  if (a.check != check_of(a.parent, a.round) || a.round != round || a.parent % 32u != p || a.parent >= N ||
      v.threadIdx.x >= CT || v.blockDim.x != CT || v.gridDim.x != 1u)
    atomicAdd(errors, 1u);
  else
    atomicAdd(&hits[(a.round * N + a.parent) * CT + v.threadIdx.x], 1u + a.round);
}

__global__ void parent(unsigned* hits, unsigned round, unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  auto klap_g0 = klap::warp_group::of(klap_blk);
  auto klap_s0 = klap::agg_begin<child_args>(klap_g0);
  if (t % 3u != 1u) klap_s0.record(dim3(1), dim3(CT), 0u, cudaStream_t(0), child_args{t, round, check_of(t, round)});
  klap_s0.flush(klap_g0, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                             const child_args* a, const child_args& mine) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    child_agg<<<gd, bd, sm, st>>>(c, n, a, hits, mine.round, errors);
    return klap::launch_result(pre);
  });
}

static void expect_pool_idle(const char* phase) {
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u, "%s: %llu allocations still live in %u segments, error %u", phase, s.live,
            s.busy, s.error);
  kt_expect_no_pending(s, phase);
}

int main() {
  kt_watchdog("test_no_prepare", 60);
  unsigned *hits, *errors;
  const size_t nhits = size_t(ROUNDS) * N * CT;
  KT_CUDA(cudaMalloc(&hits, sizeof(unsigned) * nhits));
  KT_CUDA(cudaMalloc(&errors, sizeof(unsigned)));
  KT_CUDA(cudaMemset(hits, 0, sizeof(unsigned) * nhits));
  KT_CUDA(cudaMemset(errors, 0, sizeof(unsigned)));
  unsigned r = 0;
  // 1. no host_prepare has run in this process: synchronized rounds
  for (; r < 40; ++r) {
    parent<<<NB, NT>>>(hits, r, errors);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
  }
  expect_pool_idle("1 (synchronized, no host_prepare)");
  // 2. without synchronizing
  for (; r < 80; ++r) parent<<<NB, NT>>>(hits, r, errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  expect_pool_idle("2 (not synchronized, no host_prepare)");
  // 3. with host_prepare, then without it again
  for (; r < 100; ++r) parent<<<NB, NT, 0, klap::host_prepare(0)>>>(hits, r, errors);
  for (; r < ROUNDS; ++r) parent<<<NB, NT>>>(hits, r, errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  expect_pool_idle("3 (with and without host_prepare)");

  unsigned herr = 0;
  KT_CUDA(cudaMemcpy(&herr, errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_EXPECT(herr == 0u, "%u child threads saw a wrong record (check word, round or slot)", herr);
  std::vector<unsigned> h(nhits);
  KT_CUDA(cudaMemcpy(h.data(), hits, sizeof(unsigned) * h.size(), cudaMemcpyDeviceToHost));
  for (unsigned rr = 0; rr < ROUNDS; ++rr)
    for (unsigned t = 0; t < N; ++t)
      for (unsigned c = 0; c < CT; ++c) {
        const unsigned want = t % 3u != 1u ? 1u + rr : 0u;
        const unsigned got = h[(size_t(rr) * N + t) * CT + c];
        KT_EXPECT(got == want, "round %u parent %u child thread %u: %u, expected %u", rr, t, c, got, want);
      }
  const double slot_bytes = double(NB) * (NT / 32) * (32 * (sizeof(klap::launch_cfg) + sizeof(child_args)) + 16);
  std::printf("test_no_prepare: %u rounds, %.1f MiB of slot arrays through a pool of %.1f MiB\n", ROUNDS,
              ROUNDS * slot_bytes / 1048576.0, KLAP_POOL_SIZE_BYTES / 1048576.0);
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  return kt_finish("test_no_prepare");
}
