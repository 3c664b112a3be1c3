// Test fixture for klap regress: a CDP program that nvcc rejects (and no broken_flat.cu), so the
// runner must report it and go on.
#include "common/result.cuh"

__global__ void child(int *out) { out[0] = 1; }

__global__ void parent(int *out) {
  child<<<1, 1>>>(out);
  this_is_not_declared(out);
}

int main() { return 0; }
