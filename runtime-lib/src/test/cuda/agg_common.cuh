// Parent/child kernels shared by several runtime test programs (test_churn, test_host_loop,
// test_streams): each written as klap's compiler writes aggregated code (copies of the per-parent
// arguments, then klap::child_release / kchild_release; launch lambdas that return
// klap::launch_result). Every original child is <<<1, 2>>>: each of its 2 threads adds 1 to
// hits[id], so a correct run leaves exactly 2 in every slot a parent thread launched for.
// Include after "klap/klap.cuh" and "klap_test.cuh".
#ifndef KLAP_AGG_COMMON_CUH
#define KLAP_AGG_COMMON_CUH

#include <vector>

struct hit_args {
  unsigned* hits;
  unsigned id;
};

// Warp/block-granularity aggregated child.
__global__ void hit_child_agg(const klap::launch_cfg* cfg, unsigned n, const hit_args* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  unsigned* const hits = args[p].hits;
  const unsigned id = args[p].id;
  klap::child_release(cfg, n);
  atomicAdd(&hits[id], 1u);
}

// One aggregated launch site over group g: the caller launches hit_child<<<1, 2, 0, st>>>(hits, id).
template <class G>
__device__ void hit_round(const G& g, unsigned* hits, unsigned id, cudaStream_t st) {
  auto site = klap::agg_begin<hit_args>(g);
  site.record(dim3(1), dim3(2), 0, st, hit_args{hits, id});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t s, const klap::launch_cfg* c, unsigned n,
                    const hit_args* a, const hit_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    hit_child_agg<<<gd, bd, sm, s>>>(c, n, a);
    return klap::launch_result(pre);
  });
}

// Block granularity: thread t of the grid launches for hits[base + t] (1-D grid and block).
__global__ void hit_parent_block(unsigned* hits, unsigned base) {
  const klap::block_group b = klap::block_group::hardware();
  hit_round(b, hits, base + blockIdx.x * blockDim.x + threadIdx.x, 0);
}

// Warp granularity, `rounds` launch rounds per thread into stream st: thread t launches for
// hits[base + r * threads + t] in round r.
__global__ void hit_parent_warp(unsigned* hits, unsigned base, unsigned rounds, cudaStream_t st) {
  const klap::block_group b = klap::block_group::hardware();
  const unsigned threads = gridDim.x * blockDim.x;
  for (unsigned r = 0; r < rounds; ++r)
    hit_round(klap::warp_group::of(b), hits, base + r * threads + blockIdx.x * blockDim.x + threadIdx.x, st);
}

// Kernel-granularity aggregated child.
__global__ void hit_kchild(const klap::ksite* site) {
  klap::vctx v;
  const hit_args* a;
  if (!klap::kchild_enter(site, v, a)) return;
  unsigned* const hits = a->hits;
  const unsigned id = a->id;
  klap::kchild_release(site);
  atomicAdd(&hits[id], 1u);
}

// Kernel granularity: thread t of the grid launches for hits[base + t].
__global__ void hit_kparent(unsigned* hits, unsigned base, klap::kstate* ks) {
  [&]() {
    klap::krecord<hit_args>(ks, 0u, dim3(1), dim3(2), 0u, (cudaStream_t)0,
                            hit_args{hits, base + blockIdx.x * blockDim.x + threadIdx.x});
  }();
  klap::kfinish(ks, 0u, [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    hit_kchild<<<g, b, sm, st>>>(s);
    return klap::launch_result(pre);
  });
}

// Host: copies `n` hit counters back and counts the ones that are not `want`.
static inline unsigned count_bad_hits(const unsigned* d_hits, size_t n, unsigned want = 2u, const char* what = "") {
  std::vector<unsigned> h(n);
  KT_CUDA(cudaMemcpy(h.data(), d_hits, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (h[i] != want && ++bad <= 5) std::printf("%s: hits[%zu] = %u, want %u\n", what, i, h[i], want);
  return bad;
}

#endif  // KLAP_AGG_COMMON_CUH
