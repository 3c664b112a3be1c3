// Straight-line malloc ... cudaFree (rule (a)), with divergent long work of thread 0 in between (no early free at all).
// Original: warps 1..7 free their scratch right away; only warp 0 (32 x 8 KiB) waits for thread 0.
// klap block/kernel before 50182af: the whole 2 MiB block chunk stayed until thread 0 reached cudaFree. Since 50182af
// klap leaves this cudaMalloc as written ([klap-malloc-lifetime]: thread 0 allocates between it and the free): PASS.
#include <cstdio>
constexpr int BS = 256, TABLE = 52;
__global__ void parent(int* failures, void** table) {
  char* scratch = nullptr;
  if (cudaMalloc(&scratch, 8192) != cudaSuccess) { atomicAdd(failures, 1); return; }
  scratch[threadIdx.x % 8192] = 1;
  if (threadIdx.x == 0)
    for (int t = 0; t < TABLE; ++t) {
      void* q = nullptr;
      if (cudaMalloc(&q, 131072) != cudaSuccess) { atomicAdd(failures, 1); q = nullptr; }
      table[t] = q;
    }
  cudaFree(scratch);
}
__global__ void drain(void** table) { for (int t = 0; t < TABLE; ++t) cudaFree(table[t]); }
int main() {
  int* f; void** table;
  cudaMalloc(&f, sizeof(int)); cudaMemset(f, 0, sizeof(int)); cudaMalloc(&table, TABLE * sizeof(void*));
  parent<<<1, BS>>>(f, table);
  drain<<<1, 1>>>(table);
  cudaError_t e = cudaDeviceSynchronize();
  int h = -1; cudaMemcpy(&h, f, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s (cuda: %s, failed cudaMalloc calls: %d)\n", e == cudaSuccess && h == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), h);
  return !(e == cudaSuccess && h == 0);
}
