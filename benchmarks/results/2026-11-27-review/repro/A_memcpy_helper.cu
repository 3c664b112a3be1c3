#include <cstdio>
__global__ void child(int* buf) { buf[threadIdx.x] = threadIdx.x + 1; }
__device__ void copy_out(int* dst, const int* src) {
  cudaMemcpyAsync(dst, src, 32 * sizeof(int), cudaMemcpyDeviceToDevice, 0);
}
__global__ void parent(int* buf, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  child<<<1, 32>>>(buf + 32 * i);
  copy_out(out + 32 * i, buf + 32 * i);
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
