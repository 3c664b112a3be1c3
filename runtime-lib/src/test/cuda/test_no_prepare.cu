// Transformed kernels launched WITHOUT klap::host_prepare (from code klap never saw): the pool sets
// itself up on the device from the device heap (KLAP_DEVICE_POOL_BYTES, 256 KiB here) and works:
//  1. 200 launches of a block-granularity parent (~6 MiB of slot arrays in total through the
//     256 KiB region: blocks are reused); the pool reports a device-made region;
//  2. slot arrays larger than the region (1024 threads x 512-byte arguments, ~560 KiB): each is a
//     device malloc of its own, freed with free();
//  3. kernel granularity from the device: a plain kernel launches a kernel-granularity parent with
//     a state from klap::kstate_new (given back with kstate_discard if the launch fails), 50 times.
// Checks: every original child ran exactly once, no pool block live, no klap error.
#define KLAP_DEVICE_POOL_BYTES (256ull << 10)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"

struct big_args {
  unsigned* hits;
  unsigned id;
  unsigned pad[126];
};

__global__ void big_child_agg(const klap::launch_cfg* cfg, unsigned n, const big_args* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  unsigned* const hits = args[p].hits;
  const unsigned id = args[p].id + args[p].pad[125];
  klap::child_release(cfg, n);
  atomicAdd(&hits[id], 1u);
}

__global__ void big_parent(unsigned* hits) {
  const klap::block_group b = klap::block_group::hardware();
  auto site = klap::agg_begin<big_args>(b);
  big_args a{};
  a.hits = hits;
  a.id = blockIdx.x * blockDim.x + threadIdx.x;
  site.record(dim3(1), dim3(2), 0, 0, a);
  site.flush(b, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const big_args* aa, const big_args&) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    big_child_agg<<<gd, bd, sm, st>>>(c, n, aa);
    return klap::launch_result(pre);
  });
}

__global__ void starter(unsigned* hits, unsigned base, unsigned* launch_errors) {
  const cudaError_t pre = cudaPeekAtLastError();
  klap::kstate* ks = klap::kstate_new(1);
  hit_kparent<<<4, 64>>>(hits, base, ks);
  const cudaError_t e = klap::launch_result(pre);
  if (e != cudaSuccess) {
    klap::kstate_discard(ks);
    atomicAdd(launch_errors, 1u);
  }
}

int main() {
  kt_watchdog("test_no_prepare", 55);
  constexpr unsigned per = 4 * 64, launches = 200, kl = 50;
  unsigned *h1, *h2, *h3, *errs;
  KT_CUDA(cudaMalloc(&h1, sizeof(unsigned) * launches * per));
  KT_CUDA(cudaMalloc(&h2, sizeof(unsigned) * 2 * 1024));
  KT_CUDA(cudaMalloc(&h3, sizeof(unsigned) * kl * per));
  KT_CUDA(cudaMalloc(&errs, sizeof(unsigned)));
  KT_CUDA(cudaMemset(h1, 0, sizeof(unsigned) * launches * per));
  KT_CUDA(cudaMemset(h2, 0, sizeof(unsigned) * 2 * 1024));
  KT_CUDA(cudaMemset(h3, 0, sizeof(unsigned) * kl * per));
  KT_CUDA(cudaMemset(errs, 0, sizeof(unsigned)));

  for (unsigned l = 0; l < launches; ++l) {
    hit_parent_block<<<4, 64>>>(h1, l * per);
    if (l % 8 == 7) KT_CUDA(cudaDeviceSynchronize());
  }
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  KT_EXPECT(st.setup == klap::pool_region && st.region == klap::pool_region_device && st.host_base == nullptr &&
                st.capacity == KLAP_DEVICE_POOL_BYTES,
            "pool set up on the device: setup %u region %u host_base %p capacity %llu", st.setup, st.region,
            (void*)st.host_base, st.capacity);
  KT_EXPECT(count_bad_hits(h1, size_t(launches) * per, 2u, "1") == 0, "1: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "1: %llu pool blocks live", klap::host_pool_live());

  big_parent<<<2, 1024>>>(h2);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(count_bad_hits(h2, 2 * 1024, 2u, "2") == 0, "2: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "2: %llu pool blocks live", klap::host_pool_live());

  for (unsigned l = 0; l < kl; ++l) starter<<<1, 1>>>(h3, l * per, errs);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  unsigned he = 0;
  KT_CUDA(cudaMemcpy(&he, errs, sizeof(he), cudaMemcpyDeviceToHost));
  KT_EXPECT(he == 0, "3: %u device launches of the kernel-granularity parent failed", he);
  KT_EXPECT(count_bad_hits(h3, size_t(kl) * per, 2u, "3") == 0, "3: children missing or repeated");
  KT_EXPECT(klap::host_pool_live() == 0, "3: %llu pool blocks live", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "klap error flag set");
  return kt_finish("test_no_prepare");
}
