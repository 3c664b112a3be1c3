// Tests of what klap does when its pool has no room or its launches would fill the device runtime's
// pending-launch buffer (issue 11: "the launch falls back to a correct path where one exists";
// "klap keeps its own device launches within the pending-launch limit"):
//   klap/aggregate.cuh  agg_begin(g, on_full::launch_as_written) and flush's direct launcher
//   klap/pool.cuh       pool_alloc_or_null, host_pool_fallbacks, pending_acquire/pending_release
// The pool is made small (1 MiB in segments of 4 KiB), the fallback wait short (200 us), and the
// pending budget 1 % of the device's pending-launch limit (at least 32768 after host_prepare: the
// groups that launch as written need the room the original program needed).
// The program, as klap writes it at block and warp granularity: parent thread id of host launch l
// does `fb_child<<<fb_blocks(id, l), 32>>>(sums, id, l, check, ...)` (0 blocks: no launch); every
// thread of the child adds l + 1 to sums[id]. The aggregated variant (fb_child_agg) and the
// original kernel (fb_child, what direct mode launches) each count the child grids they run.
//  A. A holder kernel (kt_pool_holder) keeps the whole pool while parents run: every group falls back, so every
//     child runs as written (fb_child), none aggregated; host_pool_fallbacks() counts one per
//     group; the one-time warning is printed exactly once (stdout captured).
//  B. Slots larger than the whole pool (a block of 1024 threads with a 1 KiB argument record):
//     direct mode at once, the holder gone; right sums.
//  C. 300 host launches without synchronization into 2 streams, warp and block granularity mixed,
//     on the small pool: whatever mix of aggregated and direct groups the GPU produces, every
//     child runs exactly once with its own arguments (sums), nothing stays live, no error.
//  D. The pending budget: 8 launches of 512 warps each at warp granularity; every aggregated child
//     reads klap's pending count when it starts: never more than the budget, and 0 at the end.
//     (The budget is klap's rate limit; test D checks klap's counter, not the device's buffer.)
//  E. Groups of one thread (every lane its own warp_group; blocks of one thread at block
//     granularity): nothing to aggregate, so every child runs as written (fb_child) and the pool is
//     not touched at all (its segment words and current segment stay as they were), no fallback is
//     counted, and the sums are right.
//  F. Groups with one launch (only rank 0 of each warp, or of each block, records): the launch is
//     made as written (fb_child), none aggregated, the slots go back, no fallback is counted.
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#define KLAP_POOL_SEGMENT_BYTES 4096ull
#define KLAP_POOL_FALLBACK_WAIT_US 200
#define KLAP_PENDING_BUDGET_PERCENT 1
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <fcntl.h>
#include <unistd.h>
#include <string>

constexpr unsigned long long CAP = klap::pool_segments * klap::pool_segment_bytes;

struct fb_args {
  unsigned id;
  unsigned launch;
  unsigned long long check;
};
// A record larger than the pool once a block of 1024 threads holds one each (part B).
struct fb_big_args {
  unsigned id;
  unsigned launch;
  unsigned long long check;
  unsigned pad[254];
};

// Device counters of one part.
struct fb_counters {
  unsigned long long direct_grids;  // child grids run as written (fb_child)
  unsigned long long agg_grids;     // aggregated child grids (fb_child_agg)
  unsigned long long errors;        // child threads that found a wrong record or index
  unsigned long long max_pending;   // the largest klap pending count an aggregated child saw
};

__host__ __device__ inline unsigned long long fb_check(unsigned id, unsigned l) {
  return kt_mix64((static_cast<unsigned long long>(l) << 32) ^ id) | 1ull;
}
// Child blocks of parent thread id in launch l: 0..2 (0: no launch).
__host__ __device__ inline unsigned fb_blocks(unsigned id, unsigned l) {
  return static_cast<unsigned>(kt_mix64(id * 0x9E3779B97F4A7C15ull + l) % 3u);
}

__device__ inline void fb_body(unsigned long long* sums, unsigned id, unsigned l, unsigned long long check,
                               const uint3& blk, const dim3& grid, fb_counters* c) {
  if (check != fb_check(id, l) || grid.x != fb_blocks(id, l) || blk.x >= grid.x) {
    atomicAdd(&c->errors, 1ull);
    return;
  }
  atomicAdd(&sums[id], static_cast<unsigned long long>(l) + 1ull);
}

