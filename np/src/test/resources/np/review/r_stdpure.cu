#include <cuda/std/utility>
// every std:: / cuda::std:: call is taken as pure: stores through its reference parameters run in every member
__global__ void k(float *pairs, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cuda::std::swap(pairs[2 * t], pairs[2 * t + 1]);   // S members swap concurrently: 8 swaps = no swap, or torn
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
__global__ void k2(int *flag, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = cuda::std::exchange(flag[t], 0);           // the master reads n, later members read 0
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * 64 + i];
  out[t] = s;
}
int main() { float *p, *a, *o; int *f; k<<<4, 128>>>(p, a, o); k2<<<4,128>>>(f, a, o); }
