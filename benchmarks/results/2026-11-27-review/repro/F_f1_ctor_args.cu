// A class-type local built by a constructor (uniform arguments) that reads threadIdx: klap calls it uniform.
#include <cstdio>
#define N 128
struct Slice {
  int begin, end;
  __device__ Slice(int per) : begin((blockIdx.x * blockDim.x + threadIdx.x) * per), end(begin + per) {}
};
__global__ void child(int* out, int begin, int end) {
  for (int k = begin + threadIdx.x; k < end; k += blockDim.x) atomicAdd(&out[k], 1);
}
__global__ void parent(int* out) {
  Slice s(1);                              // also: auto s = Slice(1);  Slice s = 1;
  child<<<1, 32>>>(out, s.begin, s.end);   // each thread's child covers its own slice
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
