#ifdef __CUDA_ARCH__
__device__ inline int lane_base() { return threadIdx.x; }
#else
__device__ inline int lane_base() { return 0; }
#endif
