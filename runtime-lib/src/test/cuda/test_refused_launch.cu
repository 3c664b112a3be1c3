// An aggregated launch that the device runtime refuses although each child's own configuration was
// accepted: the program raised the child's dynamic shared memory limit where klap could not see it
// (cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 KiB) in another
// file), so the aggregated variant keeps the default of 48 KB and a group whose largest record asks
// for 64 KiB cannot launch it. Before, check_launch trapped ("device-side launch failed") where the
// original program ran. Now agg_site::flush launches every recorded child as written, each thread
// its own, where the aggregated launch would have been (aggregate.cuh), kfinish does the same for
// a site's records (kernel.cuh, klap::klaunch_pair), and the program is warned once.
// Checked at warp, block and kernel granularity (kfinish: the grid's last block launches a refused
// site's records as written), with the attribute on the child only (every group's
// aggregated launch with a 64 KiB record is refused: each of its children runs as written) and on
// the variant too (nothing is refused: every child runs aggregated):
//   - every child thread runs once (slots), with 64 KiB or 1 KiB of dynamic shared memory that it
//     writes and reads back;
//   - each parent thread's children run in the order it launched them (a per-thread ticket that
//     each child advances with a compare-and-swap from the launch's own number: the NULL stream
//     orders one block's launches, and a refused group launches where the aggregated launch was);
//   - the program's own cudaGetLastError() after each launch reads cudaSuccess (klap's refused
//     launch is not the program's error);
//   - afterwards the pool is empty, nothing is counted pending, no error.
// And with only thread 0 of the grid launching (2026-11-29): every group (warp, block) and every
// kernel-granularity bucket then holds one launch, which is made as written, never aggregated,
// whether or not the variant has the attribute (flush's one-launch path; kfinish's one-record
// site, klaunchers::as_written).
// Thread t launches in round r unless (t + r) % 5 == 3 (some threads record nothing); it asks for
// 64 KiB if t % 3 == 0, else 1 KiB (every warp of the grid has a 64 KiB record), except in round 1,
// where every thread asks for 1 KiB: that round's aggregated launches are accepted even without
// the attribute, so one kernel mixes refused and accepted groups, and the tickets check the order
// across both paths.
// Assumed, not yet seen on a GPU: the device runtime refuses a launch with more dynamic shared
// memory than the kernel allows at the launch itself (its error returned there).
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr unsigned kThreads = 256, kBlock = 128, kRounds = 4, kBig = 64u << 10, kSmall = 1u << 10;

struct big_args {
  unsigned parent;
  unsigned ticket;  // the parent thread's launch number, 0, 1, ...
  unsigned words;   // dynamic shared memory, 4-byte words
};

struct counters {
  unsigned errors;        // a child found its shared memory or its ticket wrong
  unsigned direct_grids;  // child grids launched as written (one block each)
  unsigned agg_blocks;    // blocks of aggregated child grids
  unsigned program_errors;  // a parent thread's cudaGetLastError() after its launch was not success
};

__host__ __device__ inline bool launches(unsigned t, unsigned r) { return (t + r) % 5u != 3u; }
// Whether thread t launches in round r when `only` thread 0 of the grid launches, or all do.
__host__ __device__ inline bool launches(unsigned t, unsigned r, bool only) { return (!only || t == 0u) && launches(t, r); }
__host__ __device__ inline unsigned smem_of(unsigned t, unsigned r) { return r != 1u && t % 3u == 0u ? kBig : kSmall; }

// The child's body, as written: every thread writes its word and the last word of its dynamic
// shared memory, the block syncs, thread 0 reads every thread's word back and advances the parent
// thread's ticket from this launch's number.
__device__ void body(const big_args& a, unsigned tid, unsigned* slots, unsigned* tickets, counters* c) {
  extern __shared__ unsigned sm[];
  sm[tid] = a.parent * 32u + tid;
  if (tid == 0u) sm[a.words - 1u] = 0xC0FFEEu;
  __syncthreads();
  if (tid == 0u) {
    bool ok = sm[a.words - 1u] == 0xC0FFEEu;
    for (unsigned i = 0; i < 32u; ++i) ok = ok && sm[i] == a.parent * 32u + i;
    if (atomicCAS(&tickets[a.parent], a.ticket, a.ticket + 1u) != a.ticket) ok = false;
    if (!ok) atomicAdd(&c->errors, 1u);
  }
  atomicAdd(&slots[a.parent * 32u + tid], 1u);
}

// The original child (the program raises its limit to 64 KiB).
__global__ void big_child(big_args a, unsigned* slots, unsigned* tickets, counters* c) {
  if (threadIdx.x == 0u) atomicAdd(&c->direct_grids, 1u);
  body(a, threadIdx.x, slots, tickets, c);
}

