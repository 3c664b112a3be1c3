// Churn at KERNEL granularity (klap/kernel.cuh): record chunks and device-made states (kstate_new)
// are freed on the device by the last child block of each site (kchild_release) and kfinish's own
// reference; host states (host_kstate) come from cudaMallocAsync and are freed in stream order by
// host_kstate_done. The pool is 2 MiB here (32 segments of 64 KiB). Kernels are written as klap
// writes them (KernelGranularity, ChildVariants, HostLaunches):
//  A. 400 host launches of a kernel-granularity parent (8 x 128 threads, 2 sites: ~700 records of
//     0..3 blocks at site 0, ~200 records at site 1; one chunk of 1024 records per site, 120 KiB
//     per launch: a span of 2 segments and most of a third; 47 MiB in all) round-robin into 2
//     streams without synchronizing, each launch written as
//     (parent<<<g, b, 0, klap::host_prepare(s)>>>(..., klap::host_kstate(2)), klap::host_kstate_done());
//  B. four recursive kernel-granularity trees (tree_common.cuh: 13 levels of ~8000 threads), two
//     at a time in two streams: each level is one aggregated grid whose kfinish launches the next
//     level with a state from klap::kstate_new (given back with kstate_discard if the launch
//     failed): 12 record chunks (a 2-segment span each) and 13 states per tree, ~3 MiB for the
//     four trees;
//  C. two host threads at once, each with a stream of its own, 200 launches of A's parent each
//     (host_kstate / host_kstate_done are per host thread);
//  D. 100 device launches of A's parent, each from a plain kernel that takes the state from
//     klap::kstate_new (~12 MiB of chunks and states through the 2 MiB pool).
// Checks: every child thread ran exactly once with its own record (per-parent-thread counters, the
// records' check words, the trees' per-level counts and id sums); no pool allocation is live after
// each phase (chunks and device states were freed); the stream-ordered allocator holds no more
// memory after each phase than before the test (every host state was freed); no klap error.
#define KLAP_POOL_SIZE_BYTES (2ull << 20)
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include "agg_common.cuh"
#include "tree_common.cuh"
#include <chrono>
#include <thread>

constexpr unsigned KB = 8, KT = 128, IDS = KB * KT;
constexpr unsigned A_LAUNCHES = 400, C_LAUNCHES = 200, D_LAUNCHES = 100, TREES = 4;

// ---- a kernel-granularity parent with two sites -------------------------------------------------

struct mark_args {
  unsigned id;
  unsigned launch;
};

// Site 0's child: child<<<churn_blocks(id, l), 32>>>(sums, id, l, check) adds l + 1 to sums[id]
// in every thread (the plan of agg_common.cuh). launch is a grid-uniform scalar.
__global__ void kchild0_klap_kagg(const klap::ksite* klap_site, unsigned long long* sums, unsigned launch,
                                  unsigned* errors) {
  klap::vctx klap_v;
  const churn_args* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  const churn_args a = *klap_a;
  klap::kchild_release(klap_site);
  const bool ok = a.check == churn_check(a.id, a.launch) && a.launch == launch && a.id < IDS &&
                  klap_v.gridDim.x == churn_blocks(a.id, a.launch) && klap_v.blockIdx.x < klap_v.gridDim.x &&
                  klap_v.blockDim.x == 32u;
  if (ok) atomicAdd(&sums[a.id], static_cast<unsigned long long>(launch) + 1ull);
  else atomicAdd(errors, 1u);
}

// Site 1's child: mark<<<1, 16>>>(marks, id, l) adds 1 to marks[id] in every thread.
__global__ void kchild1_klap_kagg(const klap::ksite* klap_site, unsigned* marks, unsigned launch, unsigned* errors) {
  klap::vctx klap_v;
  const mark_args* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  const mark_args a = *klap_a;
  klap::kchild_release(klap_site);
  if (a.launch == launch && a.id < IDS && a.id % 5u == 0u && klap_v.gridDim.x == 1u && klap_v.blockDim.x == 16u)
    atomicAdd(&marks[a.id], 1u);
  else
    atomicAdd(errors, 1u);
}

