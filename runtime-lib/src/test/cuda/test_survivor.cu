// Tests of survivor regions (klap/group.cuh klap::guard_exit with klap::warp_group::from_mask): the
// code klap writes for a launch under a per-thread `if` in a loop of rounds with a uniform trip
// count, after divergent early returns of the kernel (testcases/src/loops' loopUniform, which hung
// on the H200 on 2026-11-27 when aggregated in place among the lanes that arrive together):
//     unsigned klap_live = klap::warp_group::of(klap_blk).mask();
//     if (klap::guard_exit(klap_live, static_cast<bool>(i >= n))) return;
//     if (klap::guard_exit(klap_live, static_cast<bool>(f % 7u == 3u))) { ...; return; }
//     for (r < rounds) { { auto g = klap::warp_group::from_mask(klap_live); auto s = klap::agg_begin<...>(g, ...);
//                          if ((f >> r) & 1u) s.record(...); s.flush(g, ...); } }
//  1. guard_exit: after the guards every surviving lane holds exactly the lanes of its warp that
//     passed them (checked against the host's computation), for 1-D blocks with a partial last warp
//     and for a 2-D block.
//  2. the launches: every child of every (thread, round) runs exactly once with its own arguments,
//     the round is the same scalar for the whole group (the lanes of one group are in one round),
//     the rounds' launches are one aggregated launch per warp and round at most, for 6 and 30
//     rounds and 2048 parent threads; afterwards the pool is idle and nothing counts as pending.
//  3. convergent loops (klap::group_any over a warp and over a block): a loop whose trip count
//     differs between threads evaluates each thread's condition exactly trips + 1 times, and every
//     (thread, round) child runs once with its own round.
//  4. a convergent loop in a thread-dependent branch, run among the lanes that enter it together
//     (their mask taken at the loop, klap::warp_group::active().mask()), with a thread-dependent
//     continue before the launch and break after it going through the flush (klap_x, goto): each
//     thread's condition is evaluated exactly as often as in the loop as written, and a thread
//     that breaks records nothing more while the others go on.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

struct sv_args {
  unsigned id;
  unsigned round;
};

__host__ __device__ inline unsigned sv_flags(unsigned id) { return static_cast<unsigned>(kt_mix64(id * 0x9E3779B9ull + 7ull)); }
// the second guard: a thread whose flags say so writes and returns
__host__ __device__ inline bool sv_leaves(unsigned f) { return f % 7u == 3u; }
__host__ __device__ inline unsigned sv_blocks(unsigned id, unsigned r) { return 1u + (id + r) % 2u; }

// The aggregated child: each virtual thread adds its round + 1 to its parent thread's counter and
// counts itself; `round` is the group's scalar, which must equal the record's.
__global__ void sv_child_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const sv_args* klap_args,
                             unsigned long long* sums, unsigned* counts, unsigned round, unsigned* errors) {
  klap::vctx klap_v;
  unsigned klap_parent;
  if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;
  const sv_args a = klap_args[klap_parent];
  klap::child_release(klap_cfg, klap_n);
  if (a.round != round || klap_v.gridDim.x != sv_blocks(a.id, a.round) || klap_v.blockDim.x != 8u) atomicAdd(errors, 1u);
  atomicAdd(&sums[a.id], static_cast<unsigned long long>(a.round) + 1ull);
  atomicAdd(&counts[a.id], 1u);
}

// The original child, which a group of one thread launches as written (direct mode): the same work.
__global__ void sv_child(unsigned long long* sums, unsigned* counts, sv_args a, unsigned* errors) {
  if (gridDim.x != sv_blocks(a.id, a.round) || blockDim.x != 8u) atomicAdd(errors, 1u);
  atomicAdd(&sums[a.id], static_cast<unsigned long long>(a.round) + 1ull);
  atomicAdd(&counts[a.id], 1u);
}

// The flush klap writes for an aggregated launch of sv_child_agg (counted in *launches). The test
// pool is large enough, so no group falls back (the pool's fallback count stays 0); a group of one
// thread (a survivor alone in its warp) and a group with one launch in a round have nothing to
// aggregate and launch the original child as written (sv_child), which does the same work.
template <class G, class S>
__device__ void sv_flush(const G& g, S& s, unsigned long long* sums, unsigned* counts, unsigned* launches, unsigned* errors) {
  s.flush(
      g,
      [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned m, const sv_args* a,
          const sv_args& mine) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        atomicAdd(launches, 1u);
        sv_child_agg<<<gd, bd, sm, st>>>(c, m, a, sums, counts, mine.round, errors);
        return klap::launch_result(pre);
      },
      [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const sv_args& a) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        sv_child<<<gd, bd, sm, st>>>(sums, counts, a, errors);
        return klap::launch_result(pre);
      });
}

