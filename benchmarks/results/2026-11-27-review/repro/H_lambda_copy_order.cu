// Review of 2026-11-29: a launch through a copy of a lambda local (auto m = l; m();) went out at
// once while the thread's earlier launch was deferred to the end of its region: consume ran before
// produce. Each live thread produces its slot (= 7), then consumes it (slot * 3 + 1 into out).
#include <cstdio>
#define N 200
__global__ void produce(int* b) { if (threadIdx.x == 0) b[0] = 7; }
__global__ void consume(int* b, int* o) { if (threadIdx.x == 0) o[0] = b[0] * 3 + 1; }
__global__ void parent(int* b, int* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto then = [&] { consume<<<1, 32>>>(b + i, o + i); };
  auto again = then;
  produce<<<1, 32>>>(b + i);
  again();
}
int main() {
  int *b, *o; cudaMalloc(&b, N * sizeof(int)); cudaMalloc(&o, N * sizeof(int));
  cudaMemset(b, 0, N * sizeof(int)); cudaMemset(o, 0, N * sizeof(int));
  parent<<<2, 128>>>(b, o, N);
  cudaError_t e = cudaDeviceSynchronize();
  int h[N]; cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < N; ++i) bad += h[i] != 22;
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, N);
  return bad != 0 || e != cudaSuccess;
}
