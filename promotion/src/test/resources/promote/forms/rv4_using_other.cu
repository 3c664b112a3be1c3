// klap --promote=P: inside K a block-scope using-declaration makes `K` name other::K, so the
// launch starts other::K (which ends the chain). klap matches the launch by its simple name,
// takes it for a self-launch and promotes it: the promoted chain keeps running K.
#include <cstdio>
namespace other {
__global__ void K(int* p, int t) { if (threadIdx.x == 0) p[t] = -1; }   // the end marker
}
__global__ void K(int* p, int t) {
  using other::K;                                  // from here on, K is other::K
  if (threadIdx.x == 0) p[t] = t;
  if (threadIdx.x == 0 && t < 8) K<<<1, 32>>>(p, t + 1);   // launches other::K
}
int main() {
  int* p; cudaMalloc(&p, 16 * sizeof(int)); cudaMemset(p, 0, 16 * sizeof(int));
  K<<<1, 32>>>(p, 0); cudaDeviceSynchronize();
  int h[16]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = h[0] == 0 && h[1] == -1 && h[2] == 0;   // original: K at 0, other::K at 1, nothing else
  printf("%s\n", ok ? "PASS" : "FAIL");
}
