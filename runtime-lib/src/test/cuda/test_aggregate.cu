// Tests of klap/aggregate.cuh (KLAP II-A, Fig. 2): parent kernels aggregate their child launches
// with agg_begin / record / flush at block granularity (block_group::hardware), warp granularity
// (warp_group::of) and over the lanes of a divergent branch (warp_group::active); the aggregated
// child finds its slot and its virtual indices with child_enter. Child configurations are 2-D and
// 3-D grids and blocks that differ per parent thread, some threads do not launch, some launch a
// predicated grid of 0 blocks, and each parent launches in a loop (2 rounds).
// Checks: every original (virtual) block and thread of every recorded launch ran exactly once and
// nothing else ran; each child saw its own arguments (a record with a const member, written with
// placement new), gridDim/blockDim, blockIdx/threadIdx in range, dynamic shared memory >= its
// request; the aggregated block size and shared memory are the group maxima; the number of
// aggregated launches is the number of groups that launched; block collectives work inside the
// virtual child block (its tail threads exited), also after child_release; every child copies its
// record and releases it (klap::child_release) as generated code does, and nothing is left live in
// the pool after each run (flush frees the slots of a group that launched nothing at once).
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <algorithm>
#include <vector>

constexpr unsigned NBLK = 3;                   // parent blocks
constexpr unsigned PB = 60;                    // parent block: dim3(10, 3, 2), 2 warps (32 + 28)
constexpr unsigned NP = NBLK * PB;             // parent threads
constexpr unsigned ITERS = 2;                  // launch rounds per parent thread
constexpr unsigned MAXB = 3 * 2 * 2;           // max child blocks
constexpr unsigned MAXT = 5 * 3 * 2;           // max child threads per block
constexpr unsigned SLOTS = ITERS * NP;         // (iter, parent thread)

enum mode { BLOCK = 0, WARP = 1, ACTIVE = 2 };

struct plan {
  bool launches;  // records a launch (possibly of 0 blocks)
  dim3 grid, block;
  unsigned smem;
};

__host__ __device__ inline plan make_plan(unsigned gtid, unsigned it, int m) {
  plan p;
  p.launches = gtid % 7u != 3u && !(m == ACTIVE && gtid % 5u == 2u);
  p.grid = dim3(1u + (gtid + it) % 3u, 1u + (gtid / 3u) % 2u, 1u + (gtid + it) % 2u);
  if (gtid % 11u == 5u) p.grid.x = 0;  // predicated launch: 0 blocks
  p.block = dim3(1u + gtid % 5u, 1u + (gtid + it) % 3u, 1u + (gtid % 4u == 0u));
  p.smem = (gtid % 4u) * 16u;
  return p;
}
__host__ __device__ inline unsigned vol(const dim3& d) { return d.x * d.y * d.z; }

struct child_args {
  const unsigned slot;  // (iter, parent thread); const: the record must be placement-new'ed
  dim3 grid, block;
  unsigned smem;
};

struct results {
  unsigned counters[SLOTS * MAXB * MAXT];  // visits of (slot, virtual block, virtual thread)
  unsigned hw_threads[SLOTS];              // aggregated blockDim.x seen by the slot's child
  unsigned hw_smem[SLOTS];                 // aggregated dynamic shared memory seen by the slot's child
  unsigned errors;
  unsigned launches;                       // aggregated child grids
};

__global__ void child_agg(const klap::launch_cfg* cfg, unsigned n, const child_args* args, results* res) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const child_args a = args[p];  // the generated child copies its record, then releases the slots
  const unsigned long long my_blocks = cfg[p].blocks_incl - (p ? cfg[p - 1].blocks_incl : 0ull);
  klap::child_release(cfg, n);
  unsigned dyn;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  bool ok = p < n && v.gridDim.x == a.grid.x && v.gridDim.y == a.grid.y && v.gridDim.z == a.grid.z &&
            v.blockDim.x == a.block.x && v.blockDim.y == a.block.y && v.blockDim.z == a.block.z &&
            v.blockIdx.x < a.grid.x && v.blockIdx.y < a.grid.y && v.blockIdx.z < a.grid.z &&
            v.threadIdx.x < a.block.x && v.threadIdx.y < a.block.y && v.threadIdx.z < a.block.z &&
            dyn >= a.smem && blockDim.x >= vol(a.block) &&
            my_blocks == vol(a.grid);
  // a block collective inside the virtual block (threads past its size have exited)
  const klap::block_group g = klap::block_group::virtual_block(v);
  const unsigned s = g.size();
  const unsigned sum = klap::group_sum(g, g.rank());  // collectives: every live thread calls them
  const unsigned mx = klap::group_max(g, g.rank());
  ok = ok && sum == s * (s - 1u) / 2u && mx == s - 1u;
  if (!ok) atomicAdd(&res->errors, 1u);
  const unsigned b = v.blockIdx.x + v.blockIdx.y * v.gridDim.x + v.blockIdx.z * v.gridDim.x * v.gridDim.y;
  const unsigned t = v.threadIdx.x + v.threadIdx.y * v.blockDim.x + v.threadIdx.z * v.blockDim.x * v.blockDim.y;
  if (a.slot < SLOTS && b < MAXB && t < MAXT) atomicAdd(&res->counters[(a.slot * MAXB + b) * MAXT + t], 1u);
  else atomicAdd(&res->errors, 1u);
  if (b == 0 && t == 0) {
    res->hw_threads[a.slot] = blockDim.x;
    res->hw_smem[a.slot] = dyn;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&res->launches, 1u);
}

