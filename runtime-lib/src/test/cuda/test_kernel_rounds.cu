// Test of klap::krecord_seq (klap/kernel.cuh): ordered launches in a loop at kernel granularity,
// where one round's launch of every thread has an empty block (dim3(0)): such a launch fails in
// the original program and launches nothing, and it must take no round. Before (review
// 2026-11-27) it took round 0 without recording, kfinish stopped at the empty round 0 and the
// thread's later rounds 1 and 2 never ran. A grid of 2 blocks x 64 threads; thread t launches
// child<<<1, width(r)>>> for r = 0, 1, 2 with width 0, 32, 32; every child thread adds 1 to its
// own slot (t, r, lane).
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr int kBlocks = 2, kThreads = 64, kParents = kBlocks * kThreads, kRounds = 3;

struct rec {
  unsigned parent, round;
  __device__ rec(unsigned p, unsigned r) : parent(p), round(r) {}
};

__global__ void child(const klap::ksite* site, unsigned* slots) {
  klap::vctx v;
  const rec* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const rec r = *a;
  klap::kchild_release(site);
  atomicAdd(&slots[(r.parent * kRounds + r.round) * 32 + v.threadIdx.x], 1u);
}

__global__ void parent(unsigned* slots, klap::kstate* ks) {
  [&]() {
    unsigned klap_seq = 0;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned r = 0; r < kRounds; ++r)
      klap::krecord_seq<rec>(ks, 0u, 1u, 0u, klap_seq, dim3(1), dim3(r == 0 ? 0 : 32), 0u, (cudaStream_t)0, rec(t, r));
  }();
  klap::kfinish(ks, 1u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    // as generated launchers do: round 0's empty launch left its configuration error pending
    // (klap::raise_config_error, as the original launch would), which is not this launch's result
    const cudaError_t pre = cudaPeekAtLastError();
    child<<<g, b, sm, st>>>(s, slots);
    return klap::launch_result(pre);
  });
}

int main() {
  unsigned* slots;
  const size_t n = size_t(kParents) * kRounds * 32;
  KT_CUDA(cudaMalloc(&slots, n * sizeof(unsigned)));
  KT_CUDA(cudaMemset(slots, 0, n * sizeof(unsigned)));
  (parent<<<kBlocks, kThreads, 0, klap::host_prepare()>>>(slots, klap::host_kstate(KLAP_KERNEL_MAX_ORDERED)),
   klap::host_kstate_done());
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned> h(n);
  KT_CUDA(cudaMemcpy(h.data(), slots, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (unsigned t = 0; t < unsigned(kParents); ++t)
    for (unsigned r = 0; r < unsigned(kRounds); ++r)
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned got = h[(size_t(t) * kRounds + r) * 32 + l], want = r == 0 ? 0u : 1u;
        KT_EXPECT(got == want, "parent %u round %u lane %u ran %u times, expected %u", t, r, l, got, want);
      }
  const kt_pool_snapshot ps = kt_pool();
  KT_EXPECT(ps.live == 0ull && ps.error == 0u, "%llu pool allocations still live, error %u", ps.live, ps.error);
  return kt_finish("test_kernel_rounds");
}
