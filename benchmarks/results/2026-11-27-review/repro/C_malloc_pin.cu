// Each thread allocates an 8 KiB scratch buffer per round and frees it at once; thread 0 of each
// block keeps its buffer of every round (a per-block log) and frees them at the end.
// Original: peak device-heap use per block = 256 x 8 KiB + 64 x 8 KiB = 2.5 MiB (default heap 8 MiB).
#include <cstdio>
constexpr int ROUNDS = 64, BS = 256;
__global__ void parent(int* failures) {
  void* kept[ROUNDS];
  for (int r = 0; r < ROUNDS; ++r) {
    void* p = nullptr;
    if (cudaMalloc(&p, 8192) != cudaSuccess || p == nullptr) { atomicAdd(failures, 1); continue; }
    static_cast<int*>(p)[0] = r;
    if (threadIdx.x == 0) kept[r] = p; else cudaFree(p);
  }
  if (threadIdx.x == 0) for (int r = 0; r < ROUNDS; ++r) cudaFree(kept[r]);
}
int main() {
  int* f; cudaMalloc(&f, sizeof(int)); cudaMemset(f, 0, sizeof(int));
  parent<<<1, BS>>>(f);
  cudaError_t e = cudaDeviceSynchronize();
  int h = -1; cudaMemcpy(&h, f, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s (cuda: %s, failed cudaMalloc calls: %d)\n", e == cudaSuccess && h == 0 ? "PASS" : "FAIL", cudaGetErrorString(e), h);
  return !(e == cudaSuccess && h == 0);
}
