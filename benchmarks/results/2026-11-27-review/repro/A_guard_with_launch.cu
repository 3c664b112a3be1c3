#include <cstdio>
// each thread handles one segment: short segments go to `leaf` and the thread returns,
// long ones go to `split`
__global__ void leaf(int* seg, int len) { if (threadIdx.x < len) seg[threadIdx.x] = 1; }
__global__ void split(int* seg, int len) { if (threadIdx.x < len) seg[threadIdx.x] = 2; }
__global__ void parent(int* data, const int* len, int n) {
  int i = threadIdx.x;
  if (len[i] < 16) { leaf<<<1, 32>>>(data + 32 * i, len[i]); return; }
  split<<<1, 32>>>(data + 32 * i, len[i]);
}
int main() {
  const int n = 8; int h_len[n]; for (int k = 0; k < n; k++) h_len[k] = 8 + 4 * k;
  int *data, *len; cudaMalloc(&data, n * 32 * sizeof(int)); cudaMalloc(&len, sizeof h_len);
  cudaMemset(data, 0, n * 32 * sizeof(int)); cudaMemcpy(len, h_len, sizeof h_len, cudaMemcpyHostToDevice);
  parent<<<1, n>>>(data, len, n);   // exactly one thread per segment
  cudaError_t e = cudaDeviceSynchronize();
  int h[n * 32]; cudaMemcpy(h, data, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int k = 0; k < n * 32; k++) { int s = k / 32, t = k % 32; bad += h[k] != (t < h_len[s] ? (h_len[s] < 16 ? 1 : 2) : 0); }
  printf("%s (err=%s, bad=%d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad);
}
