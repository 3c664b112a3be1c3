// A parent thread tries one block of n threads; if the launch is refused (n > 1024 is an invalid
// configuration), it falls back to blocks of 256. Threads 0..62 ask for n = 64, thread 63 for 1280.
#include <cstdio>
__global__ void child(int* out, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[base + i], 1);
}
__global__ void parent(int* out, int* fallbacks) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = t == 63 ? 1280 : 64;
  child<<<1, n>>>(out, t * 2048, n);
  if (cudaGetLastError() != cudaSuccess) {
    atomicAdd(fallbacks, 1);
    child<<<(n + 255) / 256, 256>>>(out, t * 2048, n);
  }
}
int main() {
  int *d, *fb; cudaMalloc(&d, 64 * 2048 * sizeof(int)); cudaMalloc(&fb, sizeof(int));
  cudaMemset(d, 0, 64 * 2048 * sizeof(int)); cudaMemset(fb, 0, sizeof(int));
  parent<<<2, 32>>>(d, fb);
  cudaError_t e = cudaDeviceSynchronize();
  static int h[64 * 2048]; int hf = -1;
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); cudaMemcpy(&hf, fb, sizeof hf, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < 64; ++t) for (int i = 0; i < 2048; ++i) bad += h[t * 2048 + i] != (i < (t == 63 ? 1280 : 64));
  printf("%s (cuda: %s, fallbacks %d, bad %d)\n", e == cudaSuccess && !bad && hf == 1 ? "PASS" : "FAIL", cudaGetErrorString(e), hf, bad);
  return !(e == cudaSuccess && !bad && hf == 1);
}
