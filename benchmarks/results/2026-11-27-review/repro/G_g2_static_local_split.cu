// A function-scope static in a recursive kernel: one counter for the whole recursion.
// klap copies the kernel body (twin, aggregated variant): each copy has its own counter.
#include <cstdio>
__global__ void tree(int* hits, int depth) {
  static unsigned next_id;                 // ids unique over the whole recursion
  unsigned id = atomicAdd(&next_id, 1u);
  atomicAdd(&hits[id], 1);
  if (depth < 3) tree<<<1, 4>>>(hits, depth + 1);
}
int main() {
  const int M = 4096, TOTAL = 4 + 16 + 64 + 256;
  int* hits; cudaMalloc(&hits, M * sizeof(int)); cudaMemset(hits, 0, M * sizeof(int));
  tree<<<1, 4>>>(hits, 0);
  cudaError_t e = cudaDeviceSynchronize();
  static int h[M]; cudaMemcpy(h, hits, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < M; i++) bad += h[i] != (i < TOTAL ? 1 : 0);
  printf("%s (%s, %d ids wrong; hits[0]=%d hits[%d]=%d, expected 1 1)\n", bad || e ? "FAIL" : "PASS",
         cudaGetErrorString(e), bad, h[0], TOTAL - 1, h[TOTAL - 1]);
  return bad || e;
}
