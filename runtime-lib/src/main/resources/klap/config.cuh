// klap/config.cuh -- compile-time defaults of the klap runtime library.
//
// Every value can be overridden with -DNAME=value on the nvcc command line or with a
// #define before the first #include of a klap header.
//
//   KLAP_POOL_SIZE_BYTES       bytes of the device memory pool from which aggregated launch sites
//                              take their configuration and argument arrays and kernel-granularity
//                              states take their records (KLAP paper II-C, "single global memory
//                              pool allocated from the host"). cudaMalloc'ed once per translation
//                              unit by the first klap::host_prepare(); memory is given back ON THE
//                              DEVICE when the child grid that used it no longer needs it (pool.cuh),
//                              so this bounds what is pending at one time, not the length of a run.
//                              Default 128 MiB. `klap --pool-size` sets it.
//   KLAP_PENDING_LAUNCH_LIMIT  lower bound that klap::host_prepare() raises
//                              cudaLimitDevRuntimePendingLaunchCount to (it never lowers it).
//                              CDP2 has a fixed pending-launch buffer (default 2048) and no overflow
//                              pool: a device launch past it fails (CUDA programming guide,
//                              "CUDA Dynamic Parallelism", "Launch Environment Configuration"); klap's
//                              launchers then back off and retry for KLAP_LAUNCH_RETRY_MS.
//                              Default 32768.
//   KLAP_LAUNCH_RETRY_MS       how long an aggregated launch that fails because the pending-launch
//                              buffer is full (cudaErrorLaunchPendingCountExceeded or
//                              cudaErrorLaunchOutOfResources) is retried, with __nanosleep back-off,
//                              before klap::fail reports it. Default 4000 ms.
//   KLAP_DEVICE_POOL_BYTES     size of the region a pool sets up ON THE DEVICE, from the device heap
//                              (malloc, cudaLimitMallocHeapSize, 8 MB by default), when no
//                              klap::host_prepare() offered one before the first allocation (a
//                              transformed kernel launched from code klap did not see). Halved
//                              until it fits, down to 64 KiB; past that, every allocation is a device
//                              malloc of its own. Default 2 MiB.
//   KLAP_POOL_WAIT_MS          how long an allocation from the host-made pool that finds no free block
//                              waits (with back-off) for pending children to give blocks back before
//                              it reports the pool exhausted. Default 500 ms.
//   KLAP_POOL_SHARDS           free lists per size class (threads pick one by their SM, %smid, to
//                              spread contention; an empty list falls back to the others).
//                              Power of two, default 8.
// Kernel granularity (kernel.cuh): KLAP_KERNEL_MAX_ORDERED, KLAP_HOST_KSTATE_MAX_SLOTS,
// KLAP_HOST_KSTATE_WAIT_S.
#ifndef KLAP_CONFIG_CUH
#define KLAP_CONFIG_CUH

#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (128ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_PENDING_LAUNCH_LIMIT
#define KLAP_PENDING_LAUNCH_LIMIT 32768
#endif

#ifndef KLAP_LAUNCH_RETRY_MS
#define KLAP_LAUNCH_RETRY_MS 4000
#endif

#ifndef KLAP_DEVICE_POOL_BYTES
#define KLAP_DEVICE_POOL_BYTES (2ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_POOL_WAIT_MS
#define KLAP_POOL_WAIT_MS 500
#endif

#ifndef KLAP_POOL_SHARDS
#define KLAP_POOL_SHARDS 8
#endif

#endif  // KLAP_CONFIG_CUH
