// Aggregated parent/child kernels shared by test_churn and test_host_loop, written as klap's
// compiler writes warp/block-granularity code (GroupAggregation, ChildVariants): agg_begin over the
// group, a (possibly predicated) record per thread, flush with a launch lambda that returns
// klap::launch_result; the aggregated child finds its slot (child_enter), copies its record, calls
// klap::child_release, and only then runs the original body.
//
// The original program: in launch `l`, parent thread `id` does
//     child<<<churn_blocks(id, l), 32>>>(sums, id, l, churn_check(id, l));
// (0 blocks: a predicated launch; some threads do not reach the launch at all), and every thread
// of the child adds l + 1 to sums[id]. The child also checks its record: the check word, the
// launch number against the launcher's (a group-uniform scalar), and that the record is the one
// of its own slot (id % group size == slot, id / group size == the launcher's group). A record
// overwritten because the pool handed its memory out again too early fails these checks or lands
// its sum on the wrong counter; a leak exhausts the small test pool (a trap).
// Include after "klap/klap.cuh" and "klap_test.cuh".
#ifndef KLAP_AGG_COMMON_CUH
#define KLAP_AGG_COMMON_CUH

#include <vector>

struct churn_args {
  unsigned id;
  unsigned launch;
  unsigned long long check;
};

__host__ __device__ inline unsigned long long churn_check(unsigned id, unsigned launch) {
  return kt_mix64((static_cast<unsigned long long>(launch) << 32) | id) | 1ull;
}

// Blocks of 32 threads that parent thread `id` launches in launch `l` (0..3; 0: no child). Whole
// blocks of 256 (and so whole warps) launch nothing in every 5th launch (their slots are freed at
// once by flush), and some whole warps in every 3rd.
__host__ __device__ inline unsigned churn_blocks(unsigned id, unsigned l) {
  if (l % 5u == 0u && (id / 256u) % 3u == 0u) return 0u;
  if (l % 3u == 0u && (id / 32u) % 7u == 1u) return 0u;
  return static_cast<unsigned>(kt_mix64((static_cast<unsigned long long>(l) << 32) ^ (id * 2654435761ull)) % 4u);
}

// The aggregated child. launch and unit are group-uniform scalars taken from the launcher's record.
__global__ void churn_child_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const churn_args* klap_args,
                                unsigned long long* sums, unsigned launch, unsigned unit, unsigned* errors) {
  klap::vctx klap_v;
  unsigned klap_parent;
  if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;
  const churn_args a = klap_args[klap_parent];
  klap::child_release(klap_cfg, klap_n);
  const bool ok = a.check == churn_check(a.id, a.launch) && a.launch == launch && a.id % klap_n == klap_parent &&
                  a.id / klap_n == unit && klap_v.gridDim.x == churn_blocks(a.id, a.launch) &&
                  klap_v.blockIdx.x < klap_v.gridDim.x && klap_v.blockDim.x == 32u && klap_v.threadIdx.x < 32u;
  if (ok) atomicAdd(&sums[a.id], static_cast<unsigned long long>(launch) + 1ull);
  else atomicAdd(errors, 1u);
}

// One aggregated launch site over group g (its ranks are id % g.size()).
template <class G>
__device__ void churn_round(const G& g, unsigned id, unsigned l, unsigned long long* sums, unsigned* errors) {
  auto klap_s0 = klap::agg_begin<churn_args>(g);
  const unsigned nb = churn_blocks(id, l);
  if (nb != 0u || id % 2u == 0u)  // odd threads with no child do not reach the launch; even ones launch 0 blocks
    klap_s0.record(dim3(nb), dim3(32), 0u, cudaStream_t(0), churn_args{id, l, churn_check(id, l)});
  klap_s0.flush(g, [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n,
                       const churn_args* a, const churn_args& mine) -> cudaError_t {
    const cudaError_t pre = cudaPeekAtLastError();
    churn_child_agg<<<gd, bd, sm, st>>>(c, n, a, sums, mine.launch, mine.id / n, errors);
    return klap::launch_result(pre);
  });
}

// Block granularity: parent thread id = its global index (1-D grid and block).
__global__ void churn_parent_block(unsigned long long* sums, unsigned l, unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  churn_round(klap_blk, blockIdx.x * blockDim.x + threadIdx.x, l, sums, errors);
}

// Warp granularity (blockDim.x a multiple of 32).
__global__ void churn_parent_warp(unsigned long long* sums, unsigned l, unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  churn_round(klap::warp_group::of(klap_blk), blockIdx.x * blockDim.x + threadIdx.x, l, sums, errors);
}

// One launch of one warp (<<<1, 32>>>) that launches in a loop: round r is launch number
// first + r, parent thread id = the lane.
__global__ void churn_parent_loop(unsigned long long* sums, unsigned first, unsigned rounds, unsigned* errors) {
  const klap::block_group klap_blk = klap::block_group::hardware();
  for (unsigned r = 0; r < rounds; ++r) churn_round(klap::warp_group::of(klap_blk), threadIdx.x, first + r, sums, errors);
}

// HOST. What sums[id] must be after launches first .. first + count - 1 of a grid of `ids` threads.
static inline std::vector<unsigned long long> churn_expected(unsigned ids, unsigned first, unsigned count) {
  std::vector<unsigned long long> want(ids, 0ull);
  for (unsigned l = first; l < first + count; ++l)
    for (unsigned id = 0; id < ids; ++id) want[id] += (l + 1ull) * churn_blocks(id, l) * 32ull;
  return want;
}

// HOST. Pool bytes that one launch of `ids` parent threads takes in groups of `group` threads.
static inline unsigned long long churn_slot_bytes(unsigned ids, unsigned group) {
  return static_cast<unsigned long long>(ids / group) *
         (16ull + ((group * sizeof(klap::launch_cfg) + 15ull) & ~15ull) + group * sizeof(churn_args));
}

// HOST. Compares the sums and the child-side error count with the expectation; returns the number
// of mismatches (the first few are printed).
static inline unsigned churn_check_sums(const char* what, const unsigned long long* d_sums, const unsigned* d_errors,
                                        unsigned ids, unsigned first, unsigned count) {
  std::vector<unsigned long long> got(ids);
  unsigned errors = 0;
  KT_CUDA(cudaMemcpy(got.data(), d_sums, ids * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&errors, d_errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
  const std::vector<unsigned long long> want = churn_expected(ids, first, count);
  unsigned bad = 0;
  for (unsigned id = 0; id < ids; ++id)
    if (got[id] != want[id] && ++bad <= 5)
      std::printf("%s: sums[%u] = %llu, want %llu\n", what, id, got[id], want[id]);
  if (errors) std::printf("%s: %u child threads found a wrong record\n", what, errors);
  return bad + errors;
}

#endif  // KLAP_AGG_COMMON_CUH