// The kernel-granularity twin of the parent: thread id launches site 0's child (0..3 blocks) and,
// if id % 5 == 0, site 1's.
__global__ void kparent_klap_grid(unsigned long long* sums, unsigned* marks, unsigned l, unsigned* errors,
                                  klap::kstate* klap_ks) {
  [&]() {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    klap::krecord<churn_args>(klap_ks, 0u, dim3(churn_blocks(id, l)), dim3(32), 0u, (cudaStream_t)0,
                              churn_args{id, l, churn_check(id, l)});  // 0 blocks: records nothing
    if (id % 5u == 0u) klap::krecord<mark_args>(klap_ks, 1u, dim3(1), dim3(16), 0u, (cudaStream_t)0, mark_args{id, l});
  }();
  klap::kfinish(
      klap_ks, 0u,
      [&](const klap::ksite* klap_ksite, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        const cudaError_t klap_pre = cudaPeekAtLastError();
        kchild0_klap_kagg<<<g, b, sm, st>>>(klap_ksite, sums, klap::kfirst_args<churn_args>(klap_ksite).launch, errors);
        return klap::launch_result(klap_pre);
      },
      [&](const klap::ksite* klap_ksite, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
        const cudaError_t klap_pre = cudaPeekAtLastError();
        kchild1_klap_kagg<<<g, b, sm, st>>>(klap_ksite, marks, klap::kfirst_args<mark_args>(klap_ksite).launch, errors);
        return klap::launch_result(klap_pre);
      });
}

// D: a plain kernel that launches the kernel-granularity parent from the device, with a fresh
// state from the pool (what the generated launch lambdas do for a child with a kernel state).
__global__ void starter(unsigned long long* sums, unsigned* marks, unsigned l, unsigned* errors, unsigned* launch_errors) {
  if (threadIdx.x != 0) return;
  const cudaError_t klap_pre = cudaPeekAtLastError();
  klap::kstate* klap_cks = klap::kstate_new(2);
  kparent_klap_grid<<<KB, KT>>>(sums, marks, l, errors, klap_cks);
  const cudaError_t klap_e = klap::launch_result(klap_pre);
  if (klap_e != cudaSuccess) {
    klap::kstate_discard(klap_cks);
    atomicAdd(launch_errors, 1u);
  }
}

// ---- the recursive tree at kernel granularity ---------------------------------------------------

__global__ void ktree_klap_kagg(const klap::ksite* klap_site, unsigned level, tree_results* r, klap::kstate* klap_ks);

__device__ void ktree_body(unsigned level, unsigned long long id, tree_results* r, klap::kstate* klap_ks) {
  atomicAdd(&r->count[level], 1ull);
  atomicAdd(&r->idsum[level], id);
  const unsigned nb = tree_grid(id);
  if (level < TREE_D && nb != 0u) {
    atomicAdd(&r->launches[level], 1ull);
    klap::krecord<tree_args>(klap_ks, 0u, dim3(nb), dim3(tree_block(id)), 0u, (cudaStream_t)0,
                             tree_args{id, level + 1u, tree_check(id, level + 1u)});
  }
}

// kfinish of a tree grid: the next level is one grid with a state of its own (kstate_new).
__device__ void ktree_finish(tree_results* r, klap::kstate* klap_ks) {
  klap::kfinish(klap_ks, 0u, [&](const klap::ksite* klap_ksite, dim3 g, dim3 b, unsigned sm, cudaStream_t st) -> cudaError_t {
    const cudaError_t klap_pre = cudaPeekAtLastError();
    klap::kstate* klap_cks = klap::kstate_new(1);
    ktree_klap_kagg<<<g, b, sm, st>>>(klap_ksite, klap::kfirst_args<tree_args>(klap_ksite).level, r, klap_cks);
    const cudaError_t klap_e = klap::launch_result(klap_pre);
    if (klap_e != cudaSuccess) klap::kstate_discard(klap_cks);
    return klap_e;
  });
}

