// Multi-translation-unit test (with tu_b.cu): both units include klap.cuh and aggregate launches;
// linked with -rdc=true, each must use its own memory pool, a host_prepare in one unit must set
// up the pools of all units, and memory released by a child defined in the other unit must go
// back to the pool it came from (both pools end with no live block). Prints PASS or FAIL.
#include "tu_common.cuh"
#include <cstdio>

int run_b(char** base, bool prepare);  // tu_b.cu
unsigned long long live_b();           // tu_b.cu

// 4 blocks x 32 threads; each thread launches xchild<<<1, 4>>> 50 times (aggregated per warp).
__global__ void xparent(unsigned* hits) {
  const klap::warp_group g = klap::warp_group::of(klap::block_group::hardware());
  for (int r = 0; r < 50; ++r) {
    auto site = klap::agg_begin<xargs>(g);
    site.record(dim3(1), dim3(4), 0, 0, xargs{hits, (blockIdx.x * blockDim.x + threadIdx.x) * 50u + r});
    site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                      const xargs* a, const xargs&) -> cudaError_t {
      const cudaError_t pre = cudaPeekAtLastError();
      xchild<<<gd, bd, sm, st>>>(c, n, a);
      return klap::launch_result(pre);
    });
  }
}

int main() {
  char *base_a = nullptr, *base_b = nullptr;
  const int bad_a = tu_run(&base_a);
  // unit b's launch calls no host_prepare of its own: unit a's call prepared b's pool too
  const int bad_b = run_b(&base_b, false);
  unsigned* hits = nullptr;
  const unsigned nx = 4 * 32 * 50 * 4;
  int bad_x = 0;
  if (cudaMalloc(&hits, nx * sizeof(unsigned)) != cudaSuccess || cudaMemset(hits, 0, nx * sizeof(unsigned)) != cudaSuccess)
    bad_x = 1000;
  xparent<<<4, 32, 0, klap::host_prepare()>>>(hits);
  if (cudaDeviceSynchronize() != cudaSuccess) bad_x = 1000;
  static unsigned h[nx];
  if (bad_x == 0) {
    cudaMemcpy(h, hits, sizeof(h), cudaMemcpyDeviceToHost);
    for (unsigned i = 0; i < nx; ++i) bad_x += h[i] != 1u;
  }
  const unsigned long long live_a = klap::host_pool_live(), lb = live_b();
  const bool ok = bad_a == 0 && bad_b == 0 && bad_x == 0 && live_a == 0 && lb == 0 && base_a != nullptr &&
                  base_b != nullptr && base_a != base_b;
  std::printf("multi_tu: unit a: %d bad, pool %p; unit b: %d bad, pool %p; cross-unit: %d bad; live blocks a %llu "
              "b %llu\n%s\n",
              bad_a, (void*)base_a, bad_b, (void*)base_b, bad_x, live_a, lb, ok ? "multi_tu: PASS" : "FAIL");
  return ok ? 0 : 1;
}
