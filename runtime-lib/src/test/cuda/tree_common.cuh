// A recursive launch tree shared by test_recursion (warp/block granularity) and test_kernel_churn
// (kernel granularity). The original program:
//     __global__ void tree(unsigned level, unsigned long long parent_id, tree_results* r) {
//       const unsigned long long id = tree_child_id(parent_id, blockIdx.x, threadIdx.x);  // 1-D
//       ++r->count[level]; r->idsum[level] += id;                                         // atomics
//       if (level < TREE_D && tree_grid(id) != 0) {
//         ++r->launches[level];
//         tree<<<tree_grid(id), tree_block(id)>>>(level + 1, id, r);
//       }
//     }
// with a root grid of TREE_RB x TREE_RT threads (level 0, id = tree_root_id(seed, global index)).
// About one thread in TREE_K launches 1..3 blocks of 32 or 64 threads (96 threads on average), so
// every level has about as many threads as the root (~8000; the host recomputes the exact tree:
// tree_expected), TREE_D + 1 levels (the CDP nesting limit is 24), ~100000 threads per tree. The
// block sizes differ between launches, so aggregated child blocks have threads past their virtual
// block that leave at once. Every id is a 64-bit hash of the path from the root, so a child that
// reads another parent's record (memory handed out again too early) adds a wrong id to idsum.
// Include after "klap/klap.cuh" and "klap_test.cuh".
#ifndef KLAP_TREE_COMMON_CUH
#define KLAP_TREE_COMMON_CUH

#include <vector>

constexpr unsigned TREE_D = 12;    // deepest level (levels 0..TREE_D)
constexpr unsigned TREE_K = 96;    // one thread in TREE_K launches
constexpr unsigned TREE_RB = 64;   // root grid
constexpr unsigned TREE_RT = 128;  // root block

struct tree_results {
  unsigned long long count[TREE_D + 1];     // threads per level
  unsigned long long idsum[TREE_D + 1];     // sum of their ids (mod 2^64)
  unsigned long long launches[TREE_D + 1];  // launches made by the threads of each level
  unsigned errors;                          // child-side record checks that failed
};

// The record of one launch of the tree kernel (the arguments that vary per parent thread).
struct tree_args {
  unsigned long long parent_id;
  unsigned level;  // the child's level
  unsigned check;  // tree_check(parent_id, level)
};

__host__ __device__ inline unsigned long long tree_root_id(unsigned seed, unsigned gtid) {
  return kt_mix64((static_cast<unsigned long long>(seed) << 32) | gtid);
}
__host__ __device__ inline unsigned long long tree_child_id(unsigned long long parent, unsigned block, unsigned thread) {
  return kt_mix64(parent ^ (((static_cast<unsigned long long>(block) << 16) | thread) * 0x9E3779B97F4A7C15ull + 1ull));
}
// Blocks that thread `id` launches (0: none).
__host__ __device__ inline unsigned tree_grid(unsigned long long id) {
  return (id >> 8) % TREE_K == 0ull ? 1u + static_cast<unsigned>((id >> 24) % 3ull) : 0u;
}
__host__ __device__ inline unsigned tree_block(unsigned long long id) { return 32u << ((id >> 40) & 1ull); }
__host__ __device__ inline unsigned tree_check(unsigned long long parent, unsigned level) {
  return static_cast<unsigned>(kt_mix64(parent + level) >> 17);
}

// HOST. The exact results of the tree of `seed`.
static inline tree_results tree_expected(unsigned seed) {
  tree_results want{};
  std::vector<unsigned long long> cur, next;
  for (unsigned g = 0; g < TREE_RB * TREE_RT; ++g) cur.push_back(tree_root_id(seed, g));
  for (unsigned level = 0; level <= TREE_D; ++level) {
    next.clear();
    for (unsigned long long id : cur) {
      ++want.count[level];
      want.idsum[level] += id;
      const unsigned nb = tree_grid(id);
      if (level == TREE_D || nb == 0u) continue;
      ++want.launches[level];
      for (unsigned b = 0; b < nb; ++b)
        for (unsigned t = 0; t < tree_block(id); ++t) next.push_back(tree_child_id(id, b, t));
    }
    cur.swap(next);
  }
  return want;
}

// HOST. Compares the results of one tree with tree_expected; returns the number of mismatches.
static inline unsigned tree_compare(const char* what, const tree_results& got, const tree_results& want) {
  unsigned bad = 0;
  for (unsigned level = 0; level <= TREE_D; ++level) {
    if (got.count[level] != want.count[level] || got.idsum[level] != want.idsum[level] ||
        got.launches[level] != want.launches[level]) {
      ++bad;
      std::printf("%s: level %u: %llu threads (want %llu), id sum %llx (want %llx), %llu launches (want %llu)\n", what,
                  level, got.count[level], want.count[level], got.idsum[level], want.idsum[level], got.launches[level],
                  want.launches[level]);
    }
  }
  if (got.errors) std::printf("%s: %u child threads found a wrong record\n", what, got.errors);
  return bad + got.errors;
}

// HOST. Threads of the whole tree.
static inline unsigned long long tree_threads(const tree_results& r) {
  unsigned long long n = 0;
  for (unsigned level = 0; level <= TREE_D; ++level) n += r.count[level];
  return n;
}

#endif  // KLAP_TREE_COMMON_CUH
