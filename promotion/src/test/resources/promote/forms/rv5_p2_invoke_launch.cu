// klap --promote=P: as rv4_fnptr_launch, but the helper that launches 'fill' is called through
// cuda::std::invoke (allowed: 'cuda::'-qualified); the function named as its argument is not followed.
#include <cstdio>
__global__ void fill(int* buf, int t) { buf[t] = 10 * t + 7; }
__device__ void spawn(int* buf, int t) { fill<<<1, 1>>>(buf, t); }
__device__ void (*spawner)(int*, int) = spawn;
#include <cuda/std/functional>
__global__ void K(int* buf, int* out, int t, int n) {
  if (threadIdx.x == 0 && t > 0) out[t] = buf[t - 1];
  if (threadIdx.x == 0 && t + 1 < n) {
    cuda::std::invoke(spawn, buf, t);
    K<<<1, 32>>>(buf, out, t + 1, n);
  }
}
int main() {
  const int n = 16;
  int *buf, *out; cudaMalloc(&buf, n * sizeof(int)); cudaMalloc(&out, n * sizeof(int));
  cudaMemset(buf, 0, n * sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
  K<<<1, 32>>>(buf, out, 0, n);
  cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 1; t < n; ++t) ok &= h[t] == 10 * (t - 1) + 7;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
