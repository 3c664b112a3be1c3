// Tests of klap/kernel.cuh: kernel (grid) granularity aggregation (KLAP II-B on CDP2).
// A parent grid of 40 blocks x 128 threads; thread t records a launch at site 0 unless t % 7 == 3
// (with a 2-D grid and a 3-D block that depend on t) and, if t % 2 == 0, at site 1 into
// cudaStreamFireAndForget (1-D). That is about 4400 records at site 0: chunks 0, 1 and 2 are used.
// The last block launches one aggregated grid per site; every original child thread adds a
// record-specific value to its own slot, so the host can check that every (parent, block,
// thread) ran exactly once with its own arguments, and that exactly two aggregated grids ran.
// The children copy their records and release them (klap::kchild_release), the host launch is
// followed by klap::host_kstate_done (as generated code does); after each run no record chunk is
// live in the pool.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr int kBlocks = 40, kThreads = 128, kParents = kBlocks * kThreads;
constexpr int kSlotsPerParent = 2 * 3 * 4 * 2 * 2;  // max grid volume (2x3) x max block volume (4x2x2)

struct rec0 {
  unsigned parent;
  const int salt;  // a const member: records are built with placement new
  __device__ rec0(unsigned p, int s) : parent(p), salt(s) {}
};
struct rec1 {
  unsigned parent;
  __device__ explicit rec1(unsigned p) : parent(p) {}
};

__device__ dim3 grid_of(unsigned t) { return dim3(1 + t % 2, 1 + t % 3, 1); }
__device__ dim3 block_of(unsigned t) { return dim3(1 + t % 4, 1 + t % 2, 1 + (t / 4) % 2); }

__global__ void child0(const klap::ksite* site, unsigned* slots, unsigned* grids) {
  klap::vctx v;
  const rec0* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const rec0 r = *a;  // copy the record, then release the records (as generated code does)
  klap::kchild_release(site);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(grids, 1u);
  const unsigned t = r.parent;
  const dim3 g = grid_of(t), b = block_of(t);
  bool ok = v.gridDim.x == g.x && v.gridDim.y == g.y && v.gridDim.z == g.z && v.blockDim.x == b.x &&
            v.blockDim.y == b.y && v.blockDim.z == b.z && v.blockIdx.x < g.x && v.blockIdx.y < g.y &&
            v.threadIdx.x < b.x && v.threadIdx.y < b.y && v.threadIdx.z < b.z && r.salt == int(t * 3);
  const unsigned block = v.blockIdx.x + v.blockIdx.y * g.x;
  const unsigned thread = v.threadIdx.x + b.x * (v.threadIdx.y + b.y * v.threadIdx.z);
  atomicAdd(&slots[t * kSlotsPerParent + block * 16 + thread], ok ? 1u : 1000u);
}

__global__ void child1(const klap::ksite* site, unsigned* marks, unsigned* grids) {
  klap::vctx v;
  const rec1* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const unsigned parent = a->parent;
  klap::kchild_release(site);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(grids, 1u);
  atomicAdd(&marks[parent * 32 + v.threadIdx.x], v.blockDim.x == 32 ? 1u : 1000u);
}

__global__ void parent(unsigned* slots, unsigned* marks, unsigned* grids, klap::kstate* ks) {
  [&]() {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t % 7 == 3) return;  // an early return: the epilogue still runs
    klap::krecord<rec0>(ks, 0u, grid_of(t), block_of(t), 0u, (cudaStream_t)0, rec0(t, int(t * 3)));
    if (t % 2 == 0)
      klap::krecord<rec1>(ks, 1u, dim3(1), dim3(32), 0u, cudaStreamFireAndForget, rec1(t));
  }();
  klap::kfinish(
      ks, 0u,
      [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        child0<<<g, b, sm, st>>>(s, slots, grids);
        return cudaGetLastError();
      },
      [&](const klap::ksite* s, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        child1<<<g, b, sm, st>>>(s, marks, grids);
        return cudaGetLastError();
      });
}

int main() {
  unsigned *slots, *marks, *grids;
  const size_t nslots = size_t(kParents) * kSlotsPerParent, nmarks = size_t(kParents) * 32;
  KT_CUDA(cudaMalloc(&slots, nslots * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&marks, nmarks * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&grids, sizeof(unsigned)));
  for (int round = 0; round < 2; ++round) {  // twice: the state of each launch is fresh
    KT_CUDA(cudaMemset(slots, 0, nslots * sizeof(unsigned)));
    KT_CUDA(cudaMemset(marks, 0, nmarks * sizeof(unsigned)));
    KT_CUDA(cudaMemset(grids, 0, sizeof(unsigned)));
    // as HostLaunches writes a host launch of a kernel-granularity parent
    (parent<<<kBlocks, kThreads, 0, klap::host_prepare()>>>(slots, marks, grids, klap::host_kstate(2)),
     klap::host_kstate_done());
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull && ps.error == 0u,
              "round %d: %llu pool allocations (record chunks) still live after the run, error %u", round, ps.live,
              ps.error);
    kt_expect_no_pending(ps, "test_kernel");
    std::vector<unsigned> hs(nslots), hm(nmarks);
    unsigned hg = 0;
    KT_CUDA(cudaMemcpy(hs.data(), slots, nslots * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(hm.data(), marks, nmarks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(&hg, grids, sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_EXPECT(hg == 2u, "round %d: %u aggregated grids ran, expected 2", round, hg);
    for (unsigned t = 0; t < unsigned(kParents); ++t) {
      const unsigned gx = 1 + t % 2, gy = 1 + t % 3, bx = 1 + t % 4, by = 1 + t % 2, bz = 1 + (t / 4) % 2;
      for (unsigned blk = 0; blk < 6; ++blk)
        for (unsigned th = 0; th < 16; ++th) {
          const bool expected = t % 7 != 3 && blk < gx * gy && th < bx * by * bz;
          const unsigned got = hs[size_t(t) * kSlotsPerParent + blk * 16 + th];
          KT_EXPECT(got == (expected ? 1u : 0u), "round %d parent %u block %u thread %u ran %u", round, t, blk, th, got);
        }
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned got = hm[size_t(t) * 32 + l];
        const bool expected = t % 7 != 3 && t % 2 == 0;
        KT_EXPECT(got == (expected ? 1u : 0u), "round %d site 1 parent %u lane %u ran %u", round, t, l, got);
      }
    }
  }
  return kt_finish("test_kernel");
}
