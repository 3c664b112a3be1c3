// klap/chunk.cuh -- host launches of a warp/block-granularity parent cut into chunks of blocks, so
// that one host launch never asks klap's pool and pending-launch budget for more than they hold at
// once (issue 11, "Scale": a parent grid of 2^24 threads).
//
// WHY. At warp and block granularity every group of a parent grid takes the slots of its aggregated
// launch from the pool (aggregate.cuh, agg_begin) and gives them back only when the child grid has
// read them (child_release). A child grid is not guaranteed to start while its parent grid still has
// blocks to dispatch (CUDA programming guide, CDP, "Execution Environment"), and on the H200
// (2026-11-30, testcases/src scale -n 16777216, pool_order -n 1048576) it did not: the parent's
// groups filled the pool, fell back to launching as written (pool.cuh, "EXHAUSTION WITH A
// FALLBACK"), and those launches overflowed the device's pending-launch buffer. Kernel granularity
// gives such a launch a record arena of its own (kernel.cuh); warp and block granularity instead
// launch the grid in pieces:
//
//   parent<<<g, b, sm, s>>>(args...)      becomes (generated host code, HostLaunches)
//   klap::host_chunked(g, b, parent_klap_chunk_need, [&](dim3 klap_g, const klap::chunk* klap_c) {
//       if (!klap_c) parent<<<klap_g, b, sm, klap::host_prepare(s, ...)>>>(args...);
//       else parent_klap_chunk<<<klap_g, b, sm, klap::host_prepare(s, ...)>>>(args..., *klap_c); });
//
// host_chunked launches the kernel as written (klap_c null) when the whole grid fits; otherwise it
// launches the twin `parent_klap_chunk` once per chunk of consecutive blocks (in the order x, y, z,
// as the hardware numbers them), all into the launch's stream s. A grid is complete only when every
// grid it launched is (CDP), and work in one stream runs in order, so each chunk starts after the
// previous chunk and all its children have ended: the pool and the budget are empty again. The
// twin runs the parent's code with the original indices: klap::chunk_enter gives it the block's
// index in the whole grid and the whole grid's dimensions (klap::vctx), which it declares as
// `blockIdx` and `gridDim` around the body, as an aggregated child does (ChildVariants).
//
// WHAT CHANGES for the program: blocks of different chunks never run at the same time, and a later
// chunk starts only after the children of the earlier ones ended. A program whose blocks wait for a
// block of a higher index (not guaranteed by CUDA either: blocks may run in any order, one after
// another) would wait forever; no CUDA program may rely on that. Blocks waiting for lower indices
// (decoupled look-back) and grid-wide tickets (`atomicInc(&done, gridDim.x)`) work: gridDim and the
// indices are the original ones. Host code sees one launch: the same stream, the same error (each
// chunk is refused as the whole launch would be: the same block, shared memory and kernel).
#ifndef KLAP_CHUNK_CUH
#define KLAP_CHUNK_CUH

#include "config.cuh"
#include "group.cuh"
#include "aggregate.cuh"

