// A launch with a configuration the device runtime rejects (here 1280 threads per block, or an
// empty grid) fails in the original program for the thread that makes it alone. Folded into an
// aggregated grid it made the aggregated launch invalid: check_launch trapped and every other
// thread's children were lost (review 2026-11-27). Now it is left out of the group's launch, and
// the group's other launches run. 64 parent threads; thread 63 asks for 1280 threads, thread 62
// for a grid of 0 blocks, the others for 1 block of 32: every other thread's 32 child threads add 1
// to their own slots, nothing traps, and the pool is empty afterwards.
// The program's own error checks see what the original's saw (H200, 2026-11-28: review
// reproducer C_launch_err, whose fallback after the refused launch never ran), at warp and block
// granularity for four ways of checking (modes below) and at kernel granularity: thread 63's (and
// 62's, if the device refuses an empty grid) first check reads the error its launch as written
// gives (reference_error: the original program), a second cudaGetLastError() reads cudaSuccess,
// a cudaPeekAtLastError() before it reads the error too; every other thread reads cudaSuccess.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr int kThreads = 64, kBad = 63, kEmpty = 62;

struct rec {
  unsigned parent;
  __device__ explicit rec(unsigned p) : parent(p) {}
};

__device__ unsigned width(unsigned t) { return t == kBad ? 1280u : 32u; }
__device__ unsigned blocks(unsigned t) { return t == kEmpty ? 0u : 1u; }

// the original child, for launches as written
__global__ void child(unsigned* slots, unsigned parent) { atomicAdd(&slots[parent * 32 + threadIdx.x % 32], 1u); }

__global__ void child_agg(const klap::launch_cfg* c, unsigned n, const rec* a, unsigned* slots) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(c, n, v, p)) return;
  const unsigned parent = a[p].parent;
  klap::child_release(c, n);
  atomicAdd(&slots[parent * 32 + v.threadIdx.x % 32], 1u);
}

__global__ void child_kagg(const klap::ksite* site, unsigned* slots) {
  klap::vctx v;
  const rec* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const unsigned parent = a->parent;
  klap::kchild_release(site);
  atomicAdd(&slots[parent * 32 + v.threadIdx.x % 32], 1u);
}

// The original: each thread launches its child as written and reads the error twice (first[t],
// second[t]): the reference for every mode.
__global__ void reference_error(unsigned* slots, int* first, int* second) {
  const unsigned t = threadIdx.x;
  child<<<blocks(t), width(t)>>>(slots, t);
  first[t] = static_cast<int>(cudaGetLastError());
  second[t] = static_cast<int>(cudaGetLastError());
}

// How a parent thread checks its launch. kBeforeFlush: cudaGetLastError() between the record and
// the group's flush (a region that klap defers); kAfterFlush: only after the flush; kTwice: before
// the flush and again after it (the second reads cudaSuccess); kPeek: cudaPeekAtLastError() before
// the flush, cudaGetLastError() after it (both read the error).
enum how : int { kBeforeFlush, kAfterFlush, kTwice, kPeek };

template <class G>
__device__ void group_launch(const G& g, unsigned t, unsigned* slots, int* first, int* second, int check) {
  auto s = klap::agg_begin<rec>(g, klap::on_full::launch_as_written);
  s.record(dim3(blocks(t)), dim3(width(t)), 0u, (cudaStream_t)0, rec(t));
  if (check == kBeforeFlush || check == kTwice) first[t] = static_cast<int>(cudaGetLastError());
  if (check == kPeek) first[t] = static_cast<int>(cudaPeekAtLastError());
  s.flush(g,
          [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n, const rec* a,
              const rec&) -> cudaError_t {
            cudaError_t pre = cudaPeekAtLastError();
            child_agg<<<gd, bd, sm, st>>>(c, n, a, slots);
            return klap::launch_result(pre);
          },
          [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const rec& a) -> cudaError_t {
            cudaError_t pre = cudaPeekAtLastError();
            child<<<gd, bd, sm, st>>>(slots, a.parent);
            return klap::launch_result(pre);
          });
  if (check == kAfterFlush) first[t] = static_cast<int>(cudaGetLastError());
  if (check == kTwice || check == kPeek) second[t] = static_cast<int>(cudaGetLastError());
}

__global__ void parent_group(unsigned* slots, int warp, int* first, int* second, int check) {
  const klap::block_group b = klap::block_group::hardware();
  if (warp) group_launch(klap::warp_group::of(b), threadIdx.x, slots, first, second, check);
  else group_launch(b, threadIdx.x, slots, first, second, check);
}