// Its aggregated variant, as klap writes it (ChildVariants): no attribute unless the test sets one.
__global__ void big_child_agg(const klap::launch_cfg* cfg, unsigned n, const big_args* args, unsigned* slots,
                              unsigned* tickets, counters* c) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  const big_args a = args[p];
  klap::child_release(cfg, n);
  if (v.threadIdx.x == 0u) atomicAdd(&c->agg_blocks, 1u);
  body(a, v.threadIdx.x, slots, tickets, c);
}

// Its kernel-granularity variant (klap's child_klap_kagg_*): no attribute either.
__global__ void big_child_kagg(const klap::ksite* site, unsigned* slots, unsigned* tickets, counters* c) {
  klap::vctx v;
  const big_args* a;
  if (!klap::kchild_enter(site, v, a)) return;
  const big_args mine = *a;
  klap::kchild_release(site);
  if (v.threadIdx.x == 0u) atomicAdd(&c->agg_blocks, 1u);
  body(mine, v.threadIdx.x, slots, tickets, c);
}

// kRounds launch sites in a loop, aggregated over g as generated code does (on_full::launch_as_written,
// a direct launcher), each followed by the program's own error check.
template <class G>
__device__ void rounds(const G& g, unsigned t, unsigned* slots, unsigned* tickets, counters* c, bool only) {
  unsigned ticket = 0;
  for (unsigned r = 0; r < kRounds; ++r) {
    auto s = klap::agg_begin<big_args>(g, klap::on_full::launch_as_written);
    const bool mine = launches(t, r, only);
    if (mine) s.record(dim3(1), dim3(32), smem_of(t, r), cudaStream_t(0), big_args{t, ticket, smem_of(t, r) / 4u});
    s.flush(
        g,
        [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* cfg, unsigned n,
            const big_args* a, const big_args&) -> cudaError_t {
          const cudaError_t pre = cudaPeekAtLastError();
          big_child_agg<<<gd, bd, sm, st>>>(cfg, n, a, slots, tickets, c);
          return klap::launch_result(pre);
        },
        [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const big_args& a) -> cudaError_t {
          const cudaError_t pre = cudaPeekAtLastError();
          big_child<<<gd, bd, sm, st>>>(a, slots, tickets, c);
          return klap::launch_result(pre);
        });
    if (mine) {
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&c->program_errors, 1u);
      ++ticket;
    }
  }
}

__global__ void parent_warp(unsigned* slots, unsigned* tickets, counters* c, bool only) {
  const klap::block_group b = klap::block_group::hardware();
  rounds(klap::warp_group::of(b), blockIdx.x * blockDim.x + threadIdx.x, slots, tickets, c, only);
}

__global__ void parent_block(unsigned* slots, unsigned* tickets, counters* c, bool only) {
  rounds(klap::block_group::hardware(), blockIdx.x * blockDim.x + threadIdx.x, slots, tickets, c, only);
}

// Kernel granularity, as generated code writes a launch into the NULL stream in a loop: one ordered
// site (krecord_seq: the thread's j-th launch goes to bucket j), and kfinish with the site's
// launchers paired with the launch as written (klap::klaunch_pair): a refused bucket's records are
// launched as written by the grid's last block.
__global__ void parent_kernel(unsigned* slots, unsigned* tickets, counters* c, klap::kstate* klap_ks, bool only) {
  [&]() {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned klap_seq = 0, ticket = 0;
    for (unsigned r = 0; r < kRounds; ++r) {
      if (!launches(t, r, only)) continue;
      klap::krecord_seq<big_args>(
          klap_ks, 0u, 1u, 0u, klap_seq, dim3(1), dim3(32), smem_of(t, r), cudaStream_t(0),
          big_args{t, ticket, smem_of(t, r) / 4u},
          [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const big_args& a) -> cudaError_t {
            const cudaError_t pre = cudaPeekAtLastError();
            big_child<<<gd, bd, sm, st>>>(a, slots, tickets, c);
            return klap::launch_result(pre);
          });
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&c->program_errors, 1u);
      ++ticket;
    }
  }();
  klap::kfinish(klap_ks, 1u,
                klap::klaunch_pair<big_args>(
                    [&](const klap::ksite* s, dim3 gd, dim3 bd, unsigned sm, cudaStream_t st) -> cudaError_t {
                      const cudaError_t pre = cudaPeekAtLastError();
                      big_child_kagg<<<gd, bd, sm, st>>>(s, slots, tickets, c);
                      return klap::launch_result(pre);
                    },
                    [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const big_args& a) -> cudaError_t {
                      const cudaError_t pre = cudaPeekAtLastError();
                      big_child<<<gd, bd, sm, st>>>(a, slots, tickets, c);
                      return klap::launch_result(pre);
                    }));
}

enum class gran { warp, block, kernel };