namespace klap {

// One chunk of a host launch cut by host_chunked: blocks [first, first + gridDim.x of the chunk's
// launch) of a grid of dimensions `grid`, numbered x fastest, then y, then z; `start` is block
// `first` as (x, y, z), computed on the host so that the device needs no 64-bit division.
struct chunk {
  unsigned long long first;
  uint3 start;
  dim3 grid;
};

// HOST. The chunk of grid `grid` that starts at linear block `first`.
static inline chunk make_chunk(dim3 grid, unsigned long long first) {
  chunk c;
  c.first = first;
  c.grid = grid;
  c.start.x = static_cast<unsigned>(first % grid.x);
  c.start.y = static_cast<unsigned>((first / grid.x) % grid.y);
  c.start.z = static_cast<unsigned>(first / (static_cast<unsigned long long>(grid.x) * grid.y));
  return c;
}

// What one block of a transformed parent asks at most of klap's pool and pending-launch budget at
// its first level (generated `NAME_klap_chunk_need(dim3 block)`, from the parent's launch sites):
//   bytes     pool bytes of the slots of its aggregated launches (agg_slot_bytes per thread and site)
//   launches  aggregated launches it may have pending at once (1 per site and block at block
//             granularity, 1 per site and warp at warp granularity or in place)
struct chunk_need {
  unsigned long long bytes;
  unsigned long long launches;
};

// The pool bytes one thread's slot of an aggregated launch of records Args takes at most: its
// launch_cfg and Args, plus its share of the allocation's 16-byte header and of the rounding to 16
// bytes, for groups of two threads or more (a group of one takes nothing: agg_begin's direct mode).
template <class Args>
__host__ __device__ constexpr unsigned long long agg_slot_bytes() {
  return sizeof(launch_cfg) + sizeof(Args) + 16ull;
}

// The original index of block `local` (< 2^31) of chunk c's launch: block c.first + local of the
// whole grid c.grid, numbered x fastest, then y, then z (as the hardware numbers a grid's blocks).
// 32-bit arithmetic from c.start: x = start.x + local < 2^32 (start.x < grid.x < 2^31), and the
// carries stay below 2^31 + 65535: no call of the 64-bit division routines on the device.
__host__ __device__ inline uint3 chunk_block(const chunk& c, unsigned local) {
  uint3 r;
  unsigned x = c.start.x + local;
  unsigned carry = x / c.grid.x;
  r.x = x - carry * c.grid.x;
  const unsigned y = c.start.y + carry;
  carry = y / c.grid.y;
  r.y = y - carry * c.grid.y;
  r.z = c.start.z + carry;
  return r;
}

// DEVICE, in a chunk twin: the original indices of the calling thread, for the shadows of the
// built-ins: the chunk's launch is 1-D (gridDim.x blocks) with the original block, so threadIdx and
// blockDim are the hardware's, blockIdx is chunk_block(c, blockIdx.x) and gridDim is c.grid.
__device__ inline vctx chunk_enter(const chunk& c) {
  vctx v;
  v.threadIdx = ::threadIdx;
  v.blockDim = ::blockDim;
  v.gridDim = c.grid;
  v.blockIdx = chunk_block(c, ::blockIdx.x);
  return v;
}

// HOST. How many blocks one chunk of a host launch of `blocks` blocks holds, for blocks that each
// need `need`: as many as keep the chunk within half of klap's pool (KLAP_POOL_SIZE_BYTES; the other
// half for the segments' rounding and for what the children launch) and within klap's share of the
// pending-launch limit host_prepare may raise (KLAP_PENDING_LAUNCH_LIMIT x
// KLAP_PENDING_BUDGET_PERCENT %); at least 1 and at most 2^31-1 (a grid's x dimension).
// KLAP_CHUNK_BLOCKS, when not 0, is the chunk size instead (tests: chunks on small inputs).
// Returns `blocks` or more when the launch needs no chunks.
static inline unsigned long long host_chunk_blocks(unsigned long long blocks, chunk_need need) {
  if (KLAP_CHUNK_BLOCKS != 0) return static_cast<unsigned long long>(KLAP_CHUNK_BLOCKS);
  unsigned long long per = blocks;
  const unsigned long long pool_share = static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES) / 2ull;
  const unsigned long long launch_share =
      static_cast<unsigned long long>(KLAP_PENDING_LAUNCH_LIMIT) * KLAP_PENDING_BUDGET_PERCENT / 100ull;
  if (need.bytes != 0ull && per > pool_share / need.bytes) per = pool_share / need.bytes;
  if (need.launches != 0ull && per > launch_share / need.launches) per = launch_share / need.launches;
  if (per == 0ull) per = 1ull;
  return per < 0x7FFFFFFFull ? per : 0x7FFFFFFFull;
}

// HOST. Makes the host launch <<<grid, block, ...>>> of a transformed parent through `launch`:
// launch(grid, nullptr) once, the kernel as written, when the grid fits klap's pool and budget
// (host_chunk_blocks) or has a configuration the launch itself rejects (no blocks, no threads,
// more than 1024 threads: its error is the original's); otherwise launch(dim3(count), &c) for
// each chunk c, in block order, which launches the twin. `need(block)` gives one block's
// chunk_need. Every chunk is launched even if one fails: the CUDA error state after the last is
// what the single launch would have left (the same configuration fails the same way).
template <class Need, class Launch>
static inline void host_chunked(dim3 grid, dim3 block, Need&& need, Launch&& launch) {
  const unsigned long long blocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  const unsigned long long per = blocks == 0ull || threads == 0ull || threads > 1024ull
                                     ? blocks
                                     : host_chunk_blocks(blocks, need(block));
  if (per >= blocks) {
    launch(grid, static_cast<const chunk*>(nullptr));
    return;
  }
  for (unsigned long long first = 0; first < blocks; first += per) {
    const chunk c = make_chunk(grid, first);
    const unsigned long long count = blocks - first < per ? blocks - first : per;
    launch(dim3(static_cast<unsigned>(count)), &c);
  }
}

}  // namespace klap

#endif  // KLAP_CHUNK_CUH