// The kernel-granularity aggregated variant of tree, itself a kernel-granularity parent.
__global__ void ktree_klap_kagg(const klap::ksite* klap_site, unsigned level, tree_results* r, klap::kstate* klap_ks) {
  klap::vctx klap_v;
  const tree_args* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  const tree_args a = *klap_a;
  klap::kchild_release(klap_site);
  if (a.level != level || a.check != tree_check(a.parent_id, a.level) || klap_v.gridDim.x != tree_grid(a.parent_id) ||
      klap_v.blockDim.x != tree_block(a.parent_id) || klap_v.blockIdx.x >= klap_v.gridDim.x)
    atomicAdd(&r->errors, 1u);
  [&]() { ktree_body(level, tree_child_id(a.parent_id, klap_v.blockIdx.x, klap_v.threadIdx.x), r, klap_ks); }();
  ktree_finish(r, klap_ks);
}

// The host-launched root of the tree (the twin of tree with its state).
__global__ void ktree_klap_grid(unsigned seed, tree_results* r, klap::kstate* klap_ks) {
  [&]() { ktree_body(0u, tree_root_id(seed, blockIdx.x * blockDim.x + threadIdx.x), r, klap_ks); }();
  ktree_finish(r, klap_ks);
}

// ---- host ---------------------------------------------------------------------------------------

static unsigned long long async_used() {
  int dev = 0;
  KT_CUDA(cudaGetDevice(&dev));
  cudaMemPool_t mp;
  KT_CUDA(cudaDeviceGetDefaultMemPool(&mp, dev));
  unsigned long long used = 0;  // the attribute is a cuuint64_t (64-bit)
  KT_CUDA(cudaMemPoolGetAttribute(mp, cudaMemPoolAttrUsedMemCurrent, &used));
  return static_cast<unsigned long long>(used);
}

static unsigned long long used_before = 0;

static void expect_idle(const char* phase) {
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.error == 0u, "%s: %llu pool allocations still live in %u segments, error %u", phase,
            s.live, s.busy, s.error);
  kt_expect_no_pending(s, phase);
  const unsigned long long used = async_used();
  KT_EXPECT(used == used_before, "%s: the stream-ordered allocator has %llu bytes in use, %llu before: host states not freed",
            phase, used, used_before);
}

