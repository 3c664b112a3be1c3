// klap --promote=P -I inc: rv4_using_other with a using-directive instead of a using-declaration
// (only 'using ns::K;' is refused) and other::K(int*, int) in a header: the launch K<<<>>>(p, (int)t+1)
// starts other::K in the original; promoted, the chain keeps running K.
#include <cstdio>
#include <other_k.h>                               // other::K(int*, int)
__global__ void K(int* p, long t) {
  using namespace other;                           // other::K(int*, int) joins the overload set
  if (threadIdx.x == 0) p[t] = t;
  if (threadIdx.x == 0 && t < 8) K<<<1, 32>>>(p, (int)t + 1);   // int argument: launches other::K
}
int main() {
  int* p; cudaMalloc(&p, 16 * sizeof(int)); cudaMemset(p, 0, 16 * sizeof(int));
  K<<<1, 32>>>(p, 0L); cudaDeviceSynchronize();
  int h[16]; cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = h[0] == 0 && h[1] == -1 && h[2] == 0;   // original: K at 0, other::K at 1, nothing else
  printf("%s\n", ok ? "PASS" : "FAIL");
}
