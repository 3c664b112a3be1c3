// Where every thread is when a klap output hangs (written 2026-11-29 without a GPU; not yet run).
// Pre-include it into klap's output, before the runtime headers, with the watchdog after each host
// launch (make-trace.py writes such programs; ../../2026-11-27-h200/diag/dbg.cuh is the watchdog):
//   nvcc -std=c++17 -rdc=true -arch=sm_90 -include trace.cuh -I RUNTIME -I ../../2026-11-27-h200/diag ...
// It defines KLAP_TRACE (klap/config.cuh), which the runtime calls at each step of a warp or block
// aggregated launch (klap::trace_point), to record in device memory:
//   * per trace point, how many threads passed it (all grids);
//   * per thread of a parent grid (flat index in its grid, the first KLAPTRACE_THREADS), the last
//     parent-side point it passed, how many it passed, and the grid (%gridid);
//   * for the aggregated child grids: the blocks and grids that entered child_enter (a grid counts
//     when its block 0 enters), and the blocks that counted themselves off the release count.
// When the watchdog finds the program hung, it reads that record through a non-blocking stream (as
// it reads the pool state) and prints it (klaptrace_dump). What it tells apart:
//   * a parent thread whose last point is trace_launch never came back from the device runtime's
//     launch (the launch path itself hangs);
//   * one at trace_sync_any / trace_begin / trace_flush / trace_scanned waits at a group
//     collective (a lane of its group mask never arrives);
//   * one at trace_acquire (kacquire) waits for the pending-launch budget;
//   * kernel granularity: one at kfinish waits at its block's barrier; one at klaunch is inside
//     the launch of a site's aggregated grid;
//   * every parent thread past flush, with launches made > child grids entered: the child grids
//     were made but never started (scheduling);
//   * child blocks entered > blocks released: a child block waits inside child_release.
// Each step costs a few atomics more, which may change whether a run hangs (the hangs of 2026-11-28
// came one run in two): that is why leave-one.sh runs the same programs untraced.
// Limits: one translation unit (static device state: in a two-file program only this file's
// launches are seen); a child grid that itself launches writes the same per-thread slots as its
// parent (the last writer's %gridid says whose).
#pragma once
#include <cstdio>
#include <cuda_runtime.h>
#include <unistd.h>

#define KLAPTRACE_ON 1
#ifndef KLAPTRACE_THREADS
#define KLAPTRACE_THREADS 8192u
#endif

struct klaptrace_state {
  unsigned long long count[64];               // threads that passed each point; 40/41: child blocks/grids entered (warp,
                                              // block), 42/43: the same at kernel granularity
  unsigned stage[KLAPTRACE_THREADS];          // per parent thread: the last parent-side point
  unsigned seq[KLAPTRACE_THREADS];            // ... how many parent-side points it passed
  unsigned long long grid[KLAPTRACE_THREADS]; // ... %gridid of the grid that wrote it last
  unsigned block[KLAPTRACE_THREADS];          // ... its block (linear index) and thread in the block
  unsigned thread[KLAPTRACE_THREADS];
};
static __device__ klaptrace_state klaptrace_dev;

static __device__ __noinline__ void klaptrace_hit(int p) {
  atomicAdd(&klaptrace_dev.count[p & 63], 1ull);
  if ((p == 32 || p == 36) && threadIdx.x == 0u) {  // klap::trace_child_enter, trace_kchild_enter: per block, and grid
    const int at = p == 32 ? 40 : 42;
    atomicAdd(&klaptrace_dev.count[at], 1ull);
    if (blockIdx.x == 0u && blockIdx.y == 0u && blockIdx.z == 0u) atomicAdd(&klaptrace_dev.count[at + 1], 1ull);
  }
  if (p < 32) {
    const unsigned long long b = blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
    const unsigned lt = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned long long t = b * (blockDim.x * blockDim.y * blockDim.z) + lt;
    if (t < KLAPTRACE_THREADS) {
      unsigned long long gid;
      asm volatile("mov.u64 %0, %%gridid;" : "=l"(gid));
      volatile unsigned* stage = klaptrace_dev.stage;
      volatile unsigned* seq = klaptrace_dev.seq;
      volatile unsigned long long* grid = klaptrace_dev.grid;
      stage[t] = static_cast<unsigned>(p);
      seq[t] = seq[t] + 1u;
      grid[t] = gid;
      klaptrace_dev.block[t] = static_cast<unsigned>(b);
      klaptrace_dev.thread[t] = lt;
    }
  }
  __threadfence();
}
#define KLAP_TRACE(point) klaptrace_hit(static_cast<int>(point))

