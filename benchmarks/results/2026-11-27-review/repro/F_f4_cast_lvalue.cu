// A store through a cast lvalue ((T&)x = ...): klap does not see the write.
#include <cstdio>
#define N 128
__global__ void child(int* out, unsigned i) { if (threadIdx.x == 0) atomicAdd(&out[i], 1); }
__global__ void parent(int* out) {
  int i = 0;
  reinterpret_cast<unsigned&>(i) = blockIdx.x * blockDim.x + threadIdx.x;
  child<<<1, 32>>>(out, i);
}

int main() {
  int* out; cudaMalloc(&out, N * sizeof(int)); cudaMemset(out, 0, N * sizeof(int));
  parent<<<2, 64>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  int h[N]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < N; ++i) bad += h[i] != 1;
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, N);
  return bad != 0;
}
