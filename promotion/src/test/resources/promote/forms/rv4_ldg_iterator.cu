// klap --promote=P|PA: a template chain kernel reads its input through an iterator; main passes
// a cub::CacheModifiedInputIterator<cub::LOAD_LDG, int>, so the reads are ld.global.nc (see the
// -ptx of the output). klap refuses LOAD_LDG written in a kernel or outside functions, but not in
// main's body, where the instantiation is chosen. Link t reads what link t-1 wrote (in == out):
// in the original the child grid starts after that write (the non-coherent path is coherent at
// a grid's start); promoted, the descendant is already running and its nc loads may hit a line
// cached before the write (PA: a block of the same pool on the same SM read the neighbouring word).
#include <cstdio>
#include <cub/cub.cuh>
template <class It>
__global__ void K(It in, int* out, int t, int n) {
  int prev = t > 0 ? in[t - 1] : 0;                       // link t-1's result
  if (threadIdx.x == 0) out[t] = prev + t;
  if (threadIdx.x == 0 && t + 1 < n) K<It><<<1, 32>>>(in, out, t + 1, n);
}
int main() {
  const int n = 20;  int* buf; cudaMalloc(&buf, n * sizeof(int)); cudaMemset(buf, 0, n * sizeof(int));
  K<<<1, 32>>>(cub::CacheModifiedInputIterator<cub::LOAD_LDG, int>(buf), buf, 0, n);
  cudaDeviceSynchronize();
  int h[n]; cudaMemcpy(h, buf, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true; for (int t = 0; t < n; ++t) ok &= h[t] == t * (t + 1) / 2;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
