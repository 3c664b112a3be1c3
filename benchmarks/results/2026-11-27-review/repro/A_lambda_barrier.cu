#include <cstdio>
// block-wide sum through a lambda that uses __syncthreads(), after a guarded return
__global__ void child(int* out, int v) { if (threadIdx.x == 0) out[0] = v; }
__global__ void parent(const int* in, int* out, int* sums, int n) {
  __shared__ int s[64];
  auto block_sum = [&](int v) {
    s[threadIdx.x] = v;
    __syncthreads();
    int t = 0;
    for (int k = 0; k < 64; ++k) t += s[k];
    return t;
  };
  int i = threadIdx.x;
  s[i] = 0;
  __syncthreads();
  if (i >= n) return;            // threads n..63 leave (they never reach a barrier again)
  int t = block_sum(in[i]);      // the remaining threads meet at the lambda's barrier
  if (i == 0) sums[0] = t;
  if (in[i] > 0) child<<<1, 32>>>(out + i, t);
}
int main() {
  const int n = 40; int h_in[64]; int expect = 0;
  for (int k = 0; k < 64; k++) { h_in[k] = k < n ? (k % 3) : 0; expect += h_in[k]; }
  int *in, *out, *sums;
  cudaMalloc(&in, sizeof h_in); cudaMalloc(&out, 64 * sizeof(int)); cudaMalloc(&sums, sizeof(int));
  cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, 64 * sizeof(int)); cudaMemset(sums, 0, sizeof(int));
  parent<<<1, 64>>>(in, out, sums, n);
  cudaError_t e = cudaDeviceSynchronize();
  int h_out[64], h_sum = 0;
  cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost); cudaMemcpy(&h_sum, sums, sizeof(int), cudaMemcpyDeviceToHost);
  int bad = h_sum != expect;
  for (int k = 0; k < 64; k++) bad += h_out[k] != (h_in[k] > 0 ? expect : 0);
  printf("%s (err=%s, bad=%d, sum=%d expected %d)\n", e == cudaSuccess && bad == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), bad, h_sum, expect);
}