// The original child: what a group in direct mode launches.
__global__ void fb_child(unsigned long long* sums, unsigned id, unsigned l, unsigned long long check, fb_counters* c) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&c->direct_grids, 1ull);
  fb_body(sums, id, l, check, blockIdx, gridDim, c);
}

// Its aggregated variant (as ChildVariants writes it).
template <class A>
__global__ void fb_child_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const A* klap_args,
                             unsigned long long* sums, fb_counters* c) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(klap_cfg, klap_n, v, p)) return;
  const unsigned id = klap_args[p].id, l = klap_args[p].launch;
  const unsigned long long check = klap_args[p].check;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    atomicAdd(&c->agg_grids, 1ull);
    atomicMax(&c->max_pending,
              cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(klap::pool_dev().pending).load());
  }
  klap::child_release(klap_cfg, klap_n);
  fb_body(sums, id, l, check, v.blockIdx, v.gridDim, c);
}

// One launch site over group g, as GroupAggregation emits it.
// (first_only: only the group's rank 0 records its launch; the others record nothing.)
template <class A, class G>
__device__ void fb_round(const G& g, unsigned id, unsigned l, unsigned long long* sums, fb_counters* c,
                         bool first_only = false) {
  auto s = klap::agg_begin<A>(g, klap::on_full::launch_as_written);
  const unsigned nb = first_only && g.rank() != 0u ? 0u : fb_blocks(id, l);
  if (nb != 0u) {
    A a{};
    a.id = id;
    a.launch = l;
    a.check = fb_check(id, l);
    s.record(dim3(nb), dim3(32), 0u, cudaStream_t(0), a);
  }
  s.flush(
      g,
      [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* cfg, unsigned n, const A* args,
          const A&) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        fb_child_agg<A><<<gd, bd, sm, st>>>(cfg, n, args, sums, c);
        return klap::launch_result(pre);
      },
      [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const A& a) -> cudaError_t {
        const cudaError_t pre = cudaPeekAtLastError();
        fb_child<<<gd, bd, sm, st>>>(sums, a.id, a.launch, a.check, c);
        return klap::launch_result(pre);
      });
}

// __launch_bounds__(1024), as klap gives the parents it transforms: part B launches 1024-thread
// blocks, and without the bound the runtime's code pushed this kernel past 64 registers per thread
// ("too many resources requested for launch" on the 2026-11-27 GPU run, H200)
template <class A>
__global__ __launch_bounds__(1024) void fb_parent(unsigned long long* sums, unsigned l, bool warp, fb_counters* c) {
  const klap::block_group blk = klap::block_group::hardware();
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (warp) fb_round<A>(klap::warp_group::of(blk), id, l, sums, c);
  else fb_round<A>(blk, id, l, sums, c);
}

// Part E: each thread a group of one (its own lane at warp granularity; blocks of one thread at
// block granularity).
__global__ void fb_alone_parent(unsigned long long* sums, unsigned l, bool warp, fb_counters* c) {
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (warp) fb_round<fb_args>(klap::warp_group::from_mask(1u << (threadIdx.x % 32u)), id, l, sums, c);
  else fb_round<fb_args>(klap::block_group::hardware(), id, l, sums, c);
}

// Part F: only rank 0 of each group (the warp, or the block) launches.
__global__ __launch_bounds__(1024) void fb_first_parent(unsigned long long* sums, unsigned l, bool warp, fb_counters* c) {
  const klap::block_group blk = klap::block_group::hardware();
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (warp) fb_round<fb_args>(klap::warp_group::of(blk), id, l, sums, c, true);
  else fb_round<fb_args>(blk, id, l, sums, c, true);
}

// HOST. The pool's segment words and current segment, as raw words.
static std::vector<unsigned long long> fb_pool_words() {
  const std::vector<unsigned char> raw = kt_pool_state();
  const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
  std::vector<unsigned long long> w(st->seg, st->seg + klap::pool_segments);
  w.push_back(st->cur);
  return w;
}

