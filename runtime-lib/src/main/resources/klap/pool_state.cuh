// klap/pool_state.cuh -- the device-side state of the klap memory pool (KLAP paper II-C).
//
// Split from pool.cuh only so that error.cuh (which sets the pool's error flag) and pool.cuh
// (whose allocator reports errors through error.cuh) need no circular include. Include
// "klap/pool.cuh" or "klap/klap.cuh" rather than this file. The allocator itself (size classes,
// free lists, release protocol, memory ordering) is described at the top of pool.cuh.
#ifndef KLAP_POOL_STATE_CUH
#define KLAP_POOL_STATE_CUH

#include "config.cuh"

namespace klap {

// Size classes of the pool: class c holds blocks of (pool_min_block << c) bytes, 16-byte header
// included; 32 classes cover 64 B .. 128 GiB. Blocks are addressed inside the region in units of
// pool_min_block (a 32-bit unit number: regions up to 256 GiB).
constexpr unsigned pool_classes = 32;
constexpr unsigned long long pool_min_block = 64ull;
constexpr unsigned pool_shards = KLAP_POOL_SHARDS;
static_assert((KLAP_POOL_SHARDS & (KLAP_POOL_SHARDS - 1)) == 0 && KLAP_POOL_SHARDS >= 1,
              "klap: KLAP_POOL_SHARDS must be a power of two");

// Values of pool_state::setup.
enum : unsigned {
  pool_unset = 0u,     // no allocation yet: the first one sets the pool up (pool.cuh, pool_ready)
  pool_setting = 1u,   // one thread is setting it up; the others wait
  pool_region = 2u,    // base/capacity hold a region (the host's, or one from the device heap)
  pool_heap_only = 3u  // no region could be made: every allocation is a device malloc of its own
};
// Values of pool_state::region.
enum : unsigned {
  pool_region_none = 0u,
  pool_region_host = 1u,   // cudaMalloc'ed by klap::host_prepare (KLAP_POOL_SIZE_BYTES)
  pool_region_device = 2u  // malloc'ed on the device because no host_prepare ran first
};

// The pool of one translation unit (all fields are written by klap code only).
//   base, capacity  the region blocks are carved from (set once, on the device, by the first
//                   allocation: pool.cuh, pool_ready), capacity in bytes
//   host_base       region offered by klap::host_prepare (capacity KLAP_POOL_SIZE_BYTES), or null;
//                   written by the host before any launch it prepares, read once by the device
//   top             bytes of the region carved into blocks so far (never decreases: carved blocks
//                   are recycled through the free lists, not given back to the region)
//   setup, region   see the enums above
//   error           0 = no error; 1 = klap::fail() was called on the device (pool exhausted,
//                   device-side launch failed, ...). Read from the host with klap::host_pool_error().
//   live[s]         allocations made minus allocations freed by threads of shard s (a per-shard
//                   counter to spread contention; only the sum over shards is meaningful, modulo
//                   2^64). Read from the host with klap::host_pool_live().
//   heads[c][s]     free list of class c, shard s: a Treiber stack head, (ABA tag << 32) | (unit+1)
//                   of the top block, 0 in the low half = empty
struct pool_state {
  char* base;
  unsigned long long capacity;
  char* host_base;
  unsigned long long top;
  unsigned int setup;
  unsigned int region;
  unsigned int error;
  unsigned int pad_;
  unsigned long long live[KLAP_POOL_SHARDS];
  unsigned long long heads[pool_classes][KLAP_POOL_SHARDS];
};

// The 16-byte header in front of every pool allocation (the payload follows it, 16-byte aligned).
//   owner  the pool the block belongs to: a block is always given back to the pool that made it,
//          whichever translation unit's code releases it (a child defined in another file)
//   info   pool_hdr_live | origin << 8 | size class while allocated; pool_hdr_free | class while
//          in a free list (a second release of a block is detected from it)
//   count  while allocated: the release counter of the generated code's protocol (agg_begin's
//          slot arrays: blocks of the aggregated grid that have not released yet); while free:
//          the free list's link, unit+1 of the next block (0 = end)
struct pool_hdr {
  struct pool_state* owner;
  unsigned int info;
  unsigned int count;
};
static_assert(sizeof(pool_hdr) == 16, "klap: pool_hdr must be 16 bytes");
constexpr unsigned pool_hdr_live = 0x4B4C0000u;  // "KL"
constexpr unsigned pool_hdr_free = 0x46520000u;  // "FR"
constexpr unsigned pool_origin_region = 0u;
constexpr unsigned pool_origin_heap = 1u;

// One pool per translation unit: `static` gives internal linkage, so this works with -rdc=true and
// several .cu files that each include klap.cuh (no duplicate-symbol link error). Kernels allocate
// from the pool of the translation unit that defines them; releases go to the pool named in the
// block's header (pool_hdr::owner), so a block made in one unit and released by a child kernel of
// another goes back where it came from. host_prepare() offers a region to the pools of all units
// (a registry shared across units, see pool.cuh). Everything that touches pool_dev (fail,
// check_launch, pool_alloc, pool_free, child_enter, child_release, agg_site, agg_begin, the
// kernel-granularity functions, host_prepare, host_pool_error, host_pool_live) has
// internal linkage too (`static` or an unnamed namespace), so that the device linker never merges
// two translation units' copies into one that uses the other unit's pool. __device__ variables are
// zero-initialized when the module is loaded: every free list starts empty, setup = pool_unset.
static __device__ pool_state pool_dev;

}  // namespace klap

#endif  // KLAP_POOL_STATE_CUH
