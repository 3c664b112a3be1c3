// A launch with a configuration the device runtime rejects (here 1280 threads per block) fails in
// the original program for the thread that makes it alone. Folded into an aggregated grid it made
// the aggregated launch invalid: check_launch trapped and every other thread's children were lost
// (review 2026-11-27). Now such a launch is launched as written by its own thread (flush at warp
// and block granularity, krecord at kernel granularity) and the group's other launches run.
// 64 parent threads; thread 63 asks for 1280 threads, the others for 32: every other thread's 32
// child threads add 1 to their own slots, nothing traps, and the pool is empty afterwards.
// The program's own error check sees what the original's saw (H200, 2026-11-28: review reproducer
// C_launch_err, whose fallback after the refused launch never ran): each parent thread reads
// cudaGetLastError() once, either right after the record (before the flush: a deferred region) or
// only after the flush; thread 63 must read the error that its launch as written gives
// (reference_error: the original program), the others cudaSuccess.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr int kThreads = 64, kBad = 63;

struct rec {
  unsigned parent;
  __device__ explicit rec(unsigned p) : parent(p) {}
};

__device__ unsigned width(unsigned t) { return t == kBad ? 1280u : 32u; }

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

// The original: thread t launches its child as written and reads the error (reference for errs).
__global__ void reference_error(unsigned* slots, int* errs) {
  const unsigned t = threadIdx.x;
  if (t == unsigned(kBad)) child<<<1, width(t)>>>(slots, t);
  errs[t] = static_cast<int>(cudaGetLastError());
}

template <class G>
__device__ void group_launch(const G& g, unsigned t, unsigned* slots, int* errs, bool before_flush) {
  auto s = klap::agg_begin<rec>(g, klap::on_full::launch_as_written);
  s.record(dim3(1), dim3(width(t)), 0u, (cudaStream_t)0, rec(t));
  if (before_flush) errs[t] = static_cast<int>(cudaGetLastError());
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
  if (!before_flush) errs[t] = static_cast<int>(cudaGetLastError());
}

__global__ void parent_group(unsigned* slots, int warp, int* errs, int before_flush) {
  const klap::block_group b = klap::block_group::hardware();
  if (warp) group_launch(klap::warp_group::of(b), threadIdx.x, slots, errs, before_flush != 0);
  else group_launch(b, threadIdx.x, slots, errs, before_flush != 0);
}

__global__ void parent_kernel(unsigned* slots, klap::kstate* ks, int* errs) {
  [&]() {
    const unsigned t = threadIdx.x;
    klap::krecord<rec>(ks, 0u, dim3(1), dim3(width(t)), 0u, (cudaStream_t)0, rec(t),
                       [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const rec& a) -> cudaError_t {
                         cudaError_t pre = cudaPeekAtLastError();
                         child<<<gd, bd, sm, st>>>(slots, a.parent);
                         return klap::launch_result(pre);
                       });
    errs[t] = static_cast<int>(cudaGetLastError());
  }();
  klap::kfinish(ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    cudaError_t pre = cudaPeekAtLastError();
    child_kagg<<<g, b, sm, st>>>(s, slots);
    return klap::launch_result(pre);
  });
}

int main() {
  unsigned* slots;
  int* errs;
  const size_t n = size_t(kThreads) * 32;
  KT_CUDA(cudaMalloc(&slots, n * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&errs, kThreads * sizeof(int)));
  std::vector<int> want_err(kThreads), got_err(kThreads);
  reference_error<<<1, kThreads>>>(slots, errs);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(want_err.data(), errs, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
  KT_EXPECT(want_err[kBad] != static_cast<int>(cudaSuccess), "the original launch of 1280 threads succeeded");
  const char* names[] = {"block, check before the flush", "warp, check before the flush", "block, check after the flush",
                         "warp, check after the flush", "kernel"};
  for (int m = 0; m < 5; ++m) {
    KT_CUDA(cudaMemset(slots, 0, n * sizeof(unsigned)));
    KT_CUDA(cudaMemset(errs, 0xff, kThreads * sizeof(int)));
    if (m < 4) {
      parent_group<<<1, kThreads, 0, klap::host_prepare()>>>(slots, m % 2, errs, m < 2);
    } else {
      (parent_kernel<<<1, kThreads, 0, klap::host_prepare()>>>(slots, klap::host_kstate(1), errs), klap::host_kstate_done());
    }
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    KT_CUDA(cudaMemcpy(got_err.data(), errs, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
    for (int t = 0; t < kThreads; ++t)
      KT_EXPECT(got_err[t] == want_err[t], "%s: parent %d's own check read error %d, the original's %d", names[m], t,
                got_err[t], want_err[t]);
    std::vector<unsigned> h(n);
    KT_CUDA(cudaMemcpy(h.data(), slots, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < unsigned(kThreads); ++t)
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned want = t == unsigned(kBad) ? 0u : 1u;
        KT_EXPECT(h[t * 32 + l] == want, "%s: parent %u lane %u ran %u times, expected %u", names[m], t, l,
                  h[t * 32 + l], want);
      }
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull && ps.error == 0u, "%s: %llu pool allocations still live, error %u", names[m], ps.live,
              ps.error);
  }
  KT_CUDA(cudaFree(errs));
  KT_CUDA(cudaFree(slots));
  return kt_finish("test_invalid_config");
}
