#include <cstdio>
// Binary search in which every probe launches a child (e.g. to log or prefetch the probed row).
// The loop's trip count depends on the thread's key, but klap takes lo/hi as uniform.
__global__ void probe(int* hits, int mid) { if (threadIdx.x == 0) atomicAdd(&hits[mid], 1); }
__global__ void parent(const int* rowStart, int rows, int nnz, int* hits) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nnz) return;
  int lo = 0, hi = rows - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    probe<<<1, 32>>>(hits, mid);
    rowStart[mid] <= i ? (lo = mid) : (hi = mid - 1);
  }
}
int main() {
  const int rows = 64, nnz = 64 * 5;
  int h[rows]; for (int r = 0; r < rows; ++r) h[r] = r * 5;
  int *rs, *hits; cudaMalloc(&rs, sizeof h); cudaMalloc(&hits, rows * 4); cudaMemset(hits, 0, rows * 4);
  cudaMemcpy(rs, h, sizeof h, cudaMemcpyHostToDevice);
  parent<<<(nnz + 127) / 128, 128>>>(rs, rows, nnz, hits);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("FAIL cuda %s\n", cudaGetErrorString(e)); return 1; }
  int g[rows]; cudaMemcpy(g, hits, sizeof g, cudaMemcpyDeviceToHost);
  int exp[rows] = {};
  for (int i = 0; i < nnz; ++i) { int lo = 0, hi = rows - 1; while (lo < hi) { int mid = (lo + hi + 1) / 2; exp[mid]++; h[mid] <= i ? (lo = mid) : (hi = mid - 1); } }
  for (int r = 0; r < rows; ++r) if (g[r] != exp[r]) { printf("FAIL hits[%d]=%d expected %d\n", r, g[r], exp[r]); return 1; }
  printf("PASS\n"); return 0;
}
