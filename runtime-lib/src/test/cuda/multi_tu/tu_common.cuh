// Shared by tu_a.cu and tu_b.cu: the same aggregated parent/child pair compiled into two
// translation units (identical template instantiations of klap::agg_begin<launch_args, ...>), to
// check that -rdc linking works and each translation unit uses its own pool (klap::pool_dev has
// internal linkage, as has everything that touches it), and that slot arrays released by the child
// go back to the pool that made them (the pool named in the block header).
#include "klap/klap.cuh"

struct launch_args {
  unsigned* hits;
  unsigned id;
};

static __global__ void tu_child(const klap::launch_cfg* cfg, unsigned n, const launch_args* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  unsigned* const hits = args[p].hits;
  const unsigned id = args[p].id;
  klap::child_release(cfg, n);
  atomicAdd(&hits[id * 8u + v.blockIdx.x * v.blockDim.x + v.threadIdx.x], 1u);
}

// Every parent thread launches tu_child<<<2, 4>>>, aggregated per block.
static __global__ void tu_parent(unsigned* hits, char** pool_base) {
  const klap::block_group g = klap::block_group::hardware();
  auto site = klap::agg_begin<launch_args>(g);
  site.record(dim3(2), dim3(4), 0, 0, launch_args{hits, blockIdx.x * blockDim.x + threadIdx.x});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const launch_args* a, const launch_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    tu_child<<<gd, bd, sm, st>>>(c, n, a);
    return klap::launch_result(pre);
  });
  if (blockIdx.x == 0 && threadIdx.x == 0) *pool_base = klap::pool_dev.base;
}

// Runs tu_parent<<<2, 32>>> from this translation unit; returns the number of wrong hit counts
// (plus 1 if this unit's pool has live blocks afterwards or its error flag is set), stores this
// unit's pool base in *base. With prepare = false the launch does not call klap::host_prepare
// itself: it relies on an earlier host_prepare in ANOTHER translation unit, which prepares the
// pools of all units (a host launch in one file of a kernel of another).
static int tu_run(char** base, bool prepare = true) {
  unsigned* hits;
  char** d_base;
  if (cudaMalloc(&hits, 64 * 8 * sizeof(unsigned)) != cudaSuccess || cudaMalloc(&d_base, sizeof(char*)) != cudaSuccess)
    return 1000;
  cudaMemset(hits, 0, 64 * 8 * sizeof(unsigned));
  if (prepare) {
    tu_parent<<<2, 32, 0, klap::host_prepare(0)>>>(hits, d_base);
  } else {
    tu_parent<<<2, 32>>>(hits, d_base);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 1000;
  unsigned h[64 * 8];
  cudaMemcpy(h, hits, sizeof(h), cudaMemcpyDeviceToHost);
  cudaMemcpy(base, d_base, sizeof(char*), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (unsigned i = 0; i < 64 * 8; ++i) bad += h[i] != 1u;
  cudaFree(hits);
  cudaFree(d_base);
  return bad + (klap::host_pool_error() != 0) + (klap::host_pool_live() != 0);
}

// Cross-unit: a parent in tu_a.cu aggregates launches of xchild, defined in tu_b.cu. The slot
// arrays come from tu_a's pool and are released by tu_b's code (klap::child_release), which must
// give them back to tu_a's pool.
struct xargs {
  unsigned* hits;
  unsigned id;
};
__global__ void xchild(const klap::launch_cfg* cfg, unsigned n, const xargs* args);  // tu_b.cu