static void run(const char* what, gran g, bool variant_raised, bool only = false) {
  unsigned *slots = nullptr, *tickets = nullptr;
  counters* c = nullptr;
  KT_CUDA(cudaMalloc(&slots, kThreads * 32u * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&tickets, kThreads * sizeof(unsigned)));
  KT_CUDA(cudaMalloc(&c, sizeof(counters)));
  KT_CUDA(cudaMemset(slots, 0, kThreads * 32u * sizeof(unsigned)));
  KT_CUDA(cudaMemset(tickets, 0, kThreads * sizeof(unsigned)));
  KT_CUDA(cudaMemset(c, 0, sizeof(counters)));
  for (const void* k : {(const void*)big_child_agg, (const void*)big_child_kagg})
    KT_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, variant_raised ? static_cast<int>(kBig) : 48 * 1024));
  const unsigned grid = kThreads / kBlock;
  if (g == gran::warp) parent_warp<<<grid, kBlock, 0, klap::host_prepare(0, klap::host_warps(grid, kBlock))>>>(slots, tickets, c, only);
  else if (g == gran::block) parent_block<<<grid, kBlock, 0, klap::host_prepare(0, klap::host_warps(grid, kBlock))>>>(slots, tickets, c, only);
  else (parent_kernel<<<grid, kBlock, 0, klap::host_prepare(0, klap::host_warps(grid, kBlock))>>>(
            slots, tickets, c, klap::host_kstate(KLAP_KERNEL_MAX_ORDERED), only), klap::host_kstate_done());
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned> s(kThreads * 32u), tk(kThreads);
  counters h{};
  KT_CUDA(cudaMemcpy(s.data(), slots, s.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(tk.data(), tickets, tk.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&h, c, sizeof(counters), cudaMemcpyDeviceToHost));
  unsigned launched = 0, small_round = 0;  // small_round: round 1's launches (1 KiB each)
  for (unsigned t = 0; t < kThreads; ++t) {
    unsigned want = 0;
    for (unsigned r = 0; r < kRounds; ++r) want += launches(t, r, only) ? 1u : 0u;
    small_round += launches(t, 1u, only) ? 1u : 0u;
    launched += want;
    KT_EXPECT(tk[t] == want, "%s: thread %u: %u of its %u children ran in order", what, t, tk[t], want);
    for (unsigned i = 0; i < 32u; ++i)
      KT_EXPECT(s[t * 32u + i] == want, "%s: thread %u slot %u = %u, want %u", what, t, i, s[t * 32u + i], want);
  }
  KT_EXPECT(h.errors == 0u, "%s: %u children found their shared memory or ticket wrong", what, h.errors);
  KT_EXPECT(h.program_errors == 0u, "%s: %u program error checks read an error", what, h.program_errors);
  if (only)
    KT_EXPECT(h.direct_grids == launched && h.agg_blocks == 0u && launched == 3u,
              "%s: %u children as written, %u aggregated blocks (want %u and 0: one launch per group or site)", what,
              h.direct_grids, h.agg_blocks, launched);
  else if (variant_raised)
    KT_EXPECT(h.direct_grids == 0u && h.agg_blocks == launched,
              "%s: %u children as written, %u aggregated blocks (want 0 and %u: nothing refused)", what,
              h.direct_grids, h.agg_blocks, launched);
  else if (g == gran::kernel)  // bucket j holds every thread's j-th launch, of any round: some are refused
    KT_EXPECT(h.direct_grids > 0u && h.direct_grids + h.agg_blocks == launched,
              "%s: %u children as written, %u aggregated blocks (want some as written, %u in all)", what,
              h.direct_grids, h.agg_blocks, launched);
  else
    KT_EXPECT(h.direct_grids == launched - small_round && h.agg_blocks == small_round,
              "%s: %u children as written, %u aggregated blocks (want %u and %u: every aggregated launch refused "
              "but round 1's)",
              what, h.direct_grids, h.agg_blocks, launched - small_round, small_round);
  kt_expect_idle(what);
  std::printf("test_refused_launch: %s: %u children, %u as written, %u aggregated blocks\n", what, launched,
              h.direct_grids, h.agg_blocks);
  KT_CUDA(cudaFree(slots));
  KT_CUDA(cudaFree(tickets));
  KT_CUDA(cudaFree(c));
}

int main() {
  kt_watchdog("test_refused_launch", 60);
  // the program's own attribute, on the child it launches (klap's variant does not get it)
  KT_CUDA(cudaFuncSetAttribute(big_child, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kBig)));
  run("warp, attribute on the child only", gran::warp, false);
  run("block, attribute on the child only", gran::block, false);
  run("kernel, attribute on the child only", gran::kernel, false);
  run("warp, attribute on the variant too", gran::warp, true);
  run("block, attribute on the variant too", gran::block, true);
  run("kernel, attribute on the variant too", gran::kernel, true);
  run("warp, thread 0 alone", gran::warp, true, true);
  run("block, thread 0 alone", gran::block, true, true);
  run("kernel, thread 0 alone", gran::kernel, true, true);
  run("kernel, thread 0 alone, attribute on the child only", gran::kernel, false, true);
  return kt_finish("test_refused_launch");
}
