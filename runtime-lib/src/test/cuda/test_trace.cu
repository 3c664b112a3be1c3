// Test of the KLAP_TRACE hook (klap/config.cuh, klap::trace_point): defined before the first klap
// header, the runtime calls it at each step of a warp/block aggregated launch, which is what the
// hang diagnosis (benchmarks/results/2026-11-28-h200/diag/trace.cuh) relies on. One parent warp of
// 32 threads per case; the test counts the calls per point and checks them against the path each
// case must take:
//  1. aggregated: every lane launches 2 blocks of 32 threads: one launcher, one launch of 64
//     blocks; every child thread enters and leaves child_release, every block counts itself off,
//     one block is the last;
//  2. lone: only lane 5 launches: the scan finds one launch, which is made as written;
//  3. nothing: no lane reaches the launch;
//  4. direct: a group of one thread (warp_group::active() under `lane == 0`) runs in direct mode.
// Without KLAP_TRACE defined the hook expands to nothing (every other runtime test).
#include <cuda_runtime.h>
__device__ unsigned long long trace_hits[64];
#define KLAP_TRACE(point) atomicAdd(&trace_hits[static_cast<int>(point) & 63], 1ull)
#include "klap/klap.cuh"
#include "klap_test.cuh"

struct targs {
  unsigned* out;
  unsigned id;
};

__global__ void tchild(unsigned* out, unsigned id) { atomicAdd(&out[id], 1u); }

__global__ void tchild_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const targs* klap_args) {
  klap::vctx klap_v;
  unsigned klap_parent;
  if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;
  const targs a = klap_args[klap_parent];
  klap::child_release(klap_cfg, klap_n);
  atomicAdd(&a.out[a.id], 1u);
}

// mode 1: every lane launches 2 blocks; 2: lane 5 alone; 3: nobody; 4: lane 0 alone, as a group of one
__global__ void tparent(unsigned* out, int mode) {
  const unsigned lane = threadIdx.x % 32u;
  auto site = [&](auto g, unsigned blocks) {
    auto s = klap::agg_begin<targs>(g, klap::on_full::launch_as_written);
    if (blocks != 0u) s.record(dim3(blocks), dim3(32), 0u, cudaStream_t(0), targs{out, threadIdx.x});  // a launch under `if`
    s.flush(
        g,
        [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n, const targs* a,
            const targs&) -> cudaError_t {
          const cudaError_t pre = cudaPeekAtLastError();
          tchild_agg<<<gd, bd, sm, st>>>(c, n, a);
          return klap::launch_result(pre);
        },
        [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const targs& a) -> cudaError_t {
          const cudaError_t pre = cudaPeekAtLastError();
          tchild<<<gd, bd, sm, st>>>(a.out, a.id);
          return klap::launch_result(pre);
        });
  };
  if (mode == 4) {
    if (lane == 0u) site(klap::warp_group::active(), 1u);
    return;
  }
  const unsigned blocks = mode == 1 ? 2u : mode == 2 ? (lane == 5u ? 1u : 0u) : 0u;
  site(klap::warp_group::of(klap::block_group::hardware()), blocks);
}

static void expect_hits(const char* what, std::initializer_list<std::pair<int, unsigned long long>> want) {
  unsigned long long got[64];
  KT_CUDA(cudaMemcpyFromSymbol(got, trace_hits, sizeof got));
  bool seen[64] = {};
  for (const auto& w : want) {
    seen[w.first] = true;
    KT_EXPECT(got[w.first] == w.second, "%s: trace point %d passed %llu times, want %llu", what, w.first, got[w.first],
              w.second);
  }
  for (int p = 0; p < 64; ++p)
    KT_EXPECT(seen[p] || got[p] == 0ull, "%s: trace point %d passed %llu times, want 0", what, p, got[p]);
  const unsigned long long zero[64] = {};
  KT_CUDA(cudaMemcpyToSymbol(trace_hits, zero, sizeof zero));
}

int main() {
  kt_watchdog("test_trace", 60);
  unsigned* out;
  KT_CUDA(cudaMalloc(&out, 32 * sizeof(unsigned)));
  for (int mode = 1; mode <= 4; ++mode) {
    KT_CUDA(cudaMemset(out, 0, 32 * sizeof(unsigned)));
    tparent<<<1, 32, 0, klap::host_prepare()>>>(out, mode);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    unsigned h[32];
    KT_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < 32; ++i) {
      const unsigned want = mode == 1 ? 64u : (mode == 2 && i == 5u) || (mode == 4 && i == 0u) ? 32u : 0u;
      KT_EXPECT(h[i] == want, "mode %d: thread %u's children added %u, want %u", mode, i, h[i], want);
    }
    using namespace klap;
    switch (mode) {
      case 1:
        expect_hits("aggregated", {{trace_begin, 32}, {trace_begun, 32}, {trace_flush, 32}, {trace_scanned, 32},
                                   {trace_acquire, 1}, {trace_launch, 1}, {trace_launched, 1}, {trace_sync_any, 32},
                                   {trace_flushed, 32}, {trace_child_enter, 64 * 32}, {trace_child_release, 64},
                                   {trace_child_last, 1}, {trace_child_released, 64 * 32}});
        break;
      case 2:
        expect_hits("lone", {{trace_begin, 32}, {trace_begun, 32}, {trace_flush, 32}, {trace_scanned, 32},
                             {trace_lone, 32}, {trace_lone_done, 32}});
        break;
      case 3:
        expect_hits("nothing", {{trace_begin, 32}, {trace_begun, 32}, {trace_flush, 32}, {trace_scanned, 32},
                                {trace_nothing, 32}});
        break;
      default:
        expect_hits("direct", {{trace_begin, 1}, {trace_begun, 1}, {trace_flush, 1}, {trace_direct, 1},
                               {trace_direct_done, 1}});
    }
  }
  kt_expect_idle("after the four cases");
  KT_CUDA(cudaFree(out));
  return kt_finish("test_trace");
}
