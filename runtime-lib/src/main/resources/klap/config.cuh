// klap/config.cuh -- compile-time defaults of the klap runtime library.
//
// Every value can be overridden with -DNAME=value on the nvcc command line or with a
// #define before the first #include of a klap header.
//
//   KLAP_POOL_SIZE_BYTES       bytes of the device memory pool from which aggregated launch sites
//                              take their configuration and argument arrays (KLAP paper II-C,
//                              "single global memory pool"). One static __device__ buffer for the
//                              whole program (one per device; pool_state.cuh), reclaimed on the
//                              device as the child grids read their arguments (pool.cuh).
//                              Default 128 MiB.
//                              `klap --pool-size` sets it. Rounded down to whole segments.
//   KLAP_POOL_SEGMENT_BYTES    the pool is cut into segments of this many bytes (a multiple of 16,
//                              at least 1 KiB); small allocations are bumped inside the current
//                              segment, larger ones take whole consecutive segments. Default 64 KiB.
//   KLAP_POOL_WAIT_MS          how long klap::pool_alloc waits for child grids to give memory back
//                              when no segment is free, before it reports the pool exhausted.
//                              Default 500 ms.
//   KLAP_POOL_FALLBACK_WAIT_US how long the slots of an aggregated warp/block launch site
//                              (klap::agg_begin in generated code) wait for memory before the
//                              group gives up aggregating this once and launches its children as
//                              written (correct, slower; a one-time warning says so). Default 1000 us.
//   KLAP_PENDING_BUDGET_PERCENT the share of cudaLimitDevRuntimePendingLaunchCount (read on the
//                              device) that klap's own aggregated launches may hold pending at one
//                              time; an aggregated launch past it waits (up to KLAP_PENDING_WAIT_US)
//                              for earlier children to start. The rest is left to the program's own
//                              launches. Default 50.
//   KLAP_PENDING_WAIT_US       how long such a launch waits before it goes ahead. Default 1000 us.
//   KLAP_PENDING_LAUNCH_LIMIT  the most klap::host_prepare() raises
//                              cudaLimitDevRuntimePendingLaunchCount to; it raises it only as far
//                              as a host launch needs (one aggregated launch per warp of the grid
//                              within klap's budget), and never lowers it.
//                              CDP2 has a fixed pending-launch buffer (default 2048) and no overflow
//                              pool: a device launch past it fails (CUDA programming guide,
//                              "CUDA Dynamic Parallelism", "Launch Environment Configuration").
//                              Default 32768.
//   KLAP_KERNEL_TAIL_FALLBACK  1: at kernel granularity, a parent grid whose launch records find
//                              no room in the pool launches its children as written, into
//                              cudaStreamTailLaunch (kernel.cuh krecord, kstate_new). 0 (default):
//                              it waits KLAP_POOL_WAIT_MS for room and then reports the exhaustion
//                              (what was allocated, the --pool-size that would do) and traps. On the
//                              H200 with CUDA 13.0 (2026-11-27) that fallback hung (testcases/src loops
//                              and dims with --pool-size=64K) and overflowed the pending-launch buffer
//                              (test_kernel_fallback): a clear error is better than a hang until a GPU
//                              shows it correct.
//   KLAP_KERNEL_ARENA_MIN_BYTES a host launch of a kernel-granularity parent whose launch records
//                              would take at least this many bytes (one launch per thread and
//                              site) gets its own record arena from a stream-ordered memory pool
//                              instead of klap's pool (kernel.cuh, "LARGE HOST-LAUNCHED GRIDS").
//                              Default KLAP_POOL_SIZE_BYTES / 4 (32 MiB): the pool's doubling chunks
//                              take up to twice the records' bytes, plus whole segments, so a
//                              launch below it fits the pool and keeps it, as before; 0 gives
//                              every host launch that can tell its configuration an arena (a GPU
//                              check of the arena path on small inputs).
//   KLAP_KERNEL_ARENA_KEEP_BYTES how much freed arena memory klap's arena pool keeps for the next
//                              launches when the program synchronizes (cudaMemPoolAttrReleaseThreshold):
//                              memory the program's own cudaMalloc cannot have meanwhile.
//                              Default 256 MiB.
//   KLAP_CHUNK_BLOCKS          0 (default): a host launch of a warp/block-granularity parent is cut
//                              into chunks of blocks only where the whole grid would ask klap's pool
//                              or pending-launch budget for more than they hold (chunk.cuh); N > 0:
//                              every such host launch that klap rewrote runs in chunks of N blocks
//                              (a GPU check of the chunked path on small inputs).
//   KLAP_TRACE(point)          a hook for diagnosing a hang or a wrong result on a GPU: the runtime
//                              calls it with a klap::trace_point (below) at each step of an
//                              aggregated launch (agg_begin, flush, child_enter, child_release;
//                              krecord, kfinish, kchild_enter, kchild_release). Defined before the first klap header (nvcc
//                              -include benchmarks/results/2026-11-28-h200/diag/trace.cuh) it
//                              records where every thread is; by default it expands to nothing and
//                              costs nothing.
#ifndef KLAP_CONFIG_CUH
#define KLAP_CONFIG_CUH

