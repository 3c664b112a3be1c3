// Test fixture for klap regress: a minimal CDP program (one child grid per parent thread).
#include "common/result.cuh"

__global__ void child(int *out, int i) { out[i] = i + 1; }

__global__ void parent(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    child<<<1, 1>>>(out, i);
  }
}

int main(int argc, char **argv) {
  int reps = fixture_reps(argc, argv), n = 256, *d, h[256];
  cudaMalloc(&d, n * sizeof(int));
  parent<<<2, 128>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++)
    if (h[i] != i + 1) { printf("FAIL tiny: out[%d] = %d\n", i, h[i]); return 1; }
  printf("PASS tiny time_ms=%.3f launches=%d\n", 0.5 * reps, n);
  return 0;
}
