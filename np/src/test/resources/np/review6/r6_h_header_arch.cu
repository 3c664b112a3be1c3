// a helper defined under #ifdef __CUDA_ARCH__ in a project header: threadIdx.x on the device, 0 on the
// host (klap's view); a kernel that uses it is set aside (the main file has no conditional of its own)
#include "lane.h"
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * 128 + lane_base();
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