// The transformed parent. live_out[t] = the survivor mask a thread saw after the guards (0 if it
// returned); launches counts the aggregated launches.
// __launch_bounds__(1024) as klap writes on every kernel it emits: without it sv_parent took 88
// registers (nvcc 13, sm_90) and its 1024-thread case could not launch ("too many resources
// requested for launch", H200 2026-11-30).
__global__ __launch_bounds__(1024) void sv_parent(unsigned n, unsigned rounds, unsigned long long* sums, unsigned* counts, unsigned* live_out,
                          unsigned* left, unsigned* launches, unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  const unsigned t = klap_blk.rank() + blockIdx.x * klap_blk.size();
  unsigned klap_live = klap::warp_group::of(klap_blk).mask();
  if (klap::guard_exit(klap_live, static_cast<bool>(t >= n))) return;
  const unsigned f = sv_flags(t);
  if (klap::guard_exit(klap_live, static_cast<bool>(sv_leaves(f)))) {
    left[t] = 1u;
    return;
  }
  live_out[t] = klap_live;
  for (unsigned r = 0; r < rounds; ++r) {
    {
      auto klap_g0 = klap::warp_group::from_mask(klap_live);
      auto klap_s0 = klap::agg_begin<sv_args>(klap_g0, klap::on_full::launch_as_written);
      if ((f >> (r % 32u)) & 1u) klap_s0.record(dim3(sv_blocks(t, r)), dim3(8), 0u, cudaStreamFireAndForget, sv_args{t, r});
      sv_flush(klap_g0, klap_s0, sums, counts, launches, errors);
    }
  }
}

// A convergent loop (klap's code for a loop whose trip count differs between threads, klap::group_any):
//     { bool klap_on = true; for (unsigned r = 0; klap::group_any(g, klap_on = klap_on && (++steps <= trips));
//       klap_on ? (void)(r += 1) : (void)0) { agg_begin(g); if (klap_on) { if (...) record; } flush(g); } }
// with g the warp (Block = false) or the block. steps_out[t] must be trips + 1, as in the loop as written.
__host__ __device__ inline unsigned cl_trips(unsigned t) { return static_cast<unsigned>(kt_mix64(t + 99ull) % 9ull); }

// The modes of cl_parent: the group is the warp, the block, or (ARRIVED) the lanes of a warp that
// enter the loop together inside `if (t % 3u != 1u)`, where the body also continues and breaks.
enum cl_mode { CL_WARP, CL_BLOCK, CL_ARRIVED };
static const char* const cl_names[] = {"warp", "block", "arrived"};
__host__ __device__ inline bool cl_enters(int mode, unsigned t) { return mode != CL_ARRIVED || t % 3u != 1u; }
__host__ __device__ inline bool cl_continues(int mode, unsigned t, unsigned r) { return mode == CL_ARRIVED && (t + r) % 5u == 4u; }
__host__ __device__ inline bool cl_breaks(int mode, unsigned t, unsigned r) { return mode == CL_ARRIVED && (t * 3u + r) % 7u == 6u; }

template <int Mode>
__global__ __launch_bounds__(1024) void cl_parent(unsigned long long* sums, unsigned* counts, unsigned* steps_out, unsigned* launches,
                          unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  const unsigned t = klap_blk.rank() + blockIdx.x * klap_blk.size();
  unsigned steps = 0;
  auto run = [&](const auto& g) {
    bool klap_on = true;
    for (unsigned r = 0; klap::group_any(g, klap_on = klap_on && (++steps <= cl_trips(t))); klap_on ? (void)(r += 1) : (void)0) {
      auto klap_s0 = klap::agg_begin<sv_args>(g, klap::on_full::launch_as_written);
      int klap_x0 = 0;
      if (klap_on) {
        if (cl_continues(Mode, t, r)) { klap_x0 = 3; goto klap_r0; }
        if ((t + r) % 3u != 0u) klap_s0.record(dim3(sv_blocks(t, r)), dim3(8), 0u, cudaStreamFireAndForget, sv_args{t, r});
        if (cl_breaks(Mode, t, r)) { klap_x0 = 2; goto klap_r0; }
      }
    klap_r0:;
      sv_flush(g, klap_s0, sums, counts, launches, errors);
      if (klap_x0 == 2) klap_on = false;
      if (klap_x0 == 3) continue;
    }
  };
  if (Mode == CL_BLOCK) run(klap_blk);
  else if (Mode == CL_WARP) run(klap::warp_group::of(klap_blk));
  else if (cl_enters(Mode, t)) {
    const unsigned klap_arrived0 = klap::warp_group::active().mask();
    run(klap::warp_group::from_mask(klap_arrived0));
  }
  steps_out[t] = steps;
}