static unsigned check_marks(const char* what, const unsigned* d_marks, unsigned launches) {
  std::vector<unsigned> h(IDS);
  KT_CUDA(cudaMemcpy(h.data(), d_marks, IDS * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  for (unsigned id = 0; id < IDS; ++id) {
    const unsigned want = id % 5u == 0u ? 16u * launches : 0u;
    if (h[id] != want && ++bad <= 5) std::printf("%s: marks[%u] = %u, want %u\n", what, id, h[id], want);
  }
  return bad;
}

struct counters {
  unsigned long long* sums;
  unsigned* marks;
  unsigned* errors;
  void alloc() {
    KT_CUDA(cudaMalloc(&sums, IDS * sizeof(unsigned long long)));
    KT_CUDA(cudaMalloc(&marks, IDS * sizeof(unsigned)));
    KT_CUDA(cudaMalloc(&errors, 2 * sizeof(unsigned)));
    KT_CUDA(cudaMemset(sums, 0, IDS * sizeof(unsigned long long)));
    KT_CUDA(cudaMemset(marks, 0, IDS * sizeof(unsigned)));
    KT_CUDA(cudaMemset(errors, 0, 2 * sizeof(unsigned)));
  }
  void check(const char* what, unsigned first, unsigned launches) const {
    KT_EXPECT(churn_check_sums(what, sums, errors, IDS, first, launches) == 0, "%s: site 0: wrong counters", what);
    KT_EXPECT(check_marks(what, marks, launches) == 0, "%s: site 1: wrong marks", what);
  }
};

static void host_thread(counters c, unsigned first, int* failed) {
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    *failed = 1;
    return;
  }
  for (unsigned l = first; l < first + C_LAUNCHES; ++l)
    (kparent_klap_grid<<<KB, KT, 0, klap::host_prepare(s)>>>(c.sums, c.marks, l, c.errors, klap::host_kstate(2)),
     klap::host_kstate_done());
  if (cudaGetLastError() != cudaSuccess) *failed = 1;
  if (cudaStreamSynchronize(s) != cudaSuccess) *failed = 1;
  if (cudaStreamDestroy(s) != cudaSuccess) *failed = 1;
}

int main() {
  kt_watchdog("test_kernel_churn", 150);
  counters ca, cc1, cc2, cd;
  ca.alloc();
  cc1.alloc();
  cc2.alloc();
  cd.alloc();
  tree_results* trees;
  unsigned* launch_errors;
  KT_CUDA(cudaMalloc(&trees, TREES * sizeof(tree_results)));
  KT_CUDA(cudaMemset(trees, 0, TREES * sizeof(tree_results)));
  KT_CUDA(cudaMalloc(&launch_errors, sizeof(unsigned)));
  KT_CUDA(cudaMemset(launch_errors, 0, sizeof(unsigned)));
  cudaStream_t s[2];
  for (auto& x : s) KT_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  KT_CUDA(cudaDeviceSynchronize());
  used_before = async_used();
  // one launch's record chunks: chunk 0 (1024 records) of site 0 and of site 1
  const double per_launch = 1024.0 * (sizeof(klap::kcfg) + sizeof(churn_args)) + 1024.0 * (sizeof(klap::kcfg) + sizeof(mark_args));
  const double mib = 1048576.0;

  // A. host loop into two streams
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < A_LAUNCHES; ++l)
    (kparent_klap_grid<<<KB, KT, 0, klap::host_prepare(s[l % 2])>>>(ca.sums, ca.marks, l, ca.errors,
                                                                     klap::host_kstate(2)),
     klap::host_kstate_done());
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::printf("test_kernel_churn: A: %u host launches into 2 streams, ~%.0f MiB of record chunks, %.0f ms\n", A_LAUNCHES,
              A_LAUNCHES * per_launch / mib,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  ca.check("A", 0, A_LAUNCHES);
  expect_idle("A (host loop)");

  // B. recursive trees
  t0 = std::chrono::steady_clock::now();
  for (unsigned t = 0; t < TREES; ++t)
    (ktree_klap_grid<<<TREE_RB, TREE_RT, 0, klap::host_prepare(s[t % 2])>>>(1u + t, trees + t, klap::host_kstate(1)),
     klap::host_kstate_done());
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::printf("test_kernel_churn: B: %u recursive trees of %u levels, %.0f ms\n", TREES, TREE_D + 1,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  std::vector<tree_results> got(TREES);
  KT_CUDA(cudaMemcpy(got.data(), trees, TREES * sizeof(tree_results), cudaMemcpyDeviceToHost));
  for (unsigned t = 0; t < TREES; ++t) {
    char what[32];
    std::snprintf(what, sizeof(what), "B tree %u", 1u + t);
    KT_EXPECT(tree_compare(what, got[t], tree_expected(1u + t)) == 0, "%s: wrong counts, id sums or launches", what);
  }
  expect_idle("B (recursive trees)");

  // C. two host threads
  int failed[2] = {0, 0};
  t0 = std::chrono::steady_clock::now();
  std::thread h1(host_thread, cc1, 0u, &failed[0]);
  std::thread h2(host_thread, cc2, C_LAUNCHES, &failed[1]);
  h1.join();
  h2.join();
  KT_CUDA(cudaDeviceSynchronize());
  std::printf("test_kernel_churn: C: 2 host threads x %u launches, %.0f ms\n", C_LAUNCHES,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  KT_EXPECT(failed[0] == 0 && failed[1] == 0, "C: a CUDA call failed in a host thread (%d, %d)", failed[0], failed[1]);
  cc1.check("C thread 1", 0, C_LAUNCHES);
  cc2.check("C thread 2", C_LAUNCHES, C_LAUNCHES);
  expect_idle("C (two host threads)");

  // D. device launches with kstate_new
  t0 = std::chrono::steady_clock::now();
  for (unsigned l = 0; l < D_LAUNCHES; ++l)
    starter<<<1, 32, 0, klap::host_prepare(0)>>>(cd.sums, cd.marks, l, cd.errors, launch_errors);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::printf("test_kernel_churn: D: %u device launches with kstate_new, ~%.0f MiB of record chunks, %.0f ms\n",
              D_LAUNCHES, D_LAUNCHES * per_launch / mib,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  unsigned hl = 0;
  KT_CUDA(cudaMemcpy(&hl, launch_errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_EXPECT(hl == 0u, "D: %u device launches of the kernel-granularity parent failed", hl);
  cd.check("D", 0, D_LAUNCHES);
  expect_idle("D (device launches)");

  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  return kt_finish("test_kernel_churn");
}
