// A local of a class with operator[], written through it: klap does not see the write.
#include <cstdio>
#define N 128
struct Vec2 {
  int d[2];
  __device__ int& operator[](int k) { return d[k]; }
};
__global__ void child(int* out, Vec2 v) { if (threadIdx.x == 0) atomicAdd(&out[v.d[0] + v.d[1]], 1); }
__global__ void parent(int* out) {
  Vec2 v;
  v[0] = blockIdx.x * blockDim.x;
  v[1] = threadIdx.x;
  child<<<1, 32>>>(out, v);
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
