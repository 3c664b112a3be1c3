// Shape "two-files" (issue 10, bug class 5), the file klap transforms: a CDP parent kernel that
// main.cu (never seen by klap) declares, configures with cudaFuncSetCacheConfig and launches.
#include "two_files.cuh"

__global__ void child(unsigned* out, int i) {
  atomicAdd(&out[(i * 8 + threadIdx.x) % N_OUT], (unsigned)(i + 1) * (threadIdx.x + 1));
}

__global__ void parent(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 0) child<<<1, 8>>>(out, i);
}
