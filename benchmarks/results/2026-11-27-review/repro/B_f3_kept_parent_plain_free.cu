// kernel granularity + device cudaMalloc aggregation: the kernel-granularity parent is kept "as
// written" for launches klap does not rewrite (cudaLaunchKernel, function pointers, other files),
// and that copy keeps a plain cudaFree -- of a share of another kernel's aggregated allocation.
#include <cstdio>
__global__ void child(int* out, int v) { out[threadIdx.x] = v; }
__global__ void alloc(int** table) {                // every thread allocates its buffer
  cudaMalloc(&table[threadIdx.x], 16 * 1024);
  if (table[threadIdx.x]) table[threadIdx.x][0] = threadIdx.x;
}
__global__ void release(int** table, int* out) {    // reads, frees, launches a child
  int* p = table[threadIdx.x];
  int v = p ? p[0] : -1;
  cudaFree(p);
  child<<<1, 1>>>(out + threadIdx.x, v);
}
int main() {
  int** t; int* out; cudaMalloc(&t, 256 * sizeof(int*)); cudaMalloc(&out, 256 * sizeof(int));
  int ok = 1;
  for (int it = 0; it < 6; it++) {                  // 256 x 16 KiB = 4 MiB per round, 8 MiB heap
    cudaMemset(out, 0xff, 256 * sizeof(int));
    alloc<<<1, 256>>>(t);
    void* args[] = {&t, &out};
    cudaLaunchKernel((void*)release, 1, 256, args, 0, 0);
    int h[256]; cudaError_t e = cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    ok &= e == cudaSuccess;
    for (int k = 0; k < 256; k++) ok &= h[k] == k;
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
  return !ok;
}
