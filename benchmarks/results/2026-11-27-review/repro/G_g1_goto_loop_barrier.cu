// kernel granularity: a thread-dependent return inside a loop written with goto, with a
// __syncthreads() at the top of the loop (textually before the return). Expected: PASS.
#include <cstdio>
__global__ void child(int* out, int i) { if (threadIdx.x == 0) atomicAdd(&out[i], 1); }
__global__ void parent(int* out, const int* len) {
  __shared__ int s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = 0;
top:
  s[threadIdx.x] = k;          // stage something for the block
  __syncthreads();
  if (len[i] <= k) return;     // this thread is done (thread-dependent)
  child<<<1, 32>>>(out, i);    // one child per remaining round
  k++;
  if (k < 4) goto top;
}
int main() {
  const int N = 64;
  int h_len[N], h_out[N];
  for (int i = 0; i < N; i++) h_len[i] = (i == 0) ? 0 : 4;  // thread 0 has nothing to do
  int *len, *out;
  cudaMalloc(&len, sizeof h_len); cudaMalloc(&out, sizeof h_out);
  cudaMemcpy(len, h_len, sizeof h_len, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, sizeof h_out);
  parent<<<1, N>>>(out, len);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < N; i++) if (h_out[i] != (h_len[i] < 4 ? h_len[i] : 4)) bad++;
  printf("%s (%s, %d wrong, out[1]=%d expected 4)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, h_out[1]);
  return bad || e;
}