#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (128ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_POOL_SEGMENT_BYTES
#define KLAP_POOL_SEGMENT_BYTES (64ull * 1024ull)
#endif

#ifndef KLAP_POOL_WAIT_MS
#define KLAP_POOL_WAIT_MS 500
#endif

#ifndef KLAP_POOL_FALLBACK_WAIT_US
#define KLAP_POOL_FALLBACK_WAIT_US 1000
#endif

#ifndef KLAP_PENDING_BUDGET_PERCENT
#define KLAP_PENDING_BUDGET_PERCENT 50
#endif

#ifndef KLAP_PENDING_WAIT_US
#define KLAP_PENDING_WAIT_US 1000
#endif

#ifndef KLAP_KERNEL_TAIL_FALLBACK
#define KLAP_KERNEL_TAIL_FALLBACK 0
#endif

#ifndef KLAP_KERNEL_ARENA_MIN_BYTES
#define KLAP_KERNEL_ARENA_MIN_BYTES (KLAP_POOL_SIZE_BYTES / 4ull)
#endif

#ifndef KLAP_KERNEL_ARENA_KEEP_BYTES
#define KLAP_KERNEL_ARENA_KEEP_BYTES (256ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_PENDING_LAUNCH_LIMIT
#define KLAP_PENDING_LAUNCH_LIMIT 32768
#endif

#ifndef KLAP_CHUNK_BLOCKS
#define KLAP_CHUNK_BLOCKS 0
#endif

#ifndef KLAP_TRACE
#define KLAP_TRACE(point) ((void)0)
#endif

namespace klap {
// The steps of an aggregated launch that KLAP_TRACE is called with (aggregate.cuh, kernel.cuh).
// Parent side (the threads of the group) below 32, in the order a thread passes them; child side
// (the blocks of an aggregated child grid) from 32.
enum trace_point : int {
  trace_begin = 1,          // agg_begin entered (collective)
  trace_begun = 2,          // agg_begin done: slots taken (or direct mode), broadcast
  trace_flush = 3,          // flush entered
  trace_direct = 4,         // direct mode: about to launch as written
  trace_direct_done = 5,    // direct mode: launched, flush returns
  trace_scanned = 6,        // slots scanned, every blocks_incl written (after the second g.sync)
  trace_nothing = 7,        // no launch in the group: slots freed, flush returns
  trace_lone = 8,           // one launch (or > 2^31-1 blocks): about to launch as written
  trace_lone_done = 9,      // ... launched, flush returns
  trace_acquire = 10,       // launcher: taking a pending-budget place (may wait)
  trace_launch = 11,        // launcher: about to make the aggregated launch
  trace_launched = 12,      // launcher: the launch returned
  trace_sync_any = 13,      // at the last barrier of flush (group_sync_any)
  trace_refused = 14,       // the aggregated launch was refused: launching as written
  trace_flushed = 15,       // flush returns after an aggregated launch
  trace_krecord = 16,       // kernel granularity (kernel.cuh): a launch is recorded
  trace_kfinish = 17,       // kfinish entered (every thread of a parent block)
  trace_klast = 18,         // thread 0 of the grid's last block: launching the sites
  trace_kacquire = 19,      // ... taking a pending-budget place for a site (may wait)
  trace_klaunch = 20,       // ... about to make a site's aggregated launch
  trace_klaunched = 21,     // ... the launch returned
  trace_kfinished = 22,     // ... every site launched
  trace_kfinish_synced = 23, // kfinish: past its block barrier (thread 0 then takes the block's ticket)
  trace_child_enter = 32,   // a thread of an aggregated child entered child_enter
  trace_child_release = 33, // thread 0 of a child block counts it off the slots' release count
  trace_child_last = 34,    // ... and it was the last block: the slots are freed
  trace_child_released = 35, // a thread of a child block left child_release (user code follows)
  trace_kchild_enter = 36,   // a thread of a kernel-granularity child entered kchild_enter
  trace_kchild_release = 37, // thread 0 of such a child block counts it off
  trace_kchild_last = 38     // ... and it was the last block of the site's grid
};
}  // namespace klap

#endif  // KLAP_CONFIG_CUH
