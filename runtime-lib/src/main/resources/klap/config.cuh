// klap/config.cuh -- compile-time defaults of the klap runtime library.
//
// Every value can be overridden with -DNAME=value on the nvcc command line or with a
// #define before the first #include of a klap header.
//
//   KLAP_POOL_SIZE_BYTES       bytes of the device memory pool from which aggregated launch sites
//                              take their configuration and argument arrays (KLAP paper II-C,
//                              "single global memory pool allocated from the host"). It is
//                              allocated once per translation unit by klap::host_prepare() and
//                              recycled whenever every launch prepared before has completed.
//                              Default 128 MiB. `klap --pool-size` sets it.
//   KLAP_PENDING_LAUNCH_LIMIT  lower bound that klap::host_prepare() raises
//                              cudaLimitDevRuntimePendingLaunchCount to (it never lowers it).
//                              CDP2 has a fixed pending-launch buffer (default 2048) and no overflow
//                              pool: a device launch past it fails (CUDA programming guide,
//                              "CUDA Dynamic Parallelism", "Launch Environment Configuration").
//                              Default 32768.
//   KLAP_RESERVE_POOL_BYTES    bytes of each translation unit's reserve pool: a static __device__
//                              array that transformed kernels allocate from while no
//                              klap::host_prepare() has run (a kernel launched only from code klap
//                              did not transform). Nothing recycles it. Default 8 MiB.
#ifndef KLAP_CONFIG_CUH
#define KLAP_CONFIG_CUH

#ifndef KLAP_RESERVE_POOL_BYTES
#define KLAP_RESERVE_POOL_BYTES (8ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (128ull * 1024ull * 1024ull)
#endif

#ifndef KLAP_PENDING_LAUNCH_LIMIT
#define KLAP_PENDING_LAUNCH_LIMIT 32768
#endif

#endif  // KLAP_CONFIG_CUH
