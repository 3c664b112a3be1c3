// Shared by tu_a.cu and tu_b.cu: the same aggregated parent/child pair compiled into two
// translation units (identical template instantiations of klap::agg_begin<launch_args, ...>), to
// check that -rdc linking works and each translation unit uses its own pool (klap::pool_dev has
// internal linkage, as has everything that touches it).
#include "klap/klap.cuh"
#include "klap/np.cuh"

struct launch_args {
  unsigned* hits;
  unsigned id;
};

static __global__ void tu_child(const klap::launch_cfg* cfg, unsigned n, const launch_args* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  atomicAdd(&args[p].hits[args[p].id * 8u + v.blockIdx.x * v.blockDim.x + v.threadIdx.x], 1u);
}

// Every parent thread launches tu_child<<<2, 4>>>, aggregated per block.
static __global__ void tu_parent(unsigned* hits, char** pool_base) {
  const klap::block_group g = klap::block_group::hardware();
  auto site = klap::agg_begin<launch_args>(g);
  site.record(dim3(2), dim3(4), 0, 0, launch_args{hits, blockIdx.x * blockDim.x + threadIdx.x});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const launch_args* a, const launch_args&) {
    tu_child<<<gd, bd, sm, st>>>(c, n, a);
    return cudaGetLastError();
  });
  if (blockIdx.x == 0 && threadIdx.x == 0) *pool_base = klap::pool_dev.base;
}

// The CUDA-NP helpers (klap/np.cuh) in both units: the same IntraWarp/InterWarp instantiations,
// and one select/chosen registry for the whole program (unit a selects, unit b must see it).
static __global__ void tu_np_kernel(int* out) {
  extern __shared__ __align__(16) unsigned char tu_np_scratch[];
  const klap::np::IntraWarp<4> g;                          // groups of 4 lanes
  const klap::np::InterWarp<2> h(16u, tu_np_scratch);      // 16 masters, slaves 16 apart
  const int x = static_cast<int>(threadIdx.x);
  out[threadIdx.x] = g.reduce<klap::np::Plus>(x) * 1000 + h.reduce<klap::np::Plus>(x);
}

static int tu_np(bool select_here) {
  if (select_here) klap::np::select("tu_np_kernel", klap::np::Variant::inter_warp);
  int bad = klap::np::chosen("tu_np_kernel", klap::np::Variant::original) != klap::np::Variant::inter_warp;
  const size_t bytes = klap::np::InterWarp<2>::scratch_bytes(16u);
  int* d = nullptr;
  int h[32];
  if (!klap::np::prepare(tu_np_kernel, bytes, 48 * 1024) || cudaMalloc(&d, sizeof(h)) != cudaSuccess) return bad + 1000;
  tu_np_kernel<<<1, 32, bytes>>>(d);
  if (cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost) != cudaSuccess)
    bad += 1000;
  cudaFree(d);
  for (int t = 0; t < 32; ++t) bad += h[t] != (4 * (t & ~3) + 6) * 1000 + 2 * (t % 16) + 16;
  return bad;
}

// Runs tu_parent<<<2, 32>>> from this translation unit; returns the number of wrong hit counts,
// stores this unit's pool base in *base. With prepare = false the launch does not call
// klap::host_prepare itself: it relies on an earlier host_prepare in ANOTHER translation unit,
// which prepares the pools of all units (a host launch in one file of a kernel of another).
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
  return bad + (klap::host_pool_error() != 0) + tu_np(prepare);
}
