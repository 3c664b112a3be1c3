// 'new'/'delete' written by a macro: the new/delete refusal reads the kernel's text, not macro
// expansions, so every member of a group allocates (k) or frees the same pointer (k2)
#include "allocmac.h"
__global__ void k(const float *a, float **keep, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *buf = ALLOC(float, 16);
  keep[t] = buf;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
__global__ void k2(float **keep, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *buf = keep[t];
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += buf[i] * a[t * 16 + i];
  RELEASE(buf);
  out[t] = s;
}
int main() { float *a, **kp, *o; k<<<4, 128>>>(a, kp, o); k2<<<4, 128>>>(kp, a, o); }