// HOST. Whether thread id launches in launch l (part F's launch `first_only` of groups of `group`
// threads: only ids that are a multiple of it).
static bool fb_launches(unsigned id, unsigned l, unsigned group) { return id % group == 0u && fb_blocks(id, l) != 0u; }
// HOST. sums[id] after launches [first, first + count) of a grid of `ids` threads.
static std::vector<unsigned long long> fb_expected(unsigned ids, unsigned first, unsigned count, unsigned group = 1u) {
  std::vector<unsigned long long> want(ids, 0ull);
  for (unsigned l = first; l < first + count; ++l)
    for (unsigned id = 0; id < ids; ++id)
      if (fb_launches(id, l, group)) want[id] += (l + 1ull) * fb_blocks(id, l) * 32ull;
  return want;
}
// HOST. Child grids that launches [first, first + count) make when every thread launches as written.
static unsigned long long fb_launching(unsigned ids, unsigned first, unsigned count, unsigned group = 1u) {
  unsigned long long n = 0;
  for (unsigned l = first; l < first + count; ++l)
    for (unsigned id = 0; id < ids; ++id) n += fb_launches(id, l, group);
  return n;
}

struct fb_part {
  unsigned long long* sums;
  fb_counters* c;
  unsigned ids;
  explicit fb_part(unsigned n) : ids(n) {
    KT_CUDA(cudaMalloc(&sums, n * sizeof(unsigned long long)));
    KT_CUDA(cudaMemset(sums, 0, n * sizeof(unsigned long long)));
    KT_CUDA(cudaMalloc(&c, sizeof(fb_counters)));
    KT_CUDA(cudaMemset(c, 0, sizeof(fb_counters)));
  }
  fb_counters counters() const {
    fb_counters h;
    KT_CUDA(cudaMemcpy(&h, c, sizeof(h), cudaMemcpyDeviceToHost));
    return h;
  }
  // Compares the sums with launches [first, first + count) (of groups of `group` threads where only
  // the first launches); returns the mismatches.
  unsigned check(const char* what, unsigned first, unsigned count, unsigned group = 1u) const {
    std::vector<unsigned long long> got(ids);
    KT_CUDA(cudaMemcpy(got.data(), sums, ids * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    const std::vector<unsigned long long> want = fb_expected(ids, first, count, group);
    unsigned bad = 0;
    for (unsigned id = 0; id < ids; ++id)
      if (got[id] != want[id] && ++bad <= 5) std::printf("%s: sums[%u] = %llu, want %llu\n", what, id, got[id], want[id]);
    return bad;
  }
  ~fb_part() {
    cudaFree(sums);
    cudaFree(c);
  }
};

// Part A with fd 1 redirected to a file; returns what the device printed.
static std::string part_a(int* flag, int* d_flag) {
  const unsigned blocks = 8, bs = 256, ids = blocks * bs;
  fb_part p(ids);
  char path[] = "/tmp/klap_test_fallback_XXXXXX";
  const int fd = mkstemp(path);
  std::fflush(stdout);
  const int saved = dup(1);
  dup2(fd, 1);
  const unsigned long long before = klap::host_pool_fallbacks();
  unsigned long long fell = 0;
  const bool held = kt_with_pool_held(flag, d_flag, [&](cudaStream_t run) {
    fb_parent<fb_args><<<blocks, bs, 0, klap::host_prepare(run)>>>(p.sums, 0u, false, p.c);  // block groups
    fb_parent<fb_args><<<blocks, bs, 0, klap::host_prepare(run)>>>(p.sums, 1u, true, p.c);   // warp groups
    KT_CUDA(cudaStreamSynchronize(run));
    fell = klap::host_pool_fallbacks() - before;
  });
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string out;
  char buf[512];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  KT_EXPECT(held, "A: the holder did not take the pool within 5 s");
  const fb_counters h = p.counters();
  KT_EXPECT(p.check("A", 0, 2) == 0u && h.errors == 0ull, "A: wrong sums or %llu bad records", h.errors);
  KT_EXPECT(h.agg_grids == 0ull, "A: %llu grids aggregated while the holder kept the whole pool", h.agg_grids);
  KT_EXPECT(h.direct_grids == fb_launching(ids, 0, 2), "A: %llu child grids as written, want %llu", h.direct_grids,
            fb_launching(ids, 0, 2));
  KT_EXPECT(fell == blocks + blocks * (bs / 32u), "A: %llu fallbacks counted, want %u (one per group)", fell,
            blocks + blocks * (bs / 32u));
  kt_expect_idle("A");
  return out;
}

int main() {
  kt_watchdog("test_fallback", 120);
  int* flag;
  int* d_flag;
  kt_mapped_flag(&flag, &d_flag);
  // load every kernel before part A runs them next to the holder (lazy loading, see test_pool)
  {
    fb_part w(256);
    kt_pool_holder<<<1, 1>>>(d_flag, false);
    fb_parent<fb_args><<<1, 256, 0, klap::host_prepare()>>>(w.sums, 0u, false, w.c);
    fb_parent<fb_big_args><<<1, 32, 0, klap::host_prepare()>>>(w.sums, 0u, true, w.c);
    KT_CUDA(cudaDeviceSynchronize());
  }
  size_t limit = 0;
  KT_CUDA(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  const unsigned long long BUDGET = static_cast<unsigned long long>(limit) * KLAP_PENDING_BUDGET_PERCENT / 100ull;
  KT_EXPECT(limit >= KLAP_PENDING_LAUNCH_LIMIT, "host_prepare left the pending-launch limit at %zu", limit);
  const unsigned long long warm_fallbacks = klap::host_pool_fallbacks();
  KT_EXPECT(warm_fallbacks == 0ull, "warm-up: %llu fallbacks with an empty pool", warm_fallbacks);

  // A. the whole pool held: every group launches as written, one warning
  const std::string out = part_a(flag, d_flag);
  std::printf("test_fallback: A: the device printed:\n%s", out.c_str());
  const std::string warning = "klap: warning: memory pool full while allocating the slots of an aggregated launch";
  const size_t first = out.find(warning);
  KT_EXPECT(first != std::string::npos && out.find(warning, first + 1) == std::string::npos &&
                out.find("launch their children as written") != std::string::npos,
            "A: the fallback warning must be printed exactly once");
  KT_EXPECT(out.find("klap: error") == std::string::npos, "A: an error was printed");

  // B. slots larger than the pool: direct mode at once
  {
    static_assert(1024ull * (sizeof(klap::launch_cfg) + sizeof(fb_big_args)) > CAP, "part B needs slots past the pool");
    fb_part p(4 * 1024);
    const unsigned long long before = klap::host_pool_fallbacks();
    fb_parent<fb_big_args><<<4, 1024, 0, klap::host_prepare()>>>(p.sums, 7u, false, p.c);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const fb_counters h = p.counters();
    KT_EXPECT(p.check("B", 7, 1) == 0u && h.errors == 0ull, "B: wrong sums or %llu bad records", h.errors);
    KT_EXPECT(h.agg_grids == 0ull && klap::host_pool_fallbacks() - before == 4ull,
              "B: %llu aggregated grids, %llu fallbacks (want 0 and 4)", h.agg_grids,
              klap::host_pool_fallbacks() - before);
    kt_expect_idle("B");
  }

  // C. churn on the small pool: 300 launches into 2 streams without synchronizing
  {
    const unsigned blocks = 64, bs = 256, ids = blocks * bs, launches = 300;
    fb_part p(ids);
    cudaStream_t st[2];
    for (auto& s : st) KT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const unsigned long long before = klap::host_pool_fallbacks();
    for (unsigned l = 0; l < launches; ++l)
      fb_parent<fb_args><<<blocks, bs, 0, klap::host_prepare(st[l % 2])>>>(p.sums, l, l % 3 != 0, p.c);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const fb_counters h = p.counters();
    KT_EXPECT(p.check("C", 0, launches) == 0u && h.errors == 0ull, "C: wrong sums or %llu bad records", h.errors);
    std::printf("test_fallback: C: %llu aggregated and %llu as-written child grids, %llu groups fell back, "
                "~%.0f MiB of slots through a pool of %.0f MiB\n",
                h.agg_grids, h.direct_grids, klap::host_pool_fallbacks() - before,
                launches * ids * (sizeof(klap::launch_cfg) + sizeof(fb_args)) / 1048576.0, CAP / 1048576.0);
    kt_expect_idle("C");
    for (auto& s : st) KT_CUDA(cudaStreamDestroy(s));
  }

  // D. the pending budget: aggregated children never see more than BUDGET of klap's launches pending
  {
    const unsigned blocks = 64, bs = 256, ids = blocks * bs, launches = 8;
    fb_part p(ids);
    for (unsigned l = 0; l < launches; ++l)
      fb_parent<fb_args><<<blocks, bs, 0, klap::host_prepare()>>>(p.sums, 100u + l, true, p.c);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const fb_counters h = p.counters();
    KT_EXPECT(p.check("D", 100, launches) == 0u && h.errors == 0ull, "D: wrong sums or %llu bad records", h.errors);
    KT_EXPECT(h.agg_grids > 0ull && h.max_pending >= 1ull && h.max_pending <= BUDGET,
              "D: %llu aggregated grids saw up to %llu of klap's launches pending, budget %llu", h.agg_grids,
              h.max_pending, BUDGET);
    std::printf("test_fallback: D: %llu aggregated grids, at most %llu pending (budget %llu)\n", h.agg_grids,
                h.max_pending, BUDGET);
    kt_expect_idle("D");
  }
  // E. groups of one thread: launched as written, the pool untouched
  {
    const unsigned ids = 64 * 256;
    fb_part p(ids);
    const unsigned long long before = klap::host_pool_fallbacks();
    const std::vector<unsigned long long> words = fb_pool_words();
    fb_alone_parent<<<64, 256, 0, klap::host_prepare()>>>(p.sums, 200u, true, p.c);  // every lane alone
    fb_alone_parent<<<ids, 1, 0, klap::host_prepare()>>>(p.sums, 201u, false, p.c);  // blocks of one thread
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const fb_counters h = p.counters();
    KT_EXPECT(p.check("E", 200, 2) == 0u && h.errors == 0ull, "E: wrong sums or %llu bad records", h.errors);
    KT_EXPECT(h.agg_grids == 0ull && h.direct_grids == fb_launching(ids, 200, 2),
              "E: %llu aggregated and %llu as-written child grids, want 0 and %llu", h.agg_grids, h.direct_grids,
              fb_launching(ids, 200, 2));
    KT_EXPECT(klap::host_pool_fallbacks() == before, "E: %llu fallbacks counted for groups of one thread",
              klap::host_pool_fallbacks() - before);
    KT_EXPECT(fb_pool_words() == words, "E: groups of one thread changed the pool's segment words or current segment");
    kt_expect_idle("E");
  }

  // F. one launch per group: made as written, the slots given back
  {
    const unsigned blocks = 64, bs = 256, ids = blocks * bs;
    const unsigned long long before = klap::host_pool_fallbacks();
    for (const bool warp : {true, false}) {
      fb_part p(ids);
      fb_first_parent<<<blocks, bs, 0, klap::host_prepare()>>>(p.sums, 300u, warp, p.c);
      KT_CUDA(cudaGetLastError());
      KT_CUDA(cudaDeviceSynchronize());
      const fb_counters h = p.counters();
      const unsigned group = warp ? 32u : bs;
      KT_EXPECT(p.check(warp ? "F warp" : "F block", 300, 1, group) == 0u && h.errors == 0ull,
                "F: wrong sums or %llu bad records", h.errors);
      KT_EXPECT(h.agg_grids == 0ull && h.direct_grids == fb_launching(ids, 300, 1, group),
                "F %s: %llu aggregated and %llu as-written child grids, want 0 and %llu", warp ? "warp" : "block",
                h.agg_grids, h.direct_grids, fb_launching(ids, 300, 1, group));
      kt_expect_idle("F");
    }
    KT_EXPECT(klap::host_pool_fallbacks() == before, "F: %llu fallbacks counted", klap::host_pool_fallbacks() - before);
  }
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  KT_CUDA(cudaFreeHost(flag));
  return kt_finish("test_fallback");
}
