// device cudaMalloc aggregation (any granularity): a cudaFree that klap does not rewrite to
// klap::group_free -- inside a lambda, or in a __host__ __device__ helper -- is given a pointer into
// the middle of a block's aggregated chunk.
#include <cstdio>
__host__ __device__ void release(void* p) { cudaFree(p); }      // helper usable on both sides

__global__ void work_lambda(int* fails, int* sum) {
  int* p;
  if (cudaMalloc(&p, 12 * 1024) != cudaSuccess) { atomicAdd(fails, 1); return; }
  auto done = [&] { cudaFree(p); };                             // scope-exit helper
  p[0] = threadIdx.x;
  atomicAdd(sum, p[0]);
  done();
}
__global__ void work_hd(int* fails, int* sum) {
  int* p;
  if (cudaMalloc(&p, 12 * 1024) != cudaSuccess) { atomicAdd(fails, 1); return; }
  p[0] = threadIdx.x;
  atomicAdd(sum, p[0]);
  release(p);
}
int main() {
  int *fails, *sum; cudaMalloc(&fails, sizeof(int)); cudaMalloc(&sum, sizeof(int));
  cudaMemset(fails, 0, sizeof(int)); cudaMemset(sum, 0, sizeof(int));
  // 256 threads x 12 KiB = 3 MiB per launch; the default device heap is 8 MiB, so the launches only
  // fit if each one gives its memory back
  for (int it = 0; it < 4; it++) work_lambda<<<1, 256>>>(fails, sum);
  for (int it = 0; it < 4; it++) work_hd<<<1, 256>>>(fails, sum);
  cudaError_t e = cudaDeviceSynchronize();
  int f = -1, s = -1;
  cudaMemcpy(&f, fails, sizeof f, cudaMemcpyDeviceToHost); cudaMemcpy(&s, sum, sizeof s, cudaMemcpyDeviceToHost);
  int ok = e == cudaSuccess && f == 0 && s == 8 * (255 * 256 / 2);
  printf("%s (%s, failed allocations %d, expected 0)\n", ok ? "PASS" : "FAIL", cudaGetErrorString(e), f);
  return !ok;
}
