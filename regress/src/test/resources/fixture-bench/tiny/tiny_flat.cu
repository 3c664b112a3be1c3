// Test fixture for klap regress: tiny.cu without dynamic parallelism.
#include "common/result.cuh"

__global__ void flat(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i + 1;
}

int main(int argc, char **argv) {
  int reps = fixture_reps(argc, argv), n = 256, *d, h[256];
  cudaMalloc(&d, n * sizeof(int));
  flat<<<2, 128>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++)
    if (h[i] != i + 1) { printf("FAIL tiny: out[%d] = %d\n", i, h[i]); return 1; }
  printf("PASS tiny time_ms=%.3f\n", 0.25 * reps);
  return 0;
}