static const char* klaptrace_name(unsigned p) {
  static const char* const names[] = {"-", "begin", "begun", "flush", "direct", "direct_done", "scanned", "nothing",
                                      "lone", "lone_done", "acquire", "launch", "launched", "sync_any", "refused",
                                      "flushed", "krecord", "kfinish", "klast", "kacquire", "klaunch", "klaunched",
                                      "kfinished", "kfinish_synced"};
  if (p < sizeof(names) / sizeof(names[0])) return names[p];
  switch (p) {
    case 32: return "child_enter(threads)";
    case 33: return "child_release(blocks)";
    case 34: return "child_last(grids)";
    case 35: return "child_released(threads)";
    case 36: return "kchild_enter(threads)";
    case 37: return "kchild_release(blocks)";
    case 38: return "kchild_last(grids)";
    case 40: return "child_blocks_entered";
    case 41: return "child_grids_entered";
    case 42: return "kchild_blocks_entered";
    case 43: return "kchild_grids_entered";
    default: return "?";
  }
}

// Host: reads the trace through stream s (non-blocking, so that it runs beside a hung grid) and
// prints it to stderr; `full` adds the per-thread table. Returns false if it could not be read.
static bool klaptrace_dump(const char* label, cudaStream_t s, bool full) {
  static klaptrace_state st;
  const cudaError_t c = cudaMemcpyFromSymbolAsync(&st, klaptrace_dev, sizeof st, 0, cudaMemcpyDeviceToHost, s);
  for (int i = 0; i < 4000 && cudaStreamQuery(s) == cudaErrorNotReady; ++i) usleep(500);
  if (c != cudaSuccess || cudaStreamQuery(s) != cudaSuccess) {
    std::fprintf(stderr, "klaptrace: %s: unreadable (%s)\n", label, cudaGetErrorString(c));
    return false;
  }
  std::fprintf(stderr, "klaptrace: %s: passed:", label);
  for (unsigned p = 0; p < 64; ++p)
    if (st.count[p]) std::fprintf(stderr, " %s=%llu", klaptrace_name(p), st.count[p]);
  std::fprintf(stderr, "\n");
  if (!full) return true;
  unsigned long long by_stage[32] = {};
  unsigned threads = 0;
  for (unsigned t = 0; t < KLAPTRACE_THREADS; ++t)
    if (st.seq[t]) { ++by_stage[st.stage[t] & 31u]; ++threads; }
  std::fprintf(stderr, "klaptrace: %s: %u parent threads by their last point:", label, threads);
  for (unsigned p = 0; p < 32; ++p)
    if (by_stage[p]) std::fprintf(stderr, " %s=%llu", klaptrace_name(p), by_stage[p]);
  std::fprintf(stderr, "\nklaptrace: %s: threads (flat index in their grid) whose last point is inside klap (not a flush's end):\n", label);
  unsigned shown = 0;
  for (unsigned t = 0; t < KLAPTRACE_THREADS && shown < 96; ++t) {
    const unsigned p = st.stage[t];
    // the ends: of a flush (direct_done, nothing, lone_done, flushed), a recorded launch (krecord),
    // a block's kfinish (kfinish_synced) and the last block's (kfinished)
    if (!st.seq[t] || p == 5u || p == 7u || p == 9u || p == 15u || p == 16u || p == 22u || p == 23u) continue;
    std::fprintf(stderr, "  t=%u block=%u thread=%u (warp %u lane %u) last=%s seq=%u grid=%llu\n", t, st.block[t], st.thread[t],
                 st.thread[t] / 32u, st.thread[t] % 32u, klaptrace_name(p), st.seq[t], st.grid[t]);
    ++shown;
  }
  return true;
}
