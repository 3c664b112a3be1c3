// kernel granularity: a thread-dependent return, then a local object whose CONSTRUCTOR synchronizes
// the block (a cooperative shared-memory tile). Threads that return exit in the original, which
// releases the barrier for them. Expected: PASS.
#include <cstdio>
struct NeighbourTile {                       // every live thread of the block constructs one
  int right;
  __device__ NeighbourTile(int* s, int v) {
    s[threadIdx.x] = v;
    __syncthreads();                         // tile complete
    right = s[threadIdx.x + 1 < blockDim.x ? threadIdx.x + 1 : threadIdx.x];
    __syncthreads();                         // tile may be reused
  }
};
__global__ void child(int* out, int i) { if (threadIdx.x == 0) atomicAdd(&out[i], 1); }
__global__ void parent(int* out, const int* in) {
  __shared__ int s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  if (v < 0) return;                         // inactive element
  NeighbourTile t(s, v);
  if (t.right >= 0) child<<<1, 32>>>(out, i);
}
int main() {
  const int N = 64;
  int h_in[N], h_out[N];
  for (int i = 0; i < N; i++) h_in[i] = (i == 0) ? -1 : i;   // element 0 inactive
  int *in, *out; cudaMalloc(&in, sizeof h_in); cudaMalloc(&out, sizeof h_out);
  cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice); cudaMemset(out, 0, sizeof h_out);
  parent<<<1, N>>>(out, in);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += h_out[i] != (i >= 1 ? 1 : 0);
  printf("%s (%s, %d wrong, out[1]=%d expected 1)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, h_out[1]);
  return bad || e;
}