template <class G>
__device__ void one_round(const G& g, unsigned gtid, unsigned it, int m, results* res) {
  klap::agg_site<child_args> site = klap::agg_begin<child_args>(g);
  const plan pl = make_plan(gtid, it, m);
  if (pl.launches)  // divergent record
    site.record(pl.grid, pl.block, pl.smem, 0, child_args{it * NP + gtid, pl.grid, pl.block, pl.smem});
  site.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                    const child_args* a, const child_args&) {
    child_agg<<<gd, bd, sm, st>>>(c, n, a, res);
    return cudaGetLastError();
  });
}

__global__ void parent(int m, results* res) {
  const klap::block_group b = klap::block_group::hardware();
  const unsigned gtid = blockIdx.x * b.size() + b.rank();
  for (unsigned it = 0; it < ITERS; ++it) {
    if (m == BLOCK) {
      one_round(b, gtid, it, m, res);
    } else if (m == WARP) {
      one_round(klap::warp_group::of(b), gtid, it, m, res);
    } else if (gtid % 5u != 2u) {  // divergent: aggregate over the lanes that are here
      one_round(klap::warp_group::active(), gtid, it, m, res);
    }
  }
}

int main() {
  results* d;
  KT_CUDA(cudaMalloc(&d, sizeof(results)));
  std::vector<results> hv(1);
  results& h = hv[0];
  const char* names[] = {"block", "warp", "active"};
  for (int m = BLOCK; m <= ACTIVE; ++m) {
    KT_CUDA(cudaMemset(d, 0, sizeof(results)));
    parent<<<NBLK, dim3(10, 3, 2), 0, klap::host_prepare(0)>>>(m, d);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    KT_CUDA(cudaMemcpy(&h, d, sizeof(results), cudaMemcpyDeviceToHost));
    KT_EXPECT(h.errors == 0, "%s: %u child-side check(s) failed", names[m], h.errors);
    unsigned groups_launching = 0;
    for (unsigned it = 0; it < ITERS; ++it) {
      std::vector<std::pair<unsigned, unsigned>> groups;  // [first, end) parent gtids
      for (unsigned blk = 0; blk < NBLK; ++blk) {
        if (m == BLOCK) groups.push_back({blk * PB, blk * PB + PB});
        else { groups.push_back({blk * PB, blk * PB + 32}); groups.push_back({blk * PB + 32, blk * PB + PB}); }
      }
      for (auto [first, end] : groups) {
        unsigned mt = 0, ms = 0;
        bool any = false;
        for (unsigned q = first; q < end; ++q) {
          const plan pl = make_plan(q, it, m);
          if (pl.launches && vol(pl.grid) > 0) {
            any = true;
            mt = std::max(mt, vol(pl.block));
            ms = std::max(ms, pl.smem);
          }
        }
        if (m != ACTIVE) groups_launching += any;
        for (unsigned q = first; q < end; ++q) {
          const plan pl = make_plan(q, it, m);
          const unsigned slot = it * NP + q;
          const bool ran = pl.launches && vol(pl.grid) > 0;
          for (unsigned bb = 0; bb < MAXB; ++bb)
            for (unsigned t = 0; t < MAXT; ++t) {
              const unsigned want = ran && bb < vol(pl.grid) && t < vol(pl.block) ? 1u : 0u;
              const unsigned got = h.counters[(slot * MAXB + bb) * MAXT + t];
              KT_EXPECT(got == want, "%s: iter %u parent %u virtual block %u thread %u ran %u times, want %u",
                        names[m], it, q, bb, t, got, want);
            }
          if (ran && m != ACTIVE) {
            KT_EXPECT(h.hw_threads[slot] == mt, "%s: iter %u parent %u: aggregated blockDim.x %u, want max %u",
                      names[m], it, q, h.hw_threads[slot], mt);
            KT_EXPECT(h.hw_smem[slot] >= ms, "%s: iter %u parent %u: dynamic smem %u < group max %u",
                      names[m], it, q, h.hw_smem[slot], ms);
          } else if (ran) {
            KT_EXPECT(h.hw_threads[slot] >= vol(pl.block), "%s: iter %u parent %u: aggregated blockDim.x %u < %u",
                      names[m], it, q, h.hw_threads[slot], vol(pl.block));
          }
        }
      }
    }
    if (m != ACTIVE)
      KT_EXPECT(h.launches == groups_launching, "%s: %u aggregated launches, want %u", names[m], h.launches,
                groups_launching);
    else
      KT_EXPECT(h.launches >= 1 && h.launches <= ITERS * NP, "%s: %u aggregated launches", names[m], h.launches);
    const kt_pool_snapshot ps = kt_pool();
    KT_EXPECT(ps.live == 0ull, "%s: %llu pool allocations still live after the run (slots not released)", names[m],
              ps.live);
    kt_expect_no_pending(ps, names[m]);
    std::printf("test_aggregate: %s granularity: %u aggregated child launches\n", names[m], h.launches);
  }
  KT_EXPECT(klap::host_pool_error() == 0, "pool error flag set");
  KT_CUDA(cudaFree(d));
  return kt_finish("test_aggregate");
}
