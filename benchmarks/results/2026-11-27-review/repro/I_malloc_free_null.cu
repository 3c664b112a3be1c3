// Each thread takes an 8 KiB scratch buffer; all but thread 0 of the block are done with it at once
// (free-and-null), thread 0 keeps it while it builds a 6.5 MiB table of 52 x 128 KiB buffers, then a
// common cleanup frees whatever is left (cudaFree(nullptr) is a no-op).
// Original: after the barrier the block holds 8 KiB + 6.5 MiB (default heap 8 MiB).
// klap before 50182af (any granularity): scratch was one 2 MiB block-wide chunk (256 x 8 KiB at block/kernel; 8 x 256 KiB per
// warp at warp granularity, thread 0's warp pinned) that stayed allocated until thread 0's cudaFree at the end. Since
// 50182af klap leaves this cudaMalloc as written ([klap-malloc-lifetime]): every variant must print PASS.
#include <cstdio>
constexpr int BS = 256, TABLE = 52;
__global__ void parent(int* failures, void** table) {
  char* scratch = nullptr;
  if (cudaMalloc(&scratch, 8192) != cudaSuccess) { atomicAdd(failures, 1); return; }
  scratch[threadIdx.x % 8192] = 1;
  if (threadIdx.x != 0) { cudaFree(scratch); scratch = nullptr; }
  __syncthreads();
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
