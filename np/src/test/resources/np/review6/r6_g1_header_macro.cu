// a macro that names ::threadIdx: the kernel text check for '::threadIdx' reads the unexpanded text
#include "tidmac.h"
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + TID;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