__global__ void parent_kernel(unsigned* slots, klap::kstate* ks, int* first, int* second) {
  [&]() {
    const unsigned t = threadIdx.x;
    klap::krecord<rec>(ks, 0u, dim3(blocks(t)), dim3(width(t)), 0u, (cudaStream_t)0, rec(t),
                       [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const rec& a) -> cudaError_t {
                         cudaError_t pre = cudaPeekAtLastError();
                         child<<<gd, bd, sm, st>>>(slots, a.parent);
                         return klap::launch_result(pre);
                       });
    first[t] = static_cast<int>(cudaGetLastError());
    second[t] = static_cast<int>(cudaGetLastError());
  }();
  klap::kfinish(ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    cudaError_t pre = cudaPeekAtLastError();
    child_kagg<<<g, b, sm, st>>>(s, slots);
    return klap::launch_result(pre);
  });
}

int main() {
  unsigned* slots;
  int *first, *second;
  const size_t n = size_t(kThreads) * 32;
  KT_CUDA(cudaMalloc(&slots, n * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&first, kThreads * sizeof(int)));
  KT_CUDA(cudaMalloc(&second, kThreads * sizeof(int)));
  std::vector<int> want1(kThreads), want2(kThreads), got1(kThreads), got2(kThreads);
  KT_CUDA(cudaMemset(slots, 0, n * sizeof(unsigned)));
  reference_error<<<1, kThreads>>>(slots, first, second);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(want1.data(), first, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(want2.data(), second, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
  KT_EXPECT(want1[kBad] != static_cast<int>(cudaSuccess), "the original launch of 1280 threads succeeded");
  for (int t = 0; t < kThreads; ++t)
    KT_EXPECT(want2[t] == static_cast<int>(cudaSuccess), "the original's second check of parent %d read %d", t, want2[t]);
  std::vector<unsigned> ran(n);
  KT_CUDA(cudaMemcpy(ran.data(), slots, n * sizeof(unsigned), cudaMemcpyDeviceToHost));  // what the original ran
  const char* checks[] = {"check before the flush", "check after the flush", "check before and after", "peek, then check"};
  for (int m = 0; m < 9; ++m) {
    const bool kernel = m == 8;
    const int check = m % 4;
    char name[96];
    std::snprintf(name, sizeof name, "%s, %s", kernel ? "kernel" : m < 4 ? "block" : "warp", kernel ? "check twice" : checks[check]);
    KT_CUDA(cudaMemset(slots, 0, n * sizeof(unsigned)));
    KT_CUDA(cudaMemset(first, 0xff, kThreads * sizeof(int)));
    KT_CUDA(cudaMemset(second, 0xff, kThreads * sizeof(int)));
    if (!kernel) {
      parent_group<<<1, kThreads, 0, klap::host_prepare()>>>(slots, m / 4, first, second, check);
    } else {
      (parent_kernel<<<1, kThreads, 0, klap::host_prepare()>>>(slots, klap::host_kstate(1), first, second),
       klap::host_kstate_done());
    }
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    KT_CUDA(cudaMemcpy(got1.data(), first, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(got2.data(), second, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
    const bool twice = kernel || check == kTwice, peek = !kernel && check == kPeek;
    for (int t = 0; t < kThreads; ++t) {
      KT_EXPECT(got1[t] == want1[t], "%s: parent %d's first check read error %d, the original's %d", name, t, got1[t],
                want1[t]);
      if (twice || peek) {
        const int want = peek ? want1[t] : want2[t];
        KT_EXPECT(got2[t] == want, "%s: parent %d's second check read error %d, expected %d", name, t, got2[t], want);
      }
    }
    std::vector<unsigned> h(n);
    KT_CUDA(cudaMemcpy(h.data(), slots, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < unsigned(kThreads); ++t)
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned want = t == unsigned(kBad) || t == unsigned(kEmpty) ? 0u : 1u;
        KT_EXPECT(h[t * 32 + l] == want && ran[t * 32 + l] == want, "%s: parent %u lane %u ran %u times (the original %u), expected %u",
                  name, t, l, h[t * 32 + l], ran[t * 32 + l], want);
      }
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull && ps.error == 0u, "%s: %llu pool allocations still live, error %u", name, ps.live,
              ps.error);
  }
  KT_CUDA(cudaFree(second));
  KT_CUDA(cudaFree(first));
  KT_CUDA(cudaFree(slots));
  return kt_finish("test_invalid_config");
}
