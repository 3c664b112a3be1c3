// kernel granularity, per-round launches: a round whose only launches have a block of 0 threads.
// CUDA: child<<<1, 0>>> fails (cudaErrorInvalidConfiguration) and the later rounds still run.
// klap --granularity=kernel: krecord_seq counts the empty launch as a round but records nothing,
// so kfinish stops at the empty round 0 and never launches rounds 1 and 2.
#include <cstdio>
__global__ void child(int* out, int r) { out[r * 32 + threadIdx.x] += 1; }
__global__ void parent(int* out, const int* width) {
  for (int r = 0; r < 3; r++)
    child<<<1, width[r]>>>(out, r);   // width[0] == 0: nothing to do in round 0
}
int main() {
  int *out, *w;
  cudaMalloc(&out, 3 * 32 * sizeof(int)); cudaMalloc(&w, 3 * sizeof(int));
  cudaMemset(out, 0, 3 * 32 * sizeof(int));
  int hw[3] = {0, 32, 32}; cudaMemcpy(w, hw, sizeof hw, cudaMemcpyHostToDevice);
  parent<<<1, 1>>>(out, w);
  int h[3 * 32]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int ok = 1;
  for (int r = 0; r < 3; r++) for (int x = 0; x < 32; x++) ok &= h[r * 32 + x] == (r == 0 ? 0 : 1);
  printf("%s (round1=%d round2=%d, expected 1 1)\n", ok ? "PASS" : "FAIL", h[32], h[64]);
  return !ok;
}
