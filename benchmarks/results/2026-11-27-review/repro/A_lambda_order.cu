#include <cstdio>
// produce writes, consume reads: one thread's two launches into the block's NULL stream are ordered
__global__ void produce(int* buf) { buf[threadIdx.x] = threadIdx.x + 1; }
__global__ void consume(const int* buf, int* out) { out[threadIdx.x] = buf[threadIdx.x]; }
__global__ void parent(int* buf, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  auto then_consume = [&](int k) { consume<<<1, 32>>>(buf + 32 * k, out + 32 * k); };
  if (i >= n) return;
  produce<<<1, 32>>>(buf + 32 * i);
  then_consume(i);
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
