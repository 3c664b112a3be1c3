// Compiled to PTX with -G (nothing inlined but __forceinline__) by
// RuntimeLibCompileTest.outOfLineRuntimeCodeHasInternalLinkage: klap's device code that takes the
// generated launchers (agg_site::flush, the kernel-granularity record, finish and as-written paths)
// must not be a weak function. ptxas compiles a weak function on its own, without the register
// limit of the kernel that calls it, and a parent that klap bounds to 64 registers
// (__launch_bounds__(1024)) then fails to build: "Entry function ... with max regcount of 64 calls
// function ...flush... with regcount of 68" (random program 68000025, 2026-11-29).
#include "klap/klap.cuh"

struct LinkArgs { int* p; int v; };

__global__ void child(int* p, int v) { p[threadIdx.x] = v; }

__global__ void child_agg(const klap::launch_cfg* cfg, unsigned n, const LinkArgs* args) {
  klap::vctx v; unsigned slot;
  if (!klap::child_enter(cfg, n, v, slot)) return;
  const LinkArgs a = args[slot];
  klap::child_release(cfg, n);
  a.p[v.threadIdx.x] = a.v;
}

__global__ void child_kagg(const klap::ksite* s) {
  klap::vctx v; const LinkArgs* a;
  if (!klap::kchild_enter(s, v, a)) return;
  const LinkArgs mine = *a;
  klap::kchild_release(s);
  mine.p[v.threadIdx.x] = mine.v;
}

__global__ __launch_bounds__(1024) void parent_warp(int* p) {
  auto g = klap::warp_group::of(klap::block_group::hardware());
  auto s = klap::agg_begin<LinkArgs>(g, klap::on_full::launch_as_written);
  if (threadIdx.x % 3 == 0) s.record(dim3(1), dim3(32), 0u, cudaStreamFireAndForget, LinkArgs{p, (int)threadIdx.x});
  s.flush(g,
          [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n, const LinkArgs* a,
              const LinkArgs&) -> cudaError_t {
            cudaError_t pre = cudaPeekAtLastError();
            child_agg<<<gd, bd, sm, st>>>(c, n, a);
            return klap::launch_result(pre);
          },
          [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const LinkArgs& a) -> cudaError_t {
            cudaError_t pre = cudaPeekAtLastError();
            child<<<gd, bd, sm, st>>>(a.p, a.v);
            return klap::launch_result(pre);
          });
}

__global__ __launch_bounds__(1024) void parent_grid(int* p, klap::kstate* ks) {
  auto direct = [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const LinkArgs& a) -> cudaError_t {
    cudaError_t pre = cudaPeekAtLastError();
    child<<<gd, bd, sm, st>>>(a.p, a.v);
    return klap::launch_result(pre);
  };
  if (threadIdx.x % 2 == 0) klap::krecord<LinkArgs>(ks, 0u, dim3(1), dim3(32), 0u, cudaStreamFireAndForget, LinkArgs{p, 1}, direct);
  klap::kfinish(ks, 0u, klap::klaunch_pair<LinkArgs>(
      [&](const klap::ksite* s, dim3 gd, dim3 bd, unsigned sm, cudaStream_t st) -> cudaError_t {
        cudaError_t pre = cudaPeekAtLastError();
        child_kagg<<<gd, bd, sm, st>>>(s);
        return klap::launch_result(pre);
      },
      direct));
}
