#include <cstdio>
// One thread launches produce, then (through a member function) consume, both into its block's
// NULL stream: consume must run after produce and see its writes.
__global__ void produce(int* buf) { buf[threadIdx.x] = threadIdx.x + 1; }
__global__ void consume(const int* buf, int* out) { out[threadIdx.x] = buf[threadIdx.x]; }
struct Stage {
  int* buf; int* out;
  __device__ void finish() const { consume<<<1, 32>>>(buf, out); }
};
__global__ void parent(int* buf, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Stage s{buf + 32 * i, out + 32 * i};
  produce<<<1, 32>>>(s.buf);
  s.finish();
}
int main() {
  const int n = 4; int *buf, *out;
  cudaMalloc(&buf, n * 32 * sizeof(int)); cudaMalloc(&out, n * 32 * sizeof(int));
  cudaMemset(buf, 0, n * 32 * sizeof(int)); cudaMemset(out, 0, n * 32 * sizeof(int));
  parent<<<1, 32>>>(buf, out, n);
  cudaError_t e = cudaDeviceSynchronize();
  int h[n * 32]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int k = 0; k < n * 32; k++) bad += h[k] != k % 32 + 1;
  printf("%s (err=%s, bad=%d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad);
}
