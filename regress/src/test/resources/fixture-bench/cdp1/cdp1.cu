// Test fixture for klap regress: CDP1 code (device-side cudaDeviceSynchronize, gone in CUDA 12),
// which klap refuses with an error diagnostic.
#include "common/result.cuh"

__global__ void child(int *out) { out[0] = 1; }

__global__ void parent(int *out) {
  child<<<1, 1>>>(out);
  cudaDeviceSynchronize();
}

int main() { return 0; }