template <int Mode>
static void run_convergent(unsigned blocks, unsigned bs) {
  const unsigned total = blocks * bs;
  unsigned long long* sums;
  unsigned *counts, *steps, *launches, *errors;
  KT_CUDA(cudaMalloc(&sums, sizeof(unsigned long long) * total));
  KT_CUDA(cudaMalloc(&counts, sizeof(unsigned) * total));
  KT_CUDA(cudaMalloc(&steps, sizeof(unsigned) * total));
  KT_CUDA(cudaMalloc(&launches, sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&errors, sizeof(unsigned)));
  KT_CUDA(cudaMemset(sums, 0, sizeof(unsigned long long) * total));
  KT_CUDA(cudaMemset(counts, 0, sizeof(unsigned) * total));
  KT_CUDA(cudaMemset(steps, 0, sizeof(unsigned) * total));
  KT_CUDA(cudaMemset(launches, 0, sizeof(unsigned)));
  KT_CUDA(cudaMemset(errors, 0, sizeof(unsigned)));
  cl_parent<Mode><<<blocks, bs, 0, klap::host_prepare(0, klap::host_warps(dim3(blocks), dim3(bs)))>>>(sums, counts, steps,
                                                                                                   launches, errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned long long> hs(total);
  std::vector<unsigned> hc(total), hst(total);
  unsigned herr = 0, hl = 0;
  KT_CUDA(cudaMemcpy(hs.data(), sums, sizeof(unsigned long long) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(hc.data(), counts, sizeof(unsigned) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(hst.data(), steps, sizeof(unsigned) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&herr, errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&hl, launches, sizeof(unsigned), cudaMemcpyDeviceToHost));
  const char* name = cl_names[Mode];
  KT_EXPECT(herr == 0u, "convergent %s: %u child-side errors", name, herr);
  for (unsigned t = 0; t < total; ++t) {
    // the loop as written
    unsigned long long want = 0;
    unsigned cnt = 0, steps = 0;
    if (cl_enters(Mode, t)) {
      for (unsigned r = 0; ++steps <= cl_trips(t); r += 1) {
        if (cl_continues(Mode, t, r)) continue;
        if ((t + r) % 3u != 0u) {
          want += (r + 1ull) * 8ull * sv_blocks(t, r);
          cnt += 8u * sv_blocks(t, r);
        }
        if (cl_breaks(Mode, t, r)) break;
      }
    }
    KT_EXPECT(hs[t] == want && hc[t] == cnt && hst[t] == steps,
              "convergent %s: thread %u: sum %llu from %u child threads after %u condition evaluations, want %llu from %u after %u",
              name, t, hs[t], hc[t], hst[t], want, cnt, steps);
  }
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u && s.pending == 0ull && s.fallbacks == 0ull,
            "convergent %s: afterwards %llu allocations live, error %u, %llu pending, %llu fallbacks", name, s.live,
            s.error, s.pending, s.fallbacks);
  std::printf("test_survivor: convergent loop per %s, %u blocks of %u: %u aggregated launches\n", name, blocks, bs, hl);
  KT_CUDA(cudaFree(sums));
  KT_CUDA(cudaFree(counts));
  KT_CUDA(cudaFree(steps));
  KT_CUDA(cudaFree(launches));
  KT_CUDA(cudaFree(errors));
}

// Host: the mask of the lanes of t's warp that pass both guards (block of `bs` threads, 1-D).
static unsigned expected_live(unsigned t, unsigned n, unsigned bs) {
  const unsigned block = t / bs, rank = t % bs, first = rank & ~31u;
  unsigned m = 0;
  for (unsigned lane = 0; lane < 32u && first + lane < bs; ++lane) {
    const unsigned u = block * bs + first + lane;
    if (u < n && !sv_leaves(sv_flags(u))) m |= 1u << lane;
  }
  return m;
}

static void run_case(unsigned n, unsigned bs, unsigned rounds) {
  const unsigned grid = (n + bs - 1u) / bs, total = grid * bs;
  unsigned long long* sums;
  unsigned *counts, *live, *left, *launches, *errors;
  KT_CUDA(cudaMalloc(&sums, sizeof(unsigned long long) * total));
  KT_CUDA(cudaMalloc(&counts, sizeof(unsigned) * total));
  KT_CUDA(cudaMalloc(&live, sizeof(unsigned) * total));
  KT_CUDA(cudaMalloc(&left, sizeof(unsigned) * total));
  KT_CUDA(cudaMalloc(&launches, sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&errors, sizeof(unsigned)));
  KT_CUDA(cudaMemset(sums, 0, sizeof(unsigned long long) * total));
  KT_CUDA(cudaMemset(counts, 0, sizeof(unsigned) * total));
  KT_CUDA(cudaMemset(live, 0, sizeof(unsigned) * total));
  KT_CUDA(cudaMemset(left, 0, sizeof(unsigned) * total));
  KT_CUDA(cudaMemset(launches, 0, sizeof(unsigned)));
  KT_CUDA(cudaMemset(errors, 0, sizeof(unsigned)));
  sv_parent<<<grid, bs, 0, klap::host_prepare(0, klap::host_warps(dim3(grid), dim3(bs)))>>>(n, rounds, sums, counts, live,
                                                                                          left, launches, errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned long long> hs(total);
  std::vector<unsigned> hc(total), hl(total), hleft(total);
  unsigned hlaunch = 0, herr = 0;
  KT_CUDA(cudaMemcpy(hs.data(), sums, sizeof(unsigned long long) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(hc.data(), counts, sizeof(unsigned) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(hl.data(), live, sizeof(unsigned) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(hleft.data(), left, sizeof(unsigned) * total, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&hlaunch, launches, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&herr, errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_EXPECT(herr == 0u, "n=%u block=%u rounds=%u: %u child-side errors", n, bs, rounds, herr);
  unsigned warps = 0;
  for (unsigned t = 0; t < total; ++t) {
    const bool in = t < n, leaves = in && sv_leaves(sv_flags(t));
    unsigned long long want = 0;
    unsigned cnt = 0;
    if (in && !leaves)
      for (unsigned r = 0; r < rounds; ++r)
        if ((sv_flags(t) >> (r % 32u)) & 1u) {
          want += (r + 1ull) * 8ull * sv_blocks(t, r);
          cnt += 8u * sv_blocks(t, r);
        }
    KT_EXPECT(hs[t] == want && hc[t] == cnt, "n=%u block=%u rounds=%u: thread %u got sum %llu from %u child threads, want %llu from %u",
              n, bs, rounds, t, hs[t], hc[t], want, cnt);
    KT_EXPECT(hleft[t] == (leaves ? 1u : 0u), "n=%u block=%u: thread %u left=%u", n, bs, t, hleft[t]);
    const unsigned lm = in && !leaves ? expected_live(t, n, bs) : 0u;
    KT_EXPECT(hl[t] == lm, "n=%u block=%u: thread %u saw survivor mask %08x, want %08x", n, bs, t, hl[t], lm);
    if ((t % bs) % 32u == 0u) warps += expected_live(t, n, bs) != 0u;
  }
  KT_EXPECT(hlaunch >= 1u && hlaunch <= warps * rounds, "n=%u block=%u rounds=%u: %u aggregated launches, want 1..%u", n, bs,
            rounds, hlaunch, warps * rounds);
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u && s.pending == 0ull && s.fallbacks == 0ull,
            "n=%u block=%u rounds=%u: afterwards %llu allocations live, error %u, %llu pending, %llu fallbacks", n, bs, rounds,
            s.live, s.error, s.pending, s.fallbacks);
  std::printf("test_survivor: n=%u block=%u rounds=%u: %u aggregated launches\n", n, bs, rounds, hlaunch);
  KT_CUDA(cudaFree(sums));
  KT_CUDA(cudaFree(counts));
  KT_CUDA(cudaFree(live));
  KT_CUDA(cudaFree(left));
  KT_CUDA(cudaFree(launches));
  KT_CUDA(cudaFree(errors));
}

int main() {
  kt_watchdog("test_survivor", 60);
  run_case(32, 128, 6);     // loopUniform's hanging size (one warp)
  run_case(2048, 128, 6);   // loopUniform as in testcases/src/loops
  run_case(1000, 96, 30);   // partial last warp of a block, partial last block, 30 rounds
  run_case(2047, 1024, 11);
  run_convergent<CL_WARP>(16, 96);
  run_convergent<CL_BLOCK>(16, 96);
  run_convergent<CL_BLOCK>(2, 1024);
  run_convergent<CL_ARRIVED>(16, 96);
  run_convergent<CL_ARRIVED>(2, 1024);
  return kt_finish("test_survivor");
}
