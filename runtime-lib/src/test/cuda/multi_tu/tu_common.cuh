// Shared by tu_a.cu, tu_b.cu and tu_c.cu: the same aggregated parent/child pair compiled into
// three translation units (identical template instantiations of klap::agg_begin<launch_args, ...>),
// to check that -rdc linking works and that the units compiled with the same configuration (a and
// b) share ONE pool (klap::pool_dev_of / klap::pool_bytes_of are `inline` variable templates: one
// weak symbol for the whole program), while unit c, compiled with another pool size, has its own.
// The pool is small here (256 KiB in 16 segments of 16 KiB; c: 512 KiB), and each unit runs 500
// launches of its parent without synchronizing (~2 MiB of slot arrays), so the pool must be
// reclaimed on the device.
#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (256ull << 10)
#endif
#define KLAP_POOL_SEGMENT_BYTES (16ull << 10)
#include "klap/klap.cuh"
#include "klap/np.cuh"
#include <cstdio>
#include <vector>

constexpr unsigned TU_LAUNCHES = 500;

struct launch_args {
  unsigned* hits;
  unsigned id;
};

// The aggregated child, as klap writes it: copy the record, release it, run. It also checks that
// its slot arrays lie in the pool of THIS unit's configuration.
static __global__ void tu_child(const klap::launch_cfg* cfg, unsigned n, const launch_args* args, unsigned* outside) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  unsigned* const hits = args[p].hits;
  const unsigned id = args[p].id;
  klap::child_release(cfg, n);
  const char* c = reinterpret_cast<const char*>(cfg);  // compared, not read
  if (c < klap::pool_bytes() || c >= klap::pool_bytes() + klap::pool_segments * klap::pool_segment_bytes) atomicAdd(outside, 1u);
  atomicAdd(&hits[id * 8u + v.blockIdx.x * v.blockDim.x + v.threadIdx.x], 1u);
}

// Every parent thread launches tu_child<<<2, 4>>>, aggregated per block.
static __global__ void tu_parent(unsigned* hits, unsigned* outside) {
  const klap::block_group g = klap::block_group::hardware();
  auto site = klap::agg_begin<launch_args>(g);
  site.record(dim3(2), dim3(4), 0, 0, launch_args{hits, blockIdx.x * blockDim.x + threadIdx.x});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const launch_args* a, const launch_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    tu_child<<<gd, bd, sm, st>>>(c, n, a, outside);
    return klap::launch_result(pre);
  });
}

// The CUDA-NP helpers (klap/np.cuh) in every unit: the same IntraWarp/InterWarp instantiations,
// and one select/chosen registry for the whole program (unit a selects, units b and c must see it).
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

// The pool of this unit's configuration: the address of its buffer, and its segment words (the
// device is idle).
static bool tu_pool(char** base, std::vector<unsigned long long>& words) {
  std::vector<unsigned char> raw(sizeof(klap::pool_state));
  if (cudaGetSymbolAddress(reinterpret_cast<void**>(base), klap::pool_bytes_symbol()) != cudaSuccess ||
      cudaMemcpyFromSymbol(raw.data(), klap::pool_dev_symbol(), raw.size()) != cudaSuccess)
    return false;
  const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
  words.assign(st->seg, st->seg + klap::pool_segments);
  return true;
}

// Runs TU_LAUNCHES launches of tu_parent<<<2, 32>>> from this translation unit without
// synchronizing in between (through klap::host_prepare if `prepare`: no unit needs it), then one
// synchronization. Returns the number of problems: wrong hit counts, children whose slots were not
// in the pool of this unit's configuration, allocations still live afterwards, the klap error
// flag, CUDA-NP mismatches.
static int tu_run(bool prepare, bool select_np) {
  unsigned *hits, *outside;
  if (cudaMalloc(&hits, 64 * 8 * sizeof(unsigned)) != cudaSuccess || cudaMalloc(&outside, sizeof(unsigned)) != cudaSuccess)
    return 1000;
  cudaMemset(hits, 0, 64 * 8 * sizeof(unsigned));
  cudaMemset(outside, 0, sizeof(unsigned));
  for (unsigned l = 0; l < TU_LAUNCHES; ++l) {
    if (prepare) {
      tu_parent<<<2, 32, 0, klap::host_prepare(0)>>>(hits, outside);
    } else {
      tu_parent<<<2, 32>>>(hits, outside);
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 1000;
  unsigned h[64 * 8], out = 0;
  cudaMemcpy(h, hits, sizeof(h), cudaMemcpyDeviceToHost);
  cudaMemcpy(&out, outside, sizeof(out), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (unsigned i = 0; i < 64 * 8; ++i) bad += h[i] != TU_LAUNCHES;
  if (bad) std::printf("multi_tu: %d hit counters != %u\n", bad, TU_LAUNCHES);
  if (out) std::printf("multi_tu: %u child threads found their slots outside their pool\n", out);
  bad += out != 0u;
  char* base = nullptr;
  std::vector<unsigned long long> words;
  if (!tu_pool(&base, words)) return bad + 1000;
  unsigned long long live = 0;
  for (unsigned long long w : words) live += w >> klap::pool_live_shift;
  if (live) std::printf("multi_tu: %llu allocations still live\n", live);
  bad += live != 0ull;
  bad += klap::host_pool_error() != 0u;
  cudaFree(hits);
  cudaFree(outside);
  return bad + tu_np(select_np);
}
