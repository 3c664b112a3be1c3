// 'volatile' written by a macro in a device function (the callee's volatile check reads its text)
#include "volmac.h"
__device__ int peek(const int *p) { return *(VOLATILE const int *)p; }
__global__ void consume(const int *tail, const float *data, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = peek(tail);              // another block appends concurrently
  float s = 0;
#pragma np parallel for scan(+:s)
  for (int i = 0; i < n; i++) { s += data[i]; out[t * 1024 + i] = s; }
}
int main() { int *q; float *d, *o; consume<<<4, 128>>>(q, d, o); }
