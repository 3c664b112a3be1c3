// klap/klap.cuh -- umbrella header of the klap runtime library, included by every file the klap
// compiler writes (`#include "klap/klap.cuh"`). Header-only, namespace klap.
//   config.cuh     defaults: KLAP_POOL_SIZE_BYTES, KLAP_PENDING_LAUNCH_LIMIT
//   pool_state.cuh the pool's device state klap::pool_dev() (one per program)
//   error.cuh      klap::fail, klap::check_launch: report, set the error flag, __trap()
//   smem.cuh       host: raises a kernel's dynamic shared memory limit to what a launch asks for
//   pool.cuh       klap::pool_alloc (device), klap::host_prepare / host_smem / host_pool_error (host)  [KLAP II-C]
//   group.cuh      klap::block_group, warp_group, vctx; group_inclusive_scan / reduce / sum / max /
//                  broadcast
//   aggregate.cuh  klap::launch_cfg, agg_site, agg_begin, child_enter   [KLAP II-A, Fig. 2, Fig. 12]
//   malloc.cuh     klap::group_malloc, group_free                        [KLAP II-C]
//   kernel.cuh     klap::kstate, krecord, kfinish, kchild_enter, host_kstate [KLAP II-B on CDP2]
//   chunk.cuh      klap::host_chunked: a large host launch of a warp/block parent in chunks of blocks
// Requires nvcc -std=c++17 -rdc=true (device-side launches), compute capability 7.0+ (_sync warp
// intrinsics, independent thread scheduling); written for CUDA 12/13 "CDP2".
#ifndef KLAP_KLAP_CUH
#define KLAP_KLAP_CUH

#include <cstdio>
#include <new>
#include <cuda/atomic>
#if __has_include(<cuda/std/algorithm>)  // not in the CCCL of CUDA 13.0; see aggregate.cuh
#include <cuda/std/algorithm>
#endif

#include "config.cuh"
#include "pool_state.cuh"
#include "error.cuh"
#include "smem.cuh"
#include "pool.cuh"
#include "group.cuh"
#include "aggregate.cuh"
#include "malloc.cuh"
#include "kernel.cuh"
#include "chunk.cuh"

#endif  // KLAP_KLAP_CUH
