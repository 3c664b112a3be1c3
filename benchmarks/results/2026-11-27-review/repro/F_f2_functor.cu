// A stateful functor local, updated through its operator(): klap does not see the write.
#include <cstdio>
#define N 128
struct Sum {
  int total = 0;
  __device__ void operator()(int k) { total += k; }
};
__global__ void child(int* out, Sum s) { if (threadIdx.x == 0) atomicAdd(&out[s.total], 1); }
__global__ void parent(int* out) {
  Sum s;
  s(blockIdx.x * blockDim.x);
  s(threadIdx.x);
  child<<<1, 32>>>(out, s);
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
