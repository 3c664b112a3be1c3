// A class-type local whose default constructor reads threadIdx: klap calls it uniform.
#include <cstdio>
#define N 128
struct GlobalId {
  int i;
  __device__ GlobalId() : i(blockIdx.x * blockDim.x + threadIdx.x) {}
};
__global__ void child(int* out, GlobalId id) { if (threadIdx.x == 0) atomicAdd(&out[id.i], 1); }
__global__ void parent(int* out) {
  GlobalId id;                 // differs in every thread
  child<<<1, 32>>>(out, id);   // expected: out[id.i] == 1 for every thread
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
