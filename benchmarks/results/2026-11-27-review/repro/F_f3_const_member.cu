// A launch in a member function passes a const data member: klap takes the field for a constant.
#include <cstdio>
#define N 128
__global__ void child(int* out, int i) { if (threadIdx.x == 0) atomicAdd(&out[i], 1); }
struct Task {
  const int id;
  int* out;
  __device__ void spawn() const { child<<<1, 32>>>(out, id); }
};
__global__ void parent(int* out) {
  Task t{(int)(blockIdx.x * blockDim.x + threadIdx.x), out};
  t.spawn();
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
